#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The rollout benchmark: a port-disruptive change of a RocenetNodePolicy
(the MTU) rolled out by rocenet-controller over N nodes, in waves of at
most 10 % of the nodes and one node of a leaf switch
(docs/development.md#the-rollout-benchmark).

Real: etcd, kube-apiserver, kube-scheduler and kube-controller-manager's
DaemonSet controller (tests/k8s/components.sh), kwok keeping N fake
Nodes Ready and running the pods bound to them (its pod stages), the
build tree's rocenet-controller making the policy's DaemonSet and
letting the new pods run wave by wave (the DaemonSet controller makes
them beside the old ones, gated, and deletes an old one once the new one
is Ready). Simulated: the RocenetNodes (2 rails, 32
nodes to a leaf switch, every port ready), written here as the reporters
would, and written again (a new heartbeat) once a node's new pod is Ready,
as its new reporter does when it starts.

Printed beside the goals (for 512 nodes: under 10 minutes, under 60 API
writes a second at the peak, rocenet-controller under 200 MiB) and
appended to <build>/fleet-figures.txt: the time to the policy's nodes
Ready, the rollout's time and waves, the most nodes coming up at once
and of one leaf, the API server's writes a second (peak and mean), the
controller's peak RSS.

    tests/fleet/rollout_bench.py [--nodes N]

Exit status: 0 when the run completed (a goal missed is printed as GOAL
MISSED); 1 when it broke (a wave past its bounds included); 77 (CTest:
skipped) without root or Go. Everything it started is stopped by pid on
every exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

import fleet_figures as figs  # noqa: E402
from fleet_bench import build_dir, find_go, go_env, took  # noqa: E402
from fleet_cluster import (  # noqa: E402
    KWOK_ANNOTATION,
    ControlPlane,
    Processes,
    Watch,
    fake_nodes,
    free_port,
    proc_usage,
    wait_for,
)
from hold_bench import kwok_stages, run_benchmark, write_all  # noqa: E402

SKIPPED = 77
FIGURES = "fleet-figures.txt"
NODE_PREFIX = "roll-"
NAMESPACE = "rocenet-system"
PER_LEAF = 32
RAILS = 2
# The goals, at 512 nodes.
TOTAL_SECONDS = 600.0
WRITES_PER_SECOND = 60.0
OPERATOR_MIB = 200.0
WRITE_VERBS = ("POST", "PUT", "PATCH", "DELETE")


def rocenet_node(i: int, name: str) -> tuple[dict, dict]:
    """A node's RocenetNode as its reporter writes it: a port a rail, each
    up and addressed, cabled to its rail's leaf switch of the node's
    group of PER_LEAF."""
    obj = {"apiVersion": "rocenet.io/v1alpha1", "kind": "RocenetNode", "metadata": {"name": name}}
    ports = [{"name": f"so{r}", "id": f"0000:{r:02x}:00.0-p0", "rail": r, "state": "up", "healthy": True,
              "address": f"10.{201 + r}.{i // 250}.{i % 250 + 1}/30",
              "switch": {"chassis": f"02:00:00:00:{r:02x}:{i // PER_LEAF:02x}",
                         "systemName": f"rail{r}-leaf{i // PER_LEAF}", "port": f"Ethernet{i % PER_LEAF}"}}
             for r in range(RAILS)]
    status = {"status": {"portCount": RAILS, "readyPortCount": RAILS, "readyPorts": f"{RAILS}/{RAILS}",
                         "ports": ports}}
    return obj, status


def pod_node(pod: dict) -> str:
    """The node a pod is for: where it was bound, or, while it waits, the
    node the DaemonSet controller's affinity names."""
    if pod["spec"].get("nodeName"):
        return pod["spec"]["nodeName"]
    terms = (pod["spec"].get("affinity", {}).get("nodeAffinity", {})
             .get("requiredDuringSchedulingIgnoredDuringExecution", {}).get("nodeSelectorTerms", []))
    for term in terms:
        for f in term.get("matchFields", []):
            if f["key"] == "metadata.name" and len(f.get("values", [])) == 1:
                return f["values"][0]
    return ""


def policy(mtu: int) -> dict:
    return {"apiVersion": "rocenet.io/v1alpha1", "kind": "RocenetNodePolicy",
            "metadata": {"name": "fleet"},
            "spec": {"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "type", "operator": "In", "values": ["kwok"]}]}]},
                     "addressing": {"mtu": mtu},
                     "rollout": {"maxUnavailable": "10%", "maxPerLeaf": 1}}}


def controller_writes(metrics: str) -> float:
    """rocenet-controller's writes so far: its client's requests
    (rest_client_requests_total) of a writing method."""
    with urllib.request.urlopen(metrics, timeout=10) as r:
        text = r.read().decode()
    total = 0.0
    for line in text.splitlines():
        if line.startswith("rest_client_requests_total{") and any(
                f'method="{verb}"' in line for verb in WRITE_VERBS):
            total += float(line.rsplit(" ", 1)[1])
    return total


class Reporters:
    """The node reporters' part: once a node's new pod is Ready, its
    reporter writes the node's RocenetNode (a new heartbeat), as the real
    one does when it starts; until then the RocenetNode is the old pod's
    word, and rocenet-controller does not count the node back."""

    def __init__(self, plane: ControlPlane, pods: Watch):
        self.plane, self.pods, self.written = plane, pods, set()
        self.error, self._stop = "", threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        seen = 0
        while not self._stop.wait(0.1):
            events = self.pods.snapshot()
            for _, pod in events[seen:]:
                meta, node = pod["metadata"], pod["spec"].get("nodeName", "")
                ready = any(c["type"] == "Ready" and c["status"] == "True"
                            for c in pod.get("status", {}).get("conditions", []))
                if not node or not ready or meta.get("deletionTimestamp") or meta["uid"] in self.written:
                    continue
                self.written.add(meta["uid"])
                beat = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + len(self.written)))
                status, data = self.plane.request(
                    "PATCH", f"/apis/rocenet.io/v1alpha1/rocenetnodes/{node}/status",
                    json.dumps({"status": {"heartbeatTime": beat}}).encode(), "application/merge-patch+json")
                if status >= 300:
                    self.error = f"the reporter of {node}: HTTP {status}: {data[:200]!r}"
            seen = len(events)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


class WriteRate:
    """Writes a second, sampled once a second from count()."""

    def __init__(self, count):
        self.count, self.rates, self._stop = count, [], threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _writes(self) -> float:
        return self.count()

    def _run(self) -> None:
        last, at = self._writes(), time.monotonic()
        while not self._stop.wait(1.0):
            now, t = self._writes(), time.monotonic()
            self.rates.append((now - last) / (t - at))
            last, at = now, t

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def run(args, work: str, procs: Processes, say) -> None:
    go = find_go()
    env = {**os.environ, **go_env(go)}
    step = time.monotonic()
    bin_dir = os.path.join(work, "bin")
    subprocess.run(["bash", os.path.join(ROOT, "tests", "k8s", "components.sh"), bin_dir,
                    "kubernetes", "etcd", "kwok"], check=True, env=env)
    stages = kwok_stages(go, env, work)
    step = took(say, "components (etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kwok)", step)
    controller = args.controller or os.path.join(build_dir(), "go", "rocenet-controller")
    if not os.access(controller, os.X_OK):
        raise figs.BenchError(f"{controller}: no rocenet-controller (cmake --build "
                              f"{build_dir()} --target rocenet-controller)")

    plane = ControlPlane(work, bin_dir, procs)
    base = os.path.join(ROOT, "packaging", "kubernetes", "base")
    plane.kubectl("apply", "-f", os.path.join(base, "crds"))
    for name in ("namespace", "serviceaccount"):
        plane.kubectl("apply", "-f", os.path.join(base, f"{name}.yaml"))
    plane.kubectl("wait", "--for=condition=Established", "--timeout=60s",
                  "crd/rocenetnodes.rocenet.io", "crd/rocenetnodepolicies.rocenet.io")
    kubeconfig = ["--kubeconfig", plane.kubeconfig, "--authentication-kubeconfig", plane.kubeconfig,
                  "--authorization-kubeconfig", plane.kubeconfig, "--leader-elect=false", "--secure-port=0"]
    scheduler = procs.start("kube-scheduler", [os.path.join(bin_dir, "kube-scheduler"), *kubeconfig])
    # The DaemonSet controller alone, at kube-controller-manager's default
    # client rate (20 a second, bursts of 30), as in a cluster.
    kcm = procs.start("kube-controller-manager", [
        os.path.join(bin_dir, "kube-controller-manager"), *kubeconfig, "--controllers=daemonset",
        "--use-service-account-credentials=false"])
    step = took(say, "etcd, kube-apiserver, kube-scheduler, kube-controller-manager, CRDs", step)

    names = [f"{NODE_PREFIX}{i:04d}" for i in range(args.nodes)]
    kwok = procs.start("kwok", [
        os.path.join(bin_dir, "kwok"), "--kubeconfig", plane.kubeconfig, "--config", stages,
        "--manage-all-nodes=false", f"--manage-nodes-with-annotation-selector={KWOK_ANNOTATION}=fake",
        "--node-lease-duration-seconds=40"], env={"HOME": work})
    nodes = json.loads(fake_nodes(names))
    for n in nodes["items"]:
        n["metadata"]["labels"]["kubernetes.io/os"] = "linux"
    plane.kubectl("create", "-f", "-", input=json.dumps(nodes))

    def ready_nodes() -> bool:
        items = json.loads(plane.kubectl("get", "nodes", "-o", "json"))["items"]
        return sum(1 for n in items for c in n["status"].get("conditions") or []
                   if c["type"] == "Ready" and c["status"] == "True") == args.nodes
    wait_for(f"{args.nodes} Nodes Ready (kwok)", ready_nodes, 180, interval=1, proc=kwok,
             log=procs.log("kwok"))
    write_all(plane, [("POST", "/apis/rocenet.io/v1alpha1/rocenetnodes", rocenet_node(i, n)[0],
                       "application/json") for i, n in enumerate(names)])
    write_all(plane, [("PATCH", f"/apis/rocenet.io/v1alpha1/rocenetnodes/{n}/status",
                       rocenet_node(i, n)[1], "application/merge-patch+json") for i, n in enumerate(names)])
    step = took(say, f"{args.nodes} kwok Nodes Ready, each with its RocenetNode", step)

    metrics_port = free_port()
    metrics = f"http://127.0.0.1:{metrics_port}/metrics"
    ctrl = procs.start("rocenet-controller", [
        controller, "--kubeconfig", plane.kubeconfig, "--leader-elect=false", f"--namespace={NAMESPACE}",
        f"--metrics-bind-address=127.0.0.1:{metrics_port}", "--metrics-secure=false",
        "--health-probe-bind-address=0", f"-v={args.v}"],
        env={**os.environ, "RELATED_IMAGE_ROCENET": "rocenet.test/rocenet:1"})
    # The pods from the start: each new one Ready has its reporter write;
    # the rollout's replay reads the same watch.
    pods = Watch(plane, f"/api/v1/namespaces/{NAMESPACE}/pods", labels="rocenet.io/node-policy=fleet")
    reporters = Reporters(plane, pods)
    plane.kubectl("apply", "-f", "-", input=json.dumps(policy(0)))
    status: dict = {}

    def policy_ready(generation: int) -> bool:
        nonlocal status
        obj = json.loads(plane.kubectl("get", "rocenetnodepolicy", "fleet", "-o", "json"))
        status = obj.get("status", {})
        ready = [c for c in status.get("conditions", []) if c["type"] == "Ready"]
        return (obj["metadata"]["generation"] >= generation and status.get("observedGeneration") == obj[
            "metadata"]["generation"] and ready and ready[0]["status"] == "True"
                and status.get("readyNodes") == args.nodes)
    wait_for(f"the policy's {args.nodes} pods Ready", lambda: policy_ready(1), 600, interval=1, proc=ctrl,
             log=procs.log("rocenet-controller"))
    step = took(say, f"the policy's DaemonSet on {args.nodes} nodes, Ready", step)

    # The change, and a watch of the pods: when each goes and when its
    # successor is Ready.

    writes_of = {"the API server's": lambda: sum(
        n for (verb, _), n in plane.api_requests().items() if verb in WRITE_VERBS),
        "rocenet-controller's": lambda: controller_writes(metrics)}
    rates = {who: WriteRate(count) for who, count in writes_of.items()}
    ctrl_before = controller_writes(metrics)
    api_before = plane.api_requests()
    # The replay starts here: the install's pods, let run at once, are no
    # wave's.
    changed_at = len(pods.snapshot())
    started = time.monotonic()
    plane.kubectl("patch", "rocenetnodepolicy", "fleet", "--type=merge", "-p",
                  json.dumps({"spec": {"addressing": {"mtu": 9000}}}))
    progress: set[str] = set()

    def rolled_out() -> bool:
        done = (policy_ready(2) and status.get("updatedNodes") == args.nodes
                and not status.get("pendingChange"))
        for c in status.get("conditions", []):
            if c["type"] == "Progressing" and c["status"] == "True":
                progress.add(c["message"])
        if status.get("rolloutFailure"):
            raise figs.BenchError(f"the rollout stopped: {status['rolloutFailure']}")
        return done
    wait_for("the MTU on every node", rolled_out, 1800, interval=1, proc=ctrl,
             log=procs.log("rocenet-controller"))
    total = time.monotonic() - started
    for rate in rates.values():
        rate.stop()
    reporters.stop()
    if reporters.error:
        raise figs.BenchError(reporters.error)
    ctrl_writes = controller_writes(metrics) - ctrl_before
    pods.stop()
    if pods.error:
        raise figs.BenchError(pods.error)
    hwm, cpu = proc_usage(ctrl.pid)
    api = figs.api_diff(api_before, plane.api_requests())

    # Replay the pods: a node is in a wave from its new pod let run (its
    # scheduling gate lifted) to that pod's Ready; its old pod goes after.
    leaf = {n: i // PER_LEAF for i, n in enumerate(names)}
    down: dict[str, str] = {}
    released: set[str] = set()
    gone: set[str] = set()
    most_down = most_of_a_leaf = 0
    for _, pod in pods.snapshot()[changed_at:]:
        meta, node = pod["metadata"], pod_node(pod)
        ready = any(c["type"] == "Ready" and c["status"] == "True"
                    for c in pod.get("status", {}).get("conditions", []))
        if not node:
            continue
        if meta.get("deletionTimestamp"):
            gone.add(meta["name"])
        elif pod["spec"].get("schedulingGates"):
            continue
        elif not ready and meta["name"] not in released:
            released.add(meta["name"])
            down[node] = meta["name"]
            most_down = max(most_down, len(down))
            per_leaf: dict[int, int] = {}
            for n in down:
                per_leaf[leaf[n]] = per_leaf.get(leaf[n], 0) + 1
            most_of_a_leaf = max(most_of_a_leaf, max(per_leaf.values()))
        elif ready and down.get(node) == meta["name"]:
            del down[node]
    writes = sum(n for (verb, _), n in api.items() if verb in WRITE_VERBS)
    server_peak = max(rates["the API server's"].rates, default=0)
    bound = max(args.nodes // 10, 1)
    rows = [
        figs.at_most("the MTU change on every node (a rollout in waves)", total, TOTAL_SECONDS, "s", ".1f"),
        figs.Figure("pods replaced", f"{len(gone)}"),
        figs.Figure("the most nodes coming up at once (bound)", f"{most_down} ({bound})"),
        figs.Figure("the most nodes of a leaf coming up at once (bound)", f"{most_of_a_leaf} (1)"),
        figs.at_most("rocenet-controller's API writes a second, the peak",
                     max(rates["rocenet-controller's"].rates, default=0), WRITES_PER_SECOND, "/s", ".1f"),
        figs.Figure("rocenet-controller's API writes, all; a second",
                    f"{ctrl_writes:.0f}; {ctrl_writes / total:.1f} /s"),
        figs.Figure("the API server's writes a second (every client), the peak; the mean",
                    f"{server_peak:.1f}; {writes / total:.1f} /s"),
        figs.at_most("rocenet-controller peak RSS (VmHWM)", hwm / (1 << 20), OPERATOR_MIB, "MiB", ".1f"),
        figs.Figure("rocenet-controller CPU time", f"{cpu:.1f} s"),
    ]
    say(f"Rollout benchmark, {args.nodes} kwok nodes, {PER_LEAF} to a leaf, {RAILS} rails "
        f"(the goals are for 512 nodes):")
    for line in figs.table(rows):
        say("  " + line)
    most = [(verb, res, n) for (verb, res), n in sorted(api.items(), key=lambda kv: -kv[1])
            if verb in WRITE_VERBS][:5]
    say("  API writes during the rollout, the most: " + ", ".join(
        f"{verb} {res} {n:.0f}" for verb, res, n in most))
    if len(gone) != args.nodes:
        raise figs.BenchError(f"{len(gone)} pods replaced, want {args.nodes}")
    if most_down > bound or most_of_a_leaf > 1:
        raise figs.BenchError(f"a wave past its bounds: {most_down} nodes coming up at once, "
                              f"{most_of_a_leaf} of a leaf")
    for p in (scheduler, kcm, kwok):
        if p.poll() is not None:
            raise figs.BenchError("kube-scheduler, kube-controller-manager or kwok exited during the run")


if __name__ == "__main__":
    sys.exit(run_benchmark("rollout", run,
                           ("rocenet-controller", "kube-controller-manager", "kube-scheduler", "kwok"),
                           "kwok and Kubernetes' components"))
