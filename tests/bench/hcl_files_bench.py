#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How fast an allocation's HCL files follow an address the switch moves,
beside the peer that follows the same move: rocenetd's own host
gaudinet.json. One run on a simulated fabric.

A kubelet peer allocates one port through rocenet-device-plugin; the switch
then gives that port a new /30 (a new Port Description), round after round.
Measured from the description change to the new address in the
allocation's gaudinet.json (the device plugin, after rocenetd re-addressed
the port and told it over WatchPorts), and to the new address in the host
gaudinet.json (rocenetd, in the same pass as the kernel change).

Needs root and a built tree:
  tests/bench/hcl_files_bench.py [--rounds 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from device_plugin_test import KubeletPeer, Plugin, all_healthy  # noqa: E402

from harness import ready_daemon, sim  # noqa: E402


def has(path: str, text: str) -> bool:
    try:
        with open(path) as f:
            return text in f.read()
    except FileNotFoundError:
        return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args()
    fabric = sim.Fabric.up(sim.unique_name("hb"), ports=2)
    try:
        with ready_daemon(fabric, timeout=15) as daemon:
            plugin = Plugin(daemon, tempfile.mkdtemp(prefix="rocenet-hcl-bench-"))
            peer = KubeletPeer(plugin.kubelet_dir)
            plugin.start()
            try:
                peer.devices(all_healthy, 10)
                port = next(p["id"] for p in daemon.ports() if p["name"] == "so1")
                reply = peer.call(f"allocate {port}")
                mount = reply["response"]["container_responses"][0]["mounts"][0]["host_path"]
                pod_file = os.path.join(mount, "gaudinet.json")
                host_file = os.path.join(daemon.workdir, "gaudinet.json")
                pod, host = [], []
                for i in range(args.rounds):
                    subnet = f"10.200.{20 + i}"
                    t0 = time.monotonic()
                    fabric.set_description(1, f"no-alert {subnet}.2/30")
                    seen = {}
                    while len(seen) < 2:
                        now = time.monotonic()
                        for name, path in (("pod", pod_file), ("host", host_file)):
                            if name not in seen and has(path, f"{subnet}.1"):
                                seen[name] = (now - t0) * 1000
                        if now - t0 > 10:
                            raise RuntimeError(f"round {i}: not rewritten in 10 s: {seen}")
                        time.sleep(0.001)
                    pod.append(seen["pod"])
                    host.append(seen["host"])
            finally:
                peer.stop()
                plugin.stop()
        ours, theirs = statistics.median(pod), statistics.median(host)
        print(f"address moved by the switch -> gaudinet.json rewritten, {args.rounds} rounds (ms):")
        print(f"  allocation's (device plugin)   median {ours:.1f}, max {max(pod):.1f}")
        print(f"  host's (rocenetd, peer)        median {theirs:.1f}, max {max(host):.1f}")
        print(f"  ratio allocation/host: {ours / theirs:.2f}")
    finally:
        fabric.down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
