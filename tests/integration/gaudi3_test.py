# SPDX-License-Identifier: Apache-2.0
"""An HLS-3 (Gaudi 3) node on a rail-optimised fabric: 8 modules whose
scale-out ports have different NIC indices per module (17, 20, 21 on module
0; 5, 8, 9 on module 1; ...), the k-th scale-out port of every module cabled
to leaf k (its own lldpd, its own /16). rocenetd must see 3 rails of 8 ports,
the device plugin must spread over them, and a cable in the wrong leaf must
be named; a reach from it must say each port's netdev is the driver's
control path."""

from __future__ import annotations

import json
import shutil
import tempfile

import pytest

from harness import Diagd, ready_daemon, wait_until
from kubelet import KubeletPeer, Plugin


@pytest.fixture(scope="module")
def fabric(fabrics):
    return fabrics("g3", platform="gaudi3")


@pytest.fixture(scope="module")
def daemon(fabric):
    with ready_daemon(fabric, timeout=40) as d:
        yield d


def test_three_rails_of_eight_ports_each_on_its_own_leaf(fabric, daemon):
    topology = json.loads(daemon.rocectl("topology", "--format", "json", check=True).stdout)
    assert len(topology["ports"]) == 24
    rails = {r["rail"]: r for r in topology["rails"]}
    assert sorted(rails) == [0, 1, 2], topology["rails"]
    for k, rail in rails.items():
        want = sorted(p["host_ifname"] for p in fabric.ports if p["rail"] == k)
        assert sorted(rail["ports"]) == want and len(want) == 8, rail
        assert rail["switches"] == [fabric.leaf(k)["hostname"]], rail
    # Equal dev_ports do not make a rail on Gaudi 3: dev_port 8 is rail 1 on
    # modules 1 and 2 and no scale-out port elsewhere.
    by_name = {p["name"]: p for p in topology["ports"]}
    assert {by_name[p["host_ifname"]]["port_index"] for p in fabric.ports if p["rail"] == 1} == \
        {20, 8, 15, 3}


def test_a_reach_says_each_port_is_the_drivers_control_path(fabric, daemon):
    """On Gaudi the netdev is the driver's CPU-copied control path, RoCE
    bypassing it: a reach result says so of every scale-out port, with the
    netdev's driver, so that its RTT is not read as RoCE's (the acceptance
    report holds such a port to --max-rtt-control-path)."""
    diagd = Diagd(daemon, ["--node-name=g3"])
    try:
        diagd.start()

        def reach():
            cp = diagd.rocectl("diag", "reach", "--count", "1", "--time-limit", "2s", "-o", "json",
                               timeout=30)
            return cp if cp.returncode in (0, 6) and cp.stdout.strip() else None
        cp = wait_until(reach, 20, interval=0.5, what="rocenet-diagd to have rocenetd's ports")
        ports = json.loads(cp.stdout)["ports"]
        assert len(ports) == 24, [p["port"] for p in ports]
        for p in ports:
            # The simulated netdevs name no driver of their own: the PCI
            # function's, as the simulation binds it, is the port's.
            assert p["netdev_is_control_path"] is True and p["driver"] == "habanalabs", p
    finally:
        diagd.stop()


def test_preferred_allocation_spreads_over_the_rails(fabric, daemon):
    workdir = tempfile.mkdtemp(prefix="rocenet-g3-")
    plugin = Plugin(daemon, workdir)
    peer = KubeletPeer(plugin.kubelet_dir)
    plugin.start()
    try:
        devices = peer.devices(lambda d: len(d) == 24, 10)
        ports = {p["id"]: p for p in daemon.ports()}
        ids = sorted(devices)
        reply = peer.call(f"preferred available={','.join(ids)} must= size=3")
        got = reply["response"]["container_responses"][0]["deviceIDs"]
        assert sorted(ports[i]["rail"] for i in got) == [0, 1, 2], [ports[i] for i in got]
        # Three ports of one module: its three rails, not three equal dev_ports.
        module = next(p for p in ports.values() if p["module_id"] == 5)
        reply = peer.call(f"preferred available={','.join(ids)} must={module['id']} size=3")
        got = reply["response"]["container_responses"][0]["deviceIDs"]
        assert sorted(ports[i]["rail"] for i in got) == [0, 1, 2]
    finally:
        peer.stop()
        plugin.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def test_a_cable_in_another_rails_leaf_is_miscabled_naming_both_sides(fabric, daemon):
    port = next(p for p in fabric.ports if p["module_id"] == 5 and p["rail"] == 0)
    name = port["host_ifname"]

    def conditions() -> list[dict]:
        doc = json.loads(daemon.rocectl("health", "-o", "json", check=True).stdout)
        return next(p for p in doc["ports"] if p["name"] == name).get("conditions", [])

    fabric.recable(port["index"], 1)
    try:
        wait_until(lambda: any(c["type"] == "Miscabled" for c in conditions()), 20,
                   interval=0.2, what=f"{name} miscabled")
        found = next(c for c in conditions() if c["type"] == "Miscabled")
        assert found["reason"] == "WrongSwitch", found
        assert fabric.leaf(1)["hostname"] in found["message"], found
        assert fabric.leaf(0)["hostname"] in found["message"], found
        assert "module 5, rail 0" in found["message"], found
        wide = daemon.rocectl("health", "-o", "wide", check=True).stdout
        assert "Miscabled/WrongSwitch" in wide, wide
        # Only that port: the other 23 are where their rails are.
        doc = json.loads(daemon.rocectl("health", "-o", "json", check=True).stdout)
        assert [p["name"] for p in doc["ports"]
                if any(c["type"] == "Miscabled" for c in p.get("conditions", []))] == [name]
    finally:
        fabric.recable(port["index"], 0)
    wait_until(lambda: not any(c["type"] == "Miscabled" for c in conditions()), 20,
               interval=0.2, what=f"{name} back on its rail")
