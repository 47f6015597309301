# SPDX-License-Identifier: Apache-2.0
"""rocenet installed by its operator on a real Kubernetes node: only
rocenet-controller runs until a RocenetNodePolicy asks for rocenet on the
node, and everything after is the policy's, checked as an admin would
check it with kubectl and `ip`.

The cluster and the fabric are e2e_test.py's (tests/k8s/e2e_support.py);
rocenet is installed as OLM installs the operator bundle
(packaging/olm/make-bundle.py, tests/k8s/olm_install.py): the operator,
its CRDs and RBAC, nothing of the node side, which the operator makes.
The tests run in the file's order on one cluster and build on each
other (the module is `ordered`): the example policy comes up and serves a
pod, an SRE reads rocenet through the cluster's view role and triages
through edit, Prometheus's account scrapes the controller and no other
does, a bad value is refused at apply, a new MTU reaches every port
through the rollout, a change that breaks the node rolls back by itself,
an overlapping policy is refused for the node it would share, and the
policy deleted leaves nothing of rocenet on the node.
"""

from __future__ import annotations

import base64
import glob
import json
import os
import re
import subprocess
import time

import olm_install
import pytest
import yaml

import controller_metrics
from e2e_support import IMAGE, PORTS, ROOT, Serving, deployed, operator_on_the_test_cluster, wait
from testcluster import TEST_IMAGE

pytestmark = pytest.mark.ordered

NS = "rocenet-system"
EXAMPLE = os.path.join(ROOT, "packaging", "kubernetes", "base", "node-policy.yaml")
# What rocenet writes on the node (the DaemonSet's hostPaths).
NFD_FEATURES = "/etc/kubernetes/node-feature-discovery/features.d"
STATE_DIR = "/var/lib/rocenet"
GAUDINET = "/etc/habanalabs/gaudinet.json"
NM_DROP_IN = "/etc/NetworkManager/conf.d/90-rocenet.conf"
CNI_PLUGIN = "/opt/cni/bin/rocenet"


def _patch(e, kustomization: dict) -> None:
    """What OLM installs from the bundle, on the test cluster (the image
    rewritten as a mirror does, for relatedImages too). No diagnostics'
    Secret: the operator makes it."""
    operator_on_the_test_cluster(e, kustomization)
    kustomization["patches"].append(
        {"target": {"kind": "Deployment", "name": "rocenet-controller"}, "patch": json.dumps({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "rocenet-controller"},
            "spec": {"template": {"spec": {"containers": [{"name": "controller", "env": [
                {"name": "RELATED_IMAGE_ROCENET", "value": IMAGE}]}]}}}})})


@pytest.fixture(scope="module")
def env(artifacts, say, took, tmp_path_factory):
    work = tmp_path_factory.mktemp("olm")
    bundle = olm_install.build_bundle(ROOT, os.path.join(artifacts.bin_dir, "kubectl"), str(work / "bundle"))
    installed = olm_install.write_kustomization(bundle, str(work / "installed"))
    took("the operator bundle built")
    with deployed(artifacts, installed, say, took, patch=_patch) as e:
        yield e


def _policy(env, name: str = "gaudi") -> dict:
    return env.json("get", "rocenetnodepolicy", name)


def _condition(policy: dict, kind: str) -> dict:
    for c in policy.get("status", {}).get("conditions", []):
        if c["type"] == kind:
            return c
    return {}


def _current(policy: dict) -> bool:
    return policy.get("status", {}).get("observedGeneration") == policy["metadata"]["generation"]


def _ready(env, name: str = "gaudi") -> dict | None:
    p = _policy(env, name)
    return p if _current(p) and _condition(p, "Ready").get("status") == "True" else None


def _node_pods(env) -> list[dict]:
    listed = env.json("-n", NS, "get", "pods", "-l", "rocenet.io/node-policy=gaudi")["items"]
    return [p for p in listed if not p["metadata"].get("deletionTimestamp")]


def _pod_ready(pod: dict) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True"
               for c in pod.get("status", {}).get("conditions", []))


def _rocectl(env, *args: str) -> str:
    return env.kubectl("-n", NS, "exec", "ds/rocenet-gaudi", "-c", "rocenetd", "--",
                       "rocectl", *args).stdout


def _links(env) -> dict[str, dict]:
    out = subprocess.run(["ip", "-n", env.fab.node_netns, "-j", "addr", "show"],
                         capture_output=True, text=True, check=True).stdout
    return {link["ifname"]: link for link in json.loads(out)}


def _fabric_addresses(env) -> dict[str, list[str]]:
    """The node's ports that hold a fabric address (10.200.0.0/16)."""
    return {name: [a["local"] for a in link.get("addr_info", []) if a["local"].startswith("10.200.")]
            for name, link in _links(env).items()
            if any(a["local"].startswith("10.200.") for a in link.get("addr_info", []))}


def _node(env) -> dict:
    return env.json("get", "node", env.cluster.node)


def _made_by_the_operator(env) -> list[str]:
    """The admission policies and bindings whose fields the operator owns."""
    made = []
    for kind in ("validatingadmissionpolicies", "validatingadmissionpolicybindings"):
        for o in env.json("get", kind, "--show-managed-fields")["items"]:
            if any(f["manager"] == "rocenet-operator" for f in o["metadata"].get("managedFields", [])):
                made.append(f"{kind}/{o['metadata']['name']}")
    return sorted(made)


def test_only_the_operator_runs_until_the_example_policy_brings_rocenet_up(env, say):
    assert env.json("-n", NS, "get", "daemonsets")["items"] == []
    env.kubectl("-n", NS, "rollout", "status", "deployment/rocenet-controller", "--timeout=120s")
    # What no bundle carries, applied by no one: the operator made it.
    made = wait("the admission policies made by the operator", lambda: (
        lambda m: m if len(m) == 10 else None)(_made_by_the_operator(env)), 60)
    assert "validatingadmissionpolicies/rocenet-node-reporter.rocenet.io" in made, made
    started = time.monotonic()
    env.kubectl("apply", "-f", EXAMPLE)
    policy = wait("the example policy Ready", lambda: _ready(env), 180)
    say(f"policy: the example policy Ready {time.monotonic() - started:.0f} s after its apply")
    status = policy["status"]
    assert (status["matchedNodes"], status["updatedNodes"], status["readyNodes"]) == (1, 1, 1), status
    assert _condition(policy, "Degraded")["status"] == "False", policy
    node = _node(env)
    assert node["metadata"]["labels"]["rocenet.io/node-policy"] == "gaudi"
    ds = env.json("-n", NS, "get", "ds", "rocenet-gaudi")
    assert ds["metadata"]["ownerReferences"][0]["kind"] == "RocenetNodePolicy"
    # The diagnostics' Secret, which no one applied: the operator made it.
    secret = env.json("-n", NS, "get", "secret", "rocenet-diag")
    assert secret["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "rocenet-operator"
    # A change's new pod starts beside the old one, held until the
    # operator's wave lets it run.
    strategy = ds["spec"]["updateStrategy"]
    assert (strategy["type"], strategy["rollingUpdate"]["maxSurge"]) == ("RollingUpdate", "100%"), strategy
    assert ds["spec"]["template"]["spec"]["schedulingGates"] == [{"name": "rocenet.io/rollout"}]
    assert "4/4" in wait("rocectl health", lambda: (
        lambda out: out if "4/4" in out else None)(_rocectl(env, "health")), 60)
    assert wait("allocatable", lambda: env.allocatable() == PORTS, 60)
    # The example's MTU on every port rocenet addressed.
    addressed = wait("the ports addressed", lambda: (
        lambda a: a if len(a) == PORTS else None)(_fabric_addresses(env)), 60)
    links = _links(env)
    assert {links[name]["mtu"] for name in addressed} == {9000}, addressed
    conditions = {c["type"]: c["status"] for c in node["status"]["conditions"]}
    assert wait("the Node condition", lambda: {
        c["type"]: c["status"] for c in _node(env)["status"]["conditions"]}.get(
            "ScaleOutNetworkReady") == "True", 60), conditions
    # What an admin reads: the printer columns and the described status.
    listed = env.kubectl("get", "rocenetnodepolicies").stdout
    say(f"kubectl get rocenetnodepolicies:\n{listed}")
    assert re.search(r"^gaudi\s+DevicePlugin\s+1\s+1\s+1\s", listed, re.M), listed
    described = env.kubectl("describe", "rnp", "gaudi").stdout
    say("kubectl describe rnp gaudi (its status):\n" + described[described.index("Status:"):])
    assert re.search(r"Type:\s+Ready", described), described


def test_a_pod_gets_a_port_from_the_policys_rocenet(env):
    env.pod("trainer", 1)
    wait("trainer running", lambda: env.phase("trainer") == "Running", 90)
    addresses = env.exec("trainer", "ip", "-4", "-o", "addr", "show", "net1")
    assert "10.200." in addresses, addresses
    env.delete("trainer")
    assert wait("allocatable back", lambda: env.allocatable() == PORTS, 60)


def test_an_sre_reads_rocenet_through_view_and_triages_through_edit(env):
    """Someone without cluster-admin, as the cluster's own roles make them
    (the bundle's ClusterRoles aggregated by the real controller
    manager): bound to view cluster-wide, reads every rocenet object and
    starts no triage; bound to edit in a namespace, starts and deletes
    triages there; no role writes a RocenetNode (its reporter's alone)."""
    env.kubectl("create", "clusterrolebinding", "e2e-sre-view", "--clusterrole=view", "--user=sre")
    env.kubectl("create", "namespace", "e2e-team")
    env.kubectl("-n", "e2e-team", "create", "rolebinding", "e2e-sre-edit", "--clusterrole=edit",
                "--user=sre")

    def can(verb: str, resource: str, namespace: str = "e2e-team") -> bool:
        cp = env.kubectl("auth", "can-i", verb, f"{resource}.rocenet.io", "-n", namespace,
                         "--as=sre", check=False)
        return cp.stdout.strip() == "yes"

    try:
        # Aggregation is the controller manager's: wait for it.
        wait("view to carry rocenet's objects", lambda: can("list", "rocenetnodes", NS), 30)
        for resource in ("rocenetnodes", "rocenetclusters", "rocenetnodepolicies", "rocenettriages"):
            assert can("get", resource, NS) and can("watch", resource, NS), resource
        assert not can("create", "rocenettriages", NS)
        wait("edit to carry the triages", lambda: can("create", "rocenettriages"), 30)
        assert can("delete", "rocenettriages") and not can("update", "rocenetnodes")
        # As the SRE would: read the fleet, start a triage in their namespace.
        assert env.kubectl("get", "rocenetcluster", "cluster", "--as=sre").returncode == 0
        env.kubectl("-n", "e2e-team", "create", "-f", "-", "--as=sre", input=json.dumps({
            "apiVersion": "rocenet.io/v1alpha1", "kind": "RocenetTriage",
            "metadata": {"name": "sre-reach", "namespace": "e2e-team"},
            "spec": {"stage": "reach", "nodes": [env.cluster.node]}}))
        env.kubectl("-n", "e2e-team", "delete", "rocenettriage", "sre-reach", "--as=sre", "--wait=false")
    finally:
        env.kubectl("delete", "namespace", "e2e-team", "--wait=false", check=False)
        env.kubectl("delete", "clusterrolebinding", "e2e-sre-view", check=False)


def test_prometheus_scrapes_the_controller_as_the_shipped_account_alone(env, say):
    """The account the ServiceMonitor scrapes as: the controller keeps its
    token Secret, the real token controller fills it, and that token reads
    the fleet's state; a token of an account without the role is refused."""
    secret = wait("the scraper's token Secret filled", lambda: (
        lambda s: s if s.get("data", {}).get("token") else None)(
        env.json("-n", NS, "get", "secret", "rocenet-metrics-scraper-token")), 120)
    token = base64.b64decode(secret["data"]["token"]).decode()
    scraped = controller_metrics.scrape(env, token)
    assert scraped and all(status == 200 for status, _ in scraped), [s for s, _ in scraped]
    body = scraped[0][1]
    target = re.search(r'^rocenet_cluster_nodes\{state="target"\} (\d+)', body, re.M)
    assert target and int(target.group(1)) == 1, body[:2000]
    assert re.search(r'^rocenet_nodepolicy_nodes\{policy="gaudi",state="matched"\} 1$', body, re.M)
    other = env.kubectl("-n", NS, "create", "token", "rocenet").stdout.strip()
    assert [status for status, _ in controller_metrics.scrape(env, other)] == [403] * len(scraped)
    say(f"metrics: {len(scraped)} controller replica(s) scraped as rocenet-metrics-scraper; "
        f"rocenet_cluster_nodes target {target.group(1)}; another account refused (403)")


def test_a_rocenet_network_reaches_the_namespaces_it_picks_and_serves_a_pod(env, say):
    """A RocenetNetwork, as a platform team makes it: the controller keeps
    its NetworkAttachmentDefinition in the namespace it picks (Multus'
    real CRD), a worker built from `kubectl rocenet network fragment` gets
    its ports through it, and the attachment goes with the network (the
    real garbage collector)."""
    env.kubectl("create", "namespace", "e2e-train")
    env.kubectl("label", "namespace", "e2e-train", "rocenet-e2e=train")
    env.apply({"apiVersion": "rocenet.io/v1alpha1", "kind": "RocenetNetwork",
               "metadata": {"name": "scale-out"},
               "spec": {"namespaceSelector": {"matchLabels": {"rocenet-e2e": "train"}}}})
    try:
        nad = wait("the network's attachment in e2e-train", lambda: (
            lambda cp: json.loads(cp.stdout) if cp.returncode == 0 else None)(
            env.kubectl("-n", "e2e-train", "get", "network-attachment-definitions", "scale-out",
                        "-o", "json", check=False)), 30)
        assert json.loads(nad["spec"]["config"])["type"] == "rocenet", nad
        network = env.json("get", "rocenetnetwork", "scale-out")
        assert network["status"]["namespaceCount"] == 1, network["status"]
        cp = env.rocenet("network", "fragment", "--network", "scale-out", "--gaudis", "1",
                         "--ports-per-gaudi", "2")
        assert cp.returncode == 0, cp.stderr
        fragment = yaml.safe_load(cp.stdout)
        # This cluster has no Gaudi (no habana.ai/gaudi): the ports' part.
        limits = fragment["spec"]["containers"][0]["resources"]["limits"]
        assert limits.pop("habana.ai/gaudi") == 1 and limits == {"rocenet.io/scale-out-port": 2}, limits
        env.apply({"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": "worker", "namespace": "e2e-train", **fragment["metadata"]},
                   "spec": {"terminationGracePeriodSeconds": 1, "containers": [{
                       "name": "main", "image": TEST_IMAGE, "command": ["sleep", "3600"],
                       "resources": {"limits": limits}}]}})
        wait("the worker running", lambda: env.json("-n", "e2e-train", "get", "pod", "worker")
             ["status"].get("phase") == "Running", 90)
        for port in ("net1", "net2"):
            shown = env.kubectl("-n", "e2e-train", "exec", "worker", "--", "ip", "-4", "-o", "addr",
                                "show", port).stdout
            assert "10.200." in shown, (port, shown)
        say("network: RocenetNetwork scale-out in e2e-train, its worker given net1 and net2")
    finally:
        env.kubectl("-n", "e2e-train", "delete", "pod", "worker", "--wait=true", "--timeout=60s",
                    check=False)
        env.kubectl("delete", "rocenetnetwork", "scale-out", check=False)
    wait("the attachment gone with its network", lambda: env.kubectl(
        "-n", "e2e-train", "get", "network-attachment-definitions", "scale-out",
        check=False).returncode != 0, 60)
    env.kubectl("delete", "namespace", "e2e-train", "--wait=false", check=False)


def test_a_bad_value_is_refused_at_apply_with_its_field_named(env):
    with open(EXAMPLE) as f:
        bad = yaml.safe_load(f)
    bad["spec"]["addressing"]["mtu"] = 50
    cp = env.kubectl("apply", "-f", "-", input=json.dumps(bad), check=False)
    assert cp.returncode != 0
    assert "spec.addressing.mtu" in cp.stderr, cp.stderr
    assert _policy(env)["spec"]["addressing"]["mtu"] == 9000


def test_a_new_mtu_reaches_every_port_through_the_rollout(env, say):
    """The node's pod replaced without a gap: the new pod runs beside the
    old one until it is ready, so rocenetd's socket answers throughout,
    kubelet counts every port, and a training pod keeps its port."""
    env.pod("trainer", 1)
    wait("trainer running", lambda: env.phase("trainer") == "Running", 90)
    trainer = env.json("get", "pod", "trainer")["status"]["containerStatuses"][0]
    trainer_net1 = env.exec("trainer", "ip", "-4", "-o", "addr", "show", "net1")
    [before] = _node_pods(env)
    started = time.monotonic()
    with Serving(env) as serving:
        env.kubectl("patch", "rocenetnodepolicy", "gaudi", "--type=merge",
                    "-p", json.dumps({"spec": {"addressing": {"mtu": 4200}}}))
        wait("the policy rolled out", lambda: _ready(env), 180)
        [after] = wait("the node's pod replaced", lambda: (
            lambda pods: pods if len(pods) == 1 and pods[0]["metadata"]["uid"] != before["metadata"]["uid"]
            else None)(_node_pods(env)), 60)
        # Every port left in the host; the trainer's is in its pod.
        assert wait("every port at the new MTU", lambda: (
            lambda links, addressed: {links[n]["mtu"] for n in addressed} == {4200}
            and len(addressed) == PORTS - 1)(_links(env), _fabric_addresses(env)), 90)
    say(f"policy: MTU 9000 -> 4200 on {PORTS - 1} ports in {time.monotonic() - started:.0f} s, "
        f"the node's pod replaced ({before['metadata']['name']} -> {after['metadata']['name']}); "
        f"{serving.summary()}")
    assert serving.served > 100, serving.served
    assert not serving.failures, f"{len(serving.failures)} connections failed: {serving.failures[:5]}"
    assert serving.lowest == PORTS, f"allocatable fell to {serving.lowest} during the rollout"
    now = env.json("get", "pod", "trainer")["status"]["containerStatuses"][0]
    assert (now["containerID"], now["restartCount"]) == (trainer["containerID"], trainer["restartCount"])
    assert env.exec("trainer", "ip", "-4", "-o", "addr", "show", "net1") == trainer_net1
    env.delete("trainer")
    assert wait("allocatable back", lambda: env.allocatable() == PORTS, 60)


def test_a_change_that_breaks_the_node_rolls_back_by_itself(env, say):
    """An image the node cannot pull: the node does not come back within
    the rollout's node timeout, the rollout stops, names the node, and the
    previous revision is the node's again; its pod, beside which the new
    one never got ready, served the node throughout."""
    [before] = _node_pods(env)
    started = time.monotonic()
    env.kubectl("patch", "rocenetnodepolicy", "gaudi", "--type=merge", "-p", json.dumps({"spec": {
        "image": "localhost/rocenet:missing", "rollout": {"nodeTimeout": "30s"}}}))
    policy = wait("the rollout stopped and rolled back", lambda: (
        lambda p: p if _current(p) and (p["status"].get("rolloutFailure") or {}).get("rolledBackTo")
        else None)(_policy(env)), 180)
    failure = policy["status"]["rolloutFailure"]
    assert failure["node"] == env.cluster.node, failure
    degraded = _condition(policy, "Degraded")
    assert (degraded["status"], degraded["reason"]) == ("True", "RolloutFailed"), degraded
    assert env.cluster.node in degraded["message"], degraded
    ds = env.json("-n", NS, "get", "ds", "rocenet-gaudi")
    pod_spec = ds["spec"]["template"]["spec"]
    images = {c["image"] for c in pod_spec["containers"] + pod_spec["initContainers"]}
    assert images == {IMAGE}, images
    [back] = wait("the broken pod gone", lambda: (
        lambda pods: pods if len(pods) == 1 and _pod_ready(pods[0]) else None)(_node_pods(env)), 120)
    assert back["metadata"]["uid"] == before["metadata"]["uid"], "the node's serving pod was replaced"
    assert {c["image"] for c in back["spec"]["containers"] + back["spec"]["initContainers"]} == {IMAGE}
    say(f"policy: a broken image rolled back on {env.cluster.node} "
        f"{time.monotonic() - started:.0f} s after the change (node timeout 30 s)")
    assert wait("every port addressed", lambda: len(_fabric_addresses(env)) == PORTS, 60)
    # The image put right: the policy is Ready again, its pod left as it is
    # (its reporter has written, naming it: the node is back).
    assert wait("the RocenetNode written by the pod put back", lambda: env.json(
        "get", "rocenetnode", env.cluster.node)["status"].get("reporterPod") == back["metadata"]["uid"], 60)
    env.kubectl("patch", "rocenetnodepolicy", "gaudi", "--type=json",
                "-p", json.dumps([{"op": "remove", "path": "/spec/image"}]))
    wait("Ready again", lambda: _ready(env), 120)
    [now] = _node_pods(env)
    assert now["metadata"]["uid"] == back["metadata"]["uid"], "the pod replaced again"


def test_an_overlapping_policy_is_refused_for_the_node_it_would_share(env):
    with open(EXAMPLE) as f:
        second = yaml.safe_load(f)
    second["metadata"]["name"] = "second"
    env.apply(second)
    policy = wait("the second policy says the node is held", lambda: (
        lambda p: p if _current(p) and _condition(p, "Degraded").get("reason") == "NodesContested"
        else None)(_policy(env, "second")), 60)
    assert policy["status"]["contestedNodes"] == [{"node": env.cluster.node, "heldBy": "gaudi"}], policy
    assert policy["status"]["matchedNodes"] == 0
    assert _node(env)["metadata"]["labels"]["rocenet.io/node-policy"] == "gaudi"
    pods = env.json("-n", NS, "get", "pods", "-l", "rocenet.io/node-policy=second")["items"]
    assert pods == [], [p["metadata"]["name"] for p in pods]
    env.kubectl("delete", "rocenetnodepolicy", "second", "--timeout=60s")
    assert _ready(env)


def test_the_policy_deleted_leaves_nothing_of_rocenet_on_the_node(env, say):
    assert _fabric_addresses(env), "no port addressed before the delete"
    for path in (os.path.join(NFD_FEATURES, "rocenet"), NM_DROP_IN, CNI_PLUGIN, GAUDINET):
        assert os.path.exists(path), f"{path}: not there before the delete"
    started = time.monotonic()
    env.kubectl("delete", "rocenetnodepolicy", "gaudi", "--timeout=120s")
    say(f"policy: deleted, its node left clean, in {time.monotonic() - started:.0f} s")
    assert env.json("-n", NS, "get", "daemonsets")["items"] == []
    assert env.json("-n", NS, "get", "configmaps", "-l", "rocenet.io/node-policy=gaudi")["items"] == []
    node = _node(env)
    assert "rocenet.io/node-policy" not in node["metadata"]["labels"], node["metadata"]["labels"]
    assert "ScaleOutNetworkReady" not in {c["type"] for c in node["status"]["conditions"]}
    assert env.json("get", "rocenetnodes")["items"] == [], "a RocenetNode left after the delete"
    assert _fabric_addresses(env) == {}
    routes = subprocess.run(["ip", "-n", env.fab.node_netns, "-4", "route", "show", "table", "all"],
                            capture_output=True, text=True, check=True).stdout
    assert not re.search(r"^10\.200\.", routes, re.M), routes
    assert glob.glob(os.path.join(NFD_FEATURES, "rocenet*")) == []
    for path in (NM_DROP_IN, CNI_PLUGIN, GAUDINET):
        assert not os.path.exists(path), f"{path}: left after the delete"
    assert not os.path.isdir(STATE_DIR) or os.listdir(STATE_DIR) == []
