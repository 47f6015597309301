# SPDX-License-Identifier: Apache-2.0
"""rocenet's ports through Dynamic Resource Allocation on a real Kubernetes
node: rocenet installed from the generic-dra overlay (the operator and its
default policy in mode DRA: rocenet-dra-plugin in the device plugin's
place, DRA's DeviceClass made by the operator), the real scheduler
allocating from rocenet's ResourceSlice, kubelet preparing the claims,
containerd injecting the CDI devices, Multus running rocenet's CNI plugin.
Checked with kubectl, as an admin or ML engineer would.

Multus here is v4.3.0 thin, the newest release the Go module proxy serves:
it does not read ResourceSlices (its DRA support came after, unreleased),
so it calls rocenet's CNI plugin without a deviceID, and the pod's port
comes from the reservation rocenet-dra-plugin made at rocenetd when kubelet
prepared the claim. The tests pick ports that a plugin choosing "any free
port" would not, so that path is what they check.

The tests run in the file's order on one cluster and build on each other:
the pod `dra-trainer`, made by the test of a claim's port, is used by the
tests after it until the rolling update's deletes it, and that one uses the
claim template `any-port` an earlier test made. The module is marked
`ordered` (tests/k8s/conftest.py): after a failure the later tests are
reported SKIPPED, naming it, instead of failing on what it left behind.
"""

from __future__ import annotations

import fcntl
import glob
import json
import os
import signal
import subprocess
import threading
import time

import pytest

import testcluster as k8s
from e2e_support import (
    DAEMON_SOCKET,
    OVERLAYS,
    PORTS,
    RESOURCE,
    ROOT,
    deployed,
    node_side_up,
    operator_on_the_test_cluster,
    read_text,
    wait,
)

pytestmark = pytest.mark.ordered

DRIVER = "rocenet.io"
CLASS = "scale-out-port.rocenet.io"
TAINT = "rocenet.io/unhealthy"


@pytest.fixture(scope="module")
def env(artifacts, say, took):
    with deployed(artifacts, os.path.join(OVERLAYS, "generic-dra"), say, took,
                  patch=operator_on_the_test_cluster) as e:
        containers = [c["name"] for c in node_side_up(e)["spec"]["template"]["spec"]["containers"]]
        assert containers[0] == "dra-plugin", containers
        yield e


def devices(env) -> dict[str, dict]:
    """rocenet's devices on the node, by name, from its ResourceSlices."""
    out = {}
    for s in env.json("get", "resourceslices")["items"]:
        if s["spec"]["driver"] == DRIVER and s["spec"].get("nodeName") == env.cluster.node:
            for d in s["spec"].get("devices", []):
                out[d["name"]] = d
    return out


def attr(device: dict, name: str):
    value = device.get("attributes", {}).get(name if "/" in name else f"{DRIVER}/{name}")
    if value is None:
        value = device.get("attributes", {}).get(name)
    return None if value is None else next(iter(value.values()))


def by_port(env) -> dict[str, dict]:
    return {attr(d, "portID"): d for d in devices(env).values()}


def claim_of(env, pod: str) -> dict:
    statuses = env.json("get", "pod", pod)["status"]
    name = None
    for s in statuses.get("resourceClaimStatuses", []):
        name = s.get("resourceClaimName")
    if name is None:
        name = statuses.get("extendedResourceClaimStatus", {}).get("resourceClaimName")
    assert name, statuses
    return env.json("get", "resourceclaim", name)


def allocated(claim: dict, driver: str = DRIVER) -> list[str]:
    return [r["device"] for r in claim["status"]["allocation"]["devices"]["results"]
            if r["driver"] == driver]


def claim_pod(env, name: str, template: str, networks: int = 1) -> None:
    env.apply({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "annotations": {
            "k8s.v1.cni.cncf.io/networks": ",".join(["gaudi-scale-out"] * networks)}},
        "spec": {"terminationGracePeriodSeconds": 1,
                 "resourceClaims": [{"name": "net", "resourceClaimTemplateName": template}],
                 "containers": [{"name": "main", "image": k8s.TEST_IMAGE,
                                 "command": ["/bin/sh", "-c", "sleep 3600"],
                                 "resources": {"claims": [{"name": "net"}]}}]},
    })


def port_template(env, name: str, selector: str | None = None, count: int = 1) -> None:
    exactly = {"deviceClassName": CLASS, "count": count}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    env.apply({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
               "metadata": {"name": name, "namespace": "default"},
               "spec": {"spec": {"devices": {"requests": [{"name": "port", "exactly": exactly}]}}}})


def test_the_slice_lists_every_port_with_rocenetds_attributes(env):
    node_side_up(env)
    started = time.monotonic()
    found = wait("a device per port", lambda: (lambda d: d if len(d) == PORTS else None)(
        devices(env)), 60)
    env.say(f"DRA: {len(found)} devices in the slice {time.monotonic() - started:.1f} s after "
            f"the DaemonSet was ready")
    ports = {p["id"]: p for p in json.loads(env.rocectl("ports", "-o", "json"))["ports"]}
    plans = {p["port_id"]: p for p in json.loads(env.rocectl("addressing", "-o", "json"))["plans"]}
    assert set(by_port(env)) == set(ports)
    first = sorted(found)[0]
    env.say(f"DRA: device {first} as published: " + json.dumps(
        {"attributes": {k: next(iter(v.values())) for k, v in sorted(
            found[first]["attributes"].items())}}, sort_keys=True))
    wait("every port healthy in the slice", lambda: all(
        attr(d, "healthy") is True for d in devices(env).values()), 60)
    for port_id, d in by_port(env).items():
        p = ports[port_id]
        assert attr(d, "resource.kubernetes.io/pcieRoot") == p["pcie_root"], d
        assert attr(d, "resource.kubernetes.io/pciBusID") == p["pci_address"], d
        assert attr(d, "resource.kubernetes.io/numaNode") == p["numa_node"], d
        assert attr(d, "k8s.cni.cncf.io/deviceID") == port_id, d
        assert attr(d, "k8s.cni.cncf.io/resourceName") == RESOURCE, d
        assert attr(d, "interface") == p["name"], d
        assert attr(d, "mac") == p["permanent_mac"] or attr(d, "mac") == p["mac"], d
        assert attr(d, "rail") == p["rail"] and attr(d, "module") == p["module_id"], d
        assert attr(d, "nicIndex") == p["port_index"], d
        assert attr(d, "driver") == p["driver"], d
        local = plans[port_id]["applied"]["local"]
        assert f'{attr(d, "ipv4")}/{attr(d, "ipv4PrefixLength")}' == local, (d, local)
        if p.get("rdma"):
            assert attr(d, "rdmaDevice") == p["rdma"]["device"], d
        assert not d.get("taints"), d


def test_a_claim_gets_the_allocated_port_and_its_status_shows_the_network_data(env):
    ports = json.loads(env.rocectl("ports", "-o", "json"))["ports"]
    # The node's last port: one that "any free port" would not give.
    last = ports[-1]
    port_template(env, "last-port", f'device.attributes["{DRIVER}"].interface == "{last["name"]}"')
    claim_pod(env, "dra-trainer", "last-port")
    started = time.monotonic()
    wait("dra-trainer running", lambda: env.phase("dra-trainer") == "Running", 120)
    env.say(f"DRA: a pod with a claim running after {time.monotonic() - started:.1f} s")
    claim = claim_of(env, "dra-trainer")
    [device] = allocated(claim)
    port_id = attr(devices(env)[device], "portID")
    assert port_id == last["id"], (device, last)
    [attachment] = env.attachments("dra-trainer")
    assert attachment["port_id"] == port_id, attachment
    local = attachment["ips"][0]["address"]
    assert local in env.exec("dra-trainer", "ip", "-4", "-o", "addr", "show", "net1")
    environ = env.exec("dra-trainer", "env")
    assert f"ROCENET_PORT_IDS={port_id}\n" in environ, environ
    assert f"ROCENET_PORT_INTERFACES={last['name']}\n" in environ, environ
    # HCL's files for exactly the claim's port, from rocenetd's reservation.
    gaudinet = env.exec("dra-trainer", "cat", environ.split(
        "HCL_GAUDINET_CONFIG_FILE=")[1].split()[0])
    assert json.loads(gaudinet)["NIC_NET_CONFIG"][0]["NIC_IP"] == local.split("/")[0], gaudinet
    assert len(json.loads(gaudinet)["NIC_NET_CONFIG"]) == 1, gaudinet
    assert "HCL_MAC_INFO_FILE=" in environ, environ

    def network_data():
        for d in env.json("get", "resourceclaim", claim["metadata"]["name"])["status"].get(
                "devices", []):
            if d["driver"] == DRIVER and d["device"] == device:
                return d
        return None
    status = wait("the claim's network data", network_data, 60)
    env.say(f"DRA: the claim's network data written {time.monotonic() - started:.1f} s after "
            f"the pod was created")
    assert status["networkData"]["interfaceName"] == "net1", status
    assert status["networkData"]["ips"] == [local], status
    assert status["networkData"]["hardwareAddress"] == attachment["mac"], status
    ready = [c for c in status["conditions"] if c["type"] == "Ready"]
    assert ready and ready[0]["status"] == "True", status


def test_a_pulled_cable_taints_the_device_and_shows_in_the_pods_status(env):
    claim = claim_of(env, "dra-trainer")
    [device] = allocated(claim)
    [attachment] = env.attachments("dra-trainer")
    index = int(attachment["host_ifname"].removeprefix("so"))
    env.fab.link(index, "down")
    pulled = time.monotonic()
    try:
        tainted = wait("the device tainted", lambda: [
            t for t in devices(env)[device].get("taints", []) if t["key"] == TAINT], 60, 0.2)
        env.say(f"DRA pulled cable: device tainted after {time.monotonic() - pulled:.1f} s")
        assert tainted[0]["effect"] == "NoSchedule", tainted
        assert attr(devices(env)[device], "healthy") is False

        def unhealthy():
            for status in env.json("get", "pod", "dra-trainer")["status"].get(
                    "containerStatuses", []):
                for resource in status.get("allocatedResourcesStatus", []):
                    for d in resource.get("resources", []):
                        # The resource ID is the CDI device: <kind>=<claim uid>-<device>.
                        if d.get("resourceID", "").endswith(device) and \
                                d.get("health") == "Unhealthy":
                            return resource
            return None
        resource = wait("the pod's allocatedResourcesStatus", unhealthy, 60, 0.2)
        env.say(f"DRA pulled cable: the pod's allocatedResourcesStatus Unhealthy after "
                f"{time.monotonic() - pulled:.1f} s")
        assert resource["name"].startswith("claim:"), resource
    finally:
        env.fab.link(index, "up")
    wait("the taint gone", lambda: not devices(env)[device].get("taints"), 60, 0.2)

    def healthy_again():
        for status in env.json("get", "pod", "dra-trainer")["status"].get("containerStatuses", []):
            for resource in status.get("allocatedResourcesStatus", []):
                for d in resource.get("resources", []):
                    if d.get("resourceID", "").endswith(device):
                        return d.get("health") == "Healthy"
        return False
    wait("the pod's port healthy again", healthy_again, 60, 0.2)


# rocenet-dra-plugin's --grace-period, as the DRA component leaves it.
GRACE = 30


def port_health(env, pod: str, device: str) -> dict:
    """The pod's allocatedResourcesStatus entry of `device` ({} when it has
    none): its resource ID is the CDI device, <kind>=<claim uid>-<device>."""
    for status in env.json("get", "pod", pod)["status"].get("containerStatuses", []):
        for resource in status.get("allocatedResourcesStatus", []):
            for d in resource.get("resources", []):
                if d.get("resourceID", "").endswith(device):
                    return d
    return {}


def rocenet_pod_processes(env, name: str):
    """A function listing the processes called `name` in rocenet's pod, as
    the host sees them (by the pod's cgroup: a rocenetd of some other test
    on this machine is left alone), in whichever of the pod's containers."""
    [pod] = env.json("-n", "rocenet-system", "get", "pods",
                     "-l", "app.kubernetes.io/name=rocenet,app.kubernetes.io/component=node")["items"]
    uid = pod["metadata"]["uid"]
    marks = (f"pod{uid}", f"pod{uid.replace('-', '_')}")

    def processes() -> list[int]:
        return [int(p) for p in os.listdir("/proc") if p.isdigit()
                and read_text(f"/proc/{p}/comm").strip() == name
                and any(m in read_text(f"/proc/{p}/cgroup") for m in marks)]
    return processes


def test_rocenetd_away_past_the_grace_makes_the_pods_port_unknown_until_it_is_back(env):
    [device] = allocated(claim_of(env, "dra-trainer"))
    assert port_health(env, "dra-trainer", device).get("health") == "Healthy"
    rocenetds = rocenet_pod_processes(env, "rocenetd")
    assert len(rocenetds()) == 1, rocenetds()
    # rocenetd killed, and its socket's lock taken before kubelet starts it
    # again: the new rocenetd waits for the lock (--takeover-wait) and
    # serves nothing meanwhile, so the plugin's attempts are refused at the
    # old rocenetd's socket, for as long as the test holds the lock.
    lock = os.open(DAEMON_SOCKET + ".lock", os.O_RDWR)
    try:
        def stopped() -> bool:
            for pid in rocenetds():
                os.kill(pid, signal.SIGKILL)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                return False
        wait("rocenetd killed and its socket's lock held", stopped, 30, 0.05)
        away = time.monotonic()
        unknown = wait("the pod's port no longer Healthy", lambda: (
            lambda h: h if h.get("health") not in (None, "Healthy") else None)(
            port_health(env, "dra-trainer", device)), GRACE + 60, 0.5)
        took = time.monotonic() - away
        env.say(f"DRA rocenetd away: the pod's port {unknown['health']} after {took:.1f} s "
                f"(grace {GRACE} s): {unknown.get('message')}")
        # Not Unhealthy: nothing is known of the port, whose link and
        # address are as they were. Not before the grace: a restart of
        # rocenetd changes nothing kubelet shows.
        assert unknown["health"] == "Unknown", unknown
        assert "rocenetd unreachable since" in unknown.get("message", ""), unknown
        assert took > GRACE - 5, f"the port left Healthy {took:.1f} s into a {GRACE} s grace"
        # The slice keeps every port meanwhile.
        assert len(devices(env)) == PORTS
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        os.close(lock)
    back = time.monotonic()
    # The waiting rocenetd takes the socket; the plugin finds it within
    # its backoff (at most 5 s, and a fifth more).
    wait("the pod's port Healthy again", lambda: port_health(
        env, "dra-trainer", device).get("health") == "Healthy", 150, 0.5)
    env.say(f"DRA rocenetd back: the pod's port Healthy again after "
            f"{time.monotonic() - back:.1f} s")
    assert len(rocenetds()) == 1, rocenetds()


def test_a_new_lldp_address_shows_in_the_slice(env):
    busy = {a["host_ifname"] for a in env.attachments()}
    index = next(i for i in range(PORTS) if f"so{i}" not in busy)
    port = next(p for p in json.loads(env.rocectl("ports", "-o", "json"))["ports"]
                if p["name"] == f"so{index}")
    device = next(name for name, d in devices(env).items() if attr(d, "portID") == port["id"])
    before = env.fab.port(index)["description"]
    env.fab.set_description(index, "no-alert 10.200.99.2/30")
    changed = time.monotonic()
    try:
        wait("the new address in the slice", lambda: attr(devices(env)[device], "ipv4") ==
             "10.200.99.1", 60, 0.2)
        env.say(f"DRA: a new LLDP address in the slice after {time.monotonic() - changed:.1f} s")
        assert attr(devices(env)[device], "ipv4PrefixLength") == 30
    finally:
        env.fab.set_description(index, before)
    wait("the old address back", lambda: attr(devices(env)[device], "ipv4") != "10.200.99.1", 60)


def test_a_pod_written_for_the_device_plugin_runs_unchanged(env):
    assert env.allocatable() == 0, "a device plugin serves the resource too"
    env.pod("legacy", 1)
    wait("legacy running", lambda: env.phase("legacy") == "Running", 120)
    claim = claim_of(env, "legacy")
    [device] = allocated(claim)
    [attachment] = env.attachments("legacy")
    assert attachment["port_id"] == attr(devices(env)[device], "portID"), (attachment, device)
    assert f"ROCENET_PORT_IDS={attachment['port_id']}\n" in env.exec("legacy", "env")
    env.delete("legacy")
    wait("legacy's claim gone", lambda: env.kubectl(
        "get", "resourceclaim", claim["metadata"]["name"], check=False).returncode != 0, 60)


def plugin_pids() -> list[int]:
    """rocenet-dra-plugin's processes, as the host sees them."""
    out = subprocess.run(["pgrep", "-f", "^/usr/bin/rocenet-dra-plugin "], capture_output=True,
                         text=True).stdout
    return [int(p) for p in out.split()]


def reservations(env) -> list[dict]:
    return json.loads(env.rocectl("reservations", "-o", "json")).get("reservations", [])


def cdi_specs() -> list[str]:
    return sorted(glob.glob("/var/run/cdi/rocenet.io-claim_*.json"))


def test_a_plugin_killed_in_the_middle_of_prepare_loses_nothing(env):
    port_template(env, "any-port")
    # Killed at once, and a little later: kubelet's prepare call is lost
    # before, during or after rocenetd's reservation.
    for n, delay in enumerate((0.0, 0.3, 0.8)):
        name = f"crash-{n}"
        [pid] = wait("one plugin process", lambda: (lambda p: p if len(p) == 1 else None)(
            plugin_pids()), 60)
        claim_pod(env, name, "any-port")
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
        started = time.monotonic()
        wait(f"{name} running", lambda: env.phase(name) == "Running", 120)
        env.say(f"DRA: plugin killed {delay:.1f} s into a prepare; the pod ran "
                f"{time.monotonic() - started:.1f} s later")
        claim = claim_of(env, name)
        [device] = allocated(claim)
        [attachment] = env.attachments(name)
        assert attachment["port_id"] == attr(devices(env)[device], "portID")
        mine = [r for r in reservations(env) if r["owner_uid"] == claim["metadata"]["uid"]]
        assert len(mine) == 1 and mine[0]["port_ids"] == [attachment["port_id"]], mine
        env.delete(name)
        wait("its reservation released", lambda: not [
            r for r in reservations(env) if r["owner_uid"] == claim["metadata"]["uid"]], 60)
    # One reservation and one CDI spec per prepared claim, nothing left over.
    live = {c["metadata"]["uid"] for c in env.json("get", "resourceclaims")["items"]}
    assert {r["owner_uid"] for r in reservations(env)} == live & {
        r["owner_uid"] for r in reservations(env)}
    assert len(cdi_specs()) == len(reservations(env)), (cdi_specs(), reservations(env))
    restarts = [s["restartCount"] for s in env.json("-n", "rocenet-system", "get", "pods", "-l",
                                                    "app.kubernetes.io/name=rocenet,app.kubernetes.io/component=node")["items"][0]
                ["status"]["containerStatuses"] if s["name"] == "dra-plugin"]
    assert restarts == [3], restarts


def test_a_rolling_update_keeps_the_slice_and_the_new_plugin_unprepares_the_old_ones_claims(env):
    before = claim_of(env, "dra-trainer")
    fewest = [PORTS]
    done = threading.Event()

    def watch_slice() -> None:
        while not done.is_set():
            fewest[0] = min(fewest[0], len(devices(env)))
            time.sleep(0.3)
    watcher = threading.Thread(target=watch_slice)
    watcher.start()
    try:
        # An ML engineer's pod created in the middle of it gets its port.
        took = env.roll(lambda: claim_pod(env, "dra-joiner", "any-port"))
        env.say(f"DRA rolling update: {took:.1f} s to the old pod gone")
        wait("dra-joiner running", lambda: env.phase("dra-joiner") == "Running", 120)
        time.sleep(2)
    finally:
        done.set()
        watcher.join()
    env.say(f"DRA rolling update: the slice listed at least {fewest[0]} devices throughout")
    assert fewest[0] == PORTS, f"the slice fell to {fewest[0]} devices during the update"
    assert len(env.attachments("dra-joiner")) == 1
    # The claim prepared by the old plugin is unprepared by the new one:
    # its reservation released, its CDI spec removed.
    assert [r for r in reservations(env) if r["owner_uid"] == before["metadata"]["uid"]]
    env.delete("dra-trainer")
    wait("dra-trainer's reservation released", lambda: not [
        r for r in reservations(env) if r["owner_uid"] == before["metadata"]["uid"]], 60)
    assert not [p for p in cdi_specs() if before["metadata"]["uid"] in p]
    env.delete("dra-joiner")
    assert len(cdi_specs()) == len(reservations(env)) == 0, (cdi_specs(), reservations(env))


def test_a_gaudi_and_its_ports_are_allocated_on_one_pcie_root(env, artifacts, tmp_path):
    ports = json.loads(env.rocectl("ports", "-o", "json"))["ports"]
    roots: dict[str, list[str]] = {}
    for p in ports:
        roots.setdefault(p["pcie_root"], []).append(p["id"])
    wanted = max(len(ids) for ids in roots.values())
    assert wanted >= 2 and len(roots) >= 2, roots
    # The root with the most ports last: a first fit that ignored the
    # constraint would take the first Gaudi and the first ports.
    order = sorted(roots, key=lambda r: (len(roots[r]), r))
    standin = tmp_path / "gaudi-standin"
    cache = os.environ.get("ROCENET_CACHE", "/var/cache/rocenet")
    built = time.monotonic()
    # The flags of the Go programs' own build (cmake/RocenetGo.cmake), so the
    # packages they share come from the build cache.
    subprocess.run(["go", "build", "-trimpath", "-o", str(standin), "./plugins/dra/test/gaudi-standin"],
                   cwd=ROOT, check=True,
                   env={**os.environ, "CGO_ENABLED": "0", "GOTOOLCHAIN": "local",
                        "GOFLAGS": "-mod=readonly",
                        "GOMODCACHE": os.environ.get("GOMODCACHE", f"{cache}/go/mod"),
                        "GOCACHE": os.environ.get("GOCACHE", f"{cache}/go/build")})
    env.say(f"DRA: the Gaudi stand-in built in {time.monotonic() - built:.1f} s")
    log = open(tmp_path / "gaudi-standin.log", "w")
    proc = subprocess.Popen([str(standin), "--kubeconfig", env.cluster.kubeconfig,
                             "--node-name", env.cluster.node, "--pcie-roots", ",".join(order)],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        env.apply({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                   "metadata": {"name": "gaudi.intel.com"},
                   "spec": {"selectors": [{"cel": {"expression":
                                                   'device.driver == "gaudi.intel.com"'}}]}})
        env.kubectl("apply", "-f", os.path.join(ROOT, "packaging", "kubernetes", "examples",
                                                "dra", "gaudi-with-its-ports.yaml"))
        # The example asks for as many ports as a Gaudi 2 has (3).
        template = env.json("get", "resourceclaimtemplate", "gaudi-with-its-ports")
        count = [r for r in template["spec"]["spec"]["devices"]["requests"]
                 if r["name"] == "ports"][0]["exactly"]["count"]
        assert count == wanted, (count, roots)
        claim_pod(env, "paired", "gaudi-with-its-ports", networks=count)
        started = time.monotonic()
        wait("paired running", lambda: env.phase("paired") == "Running", 120)
        env.say(f"DRA: a Gaudi and {count} ports on its root running after "
                f"{time.monotonic() - started:.1f} s")
        claim = claim_of(env, "paired")
        [gaudi] = allocated(claim, "gaudi.intel.com")
        gaudi_root = order[int(gaudi.removeprefix("gaudi-"))]
        mine = sorted(attr(devices(env)[d], "portID") for d in allocated(claim))
        assert mine == sorted(roots[gaudi_root]), (gaudi, gaudi_root, mine, roots)
        assert gaudi_root == order[-1]
        attached = sorted(a["port_id"] for a in env.attachments("paired"))
        assert attached == mine, (attached, mine)
        env.delete("paired")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
