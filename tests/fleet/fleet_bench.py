#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The fleet benchmark: rocenet's fleet view at N nodes on a real API
server (docs/development.md#the-fleet-benchmark).

Real: etcd and kube-apiserver (tests/k8s/components.sh), kwok keeping N
fake Nodes Ready with Leases, the node reporter's code (one reporter per
node in the load program, plugins/reporter/test/fleet-load) and the
rocenet-controller binary of the build tree. Simulated: rocenetd's node
stream, scripted by the load program (steady, a port flapping on a tenth
of the nodes, a rail down on every node and back).

Printed, with the goals of docs/fleet.md#at-fleet-size beside them, and
appended to <build>/fleet-figures.txt: the reporters' writes per second
(steady, per flapping node, the rail event's peak second and peak 5 s),
the time from the rail going down to RocenetCluster Degraded=True and from
its return to Available=True, rocenet-controller's peak RSS and CPU time,
the API server's requests by verb and resource over the run, etcd's
database size, the load program's own RSS and CPU time.

    tests/fleet/fleet_bench.py [--nodes N] [--steady S] [--flap S] ...

Exit status: 0 when the run completed (a goal missed is printed as GOAL
MISSED, not failed: the goals are set for 512 nodes); 1 when it broke (a
process failed, an API error, the cluster never Degraded or never
Available again); 77 (CTest: skipped) without root or Go. Everything it
started is stopped by pid on every exit; its temporary directory goes too,
except the logs of a broken run, kept in <build>/fleet-logs/."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

import fleet_figures as figs  # noqa: E402
from fleet_cluster import (  # noqa: E402
    KWOK_ANNOTATION,
    ControlPlane,
    Processes,
    Watch,
    fake_nodes,
    proc_usage,
    wait_for,
)

SKIPPED = 77
FIGURES = "fleet-figures.txt"
LOGS = "fleet-logs"
CLUSTERS = "/apis/rocenet.io/v1alpha1/rocenetclusters"
NODE_PREFIX = "fleet-"


def build_dir() -> str:
    """CTest's build tree (ROCENET_BUILD_DIR), or build/ for a run by hand."""
    return os.environ.get("ROCENET_BUILD_DIR") or os.path.join(ROOT, "build")


def find_go() -> str | None:
    for go in (os.environ.get("ROCENET_GO"), shutil.which("go"), "/usr/local/go/bin/go"):
        if go and os.access(go, os.X_OK):
            return go
    return None


def go_env(go: str) -> dict:
    """The Go settings of the Go programs' own build (cmake/RocenetGo.cmake),
    so that what they share comes from the build cache."""
    cache = os.environ.get("ROCENET_CACHE", "/var/cache/rocenet")
    return {"PATH": f"{os.path.dirname(go)}:{os.environ.get('PATH', '')}", "CGO_ENABLED": "0",
            "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=readonly",
            "GOMODCACHE": os.environ.get("GOMODCACHE", f"{cache}/go/mod"),
            "GOCACHE": os.environ.get("GOCACHE", f"{cache}/go/build")}


class Report:
    """Lines printed as they come and appended to the figures file."""

    def __init__(self, path: str):
        self.path = path
        os.makedirs(os.path.dirname(path), exist_ok=True)

    def __call__(self, line: str = "") -> None:
        print(line, flush=True)
        with open(self.path, "a") as f:
            f.write(line + "\n")


def took(say, what: str, since: float) -> float:
    now = time.monotonic()
    say(f"  {what}: {now - since:.1f} s")
    return now


def run(args, work: str, procs: Processes, say) -> None:
    go = find_go()
    env = {**os.environ, **go_env(go)}
    step = time.monotonic()
    bin_dir = os.path.join(work, "bin")
    subprocess.run(["bash", os.path.join(ROOT, "tests", "k8s", "components.sh"), bin_dir,
                    "kubernetes", "etcd", "kwok"], check=True, env=env)
    step = took(say, "components (etcd, kube-apiserver, kwok)", step)
    load = os.path.join(work, "fleet-load")
    subprocess.run([go, "build", "-trimpath", "-o", load, "./plugins/reporter/test/fleet-load"],
                   cwd=ROOT, check=True, env=env)
    step = took(say, "fleet-load built", step)
    controller = args.controller or os.path.join(build_dir(), "go", "rocenet-controller")
    if not os.access(controller, os.X_OK):
        raise figs.BenchError(f"{controller}: no rocenet-controller (cmake --build "
                              f"{build_dir()} --target rocenet-controller)")

    plane = ControlPlane(work, bin_dir, procs)
    plane.kubectl("apply", "-f", os.path.join(ROOT, "packaging", "kubernetes", "base", "crds"))
    for name in ("namespace", "serviceaccount", "node-reporter-rbac"):
        plane.kubectl("apply", "-f", os.path.join(ROOT, "packaging", "kubernetes", "base",
                                                  f"{name}.yaml"))
    # The reporters' identity (fleet_cluster.REPORTER_USER), with the
    # reporter's RBAC.
    plane.kubectl("create", "clusterrolebinding", "rocenet-fleet-load",
                  "--clusterrole=rocenet-node-reporter",
                  "--serviceaccount=rocenet-system:rocenet-fleet-load")
    plane.kubectl("wait", "--for=condition=Established", "--timeout=60s",
                  "crd/rocenetnodes.rocenet.io", "crd/rocenetclusters.rocenet.io")
    step = took(say, "etcd, kube-apiserver, CRDs", step)

    names = [f"{NODE_PREFIX}{i:04d}" for i in range(args.nodes)]
    kwok = procs.start("kwok", [
        os.path.join(bin_dir, "kwok"), "--kubeconfig", plane.kubeconfig,
        "--config", os.path.join(bin_dir, "kwok-stages.yaml"),
        "--manage-all-nodes=false",
        f"--manage-nodes-with-annotation-selector={KWOK_ANNOTATION}=fake",
        "--node-lease-duration-seconds=40"],
        env={"HOME": work})  # no ~/.kwok of the machine's
    plane.kubectl("create", "-f", "-", input=fake_nodes(names))

    def ready_nodes() -> bool:
        items = json.loads(plane.kubectl("get", "nodes", "-o", "json"))["items"]
        ready = sum(1 for n in items for c in n["status"].get("conditions") or []
                    if c["type"] == "Ready" and c["status"] == "True")
        return ready == args.nodes
    wait_for(f"{args.nodes} Nodes Ready (kwok)", ready_nodes, 120, interval=1, proc=kwok,
             log=procs.log("kwok"))
    step = took(say, f"{args.nodes} kwok Nodes Ready", step)

    ctrl = procs.start("rocenet-controller", [
        controller, "--kubeconfig", plane.kubeconfig, "--leader-elect=false",
        "--metrics-bind-address=0", "--health-probe-bind-address=0"])
    watch = Watch(plane, CLUSTERS, "cluster")
    wait_for("RocenetCluster cluster made by rocenet-controller", lambda: watch.snapshot(), 60,
             proc=ctrl, log=procs.log("rocenet-controller"))
    step = took(say, "rocenet-controller up", step)

    api_before = plane.api_requests()
    etcd_before = plane.etcd_db_bytes()
    _, ctrl_cpu_before = proc_usage(ctrl.pid)
    timeline_path = os.path.join(work, "timeline.json")
    load_args = [
        load, "--kubeconfig", plane.reporter_kubeconfig, "--nodes", str(args.nodes),
        "--node-prefix", NODE_PREFIX, "--steady", f"{args.steady}s", "--flap", f"{args.flap}s",
        "--settle", f"{args.settle}s", "--rail-down", f"{args.rail_down}s",
        "--rail-up", f"{args.rail_up}s", "--out", timeline_path]
    started = time.monotonic()
    proc = procs.start("fleet-load", load_args)
    limit = args.steady + args.flap + args.settle + args.rail_down + args.rail_up + 300
    while proc.poll() is None:
        if time.monotonic() - started > limit:
            raise figs.BenchError(f"fleet-load still running after {limit} s")
        if ctrl.poll() is not None:
            raise figs.BenchError(f"rocenet-controller exited with {ctrl.returncode}")
        time.sleep(0.5)
    if proc.returncode != 0:
        raise figs.BenchError(f"fleet-load exited with {proc.returncode}: "
                              f"{open(procs.log('fleet-load')).read()[-2000:]}")
    took(say, "the load's schedule", started)
    ctrl_hwm, ctrl_cpu = proc_usage(ctrl.pid)
    api_after = plane.api_requests()
    etcd_after = plane.etcd_db_bytes()
    watch.stop()
    if watch.error:
        raise figs.BenchError(watch.error)
    with open(timeline_path) as f:
        timeline = json.load(f)
    report(args, timeline, watch.snapshot(), say, ctrl_hwm, ctrl_cpu - ctrl_cpu_before, ctrl_cpu,
           figs.api_diff(api_before, api_after), etcd_before, etcd_after)


def report(args, timeline, events, say, ctrl_hwm, ctrl_cpu_run, ctrl_cpu, api, etcd_before,
           etcd_after) -> None:
    """Prints the figures; then BenchError when the run was broken."""
    rows = figs.rail_figures(timeline, events)
    windows = figs.phases(timeline)
    seed = windows["seed"]
    rows.insert(0, figs.Figure("seed: every node's two objects written (not measured)",
                               f"{seed[1] - seed[0]:.1f} s"))
    measured = (windows["steady"][0], windows["rail-up"][1])
    throttled = [sum(figs.writes_by_kind(timeline, *w, field="throttled").values())
                 for w in (seed, measured)]
    rows.append(figs.Figure("requests throttled (429, sent again): seed, measured",
                            f"{throttled[0]}, {throttled[1]}"))
    rows.append(figs.at_most("rocenet-controller peak RSS (VmHWM)", ctrl_hwm / (1 << 20),
                             figs.CONTROLLER_MIB, "MiB", ".1f"))
    rows.append(figs.Figure("rocenet-controller CPU, the load's run (all)",
                            f"{ctrl_cpu_run:.1f} s ({ctrl_cpu:.1f} s)"))
    process = timeline["process"]
    rows.append(figs.Figure(f"fleet-load ({args.nodes} reporters) peak RSS, CPU",
                            f"{figs.mib(process['maxRssKiB'] * 1024)}, "
                            f"{process['userSeconds'] + process['systemSeconds']:.1f} s"))
    rows.append(figs.Figure("reporters' connections dialled (idle ones close after 90 s)",
                            str(timeline["connections"])))
    rows.append(figs.Figure("etcd database size, before -> after the load",
                            f"{figs.mib(etcd_before)} -> {figs.mib(etcd_after)}"))
    say(f"Fleet benchmark, {args.nodes} nodes x {timeline['portsPerNode']} ports, "
        f"{timeline['rails']} rails (rail {timeline['rail']} down); phases: steady "
        f"{args.steady} s, flap {args.flap} s, settle {args.settle} s, rail down "
        f"{args.rail_down} s, back {args.rail_up} s:")
    for line in figs.table(rows):
        say("  " + line)
    for name in ("steady", "rail-down", "rail-up"):
        kinds = figs.writes_by_kind(timeline, *windows[name])
        say(f"  reporters' writes, {name}: " +
            (", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) or "none"))
    say("  API server requests during the load (apiserver_request_total), by verb and resource:")
    for (verb, resource), count in sorted(api.items(), key=lambda kv: (-kv[1], kv[0])):
        say(f"    {verb:<7} {resource:<34} {count}")
    if timeline.get("errors"):
        raise figs.BenchError(f"the reporters' requests failed: {timeline['errors']}")
    if timeline["connections"] < args.nodes:
        raise figs.BenchError(f"{timeline['connections']} connections for {args.nodes} "
                              "reporters: the clients share one")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=64)
    ap.add_argument("--steady", type=int, default=20, help="seconds of steady state")
    ap.add_argument("--flap", type=int, default=20, help="seconds of flapping")
    ap.add_argument("--settle", type=int, default=25, help="quiet seconds after the flaps")
    ap.add_argument("--rail-down", type=int, default=25, help="seconds the rail stays down")
    ap.add_argument("--rail-up", type=int, default=25, help="seconds after the rail is back")
    ap.add_argument("--controller", help="rocenet-controller (default: the build tree's)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("SKIPPED: the fleet benchmark needs root (the component cache, the benchmark's "
              "processes)")
        return SKIPPED
    if find_go() is None:
        print("SKIPPED: the fleet benchmark needs Go (kwok, etcd, kube-apiserver and the load "
              "program are built from their Go modules)")
        return SKIPPED

    say = Report(os.path.join(build_dir(), FIGURES))
    logs_kept = os.path.join(build_dir(), LOGS)
    shutil.rmtree(logs_kept, ignore_errors=True)
    work = tempfile.mkdtemp(prefix="rocenet-fleet-")
    procs = Processes(os.path.join(work, "logs"))

    def stop(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, stop)
    broken = None
    try:
        run(args, work, procs, say)
    except BaseException as e:  # every way out stops what it started, logs kept
        broken = e
    finally:
        procs.stop_all()
        if broken is not None:
            shutil.copytree(procs.logs, logs_kept, dirs_exist_ok=True)
        shutil.rmtree(work, ignore_errors=True)
    if broken is None:
        return 0
    if not isinstance(broken, (figs.BenchError, subprocess.SubprocessError, KeyboardInterrupt,
                               OSError)):
        traceback.print_exception(broken)
    print(f"fleet_bench: broken run: {broken}\n  the logs: {logs_kept}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
