# SPDX-License-Identifier: Apache-2.0
"""The simulated Gaudi 3 node: modules, dev_ports and rail-optimised cabling
over three leaves, each rail hearing its own leaf, recabling, and HL-338
PCIe cards."""

import json
import os

import platforms  # noqa: E402  (tests/sim, on the path simcheck sets)

from fabric import Fabric, unique_name  # noqa: E402
from simcheck import carrier, cli, ip_json, needs_fabric, wait_until

# ---- Gaudi 3, rail-optimised over three leaves


@needs_fabric
def test_gaudi3_modules_dev_ports_and_cabling(g3):
    root = g3.sysfs_root
    assert len(g3.modules) == 8 and len(g3.ports) == 24 and len(g3.leaves) == 3
    for m in range(8):
        dev = os.path.join(root, f"class/accel/accel{m}/device")
        got = {n: open(os.path.join(dev, n)).read().strip() for n in ("module_id", "device_type", "device")}
        assert got == {"module_id": str(m), "device_type": "GAUDI3", "device": "0x1060"}
        with open(os.path.join(dev, "pci_addr")) as f:
            pci = f.read().strip()
        net = os.path.join(root, "bus/pci/devices", pci, "net")
        ports = sorted(int(open(os.path.join(net, n, "dev_port")).read()) for n in os.listdir(net))
        assert tuple(ports) == platforms.platform("gaudi3").dev_ports(m)
    for p in g3.ports:
        m, rail = divmod(p["index"], 3)
        assert (p["module_id"], p["rail"], p["leaf"]) == (m, rail, rail)
        assert p["switch_netns"] == (f"{g3.name}-sw" if rail == 0 else f"{g3.name}-sw{rail}")
        assert p["switch_ifname"] == f"swp{m + 1}" and \
            p["description"] == f"no-alert 10.{200 + rail}.{m + 1}.2/30"
    assert {ns for ns in os.listdir("/run/netns") if ns.startswith(g3.name + "-sw")} == \
        {f"{g3.name}-sw", f"{g3.name}-sw1", f"{g3.name}-sw2"}


@needs_fabric
def test_gaudi3_each_rail_hears_its_own_leaf(g3):
    ports = [15, 16, 17]  # module 5: dev_ports 2, 3, 7
    for i in ports:
        g3.link(i, "up", side="node")
    caps = [g3.capture(i, timeout=6) for i in ports]
    try:
        frames = [cap.wait_for(lambda f: f["ttl"] > 0, timeout=4) for cap in caps]
    finally:
        for cap in caps:
            cap.close()
    chassis = set()
    for k, f in enumerate(frames):
        leaf = g3.leaf(k)
        assert f is not None, f"nothing from leaf {k}"
        assert f["system_name"] == f"leaf{k}-{g3.name}" and f["chassis_id"] == leaf["chassis_id"]
        assert f["port_description"] == f"no-alert 10.{200 + k}.6.2/30" and \
            leaf["network"] == f"10.{200 + k}.0.0/16"
        chassis.add(f["chassis_id"])
    assert len(chassis) == 3


@needs_fabric
def test_gaudi3_recable_changes_what_the_port_hears(g3):
    g3.link(15, "up", side="node")  # module 5, rail 0: home is leaf 0, swp6
    p = g3.recable(15, 1)
    assert (p["leaf"], p["switch_netns"], p["switch_ifname"], p["miscabled"]) == \
        (1, f"{g3.name}-sw1", "swp9", True)
    assert p["description"] == "no-alert 10.201.9.2/30" and p["home"]["leaf"] == 0
    f = g3.capture_lldp(15, timeout=3, match="10.201.9.2/30")
    assert f and f[0]["system_name"] == f"leaf1-{g3.name}" and f[0]["chassis_id"] == g3.leaf(1)["chassis_id"]
    assert "swp6" not in {link["ifname"] for link in ip_json("-n", f"{g3.name}-sw", "link", "show")}
    cp = cli("recable", g3.name, "15", "2", "--description", "no-alert 10.202.77.2/30")
    assert cp.returncode == 0, cp.stderr
    assert json.loads(cp.stdout)["switch_ifname"] == "swp9"
    assert g3.capture_lldp(15, timeout=3, match="10.202.77.2/30")[0]["system_name"] == f"leaf2-{g3.name}"
    back = g3.reload().recable(15, 0)
    assert (back["leaf"], back["switch_ifname"], back["description"], back["miscabled"]) == \
        (0, "swp6", "no-alert 10.200.6.2/30", False)
    f = g3.capture_lldp(15, timeout=3, match="10.200.6.2/30")
    assert f and f[0]["system_name"] == f"leaf0-{g3.name}" and f[0]["port_id"] == "Ethernet1/6"


@needs_fabric
def test_gaudi3_leaf_operations_touch_one_leaf(g3):
    rail1, rail2 = 19, 20  # module 6, rails 1 and 2
    for i in (rail1, rail2):
        g3.link(i, "up", side="node")
    with g3.capture(rail1) as one, g3.capture(rail2) as two:
        assert one.wait_for(lambda f: f["ttl"] > 0, timeout=3) is not None  # lldpd saw the carrier
        g3.stop_lldpd(leaf=1)
        assert not g3.lldpd_running(1) and g3.lldpd_running(2) and not g3.lldpd_running()
        assert one.wait_for(lambda f: f["ttl"] == 0, timeout=3) is not None
        assert two.wait_for(lambda f: f["ttl"] > 0, timeout=3) is not None
        assert cli("start-lldpd", g3.name, "--leaf", "1").returncode == 0
        assert one.wait_for(lambda f: f["ttl"] > 0, timeout=3) is not None
    g3.set_description(rail2, "no-alert 10.202.99.2/30")
    assert g3.capture_lldp(rail2, timeout=3, match="10.202.99.2/30")
    addrs = ip_json("-n", f"{g3.name}-sw2", "addr", "show", "dev", "swp7")
    assert [a["local"] for a in addrs[0]["addr_info"] if a["family"] == "inet"] == ["10.202.99.2"]
    g3.link(rail2, "down")
    wait_until(lambda: carrier(g3, f"so{rail2}") == "0", what="carrier loss")
    g3.link(rail2, "up")


@needs_fabric
def test_gaudi3_pcie_cards():
    with Fabric.up(unique_name("rgp"), platform="gaudi3-pcie", ports=4) as f:
        assert len(f.leaves) == 4 and [p["port_index"] for p in f.ports] == [8, 9, 10, 11]
        with open(os.path.join(f.sysfs_root, "class/accel/accel0/device/device")) as fh:
            assert fh.read() == "0x1063\n"
        assert [p["description"] for p in f.ports] == [f"no-alert 10.{200 + k}.1.2/30" for k in range(4)]
