# SPDX-License-Identifier: Apache-2.0
"""rocenet on several real nodes: a cluster of NODES kubelets, each in a
node namespace of the simulated cluster fabric (a leaf switch per rail for
every two nodes, a spine per rail), rocenet installed as users install it
(the generic overlay: the operator makes the node side from the default
policy, pointed at the fabric's ports by name).

What only several nodes show: the DaemonSet on every node and the
RocenetCluster counting each, each node's ports addressed from its own
leaf's LLDP, two pods on nodes of different leaves reaching each other
over their scale-out ports, through the spine, each rail's traffic on its
own rail; a triage naming a TrainJob, or its JobSet, taking exactly its
pods' nodes; an
invasive triage holding every node and running between them, and one
deleted mid-run falling quiet on every node; a training job (a JobSet as
Kubeflow Trainer runs an MPI job, and the shipped Gaudi 3 TrainJob that
Trainer's own controller runs) whose all-reduce runs over its pods'
scale-out ports alone; the shipped PyTorchJob meeting at its master and
summing over its ports; the other shipped jobs accepted by their APIs; a
change rolled out a node of each leaf at a time, every node served
throughout; a leaf switch down making the
RocenetCluster Degraded, naming every node on that leaf and no other; a
reporter's token, bound to its node by the API server, refused on
another node's objects.

The module is marked `ordered` (tests/k8s/conftest.py): its tests run in
the file's order on one cluster, and after a failure the later ones are
reported SKIPPED."""

from __future__ import annotations

import contextlib
import json
import os
import re
import ssl
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest
import yaml

import multinode_support as mn
import training_job as training
from e2e_support import DAEMON_SOCKET, NODE_DAEMONSET, POLICY, TRAINING_IMAGE, Serving, wait

pytestmark = pytest.mark.ordered


@pytest.fixture(scope="module")
def env(artifacts, say, took):
    with mn.deployed_on_nodes(artifacts, say, took) as e:
        yield e


def test_every_node_runs_rocenet_and_the_cluster_counts_them(env):
    started = time.monotonic()
    ds = wait(f"the DaemonSet {NODE_DAEMONSET} ready on {mn.NODES} nodes", lambda: (
        lambda d: d if d and d["status"].get("numberReady") == mn.NODES else None)(
            json.loads(env.kubectl("-n", "rocenet-system", "get", "ds", NODE_DAEMONSET, "-o", "json",
                                   check=False).stdout or "null")), 300)
    assert ds["status"]["desiredNumberScheduled"] == mn.NODES
    for node in env.nodes:
        assert wait(f"{node}: {mn.RAILS} ports allocatable",
                    lambda n=node: env.allocatable_on(n) == mn.RAILS, 120)
    cluster = wait("the RocenetCluster counting every node", lambda: (
        lambda c: c if c.get("status", {}).get("readyNodes") == f"{mn.NODES}/{mn.NODES}" else None)(
            env.json("get", "rocenetcluster", "cluster")), 120)
    env.say(f"nodes: rocenet ready on {mn.NODES} nodes {time.monotonic() - started:.0f} s "
            f"after the install; kubectl get rocenetnodes:\n"
            + env.kubectl("get", "rocenetnodes", "-o", "wide").stdout)
    assert cluster["status"]["targetNodes"] == mn.NODES, cluster["status"]
    # What a node costs this machine: its kubelet and its runtime.
    for node in env.cluster.nodes:
        runtime = "crio" if node.crio else "containerd"
        rss = {program: _rss_mib(env.cluster.record["pids"][node.program(program)])
               for program in ("kubelet", runtime)}
        env.say(f"nodes: {node.name}: kubelet {rss['kubelet']:.0f} MiB, "
                f"{runtime} {rss[runtime]:.0f} MiB resident")


def _rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        kib = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return kib / 1024


def test_each_node_takes_its_addresses_from_its_own_leaf(env):
    for i, node in enumerate(env.nodes):
        out = env.rocectl_on(node, "addressing")
        for rail in range(mn.RAILS):
            want = mn.simcluster.node_address(i, rail)
            assert re.search(rf"^so{rail}\s+ready\b.*\b{re.escape(want)}/30", out, re.M), \
                f"{node}: so{rail} not {want}:\n{out}"


def test_pods_on_two_leaves_reach_each_other_on_each_rail_and_only_there(env):
    first, last = env.nodes[0], env.nodes[-1]
    assert env.fab.leaf_of(0) != env.fab.leaf_of(mn.NODES - 1)
    env.pod_on("left", first, mn.RAILS)
    env.pod_on("right", last, mn.RAILS)
    for pod in ("left", "right"):
        wait(f"{pod} running", lambda p=pod: env.phase(p) == "Running", 120)

    def addresses(pod: str) -> dict[str, str]:
        out = env.exec(pod, "ip", "-4", "-o", "addr", "show")
        return {m.group(1): m.group(2) for m in re.finditer(r"^\d+: (net\d+)\s+inet ([\d.]+)/", out, re.M)}
    left, right = addresses("left"), addresses("right")
    assert len(left) == len(right) == mn.RAILS, (left, right)
    by_rail = {pod: {a.split(".")[1]: (dev, a) for dev, a in addrs.items()}
               for pod, addrs in (("left", left), ("right", right))}
    for rail_octet, (dev, _) in by_rail["left"].items():
        _, target = by_rail["right"][rail_octet]
        out = env.exec("left", "ping", "-c", "3", "-W", "2", "-I", dev, target)
        assert " 0% packet loss" in out, out
        env.say(f"nodes: {first} {dev} -> {last} {target} through the spine: 3/3 replies")
        # The other rail's address is not reachable from this rail's port.
        other = [a for o, (_, a) in by_rail["right"].items() if o != rail_octet][0]
        cp = env.kubectl("exec", "left", "--", "ping", "-c", "1", "-W", "2", "-I", dev, other,
                         check=False)
        assert cp.returncode != 0, f"{dev} reached {other} on another rail:\n{cp.stdout}"
    # The last node runs Multus thick, as OpenShift does: the right pod's
    # ports came from multus-daemon running rocenet's CNI plugin, not
    # from the plugin kubelet's runtime ran.
    with open(os.path.join(env.cluster.work, "logs", f"multus-daemon-{last}.log")) as f:
        daemon = [line for line in f if "ADD starting CNI request" in line and "K8S_POD_NAME=right" in line]
    assert daemon, f"multus-daemon of {last} handled no request for the pod right"
    status = json.loads(env.json("get", "pod", "right")["metadata"]["annotations"][
        "k8s.v1.cni.cncf.io/network-status"])
    assert sorted(s["interface"] for s in status if s.get("interface", "").startswith("net")) == \
        [f"net{i + 1}" for i in range(mn.RAILS)], status
    env.say(f"nodes: {last} (Multus thick): multus-daemon took the pod right's ADD ({len(daemon)} request) "
            f"and gave it {', '.join(s['interface'] for s in status if 'interface' in s)}")
    for pod in ("left", "right"):
        env.delete(pod)


def _ports_home(env) -> None:
    """Every node's RocenetNode says each of its ports is in the host and
    addressed (an earlier test's pods gone, their ports back)."""
    def home(node: str) -> bool:
        ports = env.json("get", "rocenetnode", node).get("status", {}).get("ports", [])
        return len(ports) == mn.RAILS and all(p.get("address") and not p.get("inPod") for p in ports)
    for node in env.nodes:
        wait(f"{node}: every port home and addressed", lambda n=node: home(n), 120, 0.5)


def _triage_status(env, name: str) -> dict:
    got = env.kubectl("get", "rocenettriage", name, "-o", "json", check=False)
    return json.loads(got.stdout).get("status", {}) if got.returncode == 0 else {}


def _holders(env) -> list[dict]:
    return env.json("-n", "rocenet-system", "get", "pods", "-l", "rocenet.io/triage-role=holder")["items"]


def _holder_nodes(env) -> set[str]:
    """The nodes where a holder runs, not being deleted."""
    return {p["spec"]["nodeName"] for p in _holders(env) if p["spec"].get("nodeName")
            and p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")}


def _sent(env) -> list[int]:
    """Every node's scale-out ports' transmitted bytes, node by node."""
    return [sum(int(env.fab.node_exec(i, ["cat", f"/sys/class/net/so{r}/statistics/tx_bytes"]).stdout)
                for r in range(mn.RAILS)) for i in range(mn.NODES)]


def _triage_by_job(env, kind: str, name: str, nodes: list[str]) -> None:
    """A reach triage naming the job `kind`/`name` succeeds over exactly
    `nodes`, its coordinator one of them."""
    triage = f"by-{kind.lower()}"
    env.apply({"apiVersion": "rocenet.io/v1alpha1", "kind": "RocenetTriage",
               "metadata": {"name": triage, "namespace": "default"},
               "spec": {"job": {"kind": kind, "name": name}, "count": 3, "timeoutSeconds": 3,
                        "keepResult": True}})
    status = wait(f"the triage by {kind} finished", lambda: (lambda s: s if s.get("phase") in (
        "Succeeded", "Failed", "Inconclusive", "Error") else None)(
            env.json("get", "rocenettriage", triage).get("status", {})), 180, 0.5)
    env.say(f"training: kubectl get rocenettriage, by {kind}:\n" +
            env.kubectl("get", "rocenettriage", triage, "-o", "wide").stdout.rstrip())
    assert status["phase"] == "Succeeded", status
    assert status["nodeCount"] == len(nodes) and status["coordinator"] in nodes, status
    kept = env.json("-n", "rocenet-system", "get", "configmap", status["resultConfigMap"])
    assert sorted(json.loads(kept["data"]["result.json"])["nodes"]) == sorted(nodes), kept
    env.kubectl("delete", "rocenettriage", triage, "--wait=true")


def test_a_triage_by_trainjob_or_its_jobset_takes_exactly_the_nodes_of_its_pods(env):
    """A TrainJob waiting on two of the three nodes (Kubeflow Trainer's
    MPI runtime, its launcher sleeping, no port held): a RocenetTriage
    naming the TrainJob, and one naming the JobSet Trainer made of it,
    each runs reach over those two nodes alone, with the controller's own
    rights (Trainer's and the JobSet controller built from their modules,
    on the real API server)."""
    name, nodes = "waiting", [env.nodes[0], env.nodes[-1]]
    with open(os.path.join(env.cluster.bin, "trainer-mpi-runtime.yaml")) as f:
        shipped = yaml.safe_load(f)
    env.apply(training.cluster_training_runtime(shipped, "mpi-waiting", name, TRAINING_IMAGE, nodes, 0,
                                                ["sleep", "3600"]))
    env.apply(training.trainjob(name, "default", "mpi-waiting", len(nodes)))

    def running() -> list[str]:
        pods = env.json("get", "pods", "-l", f"jobset.sigs.k8s.io/jobset-name={name}")["items"]
        return sorted(p["spec"]["nodeName"] for p in pods if p["status"].get("phase") == "Running")
    wait(f"the pods of {name} running", lambda: running() == sorted(nodes), 180, 0.5)
    _ports_home(env)
    _triage_by_job(env, "TrainJob", name, nodes)
    _triage_by_job(env, "JobSet", name, nodes)
    env.kubectl("delete", "trainjob", name, "--wait=true")
    env.kubectl("delete", "clustertrainingruntime", "mpi-waiting", "--wait=true")
    wait(f"the pods of {name} gone", lambda: not env.json(
        "get", "pods", "-l", f"jobset.sigs.k8s.io/jobset-name={name}")["items"], 60, 0.5)


def test_an_invasive_triage_holds_every_node_and_runs_between_them(env):
    """An all-reduce triage over the three nodes: a holder on every node
    takes its ports through the scheduler, the ring runs between the nodes
    over both rails and through the spine, and the run validates them."""
    _ports_home(env)
    held: set[str] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            held.update(_holder_nodes(env))
            time.sleep(0.3)
    watcher = threading.Thread(target=watch)
    watcher.start()
    started = time.monotonic()
    try:
        env.apply({"apiVersion": "rocenet.io/v1alpha1", "kind": "RocenetTriage",
                   "metadata": {"name": "ring", "namespace": "default"},
                   "spec": {"stage": "allreduce", "nodes": env.nodes, "timeoutSeconds": 20}})
        status = wait("the all-reduce triage finished", lambda: (lambda s: s if s.get("phase") in (
            "Succeeded", "Failed", "Inconclusive", "Error", "Skipped", "NotMeasured") else None)(
                _triage_status(env, "ring")), 240, 0.5)
    finally:
        done.set()
        watcher.join()
    took = time.monotonic() - started
    env.say("triage: kubectl get rocenettriage, all-reduce over every node:\n" +
            env.kubectl("get", "rocenettriage", "ring", "-o", "wide").stdout.rstrip())
    assert status["phase"] == "Succeeded", status
    assert status["nodeCount"] == mn.NODES and not status.get("skippedNodes"), status
    assert held == set(env.nodes), f"holders seen running on {sorted(held)}"
    assert status["labels"]["validated"] == mn.NODES, status
    wait("every holder gone", lambda: not _holders(env), 60, 0.5)
    for node in env.nodes:
        assert wait(f"{node}: every port allocatable again",
                    lambda n=node: env.allocatable_on(n) == mn.RAILS, 60)
    env.say(f"triage: all-reduce over {mn.NODES} nodes, holders on each, Succeeded in {took:.0f} s")
    env.kubectl("delete", "rocenettriage", "ring", "--wait=true")


def test_an_invasive_triage_deleted_mid_run_stops_its_traffic_on_every_node(env):
    """A bandwidth triage over the three nodes, a holder on each, deleted
    while its traffic flows: the deletion waits for the run (its
    finalizer), every node's ports fall quiet, the run's holders go only
    after, and every port is allocatable again."""
    _ports_home(env)
    env.apply({"apiVersion": "rocenet.io/v1alpha1", "kind": "RocenetTriage",
               "metadata": {"name": "stopped", "namespace": "default"},
               "spec": {"stage": "bandwidth", "nodes": env.nodes, "timeoutSeconds": 30}})
    wait("the bandwidth triage Running", lambda: _triage_status(env, "stopped").get("phase") == "Running",
         120, 0.2)
    # Its ports held on every node, each by a holder the scheduler placed.
    wait("a holder running on every node", lambda: _holder_nodes(env) == set(env.nodes), 30, 0.2)

    def flowing() -> bool:
        before = _sent(env)
        time.sleep(1)
        return sum(_sent(env)) - sum(before) > 10 << 20
    wait("the test's traffic on the ports", flowing, 60, 0.2)
    deleted = time.monotonic()
    env.kubectl("delete", "rocenettriage", "stopped", "--wait=false")
    seen = _triage_status(env, "stopped")
    assert seen, "the triage went before its run was stopped (no finalizer held it)"

    def quiet() -> bool:
        before = _sent(env)
        time.sleep(1)
        return max(a - b for a, b in zip(_sent(env), before, strict=True)) < 64 << 10
    wait("every node's ports quiet", quiet, 60, 0.2)
    stopped = time.monotonic() - deleted
    wait("the triage gone", lambda: env.kubectl("get", "rocenettriage", "stopped",
                                                check=False).returncode != 0, 120, 0.5)
    gone = time.monotonic() - deleted
    # Its holders deleted before it went; gone a grace period later.
    assert not _holder_nodes(env), "holders left after the triage went"
    wait("the holders gone", lambda: not _holders(env), 30, 0.2)
    holders_gone = time.monotonic() - deleted
    for node in env.nodes:
        assert wait(f"{node}: every port allocatable again",
                    lambda n=node: env.allocatable_on(n) == mn.RAILS, 60)
    env.say(f"triage: a bandwidth run deleted mid-run: every node's ports quiet within {stopped:.1f} s "
            f"(sampled over 1 s), the triage gone {gone:.1f} s and its holders {holders_gone:.1f} s "
            "after the delete")


def _jobset_ended(env, name: str) -> str | None:
    """Completed or Failed, once the JobSet has ended."""
    conditions = env.json("get", "jobset", name).get("status", {}).get("conditions", [])
    ended = [c["type"] for c in conditions if c["type"] in ("Completed", "Failed") and c["status"] == "True"]
    return ended[0] if ended else None


def _all_reduce_checked(env, name: str, nodes: list[str], size: int, rounds: int, took: float,
                        how: str) -> None:
    """The JobSet `name` ended Completed, and its launcher's all-reduce
    was right, over the pods' scale-out ports alone, each rail carrying a
    share, each rank's ports its node's; its figures said."""
    # The launcher's log, followed from its start: a failed JobSet's pods
    # go with their logs.
    launcher = f"jobset.sigs.k8s.io/jobset-name={name},jobset.sigs.k8s.io/replicatedjob-name=launcher"
    started = wait(f"the launcher of {name} started", lambda: [
        p["metadata"]["name"] for p in env.json("get", "pods", "-l", launcher)["items"]
        if p["status"].get("phase") in ("Running", "Succeeded", "Failed")], 300, 0.2)
    # Where each pod runs (its hostname, the rank's host), while they run:
    # the JobSet's end deletes its workers.
    def placed() -> dict[str, str] | None:
        got = {p["spec"]["hostname"]: p["spec"]["nodeName"] for p in env.json(
            "get", "pods", "-l", f"jobset.sigs.k8s.io/jobset-name={name}")["items"]
            if p["spec"].get("nodeName")}
        return got if len(got) == len(nodes) else None
    pods = wait(f"the pods of {name} placed", placed, 120, 0.2)
    kubectl = [os.path.join(env.cluster.bin, "kubectl"), "--kubeconfig", env.cluster.kubeconfig]
    follow = subprocess.Popen([*kubectl, "logs", "-f", "--tail=-1", started[0]],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    ended = wait(f"the JobSet {name} ended", lambda: _jobset_ended(env, name), 300, 1)
    took = time.monotonic() - took
    try:
        log, _ = follow.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        follow.kill()
        log, _ = follow.communicate()
    assert ended == "Completed", f"the JobSet {ended}:\n{log[-3000:]}"
    _ranks_checked(env, training.report(log), pods, nodes, size, rounds, took, how)


def _ranks_checked(env, result: dict, pods: dict[str, str], nodes: list[str], size: int, rounds: int,
                   took: float, how: str) -> None:
    """The all-reduce's report (`result`, allreduce.py's form) was right,
    over the pods' scale-out ports alone, each rail carrying a share, each
    rank's ports its node's (`pods`: each rank's host to its node); its
    figures said."""
    assert result["right"] and result["ranks"] == len(nodes) and result["bytes"] == size, result
    sent = size * rounds
    assert sorted(pods.get(r["host"]) for r in result["per_rank"]) == sorted(nodes), (pods, result)
    for rank in result["per_rank"]:
        where = f"rank {rank['rank']} ({rank['host']} on {pods.get(rank['host'])})"
        moved = rank["interfaces"]
        scale_out = {f"net{i + 1}": moved[f"net{i + 1}"]["tx"] for i in range(mn.RAILS)}
        per_port = ", ".join(f"{k} {v / 2**20:.1f} MiB" for k, v in scale_out.items())
        env.say(f"training: {how}: {where}: sent {per_port}, eth0 {moved['eth0']['tx'] / 2**20:.2f} MiB")
        assert sum(scale_out.values()) >= sent, (where, moved)
        for interface, count in scale_out.items():
            assert count >= sent / (4 * mn.RAILS), f"{where}: {interface} carried {count} of {sent} bytes"
        assert moved["eth0"]["tx"] < sent / 100, f"{where}: the primary network carried {moved['eth0']}"
        # The rank's ports carry its node's addresses, one a rail, as its
        # leaves' LLDP gave them (the fabric's ports are not Gaudi ports:
        # no HCL file; e2e_test.py reads a Gaudi pod's).
        index = env.nodes.index(pods[rank["host"]])
        ports = {rank["addresses"][n].split("/")[0] for n in scale_out}
        want = {mn.simcluster.node_address(index, r) for r in range(mn.RAILS)}
        assert ports == want, f"{where}: the pod's ports {sorted(ports)}, its node's {sorted(want)}"
    rate = 2 * sent / result["seconds"] / 2**20
    env.say(f"training: {how}: all-reduce of {size >> 20} MiB x {rounds} over {len(nodes)} ranks on "
            f"{' and '.join(nodes)} (two leaves), {mn.RAILS} rails: {result['seconds']:.2f} s, "
            f"{rate:.0f} MiB/s in and out a rank; done {took:.0f} s after the apply")


def test_an_mpi_all_reduce_across_two_leaves_runs_on_the_scale_out_ports(env):
    """A training job as Kubeflow Trainer runs one with MPI: a JobSet (its
    controller built from its module) whose launcher and worker pods, on
    nodes of two leaves, each hold a port of every rail; Open MPI's
    all-reduce over those ports alone, its sums right, every rail carrying
    its share, the primary network next to nothing; each rank's ports
    with its node's addresses."""
    name, nodes = "allreduce", [env.nodes[0], env.nodes[-1]]
    assert env.fab.leaf_of(0) != env.fab.leaf_of(mn.NODES - 1)
    size, rounds = 16 << 20, 8
    started = time.monotonic()
    for obj in (training.ssh_secret(name, "default"), training.hostfile(name, "default", len(nodes)),
                training.jobset(name, "default", TRAINING_IMAGE, nodes, mn.RAILS,
                                training.mpirun(len(nodes), mn.RAILS, size, rounds))):
        env.apply(obj)
    _all_reduce_checked(env, name, nodes, size, rounds, started, "JobSet")
    env.kubectl("delete", "jobset", name, "--wait=true")


GAUDIS = 8


@contextlib.contextmanager
def _gaudis_advertised(env, nodes: list[str]):
    """Each node advertises 8 habana.ai/gaudi, as Habana's device plugin
    would (there is no Gaudi here): an extended resource in the Node's
    capacity, which kubelet carries into allocatable and the scheduler
    counts."""
    path = "/status/capacity/habana.ai~1gaudi"
    for node in nodes:
        env.kubectl("patch", "node", node, "--subresource=status", "--type=json",
                    "-p", json.dumps([{"op": "add", "path": path, "value": str(GAUDIS)}]))
    for node in nodes:
        wait(f"{node} allocating {GAUDIS} Gaudis", lambda n=node: env.json("get", "node", n)
             ["status"]["allocatable"].get("habana.ai/gaudi") == str(GAUDIS), 60, 0.5)
    try:
        yield
    finally:
        for node in nodes:
            env.kubectl("patch", "node", node, "--subresource=status", "--type=json",
                        "-p", json.dumps([{"op": "remove", "path": path}]), check=False)


def test_the_shipped_gaudi3_trainjob_runs_on_the_scale_out_ports(env):
    """The TrainJob an ML engineer submits (examples/training/
    trainjob-mpi.yaml, as shipped) on the Gaudi 3 MPI runtime the platform
    team keeps (gaudi3-runtimes.yaml: gaudi3-mpi), changed only where the
    fabric needs it (training_job.on_the_fabric: image, the launcher's
    command, 2 ports a pod); Trainer's controller (built from its module)
    makes the JobSet, its SSH keys and hostfile; each pod is given its 8
    Gaudis and runs under the shipped security context (non-root, every
    capability dropped but IPC_LOCK); the ranks run over the pods'
    scale-out ports."""
    [job] = training.example("trainjob-mpi.yaml")
    name, nodes = job["metadata"]["name"], [env.nodes[0], env.nodes[-1]]
    assert job["spec"]["trainer"]["numNodes"] == len(nodes)
    runtimes = {d["metadata"]["name"]: d for d in training.example("gaudi3-runtimes.yaml")}
    runtime = runtimes[job["spec"]["runtimeRef"]["name"]]
    size, rounds = 16 << 20, 8
    with _gaudis_advertised(env, env.nodes):
        env.apply(training.on_the_fabric(runtime, name, TRAINING_IMAGE, nodes, mn.RAILS,
                                         training.mpirun(len(nodes), mn.RAILS, size, rounds)))
        started = time.monotonic()
        env.apply({**job, "metadata": {**job["metadata"], "namespace": "default"}})

        def given() -> list[dict] | None:
            pods = env.json("get", "pods", "-l", f"jobset.sigs.k8s.io/jobset-name={name}")["items"]
            return pods if len(pods) == len(nodes) else None
        for pod in wait(f"the pods of {name}", given, 120, 0.2):
            [container] = pod["spec"]["containers"]
            assert container["resources"]["limits"]["habana.ai/gaudi"] == str(GAUDIS), container
            assert container["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["IPC_LOCK"]}
            assert pod["metadata"]["annotations"]["openshift.io/required-scc"] == "rocenet-training"
        _all_reduce_checked(env, name, nodes, size, rounds, started, "TrainJob")

        def complete() -> bool:
            conditions = env.json("get", "trainjob", name).get("status", {}).get("conditions", [])
            return any(c["type"] == "Complete" and c["status"] == "True" for c in conditions)
        wait(f"the TrainJob {name} Complete", complete, 60, 0.5)
        env.kubectl("delete", "trainjob", name, "--wait=true")
        env.kubectl("delete", "clustertrainingruntime", runtime["metadata"]["name"], "--wait=true")


def _accepted(env, doc: dict) -> dict:
    """`doc` as the API server would store it (server-side dry run): its
    CRD's schema and defaults, its admission webhooks; every field given
    must come back, none pruned as unknown."""
    cp = env.kubectl("apply", "--dry-run=server", "-n", "default", "-o", "json", "-f", "-",
                     input=json.dumps(doc), check=False)
    assert cp.returncode == 0, f"{doc['kind']} {doc['metadata']['name']} refused: {cp.stderr}"
    stored = json.loads(cp.stdout)

    def kept(given, got, where: str) -> None:
        if isinstance(given, dict):
            assert isinstance(got, dict), where
            for k, v in given.items():
                assert k in got, f"{doc['kind']}: {where}.{k} pruned"
                kept(v, got[k], f"{where}.{k}")
        elif isinstance(given, list):
            assert isinstance(got, list) and len(got) == len(given), where
            for i, (a, b) in enumerate(zip(given, got, strict=True)):
                kept(a, b, f"{where}[{i}]")
    kept(doc["spec"], stored["spec"], "spec")
    return stored


def test_the_other_shipped_jobs_are_accepted_by_their_apis(env):
    """The TrainJob on the torch runtime (both as shipped) passes Trainer's
    CRDs and webhooks, which refuse one naming no runtime; the PyTorchJob
    passes the real CRD of Kubeflow's training operator, every field kept.
    They do not run: there is no PyTorch image here (docs/training.md)."""
    runtimes = {d["metadata"]["name"]: d for d in training.example("gaudi3-runtimes.yaml")}
    env.apply(runtimes["gaudi3-torch"])
    try:
        [job] = training.example("trainjob.yaml")
        # Trainer's webhook reads runtimes from its controller's cache.
        wait("Trainer's webhook seeing gaudi3-torch", lambda: env.kubectl(
            "apply", "--dry-run=server", "-n", "default", "-f", "-", input=json.dumps(job),
            check=False).returncode == 0, 30, 0.5)
        _accepted(env, job)
        lost = json.loads(json.dumps(job))
        lost["spec"]["runtimeRef"]["name"] = "no-such-runtime"
        cp = env.kubectl("apply", "--dry-run=server", "-n", "default", "-f", "-",
                         input=json.dumps(lost), check=False)
        assert cp.returncode != 0 and "no-such-runtime" in cp.stderr, cp.stderr
    finally:
        env.kubectl("delete", "clustertrainingruntime", "gaudi3-torch", "--wait=true", check=False)
    [job] = training.example("pytorchjob.yaml")
    stored = _accepted(env, job)
    env.say(f"training: {stored['kind']} {stored['metadata']['name']} and the torch TrainJob "
            "accepted by their CRDs and webhooks")


def test_the_shipped_pytorchjob_meets_at_its_master_and_sums_over_the_ports(env):
    """The shipped PyTorchJob (examples/training/pytorchjob.yaml) on
    Kubeflow's training operator v1 (its controller built from its module),
    changed only where the fabric needs it (training_job.
    pytorchjob_on_the_fabric: image, a program instead of torchrun, 2 ports
    a pod): its master and worker, on two leaves, each given 8 Gaudis, meet
    at the master's Service from the variables the operator gives them (as
    torchrun's c10d rendezvous does, over the pod network: rendezvous.py)
    and sum their buffers over their scale-out ports alone."""
    [job] = training.example("pytorchjob.yaml")
    name, nodes = job["metadata"]["name"], [env.nodes[0], env.nodes[-1]]
    size, rounds = 16 << 20, 8
    selector = f"training.kubeflow.org/job-name={name}"
    with _gaudis_advertised(env, env.nodes):
        started = time.monotonic()
        env.apply({**training.pytorchjob_on_the_fabric(job, TRAINING_IMAGE, nodes, mn.RAILS, size, rounds),
                   "metadata": {**job["metadata"], "namespace": "default"}})

        def ended() -> str | None:
            conditions = env.json("get", "pytorchjob", name).get("status", {}).get("conditions", [])
            done = [c["type"] for c in conditions if c["type"] in ("Succeeded", "Failed")
                    and c["status"] == "True"]
            # The shipped restartPolicy (OnFailure) would retry a failed
            # pod for ever: its first failure ends the test.
            restarted = any(c.get("restartCount", 0) for p in env.json("get", "pods", "-l", selector)["items"]
                            for c in p.get("status", {}).get("containerStatuses", []))
            return done[0] if done else "Restarted" if restarted else None
        outcome = wait(f"the PyTorchJob {name} ended", ended, 300, 1)
        took = time.monotonic() - started
        pods = env.json("get", "pods", "-l", selector)["items"]
        logs = {p["metadata"]["name"]: env.kubectl("logs", "--all-containers", p["metadata"]["name"],
                                                   *(["--previous"] if outcome == "Restarted" else []),
                                                   check=False).stdout for p in pods}
        assert outcome == "Succeeded", f"the PyTorchJob {outcome}: {logs}"
        master = [p for p in pods if p["metadata"]["labels"].get("training.kubeflow.org/replica-type")
                  in ("master", "Master")]
        assert len(master) == 1 and len(pods) == 2, [p["metadata"]["name"] for p in pods]
        for pod in pods:
            [container] = pod["spec"]["containers"]
            assert container["resources"]["limits"]["habana.ai/gaudi"] == "8", container
            environ = {e["name"]: e.get("value") for e in container["env"]}
            assert environ["WORLD_SIZE"] == "16" and environ["PET_NNODES"] == "2", environ
        hosts = {p["spec"].get("hostname", p["metadata"]["name"]): p["spec"]["nodeName"] for p in pods}
        _ranks_checked(env, training.report(logs[master[0]["metadata"]["name"]]), hosts, nodes,
                       size, rounds, took, "PyTorchJob")
        env.kubectl("delete", "pytorchjob", name, "--wait=true")
        wait(f"the pods of {name} gone", lambda: not env.json("get", "pods", "-l", selector)["items"],
             60, 0.5)


def _replacing(env, old: dict[str, str]) -> set[str]:
    """The nodes whose new pod runs (its gate lifted) while their old pod
    is still there and not yet let go: the nodes of the wave under way. An
    old pod being deleted belongs to a wave that is done (its node's new
    pod took over), however long it takes to terminate."""
    pods = env.json("-n", "rocenet-system", "get", "pods", "-l",
                    "app.kubernetes.io/name=rocenet,app.kubernetes.io/component=node")["items"]
    names = {p["metadata"]["name"] for p in pods if not p["metadata"].get("deletionTimestamp")}
    busy = set()
    for p in pods:
        terms = p["spec"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        node = terms[0]["matchFields"][0]["values"][0]
        if p["metadata"]["name"] != old[node] and not p["spec"].get("schedulingGates") \
                and old[node] in names:
            busy.add(node)
    return busy


def test_a_change_rolls_out_a_node_of_each_leaf_at_a_time_and_every_node_serves(env):
    """An MTU change with maxUnavailable 100 %, so that the leaves alone
    bound a wave (maxPerLeaf 1): never two nodes of a leaf at once; each
    node's new pod beside its old one, each node's rocenetd socket
    answering every call throughout and kubelet counting its every
    port."""
    old = {n: env.rocenet_pod_on(n) for n in env.nodes}
    leaf = {env.nodes[i]: env.fab.leaf_of(i) for i in range(mn.NODES)}
    servings = [Serving(env, node.path(DAEMON_SOCKET), lambda n=node.name: env.allocatable_on(n))
                for node in env.cluster.nodes]
    waves: list[set[str]] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            busy = _replacing(env, old)
            if busy and (not waves or waves[-1] != busy):
                waves.append(busy)
            time.sleep(0.2)
    watcher = threading.Thread(target=watch)
    started = time.monotonic()
    with contextlib.ExitStack() as stack:
        for serving in servings:
            stack.enter_context(serving)
        watcher.start()
        try:
            env.kubectl("patch", "rocenetnodepolicy", POLICY, "--type=merge", "-p", json.dumps(
                {"spec": {"addressing": {"mtu": 1400}, "rollout": {"maxUnavailable": "100%"}}}))
            wait("every old pod gone", lambda: not set(old.values()) & set(
                p["metadata"]["name"] for p in env.json("-n", "rocenet-system", "get", "pods")["items"]),
                 300, 0.5)
            took = time.monotonic() - started
            wait("the policy Ready", lambda: (lambda p: p["status"].get("observedGeneration") ==
                                               p["metadata"]["generation"] and any(
                c["type"] == "Ready" and c["status"] == "True" for c in p["status"]["conditions"]))(
                env.json("get", "rocenetnodepolicy", POLICY)), 120)
        finally:
            done.set()
            watcher.join()
    for i in range(mn.NODES):
        link = env.fab.node_exec(i, ["ip", "-o", "link", "show", "so0"]).stdout
        assert " mtu 1400 " in link, f"{env.nodes[i]}: {link}"
    env.say(f"nodes: MTU 1400 rolled out over {mn.NODES} nodes in {took:.0f} s, the waves as "
            f"seen: {' -> '.join('+'.join(sorted(w)) for w in waves)}")
    for wave in waves:
        per_leaf = [leaf[n] for n in wave]
        assert len(per_leaf) == len(set(per_leaf)), f"two nodes of one leaf at once: {wave}"
    # Every node's new pod ran beside its old one (none was replaced with a
    # gap). Two leaves' nodes at once is the waves' shape when the
    # DaemonSet controller has made both gated pods in time, not a rule.
    assert set().union(*waves) == set(env.nodes), f"nodes never seen replaced: {waves}"
    for node, serving in zip(env.nodes, servings, strict=True):
        env.say(f"nodes: {node}: {serving.summary()}")
        assert serving.served > 50 and not serving.failures, (node, serving.failures[:5])
        assert serving.lowest == mn.RAILS, f"{node}: allocatable fell to {serving.lowest}"


def _degraded(env) -> tuple[bool, set[str]]:
    status = env.json("get", "rocenetcluster", "cluster").get("status", {})
    degraded = any(c["type"] == "Degraded" and c["status"] == "True"
                   for c in status.get("conditions", []))
    return degraded, {d["name"] for d in status.get("degradedNodes", [])}


def test_a_leaf_switch_down_degrades_the_cluster_naming_every_node_on_it(env):
    on_leaf = {env.nodes[i] for i in env.fab.leaf_nodes(0)}
    assert 0 < len(on_leaf) < len(env.nodes)
    assert _degraded(env) == (False, set())
    started = time.monotonic()
    env.fab.leaf(0, 0, "down")
    try:
        wait("the RocenetCluster Degraded, naming the leaf's nodes",
             lambda: _degraded(env) == (True, on_leaf), 15, 0.2)
        took = time.monotonic() - started
    finally:
        env.fab.leaf(0, 0, "up")
    back = time.monotonic()
    wait("the RocenetCluster whole again", lambda: _degraded(env) == (False, set()), 60, 0.5)
    env.say(f"nodes: leaf 0 of rail 0 down: the RocenetCluster Degraded naming "
            f"{', '.join(sorted(on_leaf))} after {took:.1f} s; whole again "
            f"{time.monotonic() - back:.1f} s after the leaf came back")


def test_a_reporters_token_is_refused_on_another_nodes_objects(env):
    """The node reporter's own projected token, read from its node's
    kubelet directory as a compromised node would: the API server binds
    the pod's node into it, and the admission policy refuses its writes to
    any other node's RocenetNode and Node status, and takes them on its own."""
    own, other = env.nodes[1], env.nodes[2]
    pod = env.json("-n", "rocenet-system", "get", "pod", env.rocenet_pod_on(own))
    node = env.cluster.nodes[1]
    # In the node's mount namespace: the volume is a tmpfs its kubelet
    # mounted there.
    token = subprocess.run(node.enter(["cat", f"/var/lib/kubelet/pods/{pod['metadata']['uid']}/"
                                              "volumes/kubernetes.io~projected/api-token/token"]),
                           capture_output=True, text=True, check=True).stdout.strip()
    server = env.cluster.record["server"]
    context = ssl.create_default_context(cafile=os.path.join(env.cluster.work, "pki", "ca.crt"))

    def as_reporter(method: str, path: str, body: dict, content_type: str) -> tuple[int, str]:
        """A request as the reporter makes it (what its RBAC allows: GET
        and PUT of a RocenetNode's status, PATCH of a Node's)."""
        req = urllib.request.Request(f"{server}{path}", method=method,
                                     data=json.dumps(body).encode() if body else None,
                                     headers={"Authorization": f"Bearer {token}",
                                              "Content-Type": content_type})
        try:
            with urllib.request.urlopen(req, context=context, timeout=30) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()
    rocenetnodes = "/apis/rocenet.io/v1alpha1/rocenetnodes"
    for target, allowed in ((other, False), (own, True)):
        code, text = as_reporter("GET", f"{rocenetnodes}/{target}", {}, "application/json")
        assert code == 200, f"{own}'s token cannot read {target}'s RocenetNode: {code} {text}"
        obj = json.loads(text)
        obj["status"]["downPorts"] = "so9 Forged"
        code, text = as_reporter("PUT", f"{rocenetnodes}/{target}/status", obj, "application/json")
        assert (code == 200) == allowed, f"{own}'s token on {target}'s RocenetNode: {code} {text}"
        if not allowed:
            assert code == 403 and "rocenet-node-reporter.rocenet.io" in text, text
            refused = json.loads(text)["message"]
    code, text = as_reporter("PATCH", f"/api/v1/nodes/{other}/status", {"status": {"conditions": [
        {"type": "ScaleOutNetworkReady", "status": "False", "reason": "Forged", "message": "forged"}]}},
        "application/strategic-merge-patch+json")
    assert code == 403, f"{own}'s token patched {other}'s Node status: {code} {text}"
    env.say(f"nodes: {own}'s reporter token refused on {other}'s RocenetNode: {refused[:200]}")
