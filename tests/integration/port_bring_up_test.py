# SPDX-License-Identifier: Apache-2.0
"""Ports as a real Gaudi node registers them: administratively down, no
carrier, so no LLDP until someone brings them up (hbl_en starts its PHY only
in ndo_open). rocenetd brings every managed port up, in L3 and L2 mode,
before any LLDP is expected, and brings back a port set down by hand."""

from __future__ import annotations

import json
import os

import pytest

from harness import Daemon, metric_value, sim, wait_until


def link(fabric, ifname: str) -> dict:
    cp = fabric.node_exec(["ip", "-j", "link", "show", "dev", ifname], capture_output=True,
                          text=True, check=True)
    return json.loads(cp.stdout)[0]


def addresses(fabric, ifname: str) -> list[str]:
    cp = fabric.node_exec(["ip", "-j", "-4", "addr", "show", "dev", ifname],
                          capture_output=True, text=True, check=True)
    return [f"{a['local']}/{a['prefixlen']}" for d in json.loads(cp.stdout)
            for a in d.get("addr_info", [])]


def set_down(fabric, ifname: str) -> None:
    fabric.node_exec(["ip", "link", "set", ifname, "down"], check=True)


@pytest.fixture
def fabric():
    fab = sim.Fabric.up(sim.unique_name("up"), ports=2)
    yield fab
    fab.down()


def start(fabric, *args: str) -> Daemon:
    # However the fabric made them, the ports are down as the driver leaves
    # them when rocenetd starts.
    for p in fabric.ports:
        set_down(fabric, p["host_ifname"])
        assert "UP" not in link(fabric, p["host_ifname"])["flags"]
    return Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}", *args]).start()


def test_l3_ports_that_start_down_are_brought_up_and_get_their_lldp_address(fabric):
    daemon = start(fabric)
    try:
        wait_until(lambda: addresses(fabric, "so0") == ["10.200.1.1/30"]
                   and addresses(fabric, "so1") == ["10.200.2.1/30"], 15,
                   what="both ports addressed from LLDP")
        for name in ("so0", "so1"):
            assert "UP" in link(fabric, name)["flags"]
            assert link(fabric, name)["operstate"] == "UP"
        health = json.loads(daemon.rocectl("health", "-o", "json", check=True).stdout)
        assert health["ready"], health
        assert "was administratively down; set it up" in daemon.run_log()
        metrics = daemon.metrics()
        assert metric_value(metrics, "rocenet_port_link_set_up_total", {"device": "so0"}) == 1
    finally:
        daemon.cleanup()


def test_l2_ports_that_start_down_are_brought_up(fabric):
    daemon = start(fabric, "--mode=L2")
    try:
        wait_until(lambda: all(link(fabric, p["host_ifname"])["operstate"] == "UP"
                               for p in fabric.ports), 10, what="both ports up")
        assert addresses(fabric, "so0") == []
        wait_until(lambda: json.loads(daemon.rocectl("health", "-o", "json").stdout)["ready"],
                   10, what="node ready in L2")
        # In L2 HCL must find no gaudinet.json: its presence means L3.
        assert not os.path.exists(os.path.join(daemon.workdir, "gaudinet.json"))
    finally:
        daemon.cleanup()


def test_a_port_set_down_by_hand_comes_back_up_and_is_counted(fabric):
    daemon = start(fabric)
    try:
        wait_until(lambda: addresses(fabric, "so0") == ["10.200.1.1/30"], 15,
                   what="so0 addressed")
        set_down(fabric, "so0")
        wait_until(lambda: metric_value(daemon.metrics(), "rocenet_port_link_set_up_total",
                                        {"device": "so0"}) == 2, 10,
                   what="so0 set up a second time")
        wait_until(lambda: link(fabric, "so0")["operstate"] == "UP", 10, what="so0 up again")
        assert addresses(fabric, "so0") == ["10.200.1.1/30"]
        assert daemon.run_log().count("port so0: was administratively down; set it up") == 2
        wait_until(lambda: json.loads(daemon.rocectl("health", "-o", "json").stdout)["ready"],
                   15, what="node ready again")
    finally:
        daemon.cleanup()
