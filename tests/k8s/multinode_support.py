# SPDX-License-Identifier: Apache-2.0
"""The set-up of the end-to-end tests on several nodes: a simulated
cluster fabric (tests/sim/cluster.py: a leaf switch per rail for every
NODES_PER_LEAF nodes, a spine per rail, lldpd on every leaf), a test
cluster whose nodes are the fabric's node namespaces (node 0 in the host's
mount namespace, the others each in one of its own, its fabric sysfs tree
where node 0's is), and rocenet installed as users install it: the
generic overlay, the operator making the node side from the default
policy, which an admin points at the fabric's ports by name."""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "sim"))

import cluster as simcluster  # noqa: E402
import e2e_support as e2e  # noqa: E402
import testcluster as k8s  # noqa: E402

NODES = 3
RAILS = 2
NODES_PER_LEAF = 2
FABRIC = "mn"


class NodesEnv(e2e.Env):
    """Env over several nodes (its fabric a simulated cluster,
    tests/sim/cluster.py)."""

    @property
    def nodes(self) -> list[str]:
        return [n.name for n in self.cluster.nodes]

    def allocatable_on(self, node: str) -> int:
        got = self.json("get", "node", node)
        return int(got["status"]["allocatable"].get(e2e.RESOURCE, "0"))

    def rocenet_pod_on(self, node: str) -> str:
        """The node's rocenet pod (of the default policy's DaemonSet)."""
        listed = self.json("-n", "rocenet-system", "get", "pods", "--field-selector",
                           f"spec.nodeName={node}", "-l",
                           "app.kubernetes.io/name=rocenet,app.kubernetes.io/component=node")["items"]
        live = [p["metadata"]["name"] for p in listed if not p["metadata"].get("deletionTimestamp")]
        assert len(live) == 1, f"{node}: rocenet pods {live}"
        return live[0]

    def rocectl_on(self, node: str, *args: str) -> str:
        return self.kubectl("-n", "rocenet-system", "exec", self.rocenet_pod_on(node), "-c",
                            "rocenetd", "--", "rocectl", *args).stdout

    def pod_on(self, name: str, node: str, ports: int) -> None:
        """A pod on `node` holding `ports` scale-out ports (net1, net2...)."""
        self.apply({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default",
                         "annotations": {"k8s.v1.cni.cncf.io/networks":
                                         ",".join(["gaudi-scale-out"] * ports)}},
            "spec": {"terminationGracePeriodSeconds": 1,
                     "nodeSelector": {"kubernetes.io/hostname": node},
                     "containers": [{"name": "main", "image": k8s.TEST_IMAGE,
                                     "command": ["/bin/sh", "-c", "sleep 3600"],
                                     "resources": {"limits": {e2e.RESOURCE: ports}}}]},
        })


def fabric_ports(env, kustomization: dict) -> None:
    """The default policy pointed at the simulated fabric's ports, by name
    (it has no Gaudi in sysfs), and told to leave their MTU as the
    switches have it; and the operator told where the nodes' sysfs is."""
    e2e.operator_on_the_test_cluster(env, kustomization,
                                     sysfs=env.fab.sysfs_root(0))
    kustomization["patches"].append(
        {"target": {"kind": "RocenetNodePolicy", "name": e2e.POLICY}, "patch": json.dumps({
            "apiVersion": "rocenet.io/v1alpha1", "kind": "RocenetNodePolicy",
            "metadata": {"name": e2e.POLICY},
            "spec": {"ports": {"gaudi": {"enabled": False}, "interfaces": ["so*"]},
                     "addressing": {"mtu": 0}}})})


def nodes_up(artifacts: e2e.Artifacts, say, logs_on_failure: str):
    """The several-node set-up for e2e.deployed: the simulated cluster
    fabric and a cluster of NODES nodes on it, with the cluster DNS, the
    JobSet controller and Kubeflow Trainer's (the training job's); returns
    (fabric, cluster, env)."""
    k8s.down()
    simcluster.down(FABRIC)
    fab = simcluster.Cluster.up(FABRIC, nodes=NODES, rails=RAILS, nodes_per_leaf=NODES_PER_LEAF)
    try:
        sysfs = fab.sysfs_root(0)
        # The last node runs Multus thick, as OpenShift does: its pods'
        # networks, rocenet's ports among them, made by multus-daemon.
        more = [{"netns": fab.node_netns(i), "binds": {sysfs: fab.sysfs_root(i)},
                 "multus": "thick" if i == NODES - 1 else "thin",
                 "runtime": "crio" if i == NODES - 1 else "containerd"} for i in range(1, NODES)]
        cluster = k8s.Cluster.up(artifacts.bin_dir, node_netns=fab.node_netns(0),
                                 logs_on_failure=logs_on_failure, more_nodes=more,
                                 addons=("dns", "jobset", "trainer", "training-operator"))
    except BaseException:
        fab.down()
        raise
    return fab, cluster, NodesEnv(cluster, fab, say)


def deployed_on_nodes(artifacts: e2e.Artifacts, say, took):
    """The fabric, the cluster of NODES nodes on it and rocenet applied
    from the generic overlay, pointed at the fabric's ports; everything
    taken down afterwards."""
    return e2e.deployed(artifacts, os.path.join(e2e.OVERLAYS, "generic"), say, took,
                        patch=fabric_ports, up=nodes_up,
                        images=(artifacts.archive, artifacts.training_archive))
