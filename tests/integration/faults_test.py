# SPDX-License-Identifier: Apache-2.0
"""rocenet under kill -9, with the real binaries on a simulated fabric:
rocenetd is killed at random moments during 200 CNI ADD/DEL operations
(exec'd as Multus does, several pods and interfaces), restarted, and the
operations go on: after every restart each port is in the host, addressed
from LLDP, or in exactly one pod namespace that the journal records; DEL of
everything brings every port home, addressed.

The loop's random generator is seeded from ROCENET_FAULT_SEED (default: the
time); the seed is printed so a failing run can be replayed. The device
plugin through restarts is in plugin_restarts_test.py, full and read-only
directories in storage_faults_test.py.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time

import pytest
from cni_test import Cni, ip_json

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
    for (ns, _ifname), record in recorded.items():
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
        # Enough of them got through to test something: the kills land at
        # random, and a slow (sanitizer) build under load loses more to them.
        assert succeeded >= OPERATIONS // 5 and most_in_pods >= 2

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


def release(daemon: Daemon, containers, ifnames) -> None:
    """Brings every port home after a failed test: a veth left in a pod
    would die with the pod's namespace and the fabric would lose a port."""
    if daemon.proc is None or daemon.proc.poll() is not None:
        return
    cni = Cni(daemon)
    for container, netns in containers:
        for ifname in ifnames:
            cni.run("DEL", container, netns, ifname, cni.conf())
