#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""rocenetd footprint and event latency on a simulated fabric, each beside a
peer measured in the same run.

  footprint: RSS and CPU time of rocenetd managing N ports (default 64) while
             idle, beside the real lldpd serving the same N switch ports.
  latency:   time from a carrier change (switch end set down/up with `ip`) to
             the change arriving through `rocectl ports watch` (WatchPorts),
             beside `ip monitor link` in the node namespace, which sees the
             kernel's event directly.

Needs root and a built tree: tests/bench/daemon_bench.py [--ports 64] [--flips 40]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from harness import Daemon, sim  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


class LineReader:
    """Timestamps each line a process prints."""

    def __init__(self, argv: list[str]):
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        for line in self.proc.stdout:
            self.lines.put((time.monotonic(), line))

    def wait(self, pred, timeout: float = 5.0) -> float:
        deadline = time.monotonic() + timeout
        while True:
            try:
                when, line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError("no matching line") from None
            if pred(line):
                return when

    def drain(self):
        while not self.lines.empty():
            self.lines.get_nowait()

    def close(self):
        self.proc.terminate()
        self.proc.wait(5)


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ports", type=int, default=64)
    ap.add_argument("--flips", type=int, default=40)
    ap.add_argument("--idle-seconds", type=float, default=10.0)
    args = ap.parse_args()

    fab = sim.Fabric.up(sim.unique_name("bench"), ports=args.ports)
    daemon = Daemon(fab.node_netns, [f"--sysfs-root={fab.sysfs_root}"])
    try:
        daemon.start()
        assert len(daemon.ports()) == args.ports
        pid, peer = daemon.proc.pid, fab.lldpd_pid
        time.sleep(1.0)
        c0, p0 = cpu_seconds(pid), cpu_seconds(peer)
        time.sleep(args.idle_seconds)
        c1, p1 = cpu_seconds(pid), cpu_seconds(peer)
        ours_rss, peer_rss = rss_kib(pid), rss_kib(peer)
        print(f"footprint, {args.ports} ports, {args.idle_seconds:.0f} s idle:")
        print(f"  rocenetd RSS {ours_rss / 1024:.1f} MiB, CPU {c1 - c0:.2f} s")
        print(f"  lldpd    RSS {peer_rss / 1024:.1f} MiB, CPU {p1 - p0:.2f} s (peer)")
        print(f"  RSS ratio rocenetd/lldpd: {ours_rss / peer_rss:.2f}")

        watch = LineReader(daemon.rocectl_argv("ports", "watch", "-o", "json"))
        monitor = LineReader(["ip", "-n", fab.node_netns, "monitor", "link"])
        time.sleep(0.5)
        port = fab.ports[0]
        name, switch_if = port["host_ifname"], port["switch_ifname"]
        ours: dict[str, list[float]] = {"down": [], "up": []}
        theirs: dict[str, list[float]] = {"down": [], "up": []}
        for i in range(args.flips):
            want_up = i % 2 == 1
            watch.drain()
            monitor.drain()
            t0 = time.monotonic()
            subprocess.run(["ip", "-n", fab.switch_netns, "link", "set", switch_if,
                            "up" if want_up else "down"], check=True)

            def changed(line: str) -> bool:
                snap = json.loads(line)
                return any(p["name"] == name and p["carrier"] == want_up for p in snap["ports"])

            direction = "up" if want_up else "down"
            ours[direction].append((watch.wait(changed) - t0) * 1000)
            token = "LOWER_UP" if want_up else "NO-CARRIER"
            theirs[direction].append((monitor.wait(lambda line: name in line and token in line) - t0) * 1000)
        watch.close()
        monitor.close()
        # The kernel itself delays carrier-up notifications (linkwatch runs
        # at most once a second), so the two directions are told apart.
        for direction in ("down", "up"):
            a, b = ours[direction], theirs[direction]
            print(f"carrier {direction} -> notification, {len(a)} changes (ms):")
            print(f"  WatchPorts (rocectl)  p50 {pct(a, 50):.2f}  p99 {pct(a, 99):.2f}")
            print(f"  ip monitor link       p50 {pct(b, 50):.2f}  p99 {pct(b, 99):.2f} (peer)")
            print(f"  p50 ratio WatchPorts/ip-monitor: {statistics.median(a) / statistics.median(b):.2f}")
    finally:
        daemon.cleanup()
        fab.down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
