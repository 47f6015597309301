#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The reach benchmark: rocectl diag reach over a whole simulated fabric
with planted faults (docs/development.md#the-reach-benchmark).

Real: rocenetd and rocenet-diagd of the build tree in every node's network
namespace (addressed from LLDP by the real lldpd of each leaf switch),
rocectl. Simulated (tests/sim/cluster.py): N nodes x R rails, each rail K
nodes a leaf switch under a spine.

Steps, each figure printed (with its goal where it has one) and appended to
<build>/triage-figures.txt:

 1. the cluster up and both daemons started on every node: the set-up time,
    and each daemon's memory per node (VmRSS, and RssAnon, its private
    part; mean and max);
 2. a healthy run from node 0 (rocectl diag reach --nodes-file, every
    node by its daemon's addresses on every rail): it must pass and name no
    suspect;
 3. faults of every kind the reach stage names, at once (triage_figures.
    choose_faults: each where no node is cut off from node 0 on both
    rails): a cut cable, a lossy port (the switch drops a share of its
    packets) and a leaf down on rail 0, a leaf's uplink with a smaller MTU
    than the ports' on rail 0, a dead port (carrier and address, no packet
    through), a link with a smaller MTU and a leaf's uplink down on rail 1,
    and one node's rocenet-diagd stopped; the run again: its wall time, the
    coordinating rocenet-diagd's peak RSS (VmHWM), the result's size, the
    plan's probes, whether each fault was named exactly and nothing else,
    and the stopped daemon's node listed as not tested and no suspect;
 4. the collective's bisection: the gray faults and the uplink taken off,
    one port of a node away from the rest shaped to 100 Mbit/s both ways
    (cluster.py slow), then rocectl diag allreduce --bisect over up to 64
    nodes the faults left alone (a ring takes 64 at most): its runs, wall
    time, the coordinator's peak RSS, and whether it named that node and no
    other;
 5. the plan's figures at 512 nodes x 24 rails, 32 a leaf
    (triage_plan_figures of the build tree, tests/bench), when built;
 6. everything down, nothing left behind.

    tests/triage/triage_bench.py --nodes N --nodes-per-leaf K [--rails 2]

Exit status: 0 when every goal was met and every fault named exactly; 1
when a goal was missed, a fault misnamed, a suspect named that was not
planted, or the run broke (a daemon died, a node never listened); 2 a bad
argument; 77 (CTest: skipped) without root, network namespaces or lldpd.
Everything it started is stopped on every exit; the daemons' logs and the
results of a failed run are kept in <build>/triage-logs/."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
sys.path.insert(0, os.path.join(ROOT, "tests", "sim"))

import triage_figures as figs  # noqa: E402
from triage_bisect import bisection  # noqa: E402

import cluster as sim_cluster  # noqa: E402
from harness import Daemon, Diagd, binary  # noqa: E402

SKIPPED = 77
FIGURES = "triage-figures.txt"
LOGS = "triage-logs"
DATA_PORT = 50153
# Daemons started at once: each batch is waited for before the next.
START_BATCH = 32
PLAN_FIGURES_ARGS = ["--nodes", "512", "--rails", "24", "--nodes-per-leaf", "32"]


def build_dir() -> str:
    """CTest's build tree (ROCENET_BUILD_DIR), or build/ for a run by hand."""
    return os.environ.get("ROCENET_BUILD_DIR") or os.path.join(ROOT, "build")


class Report:
    """Lines printed as they come and appended to the figures file."""

    def __init__(self, path: str):
        self.path = path
        os.makedirs(os.path.dirname(path), exist_ok=True)

    def __call__(self, line: str = "") -> None:
        print(line, flush=True)
        with open(self.path, "a") as f:
            f.write(line + "\n")


def progress(msg: str) -> None:
    print(f"triage_bench: {msg}", file=sys.stderr, flush=True)


class Fleet:
    """The cluster and its daemons: rocenetd and rocenet-diagd per node."""

    def __init__(self, args, work: str, shm: str):
        self.args = args
        self.work = work
        self.shm = shm
        self.cluster: sim_cluster.Cluster | None = None
        self.nodes: list[Daemon] = []
        self.diagds: list[Diagd] = []
        # Nodes whose rocenet-diagd was stopped on purpose.
        self.stopped: set[int] = set()
        self.secret = os.path.join(work, "secret")

    def up(self, say) -> None:
        args = self.args
        self.available_before = figs.mem_available()
        started = time.monotonic()
        self.cluster = sim_cluster.Cluster.up(sim_cluster.fabric.unique_name("tb"), nodes=args.nodes,
                                              rails=args.rails, nodes_per_leaf=args.nodes_per_leaf)
        cluster_s = time.monotonic() - started
        with open(self.secret, "w", encoding="utf-8") as f:
            f.write(os.urandom(24).hex() + "\n")
        cl = self.cluster
        for i in range(args.nodes):
            node = Daemon(cl.node_netns(i), ["--gaudi=false", "--interfaces=so*",
                                             f"--sysfs-root={cl.sysfs_root(i)}"],
                          workdir=os.path.join(self.work, f"n{i}"),
                          runtime_dir=os.path.join(self.shm, f"n{i}"))
            os.makedirs(node.runtime_dir, exist_ok=True)
            os.makedirs(os.path.join(node.workdir, "features.d"), exist_ok=True)
            self.nodes.append(node)
            self.diagds.append(Diagd(node, [f"--node-name=n{i}", f"--secret-file={self.secret}",
                                            f"--validation-file={node.workdir}/features.d/rocenet-validated"]))
        step = time.monotonic()
        self._start(self.nodes, "rocenetd")
        rocenetd_s = time.monotonic() - step
        step = time.monotonic()
        self._start(self.diagds, "rocenet-diagd")
        diagd_s = time.monotonic() - step
        step = time.monotonic()
        self._wait_listening()
        listening_s = time.monotonic() - step
        total = time.monotonic() - started
        say(f"Set-up, {args.nodes} nodes x {args.rails} rails, {args.nodes_per_leaf} nodes a leaf "
            f"({cl.leaves_per_rail} leaves a rail under a spine): {total:.1f} s")
        say(f"  namespaces, cables, leaves' lldpd ready: {cluster_s:.1f} s; rocenetd started: "
            f"{rocenetd_s:.1f} s; rocenet-diagd started: {diagd_s:.1f} s; every port addressed "
            f"and every data port listening: {listening_s:.1f} s")

    def _start(self, daemons: list[Daemon], what: str) -> None:
        """Starts the daemons in batches, each batch waited for until every
        daemon of it serves its metrics."""
        for first in range(0, len(daemons), START_BATCH):
            batch = daemons[first:first + START_BATCH]
            for d in batch:
                d.start(wait=False)
            pending = list(batch)
            deadline = time.monotonic() + 30
            while pending:
                for d in list(pending):
                    if d.proc.poll() is not None:
                        raise figs.BenchError(f"{what} in {d.netns} exited {d.proc.returncode}:\n"
                                              f"{d.log()[-2000:]}")
                    if "serving metrics" in d.run_log():
                        pending.remove(d)
                if pending and time.monotonic() > deadline:
                    raise figs.BenchError(f"{what} not serving after 30 s in "
                                          f"{', '.join(d.netns for d in pending[:8])}")
                time.sleep(0.05)

    def _wait_listening(self) -> None:
        """Until every node's rocenet-diagd listens on every port's address
        (rocenetd addressed it from LLDP)."""
        want = {i: [f"listening on {sim_cluster.node_address(i, r)}:{DATA_PORT}"
                    for r in range(self.args.rails)] for i in range(self.args.nodes)}
        limit = 60 + self.args.nodes * 0.5
        deadline = time.monotonic() + limit
        while want:
            for i in list(want):
                d = self.diagds[i]
                for daemon in (self.nodes[i], d):
                    if daemon.proc.poll() is not None:
                        raise figs.BenchError(f"{daemon.program} of n{i} exited "
                                              f"{daemon.proc.returncode}:\n{daemon.log()[-2000:]}")
                log = d.log()
                if all(line in log for line in want[i]):
                    del want[i]
            if want and time.monotonic() > deadline:
                raise figs.BenchError(f"not addressed and listening after {limit:.0f} s: "
                                      f"{', '.join(f'n{i}' for i in list(want)[:16])}")
            time.sleep(0.2)

    def stop_diagd(self, i: int) -> None:
        """Stops node i's rocenet-diagd, as an OOM kill or a rolling update
        would: its node is still up, its rocenetd too."""
        self.stopped.add(i)
        self.diagds[i].stop()

    def check_alive(self) -> None:
        for i, d in enumerate(self.nodes + self.diagds):
            if i - len(self.nodes) in self.stopped:
                continue
            if d.proc is not None and d.proc.poll() is not None:
                raise figs.BenchError(f"{d.program} in {d.netns} exited {d.proc.returncode}:\n"
                                      f"{d.log()[-2000:]}")

    def memory(self) -> dict[str, list[dict[str, int]]]:
        return {what: [figs.proc_status(d.proc.pid) for d in daemons]
                for what, daemons in (("rocenetd", self.nodes), ("rocenet-diagd", self.diagds))}

    def keep_logs(self, dest: str) -> None:
        for i, node in enumerate(self.nodes):
            out = os.path.join(dest, f"n{i}")
            os.makedirs(out, exist_ok=True)
            for name in ("rocenetd.log", "diagd.log"):
                src = os.path.join(node.workdir, name)
                if os.path.exists(src):
                    shutil.copy(src, out)
        if self.cluster:
            src = os.path.join(self.cluster.state_dir, "cluster.json")
            if os.path.exists(src):
                shutil.copy(src, dest)
            for leaf in self.cluster.leaves:
                if os.path.exists(leaf.lldpd["log"]):
                    shutil.copy(leaf.lldpd["log"], dest)

    def down(self) -> list[str]:
        """Stops every daemon (SIGTERM to all at once, the diagds first),
        then the cluster; returns what was left behind."""
        for group in (self.diagds, self.nodes):
            running = [d for d in group if d.proc is not None and d.proc.poll() is None]
            for d in running:
                d.proc.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + 15
            for d in running:
                try:
                    d.proc.wait(max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    progress(f"{d.program} in {d.netns} ignored SIGTERM; killed")
                    d.proc.kill()
                    d.proc.wait()
        left = []
        if self.cluster is not None:
            lldpd = self.cluster._lldpd
            self.cluster.down()
            left += [f"netns {ns}" for ns in sim_cluster.netns_list()
                     if ns.startswith(self.cluster.name + "-")]
            left += [f"lldpd pid {p.pid}" for p in lldpd if p.poll() is None]
        left += [f"{d.program} pid {d.proc.pid}" for d in self.nodes + self.diagds
                 if d.proc is not None and d.proc.poll() is None]
        return left


def has_nodes_file() -> bool:
    cp = subprocess.run([binary("rocectl"), "diag", "--help"], capture_output=True, text=True,
                        timeout=30)
    return "--nodes-file" in cp.stdout + cp.stderr


def reach(fleet: Fleet, nodes_file: str, args) -> tuple[int, dict, bytes, str, float, str]:
    """rocectl diag reach on node 0: exit code, result, raw JSON, stderr,
    seconds, and where the time went (figs.phases of its progress lines)."""
    d = fleet.diagds[0]
    argv = [binary("rocectl"), "--socket", d.node.socket, "--diag-socket", d.socket, "diag", "reach",
            "--nodes-file", nodes_file, "--count", str(args.count), "--time-limit", args.time_limit,
            "-o", "json"]
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines: list[tuple[float, str]] = []
    chunks: list[bytes] = []

    def read_progress() -> None:
        for raw in proc.stderr:
            lines.append((time.monotonic() - started, raw.decode(errors="replace").rstrip("\n")))

    def read_result() -> None:
        chunks.append(proc.stdout.read())
    readers = [threading.Thread(target=f, daemon=True) for f in (read_progress, read_result)]
    for reader in readers:
        reader.start()
    try:
        proc.wait(timeout=args.rocectl_timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise figs.BenchError(f"rocectl diag reach still running after {args.rocectl_timeout} s") from None
    took = time.monotonic() - started
    for reader in readers:
        reader.join(30)
    out = b"".join(chunks)
    stderr = "\n".join(line for _, line in lines)
    try:
        result = json.loads(out) if out.strip() else {}
    except ValueError as e:
        raise figs.BenchError(f"rocectl diag reach printed no JSON ({e}); exit {proc.returncode}: "
                              f"{stderr[-2000:]}") from None
    return proc.returncode, result, out, stderr, took, figs.phases(lines, took)


def plan_summary(plan: dict | None) -> str:
    if not plan:
        return "none in the result"
    return (f"{plan.get('kind', '?')}: {int(plan.get('peer_probes', 0)):,} peer + "
            f"{int(plan.get('gateway_probes', 0)):,} gateway probes, at most "
            f"{plan.get('max_peers_per_port', 0)} peers a port")


def run(args, fleet: Fleet, say, kept: str) -> bool:
    """The benchmark; returns whether every goal was met and every fault
    named exactly. BenchError when broken."""
    faults = figs.choose_faults(args.nodes, args.nodes_per_leaf, args.rails)
    fleet.up(say)
    cl = fleet.cluster
    mem = fleet.memory()
    say(f"Memory a node, after start-up ({args.nodes} nodes; /proc/PID/status: VmRSS counts the "
        "shared pages of the binary and its libraries in each process, RssAnon is the "
        "process's own):")
    for what, rows in mem.items():
        say(f"  {what:<14} VmRSS {figs.memory_summary([r.get('VmRSS', 0) for r in rows])}; "
            f"RssAnon {figs.memory_summary([r.get('RssAnon', 0) for r in rows])}")
    private = sum(r.get("RssAnon", 0) for rows in mem.values() for r in rows) * 1024
    switch_pids = [p for pids in cl.processes().values() for p in pids
                   if figs.proc_status(p) and p not in {d.proc.pid for d in fleet.nodes + fleet.diagds}]
    lldpd = sum(figs.proc_status(p).get("RssAnon", 0) for p in switch_pids) * 1024
    taken = fleet.available_before - figs.mem_available()
    say(f"Memory of the whole fabric: the {2 * args.nodes} daemons' own {figs.mib(private)}, the "
        f"{len(cl._lldpd)} switches' lldpd ({len(switch_pids)} processes) {figs.mib(lldpd)}; the "
        f"machine's MemAvailable fell by "
        f"{figs.mib(taken)} (the daemons, their binaries' pages, the namespaces, veths, "
        f"routes and sockets), of {figs.mib(fleet.available_before)} available before")

    nodes_file = os.path.join(fleet.work, "nodes.txt")
    with open(nodes_file, "w") as f:
        f.write(figs.nodes_file([[sim_cluster.node_address(i, r) for r in range(args.rails)]
                                 for i in range(args.nodes)]))
    coordinator = fleet.diagds[0].proc.pid
    ok = True

    rc, result, raw, err, took, where = reach(fleet, nodes_file, args)
    figs.save(os.path.join(kept, "healthy.json"), raw)
    hwm = figs.proc_status(coordinator).get("VmHWM", 0) * 1024
    say(f"Healthy run (--count {args.count} --time-limit {args.time_limit}): exit {rc}, "
        f"{took:.1f} s, {len(raw):,} bytes of JSON, coordinator peak RSS {figs.mib(hwm)}; plan "
        f"{plan_summary(result.get('plan'))}")
    say(f"  where the time went: {where}")
    suspects = result.get("suspect_details") or []
    if rc != 0 or not result.get("ok") or suspects or result.get("suspects"):
        ok = False
        say(f"  FAILED: the healthy fabric did not pass: ok={result.get('ok')}, suspects "
            f"{[figs.describe_key(figs.suspect_key(s)) for s in suspects]}, problems "
            f"{result.get('problems', [])[:5]}; rocectl: {err.strip()[-500:]}")
    fleet.check_alive()

    planted, expected = plant(cl, fleet, faults)
    time.sleep(args.settle)  # the nodes' daemons see their carrier go
    rc, result, raw, err, took, where = reach(fleet, nodes_file, args)
    figs.save(os.path.join(kept, "faults.json"), raw)
    hwm = figs.proc_status(coordinator).get("VmHWM", 0) * 1024
    fleet.check_alive()
    plan = result.get("plan") or {}
    probes = int(plan.get("peer_probes", 0)) + int(plan.get("gateway_probes", 0))
    named, false = figs.judge(expected, result.get("suspect_details") or [])
    silent_names = {f"n{faults.silent}",
                    "+".join(sim_cluster.node_address(faults.silent, r) for r in range(args.rails))}
    silent_listed, others_not_tested = figs.judge_not_tested(silent_names, result)
    rows = [
        figs.at_most("wall time of rocectl diag reach", took, figs.WALL_SECONDS, "s"),
        figs.at_most("coordinator's rocenet-diagd peak RSS (VmHWM)", hwm / (1 << 20),
                     figs.COORDINATOR_MIB, "MiB"),
        figs.Figure("result size (-o json)", f"{len(raw):,} bytes"),
        figs.Figure("plan's probes (peer + gateway)", f"{probes:,}" if plan else "no plan"),
        figs.Figure("rocectl's exit code (6: a failure found)", str(rc)),
    ]
    say(f"Run with {len(planted)} faults, {args.nodes} nodes x {args.rails} rails (--count "
        f"{args.count} --time-limit {args.time_limit}):")
    for line in figs.table(rows):
        say("  " + line)
    say(f"  where the time went: {where}")
    say(f"  plan: {plan_summary(plan)}")
    for rail in plan.get("rails") or []:
        say(f"    rail {rail.get('rail')}: {rail.get('ports', 0)} ports, {rail.get('leaves', 0)} "
            f"leaves, stride {rail.get('stride', 0)}, {int(rail.get('peer_probes', 0)):,} peer probes")
    labels = result.get("labels")
    if labels:
        say(f"  labels: {labels.get('validated', 0)} validated, {len(labels.get('unvalidated') or [])} "
            f"unvalidated, inconclusive {bool(labels.get('inconclusive'))}"
            + (f" ({labels['reason']})" if labels.get("reason") else ""))
    say("  faults named exactly:")
    details = {figs.suspect_key(d): d for d in result.get("suspect_details") or []}
    for label, hit in named.items():
        evidence = details.get(expected[label], {}).get("evidence", "")
        say(f"    {'yes' if hit else 'NO '}  {label}" + (f": {evidence}" if hit and evidence else ""))
    not_tested = next((e for e in result.get("not_tested") or [] if e.get("node") in silent_names), {})
    say(f"    {'yes' if silent_listed else 'NO '}  n{faults.silent}'s rocenet-diagd stopped: "
        f"not tested, no suspect" + (f": {not_tested.get('reason')}" if not_tested else ""))
    say(f"  false suspects: {', '.join(false) if false else 'none'}")
    if others_not_tested:
        say(f"  also not tested: {'; '.join(others_not_tested[:5])}")
    if rc != 6:
        say(f"  rocectl exited {rc}, not 6: {err.strip()[-500:]}")
    if (not all(named.values()) or false or not silent_listed or others_not_tested or rc != 6
            or any(r.missed for r in rows)):
        ok = False
    unplant(cl, faults)
    # Left out of the bisection: the nodes still cut off, and those whose
    # peers learned a smaller path MTU to them (the kernel keeps it 10
    # minutes, and TCP to them runs in smaller segments meanwhile).
    faulty = {faults.cut_node, faults.dead_node, faults.mtu_node, faults.silent,
              *cl.leaf_nodes(faults.leaf), *cl.leaf_nodes(faults.mtu_leaf)}
    return bisection(args, fleet, say, kept, faulty) and ok


def plant(cl: sim_cluster.Cluster, fleet: Fleet, f: figs.Faults) -> tuple[list[str], dict[str, tuple]]:
    """Plants every fault of `f`; returns their descriptions and, for each
    fault a suspect names, the suspect it must be (figs.suspect_key)."""
    def where(node: int, rail: int) -> str:
        return f"rail {rail}, leaf {cl.leaf_name(rail, cl.leaf_of(node))}"

    def nodes_of(leaf: int) -> str:
        members = cl.leaf_nodes(leaf)
        return f"n{members[0]}-n{members[-1]}"

    cl.link(f.cut_node, 0, "down")
    cl.loss(f.lossy_node, 0, figs.LOSS_PERCENT)
    cl.blackhole(f.dead_node, 1, "on")
    cl.mtu(f.mtu_node, 1, figs.PORT_MTU)
    cl.uplink_mtu(0, f.mtu_leaf, figs.UPLINK_MTU)
    cl.leaf(0, f.leaf, "down")
    cl.uplink(1, f.uplink_leaf, "down")
    fleet.stop_diagd(f.silent)
    leaf, mtu_leaf, uplink_leaf = (cl.leaf_name(0, f.leaf), cl.leaf_name(0, f.mtu_leaf),
                                   cl.leaf_name(1, f.uplink_leaf))
    expected = {
        f"cut cable n{f.cut_node}/so0 ({where(f.cut_node, 0)})": ("port", f"n{f.cut_node}", "so0"),
        f"lossy port n{f.lossy_node}/so0, {figs.LOSS_PERCENT}% of its packets each way "
        f"({where(f.lossy_node, 0)})": ("lossy-port", f"n{f.lossy_node}", "so0"),
        f"dead port n{f.dead_node}/so1 ({where(f.dead_node, 1)})": ("port", f"n{f.dead_node}", "so1"),
        f"n{f.mtu_node}/so1's link at MTU {figs.PORT_MTU} ({where(f.mtu_node, 1)})":
            ("port-mtu", f"n{f.mtu_node}", "so1"),
        f"leaf {mtu_leaf}'s uplink at MTU {figs.UPLINK_MTU} (rail 0, nodes {nodes_of(f.mtu_leaf)})":
            ("leaf-uplink-mtu", mtu_leaf),
        f"leaf {leaf} down (rail 0, nodes {nodes_of(f.leaf)})": ("leaf", leaf),
        f"leaf {uplink_leaf}'s uplink down (rail 1, nodes {nodes_of(f.uplink_leaf)})":
            ("leaf-uplink", uplink_leaf),
    }
    return [*expected, f"n{f.silent}'s rocenet-diagd stopped"], expected


def unplant(cl: sim_cluster.Cluster, f: figs.Faults) -> None:
    """Takes the gray faults and the uplink's outage off; the stopped
    rocenet-diagd, the cut cable, the dead port and the leaf down stay
    (their nodes stay out of the bisection)."""
    cl.loss(f.lossy_node, 0, 0)
    cl.mtu(f.mtu_node, 1, 0)
    cl.uplink_mtu(0, f.mtu_leaf, 0)
    cl.uplink(1, f.uplink_leaf, "up")


def plan_figures(say) -> bool:
    """The plan's size for 512 nodes x 24 rails, 32 a leaf, from the C++
    that makes the plan. True unless the program broke."""
    places = [os.path.join(build_dir(), "tests", sub, "triage_plan_figures") for sub in ("triage", "bench")]
    program = next((p for p in places if os.access(p, os.X_OK)), None)
    if program is None:
        say(f"Plan at 512 nodes x 24 rails, 32 a leaf: triage_plan_figures is missing (not built: "
            f"{' or '.join(places)})")
        return True
    cp = subprocess.run([program, *PLAN_FIGURES_ARGS], capture_output=True, text=True, timeout=120)
    if cp.returncode != 0:
        say(f"Plan at 512 nodes x 24 rails, 32 a leaf: {program} exited {cp.returncode}: "
            f"{cp.stderr.strip()[-500:]}")
        return False
    try:
        text = json.dumps(json.loads(cp.stdout), indent=2)
    except ValueError:
        text = cp.stdout.strip()
    say("Plan at 512 nodes x 24 rails, 32 a leaf (triage_plan_figures):")
    for line in text.splitlines():
        say("  " + line)
    return True


def can_run() -> str | None:
    """Why the benchmark cannot run here, or None."""
    if os.geteuid() != 0:
        return "the reach benchmark needs root (network namespaces, the daemons)"
    if shutil.which("lldpd") is None:
        return "the reach benchmark needs lldpd (Debian: lldpd)"
    if shutil.which("iptables") is None:
        return "the reach benchmark needs iptables for its lossy port (Debian: iptables)"
    probe = f"rntriage{os.getpid()}"
    if subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode != 0:
        return "the reach benchmark needs network namespaces (ip netns add failed)"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=128)
    ap.add_argument("--nodes-per-leaf", type=int, default=16)
    ap.add_argument("--rails", type=int, default=2)
    ap.add_argument("--count", type=int, default=3, help="echoes a target (rocectl --count)")
    ap.add_argument("--time-limit", default="5s", help="rocectl --time-limit")
    ap.add_argument("--settle", type=float, default=2.0,
                    help="seconds between planting the faults and the run")
    ap.add_argument("--rocectl-timeout", type=float, default=300,
                    help="seconds before a rocectl call counts as hung")
    ap.add_argument("--bisect-runs", type=int, default=1,
                    help="how many times the bisection runs (each must name the slow node)")
    ap.add_argument("--keep", action="store_true",
                    help=f"keep the results and the logs in <build>/{LOGS} also when the run passed")
    args = ap.parse_args()
    try:
        figs.choose_faults(args.nodes, args.nodes_per_leaf, args.rails)
    except ValueError as e:
        ap.error(str(e))
    if not 2 <= args.nodes <= sim_cluster.MAX_NODES:
        ap.error(f"--nodes must be 2..{sim_cluster.MAX_NODES}")
    why = can_run()
    if why:
        print(f"SKIPPED: {why}")
        return SKIPPED
    try:
        for program in ("rocenetd", "rocenet-diagd", "rocectl"):
            binary(program)
        if not has_nodes_file():
            raise FileNotFoundError("the build tree's rocectl has no diag reach --nodes-file")
    except FileNotFoundError as e:
        print(f"triage_bench: {e} (cmake --build {build_dir()} --target rocenetd rocenet-diagd "
              "rocectl)", file=sys.stderr)
        return 1

    say = Report(os.path.join(build_dir(), FIGURES))
    kept = os.path.join(build_dir(), LOGS)
    shutil.rmtree(kept, ignore_errors=True)
    work = tempfile.mkdtemp(prefix="rocenet-triage-")
    shm = tempfile.mkdtemp(prefix="rocenet-triage-",
                           dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    results = os.path.join(work, "results")
    fleet = Fleet(args, work, shm)

    def stop(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, stop)
    started = time.monotonic()
    broken = None
    ok = False
    try:
        ok = run(args, fleet, say, results)
        ok = plan_figures(say) and ok
    except BaseException as e:  # every way out stops what it started, logs kept
        broken = e
    finally:
        if broken is not None or not ok or args.keep:
            fleet.keep_logs(kept)
            if os.path.isdir(results):
                shutil.copytree(results, kept, dirs_exist_ok=True)
        step = time.monotonic()
        try:
            left = fleet.down()
        except BaseException as e:
            left = [f"teardown failed: {e}"]
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(shm, ignore_errors=True)
    if broken is None:
        say(f"Teardown: {time.monotonic() - step:.1f} s; the whole run {time.monotonic() - started:.0f} s")
    if left:
        print(f"triage_bench: left behind: {', '.join(left)}", file=sys.stderr)
        return 1
    if broken is not None:
        if not isinstance(broken, (figs.BenchError, subprocess.SubprocessError, KeyboardInterrupt,
                                   OSError, AssertionError)):
            traceback.print_exception(broken)
        print(f"triage_bench: broken run: {broken}\n  the logs: {kept}", file=sys.stderr)
        return 1
    if not ok:
        print(f"triage_bench: FAILED (a goal missed or a fault misnamed; see above)\n  the logs and "
              f"results: {kept}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
