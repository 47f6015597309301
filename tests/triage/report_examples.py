#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The acceptance report's examples in docs/examples/, made again from real
runs (docs/development.md#the-acceptance-reports-examples).

The reach benchmark's fabric and daemons (tests/triage/triage_bench.py's
Fleet: the build tree's rocenetd and rocenet-diagd in every node, the leaves'
real lldpd), rocectl diag reach from node 0 three times: healthy with
--matrix, then with the benchmark's faults planted (a cut cable, a dead port,
a leaf down: triage_figures.choose_faults) with --matrix and without. Each
result is kept, and kubectl-rocenet diag report writes its page:

    <out>/reach-acceptance-N-nodes-passing.html    healthy, --matrix
    <out>/reach-acceptance-N-nodes-faults.html     the faults, --matrix
    <out>/reach-acceptance-N-nodes-faults-reduced.html   the same, without

    tests/triage/report_examples.py [--nodes 128 --nodes-per-leaf 16]
        [--out docs/examples] [--results DIR | --from DIR] [--max-rtt 250ms]

--results keeps the three results (healthy-matrix.json, faults-matrix.json,
faults.json: the recorded inputs of the report's tests); --from DIR writes
the pages from results kept so, without a run (no root needed). --max-rtt
is the report's threshold for these ports: veth pairs between namespaces on
a shared CPU, whose round trip is the host's scheduling, not a fabric's
(the page says so beside the figure). Exit 0 when every page was written;
1 when a run broke; 77 without root, network namespaces or lldpd."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

import triage_bench as bench  # noqa: E402
import triage_figures as figs  # noqa: E402

from harness import binary  # noqa: E402


def reach(fleet: bench.Fleet, nodes_file: str, matrix: bool) -> bytes:
    """rocectl diag reach from node 0, its JSON (exit 0 or 6)."""
    d = fleet.diagds[0]
    argv = [binary("rocectl"), "--socket", d.node.socket, "--diag-socket", d.socket, "diag", "reach",
            "--nodes-file", nodes_file, "--count", "3", "--time-limit", "5s", "-o", "json"]
    if matrix:
        argv.append("--matrix")
    cp = subprocess.run(argv, capture_output=True, timeout=300)
    if cp.returncode not in (0, 6) or not cp.stdout.strip():
        raise figs.BenchError(f"rocectl diag reach exited {cp.returncode}: "
                              f"{cp.stderr.decode(errors='replace')[-1000:]}")
    json.loads(cp.stdout)
    return cp.stdout


def render(result: str, page: str, title: str, max_rtt: str) -> int:
    """kubectl-rocenet diag report of result into page; its exit code."""
    cp = subprocess.run([binary("kubectl-rocenet"), "diag", "report", "-f", result, "--html", page,
                         "--max-rtt", max_rtt, "--title", title], capture_output=True, text=True, timeout=60)
    if cp.returncode not in (0, 6, 7, 8):
        raise figs.BenchError(f"kubectl-rocenet diag report {result} exited {cp.returncode}: {cp.stderr}")
    return cp.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=128)
    ap.add_argument("--nodes-per-leaf", type=int, default=16)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "examples"))
    ap.add_argument("--results", help="keep the three results (rocectl's JSON) here")
    ap.add_argument("--from", dest="source", help="write the pages from the results kept in this directory")
    ap.add_argument("--max-rtt", default="250ms", help="the report's --max-rtt for the simulated ports")
    ap.add_argument("--settle", type=float, default=2.0,
                    help="seconds between planting the faults and the run")
    args = ap.parse_args()
    faults = figs.choose_faults(args.nodes, args.nodes_per_leaf)
    if args.source:
        return pages(args, faults, args.source, leaf_name=None)
    why = bench.can_run()
    if why:
        print(f"SKIPPED: {why}")
        return bench.SKIPPED
    for program in ("rocenetd", "rocenet-diagd", "rocectl", "kubectl-rocenet"):
        binary(program)

    work = tempfile.mkdtemp(prefix="rocenet-examples-")
    shm = tempfile.mkdtemp(prefix="rocenet-examples-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    fleet_args = argparse.Namespace(nodes=args.nodes, rails=2, nodes_per_leaf=args.nodes_per_leaf)
    fleet = bench.Fleet(fleet_args, work, shm)
    results = args.results or os.path.join(work, "results")
    os.makedirs(results, exist_ok=True)
    runs: dict[str, bytes] = {}
    try:
        fleet.up(lambda line: print(line, flush=True))
        cl = fleet.cluster
        nodes_file = os.path.join(work, "nodes.txt")
        with open(nodes_file, "w") as f:
            f.write(figs.nodes_file([[bench.sim_cluster.node_address(i, r) for r in range(2)]
                                     for i in range(args.nodes)]))
        runs["healthy-matrix"] = reach(fleet, nodes_file, matrix=True)
        cl.link(faults.cut_node, 0, "down")
        cl.blackhole(faults.dead_node, 1, "on")
        cl.leaf(0, faults.leaf, "down")
        time.sleep(args.settle)  # the nodes' daemons see their carrier go
        runs["faults-matrix"] = reach(fleet, nodes_file, matrix=True)
        runs["faults"] = reach(fleet, nodes_file, matrix=False)
        fleet.check_alive()
    finally:
        left = fleet.down()
        shutil.rmtree(shm, ignore_errors=True)
    if left:
        print(f"report_examples: left behind: {', '.join(left)}", file=sys.stderr)
        return 1
    for name, data in runs.items():
        with open(os.path.join(results, name + ".json"), "wb") as f:
            f.write(data)
    code = pages(args, faults, results, cl.leaf_name(0, faults.leaf))
    shutil.rmtree(work, ignore_errors=True)
    return code


def pages(args, faults: figs.Faults, results: str, leaf_name: str | None) -> int:
    """The three pages from the results in results."""
    n = args.nodes
    if leaf_name is None:  # the leaf the result names
        with open(os.path.join(results, "faults.json")) as f:
            details = json.load(f).get("suspect_details") or []
            leaf_name = next((s["leaf"] for s in details if s.get("kind") == "leaf"),
                             f"{faults.leaf} of rail 0")
    where = (f"{n} nodes x 2 rails, {args.nodes_per_leaf} a leaf, on the simulated fabric "
             f"(tests/triage/report_examples.py)")
    planted = f"n{faults.cut_node}/so0's cable cut, n{faults.dead_node}/so1 dead, leaf {leaf_name} down"
    os.makedirs(args.out, exist_ok=True)
    for name, page, title in (
            ("healthy-matrix", f"reach-acceptance-{n}-nodes-passing.html",
             f"healthy, --matrix: {where}"),
            ("faults-matrix", f"reach-acceptance-{n}-nodes-faults.html",
             f"{planted}, --matrix: {where}"),
            ("faults", f"reach-acceptance-{n}-nodes-faults-reduced.html",
             f"{planted}, without --matrix: {where}")):
        code = render(os.path.join(results, name + ".json"), os.path.join(args.out, page), title,
                      args.max_rtt)
        print(f"{page}: exit {code}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
