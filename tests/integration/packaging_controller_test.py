# SPDX-License-Identifier: Apache-2.0
"""Packaging, rocenet-controller as every overlay installs it: unprivileged,
its probes on the ports its flags set, its RBAC writing only what it owns
(and what it makes at run time for the node side), the triage pod policy
over every pod and Job it may write, and under OpenShift's restricted-v2 in
the openshift overlays."""

from __future__ import annotations

import os
import re

import pytest

from packaging_support import (
    ALL_OVERLAYS,
    OPERATION,
    REPO,
    bound_to,
    controller,
    flags,
    grants,
    one,
    port,
    render,
    source_flags,
)

# rocenet-controller's flags as docs/fleet.md names them.
CONTROLLER_FLAGS = frozenset({"--leader-elect", "--leader-election-namespace",
                              "--metrics-bind-address", "--metrics-secure",
                              "--health-probe-bind-address", "--stale-after", "--kubeconfig",
                              "--kube-api-qps", "--kube-api-burst", "-v"})
# What OpenShift's restricted-v2 SCC admits (volumes) and requires.
RESTRICTED_V2_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                         "persistentVolumeClaim", "projected", "secret"}


# --- rocenet-controller -------------------------------------------------------------------

def test_controller_is_unprivileged(any_overlay):
    """rocenet-controller needs no node: no host namespace or path, not
    root, no capability, no privilege escalation, a read-only root, its own
    ServiceAccount with its token."""
    name, docs = any_overlay
    dep = controller(docs)
    spec = dep["spec"]["template"]["spec"]
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        assert not spec.get(key), f"{name}: {key}"
    assert not [v for v in spec.get("volumes", []) if "hostPath" in v]
    assert spec["serviceAccountName"] == "rocenet-controller"
    assert one(docs, "ServiceAccount", "rocenet-controller").get(
        "automountServiceAccountToken", True) is not False, "the controller calls the API"
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert spec["securityContext"].get("runAsUser", 1) != 0
    (c,) = spec["containers"]
    sc = c["securityContext"]
    assert not sc.get("privileged")
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["capabilities"] == {"drop": ["ALL"]}
    assert sc.get("runAsUser", 1) != 0
    for kind in ("requests", "limits"):
        for res in ("cpu", "memory"):
            assert c["resources"][kind].get(res), f"{name}: no {kind}.{res}"
    assert not any(p.get("hostPort") for p in c.get("ports", []))


def test_controller_probes_name_the_ports_its_flags_set(any_overlay):
    """Its probes ask /readyz and /healthz on the named port whose number
    --health-probe-bind-address sets, and the metrics port is the one
    --metrics-bind-address sets; two replicas, one active through the
    Lease in its own namespace (POD_NAMESPACE), which a Role there
    allows."""
    name, docs = any_overlay
    dep = controller(docs)
    (c,) = dep["spec"]["template"]["spec"]["containers"]
    assert c["command"][0] == "/usr/bin/rocenet-controller"
    given = flags(c["command"])
    known = CONTROLLER_FLAGS
    main_go = os.path.join(REPO, "operator", "cmd", "rocenet-controller", "main.go")
    if os.path.exists(main_go):
        known = source_flags("rocenet-controller/main.go")
    assert set(given) <= known, sorted(set(given) - known)
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert ports == {"metrics": port(given["--metrics-bind-address"]),
                     "probes": port(given["--health-probe-bind-address"])}
    for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        get = c[probe]["httpGet"]
        assert get["path"] == path, probe
        assert ports.get(get["port"], get["port"]) == port(given["--health-probe-bind-address"]), \
            f"{name}: {probe} asks port {get['port']}"
    assert given["--leader-elect"] == "true" and dep["spec"]["replicas"] >= 2
    assert "--leader-election-namespace" not in given, "the pod's own namespace"
    assert {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}} \
        in c["env"]
    ns = dep["metadata"]["namespace"]
    leases = [r for r in docs if r["kind"] == "Role" and r["metadata"]["namespace"] == ns
              and ("coordination.k8s.io", "leases", "update") in grants(r)]
    assert len(leases) == 1
    assert f"Role/{leases[0]['metadata']['name']}" in bound_to(docs, ns, "rocenet-controller")
    labels = dep["spec"]["template"]["metadata"]["labels"]
    assert dep["spec"]["selector"]["matchLabels"].items() <= labels.items()
    ds_labels = one(docs, "DaemonSet", "rocenet")["spec"]["selector"]["matchLabels"]
    assert not ds_labels.items() <= labels.items(), "the Service's selector would pick it"


def test_controller_rbac_writes_only_what_it_owns(any_overlay):
    """rocenet-controller reads RocenetNodes, Nodes and pods (a triage's
    job, and a JobSet's metadata: its UID on its pods), and writes across
    the cluster only the RocenetCluster (create, status), the
    RocenetTriages' status, their finalizer (patch) and a finished one's
    deletion (its ttlSecondsAfterFinished), the
    RocenetNodePolicies' finalizer and status, Nodes' status (a stale
    node's condition Unknown, which the node-status policy confines it to),
    a Node's policy label (the node-policy label policy confines it), the
    reviews that guard its metrics, and what it makes at run time for the
    node side (the admission policies and their bindings, DRA's
    DeviceClass, OpenShift's SCC: create and patch, server-side apply, no
    delete), reading every DaemonSet for the triage pod policy whose
    parameters they are: no Secret, no Event
    outside its namespace, no write of a RocenetNode or a pod. The triage
    runs' Jobs, the pods that hold a node's ports for an invasive stage, a
    run pod's deadline (patch: how a run is stopped) and the kept results
    it writes in its own namespace only, where the triage pod policy admits
    only those shapes; there it reads its node DaemonSets and their pods,
    records the leader's Events, and makes each node policy's
    DaemonSet and ConfigMaps and replaces their pods wave by wave."""
    name, docs = any_overlay
    role = one(docs, "ClusterRole", "rocenet-controller")
    reads = {"get", "list", "watch"}
    writes = {(g, r, v) for g, r, v in grants(role) if v not in reads}
    assert writes == {("rocenet.io", "rocenetclusters", "create"),
                      ("rocenet.io", "rocenetclusters/status", "update"),
                      ("rocenet.io", "rocenetclusters/status", "patch"),
                      ("rocenet.io", "rocenettriages/status", "update"),
                      ("rocenet.io", "rocenettriages/status", "patch"),
                      ("rocenet.io", "rocenettriages", "patch"),
                      ("rocenet.io", "rocenettriages", "delete"),
                      ("", "nodes/status", "patch"),
                      ("rocenet.io", "rocenetnodepolicies", "update"),
                      ("rocenet.io", "rocenetnodepolicies/status", "update"),
                      ("rocenet.io", "rocenetnodepolicies/status", "patch"),
                      ("rocenet.io", "rocenetnodepolicies/finalizers", "update"),
                      # The networks' status, and their attachments in the
                      # namespaces they pick.
                      ("rocenet.io", "rocenetnetworks/status", "update"),
                      ("rocenet.io", "rocenetnetworks/status", "patch"),
                      *(("k8s.cni.cncf.io", "network-attachment-definitions", v)
                        for v in ("create", "patch", "update", "delete")),
                      ("", "nodes", "patch"),
                      ("authentication.k8s.io", "tokenreviews", "create"),
                      ("authorization.k8s.io", "subjectaccessreviews", "create"),
                      *((g, r, v) for g, r in (
                          ("admissionregistration.k8s.io", "validatingadmissionpolicies"),
                          ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"),
                          ("resource.k8s.io", "deviceclasses"),
                          ("security.openshift.io", "securitycontextconstraints"))
                        for v in ("create", "patch"))}, \
        f"{name}: {sorted(writes)}"
    assert {(g, r, v) for g, r, v in grants(role) if r == "daemonsets"} == {
        ("apps", "daemonsets", "get"), ("apps", "daemonsets", "list")}
    assert not {r for _, r, _ in grants(role)} & {"secrets", "configmaps", "pods/log", "jobs",
                                                  "events"}
    assert {(g, r, v) for g, r, v in grants(role) if g == "jobset.x-k8s.io"} == {
        ("jobset.x-k8s.io", "jobsets", "get")}
    leader = one(docs, "Role", "rocenet-controller-leader-election")
    assert {(g, r, v) for g, r, v in grants(leader) if r == "events"} == {
        ("", "events", "create"), ("", "events", "patch")}
    nodes = one(docs, "Role", "rocenet-controller-nodes")
    assert nodes["metadata"]["namespace"] == "rocenet-system"
    assert grants(nodes) == {(g, r, v) for g, r in (("apps", "daemonsets"), ("", "pods"))
                             for v in ("get", "list", "watch")}
    policies = one(docs, "Role", "rocenet-controller-node-policies")
    assert policies["metadata"]["namespace"] == "rocenet-system"
    assert {(g, r, v) for g, r, v in grants(policies) if v not in reads} == {
        ("apps", "daemonsets", "create"), ("apps", "daemonsets", "patch"),
        ("apps", "daemonsets", "delete"), ("", "configmaps", "create"), ("", "configmaps", "patch"),
        ("", "configmaps", "delete"), ("", "configmaps", "deletecollection"),
        ("", "pods", "patch"), ("", "pods", "delete"), ("", "secrets", "create")}
    # Of Secrets, it reads the diagnostics' and the metrics scraper's token
    # alone; of accounts, the scraper's.
    assert [r.get("resourceNames") for r in policies["rules"]
            if "secrets" in r["resources"] and "get" in r["verbs"]] == \
        [["rocenet-diag", "rocenet-metrics-scraper-token"]]
    assert [(r.get("resourceNames"), r["verbs"]) for r in policies["rules"]
            if "serviceaccounts" in r["resources"]] == [(["rocenet-metrics-scraper"], ["get"])]
    triage = one(docs, "Role", "rocenet-controller-triage")
    assert triage["metadata"]["namespace"] == "rocenet-system"
    assert {(g, r, v) for g, r, v in grants(triage) if v not in reads} == {
        ("batch", "jobs", "create"), ("batch", "jobs", "delete"),
        ("", "pods", "create"), ("", "pods", "delete"), ("", "pods", "patch"),
        ("", "configmaps", "create"), ("", "configmaps", "update"),
        ("", "configmaps", "delete")}, name
    assert bound_to(docs, "rocenet-system", "rocenet-controller") == {
        "ClusterRole/rocenet-controller", "Role/rocenet-controller-leader-election",
        "Role/rocenet-controller-triage", "Role/rocenet-controller-nodes",
        "Role/rocenet-controller-node-policies"}


def test_triage_pod_policy_sees_every_pod_and_job_the_controller_may_write(any_overlay):
    """The controller may create and patch pods and create Jobs in
    rocenet's namespace, which admits privileged pods: the triage pod
    policy sees each of those writes by its ServiceAccount, fails closed,
    denies, and takes the DaemonSet the runs copy as its parameter; the
    holders' PriorityClass never preempts."""
    name, docs = any_overlay
    policy = one(docs, "ValidatingAdmissionPolicy", "rocenet-triage-pods.rocenet.io")
    spec = policy["spec"]
    assert spec["failurePolicy"] == "Fail"
    assert spec["paramKind"] == {"apiVersion": "apps/v1", "kind": "DaemonSet"}
    matched = {(group, resource, op) for rule in spec["matchConstraints"]["resourceRules"]
               for group in rule["apiGroups"] for resource in rule["resources"]
               for op in rule["operations"]}
    triage = one(docs, "Role", "rocenet-controller-triage")
    writes = {(g, r, OPERATION[v]) for g, r, v in grants(triage)
              if v in OPERATION and r in ("pods", "jobs") and OPERATION[v] != "DELETE"}
    assert writes and writes <= matched, f"{name}: {sorted(writes - matched)}"
    (condition,) = spec["matchConditions"]
    pattern = re.search(r"matches\('([^']+)'\)", condition["expression"]).group(1)
    assert re.search(pattern, "system:serviceaccount:rocenet-system:rocenet-controller")
    assert not re.search(pattern, "system:serviceaccount:rocenet-system:rocenet")
    binding = one(docs, "ValidatingAdmissionPolicyBinding", policy["metadata"]["name"])
    assert binding["spec"]["validationActions"] == ["Deny"]
    node_labels = {"app.kubernetes.io/name": "rocenet", "app.kubernetes.io/component": "node"}
    assert binding["spec"]["paramRef"] == {"selector": {"matchLabels": node_labels},
                                           "parameterNotFoundAction": "Allow"}
    # The selector picks the node DaemonSets, the one installed from files
    # among them, and no other object of the namespace.
    selector = binding["spec"]["paramRef"]["selector"]["matchLabels"]
    ds = one(docs, "DaemonSet", "rocenet")
    assert selector.items() <= ds["metadata"]["labels"].items()
    assert not selector.items() <= one(docs, "Deployment", "rocenet-controller")["metadata"]["labels"].items()
    # The parameter is looked up before the matchConditions: a binding
    # that matched a namespace without the DaemonSet would refuse every
    # pod made there, by anyone.
    assert binding["spec"]["matchResources"]["namespaceSelector"] == {"matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "In",
         "values": [controller(docs)["metadata"]["namespace"]]}]}, name
    priority = one(docs, "PriorityClass", "rocenet-triage-holder")
    assert priority["preemptionPolicy"] == "Never" and not priority.get("globalDefault")
    command = controller(docs)["spec"]["template"]["spec"]["containers"][0]["command"]
    assert "--triage-priority-class=rocenet-triage-holder" in command


@pytest.mark.parametrize("overlay_name", ["openshift", "openshift-dra"])
def test_openshift_controller_runs_under_restricted_v2(overlay_name):
    """restricted-v2 assigns the UID from the namespace's range and refuses
    a fixed one: the openshift overlays set none (the generic ones keep
    65534), keep everything restricted-v2 requires, use only volumes it
    allows, and ask for it by name. The rocenet SCC is not the
    controller's."""
    docs = render(ALL_OVERLAYS[overlay_name])
    dep = controller(docs)
    template = dep["spec"]["template"]
    spec = template["spec"]
    assert template["metadata"]["annotations"]["openshift.io/required-scc"] == "restricted-v2"
    for sc in [spec["securityContext"]] + [c["securityContext"] for c in spec["containers"]]:
        assert "runAsUser" not in sc and "runAsGroup" not in sc, sc
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    for c in spec["containers"]:
        sc = c["securityContext"]
        assert sc["allowPrivilegeEscalation"] is False and sc["capabilities"] == {"drop": ["ALL"]}
    used = {k for v in spec.get("volumes", []) for k in v if k != "name"}
    assert used <= RESTRICTED_V2_VOLUMES, sorted(used)
    assert "RoleBinding/rocenet-scc" not in {f"RoleBinding/{b['metadata']['name']}" for b in docs
                                             if b["kind"] == "RoleBinding"
                                             and {"kind": "ServiceAccount",
                                                  "name": "rocenet-controller",
                                                  "namespace": "rocenet-system"} in b["subjects"]}
    assert "ClusterRole/rocenet-scc" not in bound_to(docs, "rocenet-system", "rocenet-controller")
    generic = controller(render(ALL_OVERLAYS[overlay_name.replace("openshift", "generic")]))
    assert generic["spec"]["template"]["spec"]["securityContext"]["runAsUser"] == 65534
    # Nothing else differs from the generic overlay's Deployment.
    gspec = generic["spec"]["template"]["spec"]
    assert gspec["containers"] == spec["containers"]
    for key in set(gspec) | set(spec):
        if key != "securityContext":
            assert gspec.get(key) == spec.get(key), key


# --- its metrics, as the alerts expect them -------------------------------------------------

@pytest.mark.parametrize("overlay_name", ["openshift", "openshift-dra"])
def test_controller_metrics_are_scraped_as_the_alerts_read_them(overlay_name):
    """The controller's ServiceMonitor selects its Service, which selects
    the controller's pods on the port its --metrics-bind-address serves;
    the scrape is HTTPS with the token Secret the controller keeps for
    rocenet-metrics-scraper, an account allowed /metrics; and the
    Service's name is the job RocenetControllerDown reads."""
    docs = render(ALL_OVERLAYS[overlay_name])
    monitor = one(docs, "ServiceMonitor", "rocenet-controller")
    service = one(docs, "Service", "rocenet-controller-metrics")
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert monitor["spec"]["namespaceSelector"]["matchNames"] == [service["metadata"]["namespace"]]
    pod = controller(docs)["spec"]["template"]
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    (endpoint,) = monitor["spec"]["endpoints"]
    (svc_port,) = [p for p in service["spec"]["ports"] if p["name"] == endpoint["port"]]
    (container,) = pod["spec"]["containers"]
    (cport,) = [p for p in container["ports"] if p["name"] == svc_port["targetPort"]]
    assert f":{cport['containerPort']}" == flags(container["command"])["--metrics-bind-address"]
    assert endpoint["scheme"] == "https"
    secret = endpoint["authorization"]["credentials"]
    with open(os.path.join(REPO, "operator", "internal", "controller", "diagsecret.go")) as f:
        source = f.read()
    assert f'MetricsScraperSecret  = "{secret["name"]}"' in source and secret["key"] == "token"
    assert 'MetricsScraperAccount = "rocenet-metrics-scraper"' in source
    account = one(docs, "ServiceAccount", "rocenet-metrics-scraper")
    roles = [one(docs, *role.split("/")) for role in
             bound_to(docs, account["metadata"]["namespace"], account["metadata"]["name"])]
    assert any("/metrics" in rule.get("nonResourceURLs", []) and "get" in rule["verbs"]
               for role in roles for rule in role["rules"]), "rocenet-metrics-scraper may not get /metrics"
    with open(os.path.join(REPO, "packaging", "prometheus", "rocenet-rules.yaml")) as f:
        rules = f.read()
    assert f'up{{job="{service["metadata"]["name"]}"}}' in rules
