"""Self-test of the simulated fabric (tests/sim/fabric.py).

The layout tables run anywhere; everything else needs root, network
namespaces, iproute2 and lldpd, and skips otherwise.
Run: python3 -m pytest tests/integration/sim_test.py
"""

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

import pytest

SIM_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim")
sys.path.insert(0, os.path.abspath(SIM_DIR))

import platforms  # noqa: E402
import simutil  # noqa: E402
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
needs_fabric = pytest.mark.skipif(_SKIP is not None, reason=f"simulated fabric unavailable: {_SKIP}")


@pytest.fixture(scope="module")
def fab():
    """A default fabric with its node ports brought up, as rocenetd would."""
    f = Fabric.up(unique_name("rnt"), ports=3)
    try:
        for i in range(3):
            f.link(i, "up", side="node")
        yield f
    finally:
        f.down()


@pytest.fixture(scope="module")
def g3():
    """A Gaudi 3 HLS-3 node: 8 modules, 3 rails, 3 leaves."""
    f = Fabric.up(unique_name("rg3"), platform="gaudi3")
    try:
        yield f
    finally:
        f.down()


@pytest.fixture
def pod(fab):
    """A pod network namespace, deleted afterwards whatever is left in it."""
    name = f"{fab.name}-pod{os.getpid() % 1000}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        yield name
    finally:
        subprocess.run(["ip", "netns", "delete", name], check=False, capture_output=True)


def ip_json(*args):
    cp = subprocess.run(["ip", "-j", *args], check=True, capture_output=True, text=True)
    return json.loads(cp.stdout)


def ip(*args):
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def carrier(f, ifname):
    cp = f.node_exec(["cat", f"/sys/class/net/{ifname}/carrier"], capture_output=True, text=True)
    return cp.stdout.strip()


def cli(*args):
    return subprocess.run([sys.executable, FABRIC_PY, *args], capture_output=True, text=True, timeout=60)


def wait_until(pred, timeout=2.0, what="condition"):
    """Poll pred every 0.5 ms; returns the seconds it took."""
    t0 = time.monotonic()
    while not pred():
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.0005)
    return time.monotonic() - t0


def entries(f, index, ifname):
    """(class/net/<if> exists, <pci>/net/<if> exists) in the fake sysfs."""
    p = f.all_ports[index]
    net = os.path.join(f.sysfs_root, "bus/pci/devices", p["pci_address"], "net", ifname)
    return os.path.lexists(os.path.join(f.sysfs_root, "class/net", ifname)), os.path.exists(net)


def snapshot(f, ifname):
    """What a reader finds under class/net/<if>: file contents and link targets."""
    d = os.path.join(f.sysfs_root, "class/net", ifname)
    return {n: os.readlink(os.path.join(d, n)) if os.path.islink(os.path.join(d, n))
            else open(os.path.join(d, n)).read() for n in sorted(os.listdir(d))}


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
        assert (p["leaf"], p["rail"], p["switch_netns"], p["miscabled"]) == (0, i, fab.switch_netns, False)
        wait_until(lambda: ip_json("-n", fab.node_netns, "link", "show", p["host_ifname"])[0]["operstate"] == "UP")
        link = ip_json("-n", fab.node_netns, "link", "show", p["host_ifname"])[0]
        assert link["address"] == p["host_mac"] and "UP" in link["flags"]
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
    links = {l["ifname"] for l in ip_json("-n", fab.node_netns, "link", "show")}
    assert "so3" not in links and "so0" in links
    assert not os.path.exists(dev_port)
    assert not os.path.lexists(os.path.join(fab.sysfs_root, "class/net/so3"))
    assert [q["index"] for q in fab.ports] == [0, 1, 2]


# ---- sysfs follows the kernel


@needs_fabric
def test_sysfs_follows_moves_and_renames(fab, pod):
    node = fab.node_netns
    before = snapshot(fab, "so2")
    ip("-n", node, "link", "set", "so2", "netns", pod)
    wait_until(lambda: entries(fab, 2, "so2") == (False, False), what="so2 to leave sysfs")
    ip("-n", pod, "link", "set", "so2", "name", "net1")  # renames in the pod are none of the host's business
    ip("-n", pod, "link", "set", "net1", "netns", node, "name", "so2")
    wait_until(lambda: entries(fab, 2, "so2") == (True, True), what="so2 to come back")
    assert snapshot(fab, "so2") == before
    ip("-n", node, "link", "set", "so2", "name", "rn2")  # it came back down: renaming is allowed
    wait_until(lambda: entries(fab, 2, "rn2") == (True, True), what="the rename")
    assert entries(fab, 2, "so2") == (False, False) and snapshot(fab, "rn2") == before
    assert fab.host_ifname(2) == "rn2"
    # a passthru macvlan on top shares the port's MAC but is no port
    ip("-n", node, "link", "add", "link", "rn2", "name", "rn2m", "type", "macvlan", "mode", "passthru")
    ip("-n", node, "link", "set", "rn2", "name", "so2")
    wait_until(lambda: entries(fab, 2, "so2") == (True, True), what="the rename back")
    assert entries(fab, 2, "rn2m") == (False, False) and fab.host_ifname(2) == "so2"
    ip("-n", node, "link", "del", "rn2m")
    fab.link(2, "up", side="node")
    wait_until(lambda: carrier(fab, "so2") == "1", what="carrier on so2")


# A daemon's view: a link listener in the node namespace that, woken by the
# move of a port out (RTM_DELLINK) or back in (RTM_NEWLINK), looks at
# class/net/<if> until it agrees, and prints how long that took in ms.
LISTENER = r"""
import os, socket, struct, sys, time
root, ifname = sys.argv[1:]
link, name = os.path.join(root, "class/net", ifname), ifname.encode() + b"\0"
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
s.bind((0, 1))
print("READY", flush=True)
present = True
while True:
    data = s.recv(65536)
    heard = time.monotonic()
    ln, typ = struct.unpack_from("IH", data)
    if name not in data[:ln] or typ != (17 if present else 16):
        continue
    present = not present
    while os.path.lexists(link) != present:
        pass
    print((time.monotonic() - heard) * 1000, flush=True)
"""

# Reads every port's dev_port as fast as it can until SIGTERM; prints what
# is not a whole number, then how many it read.
READER = r"""
import os, re, signal, sys
root, reads, stop = sys.argv[1], 0, []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
while not stop:
    for n in os.listdir(os.path.join(root, "class/net")):
        try:
            with open(os.path.join(root, "class/net", n, "dev_port")) as f:
                v = f.read()
        except FileNotFoundError:
            continue
        reads += 1
        if not re.fullmatch(r"\d+\n", v):
            print("BAD", repr(v), flush=True)
print("READS", reads, flush=True)
"""


def _move(fab, pod, out):
    """Start moving so1 out to pod (or back); returns the running ip."""
    node = fab.node_netns
    return subprocess.Popen(["ip", "-n", node if out else pod, "link", "set", "so1", "netns", pod if out else node])


@needs_fabric
def test_sysfs_follower_lag(fab, pod):
    """How long a daemon that looks right after the netlink event still sees
    the old state, over 20 moves out and back."""
    lst = subprocess.Popen(["ip", "netns", "exec", fab.node_netns, sys.executable, "-c", LISTENER,
                            fab.sysfs_root, "so1"], stdout=subprocess.PIPE, text=True)
    try:
        assert lst.stdout.readline().strip() == "READY"
        lags = []
        for move in range(20):
            assert _move(fab, pod, move % 2 == 0).wait() == 0
            lags.append(float(lst.stdout.readline()))
    finally:
        lst.kill()
        lst.wait()
    lags.sort()
    print(f"sysfs follower lag after the netlink event over {len(lags)} moves: median "
          f"{statistics.median(lags):.2f} ms, 90% {lags[17]:.2f} ms, max {lags[-1]:.2f} ms")
    assert lags[-1] < 100
    fab.link(1, "up", side="node")


@needs_fabric
def test_sysfs_readers_never_see_half_an_entry(fab, pod):
    reader = subprocess.Popen([sys.executable, "-c", READER, fab.sysfs_root], stdout=subprocess.PIPE, text=True)
    try:
        for move in range(20):
            assert _move(fab, pod, move % 2 == 0).wait() == 0
            wait_until(lambda: entries(fab, 1, "so1") == ((False, False) if move % 2 == 0 else (True, True)))
    finally:
        reader.terminate()
        seen = reader.communicate()[0]
    assert "BAD" not in seen and int(seen.split("READS")[1]) > 100, seen


@needs_fabric
def test_pod_deleted_with_port_inside_leaves_no_entry(fab, pod):
    p = fab.add_port()
    i = p["index"]
    ip("-n", fab.node_netns, "link", "set", p["host_ifname"], "netns", pod)
    wait_until(lambda: entries(fab, i, p["host_ifname"]) == (False, False))
    ip("netns", "delete", pod)  # the veth dies with it, switch end too
    wait_until(lambda: not fab._switch_end_exists(p), what="the switch end to die")
    time.sleep(0.1)
    assert entries(fab, i, p["host_ifname"]) == (False, False)
    assert fab.host_ifname(i) is None
    again = fab.add_port(i)  # re-plug the dead port
    assert again["index"] == i and entries(fab, i, p["host_ifname"]) == (True, True)
    fab.remove_port(i)
    assert entries(fab, i, p["host_ifname"]) == (False, False)


@needs_fabric
def test_a_dead_follower_is_restarted_and_catches_up(fab, pod):
    old = fab.reload().follower_pid
    os.kill(old, signal.SIGKILL)
    wait_until(lambda: not Fabric.load(fab.name).follower_running(), what="the follower to die")
    ip("-n", fab.node_netns, "link", "set", "so0", "netns", pod)
    time.sleep(0.05)
    assert entries(fab, 0, "so0") == (True, True)  # nobody follows: stale, as the restart must fix
    new = fab.ensure_follower()
    assert new != old and Fabric.load(fab.name).follower_running()
    assert entries(fab, 0, "so0") == (False, False)
    ip("-n", pod, "link", "set", "so0", "netns", fab.node_netns)
    wait_until(lambda: entries(fab, 0, "so0") == (True, True))
    fab.link(0, "up", side="node")


@needs_fabric
def test_cli_errors(fab):
    assert cli("link", fab.name, "9", "down").returncode == 2
    assert cli("set-description", fab.name, "x", "foo").returncode == 2
    assert cli("up", "bad-name").returncode == 2
    assert cli("up", unique_name("rnx"), "--platform", "gaudi9").returncode == 2
    assert cli("up", unique_name("rnx"), "--leaves", "2").returncode == 2
    assert cli("up", unique_name("rnx"), "--platform", "gaudi3", "--ports", "27").returncode == 2
    assert cli("recable", fab.name, "0", "1").returncode == 2  # one leaf only
    assert cli("recable", fab.name, "0", "x").returncode == 2
    cp = cli("up", fab.name)
    assert cp.returncode == 1 and "already exists" in cp.stderr
    assert cli("show", fab.name).returncode == 0


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
        assert p["switch_ifname"] == f"swp{m + 1}" and p["description"] == f"no-alert 10.{200 + rail}.{m + 1}.2/30"
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
        assert f["port_description"] == f"no-alert 10.{200 + k}.6.2/30" and leaf["network"] == f"10.{200 + k}.0.0/16"
        chassis.add(f["chassis_id"])
    assert len(chassis) == 3


@needs_fabric
def test_gaudi3_recable_changes_what_the_port_hears(g3):
    g3.link(15, "up", side="node")  # module 5, rail 0: home is leaf 0, swp6
    p = g3.recable(15, 1)
    assert (p["leaf"], p["switch_netns"], p["switch_ifname"], p["miscabled"]) == (1, f"{g3.name}-sw1", "swp9", True)
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
