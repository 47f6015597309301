#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The hold benchmark: how long rocenet-controller takes to hold the ports
of N nodes for an invasive triage stage and start its run
(docs/development.md#the-hold-benchmark).

Real: etcd, kube-apiserver and kube-scheduler (tests/k8s/components.sh),
kwok keeping N fake Nodes Ready and running the pods bound to them (its
pod stages), the build tree's rocenet-controller with the PriorityClass
and the client rate rocenet ships. Simulated: the Nodes (each advertising
24 rocenet.io/scale-out-port) and their RocenetNodes (24 addressed
ports), written here as the device plugin and the reporter would.

An allreduce triage over every node (by selector) makes a holder per
node; the scheduler places each on its node, kwok runs it, and the
controller starts the run's Job once every holder runs. Printed beside the
goal (under 30 s at 512 nodes) and appended to <build>/fleet-figures.txt:
the time from the triage to its last holder created, to the last holder
Running, to the run's Job; the nodes held and skipped; the controller's
peak RSS and its client's requests.

    tests/fleet/hold_bench.py [--nodes N]

Exit status: 0 when the run completed (a goal missed is printed as GOAL
MISSED); 1 when it broke; 77 (CTest: skipped) without root or Go.
Everything it started is stopped by pid on every exit."""

from __future__ import annotations

import argparse
import concurrent.futures
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
from fleet_bench import Report, build_dir, find_go, go_env, took  # noqa: E402
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
NODE_PREFIX = "hold-"
PORTS = 24
# The goal: every node held and the run started within this.
HOLD_SECONDS = 30.0
NAMESPACE = "rocenet-system"


def kwok_stages(go: str, env: dict, work: str) -> str:
    """kwok's node stages (the component's) with its fast pod stages: a
    pod bound to a fake node runs at once, and goes when deleted."""
    module = subprocess.run([go, "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kwok"],
                            cwd=os.path.join(ROOT, "tests", "k8s", "components", "kwok"),
                            capture_output=True, text=True, check=True, env=env).stdout.strip()
    stages = os.path.join(module, "kustomize", "stage")
    files = [os.path.join(stages, "node", "fast", "node-initialize.yaml"),
             os.path.join(stages, "node", "heartbeat-with-lease",
                          "node-heartbeat-with-lease.yaml"),
             os.path.join(stages, "pod", "fast", "pod-ready.yaml"),
             os.path.join(stages, "pod", "fast", "pod-delete.yaml")]
    path = os.path.join(work, "kwok-stages.yaml")
    with open(path, "w") as out:
        out.write("\n---\n".join(open(f).read().strip() for f in files) + "\n")
    return path


def node_status(name: str) -> dict:
    """What the device plugin makes a node advertise: its ports."""
    ports = {"rocenet.io/scale-out-port": str(PORTS)}
    return {"status": {"capacity": {"cpu": "32", "memory": "256Gi", "pods": "110", **ports},
                       "allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110", **ports}}}


def rocenet_node(i: int, name: str) -> tuple[dict, dict]:
    """A node's RocenetNode and its status, as its reporter writes them:
    PORTS ports, each addressed, none in a pod."""
    obj = {"apiVersion": "rocenet.io/v1alpha1", "kind": "RocenetNode",
           "metadata": {"name": name}}
    ports = [{"name": f"so{p}", "id": f"0000:{p:02x}:00.0-p0", "rail": p % 8, "state": "up",
              "healthy": True,
              "address": f"10.{201 + p % 8}.{(i * 3 + p // 8) // 250}.{(i * 3 + p // 8) % 250 + 1}/30"}
             for p in range(PORTS)]
    status = {"status": {"portCount": PORTS, "readyPortCount": PORTS,
                         "readyPorts": f"{PORTS}/{PORTS}", "ports": ports,
                         "conditions": [{"type": "Ready", "status": "True", "reason": "PortsReady",
                                         "message": f"{PORTS}/{PORTS} ports ready",
                                         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}
    return obj, status


def daemonset() -> dict:
    """rocenet's DaemonSet as the triage runs copy it: its diagd container,
    its socket volume, its tolerations (kwok's taint too)."""
    labels = {"app.kubernetes.io/name": "rocenet", "app.kubernetes.io/component": "node"}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "rocenet", "namespace": NAMESPACE, "labels": labels},
            "spec": {"selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"serviceAccountName": "rocenet",
                                           "tolerations": [{"operator": "Exists"}],
                                           "nodeSelector": {"rocenet.test/no-node": "true"},
                                           "containers": [{"name": "diagd",
                                                           "image": "rocenet.test/rocenet:1"}],
                                           "volumes": [{"name": "run-rocenet", "hostPath": {
                                               "path": "/run/rocenet"}}]}}}}


def write_all(plane: ControlPlane, calls: list[tuple[str, str, dict, str]]) -> None:
    """Many writes to the API server at once: (method, path, body, type)."""
    def one(call):
        method, path, body, kind = call
        status, data = plane.request(method, path, json.dumps(body).encode(), kind)
        if status >= 300:
            raise figs.BenchError(f"{method} {path}: HTTP {status}: {data[:300]!r}")
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        list(pool.map(one, calls))


def run(args, work: str, procs: Processes, say) -> None:
    go = find_go()
    env = {**os.environ, **go_env(go)}
    step = time.monotonic()
    bin_dir = os.path.join(work, "bin")
    subprocess.run(["bash", os.path.join(ROOT, "tests", "k8s", "components.sh"), bin_dir,
                    "kubernetes", "etcd", "kwok"], check=True, env=env)
    stages = kwok_stages(go, env, work)
    step = took(say, "components (etcd, kube-apiserver, kube-scheduler, kwok)", step)
    controller = args.controller or os.path.join(build_dir(), "go", "rocenet-controller")
    if not os.access(controller, os.X_OK):
        raise figs.BenchError(f"{controller}: no rocenet-controller (cmake --build "
                              f"{build_dir()} --target rocenet-controller)")

    plane = ControlPlane(work, bin_dir, procs)
    base = os.path.join(ROOT, "packaging", "kubernetes", "base")
    plane.kubectl("apply", "-f", os.path.join(base, "crds"))
    for name in ("namespace", "serviceaccount", "triage-holder-priorityclass"):
        plane.kubectl("apply", "-f", os.path.join(base, f"{name}.yaml"))
    plane.kubectl("wait", "--for=condition=Established", "--timeout=60s",
                  "crd/rocenetnodes.rocenet.io", "crd/rocenettriages.rocenet.io")
    plane.kubectl("apply", "-f", "-", input=json.dumps(daemonset()))
    scheduler = procs.start("kube-scheduler", [
        os.path.join(bin_dir, "kube-scheduler"), "--kubeconfig", plane.kubeconfig,
        "--authentication-kubeconfig", plane.kubeconfig,
        "--authorization-kubeconfig", plane.kubeconfig, "--leader-elect=false",
        "--secure-port=0"])
    step = took(say, "etcd, kube-apiserver, kube-scheduler, CRDs", step)

    names = [f"{NODE_PREFIX}{i:04d}" for i in range(args.nodes)]
    kwok = procs.start("kwok", [
        os.path.join(bin_dir, "kwok"), "--kubeconfig", plane.kubeconfig, "--config", stages,
        "--manage-all-nodes=false",
        f"--manage-nodes-with-annotation-selector={KWOK_ANNOTATION}=fake",
        "--node-lease-duration-seconds=40"],
        env={"HOME": work})
    plane.kubectl("create", "-f", "-", input=fake_nodes(names))

    def ready_nodes() -> bool:
        items = json.loads(plane.kubectl("get", "nodes", "-o", "json"))["items"]
        return sum(1 for n in items for c in n["status"].get("conditions") or []
                   if c["type"] == "Ready" and c["status"] == "True") == args.nodes
    wait_for(f"{args.nodes} Nodes Ready (kwok)", ready_nodes, 180, interval=1, proc=kwok,
             log=procs.log("kwok"))
    # The ports, as the device plugin makes kubelet advertise them, and the
    # RocenetNodes, as the reporters write them.
    write_all(plane, [("PATCH", f"/api/v1/nodes/{n}/status", node_status(n),
                       "application/strategic-merge-patch+json") for n in names])
    write_all(plane, [("POST", "/apis/rocenet.io/v1alpha1/rocenetnodes", rocenet_node(i, n)[0],
                       "application/json") for i, n in enumerate(names)])
    write_all(plane, [("PATCH", f"/apis/rocenet.io/v1alpha1/rocenetnodes/{n}/status",
                       rocenet_node(i, n)[1], "application/merge-patch+json")
                      for i, n in enumerate(names)])
    step = took(say, f"{args.nodes} kwok Nodes Ready, each with {PORTS} ports and its RocenetNode",
                step)

    ctrl = procs.start("rocenet-controller", [
        controller, "--kubeconfig", plane.kubeconfig, "--leader-elect=false",
        f"--namespace={NAMESPACE}", "--metrics-bind-address=0", "--health-probe-bind-address=0",
        f"-v={args.v}"])
    wait_for("rocenet-controller up (the RocenetCluster made)",
             lambda: plane.get("/apis/rocenet.io/v1alpha1/rocenetclusters/cluster")[0] == 200,
             60, proc=ctrl, log=procs.log("rocenet-controller"))
    step = took(say, "rocenet-controller up", step)
    api_before = plane.api_requests()

    triage = {"apiVersion": "rocenet.io/v1alpha1", "kind": "RocenetTriage",
              "metadata": {"name": "hold", "namespace": "default"},
              "spec": {"stage": "allreduce", "timeoutSeconds": 20,
                       "nodeSelector": {"matchLabels": {"type": "kwok"}}}}
    holders = Watch(plane, f"/api/v1/namespaces/{NAMESPACE}/pods",
                    labels="rocenet.io/triage-role=holder")
    made = time.time()
    started = time.monotonic()
    plane.kubectl("apply", "-f", "-", input=json.dumps(triage))
    status: dict = {}

    def running() -> bool:
        nonlocal status
        status = json.loads(plane.kubectl("get", "rocenettriage", "-n", "default", "hold",
                                          "-o", "json")).get("status", {})
        if status.get("phase") in ("Error", "Skipped"):
            raise figs.BenchError(f"the triage ended {status.get('phase')}: {status.get('message')}")
        return status.get("phase") == "Running"
    wait_for("the triage's run started", running, 300, interval=0.2, proc=ctrl,
             log=procs.log("rocenet-controller"))
    run_s = time.monotonic() - started
    holders.stop()
    if holders.error:
        raise figs.BenchError(holders.error)
    # When each holder was first seen, and first seen Running, by the watch
    # (the API's own timestamps are in whole seconds).
    created: dict[str, float] = {}
    running_at: dict[str, float] = {}
    for at, pod in holders.snapshot():
        name = pod["metadata"]["name"]
        created.setdefault(name, at)
        if pod.get("status", {}).get("phase") == "Running":
            running_at.setdefault(name, at)
    hwm, cpu = proc_usage(ctrl.pid)
    api = figs.api_diff(api_before, plane.api_requests())
    rows = [
        figs.Figure("the last holder created, after the triage",
                    f"{max(created.values()) - made:.1f} s" if created else "none"),
        figs.Figure("the last holder Running (kwok), after the triage",
                    f"{max(running_at.values()) - made:.1f} s" if running_at else "none"),
        figs.at_most("every node held and the run's Job made, after the triage", run_s,
                     HOLD_SECONDS, "s", ".1f"),
        figs.Figure("nodes held / skipped",
                    f"{status.get('nodeCount', 0)} / {status.get('skippedNodeCount', 0)}"),
        figs.at_most("rocenet-controller peak RSS (VmHWM)", hwm / (1 << 20), figs.CONTROLLER_MIB,
                     "MiB", ".1f"),
        figs.Figure("rocenet-controller CPU time", f"{cpu:.1f} s"),
    ]
    say(f"Hold benchmark, {args.nodes} kwok nodes x {PORTS} ports (the goal is for 512 nodes):")
    for line in figs.table(rows):
        say("  " + line)
    say("  API requests during the hold, the most: " + ", ".join(
        f"{verb} {res} {n:.0f}" for (verb, res), n in sorted(api.items(), key=lambda kv: -kv[1])[:5]))
    if len(running_at) != args.nodes:
        raise figs.BenchError(f"{len(running_at)} of {args.nodes} holders seen Running")
    if status.get("nodeCount") != args.nodes or status.get("skippedNodeCount"):
        raise figs.BenchError(f"not every node held: {status.get('message')}")
    if scheduler.poll() is not None or kwok.poll() is not None:
        raise figs.BenchError("kube-scheduler or kwok exited during the run")


def run_benchmark(what: str, run, programs: tuple[str, ...], needs: str) -> int:
    """A fleet benchmark's main: its flags, SKIPPED (77) without root or
    Go, run(args, work, procs, say) with its programs stopped on every
    way out, and on failure the tail of each program's log."""
    ap = argparse.ArgumentParser(description=sys.modules["__main__"].__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=512)
    ap.add_argument("--controller", help="rocenet-controller (default: the build tree's)")
    ap.add_argument("--logs", help="keep the programs' logs in this directory")
    ap.add_argument("-v", type=int, default=0, help="rocenet-controller's log verbosity")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print(f"SKIPPED: the {what} benchmark needs root (as the fleet's other tests)")
        return SKIPPED
    if find_go() is None:
        print(f"SKIPPED: the {what} benchmark needs Go ({needs})")
        return SKIPPED
    work = tempfile.mkdtemp(prefix=f"rocenet-{what}-")
    procs = Processes(os.path.join(work, "logs"))
    say = Report(os.path.join(build_dir(), FIGURES))

    def stop(signum, _frame):
        procs.stop_all()
        sys.exit(128 + signum)
    signal.signal(signal.SIGTERM, stop)
    try:
        run(args, work, procs, say)
        return 0
    except (figs.BenchError, subprocess.CalledProcessError, TimeoutError) as e:
        print(f"{what} benchmark broken: {e}", file=sys.stderr)
        traceback.print_exc()
        for name in programs:
            log = procs.log(name)
            if os.path.exists(log):
                print(f"--- {name} (tail) ---\n" + open(log).read()[-3000:], file=sys.stderr)
        return 1
    finally:
        procs.stop_all()
        if args.logs:
            shutil.copytree(os.path.join(work, "logs"), args.logs, dirs_exist_ok=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(run_benchmark("hold", run, ("rocenet-controller", "kube-scheduler", "kwok"),
                           "kwok, etcd, kube-apiserver, kube-scheduler"))
