# SPDX-License-Identifier: Apache-2.0
"""Packaging, the manifests themselves: every kustomization under
packaging/kubernetes renders with `kubectl kustomize` without a warning
(no deprecated field) and passes yamllint; the DaemonSet of each
overlay keeps least privilege, its mounts, probes and init container, and
mounts the Secret the config's diag_secret_file names; the optional patches
change only what they say; the OpenShift SCC is bound to the ServiceAccount
and allows the DaemonSet's volumes; the PrometheusRule holds the plain rules
file's groups; the Helm chart matches the base; and the Grafana dashboard
queries only metrics rocenetd exports."""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess

import pytest
import yaml

from packaging_support import (K8S, OVERLAYS, PKG, REPO, containers, one, render,
                               rocenetd_config, volumes)

CNI_BIN_DIR = {"generic": "/opt/cni/bin", "openshift": "/var/lib/cni/bin"}
DAEMON_CAPS = {"NET_ADMIN", "NET_RAW", "SYS_ADMIN"}


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


# --- rendering and lint --------------------------------------------------------

def test_every_kustomization_renders_offline():
    kinds = {
        OVERLAYS["generic"]: {"Namespace", "ServiceAccount", "ConfigMap", "DaemonSet", "Service"},
        OVERLAYS["openshift"]: {"Namespace", "ServiceAccount", "ConfigMap", "DaemonSet", "Service",
                                "SecurityContextConstraints", "ClusterRole", "RoleBinding",
                                "ServiceMonitor", "PrometheusRule"},
        os.path.join(K8S, "monitoring"): {"ServiceMonitor", "PrometheusRule"},
        os.path.join(K8S, "examples"): {"NetworkAttachmentDefinition", "Pod"},
        os.path.join(K8S, "examples", "config-override"): {"Namespace", "ServiceAccount",
                                                           "ConfigMap", "DaemonSet", "Service"},
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


def test_daemonset_mounts_the_diag_secret_the_config_names(overlay):
    """The Secret of docs/deploying.md step 3 reaches rocenetd: the config
    names a file in a directory where the rocenetd container, and no other,
    mounts the Secret rocenet-diag read-only; the volume is optional (the
    pods start before the Secret exists) and its key is that file's name."""
    name, docs = overlay
    ds = one(docs, "DaemonSet", "rocenet")
    config = yaml.safe_load(rocenetd_config(docs)["data"]["config.yaml"])
    secret_file = config["diag_secret_file"]
    assert secret_file == "/etc/rocenet-diag/secret"
    directory, key = os.path.split(secret_file)
    cs = containers(ds)
    daemon = mounts(cs["rocenetd"], ds)
    assert directory in daemon, f"rocenetd does not mount {directory}"
    mount = daemon[directory]
    assert mount["readOnly"] is True
    # A subPath mount would never see a rotated Secret.
    assert "subPath" not in mount and "subPathExpr" not in mount
    secret = volumes(ds)[mount["name"]]["secret"]
    assert secret["secretName"] == "rocenet-diag"
    assert secret["optional"] is True, "the DaemonSet must start without the Secret"
    assert secret["defaultMode"] == 0o400
    assert "items" not in secret, f"every key of the Secret appears as a file, {key} among them"
    for cname, c in cs.items():
        if cname != "rocenetd":
            assert mount["name"] not in {m["name"] for m in c.get("volumeMounts", [])}, cname
    # The command the docs give creates that Secret, with that key, in the
    # DaemonSet's namespace.
    with open(os.path.join(REPO, "docs", "deploying.md")) as f:
        deploying = f.read()
    command = re.search(r"kubectl -n (\S+) create secret generic (\S+)[\s\\]+--from-literal=([^=]+)=",
                        deploying)
    assert command, "docs/deploying.md does not say how to create the Secret"
    assert command.groups() == (ds["metadata"]["namespace"], secret["secretName"], key)


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
    metrics_port = int(config["metrics_address"].rsplit(":", 1)[1])
    # No declared ports: in a hostNetwork pod they become hostPorts, and the
    # scheduler would keep a rolling update's new pod off the node.
    assert not any(c.get("ports") for c in cs.values()), "a declared port blocks maxSurge"
    update = ds["spec"]["updateStrategy"]
    assert update["rollingUpdate"] == {"maxSurge": 1, "maxUnavailable": 0}, update
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
    for probe in ("livenessProbe", "readinessProbe"):
        assert plugin[probe]["exec"]["command"][-1] == f"test -S {sock}", probe
    # The service selects the pods and sends to the metrics port the
    # ServiceMonitor scrapes.
    svc = one(docs, "Service", "rocenet-metrics")
    labels = ds["spec"]["template"]["metadata"]["labels"]
    assert all(labels.get(k) == v for k, v in svc["spec"]["selector"].items())
    assert svc["spec"]["ports"][0]["name"] == "metrics"
    assert svc["spec"]["ports"][0]["targetPort"] == metrics_port



def test_optional_patches_apply_to_the_overlays(tmp_path):
    """patches/*.yaml are for users' own overlays: each applies and changes
    only what it says."""
    cases = {"host-pid.yaml": lambda spec: spec.get("hostPID") is True}
    for patch, applied in cases.items():
        work = tmp_path / patch.replace(".yaml", "")
        work.mkdir()
        shutil.copy(os.path.join(K8S, "patches", patch), work / patch)
        (work / "kustomization.yaml").write_text(
            f"resources:\n  - {os.path.relpath(OVERLAYS['generic'], work)}\n"
            f"patches:\n  - path: {patch}\n")
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
    # The secret volume holds the diagnostics data port's shared secret.
    assert used == {"configMap", "hostPath", "secret"}, sorted(used)
    assert used <= set(scc["volumes"]), f"the SCC allows {scc['volumes']}, not {sorted(used)}"

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
    generic = render(OVERLAYS["generic"])
    base = one(generic, "DaemonSet", "rocenet")
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
    # The same Secret, optional, in the directory of the same config key.
    base_config = yaml.safe_load(rocenetd_config(generic)["data"]["config.yaml"])
    assert yaml.safe_load(values["config"])["diag_secret_file"] == base_config["diag_secret_file"]
    assert values["diagSecretName"] == volumes(base)["diag-secret"]["secret"]["secretName"]
    assert re.search(r"secretName: \{\{ \.Values\.diagSecretName \}\}\n\s+optional: true\n", helm_ds)
    with open(os.path.join(chart_dir, "templates", "openshift-scc.yaml")) as f:
        assert re.search(r"^volumes: \[.*\bsecret\b.*\]$", f.read(), re.MULTILINE)
    assert '"/usr/bin/rocectl", "--timeout=4s", "health"' in helm_ds.split("livenessProbe")[1]
    assert "maxSurge: 1" in helm_ds and "maxUnavailable: 0" in helm_ds
    assert "hostPort" not in helm_ds and "--takeover-wait=2m" in helm_ds
    assert '--socket-name={{ include "rocenet.pluginSocket" . }}' in helm_ds



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

