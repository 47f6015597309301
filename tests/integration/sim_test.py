"""Self-test of the simulated fabric (tests/sim/fabric.py).

Needs root, network namespaces, iproute2 and lldpd; skips otherwise.
Run: python3 -m pytest tests/integration/sim_test.py
"""

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

SIM_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim")
sys.path.insert(0, os.path.abspath(SIM_DIR))

import fabric  # noqa: E402
from fabric import Fabric, unique_name  # noqa: E402

FABRIC_PY = os.path.join(os.path.abspath(SIM_DIR), "fabric.py")


def _netns_usable():
    if os.geteuid() != 0:
        return "needs root"
    for tool in ("ip", "lldpd", "lldpcli"):
        if shutil.which(tool) is None:
            return f"{tool} not installed"
    probe = unique_name("rnprobe")
    cp = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if cp.returncode != 0:
        return f"ip netns add fails: {cp.stderr.strip()}"
    subprocess.run(["ip", "netns", "delete", probe], capture_output=True)
    return None


_SKIP = _netns_usable()
pytestmark = pytest.mark.skipif(_SKIP is not None, reason=f"simulated fabric unavailable: {_SKIP}")


@pytest.fixture(scope="module")
def fab():
    f = Fabric.up(unique_name("rnt"), ports=3)
    try:
        yield f
    finally:
        f.down()


def ip_json(*args):
    cp = subprocess.run(["ip", "-j", *args], check=True, capture_output=True, text=True)
    return json.loads(cp.stdout)


def carrier(f, ifname):
    cp = f.node_exec(["cat", f"/sys/class/net/{ifname}/carrier"], capture_output=True, text=True)
    return cp.stdout.strip()


def cli(*args):
    return subprocess.run([sys.executable, FABRIC_PY, *args], capture_output=True, text=True, timeout=60)


def test_namespaces_and_links(fab):
    ns = set(os.listdir("/run/netns"))
    assert {fab.node_netns, fab.switch_netns} <= ns
    links = {l["ifname"]: l for l in ip_json("-n", fab.node_netns, "link", "show")}
    addrs = {a["ifname"]: a for a in ip_json("-n", fab.switch_netns, "addr", "show")}
    for i in range(3):
        p = fab.port(i)
        assert p["host_ifname"] == f"so{i}" and p["switch_ifname"] == f"swp{i + 1}"
        link = links[p["host_ifname"]]
        assert link["address"] == p["host_mac"]
        assert "UP" in link["flags"] and link["operstate"] == "UP"
        assert p["switch_ip"] == f"10.200.{i + 1}.2" and p["prefix_len"] == 30
        assert p["expected_local_ip"] == f"10.200.{i + 1}.1"
        owned = [(a["local"], a["prefixlen"]) for a in addrs[p["switch_ifname"]]["addr_info"] if a["family"] == "inet"]
        assert owned == [(p["switch_ip"], 30)]
    # nothing of ours leaked into the root namespace
    root_macs = {l.get("address") for l in ip_json("link", "show")}
    assert not {fab.port(i)["host_mac"] for i in range(3)} & root_macs
    state = Fabric.load(fab.name).state
    assert state["ports"][0]["host_mac"] == fab.port(0)["host_mac"]
    assert state["lldpd"]["pid"] == fab.lldpd_pid and fab.lldpd_running()


def test_fake_sysfs(fab):
    root = fab.sysfs_root
    p = fab.port(0)
    pci = p["pci_address"]
    assert pci == "0000:19:00.0" and p["module_id"] == 0
    with open(os.path.join(root, "bus/pci/drivers/habanalabs", pci, "net/so0/dev_port")) as f:
        assert f.read() == "8\n"
    assert [fab.port(i)["port_index"] for i in range(3)] == [8, 22, 23]
    with open(os.path.join(root, "class/accel/accel0/device/module_id")) as f:
        assert f.read() == "0\n"
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


def test_lldp_frames_carry_description(fab):
    p = fab.port(0)
    frames = fab.capture_lldp(0, timeout=3, match=p["description"])
    assert frames, "no LLDP frame with the description reached so0"
    f = frames[0]
    assert f["port_description"] == "no-alert 10.200.1.2/30"
    assert f["port_id"] == "Ethernet1/1" and f["port_id_subtype"] == 7
    assert f["dst_mac"] == "01:80:c2:00:00:0e" and f["src_mac"] == p["switch_mac"]
    assert f["system_name"] == f"leaf-{fab.name}" and f["ttl"] > 0


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


def test_link_down_loses_carrier(fab):
    assert carrier(fab, "so2") == "1"
    fab.link(2, "down")
    assert carrier(fab, "so2") == "0"
    assert fab.capture_lldp(2, timeout=1.5) == []
    fab.link(2, "up")
    assert carrier(fab, "so2") == "1"
    assert fab.capture_lldp(2, timeout=3, match="10.200.3.2/30")


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


def test_add_and_remove_port(fab):
    p = fab.add_port()
    assert p["index"] == 3 and p["host_ifname"] == "so3" and p["module_id"] == 1
    assert p["pci_address"] == "0000:29:00.0" and p["port_index"] == 8
    dev_port = os.path.join(fab.sysfs_root, "bus/pci/drivers/habanalabs/0000:29:00.0/net/so3/dev_port")
    with open(dev_port) as f:
        assert f.read() == "8\n"
    assert fab.capture_lldp(3, timeout=3, match="no-alert 10.200.4.2/30")
    fab.remove_port(3)
    links = {l["ifname"] for l in ip_json("-n", fab.node_netns, "link", "show")}
    assert "so3" not in links and "so0" in links
    assert not os.path.exists(dev_port)
    assert not os.path.lexists(os.path.join(fab.sysfs_root, "class/net/so3"))
    assert [q["index"] for q in fab.ports] == [0, 1, 2]


def test_cli_errors(fab):
    assert cli("link", fab.name, "9", "down").returncode == 2
    assert cli("set-description", fab.name, "x", "foo").returncode == 2
    assert cli("up", "bad-name").returncode == 2
    cp = cli("up", fab.name)
    assert cp.returncode == 1 and "already exists" in cp.stderr
    assert cli("show", fab.name).returncode == 0


def test_down_cleans_everything():
    name = unique_name("rnd")
    cp = cli("up", name, "--ports", "1")
    assert cp.returncode == 0, cp.stderr
    state = json.loads(cp.stdout)
    sw_pids = fabric._pids_in_netns(state["switch_netns"])
    assert state["lldpd"]["pid"] in sw_pids
    subprocess.run(["ip", "netns", "add", f"{name}-pod0"], check=True)
    t0 = time.monotonic()
    cp = cli("down", name)
    assert cp.returncode == 0, cp.stderr
    assert time.monotonic() - t0 < 10
    left = [ns for ns in os.listdir("/run/netns") if ns.startswith(name + "-")]
    assert left == []
    assert not any(fabric._pid_alive(p) for p in sw_pids), "lldpd still running"
    assert not os.path.exists(state["state_dir"])
    assert cli("down", name).returncode == 0  # idempotent
