"""Packaging: the Kubernetes/OpenShift manifests render with `kubectl
kustomize` and pass yamllint; the DaemonSet keeps least privilege, its
mounts, probes and init container; the probes and the ConfigMap work against
the real binaries; the OpenShift SCC is bound to the ServiceAccount; the
NetworkAttachmentDefinition is accepted by the real CNI plugin; the Grafana
dashboard queries only metrics rocenetd exports; the container image's
runtime packages are exactly what the binaries load; and the DEB builds with
CPack, installs with dpkg, runs, and is removed again."""

from __future__ import annotations

import contextlib
import fcntl
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest
import yaml

from harness import BUILD_DIR, binary, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
PKG = os.path.join(REPO, "packaging")
K8S = os.path.join(PKG, "kubernetes")
OVERLAYS = {"generic": os.path.join(K8S, "overlays", "generic"),
            "openshift": os.path.join(K8S, "overlays", "openshift")}
CNI_BIN_DIR = {"generic": "/opt/cni/bin", "openshift": "/var/lib/cni/bin"}
DAEMON_CAPS = {"NET_ADMIN", "NET_RAW", "SYS_ADMIN"}
DYNAMIC_BINARIES = ("rocenetd", "rocectl", "rocenet-device-plugin")


# --- helpers -----------------------------------------------------------------

def kubectl() -> str:
    path = os.environ.get("ROCENET_KUBECTL") or shutil.which("kubectl")
    if not path:
        pytest.skip("kubectl not installed (packaging/debian-deps.sh test installs kubernetes-client)")
    return path


def render(directory: str) -> list[dict]:
    cp = subprocess.run([kubectl(), "kustomize", directory], capture_output=True, text=True,
                        timeout=60)
    assert cp.returncode == 0, f"kubectl kustomize {directory} failed:\n{cp.stderr}"
    return [d for d in yaml.safe_load_all(cp.stdout) if d]


def one(docs: list[dict], kind: str, name: str | None = None) -> dict:
    found = [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    assert len(found) == 1, f"want one {kind} {name or ''}, got {[d['metadata']['name'] for d in found]}"
    return found[0]


def rocenetd_config(docs: list[dict]) -> dict:
    """The generated ConfigMap rocenetd-config-<hash>, checked to be the one
    the DaemonSet mounts."""
    cm = one([d for d in docs if d["kind"] == "ConfigMap"], "ConfigMap")
    assert re.fullmatch(r"rocenetd-config-[a-z0-9]{10}", cm["metadata"]["name"]), \
        cm["metadata"]["name"]
    ds = one(docs, "DaemonSet", "rocenet")
    assert volumes(ds)["config"]["configMap"]["name"] == cm["metadata"]["name"]
    return cm


def write_volume(cm: dict, directory) -> str:
    """The ConfigMap's keys as the files its volume shows; the directory."""
    os.makedirs(str(directory), exist_ok=True)
    for key, text in cm["data"].items():
        with open(os.path.join(str(directory), key), "w") as f:
            f.write(text)
    return str(directory)


def config_flag(ds: dict) -> str:
    """The --config path of rocenetd's command in the DaemonSet."""
    flags = [a for a in containers(ds)["rocenetd"]["command"] if a.startswith("--config=")]
    assert len(flags) == 1
    return flags[0].split("=", 1)[1]


def containers(ds: dict) -> dict[str, dict]:
    spec = ds["spec"]["template"]["spec"]
    return {c["name"]: c for c in spec.get("initContainers", []) + spec["containers"]}


def volumes(ds: dict) -> dict[str, dict]:
    return {v["name"]: v for v in ds["spec"]["template"]["spec"]["volumes"]}


def mounts(container: dict, ds: dict) -> dict[str, dict]:
    """Container mount path -> the mount, with the host path of its volume."""
    vols = volumes(ds)
    out = {}
    for m in container.get("volumeMounts", []):
        entry = dict(m)
        vol = vols[m["name"]]
        entry["hostPath"] = vol.get("hostPath", {}).get("path")
        out[m["mountPath"]] = entry
    return out


@pytest.fixture(scope="module", params=sorted(OVERLAYS))
def overlay(request):
    return request.param, render(OVERLAYS[request.param])


def source_metric_names() -> set[str]:
    names = set()
    for path in glob.glob(os.path.join(REPO, "daemon", "api", "*.cc")):
        with open(path) as f:
            names.update(re.findall(r'"(rocenet_[a-z0-9_]+)"', f.read()))
    return names


def built(name: str) -> str:
    try:
        return binary(name)
    except FileNotFoundError:
        pytest.skip(f"{name} is not built in {BUILD_DIR} (build the project first)")


@contextlib.contextmanager
def netns(name: str):
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "-n", name, "link", "set", "lo", "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


@contextlib.contextmanager
def running_daemon(rocenetd: str, config_path, workdir):
    """rocenetd with `config_path` in a network namespace of its own (so the
    config's metrics port is free), its socket and state under `workdir`.
    Yields (netns, socket) once the socket exists."""
    os.makedirs(str(workdir), exist_ok=True)
    sock = os.path.join(str(workdir), "run", "rocenetd.sock")
    argv = [rocenetd, f"--config={config_path}", f"--socket={sock}",
            f"--state-dir={os.path.join(str(workdir), 'state')}"]
    log_path = os.path.join(str(workdir), "rocenetd.log")
    with netns(f"pk-pkg-{os.getpid()}") as ns, open(log_path, "wb") as log:
        proc = subprocess.Popen(["ip", "netns", "exec", ns, *argv], stdout=log, stderr=log)
        try:
            wait_until(lambda: proc.poll() is not None or os.path.exists(sock), 10,
                       what="rocenetd socket")
            if proc.poll() is not None:
                with open(log_path, errors="replace") as f:
                    raise AssertionError(f"rocenetd exited {proc.returncode}:\n{f.read()}")
            yield ns, sock
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


# --- rendering and lint --------------------------------------------------------

def test_every_kustomization_renders_offline():
    kinds = {
        OVERLAYS["generic"]: {"Namespace", "ServiceAccount", "ConfigMap", "DaemonSet", "Service"},
        OVERLAYS["openshift"]: {"Namespace", "ServiceAccount", "ConfigMap", "DaemonSet", "Service",
                                "SecurityContextConstraints", "ClusterRole", "RoleBinding",
                                "ServiceMonitor"},
        os.path.join(K8S, "monitoring"): {"ServiceMonitor"},
        os.path.join(K8S, "examples"): {"NetworkAttachmentDefinition", "Pod"},
        os.path.join(K8S, "examples", "config-override"): {"Namespace", "ServiceAccount",
                                                           "ConfigMap", "DaemonSet", "Service"},
    }
    for directory, want in kinds.items():
        got = {d["kind"] for d in render(directory)}
        assert got == want, f"{directory}: kinds {sorted(got)}, want {sorted(want)}"


def test_kustomizations_use_only_what_kubectl_1_20_knows():
    """Debian 12's kubectl (1.20) embeds kustomize v2.0.3; a newer kubectl
    renders more, so the keys are held to the old set here too."""
    old_keys = {"resources", "bases", "patchesStrategicMerge", "patchesJson6902", "images",
                "namespace", "commonLabels", "commonAnnotations", "namePrefix", "nameSuffix",
                "configMapGenerator", "generatorOptions"}
    found = glob.glob(os.path.join(K8S, "**", "kustomization.yaml"), recursive=True)
    assert len(found) >= 5
    for path in found:
        with open(path) as f:
            keys = set(yaml.safe_load(f))
        assert keys <= old_keys, f"{path}: {sorted(keys - old_keys)} unknown to kustomize v2.0.3"
        directory = os.path.dirname(path)
        with open(path) as f:
            k = yaml.safe_load(f)
        for entry in k.get("resources", []) + k.get("patchesStrategicMerge", []):
            assert os.path.isfile(os.path.join(directory, entry)), \
                f"{path}: {entry}: v2.0.3 takes files in resources (directories go in bases)"


def test_yamllint_passes_on_all_manifests():
    if not shutil.which("yamllint"):
        pytest.skip("yamllint not installed (packaging/debian-deps.sh test installs it)")
    # From packaging/, so that the config's `ignore` paths apply.
    listed = subprocess.run(["yamllint", "-c", ".yamllint", "--list-files", "."], cwd=PKG,
                            capture_output=True, text=True)
    # The lint must see the manifests, not an empty set.
    for must in ("kubernetes/base/daemonset.yaml", "kubernetes/overlays/openshift/scc.yaml",
                 "kubernetes/examples/network-attachment-definition.yaml", "helm/rocenet/values.yaml"):
        assert must in listed.stdout, f"yamllint does not check {must}:\n{listed.stdout}"
    cp = subprocess.run(["yamllint", "-f", "parsable", "-s", "-c", ".yamllint", "."], cwd=PKG,
                        capture_output=True, text=True)
    assert cp.returncode == 0, cp.stdout + cp.stderr


# --- the DaemonSet -----------------------------------------------------------------

def test_daemonset_least_privilege(overlay):
    name, docs = overlay
    ds = one(docs, "DaemonSet", "rocenet")
    spec = ds["spec"]["template"]["spec"]
    assert spec["hostNetwork"] is True
    assert not spec.get("hostPID"), "hostPID is only for cri-dockerd (patches/host-pid.yaml)"
    assert not spec.get("hostIPC")
    assert spec["serviceAccountName"] == "rocenet"
    assert spec["automountServiceAccountToken"] is False
    assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    cs = containers(ds)
    assert set(cs) == {"install-cni", "rocenetd", "device-plugin"}
    for cname, c in cs.items():
        sc = c["securityContext"]
        assert sc.get("privileged") is False, f"{cname} must not be privileged"
        assert sc.get("allowPrivilegeEscalation") is False, cname
        assert sc.get("readOnlyRootFilesystem") is True, cname
        # The image's default user is not root; uid 0 is chosen here on purpose.
        assert sc.get("runAsUser") == 0, cname
        caps = sc.get("capabilities", {})
        assert caps.get("drop") == ["ALL"], f"{cname} drops {caps.get('drop')}"
        want = DAEMON_CAPS if cname == "rocenetd" else set()
        assert set(caps.get("add", [])) == want, f"{cname} adds {caps.get('add')}, want {sorted(want)}"
        assert len(caps.get("add", [])) == len(want)
        for kind in ("requests", "limits"):
            for res in ("cpu", "memory"):
                assert c["resources"][kind].get(res), f"{cname}: no {kind}.{res}"


def test_daemonset_mounts_and_propagation(overlay):
    name, docs = overlay
    ds = one(docs, "DaemonSet", "rocenet")
    cs = containers(ds)
    daemon = mounts(cs["rocenetd"], ds)
    netns_mount = daemon["/run/netns"]
    assert netns_mount["hostPath"] == "/run/netns"
    assert netns_mount.get("mountPropagation") == "HostToContainer"
    for path in ("/run/rocenet", "/var/lib/rocenet",
                 "/etc/kubernetes/node-feature-discovery/features.d"):
        assert daemon[path]["hostPath"] == path, path
        assert not daemon[path].get("readOnly"), f"{path} must be writable"
    assert daemon["/etc/rocenet"]["readOnly"] is True

    plugin = mounts(cs["device-plugin"], ds)
    for path in ("/var/lib/kubelet/device-plugins", "/var/lib/kubelet/pod-resources",
                 "/run/rocenet", "/var/run/k8s.cni.cncf.io"):
        assert plugin[path]["hostPath"] == path, path
    # The flags name what the mounts provide: HCL directories under the
    # shared /run/rocenet (kubelet mounts them into pods from the host), and
    # kubelet's PodResources socket at its default path.
    argv = cs["device-plugin"]["command"]
    hcl = [a.split("=", 1)[1] for a in argv if a.startswith("--hcl-dir=")]
    assert hcl and hcl[0].startswith("/run/rocenet/"), argv
    assert not any(a.startswith("--pod-resources-socket=") for a in argv)
    # The device plugin, rocectl and the CNI plugin on the host share one socket.
    assert daemon["/run/rocenet"]["name"] == plugin["/run/rocenet"]["name"]

    init = cs["install-cni"]
    assert init in ds["spec"]["template"]["spec"]["initContainers"]
    init_mounts = mounts(init, ds)
    assert len(init_mounts) == 1
    (target, m), = init_mounts.items()
    assert m["hostPath"] == CNI_BIN_DIR[name]
    assert init["command"][-1] == target, "install-cni.sh writes into the mounted host directory"

    for c in cs.values():
        for m in c.get("volumeMounts", []):
            assert m.get("mountPropagation") in (None, "HostToContainer", "None"), \
                f"{c['name']} {m['mountPath']}: Bidirectional propagation needs privileged"


def test_daemonset_probes_use_what_the_binaries_offer(overlay):
    name, docs = overlay
    ds = one(docs, "DaemonSet", "rocenet")
    # Gaudi nodes only (NFD's PCI label for vendor 1da3, class 12): not every
    # CPU and control-plane node with a forever not-ready daemon.
    assert ds["spec"]["template"]["spec"]["nodeSelector"] == {
        "kubernetes.io/os": "linux", "feature.node.kubernetes.io/pci-1200_1da3.present": "true"}
    cs = containers(ds)
    config = yaml.safe_load(rocenetd_config(docs)["data"]["config.yaml"])
    daemon = cs["rocenetd"]
    ports = {p["name"]: p for p in daemon["ports"]}
    metrics_port = int(config["metrics_address"].rsplit(":", 1)[1])
    assert ports["metrics"]["containerPort"] == metrics_port == ports["metrics"]["hostPort"]
    # Both through the API socket: alive means the socket is served.
    for probe in ("livenessProbe", "readinessProbe"):
        command = daemon[probe]["exec"]["command"]
        assert command[0] == "/usr/bin/rocectl" and "health" in command, probe
    assert config["socket"] == "/run/rocenet/rocenetd.sock", "rocectl's default socket"

    plugin = cs["device-plugin"]
    with open(os.path.join(REPO, "plugins", "device", "main.cc")) as f:
        resource = re.search(r'resource_name, "([^"]+)"', f.read()).group(1)
    sock = "/var/lib/kubelet/device-plugins/" + resource.replace("/", "_") + ".sock"
    for probe in ("livenessProbe", "readinessProbe"):
        assert plugin[probe]["exec"]["command"][-1] == f"test -S {sock}", probe
    # The service selects the pods and names the port the ServiceMonitor scrapes.
    svc = one(docs, "Service", "rocenet-metrics")
    labels = ds["spec"]["template"]["metadata"]["labels"]
    assert all(labels.get(k) == v for k, v in svc["spec"]["selector"].items())
    assert svc["spec"]["ports"][0]["targetPort"] == "metrics"


def test_probes_and_configmap_against_the_real_daemon(tmp_path):
    """rocenetd starts with the ConfigMap's config (paths that would touch this
    host moved into a temporary directory) and answers exactly the probes."""
    docs = render(OVERLAYS["generic"])
    ds = one(docs, "DaemonSet", "rocenet")
    daemon = containers(ds)["rocenetd"]
    cm = rocenetd_config(docs)
    # rocenetd reads the whole volume: config.yaml and any override beside it.
    assert config_flag(ds) == next(m["mountPath"] for m in daemon["volumeMounts"]
                                   if m["name"] == "config")
    config = yaml.safe_load(cm["data"]["config.yaml"])
    config["outputs"]["nfd_features"] = str(tmp_path / "features.d" / "rocenet")
    (tmp_path / "features.d").mkdir()
    cm["data"]["config.yaml"] = yaml.safe_dump(config)
    # The volume's directory, as the DaemonSet passes it.
    config_path = write_volume(cm, tmp_path / "etc-rocenet")
    with running_daemon(built("rocenetd"), config_path, tmp_path) as (ns, sock):
        port = int(config["metrics_address"].rsplit(":", 1)[1])
        url = f"http://127.0.0.1:{port}/metrics"

        def scrape():
            cp = subprocess.run(["ip", "netns", "exec", ns, "curl", "-sS", "-o", "-", "-w",
                                 "\n%{http_code}", "--max-time", "5", url],
                                capture_output=True, text=True)
            return cp if cp.returncode == 0 else None
        cp = wait_until(scrape, 10, interval=0.2, what=f"metrics at {url}")
        body, code = cp.stdout.rsplit("\n", 1)
        assert code == "200" and "rocenet_build_info" in body

        def run(probe: str) -> subprocess.CompletedProcess:
            command = daemon[probe]["exec"]["command"]
            return subprocess.run([built("rocectl"), f"--socket={sock}", *command[1:]],
                                  capture_output=True, text=True, timeout=30)
        for probe in ("readinessProbe", "livenessProbe"):
            cp = run(probe)
            assert cp.returncode == 0, f"{probe} failed: {cp.stdout}{cp.stderr}"
        # The socket path gone (what an overlapping restart used to do): the
        # metrics still answer, the liveness probe must not.
        os.rename(sock, sock + ".moved")
        try:
            assert run("livenessProbe").returncode != 0
            assert scrape() is not None
        finally:
            os.rename(sock + ".moved", sock)


def test_a_config_override_overlay_changes_one_key_and_rolls_the_daemonset(tmp_path):
    """examples/config-override adds local.yaml beside the base's config.yaml
    in the same ConfigMap: the base file is untouched, the name (and so the
    DaemonSet's pod template) changes, and rocenetd takes the directory with
    the override, or refuses it naming the file."""
    base = rocenetd_config(render(OVERLAYS["generic"]))
    docs = render(os.path.join(K8S, "examples", "config-override"))
    cm = rocenetd_config(docs)
    assert set(cm["data"]) == {"config.yaml", "local.yaml"}
    assert cm["data"]["config.yaml"] == base["data"]["config.yaml"]
    assert cm["metadata"]["name"] != base["metadata"]["name"], "a changed config must roll"
    override = yaml.safe_load(cm["data"]["local.yaml"])
    assert override["addressing"] == {"mtu": 9000}
    directory = write_volume(cm, tmp_path / "good")
    check = [built("rocenetd"), "--check-config", f"--config={directory}"]
    cp = subprocess.run(check, capture_output=True, text=True, timeout=10)
    assert cp.returncode == 0, cp.stderr
    cm["data"]["local.yaml"] = 'addressing:\n  mtu: "9000"\n'
    directory = write_volume(cm, tmp_path / "bad")
    cp = subprocess.run([built("rocenetd"), "--check-config", f"--config={directory}"],
                        capture_output=True, text=True, timeout=10)
    assert cp.returncode == 2
    assert f"config {directory}/local.yaml" in cp.stderr and "addressing.mtu" in cp.stderr, \
        cp.stderr


def test_install_cni_replaces_the_plugin_atomically(tmp_path):
    script = os.path.join(PKG, "container", "install-cni.sh")
    plugin = built("rocenet")
    dest = tmp_path / "cni-bin"
    dest.mkdir()
    old = dest / "rocenet"
    old.write_text("#!/bin/sh\necho old\n")
    old.chmod(0o755)
    old_inode = old.stat().st_ino
    cp = subprocess.run(["sh", script, plugin, str(dest)], capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr
    new = dest / "rocenet"
    assert new.stat().st_ino != old_inode, "replaced by rename, not rewritten in place"
    assert new.stat().st_mode & 0o777 == 0o755
    assert sorted(os.listdir(dest)) == ["rocenet"], "no temporary file left behind"
    version = subprocess.run([str(new)], env={"CNI_COMMAND": "VERSION"}, capture_output=True,
                             text=True, stdin=subprocess.DEVNULL)
    assert "1.1.0" in json.loads(version.stdout)["supportedVersions"]

    # A binary that cannot answer VERSION never replaces a working one.
    bad = tmp_path / "bad"
    bad.write_text("#!/bin/sh\nexit 1\n")
    bad.chmod(0o755)
    before = new.read_bytes()
    cp = subprocess.run(["sh", script, str(bad), str(dest)], capture_output=True, text=True)
    assert cp.returncode != 0
    assert new.read_bytes() == before
    assert sorted(os.listdir(dest)) == ["rocenet"]


def test_optional_patches_apply_to_the_overlays(tmp_path):
    """patches/*.yaml are for users' own overlays: each applies and changes
    only what it says."""
    cases = {"host-pid.yaml": lambda spec: spec.get("hostPID") is True}
    for patch, applied in cases.items():
        work = tmp_path / patch.replace(".yaml", "")
        work.mkdir()
        shutil.copy(os.path.join(K8S, "patches", patch), work / patch)
        (work / "kustomization.yaml").write_text(
            f"bases:\n  - {os.path.relpath(OVERLAYS['generic'], work)}\n"
            f"patchesStrategicMerge:\n  - {patch}\n")
        spec = one(render(str(work)), "DaemonSet", "rocenet")["spec"]["template"]["spec"]
        assert applied(spec), patch
        caps = {c["name"]: c["securityContext"]["capabilities"] for c in spec["containers"]}
        assert caps["device-plugin"] == {"drop": ["ALL"]}, f"{patch} changed the device plugin"


# --- OpenShift ---------------------------------------------------------------------

def test_openshift_scc_is_bound_to_the_service_account():
    docs = render(OVERLAYS["openshift"])
    ds = one(docs, "DaemonSet", "rocenet")
    ns = ds["metadata"]["namespace"]
    sa = ds["spec"]["template"]["spec"]["serviceAccountName"]
    scc = one(docs, "SecurityContextConstraints")
    assert scc["allowPrivilegedContainer"] is False
    assert scc["allowPrivilegeEscalation"] is False
    assert scc["allowHostNetwork"] is True and scc["allowHostDirVolumePlugin"] is True
    assert scc["allowHostPID"] is False and scc["allowHostIPC"] is False
    assert set(scc["allowedCapabilities"]) == DAEMON_CAPS
    assert not scc.get("users") and not scc.get("groups"), "granted by RBAC only"
    pod_se = ds["spec"]["template"]["spec"]["securityContext"]["seLinuxOptions"]["type"]
    assert scc["seLinuxContext"]["seLinuxOptions"]["type"] == pod_se == "spc_t"
    used = {v for vol in ds["spec"]["template"]["spec"]["volumes"] for v in vol if v != "name"}
    assert used <= {"configMap": 1, "hostPath": 1}.keys() <= set(scc["volumes"])

    binding = one(docs, "RoleBinding")
    assert binding["metadata"]["namespace"] == ns
    assert {"kind": "ServiceAccount", "name": sa, "namespace": ns} in binding["subjects"]
    role = one(docs, binding["roleRef"]["kind"], binding["roleRef"]["name"])
    assert any(r["apiGroups"] == ["security.openshift.io"]
               and "securitycontextconstraints" in r["resources"]
               and r.get("resourceNames") == [scc["metadata"]["name"]]
               and r["verbs"] == ["use"] for r in role["rules"])
    assert ds["spec"]["template"]["metadata"]["annotations"]["openshift.io/required-scc"] == \
        scc["metadata"]["name"]


# --- Multus and the example pod -------------------------------------------------------

def test_network_attachment_definition_is_accepted_by_the_plugin(tmp_path):
    docs = render(os.path.join(K8S, "examples"))
    nad = one(docs, "NetworkAttachmentDefinition")
    with open(os.path.join(REPO, "plugins", "device", "main.cc")) as f:
        resource = re.search(r'resource_name, "([^"]+)"', f.read()).group(1)
    assert nad["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"] == resource
    config = json.loads(nad["spec"]["config"])
    assert config["type"] == "rocenet"
    assert config["name"] == nad["metadata"]["name"]

    pod = one(docs, "Pod")
    networks = [n.strip() for n in pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"].split(",")]
    assert set(networks) == {nad["metadata"]["name"]}
    limits = pod["spec"]["containers"][0]["resources"]["limits"]
    assert int(limits[resource]) == len(networks), "one port per attachment"

    # The real plugin takes the configuration and only fails reaching the
    # daemon (code 11), not on the configuration (code 7).
    config["socket"] = str(tmp_path / "absent.sock")
    env = {"CNI_COMMAND": "ADD", "CNI_CONTAINERID": "pkexample", "CNI_NETNS": "/var/run/netns/pk-absent",
           "CNI_IFNAME": "net1", "CNI_PATH": "/opt/cni/bin",
           "CNI_ARGS": "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=example"}
    cp = subprocess.run([built("rocenet")], input=json.dumps(config), env=env,
                        capture_output=True, text=True, timeout=30)
    result = json.loads(cp.stdout)
    assert cp.returncode == 1 and result["code"] == 11, result


# --- Grafana --------------------------------------------------------------------------

def test_dashboard_queries_only_exported_metrics():
    with open(os.path.join(PKG, "grafana", "rocenet-dashboard.json")) as f:
        dashboard = json.load(f)
    exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    exprs += [v["definition"] for v in dashboard["templating"]["list"] if v.get("definition")]
    used = {m for e in exprs for m in re.findall(r"\b(rocenet_[a-z0-9_]+)", e)}
    exported = source_metric_names()
    assert exported, "no metric names found in daemon/api"
    missing = []
    for metric in used:
        base = re.sub(r"_(bucket|sum|count)$", "", metric)
        if metric not in exported and base not in exported:
            missing.append(metric)
    assert not missing, f"dashboard queries metrics rocenetd does not export: {sorted(missing)}"
    # What the dashboard is for: ports up, provisioned, LLDP neighbors,
    # traffic and errors per port, attach latency.
    for want in ("rocenet_port_up", "rocenet_port_provisioned", "rocenet_lldp_neighbors",
                 "rocenet_port_receive_bytes_total", "rocenet_port_transmit_errors_total",
                 "rocenet_attach_duration_seconds_bucket", "rocenet_attach_operations_total"):
        assert want in used, f"no panel shows {want}"
    assert any("histogram_quantile" in e and "rocenet_attach_duration_seconds_bucket" in e for e in exprs)
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids)), "panel ids must be unique"


# --- container image ------------------------------------------------------------------

def runtime_stage_packages() -> set[str]:
    with open(os.path.join(PKG, "container", "Containerfile")) as f:
        text = f.read()
    runtime = re.split(r"^FROM ", text, flags=re.M)[-1]
    assert runtime.startswith("docker.io/library/debian:12-slim"), "runtime stage is debian:12-slim"
    install = re.search(r"apt-get install -y --no-install-recommends((?:\s*\\\n\s*[a-z0-9.+-]+)+)", runtime)
    assert install, "no apt-get install in the runtime stage"
    return set(re.findall(r"[a-z0-9][a-z0-9.+-]+", install.group(1)))


def owning_packages(paths: set[str]) -> dict[str, str]:
    """Library path -> the Debian package that owns it, in one dpkg -S call.
    dpkg knows a file under the name its package ships (/lib or /usr/lib)."""
    def candidates(path):
        out = []
        for c in (path, os.path.realpath(path)):
            out += [c, re.sub(r"^/usr/lib/", "/lib/", c), re.sub(r"^/lib/", "/usr/lib/", c)]
        return out
    everything = sorted({c for p in paths for c in candidates(p)})
    cp = subprocess.run(["dpkg", "-S", *everything], capture_output=True, text=True)
    owner = {}
    for line in cp.stdout.splitlines():
        pkg, _, path = line.partition(": ")
        owner[path] = pkg.split(":")[0]
    result = {}
    for p in paths:
        found = [owner[c] for c in candidates(p) if c in owner]
        assert found, f"no Debian package owns {p}"
        result[p] = found[0]
    return result


def test_runtime_image_packages_are_exactly_what_the_binaries_load():
    libs = set()
    for name in DYNAMIC_BINARIES:
        cp = subprocess.run(["ldd", built(name)], capture_output=True, text=True, check=True)
        libs.update(re.findall(r"=> (/\S+)", cp.stdout))
    if any(re.search(r"/lib(asan|tsan|ubsan)\.so", lib) for lib in libs):
        pytest.skip("a sanitizer build: the image holds the plain build, whose libraries differ")
    needed: dict[str, set[str]] = {}
    for lib, pkg in owning_packages(libs).items():
        needed.setdefault(pkg, set()).add(os.path.basename(lib))
    listed = runtime_stage_packages()
    assert not set(needed) - listed, \
        f"runtime stage lacks {sorted(set(needed) - listed)} for {[needed[p] for p in set(needed) - listed]}"
    assert not listed - set(needed), f"runtime stage installs unneeded {sorted(listed - set(needed))}"
    # The CNI plugin runs from the host's CNI directory: no shared libraries.
    cp = subprocess.run(["ldd", built("rocenet")], capture_output=True, text=True)
    assert "not a dynamic executable" in cp.stdout + cp.stderr


def test_manifest_commands_exist_in_the_image_layout(tmp_path):
    """The runtime component installs what the image holds; every command the
    DaemonSet runs is there (install-cni.sh is copied by the Containerfile)."""
    for name in ("rocenetd", "rocectl", "rocenet", "rocenet-device-plugin"):
        built(name)
    root = tmp_path / "image"
    cp = subprocess.run(["cmake", "--install", BUILD_DIR, "--prefix", "/usr", "--component", "runtime"],
                        env={**os.environ, "DESTDIR": str(root)}, capture_output=True, text=True)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    with open(os.path.join(PKG, "container", "Containerfile")) as f:
        containerfile = f.read()
    assert "packaging/container/install-cni.sh /out/usr/lib/rocenet/install-cni.sh" in containerfile
    assert "--component runtime" in containerfile
    present = {"/usr/lib/rocenet/install-cni.sh", "/bin/sh"}
    ds = one(render(OVERLAYS["generic"]), "DaemonSet", "rocenet")
    for c in containers(ds).values():
        commands = [c["command"]]
        commands += [c[p]["exec"]["command"] for p in ("livenessProbe", "readinessProbe")
                     if "exec" in c.get(p, {})]
        for argv in commands:
            path = argv[0]
            assert path in present or os.access(str(root) + path, os.X_OK), \
                f"{c['name']}: {path} is not in the image"
    init = containers(ds)["install-cni"]["command"]
    assert os.access(str(root) + init[1], os.X_OK), f"{init[1]}: the CNI plugin the init container copies"


# --- Helm -------------------------------------------------------------------------------

def test_helm_chart_values_and_daemonset_match_the_base():
    chart_dir = os.path.join(PKG, "helm", "rocenet")
    with open(os.path.join(chart_dir, "Chart.yaml")) as f:
        chart = yaml.safe_load(f)
    assert chart["apiVersion"] == "v2" and chart["name"] == "rocenet"
    with open(os.path.join(chart_dir, "values.yaml")) as f:
        values = yaml.safe_load(f)
    yaml.safe_load(values["config"])
    templates = ""
    for path in sorted(glob.glob(os.path.join(chart_dir, "templates", "*"))):
        with open(path) as f:
            text = f.read()
        # Without helm here: at least every block is closed and every action too.
        opened = len(re.findall(r"\{\{-?\s*(?:if|range|with|define)\b", text))
        closed = len(re.findall(r"\{\{-?\s*end\s*-?\}\}", text))
        assert opened == closed, f"{path}: {opened} blocks opened, {closed} closed"
        assert text.count("{{") == text.count("}}"), f"{path}: unbalanced {{{{ }}}}"
        templates += text
    for ref in set(re.findall(r"\.Values\.([A-Za-z0-9_.]+)", templates)):
        node = values
        for key in ref.split("."):
            assert isinstance(node, dict) and key in node, f"templates use .Values.{ref}, values.yaml lacks it"
            node = node[key]
    with open(os.path.join(chart_dir, "templates", "daemonset.yaml")) as f:
        helm_ds = f.read()
    base = one(render(OVERLAYS["generic"]), "DaemonSet", "rocenet")
    for c in containers(base).values():
        assert f"- name: {c['name']}" in helm_ds
        for m in c.get("volumeMounts", []):
            assert f"mountPath: {m['mountPath']}" in helm_ds
    for v in volumes(base).values():
        if "hostPath" in v and v["name"] != "cni-bin":
            assert f"path: {v['hostPath']['path']}" in helm_ds
    assert 'add: ["NET_ADMIN", "NET_RAW", "SYS_ADMIN"]' in helm_ds
    assert helm_ds.count("add: [") == 1 and "privileged: true" not in templates
    assert "mountPropagation: HostToContainer" in helm_ds
    assert values["nodeSelector"] == base["spec"]["template"]["spec"]["nodeSelector"]
    assert '"/usr/bin/rocectl", "--timeout=4s", "health"' in helm_ds.split("livenessProbe")[1]


# --- DEB --------------------------------------------------------------------------------

@contextlib.contextmanager
def exclusive(path: str):
    """Only one DEB install test on this machine at a time."""
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def dpkg(*args: str) -> subprocess.CompletedProcess:
    """dpkg, waiting while apt or another dpkg holds the database lock."""
    deadline = time.monotonic() + 300
    while True:
        cp = subprocess.run(["dpkg", *args], capture_output=True, text=True,
                            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        if cp.returncode == 0 or "lock" not in cp.stderr or time.monotonic() > deadline:
            return cp
        time.sleep(2)


def installed(package: str) -> bool:
    cp = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True)
    return "installed" in cp.stdout and "not-installed" not in cp.stdout


def test_deb_builds_installs_runs_and_is_removed(tmp_path):
    for name in ("rocenetd", "rocectl", "rocenet", "rocenet-device-plugin"):
        built(name)
    for tool in ("cpack", "dpkg-shlibdeps"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} not installed (packaging/debian-deps.sh test installs dpkg-dev)")
    cp = subprocess.run(["cpack", "-G", "DEB", "-B", str(tmp_path)], cwd=BUILD_DIR,
                        capture_output=True, text=True, timeout=600)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    debs = glob.glob(str(tmp_path / "*.deb"))
    assert len(debs) == 1, debs
    deb = debs[0]

    fields = subprocess.run(["dpkg-deb", "-f", deb, "Package", "Depends"], capture_output=True,
                            text=True, check=True).stdout
    assert "Package: rocenet" in fields
    for lib in ("libgrpc++1.51", "libprotobuf32", "libnl-3-200", "libyaml-cpp0.7", "libc6"):
        assert lib in fields, f"Depends lacks {lib}: {fields}"
    contents = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True, check=True).stdout
    files = sorted("/" + line.split()[-1].lstrip("./") for line in contents.splitlines()
                   if not line.startswith("d"))
    for want in ("/usr/sbin/rocenetd", "/usr/bin/rocectl", "/usr/bin/rocenet-device-plugin",
                 "/usr/lib/cni/rocenet", "/lib/systemd/system/rocenetd.service",
                 "/etc/rocenet/config.yaml", "/etc/iproute2/rt_protos.d/rocenet.conf",
                 "/usr/share/doc/rocenet/README.md", "/usr/share/doc/rocenet/docs/deploying.md"):
        assert want in files, f"{want} not in the DEB: {files}"
    assert not any(f.startswith("/usr/bin/rocenet") and f != "/usr/bin/rocenet-device-plugin"
                   for f in files), "the CNI plugin belongs in /usr/lib/cni, not on PATH"
    conffiles = subprocess.run(["dpkg-deb", "-I", deb, "conffiles"], capture_output=True, text=True).stdout
    assert "/etc/rocenet/config.yaml" in conffiles

    with exclusive("/run/lock/rocenet-packaging-deb.lock"):
        if installed("rocenet"):
            pytest.skip("a rocenet package is already installed on this machine; not replacing it")
        clashes = [f for f in files if os.path.lexists(f)]
        if clashes:
            pytest.skip(f"files of the DEB already exist here, not overwriting them: {clashes}")
        try:
            cp = dpkg("-i", deb)
            assert cp.returncode == 0, cp.stdout + cp.stderr
            assert installed("rocenet")
            env = {**os.environ, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
            version = subprocess.run(["rocenetd", "--version"], capture_output=True, text=True, env=env)
            assert version.returncode == 0 and version.stdout.startswith("rocenetd "), version
            assert shutil.which("rocenetd", path=env["PATH"]) == "/usr/sbin/rocenetd"
            usage = subprocess.run(["rocectl", "--help"], capture_output=True, text=True, env=env)
            assert usage.returncode == 0 and "rocectl" in usage.stdout, usage
            cni = subprocess.run(["/usr/lib/cni/rocenet"], env={"CNI_COMMAND": "VERSION"},
                                 capture_output=True, text=True, stdin=subprocess.DEVNULL)
            assert "supportedVersions" in cni.stdout
            # The packaged config is one rocenetd starts with.
            with running_daemon("/usr/sbin/rocenetd", "/etc/rocenet/config.yaml", tmp_path / "run-deb"):
                pass
            unit = "/lib/systemd/system/rocenetd.service"
            if shutil.which("systemd-analyze"):
                verify = subprocess.run(["systemd-analyze", "verify", unit], capture_output=True, text=True)
                assert verify.returncode == 0, verify.stderr
                # Hardened: systemd rates the unit's exposure (0 best, 10 worst).
                security = subprocess.run(["systemd-analyze", "security", "--offline=true", unit],
                                          capture_output=True, text=True)
                level = re.search(r"Overall exposure level for rocenetd.service: ([0-9.]+)", security.stdout)
                assert level and float(level.group(1)) <= 4.0, security.stdout[-2000:]
        finally:
            cp = dpkg("--purge", "rocenet")
            assert cp.returncode == 0, cp.stdout + cp.stderr
        assert not installed("rocenet")
        left = [f for f in files if os.path.lexists(f)]
        assert not left, f"left behind after purge: {left}"
