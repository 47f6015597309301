#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How fast a configuration change reaches a running rocenetd, beside the
peer of the same change sent as SIGHUP, in one run on a simulated fabric.

The change: log_level flips, published into a directory laid out and
updated as kubelet does a ConfigMap volume (the ..data swap), with
rocenetd given the directory (--config). Measured from the swap (or the
signal) to rocenetd's "configuration reloaded" log line. The watch waits
for 250 ms of quiet after the last event, so that one update is one reload;
that settle time is most of the figure, and kubelet's own sync (about a
minute) dwarfs both.

Needs root and a built tree:
  tests/bench/config_bench.py [--rounds 10]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from config_watch_test import ConfigMapVolume  # noqa: E402

from harness import Daemon, sim, wait_until  # noqa: E402


def reloaded_after(daemon: Daemon, act) -> float:
    start = len(daemon.log())
    t0 = time.monotonic()
    act()
    wait_until(lambda: "configuration reloaded" in daemon.log()[start:], 10, interval=0.002,
               what="the reload")
    return (time.monotonic() - t0) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args()
    fabric = sim.Fabric.up(sim.unique_name("cb"), ports=2)
    daemon = Daemon(fabric.node_netns, [])
    try:
        volume = ConfigMapVolume(os.path.join(daemon.workdir, "config"))
        base = f"sysfs_root: {fabric.sysfs_root}\nlog_level: info\n"
        volume.publish({"config.yaml": base})
        daemon.args.append(f"--config={volume.path}")
        daemon.start()
        daemon.wait_ready(15)
        watched, signalled = [], []
        for i in range(args.rounds):
            # Between debug and info: the reload is logged at info.
            text = base.replace("info", "debug") if i % 2 == 0 else base + "# again\n"
            watched.append(reloaded_after(daemon, lambda: volume.publish({"config.yaml": text})))
            signalled.append(reloaded_after(daemon,
                                            lambda: os.kill(daemon.proc.pid, signal.SIGHUP)))
        ours, peer = statistics.median(watched), statistics.median(signalled)
        print(f"config change reaches rocenetd, {args.rounds} rounds (ms):")
        print(f"  ConfigMap update, watched   median {ours:.1f}, max {max(watched):.1f}")
        print(f"  SIGHUP (peer)               median {peer:.1f}, max {max(signalled):.1f}")
        print(f"  ratio watched/SIGHUP: {ours / peer:.1f} (the 250 ms settle time)")
    finally:
        daemon.cleanup()
        fabric.down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
