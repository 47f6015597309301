# SPDX-License-Identifier: Apache-2.0
"""Packaging, the fleet (docs/fleet.md) as every overlay installs it: the
CRDs of rocenet.io as controller-gen writes them; the node reporter in the
DaemonSet with nothing but what it needs (no capability, its API token and
the NFD directory read-only, the validation file rocenet-diagd writes);
an API token in no container but the reporter's and the DRA plugin's; the
reporter's ClusterRole exactly the narrow one, and the
ValidatingAdmissionPolicy over every write that role allows;
no namespace on a cluster-scoped object. rocenet-controller is
packaging_controller_test.py's; that the Helm chart makes the same
objects, packaging_helm_fleet_test.py's."""

from __future__ import annotations

import glob
import os
import re

import yaml

from packaging_support import (
    ALL_OVERLAYS,
    CRD_NAMES,
    CRDS,
    K8S,
    NODE_POLICY_LABEL_POLICY,
    NODE_SIDES,
    NODE_STATUS_POLICY,
    OPERATION,
    REPORTER_POLICY,
    RESOURCESLICE_POLICY,
    bound_to,
    containers,
    flags,
    grants,
    one,
    render,
    rocenetd_config,
    source_flags,
    volumes,
)

# A triage is asked for in a namespace; the others are the cluster's.
NAMESPACED_CRDS = {"rocenettriages.rocenet.io"}
# Kinds without a namespace: kustomize does not know all of them
# (base/cluster-scoped/, node/base/cluster-scoped/).
CLUSTER_SCOPED = {"Namespace", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding",
                  "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
                  "SecurityContextConstraints", "DeviceClass", "PriorityClass", "RocenetNodePolicy"}
# The node reporter's ClusterRole, exactly (docs/fleet.md#who-may-write):
# (API group, resource, verb).
REPORTER_GRANTS = {("", "nodes", "get"), ("", "nodes", "list"), ("", "nodes", "watch"),
                   ("", "nodes/status", "patch"),
                   ("rocenet.io", "rocenetnodes", "get"), ("rocenet.io", "rocenetnodes", "create"),
                   # Its own, when its node leaves its node policy.
                   ("rocenet.io", "rocenetnodes", "delete"),
                   ("rocenet.io", "rocenetnodes/status", "update")}
# The containers that call the Kubernetes API, and so mount a token.
TOKEN_CONTAINERS = {"node-reporter", "dra-plugin"}
TOKEN_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


# --- cluster-scoped objects and the CRDs ---------------------------------------------

def test_cluster_scoped_objects_have_no_namespace(any_overlay):
    """Kustomize sets the base's namespace on every kind it does not know
    to be cluster-scoped, ValidatingAdmissionPolicy and its binding and the
    RocenetNodePolicy among them; the cluster-scoped/ transformers take it
    off. Every namespaced object is in the DaemonSet's namespace."""
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
    do: list base/cluster-scoped under `transformers` too; the node side's
    admission policies, which rocenet-controller makes, stay cluster-scoped
    by its own base's."""
    (tmp_path / "kustomization.yaml").write_text(
        "namespace: fabric\n"
        f"resources:\n  - {os.path.relpath(ALL_OVERLAYS['generic'], tmp_path)}\n"
        f"transformers:\n  - {os.path.relpath(os.path.join(K8S, 'base', 'cluster-scoped'), tmp_path)}\n")
    docs = render(str(tmp_path))
    assert "namespace" not in one(docs, "RocenetNodePolicy", "gaudi")["metadata"]
    assert one(docs, "Deployment", "rocenet-controller")["metadata"]["namespace"] == "fabric"
    node_side = render(NODE_SIDES["generic"])
    for kind in ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"):
        found = [d for d in node_side if d["kind"] == kind]
        assert found and all("namespace" not in d["metadata"] for d in found), kind
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
