#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""LLDP-derived addressing: how fast rocenetd reacts, beside peers measured in
the same run on the same simulated fabric.

  latency:  from an LLDP frame with a new Port Description arriving on the
            port to the new route being visible in netlink (--changes times),
            beside iproute2 applying the same address and route by hand
            (process start to the route event).
  start:    from starting rocenetd to node ready with --ports ports that
            start down (as drivers register them) and lldpd at a 1 s tx
            interval, beside the floor: the same ports set up by hand at once
            and the time until an LLDP frame has arrived on every port.

Needs root and a built tree: tests/bench/addressing_bench.py [--ports 24] [--changes 100]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)

from netns_probe import Probe  # noqa: E402

from harness import Daemon, sim  # noqa: E402


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def describe(values: list[float]) -> str:
    return f"p50 {pct(values, 50):.2f} ms  p99 {pct(values, 99):.2f} ms  (n={len(values)})"


def wait_ready(daemon: Daemon, timeout: float) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        cp = daemon.rocectl("health", "-o", "json")
        if cp.returncode == 0 and json.loads(cp.stdout).get("ready"):
            return time.monotonic()
        time.sleep(0.01)
    raise TimeoutError("node not ready")


def first_frames(fab, ports: list[str], t0_box: list, act) -> float:
    """Runs act() with a probe listening on every port and returns when the
    last port heard its first LLDP frame after t0_box[0] (set by act)."""
    frames: dict[str, list[float]] = {}
    probe_ready = threading.Event()

    def watch():
        probe = Probe(fab.node_netns, ports)
        probe_ready.set()
        for kind, ifname, _, t in probe.events(4):
            if kind == "lldp":
                frames.setdefault(ifname, []).append(t)

    thread = threading.Thread(target=watch)
    thread.start()
    probe_ready.wait(5)
    act()
    thread.join(15)
    missing = [p for p in ports if not any(t >= t0_box[0] for t in frames.get(p, []))]
    if missing:
        raise RuntimeError(f"no LLDP frame on {', '.join(missing)}")
    return max(min(t for t in times if t >= t0_box[0]) for times in frames.values())


def set_links(fab, ports: list[str], state: str) -> None:
    subprocess.run(["ip", "-n", fab.node_netns, "-batch", "-"], check=True, text=True,
                   input="".join(f"link set {p} {state}\n" for p in ports))


def start_bench(ports: int) -> None:
    """Both sides start from ports that are down, as drivers register them.
    The peer is what any agent must at least do: set every port up at once
    (as Intel's discover does first) and wait for a frame on each."""
    fab = sim.Fabric.up(sim.unique_name("sb"), ports=ports, tx_interval=1)
    names = [p["host_ifname"] for p in fab.ports]
    daemon = Daemon(fab.node_netns, [f"--sysfs-root={fab.sysfs_root}"])
    try:
        time.sleep(1.5)  # lldpd's first burst is over
        peer_t0: list[float] = [0.0]

        def by_hand():
            peer_t0[0] = time.monotonic()
            set_links(fab, names, "up")

        floor = first_frames(fab, names, peer_t0, by_hand)
        peer = (floor - peer_t0[0]) * 1000
        set_links(fab, names, "down")
        time.sleep(1.5)

        t0: list[float] = [0.0]
        ready_box: list[float] = [0.0]

        def start():
            t0[0] = time.monotonic()
            daemon.start(wait=False)
            ready_box[0] = wait_ready(daemon, 15)

        heard = first_frames(fab, names, t0, start)
        ours = (ready_box[0] - t0[0]) * 1000
        if os.environ.get("BENCH_DEBUG"):
            print(daemon.log())
        print(f"start to node ready, {ports} ports that start down, tx interval 1 s:")
        print(f"  rocenetd ready                            {ours:.0f} ms "
              f"(every port heard after {(heard - t0[0]) * 1000:.0f} ms)")
        print(f"  ports set up by hand, a frame on each     {peer:.0f} ms (floor, peer)")
        print(f"  ratio ready/floor: {ours / peer:.2f}; {ours - peer:.0f} ms after the floor")
    finally:
        daemon.cleanup()
        fab.down()


def latency_bench(changes: int) -> None:
    fab = sim.Fabric.up(sim.unique_name("lb"), ports=2)
    daemon = Daemon(fab.node_netns, [f"--sysfs-root={fab.sysfs_root}"])
    ours: list[float] = []
    theirs: list[float] = []
    try:
        daemon.start()
        wait_ready(daemon, 10)
        result: dict = {}

        def measure():
            probe = Probe(fab.node_netns, ["so0"])
            result["probe"] = probe

        t = threading.Thread(target=measure)
        t.start()
        t.join()
        probe = result["probe"]
        # Each change moves so0 between two subnets.
        for i in range(changes):
            peer = f"10.201.{i % 2}.2"
            text = f"no-alert {peer}/30"
            done = threading.Event()
            times: dict[str, float] = {}

            def collect():
                for kind, who, frame, when in probe.events(5):
                    if kind == "lldp" and frame is not None and text.encode() in frame:
                        times.setdefault("frame", when)
                    if kind == "route" and who == peer and "frame" in times:
                        times["route"] = when
                        break
                done.set()

            # The probe's thread must be the one in the namespace.
            worker = threading.Thread(target=collect)
            worker.start()
            fab.lldpcli("configure", "ports", "swp1", "lldp", "portdescription", text)
            worker.join(6)
            if "route" not in times:
                raise RuntimeError(f"change {i}: no route for {peer}")
            ours.append((times["route"] - times["frame"]) * 1000)

        # The peer: iproute2 doing the same by hand on so1.
        for i in range(changes):
            peer = f"10.202.{i % 2}.2"
            local = f"10.202.{i % 2}.1/30"
            times = {}

            def collect_route():
                for kind, who, _, when in probe.events(5):
                    if kind == "route" and who == peer:
                        times["route"] = when
                        break

            worker = threading.Thread(target=collect_route)
            worker.start()
            t0 = time.monotonic()
            subprocess.run(["ip", "-n", fab.node_netns, "addr", "replace", local, "dev", "so1"],
                           check=True)
            # A destination of its own each time: replacing an identical route
            # would send no event.
            subprocess.run(["ip", "-n", fab.node_netns, "route", "replace",
                            f"10.{210 + i // 256}.{i % 256}.0/24", "via", peer, "dev", "so1"],
                           check=True)
            worker.join(6)
            theirs.append((times["route"] - t0) * 1000)
            subprocess.run(["ip", "-n", fab.node_netns, "addr", "del", local, "dev", "so1"],
                           check=True)
        print(f"LLDP frame -> address and route in netlink, {changes} description changes:")
        print(f"  rocenetd           {describe(ours)}")
        print(f"  iproute2 by hand   {describe(theirs)} (peer)")
        print(f"  p50 ratio rocenetd/iproute2: {statistics.median(ours) / statistics.median(theirs):.2f}")
    finally:
        daemon.cleanup()
        fab.down()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ports", type=int, default=24)
    ap.add_argument("--changes", type=int, default=100)
    args = ap.parse_args()
    latency_bench(args.changes)
    start_bench(args.ports)
    return 0


if __name__ == "__main__":
    sys.exit(main())
