"""rocenet-device-plugin against the real rocenetd on a simulated fabric,
with rocenet-kubelet-peer playing kubelet: the v1beta1 protocol over the
real socket layout (kubelet.sock and the plugin's socket in one directory)."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest

from harness import BUILD_DIR, Daemon, binary, metric_value, ready_daemon, wait_until

RESOURCE = "rocenet.io/scale-out-port"
GRACE = 2.0


def peer_binary() -> str:
    path = os.path.join(BUILD_DIR, "tests", "integration", "kubelet_peer", "rocenet-kubelet-peer")
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(f"rocenet-kubelet-peer not built under {BUILD_DIR}")
    return path


class KubeletPeer:
    """rocenet-kubelet-peer: every JSON line it prints lands in `events`."""

    def __init__(self, kubelet_dir: str):
        self.proc = subprocess.Popen([peer_binary(), kubelet_dir], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        self.events: queue.Queue = queue.Queue()
        self.seen: list[dict] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.next(lambda e: e["event"] == "listening", 5)

    def _read(self):
        for line in self.proc.stdout:
            self.events.put(json.loads(line))

    def next(self, pred, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching kubelet event in {timeout}s; saw {self.seen[-5:]}")
            try:
                event = self.events.get(timeout=left)
            except queue.Empty:
                continue
            self.seen.append(event)
            if pred(event):
                return event

    def devices(self, pred, timeout: float) -> dict[str, dict]:
        """The next full device list (by ID) that satisfies pred."""
        event = self.next(lambda e: e["event"] == "devices" and
                          pred({d["ID"]: d for d in e.get("devices", [])}), timeout)
        return {d["ID"]: d for d in event.get("devices", [])}

    def latest_devices(self, settle: float = 0.5) -> dict[str, dict]:
        """The last full device list kubelet has, after `settle` s of quiet."""
        while True:
            try:
                self.seen.append(self.events.get(timeout=settle))
            except queue.Empty:
                break
        last = [e for e in self.seen if e["event"] == "devices"]
        return {d["ID"]: d for d in last[-1].get("devices", [])} if last else {}

    def call(self, line: str, timeout: float = 10) -> dict:
        verb = line.split()[0]
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.next(lambda e: e["event"] == verb, timeout)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


class Plugin:
    def __init__(self, daemon: Daemon, workdir: str, *extra: str):
        self.kubelet_dir = os.path.join(workdir, "device-plugins")
        self.devinfo_dir = os.path.join(workdir, "devinfo")
        self.hcl_dir = os.path.join(workdir, "hcl")
        os.makedirs(self.kubelet_dir, exist_ok=True)
        self.log_path = os.path.join(workdir, "plugin.log")
        self.argv = [binary("rocenet-device-plugin"), f"--daemon-socket={daemon.socket}",
                     f"--kubelet-dir={self.kubelet_dir}", f"--devinfo-dir={self.devinfo_dir}",
                     f"--hcl-dir={self.hcl_dir}", f"--grace-period={GRACE}s",
                     f"--pod-resources-socket={os.path.join(workdir, 'pod-resources', 'kubelet.sock')}",
                     "--pod-resources-interval=0.5s",
                     "--log-level=debug", *extra]
        self.proc: subprocess.Popen | None = None

    def start(self):
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.argv, stdout=log, stderr=log)

    def log(self) -> str:
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self) -> int:
        self.proc.terminate()
        return self.proc.wait(10)


RAILS = {0: "no-alert 10.200.1.2/30", 1: "no-alert 10.200.2.2/30",
         2: "no-alert 10.201.3.2/30", 3: "no-alert 10.201.4.2/30"}


@pytest.fixture(scope="module")
def fabric(fabrics):
    # Two rails: so0/so1 route 10.200.0.0/16, so2/so3 route 10.201.0.0/16.
    return fabrics("dp", ports=4, descriptions=RAILS)


@pytest.fixture(scope="module")
def daemon(fabric):
    with ready_daemon(fabric, timeout=15) as d:
        yield d


@pytest.fixture
def setup(daemon):
    """A kubelet peer, then the plugin, in a fresh kubelet directory."""
    workdir = tempfile.mkdtemp(prefix="rocenet-dp-")
    plugin = Plugin(daemon, workdir)
    peer = KubeletPeer(plugin.kubelet_dir)
    plugin.start()
    peers = [peer]
    yield plugin, peers
    for p in peers:
        p.stop()
    rc = plugin.stop()
    assert rc == 0, plugin.log()
    assert not os.path.exists(os.path.join(plugin.kubelet_dir, "rocenet.io_scale-out-port.sock"))
    # Nothing stale: the device-info files and HCL directories went with it.
    left = [os.path.join(root, name) for top in (plugin.devinfo_dir, plugin.hcl_dir)
            for root, dirs, files in os.walk(top) for name in dirs + files]
    assert left == [], left
    shutil.rmtree(workdir, ignore_errors=True)


def ids_by_name(daemon: Daemon) -> dict[str, str]:
    return {p["name"]: p["id"] for p in daemon.ports()}


def all_healthy(devices: dict) -> bool:
    return bool(devices) and all(d["health"] == "Healthy" for d in devices.values())


def test_registers_and_lists_every_port_healthy(fabric, daemon, setup):
    plugin, (peer,) = setup
    reg = peer.next(lambda e: e["event"] == "register", 5)["request"]
    assert reg["version"] == "v1beta1"
    assert reg["resource_name"] == RESOURCE
    assert reg["endpoint"] == "rocenet.io_scale-out-port.sock"
    assert reg["options"]["get_preferred_allocation_available"] is True
    options = peer.next(lambda e: e["event"] == "options", 5)["response"]
    assert options["get_preferred_allocation_available"] is True
    devices = peer.devices(all_healthy, 5)
    assert set(devices) == set(ids_by_name(daemon).values())
    numa = {p["id"]: p["numa_node"] for p in daemon.ports()}
    for dev_id, dev in devices.items():
        assert dev["topology"]["nodes"] == [{"ID": str(numa[dev_id])}]


def test_switch_end_down_is_unhealthy_within_a_second_and_recovers(fabric, daemon, setup):
    plugin, (peer,) = setup
    peer.devices(all_healthy, 5)
    port = fabric.ports[1]
    dev_id = ids_by_name(daemon)[port["host_ifname"]]
    # The kernel reports a lost carrier on its own schedule (linkwatch runs
    # at most once a second), so the clock starts when the node sees it.
    monitor = subprocess.Popen(["ip", "-n", fabric.node_netns, "monitor", "link"],
                               stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(0.2)
        fabric.link(1, "down")
        for line in monitor.stdout:
            if port["host_ifname"] in line and "NO-CARRIER" in line:
                break
        t0 = time.monotonic()
        devices = peer.devices(lambda d: d.get(dev_id, {}).get("health") == "Unhealthy", 3)
        assert time.monotonic() - t0 < 1.0
        assert all(d["health"] == "Healthy" for i, d in devices.items() if i != dev_id)
        assert len(devices) == len(fabric.ports)  # always the full list
    finally:
        monitor.terminate()
        monitor.wait(5)
        fabric.link(1, "up")
    peer.devices(all_healthy, 15)


def test_kubelet_restart_registers_again_with_the_full_list(fabric, daemon, setup):
    plugin, peers = setup
    first = peers[0]
    first.devices(all_healthy, 5)
    first.stop()
    # A restarting kubelet removes every socket in its directory.
    for name in os.listdir(plugin.kubelet_dir):
        os.unlink(os.path.join(plugin.kubelet_dir, name))
    t0 = time.monotonic()
    second = KubeletPeer(plugin.kubelet_dir)
    peers.append(second)
    second.next(lambda e: e["event"] == "register", 2)
    assert time.monotonic() - t0 < 2.0
    devices = second.devices(all_healthy, 5)
    assert len(devices) == len(fabric.ports)


def test_kubelet_sock_recreated_alone_registers_again(fabric, daemon, setup):
    plugin, peers = setup
    peers[0].devices(all_healthy, 5)
    peers[0].stop()
    second = KubeletPeer(plugin.kubelet_dir)
    peers.append(second)
    second.next(lambda e: e["event"] == "register", 2)
    assert len(second.devices(all_healthy, 5)) == len(fabric.ports)


def test_allocate_writes_devinfo_and_gaudinet_and_rejects_unknown(fabric, daemon, setup):
    plugin, (peer,) = setup
    peer.devices(all_healthy, 5)
    ports = {p["id"]: p for p in daemon.ports()}
    chosen = sorted(ports)[:2]
    reply = peer.call(f"allocate {','.join(chosen)}")
    assert reply["ok"], reply
    container = reply["response"]["container_responses"][0]
    envs = container["envs"]
    assert envs["ROCENET_PORT_IDS"] == ",".join(chosen)
    assert envs["ROCENET_PORT_INTERFACES"] == ",".join(ports[i]["name"] for i in chosen)
    for dev_id in chosen:
        name = f"rocenet.io-scale-out-port-{dev_id}-device.json"
        with open(os.path.join(plugin.devinfo_dir, name)) as f:
            info = json.load(f)
        assert info == {"type": "pci", "version": "1.1.0",
                        "pci": {"pci-address": ports[dev_id]["pci_address"]}}
    # HCL's files: a directory of the allocation's own, mounted read-only.
    mount = container["mounts"][0]
    assert mount["container_path"] == "/etc/habanalabs/rocenet" and mount["read_only"]
    assert envs["HCL_GAUDINET_CONFIG_FILE"] == "/etc/habanalabs/rocenet/gaudinet.json"
    assert envs["HCL_MAC_INFO_FILE"] == "/etc/habanalabs/rocenet/macAddrInfo.json"
    assert sorted(os.listdir(mount["host_path"])) == ["gaudinet.json", "macAddrInfo.json"]
    with open(os.path.join(mount["host_path"], "gaudinet.json")) as f:
        gaudinet = json.load(f)["NIC_NET_CONFIG"]
    plans = {p["port_id"]: p for p in json.loads(
        daemon.rocectl("addressing", "-o", "json", check=True).stdout)["plans"]}
    want = sorted(chosen, key=lambda i: ports[i]["name"])
    assert [e["NIC_MAC"] for e in gaudinet] == [ports[i]["mac"] for i in want]
    assert [e["NIC_IP"] for e in gaudinet] == [plans[i]["local"].split("/")[0] for i in want]
    assert all(e["SUBNET_MASK"] == "255.255.255.252" for e in gaudinet)
    assert [e["GATEWAY_MAC"] for e in gaudinet] == [plans[i]["gateway_mac"] for i in want]
    # macAddrInfo.json: every scale-out port of the functions, by NIC index.
    with open(os.path.join(mount["host_path"], "macAddrInfo.json")) as f:
        info = json.load(f)["MAC_ADDR_INFO"]
    functions = {ports[i]["pci_address"] for i in chosen}
    assert {e["PCI_ID"] for e in info} == functions
    for entry in info:
        assert len(entry["MAC_ADDR_LIST"]) == 24
        on_function = {p["port_index"]: p["mac"] for p in ports.values()
                       if p["pci_address"] == entry["PCI_ID"]}
        for index, mac in enumerate(entry["MAC_ADDR_LIST"]):
            assert mac == on_function.get(index, "ff:ff:ff:ff:ff:ff"), (index, entry)

    bad = peer.call(f"allocate {chosen[0]},no-such-port")
    assert bad["ok"] is False and bad["code"] == 3  # INVALID_ARGUMENT
    assert "no-such-port" in bad["message"]


def allocated_hcl_dir(peer, ids: list[str]) -> tuple[dict, str]:
    reply = peer.call(f"allocate {','.join(ids)}")
    assert reply["ok"], reply
    container = reply["response"]["container_responses"][0]
    return container["envs"], container["mounts"][0]["host_path"]


def test_a_refused_port_is_left_out_of_gaudinet(fabric, daemon, setup):
    """A port whose Port Description is refused has no address: an entry
    with an empty NIC_IP would make HCL refuse the whole file."""
    plugin, (peer,) = setup
    peer.devices(all_healthy, 5)
    ids = ids_by_name(daemon)
    fabric.set_description(3, "no-alert 10.201.4.2/29")
    try:
        wait_until(lambda: any(p["state"] in ("PLAN_STATE_REFUSED", "REFUSED") for p in json.loads(
            daemon.rocectl("addressing", "-o", "json", check=True).stdout)["plans"]
            if p["port_id"] == ids["so3"]), 10, what="so3 refused")
        envs, host_dir = allocated_hcl_dir(peer, [ids["so2"], ids["so3"]])
        with open(os.path.join(host_dir, "gaudinet.json")) as f:
            entries = json.load(f)["NIC_NET_CONFIG"]
        macs = {p["name"]: p["mac"] for p in daemon.ports()}
        assert [e["NIC_MAC"] for e in entries] == [macs["so2"]]
        assert all(e["NIC_IP"] and e["SUBNET_MASK"] for e in entries)
        # The refused port alone: no gaudinet.json at all, and no variable.
        envs, host_dir = allocated_hcl_dir(peer, [ids["so3"]])
        assert "HCL_GAUDINET_CONFIG_FILE" not in envs
        assert os.listdir(host_dir) == ["macAddrInfo.json"]
    finally:
        fabric.set_description(3, RAILS[3])
    wait_until(lambda: daemon.ready(), 15, what="node ready again")


def test_a_changed_address_reaches_the_container_through_its_mount(fabric, daemon, setup):
    """The HCL directory is bind mounted as kubelet does it; the switch gives
    the port another address while the container runs; the container reads
    the new gaudinet.json (a bind-mounted file would keep the old inode)."""
    plugin, (peer,) = setup
    peer.devices(all_healthy, 5)
    ids = ids_by_name(daemon)
    envs, host_dir = allocated_hcl_dir(peer, [ids["so1"]])
    seen = os.path.join(plugin.hcl_dir, "..", "container-view")
    os.makedirs(seen, exist_ok=True)
    script = (f"mount --bind -o ro {host_dir} {seen} && cat {seen}/gaudinet.json && echo --- "
              f"&& read line && cat {seen}/gaudinet.json")
    container = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                                  script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
    try:
        first = ""
        while "---" not in first:
            line = container.stdout.readline()
            if not line:
                pytest.skip(f"cannot bind mount here: {container.stderr.read()}")
            first += line
        assert "10.200.2.1" in first
        fabric.set_description(1, "no-alert 10.200.12.2/30")
        wait_until(lambda: "10.200.12.1" in open(os.path.join(host_dir, "gaudinet.json")).read(),
                   10, what="gaudinet.json rewritten")
        after, _ = container.communicate("go\n", timeout=10)
        entries = json.loads(after)["NIC_NET_CONFIG"]
        assert [e["NIC_IP"] for e in entries] == ["10.200.12.1"]
    finally:
        if container.poll() is None:
            container.kill()
        fabric.set_description(1, RAILS[1])
    wait_until(lambda: daemon.ready(), 15, what="node ready again")


def test_files_go_when_kubelet_no_longer_assigns_the_ports(fabric, daemon, setup):
    """The pod is deleted: kubelet's PodResources no longer lists its ports,
    and the plugin removes their device-info files and HCL directory; the
    other pod's stay."""
    plugin, (peer,) = setup
    peer.devices(all_healthy, 5)
    ids = ids_by_name(daemon)
    gone = peer.call(f"allocate {ids['so0']},{ids['so1']}")
    kept = peer.call(f"allocate {ids['so2']}")
    assert gone["ok"] and kept["ok"], (gone, kept)

    def files(reply) -> list[str]:
        container = reply["response"]["container_responses"][0]
        ports = container["envs"]["ROCENET_PORT_IDS"].split(",")
        out = [os.path.join(plugin.devinfo_dir, f"rocenet.io-scale-out-port-{i}-device.json")
               for i in ports]
        return out + [m["host_path"] for m in container["mounts"]]
    assert all(os.path.exists(f) for f in files(gone) + files(kept))
    assert peer.call(f"delete {gone['pod']}")["ok"]
    wait_until(lambda: not any(os.path.exists(f) for f in files(gone)), 10,
               what="the deleted pod's files removed")
    assert all(os.path.exists(f) for f in files(kept))
    assert "kubelet no longer assigns its ports" in plugin.log()


def test_a_restarted_plugin_writes_the_live_allocations_again(fabric, daemon, setup):
    """The plugin stops (an upgrade): its files go, as the device-info spec
    asks. Started again, it writes the files of every allocation kubelet
    still assigns, at the same paths, so that a container restarted in that
    pod finds its HCL directory; a pod deleted meanwhile gets nothing."""
    plugin, (peer,) = setup
    peer.devices(all_healthy, 5)
    ids = ids_by_name(daemon)
    live = peer.call(f"allocate {ids['so0']},{ids['so1']}")
    dead = peer.call(f"allocate {ids['so3']}")
    assert live["ok"] and dead["ok"]
    mount = live["response"]["container_responses"][0]["mounts"][0]["host_path"]
    before = {name: open(os.path.join(mount, name)).read() for name in os.listdir(mount)}
    assert plugin.stop() == 0
    assert not os.path.exists(mount)
    assert peer.call(f"delete {dead['pod']}")["ok"]
    plugin.start()
    wait_until(lambda: os.path.isdir(mount) and sorted(os.listdir(mount)) == sorted(before),
               10, what="the live allocation's HCL directory written again")
    assert {name: open(os.path.join(mount, name)).read() for name in before} == before
    for port in ("so0", "so1"):
        assert os.path.exists(os.path.join(
            plugin.devinfo_dir, f"rocenet.io-scale-out-port-{ids[port]}-device.json"))
    dead_dir = dead["response"]["container_responses"][0]["mounts"][0]["host_path"]
    assert not os.path.exists(dead_dir)
    assert not os.path.exists(os.path.join(
        plugin.devinfo_dir, f"rocenet.io-scale-out-port-{ids['so3']}-device.json"))


def test_preferred_allocation(fabric, daemon, setup):
    plugin, (peer,) = setup
    peer.devices(all_healthy, 5)
    ids = sorted(p["id"] for p in daemon.ports())
    reply = peer.call(f"preferred available={','.join(ids)} must={ids[2]} size=2")
    assert reply["ok"], reply
    got = reply["response"]["container_responses"][0]["deviceIDs"]
    assert len(got) == 2 and got[0] == ids[2] and got[1] in ids
    again = peer.call(f"preferred available={','.join(reversed(ids))} must={ids[2]} size=2")
    assert again["response"]["container_responses"][0]["deviceIDs"] == got  # deterministic

    # Rails first: with so0 a must, the second port is on another rail. The
    # rail is the scale-out order inside the module: module 0 has so0, so1,
    # so2 (rails 0, 1, 2), module 1 has so3 (rail 0, like so0).
    ports = {p["name"]: p for p in daemon.ports()}
    assert {n: p["rail"] for n, p in ports.items()} == {"so0": 0, "so1": 1, "so2": 2, "so3": 0}
    by_name = {n: p["id"] for n, p in ports.items()}
    reply = peer.call(f"preferred available={','.join(ids)} must={by_name['so0']} size=2")
    got = reply["response"]["container_responses"][0]["deviceIDs"]
    assert got[0] == by_name["so0"]
    assert got[1] in (by_name["so1"], by_name["so2"]), (got, by_name)
    reply = peer.call(f"preferred available={','.join(ids)} must= size=4")
    assert sorted(reply["response"]["container_responses"][0]["deviceIDs"]) == ids


def test_allocated_ports_attach_through_cni_as_multus_does(fabric, daemon, setup):
    plugin, (peer,) = setup
    peer.devices(all_healthy, 5)
    ids = sorted(p["id"] for p in daemon.ports())
    reply = peer.call(f"allocate {ids[0]},{ids[3]}")
    assert reply["ok"], reply
    allocated = reply["response"]["container_responses"][0]["envs"]["ROCENET_PORT_IDS"].split(",")
    macs = {p["id"]: p["mac"] for p in daemon.ports()}
    ns = f"{fabric.name}-podalloc"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    netns = f"/run/netns/{ns}"
    env = {"CNI_COMMAND": "ADD", "CNI_CONTAINERID": "dp-e2e", "CNI_NETNS": netns,
           "CNI_PATH": "/usr/lib/cni", "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "CNI_ARGS": "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=dp-e2e"}
    try:
        for i, dev_id in enumerate(allocated):
            conf = {"cniVersion": "1.0.0", "name": "ai-net", "type": "rocenet",
                    "socket": daemon.socket, "deviceID": dev_id}
            cp = subprocess.run([binary("rocenet")], input=json.dumps(conf),
                                env={**env, "CNI_IFNAME": f"net{i + 1}"}, capture_output=True,
                                text=True, timeout=30)
            assert cp.returncode == 0, cp.stdout + cp.stderr
        links = json.loads(subprocess.run(["ip", "-n", ns, "-j", "link", "show"],
                                          capture_output=True, text=True, check=True).stdout)
        pod_macs = {link["address"] for link in links if link["ifname"] != "lo"}
        assert pod_macs == {macs[i] for i in allocated}
        # The ports left the host's sysfs (where Habana's runtime would look
        # for them); the pod's macAddrInfo.json still has their MACs.
        wait_until(lambda: all(p.get("attached_to") for p in daemon.ports()
                               if p["id"] in allocated), 5, what="both attached")
        time.sleep(0.5)  # a refresh or two after the move
        host_dir = reply["response"]["container_responses"][0]["mounts"][0]["host_path"]
        with open(os.path.join(host_dir, "macAddrInfo.json")) as f:
            listed = {mac for e in json.load(f)["MAC_ADDR_INFO"] for mac in e["MAC_ADDR_LIST"]}
        assert {macs[i] for i in allocated} <= listed, listed
    finally:
        for i, dev_id in enumerate(allocated):
            conf = {"cniVersion": "1.0.0", "name": "ai-net", "type": "rocenet",
                    "socket": daemon.socket, "deviceID": dev_id}
            subprocess.run([binary("rocenet")], input=json.dumps(conf),
                           env={**env, "CNI_COMMAND": "DEL", "CNI_IFNAME": f"net{i + 1}"},
                           capture_output=True, text=True, timeout=30)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    wait_until(lambda: all(p["present"] and not p.get("attached_to") for p in daemon.ports()),
               10, what="the ports back on the host")


def test_a_port_in_a_pod_stays_listed_and_is_judged_inside_the_pod(fabric, daemon, setup):
    plugin, (peer,) = setup
    peer.devices(all_healthy, 5)
    port = next(p for p in daemon.ports() if p["name"] == "so1")
    index = next(p["index"] for p in fabric.ports if p["host_ifname"] == "so1")
    assert peer.call(f"allocate {port['id']}")["ok"]
    ns = f"{fabric.name}-podcable"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    netns = f"/run/netns/{ns}"
    env = {"CNI_CONTAINERID": "dp-cable", "CNI_NETNS": netns, "CNI_IFNAME": "net1",
           "CNI_PATH": "/usr/lib/cni", "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "CNI_ARGS": "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=dp-cable"}
    conf = json.dumps({"cniVersion": "1.0.0", "name": "ai-net", "type": "rocenet",
                       "socket": daemon.socket, "deviceID": port["id"]})

    def cni(command: str) -> subprocess.CompletedProcess:
        return subprocess.run([binary("rocenet")], input=conf, env={**env, "CNI_COMMAND": command},
                              capture_output=True, text=True, timeout=30)

    def listed() -> dict | None:
        return next((p for p in daemon.ports() if p["id"] == port["id"]), None)

    def health() -> dict:
        doc = json.loads(daemon.rocectl("health", "-o", "json", check=True).stdout)
        return next(p for p in doc["ports"] if p["port_id"] == port["id"])

    try:
        cp = cni("ADD")
        assert cp.returncode == 0, cp.stdout + cp.stderr
        # The kernel hides a net device that left the namespace from sysfs.
        wait_until(lambda: not os.path.lexists(os.path.join(fabric.sysfs_root, "class/net/so1")),
                   5, what="so1 gone from the host's sysfs")
        daemon.rocectl("reconcile", check=True)  # a rescan of sysfs
        seen = listed()
        assert seen is not None, daemon.ports()
        assert seen["attached_to"] == netns and seen["present"], seen
        assert seen["pci_address"] == port["pci_address"]
        assert health()["healthy"], health()
        devices = peer.latest_devices()
        assert devices.get(port["id"], {}).get("health") == "Healthy", devices

        # The cable pulled while the job runs: NO-CARRIER inside the pod.
        fabric.link(index, "down")
        wait_until(lambda: not health()["healthy"], 10, what="the attached port unhealthy")
        assert [c["type"] + "/" + c["reason"] for c in health()["conditions"]][0] == \
            "LinkDown/NoCarrier", health()
        peer.devices(lambda d: d.get(port["id"], {}).get("health") == "Unhealthy", 5)
        metrics = daemon.metrics()
        assert metric_value(metrics, "rocenet_port_healthy", {"device": "so1"}) == 0
        assert metric_value(metrics, "rocenet_port_condition",
                            {"device": "so1", "condition": "LinkDown"}) == 1
        assert metric_value(metrics, "rocenet_node_ready") == 0
        table = daemon.rocectl("health", check=True).stdout
        assert "LinkDown/NoCarrier" in table, table

        fabric.link(index, "up")
        wait_until(lambda: health()["healthy"], 15, what="healthy again with the cable back")
        peer.devices(lambda d: d.get(port["id"], {}).get("health") == "Healthy", 5)
    finally:
        fabric.link(index, "up")
        cni("DEL")
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    # Home again: in the host's sysfs, listed, addressed as before.
    wait_until(lambda: os.path.lexists(os.path.join(fabric.sysfs_root, "class/net/so1")), 5,
               what="so1 back in the host's sysfs")
    wait_until(lambda: (listed() or {}).get("present") and not listed().get("attached_to"), 10,
               what="so1 back on the host")
    cp = fabric.node_exec(["ip", "-j", "-4", "addr", "show", "dev", "so1"], capture_output=True,
                          text=True, check=True)
    assert [a["local"] for d in json.loads(cp.stdout) for a in d["addr_info"]] == ["10.200.2.1"]


def test_daemon_down_longer_than_grace_is_all_unhealthy_then_recovers(fabric, daemon, setup):
    plugin, (peer,) = setup
    peer.devices(all_healthy, 5)
    # SIGKILL: a crash says nothing on its way out, so only the grace period
    # can turn the devices Unhealthy.
    daemon.stop(signal.SIGKILL)
    t0 = time.monotonic()
    try:
        peer.devices(lambda d: d and all(x["health"] == "Unhealthy" for x in d.values()),
                     GRACE + 3)
        assert time.monotonic() - t0 >= GRACE - 0.3  # not before the grace period
    finally:
        daemon.start()
    peer.devices(all_healthy, 20)
