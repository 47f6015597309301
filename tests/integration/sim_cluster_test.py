# SPDX-License-Identifier: Apache-2.0
"""The multi-node simulation (tests/sim/cluster.py) with leaves: 6 nodes x 2
rails, 2 nodes a leaf, so 3 leaf switches a rail under a spine. rocenetd
runs on every node and addresses its ports from LLDP, as on one switch a
rail; then a node on leaf 0 reaches nodes on the other leaves over the
rail, a leaf switch down takes exactly its own ports off the fabric (and
back), a dead port keeps its carrier and address but passes nothing. Also:
without leaves, the names the diagnostics tests rely on. Nothing is left
behind."""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import sys

import pytest

from harness import Daemon, wait_until

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim"))
import cluster as sim_cluster  # noqa: E402

NODES = 6
RAILS = 2
PER_LEAF = 2


def addr(i: int, rail: int) -> str:
    return sim_cluster.node_address(i, rail)


def ping(cl, node: int, rail: int, target: str, count: int = 2) -> bool:
    """Echo from node's port on rail (bound to it) to target."""
    cp = cl.node_exec(node, ["ping", "-n", "-q", "-c", str(count), "-i", "0.2", "-W", "1",
                             "-I", f"so{rail}", target])
    return cp.returncode == 0


def addresses(cl, node: int, rail: int) -> list[str]:
    cp = cl.node_exec(node, ["ip", "-j", "-4", "addr", "show", "dev", f"so{rail}"], check=True)
    return [a["local"] for link in json.loads(cp.stdout) for a in link.get("addr_info", [])]


def carrier(cl, node: int, rail: int) -> bool:
    cp = cl.node_exec(node, ["cat", f"/sys/class/net/so{rail}/carrier"])
    return cp.stdout.strip() == "1"


@pytest.fixture(scope="module")
def leafy():
    cl = sim_cluster.Cluster.up(sim_cluster.fabric.unique_name("lf"), nodes=NODES, rails=RAILS,
                                nodes_per_leaf=PER_LEAF)
    nodes: list[Daemon] = []
    try:
        for i in range(NODES):
            nodes.append(Daemon(cl.node_netns(i), ["--gaudi=false", "--interfaces=so*",
                                                   f"--sysfs-root={cl.sysfs_root(i)}"]).start())
        for i in range(NODES):
            wait_until(lambda: all(addresses(cl, i, r) == [addr(i, r)] for r in range(RAILS)), 20,
                       what=f"node {i}'s ports addressed from LLDP")
        yield cl, nodes
    finally:
        for node in nodes:
            node.cleanup()
        cl.down()
        left = [ns for ns in os.listdir("/run/netns") if ns.startswith(cl.name + "-")]
        assert left == [], f"namespaces left behind: {left}"
        assert not os.path.exists(cl.state_dir)
        assert all(p.poll() is not None for p in cl._lldpd), "lldpd left running"


def test_leaves_and_spines_named_and_described(leafy):
    cl, nodes = leafy
    name = cl.name
    assert cl.leaves_per_rail == 3
    want = {f"{name}-n{i}" for i in range(NODES)} | {f"{name}-p{r}" for r in range(RAILS)} | {
        f"{name}-s{r}l{j}" for r in range(RAILS) for j in range(3)}
    assert {ns for ns in os.listdir("/run/netns") if ns.startswith(name + "-")} == want
    with open(os.path.join(cl.state_dir, "cluster.json")) as f:
        described = json.load(f)
    port = next(p for p in described["ports"] if p["node"] == 3 and p["rail"] == 1)
    assert (port["leaf"], port["switch_netns"], port["switch_ifname"], port["address"]) == \
        (f"leaf-{name}-r1-l1", f"{name}-s1l1", "swp2", "10.202.4.1")
    # Each leaf is a switch of its own: its System Name and its chassis.
    chassis = set()
    for i in (0, 2, 4):
        cp = nodes[i].rocectl("neighbors", "-o", "json", check=True)
        so0 = next(p for p in json.loads(cp.stdout)["ports"] if p["name"] == "so0")
        (neighbor,) = so0["neighbors"]
        assert neighbor["system_names"] == [f"leaf-{name}-r0-l{i // PER_LEAF}"], neighbor
        assert neighbor["port_id"]["value"] == f"Ethernet1/{i % PER_LEAF + 1}"
        chassis.add(neighbor["chassis_id"]["value"])
    assert len(chassis) == 3


def test_a_node_reaches_the_other_leaves_over_its_rail(leafy):
    cl, _ = leafy
    for rail in range(RAILS):
        for j in (1, 2):
            assert ping(cl, 0, rail, addr(2 * j, rail)), f"n0 -> n{2 * j} on rail {rail}"
    assert ping(cl, 5, 1, addr(1, 1))  # and back, from the last leaf
    # rails stay apart: rail 0's port does not reach rail 1
    assert not ping(cl, 0, 0, addr(2, 1), count=1)


def test_leaf_down_takes_exactly_its_ports(leafy):
    cl, _ = leafy
    try:
        cl.leaf(0, 1, "down")  # nodes 2 and 3, rail 0
        wait_until(lambda: not carrier(cl, 2, 0) and not carrier(cl, 3, 0), 5,
                   what="leaf 1's ports lose carrier")
        for i in (2, 3):
            assert not ping(cl, 0, 0, addr(i, 0), count=1), f"n{i}/so0 still reachable"
            assert ping(cl, 0, 1, addr(i, 1)), f"n{i}/so1 (rail 1) lost too"
        for i in (1, 4, 5):
            assert ping(cl, 0, 0, addr(i, 0)), f"n{i}/so0 lost with another leaf"
        with open(os.path.join(cl.state_dir, "cluster.json")) as f:
            assert json.load(f)["faults"]["leaves_down"] == [[0, 1]]
    finally:
        cl.leaf(0, 1, "up")
    # back: carrier, the address from LLDP again, and the route via the spine
    for i in (2, 3):
        wait_until(lambda: carrier(cl, i, 0) and addresses(cl, i, 0) == [addr(i, 0)], 20,
                   what=f"n{i}/so0 addressed again")
        wait_until(lambda: ping(cl, 0, 0, addr(i, 0), count=1), 10, interval=0.2,
                   what=f"n{i}/so0 reachable again")


def test_a_cut_cable_stays_cut_through_its_leaf_going_down_and_up(leafy):
    cl, _ = leafy
    try:
        cl.link(4, 0, "down")
        cl.leaf(0, 2, "down")
        cl.leaf(0, 2, "up")
        wait_until(lambda: carrier(cl, 5, 0), 5, what="n5/so0 back with its leaf")
        assert not carrier(cl, 4, 0), "the cut cable came back with its leaf"
    finally:
        cl.link(4, 0, "up")
    wait_until(lambda: ping(cl, 0, 0, addr(4, 0), count=1), 20, interval=0.2,
               what="n4/so0 reachable again")


def test_dead_port_keeps_carrier_and_address_but_passes_nothing(leafy):
    cl, _ = leafy
    try:
        cl.blackhole(4, 1, "on")
        assert not ping(cl, 0, 1, addr(4, 1), count=2)
        assert not ping(cl, 4, 1, addr(0, 1), count=2)
        assert not ping(cl, 4, 1, sim_cluster.switch_address(4, 1), count=1)  # nor its gateway
        assert ping(cl, 0, 0, addr(4, 0)), "the node's other rail went too"
        assert ping(cl, 0, 1, addr(5, 1)), "its leaf's other port went too"
        # more than LLDP's TTL (4 s) later, the port is still up and addressed
        subprocess.run(["sleep", "5"], check=True)
        assert carrier(cl, 4, 1) and addresses(cl, 4, 1) == [addr(4, 1)]
        assert not ping(cl, 0, 1, addr(4, 1), count=1)
    finally:
        cl.blackhole(4, 1, "off")
    assert ping(cl, 0, 1, addr(4, 1))


def test_without_leaves_one_switch_a_rail_as_before():
    with sim_cluster.Cluster.up(sim_cluster.fabric.unique_name("l1"), nodes=3, rails=2) as cl:
        name = cl.name
        assert sorted(ns for ns in os.listdir("/run/netns") if ns.startswith(name + "-")) == \
            sorted([f"{name}-n0", f"{name}-n1", f"{name}-n2", f"{name}-s0", f"{name}-s1"])
        d = cl.describe()
        assert d["switch_netns"] == [f"{name}-s0", f"{name}-s1"]
        port = next(p for p in d["ports"] if p["node"] == 2 and p["rail"] == 1)
        assert (port["switch_netns"], port["switch_ifname"], port["leaf"], port["gateway"]) == \
            (f"{name}-s1", "swp3", f"leaf-{name}-r1", "10.202.3.2")
        links = subprocess.run(["ip", "-n", f"{name}-s1", "-o", "link", "show"], capture_output=True,
                               text=True, check=True).stdout
        assert all(f"swp{i + 1}@" in links for i in range(3))
        assert [leaf.d["hostname"] for leaf in cl.leaves] == [f"leaf-{name}-r0", f"leaf-{name}-r1"]
    assert not [ns for ns in os.listdir("/run/netns") if ns.startswith(name + "-")]


def test_past_250_nodes_the_30s_are_packed_in_the_rails_16():
    """The first 250 nodes keep their readable /30s; the others fill the
    rest of those /24s: every /30 distinct, inside the rail's /16, apart
    from the uplinks' (third octets 251..254), for the 1024 nodes reach
    takes at most."""
    rail = ipaddress.ip_network(sim_cluster.rail_network(0))
    nets = [ipaddress.ip_network(sim_cluster.node_network(i, 0)) for i in range(sim_cluster.MAX_NODES)]
    assert len(set(nets)) == sim_cluster.MAX_NODES
    assert all(n.prefixlen == 30 and n.subnet_of(rail) and n.network_address.packed[2] < 251
               for n in nets)
    assert str(nets[0]) == "10.201.1.0/30" and str(nets[249]) == "10.201.250.0/30"
    assert str(nets[250]) == "10.201.1.4/30" and str(nets[1023]) == "10.201.13.72/30"
    for i in (0, 250, 1023):
        net = nets[i]
        assert sim_cluster.switch_address(i, 0) == str(net.network_address + 2)
        assert sim_cluster.node_address(i, 0) == str(net.network_address + 1)
