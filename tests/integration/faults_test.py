"""rocenet under faults, with the real binaries on a simulated fabric:

* kill -9 of rocenetd at random moments during 200 CNI ADD/DEL operations
  (exec'd as Multus does, several pods and interfaces), restart, continue:
  after every restart each port is in the host, addressed from LLDP, or in
  exactly one pod namespace that the journal records; DEL of everything
  brings every port home, addressed.
* the device plugin through kubelet restarts and rocenetd restarts and
  crashes, interleaved: after each, kubelet has the full device list with the
  right health; while rocenetd is gone, every device is Unhealthy.
* a full or read-only runtime directory (where the attachment journal is
  written ahead of every move): ADD is refused with CNI code 11 and a message
  naming the directory and the reason, and nothing changes; DEL of an
  existing attachment fails the same clean way; once there is room again,
  ADD and DEL work. A full or read-only state directory (the host addressing
  record) stops neither.

The kill loop's random generator is seeded from ROCENET_FAULT_SEED (default:
the time); the seed is printed so a failing run can be replayed.
"""

from __future__ import annotations

import json
import os
import queue
import random
import signal
import subprocess
import tempfile
import time

import pytest

from cni_test import Cni, all_namespaces_state, ip_json
from harness import Daemon, binary, wait_until

PORTS = 6
PODS = 4
IFNAMES = ("net1", "net2")
OPERATIONS = 200


@pytest.fixture(scope="module")
def fabric(fabrics):
    return fabrics("hff", ports=PORTS)


def make_pods(fabric, tag: str, count: int) -> list[str]:
    names = [f"{fabric.name}-pod{tag}{i}" for i in range(count)]
    for ns in names:
        subprocess.run(["ip", "netns", "add", ns], check=True)
    return names


def delete_pods(names: list[str]) -> None:
    for ns in names:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def cni_env(command: str, container: str, ns: str, ifname: str) -> dict:
    return {"CNI_COMMAND": command, "CNI_CONTAINERID": container,
            "CNI_NETNS": f"/run/netns/{ns}", "CNI_IFNAME": ifname, "CNI_PATH": "/opt/cni/bin",
            "CNI_ARGS": f"IgnoreUnknown=1;K8S_POD_NAMESPACE=faults;K8S_POD_NAME={container}",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def host_configured(fabric, port: dict) -> bool:
    """The port is in the node namespace, up, with its address from LLDP."""
    links = [link for link in ip_json(fabric.node_netns, "link", "show")
             if link["ifname"] == port["host_ifname"]]
    if not links or "UP" not in links[0]["flags"]:
        return False
    addrs = ip_json(fabric.node_netns, "-4", "addr", "show", "dev", port["host_ifname"])
    have = {f"{a['local']}/{a['prefixlen']}" for d in addrs for a in d.get("addr_info", [])}
    return expected_local(port) in have


def expected_local(port: dict) -> str:
    # The switch owns 10.200.<i+1>.2/30; the port takes the other host.
    i = port["index"]
    return f"10.200.{i + 1}.1/30"


def check_invariant(fabric, daemon: Daemon, pods: list[str]) -> dict[str, str]:
    """Every port is in the host, addressed, or in exactly one pod namespace
    that the journal records as attached there (and every record is true).
    Returns where each port is (MAC -> "host" or namespace)."""
    path = daemon.journal_path
    records = json.load(open(path))["attachments"] if os.path.exists(path) else []
    recorded = {(os.path.basename(r["netns"]), r["ifname"]): r for r in records}
    assert len({r["port_id"] for r in records}) == len(records), ("a port recorded twice", records)
    places: dict[str, list[str]] = {p["host_mac"]: [] for p in fabric.ports}
    host = {link["address"]: link for link in ip_json(fabric.node_netns, "link", "show")}
    for port in fabric.ports:
        if port["host_mac"] in host:
            places[port["host_mac"]].append("host")
            assert host[port["host_mac"]]["ifname"] == port["host_ifname"], host[port["host_mac"]]
    for ns in pods:
        for link in ip_json(ns, "link", "show"):
            if link.get("address") not in places:
                continue
            places[link["address"]].append(ns)
            record = recorded.get((ns, link["ifname"]))
            assert record is not None, ("a port in a pod without a record", ns, link, records)
            assert record["state"] == "attached", record
            assert record["mac"] == link["address"], record
    for mac, where in places.items():
        assert len(where) == 1, (mac, where, records)
    for (ns, ifname), record in recorded.items():
        assert places.get(record["mac"]) == [ns], ("a record that is not true", record, places)
    # The ports at home get their LLDP address back (after a restart the
    # next LLDP frame, at most a second away, re-plans them).
    home = [p for p in fabric.ports if places[p["host_mac"]] == ["host"]]
    wait_until(lambda: all(host_configured(fabric, p) for p in home), 10,
               what="every port in the host configured")
    return {mac: where[0] for mac, where in places.items()}


@pytest.fixture
def kill_daemon(fabric):
    d = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}"])
    d.start()
    wait_until(d.ready, 15, what="node ready")
    yield d
    d.cleanup()


def test_kill_9_at_random_points_of_200_add_del(fabric, kill_daemon):
    daemon = kill_daemon
    seed = int(os.environ.get("ROCENET_FAULT_SEED", str(time.time_ns() % 1_000_000)))
    print(f"ROCENET_FAULT_SEED={seed}")
    rng = random.Random(seed)
    pods = make_pods(fabric, "k", PODS)
    conf = json.dumps(Cni(daemon).conf())
    ids = [p["id"] for p in daemon.ports()]
    # Kills must land while operations run, however fast this build is (an
    # ASan build is several times slower): the window scales with one ADD
    # and DEL measured here.
    t0 = time.monotonic()
    for command in ("ADD", "DEL"):
        cp = subprocess.run([binary("rocenet")], input=conf, capture_output=True, text=True,
                            env=cni_env(command, "fault-probe", pods[0], IFNAMES[0]), timeout=30)
        assert cp.returncode == 0, cp.stdout
    window = max(0.12, 3 * (time.monotonic() - t0))
    t_start = time.monotonic()
    done = kills = in_flight_at_kill = failed = succeeded = recovered = most_in_pods = 0
    try:
        while done < OPERATIONS:
            # A burst of ADD/DEL on random (pod, interface) pairs, all at once
            # as a node full of starting and stopping pods makes them.
            burst = min(OPERATIONS - done, rng.randint(4, 10))
            procs = []
            for _ in range(burst):
                pod = rng.randrange(PODS)
                ifname = rng.choice(IFNAMES)
                command = "ADD" if rng.random() < 0.55 else "DEL"
                stdin = conf
                if command == "ADD" and rng.random() < 0.5:
                    # Multus passes the device the device plugin allocated.
                    stdin = json.dumps({**json.loads(conf), "deviceID": rng.choice(ids)})
                p = subprocess.Popen([binary("rocenet")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=cni_env(command, f"fault{pod}", pods[pod], ifname))
                p.stdin.write(stdin.encode())
                p.stdin.close()
                procs.append(p)
            done += burst
            if rng.random() < 0.85:
                time.sleep(rng.uniform(0.0, window))
                in_flight_at_kill += sum(1 for p in procs if p.poll() is None)
                daemon.proc.send_signal(signal.SIGKILL)
                daemon.proc.wait(5)
                kills += 1
            for p in procs:
                out = p.stdout.read()
                p.wait(30)
                if p.returncode == 0:
                    succeeded += 1
                else:
                    failed += 1
                    error = json.loads(out or "{}")
                    # A dead or busy daemon, a busy or unprovisioned port: try
                    # later; or the interface is in the pod already, with
                    # another port than the one asked for.
                    assert error.get("code") == 11 or "already has" in error.get("msg", ""), out
            if daemon.proc.poll() is not None:
                daemon.start()
                recovered += daemon.run_log().count("recovering attachment")
            where = check_invariant(fabric, daemon, pods)
            most_in_pods = max(most_in_pods, sum(1 for w in where.values() if w != "host"))
            # As kubelet would, go on once the node is ready again (after a
            # restart the ports are provisioned from the next LLDP frame).
            wait_until(daemon.ready, 15, what="node ready")
        elapsed = time.monotonic() - t_start
        print(f"kills within {window * 1000:.0f} ms of a burst's start")
        print(f"{done} operations, {kills} kill -9 ({in_flight_at_kill} operations in flight "
              f"at a kill, {recovered} half-done attachments settled at restart), "
              f"{succeeded} succeeded, {failed} refused, up to {most_in_pods} ports in pods, "
              f"{elapsed:.1f} s")
        assert succeeded > OPERATIONS // 3 and most_in_pods >= 2

        # DEL of everything, as the runtime does when the pods go.
        cni = Cni(daemon)
        for i, ns in enumerate(pods):
            for ifname in IFNAMES:
                rc, out = cni.run("DEL", f"fault{i}", f"/run/netns/{ns}", ifname)
                assert rc == 0, out
        where = check_invariant(fabric, daemon, pods)
        assert set(where.values()) == {"host"}, where
        assert json.loads(daemon.rocectl("ports", "-o", "json").stdout)["ports"]
        wait_until(daemon.ready, 15, what="node ready after DEL of everything")
    finally:
        release(daemon, [(f"fault{i}", f"/run/netns/{ns}") for i, ns in enumerate(pods)], IFNAMES)
        delete_pods(pods)


# --- device plugin through kubelet and daemon restarts ---------------------------

def latest_devices(peer) -> dict | None:
    """The last full device list the kubelet peer has been sent so far."""
    while True:
        try:
            event = peer.events.get_nowait()
        except queue.Empty:
            break
        peer.seen.append(event)
        if event["event"] == "devices":
            peer.last_devices = {d["ID"]: d for d in event.get("devices", [])}
    return getattr(peer, "last_devices", None)


def settles(peer, pred, timeout: float, what: str) -> None:
    wait_until(lambda: pred(latest_devices(peer) or {}), timeout, interval=0.05, what=what)


def stays(peer, pred, seconds: float, what: str) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        devices = latest_devices(peer) or {}
        assert pred(devices), (what, devices)
        time.sleep(0.05)


def test_device_plugin_through_kubelet_and_daemon_restarts(fabric):
    from device_plugin_test import GRACE, KubeletPeer, Plugin

    daemon = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}"])
    daemon.start()
    workdir = tempfile.mkdtemp(prefix="rocenet-dp-faults-")
    plugin = Plugin(daemon, workdir)
    peers = [KubeletPeer(plugin.kubelet_dir)]
    down = fabric.ports[1]
    try:
        wait_until(daemon.ready, 15, what="node ready")
        plugin.start()
        ids = {p["name"]: p["id"] for p in daemon.ports()}
        # so1 loses its switch: its device must stay Unhealthy through it all.
        fabric.link(1, "down")
        sick = ids[down["host_ifname"]]

        def right(devices: dict) -> bool:
            return (set(devices) == set(ids.values()) and
                    all(d["health"] == ("Unhealthy" if i == sick else "Healthy")
                        for i, d in devices.items()))

        def all_unhealthy(devices: dict) -> bool:
            return set(devices) == set(ids.values()) and all(
                d["health"] == "Unhealthy" for d in devices.values())

        def restart_kubelet():
            peers[-1].stop()
            # A restarting kubelet removes every socket in its directory.
            for name in os.listdir(plugin.kubelet_dir):
                os.unlink(os.path.join(plugin.kubelet_dir, name))
            fresh = KubeletPeer(plugin.kubelet_dir)
            peers.append(fresh)
            fresh.next(lambda e: e["event"] == "register", 5)

        settles(peers[-1], right, 15, "the first list, so1 Unhealthy")
        steps = ["kubelet", "daemon-term", "kubelet", "daemon-kill", "daemon-away-kubelet",
                 "kubelet", "daemon-kill"]
        for step in steps:
            if step == "kubelet":
                restart_kubelet()
                settles(peers[-1], right, 10, f"the full list after {step}")
            elif step in ("daemon-term", "daemon-kill"):
                daemon.stop(signal.SIGTERM if step == "daemon-term" else signal.SIGKILL)
                daemon.start()
                wait_until(lambda: daemon.rocectl("ports").returncode == 0, 10,
                           what="rocenetd back")
                # Back within the grace period: kubelet keeps the right list
                # and never sees a false Unhealthy, also once the period ends.
                settles(peers[-1], right, 10, f"the full list after {step}")
                stays(peers[-1], right, GRACE + 1, f"the list after {step}")
            elif step == "daemon-away-kubelet":
                # rocenetd crashes and stays away past the grace period;
                # kubelet restarts meanwhile and must hear the same thing.
                daemon.stop(signal.SIGKILL)
                t0 = time.monotonic()
                settles(peers[-1], all_unhealthy, GRACE + 5, "everything Unhealthy")
                assert time.monotonic() - t0 >= GRACE - 0.3
                restart_kubelet()
                settles(peers[-1], all_unhealthy, 10, "everything Unhealthy, new kubelet")
                daemon.start()
                settles(peers[-1], right, 15, "the right list with rocenetd back")
        print(f"{len(steps)} restarts: {steps}")
    finally:
        fabric.link(1, "up")
        for p in peers:
            p.stop()
        if plugin.proc is not None:
            assert plugin.stop() == 0, plugin.log()
        daemon.cleanup()
        subprocess.run(["rm", "-rf", workdir])


# --- a full or read-only state or runtime directory ---------------------------------

def port_states(daemon: Daemon) -> list[dict]:
    ports = json.loads(daemon.rocectl("ports", "-o", "json", check=True).stdout)["ports"]
    return [{k: v for k, v in p.items() if k != "counters"} for p in ports]


class TinyMount:
    """A tiny tmpfs, to fill up or to remount read-only."""

    def __init__(self, path: str):
        self.path = path
        os.makedirs(path, mode=0o700, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k,mode=0700", "hf-tiny", path],
                       check=True)
        self.filler = os.path.join(path, "filler")

    def break_it(self, fault: str) -> str:
        """Fills it or makes it read-only; returns the kernel's words for it."""
        if fault == "read-only":
            subprocess.run(["mount", "-o", "remount,ro", self.path], check=True)
            return "Read-only file system"
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while True:
                os.write(fd, b"\0" * 512)
        except OSError:
            pass
        finally:
            os.close(fd)
        return "No space left on device"

    def mend(self, fault: str) -> None:
        if fault == "read-only":
            subprocess.run(["mount", "-o", "remount,rw", self.path], check=True)
        elif os.path.exists(self.filler):
            os.unlink(self.filler)

    def unmount(self) -> None:
        subprocess.run(["umount", "-l", self.path], capture_output=True)


@pytest.mark.parametrize("fault", ["full", "read-only"])
def test_journal_directory_full_or_read_only(fabric, fault):
    """The runtime directory holds the attachment journal, written ahead of
    every move: when it cannot be written, ADD and DEL are refused (try again
    later) and change nothing; once it can, they work."""
    workdir = tempfile.mkdtemp(prefix="rocenetd-hff-")
    tiny = TinyMount(os.path.join(workdir, "runtime"))
    daemon = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}"], workdir=workdir,
                    runtime_dir=tiny.path)
    pods = make_pods(fabric, "r" + fault[0], 2)
    netns = [f"/run/netns/{ns}" for ns in pods]
    try:
        daemon.start()
        wait_until(daemon.ready, 15, what="node ready")
        cni = Cni(daemon)
        ports = {p["name"]: p["id"] for p in daemon.ports()}
        rc, held = cni.run("ADD", "held", netns[0], "net1", cni.conf(deviceID=ports["so0"]))
        assert rc == 0, held
        wait_until(lambda: ip_json(pods[0], "link", "show", "net1")[0]["operstate"] == "UP", 5,
                   what="the held port up in its pod")

        reason = tiny.break_it(fault)
        before = all_namespaces_state(fabric)
        listing = port_states(daemon)

        # ADD is refused: try again later, naming the journal's directory and why.
        rc, out = cni.run("ADD", "refused", netns[1], "net1", cni.conf(deviceID=ports["so1"]))
        assert rc == 1, out
        assert out["code"] == 11, out
        assert tiny.path in out["msg"], out
        assert reason in out["msg"], out
        rc, out = cni.run("ADD", "refused", netns[1], "net2", cni.conf())
        assert rc == 1 and out["code"] == 11, out
        # DEL of what is attached cannot be recorded either: it fails the
        # same way and leaves the port where it is, still working.
        rc, out = cni.run("DEL", "held", netns[0], "net1", cni.conf())
        assert rc == 1 and out["code"] == 11, out
        assert reason in out["msg"], out
        # DEL of what never was attached needs no record: it succeeds.
        rc, out = cni.run("DEL", "refused", netns[1], "net1", cni.conf())
        assert rc == 0, out
        assert all_namespaces_state(fabric) == before
        assert port_states(daemon) == listing
        rc, out = cni.run("CHECK", "held", netns[0], "net1", {**cni.conf(), "prevResult": held})
        assert rc == 0, out

        # Room again: everything works.
        tiny.mend(fault)
        rc, out = cni.run("ADD", "refused", netns[1], "net1", cni.conf(deviceID=ports["so1"]))
        assert rc == 0, out
        for container, ns in (("held", netns[0]), ("refused", netns[1])):
            rc, out = cni.run("DEL", container, ns, "net1", cni.conf())
            assert rc == 0, out
        check_invariant(fabric, daemon, pods)
        wait_until(daemon.ready, 15, what="node ready")
    finally:
        tiny.mend(fault)
        release(daemon, [("held", netns[0]), ("refused", netns[1])], ("net1", "net2"))
        daemon.stop()
        tiny.unmount()
        delete_pods(pods)
        subprocess.run(["rm", "-rf", workdir])


def release(daemon: Daemon, containers, ifnames) -> None:
    """Brings every port home after a failed test: a veth left in a pod
    would die with the pod's namespace and the fabric would lose a port."""
    if daemon.proc is None or daemon.proc.poll() is not None:
        return
    cni = Cni(daemon)
    for container, netns in containers:
        for ifname in ifnames:
            cni.run("DEL", container, netns, ifname, cni.conf())


@pytest.mark.parametrize("fault", ["full", "read-only"])
def test_state_directory_full_or_read_only(fabric, fault):
    """The state directory holds the record of the host addressing: when it
    cannot be written, pods still get their ports and give them back, and a
    port that comes home is addressed again."""
    workdir = tempfile.mkdtemp(prefix="rocenetd-hff-")
    tiny = TinyMount(os.path.join(workdir, "state"))
    daemon = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}"], workdir=workdir)
    pods = make_pods(fabric, "s" + fault[0], 1)
    try:
        daemon.start()
        wait_until(daemon.ready, 15, what="node ready")
        tiny.break_it(fault)
        cni = Cni(daemon)
        netns = f"/run/netns/{pods[0]}"
        for ifname in ("net1", "net2"):
            rc, out = cni.run("ADD", "pod", netns, ifname, cni.conf())
            assert rc == 0, out
        for ifname in ("net1", "net2"):
            rc, out = cni.run("DEL", "pod", netns, ifname, cni.conf())
            assert rc == 0, out
        check_invariant(fabric, daemon, pods)
        wait_until(daemon.ready, 15, what="node ready")
    finally:
        tiny.mend(fault)
        release(daemon, [("pod", f"/run/netns/{pods[0]}")], ("net1", "net2"))
        daemon.stop()
        tiny.unmount()
        delete_pods(pods)
        subprocess.run(["rm", "-rf", workdir])
