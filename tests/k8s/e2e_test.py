# SPDX-License-Identifier: Apache-2.0
"""rocenet on a real Kubernetes node, deployed as shipped, checked the way
an admin or an ML engineer would check it with kubectl.

The node is the simulated fabric's node namespace (4 Gaudi-like ports cabled
to a switch running lldpd); the cluster is tests/k8s/testcluster.py (etcd, the
API server, controller manager, scheduler, containerd and kubelet 1.37, Multus
thin), rocenet's image is built from its Containerfile (tests/k8s/image.sh)
and installed with `kubectl apply -k` of the generic overlay (the
operator and its default policy; rocenet-controller makes the node side),
told the fabric's sysfs tree and the API server's address. Nothing here
talks to rocenet
directly: kubelet allocates, Multus reads kubelet's PodResources and runs
rocenet's CNI plugin, and the tests read what kubectl shows.

The tests run in the file's order on one cluster and build on each other:
the pod `trainer`, made by the test of a pod's port, is used by the tests
after it and deleted by the test of its port coming home. The module is marked `ordered`
(tests/k8s/conftest.py): after a failure the later tests are reported
SKIPPED, naming it, instead of failing on what it left behind.
"""

from __future__ import annotations

import calendar
import glob
import json
import os
import re
import signal
import ssl
import subprocess
import threading
import time
import urllib.request

import pytest
import yaml

from e2e_support import (  # noqa: F401
    HERE,
    NEXT_IMAGE,
    NODE_DAEMONSET,
    OVERLAYS,
    PORTS,
    RESOURCE,
    Serving,
    deployed,
    node_side_up,
    operator_on_the_test_cluster,
    read_text,
    wait,
)
from testcluster import TEST_IMAGE

pytestmark = pytest.mark.ordered

PLUGIN_DIR = "/var/lib/kubelet/device-plugins"


@pytest.fixture(scope="module")
def env(artifacts, say, took):
    with deployed(artifacts, os.path.join(OVERLAYS, "generic"), say, took,
                  patch=operator_on_the_test_cluster) as e:
        yield e


def test_the_daemonset_becomes_ready_and_kubelet_counts_the_healthy_ports(env):
    ds = node_side_up(env)
    # The default policy's, made by the operator: the overlay applies no
    # DaemonSet.
    assert ds["metadata"]["ownerReferences"][0]["kind"] == "RocenetNodePolicy", ds["metadata"]
    assert ds["metadata"]["name"] == NODE_DAEMONSET
    assert "node ready: yes (4/4 ports healthy)" in wait(
        "rocectl health", lambda: (lambda out: out if "4/4" in out else None)(
            env.rocectl("health")), 60)
    assert wait("allocatable", lambda: env.allocatable() == PORTS, 60)


def test_a_pod_on_the_network_that_asked_for_no_port_is_refused_and_takes_none(env):
    """A pod that names the network but asks for no port reaches the plugin
    without a device id: refused, with the fix in its event, taking nothing
    kubelet could hand out again; a pod that then asks for every port gets
    them all."""
    env.pod("portless", 0)

    def refusal():
        events = env.json("get", "events", "--field-selector",
                          "involvedObject.name=portless,reason=FailedCreatePodSandBox")["items"]
        return next((e["message"] for e in events
                     if "deviceID: none given and no port reserved for pod default/portless"
                     in e["message"]), None)
    message = wait("the portless pod's FailedCreatePodSandBox event", refusal, 90)
    assert f"with a limit of {RESOURCE}" in message, message
    assert env.phase("portless") == "Pending"
    assert env.attachments("portless") == []
    assert env.allocatable() == PORTS
    env.say(f"a pod that asked for no port: {message[message.find('deviceID'):][:160]}")
    env.delete("portless")

    env.pod("every-port", PORTS, attachments=PORTS)
    wait("every-port running", lambda: env.phase("every-port") == "Running", 90)
    mine = env.attachments("every-port")
    assert len({a["port_id"] for a in mine}) == PORTS, mine
    assert sorted(a["ifname"] for a in mine) == [f"net{i + 1}" for i in range(PORTS)], mine
    env.delete("every-port")
    wait("every port home",
         lambda: not env.attachments() and f"{PORTS}/{PORTS}" in env.rocectl("health"), 90)


def _process(name: str) -> tuple[int, dict]:
    """The one running `name` on this machine (the node's): its pid and its
    /proc status fields."""
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()
            and os.path.basename(read_text(f"/proc/{p}/cmdline").split("\0")[0]) == name]
    assert len(pids) == 1, f"{name}: pids {pids}"
    status = dict(line.split(":\t", 1) for line in read_text(f"/proc/{pids[0]}/status").splitlines()
                  if ":\t" in line)
    return pids[0], status


def test_the_diagnostics_run_in_a_container_of_their_own_with_net_raw_only(env):
    """rocenet-diagd runs beside rocenetd with CAP_NET_RAW alone and answers
    rocectl diag; rocenetd listens on TCP for its metrics only."""
    cap_net_raw = 1 << 13
    diagd, diagd_status = _process("rocenet-diagd")
    assert int(diagd_status["CapEff"].strip(), 16) == cap_net_raw, diagd_status["CapEff"]
    assert int(diagd_status["CapBnd"].strip(), 16) == cap_net_raw, diagd_status["CapBnd"]
    rocenetd, _ = _process("rocenetd")
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


def test_a_pod_gets_the_port_kubelet_allocated_with_its_address_and_files(env):
    env.pod("trainer", 1)
    wait("trainer running", lambda: env.phase("trainer") == "Running", 90)
    addresses = env.exec("trainer", "ip", "-4", "-o", "addr", "show", "net1")
    routes = env.exec("trainer", "ip", "-4", "route")
    environ = env.exec("trainer", "env")
    attachments = json.loads(env.rocectl("attachments", "-o", "json"))["attachments"]
    mine = [a for a in attachments if a.get("pod", {}).get("name") == "trainer"]
    assert len(mine) == 1, attachments
    port = mine[0]
    # The port kubelet allocated (its device plugin checkpoint), which Multus
    # read from PodResources and passed on: no deviceID in the NAD.
    checkpoint = json.load(open("/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint"))
    entries = checkpoint["Data"]["PodDeviceEntries"]
    allocated = [d for e in entries if e["ResourceName"] == RESOURCE
                 for ids in e["DeviceIDs"].values() for d in ids]
    assert allocated == [port["port_id"]], (allocated, port)
    nad = env.json("get", "network-attachment-definitions", "gaudi-scale-out")
    assert "deviceID" not in json.loads(nad["spec"]["config"]), nad
    assert nad["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"] == RESOURCE
    # The LLDP-derived address and the fabric's route, inside the pod.
    local = port["ips"][0]["address"]
    assert local in addresses, addresses
    assert "10.200.0.0/16 via" in routes and "dev net1" in routes, routes
    assert "HCL_GAUDINET_CONFIG_FILE=" in environ, environ
    gaudinet = env.exec("trainer", "cat", environ.split("HCL_GAUDINET_CONFIG_FILE=")[1].split()[0])
    assert local.split("/")[0] in gaudinet, gaudinet
    assert wait("allocatable unchanged", lambda: env.allocatable() == PORTS, 10)


def test_the_device_plugin_restarted_on_its_own_leaves_the_pods_files(env):
    """The device plugin's container ends with no successor serving the
    resource (a crash, an OOM kill, a failed probe: here SIGTERM to its
    process) and kubelet restarts it: the running pod's HCL files, whose
    directory the pod has bind-mounted, are still there and the same."""
    environ = env.exec("trainer", "env")
    path = environ.split("HCL_GAUDINET_CONFIG_FILE=")[1].split()[0]
    before = env.exec("trainer", "cat", path)
    assert before.strip(), before

    def restarts() -> int:
        [pod] = env.rocenet_pods()
        statuses = env.json("-n", "rocenet-system", "get", "pod", pod)["status"]
        return next(c["restartCount"] for c in statuses["containerStatuses"]
                    if c["name"] == "device-plugin")
    restarted_before = restarts()
    old_pid, _ = _process("rocenet-device-plugin")
    os.kill(old_pid, signal.SIGTERM)
    wait("kubelet restarting the device plugin's container",
         lambda: restarts() > restarted_before, 90)
    wait("the device plugin serving again", lambda: env.allocatable() == PORTS, 90)
    new_pid, _ = _process("rocenet-device-plugin")
    assert new_pid != old_pid
    after = env.exec("trainer", "cat", path)
    assert after == before, (before, after)
    env.say(f"device plugin restarted (pid {old_pid} -> {new_pid}): the pod still reads "
            f"{path} ({len(after)} bytes)")


def test_more_ports_than_free_leave_the_second_pod_pending_until_the_first_goes(env):
    env.pod("big", PORTS - 1)  # with trainer's one, every port
    wait("big running", lambda: env.phase("big") == "Running", 90)
    env.pod("second", 1)
    pending = wait("second unschedulable", lambda: [
        c for c in env.json("get", "pod", "second")["status"].get("conditions", [])
        if c["type"] == "PodScheduled" and c["status"] == "False"], 60)
    assert f"Insufficient {RESOURCE}" in pending[0].get("message", ""), pending
    assert env.phase("second") == "Pending"
    env.delete("big")
    wait("second running", lambda: env.phase("second") == "Running", 90)
    env.delete("second")


def test_a_pulled_cable_drops_allocatable_and_shows_in_the_pods_status(env):
    port = [a for a in json.loads(env.rocectl("attachments", "-o", "json"))["attachments"]
            if a.get("pod", {}).get("name") == "trainer"][0]
    index = int(port["host_ifname"].removeprefix("so"))
    env.fab.link(index, "down")
    pulled = time.monotonic()
    try:
        assert wait("allocatable drops", lambda: env.allocatable() == PORTS - 1, 60, 0.2)
        env.say(f"pulled cable: allocatable {PORTS - 1} after {time.monotonic() - pulled:.1f} s")

        def unhealthy():
            for status in env.json("get", "pod", "trainer")["status"].get(
                    "containerStatuses", []):
                for resource in status.get("allocatedResourcesStatus", []):
                    for device in resource.get("resources", []):
                        if device.get("resourceID") == port["port_id"] and \
                                device.get("health") == "Unhealthy":
                            return True
            return False
        assert wait("the pod's allocatedResourcesStatus", unhealthy, 60, 0.2)
        env.say(f"pulled cable: the pod's allocatedResourcesStatus Unhealthy after "
                f"{time.monotonic() - pulled:.1f} s")
    finally:
        env.fab.link(index, "up")
    assert wait("allocatable back", lambda: env.allocatable() == PORTS, 60)


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


def identity(path: str) -> tuple[int, int] | None:
    """Which file `path` is: a freed inode number is soon used again."""
    try:
        st = os.stat(path)
        return st.st_ino, st.st_ctime_ns
    except FileNotFoundError:
        return None


def plugin_sockets() -> list[str]:
    return sorted(glob.glob(os.path.join(PLUGIN_DIR, "rocenet.io_scale-out-port-*.sock")))


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


def test_kubelet_restarted_the_device_plugin_registers_again_and_the_pod_runs_on(env):
    before = env.json("get", "pod", "trainer")["status"]["containerStatuses"][0]
    [socket_path] = plugin_sockets()
    kubelet_socket = os.path.join(PLUGIN_DIR, "kubelet.sock")
    old_kubelet, old_plugin = identity(kubelet_socket), identity(socket_path)
    restarted = time.monotonic()
    env.cluster.restart("kubelet")
    # The new kubelet removes the plugins' sockets and makes its own; the
    # plugin makes its socket again and registers.
    wait("kubelet's new registration socket",
         lambda: identity(kubelet_socket) not in (None, old_kubelet), 30, 0.05)
    started = time.monotonic()
    wait("the device plugin registered again",
         lambda: identity(socket_path) not in (None, old_plugin), 10, 0.05)
    took = time.monotonic() - started
    env.say(f"kubelet restarted: the device plugin registered again {took:.2f} s after "
            f"kubelet's socket appeared, {time.monotonic() - restarted:.1f} s after the "
            f"old kubelet was told to stop")
    assert took < 5, f"the device plugin took {took:.1f} s to register again"
    assert wait("allocatable again", lambda: env.allocatable() == PORTS, 30, 0.2)
    after = env.json("get", "pod", "trainer")["status"]["containerStatuses"][0]
    assert after["restartCount"] == before["restartCount"]
    assert after["containerID"] == before["containerID"]
    # kubectl exec answers again once the new kubelet knows its pods.
    wait("kubectl exec through the new kubelet", lambda: env.kubectl(
        "exec", "trainer", "--", "true", check=False).returncode == 0, 60)


def fabric_state(netns: str) -> tuple[str, str]:
    """The node's addresses and routes, as `ip` prints them."""
    def ip(*argv: str) -> str:
        return subprocess.run(["ip", "-n", netns, *argv], capture_output=True, text=True,
                              check=True).stdout
    return ip("-4", "-o", "addr", "show"), ip("-4", "route", "show", "table", "all")


def test_a_rolling_update_changes_no_port_and_the_socket_is_served_throughout(env):
    netns = env.fab.node_netns
    trainer = env.json("get", "pod", "trainer")["status"]["containerStatuses"][0]
    trainer_net1 = env.exec("trainer", "ip", "-4", "-o", "addr", "show", "net1")
    hcl_file = env.exec("trainer", "env").split("HCL_GAUDINET_CONFIG_FILE=")[1].split()[0]
    trainer_hcl = env.exec("trainer", "cat", hcl_file)
    [old_pod] = env.rocenet_pods()
    [old_socket] = plugin_sockets()
    state_before = fabric_state(netns)
    monitor = subprocess.Popen(["ip", "-n", netns, "-ts", "monitor", "address", "route"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        with Serving(env) as serving:
            time.sleep(1)
            # An ML engineer's pod created in the middle of it gets its port.
            took = env.roll(lambda: env.pod("joiner", 1))
            env.say(f"rolling update: {took:.1f} s to the old pod gone")
            wait("joiner running", lambda: env.phase("joiner") == "Running", 90)
            time.sleep(2)
    finally:
        monitor.terminate()
        changes = monitor.communicate(timeout=10)[0]
    [new_pod] = env.rocenet_pods()
    assert new_pod != old_pod
    images = {c["image"] for c in env.json("-n", "rocenet-system", "get", "pod", new_pod)
              ["spec"]["containers"]}
    assert images == {NEXT_IMAGE}, images
    # Not one connection refused or missing the socket while the pods changed.
    env.say(f"rolling update: {serving.summary()}")
    assert serving.served > 100, serving.served
    assert not serving.failures, f"{len(serving.failures)} of {len(serving.failures) + serving.served} " \
                                 f"connections failed: {serving.failures[:5]}"
    # No address or route of the fabric changed, but for the port that went
    # into the joiner pod; every other port is as it was.
    joined = [a["host_ifname"] for a in json.loads(env.rocectl("attachments", "-o", "json"))
              ["attachments"] if a.get("pod", {}).get("name") == "joiner"]
    assert len(joined) == 1, joined

    def fabric_lines(text: str) -> list[str]:
        return [line for line in text.splitlines()
                if (re.search(r"\bso\d+\b", line) or "10.200." in line)
                and not re.search(rf"\b{joined[0]}\b", line)
                and not line.endswith(f"dev {joined[0]}")]
    assert not fabric_lines(changes), changes
    after_state = fabric_state(netns)
    assert fabric_lines(after_state[0]) == fabric_lines(state_before[0])
    assert fabric_lines(after_state[1]) == fabric_lines(state_before[1])
    # The pod holding a port was not touched, and kubelet counted every port
    # throughout: the new device plugin registered before the old one left.
    after = env.json("get", "pod", "trainer")["status"]["containerStatuses"][0]
    assert (after["containerID"], after["restartCount"]) == \
        (trainer["containerID"], trainer["restartCount"])
    assert env.exec("trainer", "ip", "-4", "-o", "addr", "show", "net1") == trainer_net1
    # Its HCL directory, mounted from the host, still has its files: the old
    # device plugin left them to the new one.
    assert env.exec("trainer", "cat", hcl_file) == trainer_hcl
    assert serving.lowest == PORTS, f"allocatable fell to {serving.lowest} during the update"
    assert plugin_sockets() == [os.path.join(PLUGIN_DIR, f"rocenet.io_scale-out-port-{new_pod}.sock")], \
        (plugin_sockets(), old_socket)
    sandbox_failures = [e for e in env.json("get", "events", "--field-selector",
                                            "involvedObject.name=joiner")["items"]
                        if e["reason"] == "FailedCreatePodSandBox"]
    assert not sandbox_failures, [e["message"] for e in sandbox_failures]
    env.delete("joiner")


def test_the_pod_deleted_its_port_comes_home_addressed_and_allocatable_is_back(env):
    port = [a for a in json.loads(env.rocectl("attachments", "-o", "json"))["attachments"]
            if a.get("pod", {}).get("name") == "trainer"][0]
    env.delete("trainer")
    assert wait("no attachment", lambda: not json.loads(
        env.rocectl("attachments", "-o", "json")).get("attachments"), 30)
    host = port["host_ifname"]
    addressing = wait("the port addressed on the host", lambda: (
        lambda out: out if re.search(rf"^{host}\s+ready\b", out, re.M) else None)(
            env.rocectl("addressing")), 30)
    assert host in addressing
    links = subprocess.run(["ip", "-n", env.fab.node_netns, "-4", "-o", "addr", "show", host],
                           capture_output=True, text=True).stdout
    assert "10.200." in links, links
    assert wait("allocatable", lambda: env.allocatable() == PORTS, 30)


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
    one holding the Lease has the triage series), over HTTPS through
    `kubectl port-forward`, with a token the controller has the API server
    authenticate and authorize (the API server's proxy would not pass
    one on)."""
    token = _metrics_token(env)
    pods = env.json("-n", "rocenet-system", "get", "pods",
                    "-l", "app.kubernetes.io/name=rocenet,app.kubernetes.io/component=controller")
    texts = []
    for p in pods["items"]:
        if p["status"].get("phase") != "Running":
            continue
        forward = subprocess.Popen(
            [os.path.join(env.cluster.bin, "kubectl"), "--kubeconfig", env.cluster.kubeconfig,
             "-n", "rocenet-system", "port-forward", f"pod/{p['metadata']['name']}", ":50155"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            line = forward.stdout.readline()
            m = re.search(r"127\.0\.0\.1:(\d+) ->", line)
            if not m:
                continue
            # The controller's certificate is its own, made at its start.
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            req = urllib.request.Request(f"https://127.0.0.1:{m.group(1)}/metrics",
                                         headers={"Authorization": f"Bearer {token}"})
            with urllib.request.urlopen(req, context=context, timeout=10) as resp:
                texts.append(resp.read().decode())
        except OSError:
            continue
        finally:
            forward.terminate()
            forward.wait(timeout=10)
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
