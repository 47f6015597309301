# SPDX-License-Identifier: Apache-2.0
"""The fabric never takes the host's own networks: with a stand-in for the
cluster's pod network routed by the host (as OVN-Kubernetes routes
10.128.0.0/14 through ovn-k8s-mp0) and a reserved service network in the
configuration, a switch (the real lldpd) announcing a /30 inside either
holds that port, named in `rocectl addressing` and `rocectl health`, while
the host's traffic still leaves by its own interface and a port on a clean
network is addressed as usual."""

from __future__ import annotations

import json
import os
import tempfile

import pytest

from harness import Daemon, wait_until

POD_NETWORK = "10.128.0.0/14"
SERVICE_NETWORK = "172.30.0.0/16"
DESCRIPTIONS = {0: "no-alert 10.128.3.2/30",   # inside the pod network
                1: "no-alert 10.200.2.2/30",   # clean
                2: "no-alert 172.30.5.2/30"}   # inside the reserved service network


@pytest.fixture(scope="module")
def fabric(fabrics):
    fab = fabrics("hn", ports=3, descriptions=DESCRIPTIONS)
    # The host's pod network: an interface of its own (a veth here) and a
    # route for the whole network through it, made before rocenetd starts.
    for argv in (["ip", "link", "add", "podnet0", "type", "veth", "peer", "name", "podnet1"],
                 ["ip", "addr", "add", "10.128.0.1/23", "dev", "podnet0"],
                 ["ip", "link", "set", "podnet0", "up"], ["ip", "link", "set", "podnet1", "up"],
                 ["ip", "route", "add", POD_NETWORK, "dev", "podnet0"]):
        fab.node_exec(argv, check=True)
    return fab


@pytest.fixture(scope="module")
def daemon(fabric):
    workdir = tempfile.mkdtemp(prefix="rocenetd-hostnet-")
    config = os.path.join(workdir, "rocenetd.yaml")
    with open(config, "w", encoding="utf-8") as f:
        f.write(f"addressing:\n  reserved_networks: [{SERVICE_NETWORK}]\n")
    d = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}", f"--config={config}"],
               workdir=workdir)
    d.start()
    wait_until(lambda: plans(d)["so1"]["state"] == "PLAN_STATE_READY"
               and plans(d)["so0"]["state"] == "PLAN_STATE_REFUSED"
               and plans(d)["so2"]["state"] == "PLAN_STATE_REFUSED", 15,
               what="so1 addressed, so0 and so2 held")
    yield d
    d.cleanup()


def plans(daemon: Daemon) -> dict[str, dict]:
    out = json.loads(daemon.rocectl("addressing", "-o", "json", check=True).stdout)
    return {p["name"]: p for p in out["plans"]}


def route_to(fabric, address: str) -> dict:
    """The node's route for `address` (`ip route get`); {} when it has none."""
    cp = fabric.node_exec(["ip", "-j", "route", "get", address], capture_output=True, text=True)
    if cp.returncode != 0:
        assert "unreachable" in cp.stderr, cp.stderr
        return {}
    return json.loads(cp.stdout)[0]


def addresses(fabric, ifname: str) -> list[str]:
    cp = fabric.node_exec(["ip", "-j", "-4", "addr", "show", "dev", ifname],
                          capture_output=True, text=True, check=True)
    return [f"{a['local']}/{a['prefixlen']}" for d in json.loads(cp.stdout)
            for a in d.get("addr_info", [])]


def test_a_switch_subnet_inside_the_hosts_pod_network_is_held(fabric, daemon):
    so0 = plans(daemon)["so0"]
    assert so0["reason"] == "HostNetworkOverlap", so0
    assert so0["message"] == (
        "port so0: subnet 10.128.3.0/30 lies inside the host's network 10.128.0.0/14 (routed via "
        "podnet0, not by rocenet): the host's traffic there would leave by this port"), so0
    assert addresses(fabric, "so0") == []
    # The host's traffic to those pods leaves by its own interface.
    assert route_to(fabric, "10.128.3.1")["dev"] == "podnet0"
    assert route_to(fabric, "10.128.3.2")["dev"] == "podnet0"
    # Said where an admin looks: the table and the port's health.
    table = daemon.rocectl("addressing", check=True).stdout
    assert "HostNetworkOverlap" in table and "podnet0" in table, table
    health = json.loads(daemon.rocectl("health", "-o", "json", check=True).stdout)
    port = next(p for p in health["ports"] if p["name"] == "so0")
    assert port["healthy"] is False
    assert any(c["type"] == "AddressConflict" and c["reason"] == "HostNetworkOverlap"
               for c in port["conditions"]), port


def test_a_switch_subnet_inside_a_reserved_network_is_held(fabric, daemon):
    so2 = plans(daemon)["so2"]
    assert so2["reason"] == "HostNetworkOverlap", so2
    assert so2["message"] == ("port so2: subnet 172.30.5.0/30 lies inside the reserved network "
                              "172.30.0.0/16 (addressing.reserved_networks)"), so2
    assert addresses(fabric, "so2") == []
    assert route_to(fabric, "172.30.5.1").get("dev") != "so2"


def test_a_port_on_a_clean_network_is_addressed_as_usual(fabric, daemon):
    assert addresses(fabric, "so1") == ["10.200.2.1/30"]
    route = route_to(fabric, "10.200.9.9")
    assert (route.get("dev"), route.get("gateway")) == ("so1", "10.200.2.2"), route


def test_the_hold_lifts_when_the_switch_moves_the_port_out(fabric, daemon):
    fabric.set_description(0, "no-alert 10.200.1.2/30")
    wait_until(lambda: plans(daemon)["so0"]["state"] == "PLAN_STATE_READY", 15,
               what="so0 addressed once its switch left the pod network")
    assert addresses(fabric, "so0") == ["10.200.1.1/30"]
    assert route_to(fabric, "10.128.3.1")["dev"] == "podnet0"


def test_a_host_route_made_later_holds_the_port_and_keeps_its_address(fabric, daemon):
    # A management network routed through the host, inside the fabric's
    # /16: so1's route to the fabric would cover it. The port keeps what it
    # has (a running job keeps its network) and says why it is held.
    fabric.node_exec(["ip", "route", "add", "10.200.99.0/24", "dev", "podnet0"], check=True)
    try:
        wait_until(lambda: plans(daemon)["so1"]["reason"] == "HostNetworkOverlap", 10,
                   what="so1 held once the host routes 10.200.99.0/24")
        so1 = plans(daemon)["so1"]
        assert "route 10.200.0.0/16 covers the host's network 10.200.99.0/24" in so1["message"]
        assert addresses(fabric, "so1") == ["10.200.2.1/30"]
        assert route_to(fabric, "10.200.99.1")["dev"] == "podnet0"
    finally:
        fabric.node_exec(["ip", "route", "del", "10.200.99.0/24", "dev", "podnet0"], check=True)
    wait_until(lambda: plans(daemon)["so1"]["state"] == "PLAN_STATE_READY", 10,
               what="so1 ready again once the host's route is gone")
    assert addresses(fabric, "so1") == ["10.200.2.1/30"]
