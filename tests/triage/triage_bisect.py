# SPDX-License-Identifier: Apache-2.0
"""The reach benchmark's last part (triage_bench.py): an all-reduce over the
nodes the planted faults left alone, one node's port slowed, bisected by
`rocectl diag allreduce --bisect` until it names that node, its figures
printed beside their goals."""

from __future__ import annotations

import json
import os
import subprocess
import time
from typing import TYPE_CHECKING

import triage_figures as figs

import cluster as sim_cluster
from harness import binary

if TYPE_CHECKING:
    from triage_bench import Fleet

BISECT_MAX_NODES = 64  # a ring's bound (kMaxNodes)
SLOW_MBIT = 100


def bisection(args, fleet: Fleet, say, kept: str, faulty: set[int]) -> bool:
    """The collective's bisection over the nodes the reach faults left
    alone, one of them slowed, --bisect-runs times; True when every run
    named that node alone."""
    ring = [i for i in range(args.nodes) if i not in faulty][:BISECT_MAX_NODES]
    if len(ring) < 4:
        say(f"Bisection: only {len(ring)} nodes away from the faults; a bisection needs 4")
        return True
    slow = ring[len(ring) * 2 // 3]
    hits = [bisect_once(args, fleet, say, kept, ring, slow, k) for k in range(args.bisect_runs)]
    if args.bisect_runs > 1:
        say(f"Bisection: n{slow} named alone in {sum(hits)} of {len(hits)} runs "
            f"(goal: {len(hits)} of {len(hits)})")
    return all(hits)


def bisect_once(args, fleet: Fleet, say, kept: str, ring: list[int], slow: int, k: int) -> bool:
    cl = fleet.cluster
    nodes = ",".join("+".join(sim_cluster.node_address(i, r) for r in range(args.rails)) for i in ring)
    d = fleet.diagds[0]
    argv = [binary("rocectl"), "--socket", d.node.socket, "--diag-socket", d.socket, "diag",
            "allreduce", "--nodes", nodes, "--min-bytes", "1M", "--max-bytes", "1M",
            "--iterations", "3", "--time-limit", "30s", "--bisect", "--min-fraction", "0.25",
            "-o", "json"]
    cl.slow(slow, 0, SLOW_MBIT)
    try:
        started = time.monotonic()
        try:
            cp = subprocess.run(argv, capture_output=True, timeout=args.rocectl_timeout)
        except subprocess.TimeoutExpired:
            raise figs.BenchError(
                f"rocectl diag allreduce --bisect still running after {args.rocectl_timeout} s") from None
        took = time.monotonic() - started
    finally:
        cl.slow(slow, 0, 0)
    figs.save(os.path.join(kept, f"bisection-{k + 1}.json" if k else "bisection.json"), cp.stdout)
    hwm = figs.proc_status(d.proc.pid).get("VmHWM", 0) * 1024
    fleet.check_alive()
    try:
        result = json.loads(cp.stdout) if cp.stdout.strip() else {}
    except ValueError:
        result = {}
    steps = result.get("bisection") or []
    named = result.get("slow_nodes") or []
    whole = steps[0].get("busbw_bytes_per_second", 0) / 1e9 if steps else 0
    run = f" (run {k + 1} of {args.bisect_runs})" if args.bisect_runs > 1 else ""
    say(f"Bisection of an all-reduce over {len(ring)} nodes x {args.rails} rails, n{slow}/so0 at "
        f"{SLOW_MBIT} Mbit/s (1 MiB, --min-fraction 0.25){run}:")
    for line in figs.table([
            figs.Figure("rings run (the whole one included)", str(len(steps))),
            figs.Figure("wall time of rocectl diag allreduce --bisect", f"{took:.1f} s"),
            figs.at_most("coordinator's rocenet-diagd peak RSS (VmHWM)", hwm / (1 << 20),
                         figs.COORDINATOR_MIB, "MiB"),
            figs.Figure("busbw of the whole ring", f"{whole:.3f} GB/s"),
            figs.Figure("rocectl's exit code (6: a failure found)", str(cp.returncode))]):
        say("  " + line)
    for step in steps:
        say(f"    {step.get('depth', 0)}{' pair' if step.get('pair') else ''} "
            f"{figs.span(step.get('nodes') or [])}: "
            f"{step.get('busbw_bytes_per_second', 0) / 1e9:.3f} GB/s"
            f"{'  SLOW' if step.get('slow') else ''}"
            f"{'  followed' if step.get('reason', '').endswith('followed') else ''}")
    say(f"  conclusion: {result.get('bisection_conclusion') or '(none)'}")
    hit = named == [f"n{slow}"]
    say(f"  the slow node named exactly: {'yes' if hit else 'NO'} (named: {', '.join(named) or 'nobody'})")
    if not hit:
        say(f"  rocectl: {cp.stderr.decode(errors='replace').strip()[-500:]}")
    return hit and cp.returncode == 6 and hwm / (1 << 20) <= figs.COORDINATOR_MIB
