# SPDX-License-Identifier: Apache-2.0
"""rocenet on several real nodes: a cluster of NODES kubelets, each in a
node namespace of the simulated cluster fabric (a leaf switch per rail for
every two nodes, a spine per rail), rocenet installed as users install it
(the generic overlay: the operator makes the node side from the default
policy, pointed at the fabric's ports by name).

What only several nodes show: the DaemonSet on every node and the
RocenetCluster counting each, each node's ports addressed from its own
leaf's LLDP, and two pods on nodes of different leaves reaching each other
over their scale-out ports, through the spine, each rail's traffic on its
own rail.

The module is marked `ordered` (tests/k8s/conftest.py): its tests run in
the file's order on one cluster, and after a failure the later ones are
reported SKIPPED."""

from __future__ import annotations

import json
import re
import time

import pytest

import multinode_support as mn
from e2e_support import NODE_DAEMONSET, wait

pytestmark = pytest.mark.ordered


@pytest.fixture(scope="module")
def env(artifacts, say, took):
    with mn.deployed_on_nodes(artifacts, say, took) as e:
        yield e


def test_every_node_runs_rocenet_and_the_cluster_counts_them(env):
    started = time.monotonic()
    ds = wait(f"the DaemonSet {NODE_DAEMONSET} ready on {mn.NODES} nodes", lambda: (
        lambda d: d if d and d["status"].get("numberReady") == mn.NODES else None)(
            json.loads(env.kubectl("-n", "rocenet-system", "get", "ds", NODE_DAEMONSET, "-o", "json",
                                   check=False).stdout or "null")), 300)
    assert ds["status"]["desiredNumberScheduled"] == mn.NODES
    for node in env.nodes:
        assert wait(f"{node}: {mn.RAILS} ports allocatable",
                    lambda n=node: env.allocatable_on(n) == mn.RAILS, 120)
    cluster = wait("the RocenetCluster counting every node", lambda: (
        lambda c: c if c.get("status", {}).get("readyNodes") == f"{mn.NODES}/{mn.NODES}" else None)(
            env.json("get", "rocenetcluster", "cluster")), 120)
    env.say(f"nodes: rocenet ready on {mn.NODES} nodes {time.monotonic() - started:.0f} s "
            f"after the install; kubectl get rocenetnodes:\n"
            + env.kubectl("get", "rocenetnodes", "-o", "wide").stdout)
    assert cluster["status"]["targetNodes"] == mn.NODES, cluster["status"]


def test_each_node_takes_its_addresses_from_its_own_leaf(env):
    for i, node in enumerate(env.nodes):
        out = env.rocectl_on(node, "addressing")
        for rail in range(mn.RAILS):
            want = mn.simcluster.node_address(i, rail)
            assert re.search(rf"^so{rail}\s+ready\b.*\b{re.escape(want)}/30", out, re.M), \
                f"{node}: so{rail} not {want}:\n{out}"


def test_pods_on_two_leaves_reach_each_other_on_each_rail_and_only_there(env):
    first, last = env.nodes[0], env.nodes[-1]
    assert env.fab.leaf_of(0) != env.fab.leaf_of(mn.NODES - 1)
    env.pod_on("left", first, mn.RAILS)
    env.pod_on("right", last, mn.RAILS)
    for pod in ("left", "right"):
        wait(f"{pod} running", lambda p=pod: env.phase(p) == "Running", 120)

    def addresses(pod: str) -> dict[str, str]:
        out = env.exec(pod, "ip", "-4", "-o", "addr", "show")
        return {m.group(1): m.group(2) for m in re.finditer(r"^\d+: (net\d+)\s+inet ([\d.]+)/", out, re.M)}
    left, right = addresses("left"), addresses("right")
    assert len(left) == len(right) == mn.RAILS, (left, right)
    by_rail = {pod: {a.split(".")[1]: (dev, a) for dev, a in addrs.items()}
               for pod, addrs in (("left", left), ("right", right))}
    for rail_octet, (dev, _) in by_rail["left"].items():
        _, target = by_rail["right"][rail_octet]
        out = env.exec("left", "ping", "-c", "3", "-W", "2", "-I", dev, target)
        assert " 0% packet loss" in out, out
        env.say(f"nodes: {first} {dev} -> {last} {target} through the spine: 3/3 replies")
        # The other rail's address is not reachable from this rail's port.
        other = [a for o, (_, a) in by_rail["right"].items() if o != rail_octet][0]
        cp = env.kubectl("exec", "left", "--", "ping", "-c", "1", "-W", "2", "-I", dev, other,
                         check=False)
        assert cp.returncode != 0, f"{dev} reached {other} on another rail:\n{cp.stdout}"
    for pod in ("left", "right"):
        env.delete(pod)
