# SPDX-License-Identifier: Apache-2.0
"""Packaging, the fleet (docs/fleet.md) as every overlay installs it: the
CRDs of rocenet.io as controller-gen writes them; the node reporter in the
DaemonSet with nothing but what it needs (no capability, its API token and
the NFD directory read-only, the validation file rocenet-diagd writes);
an API token in no container but the reporter's and the DRA plugin's; the
reporter's ClusterRole exactly the narrow one, and the
ValidatingAdmissionPolicy over every write that role allows;
rocenet-controller unprivileged, its probes on the ports its flags set,
under OpenShift's restricted-v2 in the openshift overlays; no namespace on
a cluster-scoped object. That the Helm chart makes the same objects is
packaging_helm_fleet_test.py's."""

from __future__ import annotations

import glob
import os
import re

import pytest
import yaml

from packaging_support import (
    ALL_OVERLAYS,
    CRD_NAMES,
    CRDS,
    K8S,
    NODE_POLICY_LABEL_POLICY,
    NODE_STATUS_POLICY,
    REPO,
    REPORTER_POLICY,
    RESOURCESLICE_POLICY,
    bound_to,
    containers,
    controller,
    flags,
    one,
    render,
    rocenetd_config,
    volumes,
)

# A triage is asked for in a namespace; the others are the cluster's.
NAMESPACED_CRDS = {"rocenettriages.rocenet.io"}
# Kinds without a namespace: kustomize does not know all of them
# (base/cluster-scoped/).
CLUSTER_SCOPED = {"Namespace", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding",
                  "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
                  "SecurityContextConstraints", "DeviceClass", "PriorityClass"}
# The node reporter's ClusterRole, exactly (docs/fleet.md#who-may-write):
# (API group, resource, verb).
REPORTER_GRANTS = {("", "nodes", "get"), ("", "nodes", "list"), ("", "nodes", "watch"),
                   ("", "nodes/status", "patch"),
                   ("rocenet.io", "rocenetnodes", "get"), ("rocenet.io", "rocenetnodes", "create"),
                   # Its own, when its node leaves its node policy.
                   ("rocenet.io", "rocenetnodes", "delete"),
                   ("rocenet.io", "rocenetnodes/status", "update")}
# The admission operation each write verb is checked under.
OPERATION = {"create": "CREATE", "update": "UPDATE", "patch": "UPDATE", "delete": "DELETE"}
# The containers that call the Kubernetes API, and so mount a token.
TOKEN_CONTAINERS = {"node-reporter", "dra-plugin"}
TOKEN_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
# rocenet-controller's flags as docs/fleet.md names them.
CONTROLLER_FLAGS = frozenset({"--leader-elect", "--leader-election-namespace",
                              "--metrics-bind-address", "--metrics-secure",
                              "--health-probe-bind-address", "--stale-after", "--kubeconfig",
                              "--kube-api-qps", "--kube-api-burst", "-v"})
# What OpenShift's restricted-v2 SCC admits (volumes) and requires.
RESTRICTED_V2_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                         "persistentVolumeClaim", "projected", "secret"}


@pytest.fixture(scope="module", params=sorted(ALL_OVERLAYS))
def any_overlay(request):
    return request.param, render(ALL_OVERLAYS[request.param])


def source_flags(main_go: str) -> set[str]:
    """The flags a Go program's main.go defines on its FlagSet."""
    for top in ("operator", os.path.join("plugins", "reporter")):
        path = os.path.join(REPO, top, "cmd", main_go)
        if os.path.exists(path):
            break
    with open(path) as f:
        source = f.read()
    names = re.findall(r'fs\.\w*Var\(&?[^,]+, "([a-z-]+)"', source)
    names += re.findall(r'fs\.(?:Bool|String|Duration|Int|Var)\([^"]*"([a-z-]+)"', source)
    return {("-" if len(n) == 1 else "--") + n for n in names}


def grants(role: dict) -> set[tuple[str, str, str]]:
    """A role's rules as (API group, resource, verb), each rule checked to
    name no resourceNames, non-resource URL or wildcard."""
    out = set()
    for rule in role["rules"]:
        assert not rule.get("nonResourceURLs"), rule
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                for verb in rule["verbs"]:
                    assert "*" not in (group, resource, verb), f"{role['metadata']['name']}: {rule}"
                    out.add((group, resource, verb))
    return out


def port(address: str) -> int:
    return int(address.rsplit(":", 1)[1])


# --- cluster-scoped objects and the CRDs ---------------------------------------------

def test_cluster_scoped_objects_have_no_namespace(any_overlay):
    """Kustomize sets the base's namespace on every kind it does not know
    to be cluster-scoped, ValidatingAdmissionPolicy and its binding among
    them; base/cluster-scoped/ takes it off. Every namespaced object is in
    the DaemonSet's namespace."""
    name, docs = any_overlay
    for d in docs:
        ns = d["metadata"].get("namespace")
        if d["kind"] in CLUSTER_SCOPED:
            assert ns is None, f"{name}: {d['kind']} {d['metadata']['name']} has namespace {ns}"
        else:
            assert ns == "rocenet-system", f"{name}: {d['kind']} {d['metadata']['name']}: {ns}"
    assert {"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} <= \
        {d["kind"] for d in docs}


def test_an_overlay_with_its_own_namespace_keeps_the_policy_cluster_scoped(tmp_path):
    """What the base's comment tells an overlay that sets `namespace:` to
    do: list base/cluster-scoped under `transformers` too."""
    (tmp_path / "kustomization.yaml").write_text(
        "namespace: fabric\n"
        f"resources:\n  - {os.path.relpath(ALL_OVERLAYS['generic'], tmp_path)}\n"
        f"transformers:\n  - {os.path.relpath(os.path.join(K8S, 'base', 'cluster-scoped'), tmp_path)}\n")
    docs = render(str(tmp_path))
    for kind in ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"):
        found = [d for d in docs if d["kind"] == kind]
        assert found and all("namespace" not in d["metadata"] for d in found), kind
    assert one(docs, "DaemonSet", "rocenet")["metadata"]["namespace"] == "fabric"
    subjects = one(docs, "ClusterRoleBinding", "rocenet-node-reporter")["subjects"]
    assert subjects == [{"kind": "ServiceAccount", "name": "rocenet", "namespace": "fabric"}]


def test_every_overlay_installs_the_crds(any_overlay):
    """The CRDs as controller-gen wrote them into base/crds (kustomize adds
    only the part-of label): RocenetNode, RocenetCluster and
    RocenetNodePolicy cluster-scoped, RocenetTriage namespaced."""
    name, docs = any_overlay
    crds = {d["metadata"]["name"]: d for d in docs if d["kind"] == "CustomResourceDefinition"}
    assert set(crds) == CRD_NAMES, f"{name}: {sorted(crds)}"
    files = sorted(glob.glob(os.path.join(CRDS, "*.yaml")))
    assert len(files) == len(CRD_NAMES)
    for path in files:
        with open(path) as f:
            want = yaml.safe_load(f)
        got = crds[want["metadata"]["name"]]
        assert got["spec"] == want["spec"], f"{name}: {path}"
        scope = "Namespaced" if want["metadata"]["name"] in NAMESPACED_CRDS else "Cluster"
        assert got["spec"]["scope"] == scope, path
        assert got["metadata"]["labels"] == {"app.kubernetes.io/part-of": "rocenet"}


# --- the node reporter ------------------------------------------------------------------

def test_node_reporter_container(any_overlay):
    """rocenet-node-reporter beside rocenetd: no capability, not
    privileged; rocenetd's socket, the NFD directory read-only, and its
    token read-only where client-go looks; its --validation-file the one
    rocenet-diagd writes, its node from the downward API; no flag the
    program does not define."""
    name, docs = any_overlay
    ds = one(docs, "DaemonSet", "rocenet")
    cs = containers(ds)
    c = cs["node-reporter"]
    assert c["image"] == cs["rocenetd"]["image"], "one image for every container"
    assert c["command"][0] == "/usr/bin/rocenet-node-reporter"
    given = flags(c["command"])
    assert set(given) <= source_flags("rocenet-node-reporter/main.go"), sorted(given)
    config = yaml.safe_load(rocenetd_config(docs)["data"]["config.yaml"])
    assert given["--daemon-socket"] == config["socket"]
    diagd_file = flags(cs["diagd"]["command"])["--validation-file"]
    assert given["--validation-file"] == diagd_file
    assert {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}} \
        in c["env"]
    assert "--node-name" not in given

    sc = c["securityContext"]
    assert sc["privileged"] is False and sc["allowPrivilegeEscalation"] is False
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["capabilities"] == {"drop": ["ALL"]}, "the reporter adds no capability"

    vols = volumes(ds)
    got = {m["mountPath"]: m for m in c["volumeMounts"]}
    nfd = os.path.dirname(diagd_file)
    socket_dir = os.path.dirname(config["socket"])
    assert set(got) == {socket_dir, nfd, TOKEN_DIR}, sorted(got)
    assert got[nfd]["readOnly"] is True, "the reporter reads diagd's file, writes none"
    assert got[socket_dir]["readOnly"] is True, "the reporter dials rocenetd's socket, writes none"
    assert vols[got[nfd]["name"]]["hostPath"]["path"] == nfd
    assert vols[got[socket_dir]["name"]]["hostPath"]["path"] == socket_dir
    assert got[TOKEN_DIR]["readOnly"] is True
    assert "serviceAccountToken" in str(vols[got[TOKEN_DIR]["name"]]["projected"])
    for m in got.values():
        assert "subPath" not in m, "a subPath mount never sees a refreshed token"


def test_api_token_only_where_the_api_is_called(any_overlay):
    """No token in the pod by default (the pod and the ServiceAccount both
    say so); the projected one, bound to the pod and refreshed by kubelet,
    is mounted by the node reporter and the DRA plugin alone. One volume of
    each name."""
    name, docs = any_overlay
    ds = one(docs, "DaemonSet", "rocenet")
    spec = ds["spec"]["template"]["spec"]
    assert spec["automountServiceAccountToken"] is False
    sa = one(docs, "ServiceAccount", spec["serviceAccountName"])
    assert sa["automountServiceAccountToken"] is False
    names = [v["name"] for v in spec["volumes"]]
    assert len(names) == len(set(names)), f"{name}: a volume name twice: {names}"
    tokens = {v["name"]: v for v in spec["volumes"]
              if any("serviceAccountToken" in s for s in v.get("projected", {}).get("sources", []))}
    assert list(tokens) == ["api-token"], f"{name}: {sorted(tokens)}"
    (source,) = [s["serviceAccountToken"] for s in tokens["api-token"]["projected"]["sources"]
                 if "serviceAccountToken" in s]
    assert source["expirationSeconds"] <= 3600
    assert "audience" not in source, "the API server's own audience"
    mounting = {c["name"] for c in containers(ds).values()
                if any(m["name"] in tokens for m in c.get("volumeMounts", []))}
    want = TOKEN_CONTAINERS & set(containers(ds))
    assert mounting == want, f"{name}: the token is mounted by {sorted(mounting)}"
    assert "node-reporter" in want and ("dra-plugin" in want) == name.endswith("-dra")


def test_node_reporter_rbac_is_the_narrow_one(any_overlay):
    """The reporter's ClusterRole grants exactly get, list and watch nodes
    (its own, by field selector), patch nodes/status, get and create
    rocenetnodes, update rocenetnodes/status,
    to the DaemonSet's ServiceAccount; nothing else is bound to that
    account but the DRA plugin's role (with the DRA component) and the SCC's
    (OpenShift)."""
    name, docs = any_overlay
    role = one(docs, "ClusterRole", "rocenet-node-reporter")
    assert grants(role) == REPORTER_GRANTS, f"{name}: {sorted(grants(role))}"
    for rule in role["rules"]:
        assert not rule.get("resourceNames"), rule
    ds = one(docs, "DaemonSet", "rocenet")
    ns, sa = ds["metadata"]["namespace"], ds["spec"]["template"]["spec"]["serviceAccountName"]
    binding = one(docs, "ClusterRoleBinding", "rocenet-node-reporter")
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                  "name": "rocenet-node-reporter"}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": sa, "namespace": ns}]
    allowed = {"ClusterRole/rocenet-node-reporter"}
    if name.endswith("-dra"):
        allowed.add("ClusterRole/rocenet-dra-plugin")
    if name.startswith("openshift"):
        allowed.add("ClusterRole/rocenet-scc")
    assert bound_to(docs, ns, sa) == allowed, f"{name}: {sorted(bound_to(docs, ns, sa))}"


def test_node_reporter_policy_checks_every_write_the_role_allows(any_overlay):
    """Every write the reporter's ClusterRole allows (nodes/status,
    rocenetnodes and their status) is matched by the
    ValidatingAdmissionPolicy, as are deletes of RocenetNodes; it applies to
    the DaemonSet's ServiceAccount in any namespace and no other account,
    fails closed, compares the object's name with the node in the token,
    and its binding denies."""
    name, docs = any_overlay
    policy = one(docs, "ValidatingAdmissionPolicy", REPORTER_POLICY)
    spec = policy["spec"]
    assert spec["failurePolicy"] == "Fail"
    matched = {(group, resource, op) for rule in spec["matchConstraints"]["resourceRules"]
               for group in rule["apiGroups"] for resource in rule["resources"]
               for op in rule["operations"]}
    writes = {(g, r, OPERATION[v]) for g, r, v in grants(one(docs, "ClusterRole",
                                                             "rocenet-node-reporter"))
              if v in OPERATION}
    assert writes == {("", "nodes/status", "UPDATE"), ("rocenet.io", "rocenetnodes", "CREATE"),
                      ("rocenet.io", "rocenetnodes", "DELETE"),
                      ("rocenet.io", "rocenetnodes/status", "UPDATE")}
    assert writes <= matched, f"{name}: writes the policy does not see: {sorted(writes - matched)}"
    (condition,) = spec["matchConditions"]
    pattern = re.search(r"matches\('([^']+)'\)", condition["expression"]).group(1)
    sa = one(docs, "DaemonSet", "rocenet")["spec"]["template"]["spec"]["serviceAccountName"]
    for user, confined in ((f"system:serviceaccount:rocenet-system:{sa}", True),
                           (f"system:serviceaccount:elsewhere:{sa}", True),
                           ("system:serviceaccount:rocenet-system:rocenet-controller", False),
                           (f"system:serviceaccount:rocenet-system:{sa}-x", False),
                           ("system:node:node-a", False)):
        assert bool(re.search(pattern, user)) == confined, f"{name}: {user}"
    expressions = " ".join(v["expression"] for v in spec["variables"] + spec["validations"])
    assert "authentication.kubernetes.io/node-name" in expressions
    assert "request.name == variables.node" in expressions
    binding = one(docs, "ValidatingAdmissionPolicyBinding", REPORTER_POLICY)
    assert binding["spec"]["policyName"] == policy["metadata"]["name"]
    assert binding["spec"]["validationActions"] == ["Deny"]
    assert not binding["spec"].get("matchResources"), "it holds in every namespace"


def test_node_status_policy_checks_every_nodes_status_write(any_overlay):
    """Every nodes/status write the reporter's and the controller's roles
    allow is matched by the node-status policy, which applies to both
    accounts (and no other), fails closed and denies; its allow-list is
    what plugins/reporter's tests prove on a real API server."""
    name, docs = any_overlay
    policy = one(docs, "ValidatingAdmissionPolicy", NODE_STATUS_POLICY)
    spec = policy["spec"]
    assert spec["failurePolicy"] == "Fail"
    matched = {(group, resource, op) for rule in spec["matchConstraints"]["resourceRules"]
               for group in rule["apiGroups"] for resource in rule["resources"]
               for op in rule["operations"]}
    for role in ("rocenet-node-reporter", "rocenet-controller"):
        writes = {(g, r, OPERATION[v]) for g, r, v in grants(one(docs, "ClusterRole", role))
                  if v in OPERATION and r == "nodes/status"}
        assert writes == {("", "nodes/status", "UPDATE")}, f"{name}: {role}: {sorted(writes)}"
        assert writes <= matched
    (condition,) = spec["matchConditions"]
    pattern = re.search(r"matches\('([^']+)'\)", condition["expression"]).group(1)
    for user, confined in (("system:serviceaccount:rocenet-system:rocenet", True),
                           ("system:serviceaccount:rocenet-system:rocenet-controller", True),
                           ("system:serviceaccount:elsewhere:rocenet-controller", True),
                           ("system:serviceaccount:rocenet-system:rocenet-controller-x", False),
                           ("system:node:node-a", False)):
        assert bool(re.search(pattern, user)) == confined, f"{name}: {user}"
    binding = one(docs, "ValidatingAdmissionPolicyBinding", NODE_STATUS_POLICY)
    assert binding["spec"] == {"policyName": NODE_STATUS_POLICY, "validationActions": ["Deny"]}


def test_node_policy_label_policy_checks_every_node_write(any_overlay):
    """Of a Node, the controller's role may patch the object (the label
    rocenet.io/node-policy, which records the policy that holds the node),
    the reporter's nothing; every such write is matched by the node-policy
    label policy, which applies to the controller's account alone, fails
    closed and denies; what it admits is proven on a real API server
    (operator/internal/controller, TestEnvtestNodePoliciesRunAsShipped)."""
    name, docs = any_overlay
    policy = one(docs, "ValidatingAdmissionPolicy", NODE_POLICY_LABEL_POLICY)
    spec = policy["spec"]
    assert spec["failurePolicy"] == "Fail"
    matched = {(group, resource, op) for rule in spec["matchConstraints"]["resourceRules"]
               for group in rule["apiGroups"] for resource in rule["resources"]
               for op in rule["operations"]}
    writes = {(g, r, OPERATION[v]) for g, r, v in grants(one(docs, "ClusterRole", "rocenet-controller"))
              if v in OPERATION and r == "nodes"}
    assert writes == {("", "nodes", "UPDATE")}, f"{name}: {sorted(writes)}"
    assert writes <= matched
    assert not {r for g, r, v in grants(one(docs, "ClusterRole", "rocenet-node-reporter"))
                if v in OPERATION and r == "nodes"}
    (condition,) = spec["matchConditions"]
    pattern = re.search(r"matches\('([^']+)'\)", condition["expression"]).group(1)
    for user, confined in (("system:serviceaccount:rocenet-system:rocenet-controller", True),
                           ("system:serviceaccount:elsewhere:rocenet-controller", True),
                           ("system:serviceaccount:rocenet-system:rocenet", False),
                           ("system:serviceaccount:rocenet-system:rocenet-controller-x", False)):
        assert bool(re.search(pattern, user)) == confined, f"{name}: {user}"
    binding = one(docs, "ValidatingAdmissionPolicyBinding", NODE_POLICY_LABEL_POLICY)
    assert binding["spec"] == {"policyName": NODE_POLICY_LABEL_POLICY, "validationActions": ["Deny"]}


def test_dra_overlays_confine_resourceslices(any_overlay):
    """With the DRA component, the DaemonSet's account (the DRA plugin's and
    the reporter's) may write ResourceSlices, never a collection of them,
    and every write RBAC allows is matched by the ResourceSlice policy,
    keyed on the token's node and rocenet's driver; without it, neither
    the role nor the policy is there."""
    name, docs = any_overlay
    if not name.endswith("-dra"):
        assert not [d for d in docs if d["metadata"]["name"] in
                    ("rocenet-dra-plugin", RESOURCESLICE_POLICY)], name
        return
    role = grants(one(docs, "ClusterRole", "rocenet-dra-plugin"))
    assert ("resource.k8s.io", "resourceslices", "deletecollection") not in role
    writes = {(g, r, OPERATION[v]) for g, r, v in role if v in OPERATION and r == "resourceslices"}
    policy = one(docs, "ValidatingAdmissionPolicy", RESOURCESLICE_POLICY)
    spec = policy["spec"]
    matched = {(group, resource, op) for rule in spec["matchConstraints"]["resourceRules"]
               for group in rule["apiGroups"] for resource in rule["resources"]
               for op in rule["operations"]}
    assert writes and writes <= matched, f"{name}: {sorted(writes - matched)}"
    assert spec["failurePolicy"] == "Fail"
    expressions = " ".join(v["expression"] for v in spec["variables"] + spec["validations"])
    assert "authentication.kubernetes.io/node-name" in expressions
    assert "'rocenet.io'" in expressions
    binding = one(docs, "ValidatingAdmissionPolicyBinding", RESOURCESLICE_POLICY)
    assert binding["spec"] == {"policyName": RESOURCESLICE_POLICY, "validationActions": ["Deny"]}


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
    job), and writes across the cluster only the RocenetCluster (create,
    status), the RocenetTriages' status, their finalizer (patch) and a
    finished one's deletion (its ttlSecondsAfterFinished), the
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
        ("", "configmaps", "delete"), ("", "configmaps", "deletecollection"), ("", "pods", "delete"),
        ("", "secrets", "create")}
    # Of Secrets, it reads the diagnostics' alone.
    assert [r.get("resourceNames") for r in policies["rules"]
            if "secrets" in r["resources"] and "get" in r["verbs"]] == [["rocenet-diag"]]
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
