# SPDX-License-Identifier: Apache-2.0
"""Packaging, the manifests themselves: every kustomization under
packaging/kubernetes renders with `kubectl kustomize` without a warning
(no deprecated field) and passes yamllint; the DaemonSet rocenet-controller
makes for each overlay's policy (packaging/kubernetes/node) keeps least
privilege, its mounts, probes and init container;
rocenet-diagd runs in a container of its own with NET_RAW alone, the
diagnostics Secret mounted where its --secret-file says and nowhere else,
its socket beside rocenetd's, and its metrics in the Service and the
ServiceMonitor; rocenetd's config and container keep nothing of the
diagnostics; the OpenShift
SCC is bound to the ServiceAccount and allows the DaemonSet's volumes and
capabilities; the PrometheusRule holds the plain rules file's groups;
and the Grafana dashboard queries only metrics rocenetd and rocenet-diagd
export. The Helm chart's tests are packaging_helm_test.py."""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess

import pytest
import yaml

from packaging_support import (
    DIAGD_FLAGS,
    K8S,
    OVERLAYS,
    PKG,
    REPO,
    containers,
    flags,
    one,
    render,
    rocenetd_config,
    system,
    volumes,
)

CNI_BIN_DIR = {"generic": "/opt/cni/bin", "openshift": "/var/lib/cni/bin"}
DAEMON_CAPS = {"NET_ADMIN", "NET_RAW", "SYS_ADMIN"}
# The capabilities each container adds; every other container adds none.
ADDED_CAPS = {"rocenetd": DAEMON_CAPS, "diagd": {"NET_RAW"}}
# What moved from rocenetd to rocenet-diagd: rocenetd's config must not set
# them (it ignores them, with a warning).
MOVED_CONFIG_KEYS = {"diag_secret_file", "diag_port", "node_name"}
NODE_NAME_ENV = {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}


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
    return request.param, system(request.param)


def source_metric_names() -> set[str]:
    names = set()
    for path in (glob.glob(os.path.join(REPO, "daemon", "api", "*.cc"))
                 + glob.glob(os.path.join(REPO, "daemon", "diagd", "*.cc"))):
        with open(path) as f:
            names.update(re.findall(r'"(rocenet_[a-z0-9_]+)"', f.read()))
    return names


# --- rendering and lint --------------------------------------------------------

def test_every_kustomization_renders_offline():
    # What every overlay installs: the operator (the CRDs, rocenet-controller
    # with its account, RBAC and Deployment, the holders' PriorityClass), the
    # node pods' account and the reporter's RBAC, the metrics Service, the
    # default policy.
    install = {"Namespace", "CustomResourceDefinition", "ServiceAccount", "ClusterRole",
               "ClusterRoleBinding", "Deployment", "Role", "RoleBinding", "PriorityClass", "Service",
               "RocenetNodePolicy"}
    # What rocenet-controller makes of a policy: the DaemonSet, its
    # configuration, the admission policies.
    node = {"ConfigMap", "DaemonSet", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}
    kinds = {
        OVERLAYS["generic"]: install,
        OVERLAYS["openshift"]: install | {"ServiceMonitor", "PrometheusRule"},
        os.path.join(K8S, "overlays", "generic-dra"): install,
        os.path.join(K8S, "overlays", "openshift-dra"): install | {"ServiceMonitor", "PrometheusRule"},
        os.path.join(K8S, "node", "generic"): node,
        os.path.join(K8S, "node", "openshift"): node | {"SecurityContextConstraints"},
        os.path.join(K8S, "node", "generic-dra"): node | {"DeviceClass"},
        os.path.join(K8S, "node", "openshift-dra"): node | {"SecurityContextConstraints", "DeviceClass"},
        os.path.join(K8S, "monitoring"): {"ServiceMonitor", "PrometheusRule", "ServiceAccount",
                                          "ClusterRole", "ClusterRoleBinding"},
        os.path.join(K8S, "examples"): {"NetworkAttachmentDefinition", "Pod"},
        os.path.join(K8S, "examples", "dra"): {"ResourceClaimTemplate", "Pod"},
        os.path.join(K8S, "examples", "metrics-reader"): {"ClusterRole", "ClusterRoleBinding"},
    }
    for directory, want in kinds.items():
        got = {d["kind"] for d in render(directory)}
        assert got == want, f"{directory}: kinds {sorted(got)}, want {sorted(want)}"


def test_kustomizations_use_no_deprecated_field():
    """Kustomize v5's fields only: `resources` for directories too, `labels`,
    `patches`. render() also fails on kustomize's warnings; this names the
    field even where a kubectl would not warn."""
    deprecated = {"bases": "resources", "commonLabels": "labels",
                  "patchesStrategicMerge": "patches", "patchesJson6902": "patches",
                  "vars": "replacements", "imageTags": "images"}
    found = glob.glob(os.path.join(PKG, "**", "kustomization.yaml"), recursive=True)
    assert len(found) >= 6
    for path in found:
        with open(path) as f:
            k = yaml.safe_load(f)
        used = sorted(set(k) & set(deprecated))
        assert not used, f"{path}: {', '.join(f'{d} (use {deprecated[d]})' for d in used)}"
        directory = os.path.dirname(path)
        for entry in k.get("resources", []):
            assert os.path.exists(os.path.join(directory, entry)), f"{path}: {entry}"
        for patch in k.get("patches", []):
            assert "path" not in patch or os.path.isfile(os.path.join(directory, patch["path"])), \
                f"{path}: {patch}"
        for entry in k.get("transformers", []):
            assert os.path.exists(os.path.join(directory, entry)), f"{path}: {entry}"
        for label in k.get("labels", []):
            # commonLabels put the labels on selectors; a DaemonSet's
            # selector cannot change on a running cluster.
            assert label.get("includeSelectors") is True, f"{path}: {label}"


def test_yamllint_passes_on_all_manifests():
    if not shutil.which("yamllint"):
        pytest.skip("yamllint not installed (packaging/debian-deps.sh test installs it)")
    # From packaging/, so that the config's `ignore` paths apply.
    listed = subprocess.run(["yamllint", "-c", ".yamllint", "--list-files", "."], cwd=PKG,
                            capture_output=True, text=True)
    # The lint must see the manifests, not an empty set.
    for must in ("kubernetes/node/base/daemonset.yaml", "kubernetes/node/openshift/scc.yaml",
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
    assert not spec.get("hostPID"), "containerd and CRI-O bind pod namespaces under /var/run/netns"
    assert not spec.get("hostIPC")
    assert spec["serviceAccountName"] == "rocenet"
    assert spec["automountServiceAccountToken"] is False
    assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    cs = containers(ds)
    assert set(cs) == {"install-cni", "rocenetd", "device-plugin", "diagd", "node-reporter"}
    for cname, c in cs.items():
        sc = c["securityContext"]
        assert sc.get("privileged") is False, f"{cname} must not be privileged"
        assert sc.get("allowPrivilegeEscalation") is False, cname
        assert sc.get("readOnlyRootFilesystem") is True, cname
        # The image's default user is not root; uid 0 is chosen here on purpose.
        assert sc.get("runAsUser") == 0, cname
        caps = sc.get("capabilities", {})
        assert caps.get("drop") == ["ALL"], f"{cname} drops {caps.get('drop')}"
        want = ADDED_CAPS.get(cname, set())
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


def test_diagd_mounts_the_diag_secret_its_flag_names(overlay):
    """The Secret rocenet-controller makes reaches rocenet-diagd: its
    --secret-file names a file in a directory where the diagd container, and
    no other, mounts the Secret rocenet-diag read-only; the volume is
    optional (the pods start before the Secret exists) and its key is that
    file's name. rocenetd's config names no secret any more."""
    name, docs = overlay
    ds = one(docs, "DaemonSet", "rocenet")
    cs = containers(ds)
    secret_file = flags(cs["diagd"]["command"])["--secret-file"]
    assert secret_file == "/etc/rocenet-diag/secret"
    directory, key = os.path.split(secret_file)
    diagd = mounts(cs["diagd"], ds)
    assert directory in diagd, f"diagd does not mount {directory}"
    mount = diagd[directory]
    assert mount["readOnly"] is True
    # A subPath mount would never see a rotated Secret.
    assert "subPath" not in mount and "subPathExpr" not in mount
    secret = volumes(ds)[mount["name"]]["secret"]
    assert secret["secretName"] == "rocenet-diag"
    assert secret["optional"] is True, "the DaemonSet must start without the Secret"
    assert secret["defaultMode"] == 0o400
    assert "items" not in secret, f"every key of the Secret appears as a file, {key} among them"
    for cname, c in cs.items():
        if cname != "diagd":
            assert mount["name"] not in {m["name"] for m in c.get("volumeMounts", [])}, \
                f"{cname} mounts the diagnostics Secret"
    config = yaml.safe_load(rocenetd_config(docs)["data"]["config.yaml"])
    assert not MOVED_CONFIG_KEYS & set(config), \
        f"rocenetd's config sets {sorted(MOVED_CONFIG_KEYS & set(config))}, which are " \
        "rocenet-diagd's flags now"
    # rocenet-controller makes that Secret, with that key, in its own
    # namespace (the DaemonSet's), and the docs say so.
    with open(os.path.join(REPO, "operator", "internal", "controller", "diagsecret.go")) as f:
        maker = f.read()
    assert re.search(r'DiagSecretName = "([^"]+)"', maker).group(1) == secret["secretName"]
    assert re.search(r'StringData: map\[string\]string\{"([^"]+)":', maker).group(1) == key
    with open(os.path.join(REPO, "docs", "deploying.md")) as f:
        deploying = " ".join(f.read().split())
    assert f"makes the diagnostics data port's shared secret, the Secret `{secret['secretName']}`" \
        in deploying, "docs/deploying.md does not say who makes the Secret"


def test_diagd_container_beside_rocenetd(overlay):
    """rocenet-diagd as the contract says: its socket in the shared
    /run/rocenet beside rocenetd's (where rocectl looks for diagd.sock),
    rocenetd's socket the one the config serves, the validation label's file
    in the NFD directory beside rocenetd's scale-out-ready file, the node's
    name from the downward API; nothing of rocenetd's state, config,
    namespaces or host files; probes on its own socket. rocenetd keeps
    neither NODE_NAME (only the diagnostics used it) nor the Secret."""
    name, docs = overlay
    ds = one(docs, "DaemonSet", "rocenet")
    cs = containers(ds)
    diagd, daemon = cs["diagd"], cs["rocenetd"]
    assert diagd["image"] == daemon["image"], "one image for every container"
    assert diagd["command"][0] == "/usr/sbin/rocenet-diagd"
    given = flags(diagd["command"])
    assert set(given) <= DIAGD_FLAGS, sorted(set(given) - DIAGD_FLAGS)
    config = yaml.safe_load(rocenetd_config(docs)["data"]["config.yaml"])
    socket_dir = os.path.dirname(config["socket"])
    assert given["--node-socket"] == config["socket"]
    assert given["--socket"] == os.path.join(socket_dir, "diagd.sock"), \
        "rocectl finds diagd.sock beside rocenetd's socket"
    nfd = os.path.dirname(config["outputs"]["nfd_features"])
    assert given["--validation-file"] == os.path.join(nfd, "rocenet-validated")
    assert given["--validation-file"] != config["outputs"]["nfd_features"]
    assert given["--data-port"] == "50153"
    assert given["--log-format"] == config["log_format"], "both programs log alike"
    # The old pod's diagd leaves only once the new pod is ready: the new one
    # waits for it at least as long as rocenetd waits for the old rocenetd.
    assert given["--takeover-wait"] == "2m"
    assert "--takeover-wait=2m" in daemon["command"]
    assert diagd["env"] == [NODE_NAME_ENV]
    assert "--node-name" not in given, "the node's name comes from NODE_NAME"
    assert not any(e["name"] == "NODE_NAME" for e in daemon.get("env", [])), \
        "rocenetd no longer names the node in results"

    own = mounts(diagd, ds)
    assert set(own) == {socket_dir, nfd, "/etc/rocenet-diag"}, sorted(own)
    for path in (socket_dir, nfd):
        assert own[path]["hostPath"] == path, path
        assert not own[path].get("readOnly"), f"{path} must be writable"
    # The same host directory as rocenetd's (and so the same socket path).
    assert own[socket_dir]["name"] == mounts(daemon, ds)[socket_dir]["name"]
    for probe in ("readinessProbe", "livenessProbe"):
        assert diagd[probe]["exec"]["command"] == \
            ["/bin/sh", "-c", f"test -S {given['--socket']}"], probe
    assert diagd["livenessProbe"]["failureThreshold"] >= 3
    assert diagd["resources"]["limits"]["cpu"] in ("1", 1), \
        "bandwidth tests move data: a core, not a sliver"


@pytest.mark.parametrize("plain,dra", [("generic", "generic-dra"), ("openshift", "openshift-dra")])
def test_dra_overlays_keep_diagd_as_it_is(plain, dra):
    """The DRA component replaces the device plugin alone: diagd, its
    Secret volume and rocenetd are the same with either allocation, and the
    e2e overlays' patches of containers/0 still find the container they
    mean."""
    want = one(system(plain), "DaemonSet", "rocenet")
    got = one(system(dra), "DaemonSet", "rocenet")
    for name in ("diagd", "rocenetd"):
        assert containers(got)[name] == containers(want)[name], f"{dra}: {name}"
    assert volumes(got)["diag-secret"] == volumes(want)["diag-secret"]
    assert want["spec"]["template"]["spec"]["containers"][0]["name"] == "rocenetd"
    assert got["spec"]["template"]["spec"]["containers"][0]["name"] == "dra-plugin"


def test_metrics_service_and_servicemonitor_scrape_both_programs():
    """The headless Service has rocenetd's metrics port (the config's
    metrics_address) and diagd's (its --metrics-address) under their own
    names, and the ServiceMonitor scrapes each name, with the node label."""
    docs = system("openshift")
    ds = one(docs, "DaemonSet", "rocenet")
    config = yaml.safe_load(rocenetd_config(docs)["data"]["config.yaml"])
    diag_address = flags(containers(ds)["diagd"]["command"])["--metrics-address"]
    want = {"metrics": int(config["metrics_address"].rsplit(":", 1)[1]),
            "diag-metrics": int(diag_address.rsplit(":", 1)[1])}
    assert want == {"metrics": 50152, "diag-metrics": 50154}
    svc = one(docs, "Service", "rocenet-metrics")
    ports = {p["name"]: p for p in svc["spec"]["ports"]}
    assert {n: p["targetPort"] for n, p in ports.items()} == want
    assert all(p["port"] == p["targetPort"] and p["protocol"] == "TCP" for p in ports.values())
    for directory in (os.path.join(K8S, "monitoring"), OVERLAYS["openshift"]):
        monitor = one(render(directory), "ServiceMonitor", "rocenet")
        assert monitor["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()
        endpoints = {e["port"]: e for e in monitor["spec"]["endpoints"]}
        assert set(endpoints) == set(want), f"{directory}: scrapes {sorted(endpoints)}"
        for e in endpoints.values():
            assert e["path"] == "/metrics"
            assert {"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node"} \
                in e["relabelings"]


def test_daemonset_probes_use_what_the_binaries_offer(overlay):
    name, docs = overlay
    ds = one(docs, "DaemonSet", "rocenet")
    # Gaudi nodes only, under either form of NFD's PCI label for vendor
    # 1da3 (upstream's with class 12, OpenShift's without): not every CPU
    # and control-plane node with a forever not-ready daemon.
    spec = ds["spec"]["template"]["spec"]
    assert spec["nodeSelector"] == {"kubernetes.io/os": "linux"}
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"]
    assert [t["matchExpressions"] for t in terms] == [
        [{"key": f"feature.node.kubernetes.io/pci-{label}.present", "operator": "In", "values": ["true"]}]
        for label in ("1200_1da3", "1da3")]
    cs = containers(ds)
    config = yaml.safe_load(rocenetd_config(docs)["data"]["config.yaml"])
    daemon = cs["rocenetd"]
    metrics_port = int(config["metrics_address"].rsplit(":", 1)[1])
    # No declared ports: in a hostNetwork pod they become hostPorts, and the
    # scheduler would keep a rolling update's new pod off the node.
    assert not any(c.get("ports") for c in cs.values()), "a declared port blocks maxSurge"
    # Several nodes at once, a tenth of them, and never one without a
    # serving pod (docs/deploying.md, "Rollouts at fleet size").
    update = ds["spec"]["updateStrategy"]
    assert update["rollingUpdate"] == {"maxSurge": "10%", "maxUnavailable": 0}, update
    assert "--takeover-wait=2m" in daemon["command"]
    # Both through the API socket: alive means the socket is served.
    for probe in ("livenessProbe", "readinessProbe"):
        command = daemon[probe]["exec"]["command"]
        assert command[0] == "/usr/bin/rocectl" and "health" in command, probe
    assert config["socket"] == "/run/rocenet/rocenetd.sock", "rocectl's default socket"

    plugin = cs["device-plugin"]
    with open(os.path.join(REPO, "plugins", "device", "main.cc")) as f:
        resource = re.search(r'resource_name, "([^"]+)"', f.read()).group(1)
    # A socket per pod (kubelet keeps a registration per socket), the one
    # its probes test.
    name = resource.replace("/", "_") + "-$(POD_NAME).sock"
    assert f"--socket-name={name}" in plugin["command"]
    assert {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}} \
        in plugin["env"]
    sock = "/var/lib/kubelet/device-plugins/" + name.replace("$(POD_NAME)", "$POD_NAME")
    assert plugin["livenessProbe"]["exec"]["command"][-1] == f"test -S {sock}"
    # Ready once kubelet holds its device list: the file the plugin makes
    # then, in a directory of the pod's own (none is left on the host).
    ready = flags(plugin["command"])["--ready-file"]
    assert plugin["readinessProbe"]["exec"]["command"] == ["/bin/sh", "-c", f"test -f {ready}"]
    volume = volumes(ds)[mounts(plugin, ds)[os.path.dirname(ready)]["name"]]
    assert volume.get("emptyDir", {}).get("medium") == "Memory", volume
    # The service selects the pods and sends to the metrics port the
    # ServiceMonitor scrapes.
    svc = one(docs, "Service", "rocenet-metrics")
    labels = ds["spec"]["template"]["metadata"]["labels"]
    assert all(labels.get(k) == v for k, v in svc["spec"]["selector"].items())
    assert svc["spec"]["ports"][0]["name"] == "metrics"
    assert svc["spec"]["ports"][0]["targetPort"] == metrics_port



# --- OpenShift ---------------------------------------------------------------------

@pytest.mark.parametrize("overlay,volumes", [
    # projected: the API token of the node reporter (and the DRA plugin);
    # emptyDir: the device plugin's readiness file.
    ("openshift", {"configMap", "emptyDir", "hostPath", "secret", "projected"}),
    ("openshift-dra", {"configMap", "hostPath", "secret", "projected"}),
])
def test_openshift_scc_is_bound_to_the_service_account(overlay, volumes):
    docs = system(overlay)
    ds = one(docs, "DaemonSet", "rocenet")
    ns = ds["metadata"]["namespace"]
    sa = ds["spec"]["template"]["spec"]["serviceAccountName"]
    scc = one(docs, "SecurityContextConstraints", "rocenet")
    assert scc["allowPrivilegedContainer"] is False
    assert scc["allowPrivilegeEscalation"] is False
    assert scc["allowHostNetwork"] is True and scc["allowHostDirVolumePlugin"] is True
    assert scc["allowHostPID"] is False and scc["allowHostIPC"] is False
    assert set(scc["allowedCapabilities"]) == DAEMON_CAPS
    assert not scc.get("users") and not scc.get("groups"), "granted by RBAC only"
    pod_se = ds["spec"]["template"]["spec"]["securityContext"]["seLinuxOptions"]["type"]
    assert scc["seLinuxContext"]["seLinuxOptions"]["type"] == pod_se == "spc_t"
    used = {v for vol in ds["spec"]["template"]["spec"]["volumes"] for v in vol if v != "name"}
    # The secret volume holds the diagnostics data port's shared secret.
    assert used == volumes, sorted(used)
    assert used <= set(scc["volumes"]), f"the SCC allows {scc['volumes']}, not {sorted(used)}"

    binding = one(docs, "RoleBinding", "rocenet-scc")
    assert binding["metadata"]["namespace"] == ns
    assert {"kind": "ServiceAccount", "name": sa, "namespace": ns} in binding["subjects"]
    role = one(docs, binding["roleRef"]["kind"], binding["roleRef"]["name"])
    pod_containers = ds["spec"]["template"]["spec"]["containers"]
    for c in pod_containers:
        assert c["securityContext"].get("privileged") is False, c["name"]
        # The SCC admits every container's capabilities (diagd's NET_RAW
        # among them) and requires dropping none it adds.
        added = set(c["securityContext"]["capabilities"].get("add", []))
        assert added <= set(scc["allowedCapabilities"]), f"{c['name']} adds {sorted(added)}"
        assert not added & set(scc.get("requiredDropCapabilities") or []), c["name"]
        assert c["securityContext"]["readOnlyRootFilesystem"] is True, c["name"]
    assert {"diagd", "node-reporter"} <= {c["name"] for c in pod_containers}
    assert any(r["apiGroups"] == ["security.openshift.io"]
               and "securitycontextconstraints" in r["resources"]
               and r.get("resourceNames") == [scc["metadata"]["name"]]
               and r["verbs"] == ["use"] for r in role["rules"])
    assert ds["spec"]["template"]["metadata"]["annotations"]["openshift.io/required-scc"] == \
        scc["metadata"]["name"]



# --- Prometheus -------------------------------------------------------------------

def test_prometheusrule_renders_the_plain_rules_file():
    """The PrometheusRule as kustomize renders it carries exactly the groups
    of packaging/prometheus/rocenet-rules.yaml (promtool checks and tests
    those: ctest -L unit, prometheus.*)."""
    with open(os.path.join(PKG, "prometheus", "rocenet-rules.yaml")) as f:
        plain = yaml.safe_load(f)
    for directory in (os.path.join(K8S, "monitoring"), OVERLAYS["openshift"]):
        rule = one(render(directory), "PrometheusRule", "rocenet")
        assert rule["metadata"]["namespace"] == "rocenet-system"
        assert rule["spec"] == {"groups": plain["groups"]}, \
            f"{directory}: the PrometheusRule differs from the plain rules file"


# --- Grafana --------------------------------------------------------------------------

# A recorded series in a query: level:metric:operations.
RECORDED = re.compile(r"\b[a-z_][a-z0-9_]*:[a-z0-9_:]+")


def recorded_series() -> set[str]:
    """What packaging/prometheus/rocenet-rules.yaml records."""
    with open(os.path.join(PKG, "prometheus", "rocenet-rules.yaml")) as f:
        rules = yaml.safe_load(f)
    return {r["record"] for g in rules["groups"] for r in g["rules"] if "record" in r}


def test_dashboard_queries_only_exported_metrics():
    """Every series a panel or variable names is one rocenetd or
    rocenet-diagd exports or one the rules record; the Cluster row, at the
    top, reads recorded series only, so that a fleet's overview needs no
    per-port series."""
    with open(os.path.join(PKG, "grafana", "rocenet-dashboard.json")) as f:
        dashboard = json.load(f)
    exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    exprs += [v["definition"] for v in dashboard["templating"]["list"] if v.get("definition")]
    recorded = recorded_series()
    assert recorded, "no recording rule in packaging/prometheus/rocenet-rules.yaml"
    not_recorded = {r for e in exprs for r in RECORDED.findall(e)} - recorded
    assert not not_recorded, f"dashboard queries series no rule records: {sorted(not_recorded)}"
    used = {m for e in exprs for m in re.findall(r"\b(rocenet_[a-z0-9_]+)", RECORDED.sub(" ", e))}
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

    # The Cluster row: the first row, and its panels up to the next row.
    panels = sorted(dashboard["panels"], key=lambda p: (p["gridPos"]["y"], p["gridPos"]["x"]))
    assert panels[0]["type"] == "row" and panels[0]["title"] == "Cluster", panels[0]["title"]
    row = []
    for p in panels[1:]:
        if p["type"] == "row":
            break
        row.append(p)
    cluster = [t["expr"] for p in row for t in p["targets"]]
    assert cluster, "the Cluster row has no panel"
    for expr in cluster:
        raw = re.findall(r"\b(rocenet_[a-z0-9_]+)", RECORDED.sub(" ", expr))
        assert RECORDED.search(expr) and not raw, \
            f"the Cluster row queries {raw or expr}: recorded series only"
    # What it is for: nodes ready, ports healthy and total per rail, errors
    # per rail.
    names = {r for e in cluster for r in RECORDED.findall(e)}
    for want in ("cluster:rocenet_node_ready:sum", "rail:rocenet_port_healthy:sum",
                 "rail:rocenet_port_info:count", "rail:rocenet_port_errors:rate5m"):
        assert want in names, f"the Cluster row does not show {want}"
