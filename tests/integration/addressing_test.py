# SPDX-License-Identifier: Apache-2.0
"""LLDP-derived L3 addressing against the real lldpd as the switch: ports get
the other host of the switch's /30, routes to the fabric, follow description
changes, survive lldpd stopping, undo hand edits, survive a daemon restart,
and refuse bad descriptions without touching anything."""

from __future__ import annotations

import difflib
import ipaddress
import json
import os
import subprocess

import pytest

from harness import Daemon, metric_value, network_state, sim, wait_until

DESCRIPTIONS = {0: "no-alert 10.200.1.2/30", 1: "no-alert 10.200.2.2/30",
                2: "no-alert 10.200.3.6/30"}
EXPECTED = {"so0": ("10.200.1.1/30", "10.200.1.2"), "so1": ("10.200.2.1/30", "10.200.2.2"),
            "so2": ("10.200.3.5/30", "10.200.3.6")}


def addresses(fabric, ifname: str) -> list[str]:
    cp = fabric.node_exec(["ip", "-j", "-4", "addr", "show", "dev", ifname],
                          capture_output=True, text=True, check=True)
    data = json.loads(cp.stdout)
    return [f"{a['local']}/{a['prefixlen']}" for d in data for a in d.get("addr_info", [])]


def routes(fabric, ifname: str) -> list[dict]:
    cp = fabric.node_exec(["ip", "-j", "-4", "route", "show", "dev", ifname],
                          capture_output=True, text=True, check=True)
    return json.loads(cp.stdout)


def fabric_route(fabric, ifname: str) -> dict | None:
    for r in routes(fabric, ifname):
        if r.get("dst") == "10.200.0.0/16":
            return r
    return None


def l3_state(netns: str) -> tuple:
    """IPv4 addresses, routes (every table) and rules of a namespace, with
    numbers for names (the DEB test adds and removes /etc/iproute2's name
    of rocenet's route protocol while this runs)."""
    def ip(*args: str):
        cp = subprocess.run(["ip", "-n", netns, "-j", "-N", "-4", *args], capture_output=True,
                            text=True, check=True)
        return json.loads(cp.stdout or "[]")
    addrs = sorted((d["ifname"], a["local"], a["prefixlen"]) for d in ip("addr", "show")
                   for a in d.get("addr_info", []))
    return addrs, ip("route", "show", "table", "all"), ip("rule", "show")


def health(daemon: Daemon) -> dict:
    return json.loads(daemon.rocectl("health", "-o", "json", check=True).stdout)


def port_health(daemon: Daemon, name: str) -> dict:
    return next(p for p in health(daemon)["ports"] if p["name"] == name)


@pytest.fixture(scope="module")
def fabric(fabrics):
    return fabrics("ad", ports=3, descriptions=DESCRIPTIONS)


@pytest.fixture(scope="module")
def daemon(fabric):
    d = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}"])
    d.args.append(f"--gaudinet-path={os.path.join(d.workdir, 'gaudinet.json')}")
    d.start()
    wait_until(lambda: health(d)["ready"], 10, what="node ready")
    yield d
    d.cleanup()


def test_ports_take_the_other_host_of_the_switch_subnet_and_route_the_fabric(fabric, daemon):
    for name, (local, peer) in EXPECTED.items():
        assert addresses(fabric, name) == [local]
        route = fabric_route(fabric, name)
        assert route is not None, routes(fabric, name)
        assert route["gateway"] == peer
        assert route["protocol"] in ("158", "rocenet")  # named when rt_protos knows it
        cp = fabric.node_exec(["ping", "-c", "1", "-W", "2", "-I", name, peer],
                              capture_output=True, text=True)
        assert cp.returncode == 0, cp.stdout + cp.stderr


def test_gaudinet_json_lists_every_port(fabric, daemon):
    path = os.path.join(daemon.workdir, "gaudinet.json")
    data = json.load(open(path))["NIC_NET_CONFIG"]
    assert [e["NIC_IP"] for e in data] == ["10.200.1.1", "10.200.2.1", "10.200.3.5"]
    by_ip = {e["NIC_IP"]: e for e in data}
    for port in fabric.ports:
        entry = by_ip[EXPECTED[port["host_ifname"]][0].split("/")[0]]
        assert entry["NIC_MAC"] == port["host_mac"]
        assert entry["SUBNET_MASK"] == "255.255.255.252"
        assert entry["GATEWAY_MAC"] == port["switch_mac"]


def test_description_change_moves_address_routes_and_gaudinet(fabric, daemon):
    fabric.set_description(0, "no-alert 10.200.7.6/30")
    try:
        wait_until(lambda: addresses(fabric, "so0") == ["10.200.7.5/30"], 5,
                   what="the new address")
        wait_until(lambda: (fabric_route(fabric, "so0") or {}).get("gateway") == "10.200.7.6", 5,
                   what="the new route")
        assert not any(r.get("gateway") == "10.200.1.2" for r in routes(fabric, "so0"))
        # Written in the same pass as the kernel change, just after it.
        def gaudinet_ips() -> list[str]:
            with open(os.path.join(daemon.workdir, "gaudinet.json")) as f:
                return [e["NIC_IP"] for e in json.load(f)["NIC_NET_CONFIG"]]
        wait_until(lambda: "10.200.7.5" in gaudinet_ips(), 2, what="gaudinet.json rewritten")
        assert "10.200.1.1" not in gaudinet_ips()
    finally:
        fabric.set_description(0, DESCRIPTIONS[0])
        wait_until(lambda: addresses(fabric, "so0") == ["10.200.1.1/30"], 5,
                   what="the original address back")


def converged(fabric, want: dict[str, str]) -> bool:
    """Every port has exactly the address `want` names and routes the fabric
    via that subnet's switch end."""
    for name, local in want.items():
        if addresses(fabric, name) != [local]:
            return False
        peer = str(ipaddress.ip_interface(local).ip + 1)
        if (fabric_route(fabric, name) or {}).get("gateway") != peer:
            return False
    return True


def conflicts(daemon: Daemon) -> list[str]:
    return [f"{p['name']}: {c['type']}/{c['reason']}" for p in health(daemon)["ports"]
            for c in p.get("conditions", []) if c["type"] == "AddressConflict"]


def test_a_cable_swap_and_a_rotation_converge_now_and_after_a_restart(fabric, daemon):
    home = {"so0": "10.200.1.1/30", "so1": "10.200.2.1/30", "so2": "10.200.3.5/30"}
    swapped = {"so0": "10.200.2.1/30", "so1": "10.200.1.1/30", "so2": "10.200.3.5/30"}
    rotated = {"so0": "10.200.2.1/30", "so1": "10.200.3.5/30", "so2": "10.200.1.1/30"}
    by_local = {local: DESCRIPTIONS[i] for i, local in enumerate(home.values())}

    def cable(want: dict[str, str]) -> None:
        for i, name in enumerate(("so0", "so1", "so2")):
            fabric.set_description(i, by_local[want[name]])

    try:
        cable(swapped)
        wait_until(lambda: converged(fabric, swapped), 10, what="the swap applied")
        assert conflicts(daemon) == []
        cable(rotated)
        wait_until(lambda: converged(fabric, rotated), 10, what="the rotation applied")
        assert conflicts(daemon) == []
        # Recabled while rocenetd is down: the restarted daemon moves them.
        daemon.stop()
        cable(home)
        daemon.start()
        wait_until(lambda: converged(fabric, home), 15, what="home again after a restart")
        wait_until(lambda: health(daemon)["ready"], 10, what="node ready")
        assert "moves to port" in daemon.run_log()
    finally:
        cable(home)
        wait_until(lambda: converged(fabric, home), 10, what="the original cabling")


def test_address_deleted_by_hand_comes_back(fabric, daemon):
    fabric.node_exec(["ip", "addr", "del", "10.200.2.1/30", "dev", "so1"], check=True)
    wait_until(lambda: addresses(fabric, "so1") == ["10.200.2.1/30"], 5, what="the address back")
    wait_until(lambda: fabric_route(fabric, "so1") is not None, 5, what="the route back")


def test_lldpd_stop_degrades_keeps_address_and_recovers(fabric, daemon):
    fabric.stop_lldpd()
    try:
        wait_until(lambda: port_health(daemon, "so2")["healthy"] is False, 5, what="degraded")
        conditions = port_health(daemon, "so2")["conditions"]
        assert conditions[0]["type"] == "LldpExpired"
        assert conditions[0]["reason"] == "Shutdown"
        assert health(daemon)["ready"] is False
        assert addresses(fabric, "so2") == ["10.200.3.5/30"]
        assert fabric_route(fabric, "so2")["gateway"] == "10.200.3.6"
    finally:
        fabric.start_lldpd()
    wait_until(lambda: health(daemon)["ready"], 10, what="healthy again")


def test_restart_changes_nothing(fabric, daemon):
    before = network_state(fabric.node_netns)
    assert daemon.stop() == 0
    after_stop = network_state(fabric.node_netns)
    assert after_stop == before, "\n".join(difflib.unified_diff(
        before.splitlines(), after_stop.splitlines(), lineterm=""))
    daemon.start()
    wait_until(lambda: health(daemon)["ready"], 10, what="ready after restart")
    assert network_state(fabric.node_netns) == before
    assert "configured" not in daemon.run_log()


def test_lldp_and_addressing_metrics(fabric, daemon):
    # Right after a restart the ports are kept healthy while LLDP resumes;
    # wait for the switch's next frames.
    def heard_all():
        t = daemon.metrics()
        return all((metric_value(t, "rocenet_lldp_neighbors", {"device": n}) or 0) == 1
                   for n in EXPECTED) and t

    text = wait_until(heard_all, 5, what="LLDP heard on every port")
    for name in EXPECTED:
        assert metric_value(text, "rocenet_lldp_frames_received_total", {"device": name}) > 0
        assert metric_value(text, "rocenet_port_provisioned", {"device": name}) == 1
        assert metric_value(text, "rocenet_lldp_neighbors", {"device": name}) == 1


BAD = {0: "no-alert 10.200.1.2/29", 1: "no-alert 10.200.2.0/30", 2: "no-alert fd00::2/64",
       3: "garbage"}
BAD_REASONS = {"so0": "PrefixNotSupported", "so1": "PeerIsNetworkAddress", "so2": "NotIpv4",
               "so3": "NoAddress"}


def test_bad_descriptions_are_refused_visibly_and_change_nothing():
    fab = sim.Fabric.up(sim.unique_name("bd"), ports=4, descriptions=BAD)
    d = Daemon(fab.node_netns, [f"--sysfs-root={fab.sysfs_root}"])
    try:
        before = l3_state(fab.node_netns)
        d.start()

        def plans():
            out = json.loads(d.rocectl("addressing", "-o", "json", check=True).stdout)
            return {p["name"]: p for p in out["plans"]}

        wait_until(lambda: all(p["state"] == "PLAN_STATE_REFUSED" for p in plans().values()), 10,
                   what="every plan refused")
        for name, reason in BAD_REASONS.items():
            plan = plans()[name]
            assert plan["reason"] == reason, plan
            assert name in plan["message"], plan
            assert plan["provisioned"] is False
        table = d.rocectl("addressing").stdout
        for reason in BAD_REASONS.values():
            assert reason in table
        # The ports are set up (they start down, as drivers register them);
        # no address, route or rule is added.
        assert l3_state(fab.node_netns) == before
        for p in json.loads(d.rocectl("health", "-o", "json", check=True).stdout)["ports"]:
            assert p["healthy"] is False
    finally:
        d.cleanup()
        fab.down()
