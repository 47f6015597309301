#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The rocenet CNI plugin beside containernetworking's host-device + static
IPAM, in one run on the same simulated fabric.

Both move a port into a fresh pod namespace with the same /30 address and the
same /16 route, and back (ADD then DEL), exec'd the same way (CNI_* env,
config on stdin, inside the node's namespace as a runtime on that node would).
Prints the median ADD+DEL cycle of each and the ratio; the plugin's own
start-up (VERSION) separately; and 24 parallel ADDs into 8 pods.

The daemon keeps its attachment journal in its runtime directory, a tmpfs
as /run is on a real host (the harness puts it in /dev/shm).

Each plugin's ADD starts on a quiet node: the bench first waits (untimed)
until rocenetd has finished with the last change, every port healthy and no
new state for 50 ms. rocenetd manages both ports, so without the wait one
plugin's call would pay for the daemon re-addressing the port the other
plugin just gave back (host-device returns it down and unaddressed; the
bench sets it up and rocenetd addresses it again).

Also the floor no plugin can go below: the same kind of port moved into the
pod namespace and back with two bare `ip link set ... netns` commands (one
netlink request and one exec each way), and each plugin's cost above it.

Needs root, a built tree and Debian's containernetworking-plugins:
  tests/bench/cni_bench.py [--cycles 50]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from harness import Daemon, binary, sim, wait_until  # noqa: E402

HOST_DEVICE = "/usr/lib/cni/host-device"


def run(node: str, plugin: str, command: str, container: str, netns: str, ifname: str,
        conf: dict) -> tuple[float, subprocess.CompletedProcess]:
    env = {"CNI_COMMAND": command, "CNI_CONTAINERID": container, "CNI_NETNS": netns,
           "CNI_IFNAME": ifname, "CNI_PATH": "/usr/lib/cni", "PATH": os.environ["PATH"]}
    t0 = time.perf_counter()
    cp = subprocess.run(["ip", "netns", "exec", node, plugin], input=json.dumps(conf), env=env,
                        capture_output=True, text=True)
    elapsed = (time.perf_counter() - t0) * 1000
    if cp.returncode != 0:
        raise RuntimeError(f"{plugin} {command}: {cp.stdout} {cp.stderr}")
    return elapsed, cp


def settle(daemon: Daemon) -> None:
    """Returns once rocenetd is quiet: every port healthy, and the same
    health generation 50 ms apart."""
    def quiet() -> bool:
        first = json.loads(daemon.rocectl("health", "-o", "json").stdout or "{}")
        if not first.get("ready") or first.get("ports_healthy") != first.get("ports_total"):
            return False
        time.sleep(0.05)
        second = json.loads(daemon.rocectl("health", "-o", "json").stdout or "{}")
        return second.get("generation") == first.get("generation")
    wait_until(quiet, 10, what="rocenetd quiet")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cycles", type=int, default=50)
    args = ap.parse_args()
    if not os.access(HOST_DEVICE, os.X_OK):
        print(f"SKIPPED: {HOST_DEVICE} missing (apt-get install containernetworking-plugins)")
        return 0

    fab = sim.Fabric.up(sim.unique_name("cb"), ports=24)
    daemon = Daemon(fab.node_netns, [f"--sysfs-root={fab.sysfs_root}"])
    node = fab.node_netns
    pods = []
    try:
        daemon.start()
        wait_until(lambda: json.loads(daemon.rocectl("health", "-o", "json").stdout or "{}")
                   .get("ready"), 10, what="node ready")
        ports = {p["name"]: p for p in daemon.ports()}

        def new_pod(tag: str) -> str:
            name = f"{fab.name}-pod{tag}"
            subprocess.run(["ip", "netns", "add", name], check=True)
            pods.append(name)
            return f"/run/netns/{name}"

        ours_conf = {"cniVersion": "1.0.0", "name": "ai", "type": "rocenet",
                     "socket": daemon.socket, "deviceID": ports["so0"]["id"]}
        peer_conf = {"cniVersion": "1.0.0", "name": "ai", "type": "host-device", "device": "so1",
                     "ipam": {"type": "static",
                              "addresses": [{"address": "10.200.2.1/30",
                                             "gateway": "10.200.2.2"}],
                              "routes": [{"dst": "10.200.0.0/16", "gw": "10.200.2.2"}]}}
        # A spare veth pair in the node that the daemon does not manage.
        subprocess.run(["ip", "-n", node, "link", "add", "flr0", "type", "veth", "peer", "name",
                        "flr1"], check=True)
        ours, theirs, startup, floor = [], [], [], []
        phases = {"rocenet ADD": [], "rocenet DEL": [], "host-device ADD": [], "host-device DEL": []}
        for i in range(args.cycles):
            settle(daemon)
            netns = new_pod(f"o{i}")
            a, _ = run(node, binary("rocenet"), "ADD", f"o{i}", netns, "net1", ours_conf)
            d, _ = run(node, binary("rocenet"), "DEL", f"o{i}", netns, "net1", ours_conf)
            ours.append(a + d)
            phases["rocenet ADD"].append(a)
            phases["rocenet DEL"].append(d)
            settle(daemon)
            netns = new_pod(f"h{i}")
            a, _ = run(node, HOST_DEVICE, "ADD", f"h{i}", netns, "net1", peer_conf)
            d, _ = run(node, HOST_DEVICE, "DEL", f"h{i}", netns, "net1", peer_conf)
            theirs.append(a + d)
            phases["host-device ADD"].append(a)
            phases["host-device DEL"].append(d)
            # host-device leaves the port down when it gives it back.
            subprocess.run(["ip", "-n", node, "link", "set", "so1", "up"], check=True)
            t, _ = run(node, binary("rocenet"), "VERSION", f"v{i}", netns, "net1", ours_conf)
            startup.append(t)
            pod = os.path.basename(netns)
            t0 = time.perf_counter()
            subprocess.run(["ip", "-n", node, "link", "set", "flr0", "netns", pod], check=True)
            subprocess.run(["ip", "-n", pod, "link", "set", "flr0", "netns", node], check=True)
            floor.append((time.perf_counter() - t0) * 1000)
        print(f"ADD+DEL cycle, {args.cycles} cycles, same /30 and /16 route (ms):")
        print(f"  rocenet                   median {statistics.median(ours):.2f}")
        print(f"  host-device + static      median {statistics.median(theirs):.2f} (peer)")
        print(f"  ratio rocenet/host-device: {statistics.median(ours) / statistics.median(theirs):.2f}")
        print("  " + ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in phases.items()))
        print(f"  rocenet start-up (VERSION, incl. ip netns exec): "
              f"median {statistics.median(startup):.2f} ms")
        bare = statistics.median(floor)
        print(f"  floor: bare move there and back with iproute2: median {bare:.2f}")
        print(f"  above the floor: rocenet {statistics.median(ours) - bare:.2f}, "
              f"host-device + static {statistics.median(theirs) - bare:.2f}")

        # 24 ports into 8 pods at once, any free port.
        for name in list(pods):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
        pods.clear()
        wait_until(lambda: len([p for p in daemon.ports() if p["present"]]) == 24, 10,
                   what="every port back")
        pod_paths = [new_pod(f"p{p}") for p in range(8)]
        targets = [(pod_paths[p], p, i) for p in range(8) for i in range(3)]
        conf = {k: v for k, v in ours_conf.items() if k != "deviceID"}

        def add(target):
            netns, p, i = target
            return run(node, binary("rocenet"), "ADD", f"pod{p}", netns, f"net{i}", conf)

        t0 = time.perf_counter()
        errors = 0
        with concurrent.futures.ThreadPoolExecutor(24) as pool:
            for future in [pool.submit(add, t) for t in targets]:
                try:
                    future.result()
                except RuntimeError as e:
                    errors += 1
                    print(e)
        wall = (time.perf_counter() - t0) * 1000
        print(f"24 parallel ADDs into 8 pods: {wall:.0f} ms wall, {errors} errors")
    finally:
        daemon.cleanup()
        fab.down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
