# SPDX-License-Identifier: Apache-2.0
"""The faults reach names beyond a dead port, each planted alone on the
simulated fabric (tests/sim/cluster.py) and named at its level with nothing
else suspected: a port that loses a share of its packets, a port's link and
a leaf's uplink whose MTU is smaller than the ports', a leaf's uplink down,
and a node whose rocenet-diagd does not answer, which is not tested rather
than suspected. Six nodes x two rails, two nodes a leaf (three leaves a
rail under a spine), every node running the build tree's rocenetd and
rocenet-diagd; rocectl diag reach from node 0 over all of them."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile

import pytest

from harness import Daemon, Diagd, wait_until

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim"))
import cluster as sim_cluster  # noqa: E402

NODES = 6
RAILS = 2
PER_LEAF = 2


def node_addr(i: int, rail: int = 0) -> str:
    return sim_cluster.node_address(i, rail)


@pytest.fixture(scope="module")
def cluster():
    if shutil.which("iptables") is None:
        pytest.skip("the lossy port needs iptables")
    cl = sim_cluster.Cluster.up(sim_cluster.fabric.unique_name("dy"), nodes=NODES, rails=RAILS,
                                nodes_per_leaf=PER_LEAF)
    nodes: list[Daemon] = []
    daemons: list[Diagd] = []
    secrets = tempfile.mkdtemp(prefix="rocenet-diag-gray-")
    secret = os.path.join(secrets, "secret")
    with open(secret, "w", encoding="utf-8") as f:
        f.write(os.urandom(24).hex() + "\n")
    try:
        for i in range(NODES):
            node = Daemon(cl.node_netns(i), ["--gaudi=false", "--interfaces=so*",
                                             f"--sysfs-root={cl.sysfs_root(i)}"])
            nodes.append(node)
            node.start()
            os.makedirs(f"{secrets}/n{i}", exist_ok=True)
            d = Diagd(node, [f"--node-name=n{i}", f"--secret-file={secret}",
                             f"--validation-file={secrets}/n{i}/rocenet-validated"])
            d.validation_file = f"{secrets}/n{i}/rocenet-validated"
            daemons.append(d)
            d.start()
        for i, d in enumerate(daemons):
            wait_until(lambda: all(f"listening on {node_addr(i, r)}:50153" in d.log()
                                   for r in range(RAILS)),
                       30, what=f"node {i} addressed and its data port listening")
        yield cl, daemons
    finally:
        for d in daemons:
            d.cleanup()
        for node in nodes:
            node.cleanup()
        cl.down()
        shutil.rmtree(secrets, ignore_errors=True)
        left = [ns for ns in os.listdir("/run/netns") if ns.startswith(cl.name + "-")]
        assert left == [], f"namespaces left behind: {left}"


def reach(daemons, *extra: str, count: int = 10) -> tuple[int, dict, str]:
    """rocectl diag reach from node 0 over every node (each by both its
    addresses); exit code, result, the table's last lines."""
    nodes = ",".join(f"{node_addr(i, 0)}+{node_addr(i, 1)}" for i in range(NODES))
    argv = ["diag", "reach", "--nodes", nodes, "--count", str(count), "--interval", "5ms",
            "--time-limit", "3s", *extra]
    cp = daemons[0].rocectl(*argv, "-o", "json", timeout=40)
    result = json.loads(cp.stdout) if cp.stdout.strip() else {}
    return cp.returncode, result, cp.stderr


def healthy(daemons) -> None:
    """Waits until a reach over the fabric passes again (after a fault is
    taken off)."""
    wait_until(lambda: reach(daemons, count=2)[0] == 0, 30, what="the fabric healthy again")


def test_the_healthy_fabric_passes_at_full_size(cluster):
    cl, daemons = cluster
    rc, result, err = reach(daemons, "--matrix", count=3)
    assert rc == 0 and result["ok"], (err, result.get("suspects"), result.get("unreachable"))
    for port in result["ports"]:
        assert port["mtu"] == 1500, port
        for t in port["targets"]:
            assert (t["full_size_bytes"], t["full_size_sent"], t["full_size_received"]) == \
                (1500, 3, 3), (port["node"], port["port"], t)


def test_a_port_that_loses_a_share_of_its_packets_is_named_alone(cluster):
    cl, daemons = cluster
    cl.loss(3, 1, 10)
    try:
        rc, result, err = reach(daemons)
    finally:
        cl.loss(3, 1, 0)
    assert rc == 6, err
    assert result["suspects"] == ["n3/so1 lossy"], result.get("suspect_details")
    [suspect] = result["suspect_details"]
    assert suspect["kind"] == "lossy-port" and suspect["rail"], suspect
    # 10 % of the packets each way: about 19 % of the echoes.
    assert 0.08 < suspect["loss_ratio"] < 0.35, suspect
    assert "from and to it, lost" in suspect["evidence"], suspect
    # Its peers' loss shows in the result, theirs and nobody else's.
    lossy = {(p["node"], p["port"]) for p in result["ports"] if p["peer_loss_ratio"] > 0}
    assert ("n3", "so1") in lossy and all(port == "so1" for _, port in lossy), lossy
    assert result["labels"]["unvalidated"] == ["n3"], result["labels"]
    healthy(daemons)


def test_a_link_with_a_smaller_mtu_is_the_ports_own(cluster):
    cl, daemons = cluster
    cl.mtu(2, 0, 1400)  # the switch end of n2/so0's cable
    try:
        rc, result, err = reach(daemons, count=3)
    finally:
        cl.mtu(2, 0, 0)
    assert rc == 6, err
    assert result["suspects"] == ["n2/so0 mtu"], result.get("suspect_details")
    [suspect] = result["suspect_details"]
    assert suspect["kind"] == "port-mtu", suspect
    assert "full-size (1500-byte) probes from and to it answered, its small ones did" in \
        suspect["evidence"], suspect
    # Every failed pair failed at full size only, and touches n2/so0.
    assert result["unreachable"], result
    for pair in result["unreachable"]:
        assert pair["full_size_bytes"] == 1500, pair
        assert "n2/so0" in (f"{pair['from_node']}/{pair['from_port']}",
                            f"{pair['to_node']}/{pair.get('to_port', '')}"), pair
    healthy(daemons)


def test_an_uplink_with_a_smaller_mtu_is_the_leafs_uplink(cluster):
    cl, daemons = cluster
    leaf = cl.leaf_name(1, 1)  # nodes 2 and 3 on rail 1
    cl.uplink_mtu(1, 1, 1280)
    try:
        rc, result, err = reach(daemons, count=3)
    finally:
        cl.uplink_mtu(1, 1, 0)
    assert rc == 6, err
    assert result["suspects"] == [f"leaf {leaf} uplink mtu"], result.get("suspect_details")
    [suspect] = result["suspect_details"]
    assert suspect["kind"] == "leaf-uplink-mtu" and suspect["leaf"] == leaf, suspect
    # The spine, or the leaf, said so: the next hop's MTU is 1280.
    assert "reported a next-hop MTU of 1280" in suspect["evidence"], suspect
    healthy(daemons)


def test_a_leaf_whose_uplink_is_down_is_its_uplink(cluster):
    cl, daemons = cluster
    leaf = cl.leaf_name(0, 2)  # nodes 4 and 5 on rail 0: reached on rail 1
    cl.uplink(0, 2, "down")
    try:
        rc, result, err = reach(daemons, count=2)
    finally:
        cl.uplink(0, 2, "up")
    assert rc == 6, err
    assert result["suspects"] == [f"leaf {leaf} uplink"], result.get("suspect_details")
    healthy(daemons)


def test_a_node_whose_diagd_is_down_is_not_tested_and_keeps_its_label(cluster):
    cl, daemons = cluster
    silent = daemons[5]
    # A passed run labels every node; then n5's rocenet-diagd goes.
    rc, _, err = reach(daemons, count=2)
    assert rc == 0, err
    with open(silent.validation_file, encoding="utf-8") as f:
        label = f.read()
    assert "rocenet.io/scale-out-validated=reach" in label, label
    silent.stop()
    try:
        rc, result, err = reach(daemons, count=2)
        cp = daemons[0].rocectl("diag", "reach", "--nodes",
                                ",".join(f"{node_addr(i, 0)}+{node_addr(i, 1)}" for i in range(NODES)),
                                "--count", "2", "--time-limit", "2s", timeout=40)
    finally:
        silent.start()
    # Nothing failed; one node was not measured: exit 8, not a pass.
    assert rc == 8, err
    assert result["suspects"] == [] and not result.get("suspect_details"), result
    [entry] = result["not_tested"]
    assert entry["node"] in ("n5", f"{node_addr(5, 0)}+{node_addr(5, 1)}"), entry
    assert "Connection refused" in entry["reason"] or "connect" in entry["reason"], entry
    # Its label is as it was; the nodes tested passed and were labelled.
    with open(silent.validation_file, encoding="utf-8") as f:
        assert f.read() == label
    assert result["labels"]["validated"] == NODES - 1 and not result["labels"].get("unvalidated")
    assert cp.returncode == 8
    assert "Not tested" in cp.stdout and "INCOMPLETE: 1 node not tested" in cp.stdout, cp.stdout
    wait_until(lambda: "listening on" in silent.run_log(), 30, what="n5's rocenet-diagd back")
