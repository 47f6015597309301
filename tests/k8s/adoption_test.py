# SPDX-License-Identifier: Apache-2.0
"""An installation from files adopted by the operator, on a real Kubernetes
node: rocenet as earlier releases installed it (the DaemonSet `rocenet`,
from packaging/kubernetes/node, beside rocenet-controller), a training pod
holding a port; then the default policy applied, as an upgrade to the
operator does. The operator deletes the files' DaemonSet with its pod left
running, the policy's pod starts beside it and takes over, and the old pod
goes: rocenetd's socket answers throughout, kubelet counts every port, the
training pod keeps its port.

The cluster and the fabric are e2e_test.py's (tests/k8s/e2e_support.py).
The tests run in the file's order on one cluster (the module is
`ordered`)."""

from __future__ import annotations

import json
import os
import time

import pytest

from e2e_support import (
    OVERLAYS,
    PORTS,
    ROOT,
    SYSFS,
    Serving,
    deployed,
    operator_on_the_test_cluster,
    wait,
)

pytestmark = pytest.mark.ordered

NS = "rocenet-system"
POLICY = os.path.join(ROOT, "packaging", "kubernetes", "base", "node-policy.yaml")


def _earlier_release(e, kustomization: dict) -> None:
    """The generic overlay less its policy, with the node side as files: the
    DaemonSet `rocenet` and its ConfigMap, given the test cluster's image,
    the fabric's sysfs and the API server's address, as the earlier
    releases' overlay installed them."""
    operator_on_the_test_cluster(e, kustomization)
    (overlay,) = kustomization["resources"]
    packaging = os.path.dirname(os.path.dirname(overlay))
    kustomization["resources"].append(os.path.join(packaging, "node", "generic"))
    kustomization["images"].append({"name": "rocenet", "newName": "localhost/rocenet", "newTag": "e2e"})
    kustomization["configMapGenerator"] = [{"name": "rocenetd-config", "namespace": NS, "behavior": "merge",
                                            "literals": [f"local.yaml=sysfs_root: {SYSFS}"]}]
    host, port = e.cluster.record["server"].removeprefix("https://").rsplit(":", 1)
    kustomization["patches"].extend([
        {"patch": json.dumps({"apiVersion": "rocenet.io/v1alpha1", "kind": "RocenetNodePolicy",
                              "metadata": {"name": "gaudi"}, "$patch": "delete"})},
        {"target": {"kind": "DaemonSet", "name": "rocenet"}, "patch": json.dumps([
            {"op": "add", "path": "/spec/template/spec/volumes/-",
             "value": {"name": "fabric-sysfs", "hostPath": {"path": SYSFS, "type": "Directory"}}},
            {"op": "add", "path": "/spec/template/spec/containers/0/volumeMounts/-",
             "value": {"name": "fabric-sysfs", "mountPath": SYSFS, "readOnly": True}}])},
        {"target": {"kind": "DaemonSet", "name": "rocenet"}, "patch": json.dumps({
            "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "rocenet", "namespace": NS},
            "spec": {"template": {"spec": {"containers": [{"name": "node-reporter", "env": [
                {"name": "KUBERNETES_SERVICE_HOST", "value": host},
                {"name": "KUBERNETES_SERVICE_PORT", "value": port}]}]}}}})},
    ])


@pytest.fixture(scope="module")
def env(artifacts, say, took):
    with deployed(artifacts, os.path.join(OVERLAYS, "generic"), say, took, patch=_earlier_release) as e:
        yield e


def _node_pods(env) -> list[dict]:
    listed = env.json("-n", NS, "get", "pods", "-l",
                      "app.kubernetes.io/name=rocenet,app.kubernetes.io/component=node")["items"]
    return [p for p in listed if not p["metadata"].get("deletionTimestamp")]


def test_the_earlier_release_runs_from_files_and_serves_a_pod(env):
    wait("the files' DaemonSet ready", lambda: env.json(
        "-n", NS, "get", "ds", "rocenet")["status"].get("numberReady") == 1, 180)
    assert env.json("get", "rocenetnodepolicies")["items"] == []
    assert wait("allocatable", lambda: env.allocatable() == PORTS, 90)
    env.pod("trainer", 1)
    wait("trainer running", lambda: env.phase("trainer") == "Running", 90)


def test_the_policy_adopts_it_without_a_gap(env, say):
    trainer = env.json("get", "pod", "trainer")["status"]["containerStatuses"][0]
    trainer_net1 = env.exec("trainer", "ip", "-4", "-o", "addr", "show", "net1")
    [old] = _node_pods(env)
    started = time.monotonic()
    with Serving(env) as serving:
        env.kubectl("apply", "-f", POLICY)
        wait("the files' DaemonSet gone", lambda: env.kubectl(
            "-n", NS, "get", "ds", "rocenet", check=False).returncode != 0, 120)
        [new] = wait("the policy's pod alone on the node", lambda: (
            lambda pods: pods if len(pods) == 1 and pods[0]["metadata"]["uid"] != old["metadata"]["uid"]
            else None)(_node_pods(env)), 180)
        wait("the policy Ready", lambda: (lambda p: p["status"].get("observedGeneration") ==
                                          p["metadata"]["generation"] and any(
            c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", [])))(
            env.json("get", "rocenetnodepolicy", "gaudi")), 180)
    took = time.monotonic() - started
    say(f"adoption: the files' pod {old['metadata']['name']} replaced by {new['metadata']['name']} "
        f"in {took:.0f} s; {serving.summary()}")
    owner = new["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"]) == ("DaemonSet", "rocenet-gaudi"), owner
    assert serving.served > 100, serving.served
    assert not serving.failures, f"{len(serving.failures)} connections failed: {serving.failures[:5]}"
    assert serving.lowest == PORTS, f"allocatable fell to {serving.lowest} during the adoption"
    now = env.json("get", "pod", "trainer")["status"]["containerStatuses"][0]
    assert (now["containerID"], now["restartCount"]) == (trainer["containerID"], trainer["restartCount"])
    assert env.exec("trainer", "ip", "-4", "-o", "addr", "show", "net1") == trainer_net1
    listed = env.kubectl("-n", NS, "exec", "ds/rocenet-gaudi", "-c", "rocenetd", "--",
                         "rocectl", "attachments", "-o", "json").stdout
    attached = [a for a in json.loads(listed)["attachments"] if a.get("pod", {}).get("name") == "trainer"]
    assert len(attached) == 1, attached
    env.delete("trainer")
    assert wait("allocatable back", lambda: env.allocatable() == PORTS, 60)
