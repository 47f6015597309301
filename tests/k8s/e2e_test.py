# SPDX-License-Identifier: Apache-2.0
"""rocenet on a real Kubernetes node, deployed as shipped, checked the way
an ML engineer would check a pod's scale-out ports with kubectl: kubelet
counts the healthy ports, a pod gets the port kubelet allocated with its
address and HCL files, a pulled cable shows in allocatable and the pod's
status, the device plugin and kubelet restart under running pods, a
rolling update changes no port, and a pod's port comes home.

The node is the simulated fabric's node namespace (4 Gaudi-like ports cabled
to a switch running lldpd); the cluster is tests/k8s/testcluster.py (etcd, the
API server, controller manager, scheduler, containerd and kubelet 1.37, Multus
thin), rocenet's image is built from its Containerfile (tests/k8s/image.sh, the
build tree's C++ programs in place of its build stage)
and installed with `kubectl apply -k` of the generic overlay (the
operator and its default policy; rocenet-controller makes the node side),
told the fabric's sysfs tree and the API server's address. Nothing here
talks to rocenet directly: kubelet allocates, Multus reads kubelet's
PodResources and runs rocenet's CNI plugin, and the tests read what
kubectl shows. What an admin checks (the fleet view, triage) is in
triage_test.py.

The tests run in the file's order on one cluster and build on each other:
the pod `trainer`, made by the test of a pod's port, is used by the tests
after it and deleted by the test of its port coming home. The module is
marked `ordered` (tests/k8s/conftest.py): after a failure the later tests
are reported SKIPPED, naming it, instead of failing on what it left behind.
"""

from __future__ import annotations

import calendar
import glob
import json
import os
import re
import signal
import subprocess
import time

import pytest

from e2e_support import (
    NEXT_IMAGE,
    NODE_DAEMONSET,
    PORTS,
    RESOURCE,
    Serving,
    generic_install,
    node_side_up,
    process_named,
    wait,
)

pytestmark = pytest.mark.ordered

PLUGIN_DIR = "/var/lib/kubelet/device-plugins"


@pytest.fixture(scope="module")
def env(artifacts, say, took):
    with generic_install(artifacts, say, took) as e:
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
    old_pid, _ = process_named("rocenet-device-plugin")
    os.kill(old_pid, signal.SIGTERM)
    wait("kubelet restarting the device plugin's container",
         lambda: restarts() > restarted_before, 90)
    wait("the device plugin serving again", lambda: env.allocatable() == PORTS, 90)
    new_pid, _ = process_named("rocenet-device-plugin")
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


def identity(path: str) -> tuple[int, int] | None:
    """Which file `path` is: a freed inode number is soon used again."""
    try:
        st = os.stat(path)
        return st.st_ino, st.st_ctime_ns
    except FileNotFoundError:
        return None


def plugin_sockets() -> list[str]:
    return sorted(glob.glob(os.path.join(PLUGIN_DIR, "rocenet.io_scale-out-port-*.sock")))


def test_kubelet_restarted_the_device_plugin_registers_again_and_the_pod_runs_on(env):
    before = env.json("get", "pod", "trainer")["status"]["containerStatuses"][0]
    [socket_path] = plugin_sockets()
    kubelet_socket = os.path.join(PLUGIN_DIR, "kubelet.sock")
    old_kubelet, old_plugin = identity(kubelet_socket), identity(socket_path)
    restarted = time.monotonic()
    restarted_at = time.time()
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
    # The Node as the new kubelet reports it: until the plugin registers
    # and the next status update, kubelet reports none of the resource.
    def counted_by_the_new_kubelet() -> bool:
        node = env.json("get", "node", env.cluster.node)
        ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"][0]
        beat = calendar.timegm(time.strptime(ready["lastHeartbeatTime"], "%Y-%m-%dT%H:%M:%SZ"))
        return beat > restarted_at and \
            int(node["status"]["allocatable"].get(RESOURCE, "0")) == PORTS
    wait("every port allocatable, as the new kubelet reports it", counted_by_the_new_kubelet, 30, 0.2)
    env.say(f"kubelet restarted: every port allocatable again {time.monotonic() - restarted:.1f} s "
            f"after the old kubelet was told to stop")
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
    wait("every port allocatable before the update", lambda: env.allocatable() == PORTS, 30)
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
