# SPDX-License-Identifier: Apache-2.0
"""Self-test of the simulated fabric (tests/sim/fabric.py): the layout tables,
and the default Gaudi 2 fabric (namespaces, links, fake sysfs, LLDP, changes).
The sysfs follower is tested in sim_sysfs_test.py, Gaudi 3 in
sim_gaudi3_test.py.

The layout tables run anywhere; everything else needs root, network
namespaces, iproute2 and lldpd, and skips otherwise.
"""

import json
import os
import subprocess
import time

import platforms  # noqa: E402  (tests/sim, on the path simcheck sets)
import pytest
import simutil  # noqa: E402

from fabric import Fabric, unique_name  # noqa: E402
from simcheck import carrier, cli, entries, ip_json, needs_fabric, wait_until

# ---- layout tables (no root needed)


def test_platform_tables():
    g2, g3p, pcie = (platforms.platform(n) for n in ("gaudi2", "gaudi3", "gaudi3-pcie"))
    assert (g2.pci_device, g3p.pci_device, pcie.pci_device) == ("0x1020", "0x1060", "0x1063")
    assert (g2.device_type, g3p.device_type, pcie.device_type) == ("GAUDI2", "GAUDI3", "GAUDI3")
    assert [g2.dev_ports(m) for m in (0, 7)] == [(8, 22, 23)] * 2
    assert [g3p.dev_ports(m) for m in range(8)] == [
        (17, 20, 21), (5, 8, 9), (5, 8, 9), (17, 20, 21), (14, 15, 19), (2, 3, 7), (2, 3, 7), (14, 15, 19)]
    assert pcie.dev_ports(1) == (8, 9, 10, 11)
    # rail k of module m goes to leaf k, port m+1, in the leaf's own /16
    assert platforms.cabling(17, 3, 3) == {"module": 5, "rail": 2, "leaf": 2, "number": 6}
    assert platforms.leaf_description(2, 6) == "no-alert 10.202.6.2/30"
    assert platforms.cabling(17, 3, 1) == {"module": 5, "rail": 2, "leaf": 0, "number": 18}
    assert platforms.check_leaves(g3p, None, 3) == 3 and platforms.check_leaves(g2, None, 3) == 1
    with pytest.raises(simutil.UsageError):
        platforms.check_leaves(g2, 2, 3)


# ---- the default (Gaudi 2, one leaf) fabric


@needs_fabric
def test_ports_start_down_and_down_cleans_everything():
    name = unique_name("rnd")
    cp = cli("up", name, "--ports", "1")
    assert cp.returncode == 0, cp.stderr
    state = json.loads(cp.stdout)
    f = Fabric.load(name)
    # registered down with no carrier, like habanalabs; the switch end is up, without carrier
    host = ip_json("-n", state["node_netns"], "link", "show", "so0")[0]
    assert "UP" not in host["flags"] and host["operstate"] == "DOWN"
    sw = ip_json("-n", state["switch_netns"], "link", "show", "swp1")[0]
    assert "UP" in sw["flags"] and "NO-CARRIER" in sw["flags"]
    assert f.capture_lldp(0, timeout=1.2) == []
    assert entries(f, 0, "so0") == (True, True)  # a down netdev is still in sysfs
    sw_pids = simutil.pids_in_netns(state["switch_netns"])
    assert state["lldpd"]["pid"] in sw_pids and f.follower_running()
    subprocess.run(["ip", "netns", "add", f"{name}-pod0"], check=True)
    t0 = time.monotonic()
    cp = cli("down", name)
    assert cp.returncode == 0, cp.stderr
    assert time.monotonic() - t0 < 10
    left = [ns for ns in os.listdir("/run/netns") if ns.startswith(name + "-")]
    assert left == []
    assert not any(simutil.pid_alive(p) for p in sw_pids), "lldpd still running"
    assert not simutil.pid_alive(state["follower"]["pid"], state["follower"]["starttime"])
    assert not os.path.exists(state["state_dir"])
    assert cli("down", name).returncode == 0  # idempotent


@needs_fabric
def test_namespaces_and_links(fab):
    ns = set(os.listdir("/run/netns"))
    assert {fab.node_netns, fab.switch_netns} <= ns
    addrs = {a["ifname"]: a for a in ip_json("-n", fab.switch_netns, "addr", "show")}
    for i in range(3):
        p = fab.port(i)
        assert p["host_ifname"] == f"so{i}" and p["switch_ifname"] == f"swp{i + 1}"
        assert (p["leaf"], p["rail"], p["switch_netns"], p["miscabled"]) == \
            (0, i, fab.switch_netns, False)
        wait_until(lambda: ip_json("-n", fab.node_netns, "link", "show",
                                   p["host_ifname"])[0]["operstate"] == "UP")
        link = ip_json("-n", fab.node_netns, "link", "show", p["host_ifname"])[0]
        assert link["address"] == p["host_mac"] and "UP" in link["flags"]
        assert p["switch_ip"] == f"10.200.{i + 1}.2" and p["prefix_len"] == 30
        assert p["expected_local_ip"] == f"10.200.{i + 1}.1"
        owned = [(a["local"], a["prefixlen"]) for a in addrs[p["switch_ifname"]]["addr_info"]
                 if a["family"] == "inet"]
        assert owned == [(p["switch_ip"], 30)]
    # nothing of ours leaked into the root namespace
    root_macs = {link.get("address") for link in ip_json("link", "show")}
    assert not {fab.port(i)["host_mac"] for i in range(3)} & root_macs
    state = Fabric.load(fab.name).state
    assert state["ports"][0]["host_mac"] == fab.port(0)["host_mac"]
    assert state["lldpd"]["pid"] == fab.lldpd_pid and fab.lldpd_running()


@needs_fabric
def test_fake_sysfs(fab):
    root = fab.sysfs_root
    p = fab.port(0)
    pci = p["pci_address"]
    assert pci == "0000:19:00.0" and p["module_id"] == 0
    with open(os.path.join(root, "bus/pci/drivers/habanalabs", pci, "net/so0/dev_port")) as f:
        assert f.read() == "8\n"
    assert [fab.port(i)["port_index"] for i in range(3)] == [8, 22, 23]
    for fname, want in (("module_id", "0\n"), ("device_type", "GAUDI2\n"), ("device", "0x1020\n")):
        with open(os.path.join(root, "class/accel/accel0/device", fname)) as f:
            assert f.read() == want
    dev = os.path.realpath(os.path.join(root, "class/net/so1/device"))
    assert dev == os.path.realpath(os.path.join(root, "bus/pci/devices", pci))
    assert os.path.basename(os.path.realpath(os.path.join(dev, "driver"))) == "habanalabs"
    with open(os.path.join(dev, "vendor")) as f:
        assert f.read() == "0x1da3\n"
    with open(os.path.join(root, "class/net/so2/address")) as f:
        assert f.read() == fab.port(2)["host_mac"] + "\n"
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            full = os.path.join(dirpath, n)
            if os.path.islink(full):
                assert not os.readlink(full).startswith("/"), full
                assert os.path.exists(full), f"dangling {full}"
            elif os.path.isfile(full):
                with open(full) as f:
                    assert f.read().endswith("\n"), full


@needs_fabric
def test_lldp_frames_carry_description(fab):
    p = fab.port(0)
    frames = fab.capture_lldp(0, timeout=3, match=p["description"])
    assert frames, "no LLDP frame with the description reached so0"
    f = frames[0]
    assert f["port_description"] == "no-alert 10.200.1.2/30"
    assert f["port_id"] == "Ethernet1/1" and f["port_id_subtype"] == 7
    assert f["dst_mac"] == "01:80:c2:00:00:0e" and f["src_mac"] == p["switch_mac"]
    assert f["system_name"] == f"leaf-{fab.name}" and f["ttl"] > 0
    assert (f["chassis_id_subtype"], f["chassis_id"]) == (4, fab.leaf(0)["chassis_id"])


@needs_fabric
def test_set_description(fab):
    fab.set_description(1, "no-alert 10.200.7.6/30")
    frames = fab.capture_lldp(1, timeout=3, match="no-alert 10.200.7.6/30")
    assert frames and frames[0]["port_id"] == "Ethernet1/2"
    p = Fabric.load(fab.name).port(1)
    assert (p["switch_ip"], p["expected_local_ip"]) == ("10.200.7.6", "10.200.7.5")
    addrs = ip_json("-n", fab.switch_netns, "addr", "show", "dev", "swp2")
    assert [a["local"] for a in addrs[0]["addr_info"] if a["family"] == "inet"] == ["10.200.7.6"]
    # garbage: nothing parseable, so the switch end owns no address
    fab.set_description(1, "no-alert garbage")
    assert fab.capture_lldp(1, timeout=3, match="no-alert garbage")
    assert fab.port(1)["switch_ip"] is None and fab.port(1)["expected_local_ip"] is None
    addrs = ip_json("-n", fab.switch_netns, "addr", "show", "dev", "swp2")
    assert [a for a in addrs[0]["addr_info"] if a["family"] == "inet"] == []


@needs_fabric
def test_link_down_loses_carrier(fab):
    assert carrier(fab, "so2") == "1"
    fab.link(2, "down")
    assert carrier(fab, "so2") == "0"
    assert fab.capture_lldp(2, timeout=1.5) == []
    fab.link(2, "up")
    assert carrier(fab, "so2") == "1"
    assert fab.capture_lldp(2, timeout=3, match="10.200.3.2/30")


@needs_fabric
def test_stop_and_start_lldpd(fab):
    with fab.capture(0) as cap:
        fab.stop_lldpd()
        assert not fab.lldpd_running()
        bye = cap.wait_for(lambda f: f["ttl"] == 0, timeout=3)
        assert bye is not None and bye["port_id"] == "Ethernet1/1"
        fab.start_lldpd()
        assert fab.lldpd_running()
        hello = cap.wait_for(lambda f: f["ttl"] > 0, timeout=3)
        assert hello is not None and hello["port_description"] == "no-alert 10.200.1.2/30"


@needs_fabric
def test_add_and_remove_port(fab):
    p = fab.add_port()
    assert p["index"] == 3 and p["host_ifname"] == "so3" and p["module_id"] == 1
    assert p["pci_address"] == "0000:29:00.0" and p["port_index"] == 8
    dev_port = os.path.join(fab.sysfs_root, "bus/pci/drivers/habanalabs/0000:29:00.0/net/so3/dev_port")
    with open(dev_port) as f:  # add_port returns once the follower published it
        assert f.read() == "8\n"
    assert fab.capture_lldp(3, timeout=1) == []  # down until someone brings it up
    fab.link(3, "up", side="node")
    assert fab.capture_lldp(3, timeout=3, match="no-alert 10.200.4.2/30")
    fab.remove_port(3)
    links = {link["ifname"] for link in ip_json("-n", fab.node_netns, "link", "show")}
    assert "so3" not in links and "so0" in links
    assert not os.path.exists(dev_port)
    assert not os.path.lexists(os.path.join(fab.sysfs_root, "class/net/so3"))
    assert [q["index"] for q in fab.ports] == [0, 1, 2]
