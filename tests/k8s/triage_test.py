# SPDX-License-Identifier: Apache-2.0
"""rocenet on a real Kubernetes node as an admin sees and triages it with
kubectl: the diagnostics in a container of their own, the fleet view
(RocenetNode, RocenetCluster, the Node condition, `kubectl rocenet
status`) following a pulled cable, a triage by node run as a Job that
names the cable, a run ended by its pod's deadline, and an RDMA triage
holding every port through the scheduler.

The cluster and rocenet are deployed as in e2e_test.py (the generic
overlay: the operator, its default policy, the node side it makes). The
module is marked `ordered` (tests/k8s/conftest.py): its tests run in the
file's order on one cluster, and after a failure the later ones are
reported SKIPPED.
"""

from __future__ import annotations

import base64
import calendar
import json
import os
import re
import subprocess
import tarfile
import threading
import time

import pytest
import yaml

import controller_metrics
from e2e_support import (
    HERE,
    PORTS,
    RESOURCE,
    generic_install,
    node_side_up,
    process_named,
    wait,
)
from testcluster import TEST_IMAGE

pytestmark = pytest.mark.ordered


@pytest.fixture(scope="module")
def env(artifacts, say, took):
    with generic_install(artifacts, say, took) as e:
        node_side_up(e)
        yield e


def test_the_diagnostics_run_in_a_container_of_their_own_with_net_raw_only(env):
    """rocenet-diagd runs beside rocenetd with CAP_NET_RAW alone and answers
    rocectl diag; rocenetd listens on TCP for its metrics only."""
    cap_net_raw = 1 << 13
    diagd, diagd_status = process_named("rocenet-diagd")
    assert int(diagd_status["CapEff"].strip(), 16) == cap_net_raw, diagd_status["CapEff"]
    assert int(diagd_status["CapBnd"].strip(), 16) == cap_net_raw, diagd_status["CapBnd"]
    rocenetd, _ = process_named("rocenetd")
    listening = subprocess.run(["ip", "netns", "exec", env.fab.node_netns, "ss", "-Hltnp"],
                               capture_output=True, text=True, check=True).stdout
    mine = sorted(line.split()[3] for line in listening.splitlines()
                  if f"pid={rocenetd}," in line)
    assert [a.rsplit(":", 1)[1] for a in mine] == ["50152"], listening
    # From rocenetd's container, as an admin would: rocectl diag goes to
    # rocenet-diagd's socket beside rocenetd's; every port reaches its switch.
    reach = json.loads(env.rocectl("diag", "reach", "--count", "3", "-o", "json"))
    assert reach["ok"], reach
    assert sorted(p["port"] for p in reach["ports"]) == [f"so{i}" for i in range(PORTS)], reach
    env.say(f"rocenet-diagd (pid {diagd}): CapEff {diagd_status['CapEff'].strip()}, "
            f"reach ok on {len(reach['ports'])} ports")


def _scale_out_condition(env) -> dict:
    for c in env.json("get", "node", env.cluster.node)["status"].get("conditions", []):
        if c["type"] == "ScaleOutNetworkReady":
            return c
    return {}


def _cluster_conditions(env) -> dict[str, str]:
    got = env.kubectl("get", "rocenetcluster", "cluster", "-o", "json", check=False)
    if got.returncode != 0:
        return {}
    return {c["type"]: c["status"]
            for c in json.loads(got.stdout).get("status", {}).get("conditions", [])}


def test_the_fleet_view_follows_a_pulled_cable(env):
    """The Node condition, the node's RocenetNode (kubectl get rocenetnodes)
    and the RocenetCluster, written by the node reporter and
    rocenet-controller, follow a cable pulled from a port in the host, as
    `kubectl rocenet` shows them (its --live view from rocenetd too)."""
    node = env.cluster.node
    env.kubectl("-n", "rocenet-system", "rollout", "status", "deployment/rocenet-controller",
                "--timeout=120s")
    ready = wait("the Node condition ScaleOutNetworkReady True",
                 lambda: _scale_out_condition(env).get("status") == "True", 120)
    assert ready
    assert _scale_out_condition(env)["message"] == f"{PORTS}/{PORTS} ports ready"
    wait("the RocenetCluster Available", lambda: _cluster_conditions(env).get("Available") == "True",
         120)
    table = env.kubectl("get", "rocenetnodes").stdout
    env.say("kubectl get rocenetnodes:\n" + table.rstrip())
    header, row = table.splitlines()[0].split(), table.splitlines()[1].split()
    assert header[:5] == ["NAME", "READY", "PORTS", "DOWN", "RAILS"], header
    assert row[:3] == [node, "True", f"{PORTS}/{PORTS}"], row

    status = env.rocenet("status")
    assert status.returncode == 0, status.stderr
    assert re.search(r"Available\s+True\s+AllNodesReady\s+1/1 nodes ready", status.stdout), status.stdout
    live = env.rocenet("ports", node, "--live")
    assert live.returncode == 0, live.stderr
    assert f"node ready: yes ({PORTS}/{PORTS} ports healthy)" in live.stdout, live.stdout
    missing = env.rocenet("ports", "no-such-node", "--live")
    assert missing.returncode == 1 and "no-such-node" in missing.stderr, missing

    attached = {a["host_ifname"] for a in env.attachments()}
    name = next(f"so{i}" for i in range(PORTS) if f"so{i}" not in attached)
    index = int(name.removeprefix("so"))
    env.fab.link(index, "down")
    pulled = time.monotonic()
    figures = {}
    try:
        def rnode_row():
            ports = env.json("get", "rocenetnode", node)["status"].get("ports", [])
            return next((p for p in ports if p["name"] == name), {})
        wait("the port's row in the RocenetNode down",
             lambda: rnode_row().get("healthy") is False and rnode_row().get("state") != "up", 60, 0.2)
        figures["RocenetNode"] = time.monotonic() - pulled
        wait("the RocenetCluster Degraded", lambda: _cluster_conditions(env).get("Degraded") == "True",
             60, 0.2)
        figures["RocenetCluster Degraded"] = time.monotonic() - pulled
        wait("the Node condition False", lambda: _scale_out_condition(env).get("status") == "False",
             60, 0.2)
        figures["Node condition False"] = time.monotonic() - pulled
        c = _scale_out_condition(env)
        assert c["reason"] == "LinkDown", c
        assert c["message"] == f"{PORTS - 1}/{PORTS} ports ready; {name} LinkDown", c
        down = env.kubectl("get", "rocenetnodes").stdout
        env.say("kubectl get rocenetnodes, the cable pulled:\n" + down.rstrip())
        assert f"{name} LinkDown" in down and f"{PORTS - 1}/{PORTS}" in down, down
        env.say("kubectl get rocenetcluster, the cable pulled:\n" +
                env.kubectl("get", "rocenetcluster", "-o", "wide").stdout.rstrip())
        status = env.json("get", "rocenetcluster", "cluster")["status"]
        assert [d["name"] for d in status["degradedNodes"]] == [node], status
        assert status["readyNodes"] == "0/1", status
        status = env.rocenet("status")
        env.say("kubectl rocenet status, the cable pulled:\n" + status.stdout.rstrip())
        assert re.search(rf"Degraded\s+True\s+NodesNotReady\s+1 node not ready: {node} LinkDown",
                         status.stdout), status.stdout
        row = next(line.split() for line in env.rocenet("ports", node).stdout.splitlines()
                   if line.split()[:1] == [name])
        assert "no" in row and any(c.startswith("LinkDown/") for c in row), row
        live = env.rocenet("ports", node, "--live").stdout
        assert f"node ready: no ({PORTS - 1}/{PORTS} ports healthy)" in live, live
        described = env.kubectl("describe", "node", node).stdout
        assert "ScaleOutNetworkReady" in described and "LinkDown" in described
    finally:
        env.fab.link(index, "up")
    back = time.monotonic()
    wait("the RocenetCluster Available again",
         lambda: _cluster_conditions(env).get("Available") == "True", 90, 0.2)
    figures["RocenetCluster Available again"] = time.monotonic() - back
    wait("the Node condition True again", lambda: _scale_out_condition(env).get("status") == "True",
         90, 0.2)
    figures["Node condition True again"] = time.monotonic() - back
    env.say("fleet view, cable pulled then back: " +
            ", ".join(f"{k} after {v:.1f} s" for k, v in figures.items()))


def _triage(env, name: str) -> dict:
    got = env.kubectl("get", "rocenettriage", name, "-o", "json", check=False)
    return json.loads(got.stdout).get("status", {}) if got.returncode == 0 else {}


def _finished(status: dict) -> bool:
    return status.get("phase") in ("Succeeded", "Failed", "Inconclusive", "Error")


def test_must_gather_collects_what_a_support_case_needs(env, tmp_path):
    """`kubectl rocenet must-gather` on the real cluster: one archive with
    rocenet's objects, every container's log in its namespace (the node
    pod's and the controller's) and the node's own state from rocectl in
    its pod; no Secret in it."""
    out = str(tmp_path / "case.tar.gz")
    started = time.monotonic()
    cp = env.rocenet("must-gather", "-o", out)
    took = time.monotonic() - started
    assert cp.returncode == 0, cp.stderr
    with tarfile.open(out) as archive:
        files = {m.name: archive.extractfile(m).read().decode() for m in archive.getmembers() if m.isfile()}
    top = next(iter(files)).split("/")[0]
    node = env.cluster.node
    health = json.loads(files[f"{top}/nodes/{node}/health.json"])
    assert len(health["ports"]) == PORTS, health
    assert json.loads(files[f"{top}/nodes/{node}/addressing.json"])["plans"], node
    assert "name: cluster" in files[f"{top}/cluster/rocenetclusters.yaml"]
    assert f"name: {node}" in files[f"{top}/cluster/rocenetnodes.yaml"]
    logs = {name.split("/", 2)[2]: text for name, text in files.items() if name.startswith(f"{top}/logs/")}
    for pod_prefix, container in (("rocenet-", "rocenetd"), ("rocenet-controller-", "controller")):
        assert any(name.startswith(pod_prefix) and name.endswith(f"/{container}.log") and text
                   for name, text in logs.items()), sorted(logs)
    secret = env.json("-n", "rocenet-system", "get", "secret", "rocenet-diag")["data"]["secret"]
    assert not any(secret in text or base64.b64decode(secret).decode() in text for text in files.values())
    env.say(f"must-gather: {len(files)} files, {os.path.getsize(out)} bytes gzipped, in {took:.1f} s"
            + (f"; not collected: {cp.stderr.strip()}" if cp.stderr.strip() else ""))


def test_a_triage_by_node_runs_as_a_job_and_names_a_pulled_cable(env):
    """A RocenetTriage naming the node: rocenet-controller runs rocectl diag
    reach as a Job on it, through the node's rocenet-diagd, and the status
    says what it found; with a cable pulled it names that port, and the
    node loses its validation label; `kubectl rocenet diag reach` gates on
    the verdict and writes the report; a periodic one runs again and again;
    a selector matching no node says so."""
    node = env.cluster.node
    triage = {"apiVersion": "rocenet.io/v1alpha1", "kind": "RocenetTriage",
              "metadata": {"name": "acceptance", "namespace": "default"},
              "spec": {"nodes": [node], "count": 3, "timeoutSeconds": 3, "keepResult": True}}
    started = time.monotonic()
    env.apply(triage)
    wait("the triage finished", lambda: _finished(_triage(env, "acceptance")), 180, 0.5)
    took_ok = time.monotonic() - started
    status = _triage(env, "acceptance")
    env.say("kubectl get rocenettriage, all ports healthy:\n" +
            env.kubectl("get", "rocenettriage", "-o", "wide").stdout.rstrip())
    assert status["phase"] == "Succeeded", status
    assert (status["coordinator"], status["nodeCount"]) == (node, 1), status
    assert status["plan"]["kind"] == "mesh" and status["plan"]["gatewayProbes"] >= 1, status
    assert status["labels"]["validated"] == 1, status
    kept = env.json("-n", "rocenet-system", "get", "configmap", status["resultConfigMap"])
    assert json.loads(kept["data"]["result.json"])["ok"] is True
    wait("the RocenetNode validated by reach",
         lambda: env.json("get", "rocenetnode", node)["status"].get("validation", {}).get("stage")
         in ("reach", "ethernet", "rdma"), 90, 0.5)

    attached = {a["host_ifname"] for a in env.attachments()}
    name = next(f"so{i}" for i in range(PORTS) if f"so{i}" not in attached)
    env.fab.link(int(name.removeprefix("so")), "down")
    try:
        # A changed spec runs again.
        env.kubectl("patch", "rocenettriage", "acceptance", "--type=merge",
                    "-p", json.dumps({"spec": {"count": 2}}))
        wait("the second run finished", lambda: _triage(env, "acceptance").get("runs") == 2 and
             _finished(_triage(env, "acceptance")), 180, 0.5)
        status = _triage(env, "acceptance")
        env.say("kubectl get rocenettriage, a cable pulled:\n" +
                env.kubectl("get", "rocenettriage", "-o", "wide").stdout.rstrip())
        assert status["phase"] == "Failed", status
        assert status["message"] == f"1 suspect: {node}/{name}", status
        (suspect,) = status["suspects"]
        assert (suspect["kind"], suspect["node"], suspect["port"]) == ("port", node, name), suspect
        assert status["labels"]["unvalidated"] == [node], status
        wait("the RocenetNode's validation gone",
             lambda: not env.json("get", "rocenetnode", node)["status"].get("validation", {})
             .get("stage"), 90, 0.5)
    finally:
        env.fab.link(int(name.removeprefix("so")), "up")

    # As an admin gates on it: kubectl rocenet diag reach, its exit code and
    # its acceptance report.
    report = os.path.join(env.cluster.work, "acceptance.html")
    gate = env.rocenet("diag", "reach", node, "--count", "2", "--time-limit", "2s", "--name", "gate",
                       "--report", report)
    env.say(f"kubectl rocenet diag reach (exit {gate.returncode}):\n{gate.stdout.rstrip()}")
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "default/gate: Succeeded" in gate.stdout, gate.stdout
    with open(report, encoding="utf-8") as f:
        page = f.read()
    assert ">PASS<" in page and node in page, page[:500]

    # Periodic: at least a minute apart, which the API server checks (an
    # invasive stage would hold the ports nearly always); the runs after
    # the first are the envtest's, on a clock it steps.
    refused = env.kubectl("apply", "-f", "-", check=False, input=json.dumps(
        {**triage, "metadata": {"name": "restless", "namespace": "default"},
         "spec": {"nodes": [node], "every": "5s"}}))
    assert refused.returncode != 0 and "every: at least 1m" in refused.stderr, refused.stderr
    env.apply({**triage, "metadata": {"name": "periodic", "namespace": "default"},
               "spec": {"nodes": [node], "count": 2, "timeoutSeconds": 2, "every": "1m"}})
    wait("a periodic triage's first run", lambda: _finished(_triage(env, "periodic")), 180, 0.5)

    env.apply({**triage, "metadata": {"name": "nowhere", "namespace": "default"},
               "spec": {"nodeSelector": {"matchLabels": {"rack": "none"}}}})
    wait("the triage by selector in error", lambda: _triage(env, "nowhere").get("phase") == "Error",
         60, 0.5)
    assert "matches no node" in _triage(env, "nowhere")["message"]
    env.kubectl("delete", "rocenettriage", "acceptance", "nowhere", "gate", "periodic")
    env.say(f"triage as a Job: the first run (1 node) finished {took_ok:.1f} s after it was asked for")


def test_a_lowered_pod_deadline_ends_a_run_as_sigterm_and_keeps_its_pod(env):
    """How rocenet-controller stops a triage run, on the real kubelet: the
    run pod's activeDeadlineSeconds lowered to the time it has run. The
    kubelet sends its container SIGTERM at once (rocectl stops the test on
    every node then), lets it exit with its own code and last words, and
    keeps the pod (Failed, DeadlineExceeded) for the controller to read,
    where a deletion would not."""
    env.apply({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "run-to-stop", "namespace": "default"},
        "spec": {"restartPolicy": "Never", "activeDeadlineSeconds": 600,
                 "terminationGracePeriodSeconds": 30,
                 "containers": [{"name": "rocectl", "image": TEST_IMAGE,
                                 "terminationMessagePolicy": "File",
                                 # As rocectl answers SIGTERM: stop, confirm, exit 9.
                                 "command": ["/bin/sh", "-c",
                                             "trap 'echo every node confirmed > /dev/termination-log;"
                                             " exit 9' TERM; while :; do sleep 0.1; done"]}]},
    })
    try:
        wait("the pod running", lambda: env.json("get", "pod", "run-to-stop")["status"]
             .get("phase") == "Running", 120, 0.2)
        pod = env.json("get", "pod", "run-to-stop")
        started = pod["status"]["startTime"]
        ran = int(time.time() - calendar.timegm(time.strptime(started, "%Y-%m-%dT%H:%M:%SZ")))
        asked = time.monotonic()
        env.kubectl("patch", "pod", "run-to-stop", "--type=merge",
                    "-p", json.dumps({"spec": {"activeDeadlineSeconds": max(1, ran)}}))

        def ended():
            p = env.json("get", "pod", "run-to-stop")
            states = p["status"].get("containerStatuses") or [{}]
            return p if states[0].get("state", {}).get("terminated") else None
        wait("the container ended", ended, 60, 0.1)
        took = time.monotonic() - asked
        pod = ended()
        term = pod["status"]["containerStatuses"][0]["state"]["terminated"]
        env.say(f"a pod's deadline lowered to {max(1, ran)} s: its container ended {took:.2f} s later, "
                f"exit {term['exitCode']}, pod {pod['status']['phase']} ({pod['status'].get('reason')})")
        assert term["exitCode"] == 9 and term.get("message", "").strip() == "every node confirmed", term
        assert pod["status"]["phase"] == "Failed" and pod["status"].get("reason") == "DeadlineExceeded"
        # The pod is kept: its exit code is there to read.
        assert not pod["metadata"].get("deletionTimestamp"), pod["metadata"]
    finally:
        env.delete("run-to-stop")


class _HolderWatch:
    """`kubectl get pods --watch` of the triage's holder pods in rocenet's
    namespace, kept with the time each version arrived: a holder lives
    only as long as the controller needs to read its verdict, too short to
    be polled for."""

    def __init__(self, env, triage: str):
        self.seen: list[tuple[float, dict]] = []
        self._triage = triage
        # Holders carry their triage's UID as a label (a name may be too
        # long for one) and its name as an annotation.
        self._proc = subprocess.Popen(
            [os.path.join(env.cluster.bin, "kubectl"), "--kubeconfig", env.cluster.kubeconfig,
             "-n", "rocenet-system", "get", "pods", "--watch", "-o", "json",
             "-l", "rocenet.io/triage-role=holder"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        decoder, buffer = json.JSONDecoder(), ""
        for line in self._proc.stdout:
            buffer += line
            while buffer.strip():
                try:
                    obj, end = decoder.raw_decode(buffer.lstrip())
                except ValueError:
                    break
                buffer = buffer.lstrip()[end:]
                if _triage_of(obj) != self._triage:
                    continue
                with self._lock:
                    self.seen.append((time.monotonic(), obj))

    def versions(self) -> list[tuple[float, dict]]:
        with self._lock:
            return list(self.seen)

    def stop(self) -> None:
        self._proc.terminate()
        self._proc.wait(10)


def _triage_of(pod: dict) -> str:
    return pod.get("metadata", {}).get("annotations", {}).get("rocenet.io/triage-name", "")


def _holders(env, triage: str) -> list[dict]:
    """The triage's holder pods."""
    return [p for p in env.json("-n", "rocenet-system", "get", "pods", "-l",
                                "rocenet.io/triage-role=holder")["items"]
            if _triage_of(p) == triage]


def _scheduled(pod: dict) -> dict:
    return next((c for c in pod.get("status", {}).get("conditions", [])
                 if c["type"] == "PodScheduled"), {})


def _wait_phase(env, name: str, what: str, ok) -> dict:
    """Waits up to 60 s for the triage's status to satisfy ok; the status
    seen last is in the failure."""
    seen: list[dict] = [{}]

    def check():
        seen[0] = _triage(env, name)
        return ok(seen[0])
    try:
        wait(what, check, 60, 0.2)
    except AssertionError as e:
        raise AssertionError(f"{e}; the triage's status: {seen[0]}") from None
    return seen[0]


def _metrics_token(env) -> str:
    """A token of a ServiceAccount bound to the shipped example role that
    may read rocenet-controller's metrics (examples/metrics-reader), made
    once."""
    if not getattr(env, "metrics_token", None):
        env.apply({"apiVersion": "v1", "kind": "ServiceAccount",
                   "metadata": {"name": "e2e-scraper", "namespace": "rocenet-system"}})
        with open(os.path.join(HERE, "..", "..", "packaging", "kubernetes", "examples",
                               "metrics-reader", "metrics-reader.yaml")) as f:
            role, binding = [d for d in yaml.safe_load_all(f) if d]
        binding["subjects"] = [{"kind": "ServiceAccount", "name": "e2e-scraper",
                                "namespace": "rocenet-system"}]
        env.apply(role)
        env.apply(binding)
        env.metrics_token = env.kubectl("-n", "rocenet-system", "create", "token",
                                        "e2e-scraper").stdout.strip()
    return env.metrics_token


def _controller_metrics(env) -> str:
    """The metrics of the rocenet-controller replica that reconciles (the
    one holding the Lease has the triage series)."""
    texts = [body for status, body in controller_metrics.scrape(env, _metrics_token(env))
             if status == 200]
    return next((t for t in texts if "rocenet_triage_" in t), "\n".join(texts))


def test_an_rdma_triage_holds_every_port_through_the_scheduler_or_skips_a_busy_node(env):
    """An invasive stage (rdma) runs only where its holder pod, asking the
    real scheduler for every rocenet.io/scale-out-port of the node, runs:
    while a pod has one port the holder stays Pending (Insufficient) and
    the triage ends Skipped naming the node busy; with the pod gone the
    holder is scheduled and holds every port, and a single node is still
    Skipped (a stage needs two); the holders go when each run ends, and
    rocenet-controller's /metrics count the runs."""
    node = env.cluster.node
    wait("the node's RocenetNode with its ports addressed", lambda: all(
        p.get("address") for p in env.json("get", "rocenetnode", node)["status"].get("ports", [{}])),
        90, 0.5)
    env.pod("busy", 1)
    wait("busy running", lambda: env.phase("busy") == "Running", 90)
    holders = _HolderWatch(env, "exclusive")
    try:
        triage = {"apiVersion": "rocenet.io/v1alpha1", "kind": "RocenetTriage",
                  "metadata": {"name": "exclusive", "namespace": "default"},
                  "spec": {"stage": "rdma", "nodes": [node], "timeoutSeconds": 1}}
        started = time.monotonic()
        env.apply(triage)
        _wait_phase(env, "exclusive", "the triage Skipped, the node busy",
                    lambda s: s.get("phase") == "Skipped")
        busy_s = time.monotonic() - started
        status = _triage(env, "exclusive")
        assert status["message"] == (f"0 of 1 nodes free; a stage needs 2; "
                                     f"skipped {node} (ports in use by a pod)"), status
        assert status["skippedNodes"] == [{"node": node, "reason": "ports in use by a pod"}], status
        refused = [pod for _, pod in holders.versions()
                   if _scheduled(pod).get("reason") == "Unschedulable"]
        if refused:
            assert f"Insufficient {RESOURCE}" in _scheduled(refused[0])["message"], refused[0]
            assert refused[0]["status"]["phase"] == "Pending"
        else:
            # The holder can come and go before `kubectl get --watch` is
            # established (it says nothing when it is); the scheduler's
            # event for it stays.
            events = [e for e in env.json("-n", "rocenet-system", "get", "events",
                                          "--field-selector", "reason=FailedScheduling")["items"]
                      if e["involvedObject"]["name"].startswith("rocenet-triage-exclusive-")]
            assert events, ("neither the watch nor the events saw the holder refused",
                            holders.versions())
            assert f"Insufficient {RESOURCE}" in events[0]["message"], events[0]
        wait("the busy node's holder gone", lambda: not _holders(env, "exclusive"), 30, 0.2)

        env.delete("busy")
        assert wait("allocatable", lambda: env.allocatable() == PORTS, 30)
        # A changed spec runs again, now on a free node.
        started = time.monotonic()
        env.kubectl("patch", "rocenettriage", "exclusive", "--type=merge",
                    "-p", json.dumps({"spec": {"timeoutSeconds": 2}}))
        _wait_phase(env, "exclusive", "the second run Skipped, one node free",
                    lambda s: s.get("runs") == 2 and s.get("phase") == "Skipped")
        free_s = time.monotonic() - started
        status = _triage(env, "exclusive")
        assert status["message"] == "1 of 1 nodes free; a stage needs 2", status
        assert status["nodeCount"] == 1 and not status.get("skippedNodes"), status
        wait("the holder gone after the run", lambda: not _holders(env, "exclusive"), 30, 0.2)
        second = [(at, pod) for at, pod in holders.versions()
                  if pod["metadata"]["labels"].get("rocenet.io/triage-run") == "2"]
        running = [(at, pod) for at, pod in second if pod["status"].get("phase") == "Running"]
        assert running, [pod["status"] for _, pod in second]
        pod = running[0][1]
        # Every allocatable port is the holder's: its request and limit are
        # the node's allocatable, and kubelet admitted and ran it.
        (container,) = pod["spec"]["containers"]
        assert container["resources"]["requests"][RESOURCE] == str(PORTS), container
        assert container["resources"]["limits"][RESOURCE] == str(PORTS), container
        assert pod["spec"]["nodeName"] == node and _scheduled(pod)["status"] == "True", pod
        assert "k8s.v1.cni.cncf.io/networks" not in pod["metadata"].get("annotations", {}), pod
        scheduled_s = next(at for at, p in second if p["spec"].get("nodeName")) - started
        running_s = running[0][0] - started
    finally:
        holders.stop()
    # The holder joined no network: no port left the host.
    assert not env.attachments()

    metrics = _controller_metrics(env)
    series = ('rocenet_triage_runs_total{namespace="default",phase="Skipped",stage="rdma",'
              'triage="exclusive"} 2')
    assert series in metrics, [m for m in metrics.splitlines() if "rocenet_triage" in m]
    assert 'rocenet_triage_skipped_nodes{namespace="default",triage="exclusive"} 0' in metrics
    env.kubectl("delete", "rocenettriage", "exclusive")
    wait("the deleted triage's series gone",
         lambda: 'triage="exclusive"' not in _controller_metrics(env), 30, 0.5)
    env.say(f"rdma triage, a pod holding a port: Skipped (node busy) {busy_s:.1f} s after it was "
            f"asked for; the pod gone and the spec changed, the holder seen scheduled after "
            f"{scheduled_s:.1f} s and running (holding {PORTS}/{PORTS} ports) after "
            f"{running_s:.1f} s, the run Skipped (1 of 1 nodes free) after {free_s:.1f} s")
