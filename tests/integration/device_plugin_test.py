# SPDX-License-Identifier: Apache-2.0
"""rocenet-device-plugin against the real rocenetd on a simulated fabric,
with rocenet-kubelet-peer playing kubelet (kubelet.py): registration, the
device list and its health through link changes, kubelet and daemon
restarts, and preferred allocation. What an allocation gives the pod is in
device_allocation_test.py."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from harness import ready_daemon, wait_until
from kubelet import GRACE, RESOURCE, TWO_RAILS, KubeletPeer, Plugin, all_healthy, ids_by_name


@pytest.fixture(scope="module")
def fabric(fabrics):
    return fabrics("dp", ports=4, descriptions=TWO_RAILS)


@pytest.fixture(scope="module")
def daemon(fabric):
    with ready_daemon(fabric, timeout=15) as d:
        yield d


def test_registers_and_lists_every_port_healthy(fabric, daemon, plugin_and_peers):
    plugin, (peer,) = plugin_and_peers
    reg = peer.next(lambda e: e["event"] == "register", 5)["request"]
    assert reg["version"] == "v1beta1"
    assert reg["resource_name"] == RESOURCE
    assert reg["endpoint"] == "rocenet.io_scale-out-port.sock"
    assert reg["options"]["get_preferred_allocation_available"] is True
    options = peer.next(lambda e: e["event"] == "options", 5)["response"]
    assert options["get_preferred_allocation_available"] is True
    devices = peer.devices(all_healthy, 5)
    assert set(devices) == set(ids_by_name(daemon).values())
    numa = {p["id"]: p["numa_node"] for p in daemon.ports()}
    for dev_id, dev in devices.items():
        assert dev["topology"]["nodes"] == [{"ID": str(numa[dev_id])}]


def test_switch_end_down_is_unhealthy_within_a_second_and_recovers(fabric, daemon, plugin_and_peers):
    plugin, (peer,) = plugin_and_peers
    peer.devices(all_healthy, 5)
    port = fabric.ports[1]
    dev_id = ids_by_name(daemon)[port["host_ifname"]]
    # The kernel reports a lost carrier on its own schedule (linkwatch runs
    # at most once a second), so the clock starts when the node sees it.
    monitor = subprocess.Popen(["ip", "-n", fabric.node_netns, "monitor", "link"],
                               stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(0.2)
        fabric.link(1, "down")
        for line in monitor.stdout:
            if port["host_ifname"] in line and "NO-CARRIER" in line:
                break
        t0 = time.monotonic()
        devices = peer.devices(lambda d: d.get(dev_id, {}).get("health") == "Unhealthy", 3)
        assert time.monotonic() - t0 < 1.0
        assert all(d["health"] == "Healthy" for i, d in devices.items() if i != dev_id)
        assert len(devices) == len(fabric.ports)  # always the full list
    finally:
        monitor.terminate()
        monitor.wait(5)
        fabric.link(1, "up")
    peer.devices(all_healthy, 15)


def test_kubelet_restart_registers_again_with_the_full_list(fabric, daemon, plugin_and_peers):
    plugin, peers = plugin_and_peers
    first = peers[0]
    first.devices(all_healthy, 5)
    first.stop()
    # A restarting kubelet removes every socket in its directory.
    for name in os.listdir(plugin.kubelet_dir):
        os.unlink(os.path.join(plugin.kubelet_dir, name))
    t0 = time.monotonic()
    second = KubeletPeer(plugin.kubelet_dir)
    peers.append(second)
    second.next(lambda e: e["event"] == "register", 2)
    assert time.monotonic() - t0 < 2.0
    devices = second.devices(all_healthy, 5)
    assert len(devices) == len(fabric.ports)


def test_kubelet_sock_recreated_alone_registers_again(fabric, daemon, plugin_and_peers):
    plugin, peers = plugin_and_peers
    peers[0].devices(all_healthy, 5)
    peers[0].stop()
    second = KubeletPeer(plugin.kubelet_dir)
    peers.append(second)
    second.next(lambda e: e["event"] == "register", 2)
    assert len(second.devices(all_healthy, 5)) == len(fabric.ports)


def test_ready_only_while_kubelet_holds_the_device_list(daemon):
    """The container's readiness file: not while the plugin serves a socket
    no kubelet has called, there once kubelet has the device list, gone when
    kubelet hangs up and back when it registers the plugin again. A rolling
    update deletes the old pod on the new one's readiness: ready any
    earlier, the node would be left with no plugin kubelet counts."""
    # A short directory: a socket's path has at most 107 bytes, which
    # pytest's tmp_path (the test's name in it) may pass.
    workdir = tempfile.mkdtemp(prefix="rocenet-dp-")
    plugin = Plugin(daemon, workdir)
    sock = os.path.join(plugin.kubelet_dir, "rocenet.io_scale-out-port.sock")
    plugin.start()
    peer = None
    try:
        # Serving, and so what the old probe called ready; no kubelet.sock
        # to register with.
        wait_until(lambda: f"serving the device plugin API on {sock}" in plugin.log(), 10,
                   what="the plugin's socket served")
        assert not os.path.exists(plugin.ready_file), "ready with no kubelet"
        peer = KubeletPeer(plugin.kubelet_dir)
        peer.devices(all_healthy, 10)
        wait_until(lambda: os.path.exists(plugin.ready_file), 5, what="the readiness file")
        peer.stop()
        wait_until(lambda: not os.path.exists(plugin.ready_file), 5,
                   what="the readiness file gone with kubelet")
        peer = KubeletPeer(plugin.kubelet_dir)
        peer.devices(all_healthy, 10)
        wait_until(lambda: os.path.exists(plugin.ready_file), 5,
                   what="the readiness file back with kubelet")
    finally:
        if peer is not None:
            peer.stop()
        assert plugin.stop() == 0, plugin.log()
    assert not os.path.exists(plugin.ready_file), "a stopped plugin left its readiness file"
    shutil.rmtree(workdir, ignore_errors=True)


def test_preferred_allocation(fabric, daemon, plugin_and_peers):
    plugin, (peer,) = plugin_and_peers
    peer.devices(all_healthy, 5)
    ids = sorted(p["id"] for p in daemon.ports())
    reply = peer.call(f"preferred available={','.join(ids)} must={ids[2]} size=2")
    assert reply["ok"], reply
    got = reply["response"]["container_responses"][0]["deviceIDs"]
    assert len(got) == 2 and got[0] == ids[2] and got[1] in ids
    again = peer.call(f"preferred available={','.join(reversed(ids))} must={ids[2]} size=2")
    assert again["response"]["container_responses"][0]["deviceIDs"] == got  # deterministic

    # Rails first: with so0 a must, the second port is on another rail. The
    # rail is the scale-out order inside the module: module 0 has so0, so1,
    # so2 (rails 0, 1, 2), module 1 has so3 (rail 0, like so0).
    ports = {p["name"]: p for p in daemon.ports()}
    assert {n: p["rail"] for n, p in ports.items()} == {"so0": 0, "so1": 1, "so2": 2, "so3": 0}
    by_name = {n: p["id"] for n, p in ports.items()}
    reply = peer.call(f"preferred available={','.join(ids)} must={by_name['so0']} size=2")
    got = reply["response"]["container_responses"][0]["deviceIDs"]
    assert got[0] == by_name["so0"]
    assert got[1] in (by_name["so1"], by_name["so2"]), (got, by_name)
    reply = peer.call(f"preferred available={','.join(ids)} must= size=4")
    assert sorted(reply["response"]["container_responses"][0]["deviceIDs"]) == ids


def test_daemon_down_longer_than_grace_is_all_unhealthy_then_recovers(fabric, daemon, plugin_and_peers):
    plugin, (peer,) = plugin_and_peers
    peer.devices(all_healthy, 5)
    # SIGKILL: a crash says nothing on its way out, so only the grace period
    # can turn the devices Unhealthy.
    daemon.stop(signal.SIGKILL)
    t0 = time.monotonic()
    try:
        peer.devices(lambda d: d and all(x["health"] == "Unhealthy" for x in d.values()),
                     GRACE + 3)
        assert time.monotonic() - t0 >= GRACE - 0.3  # not before the grace period
    finally:
        daemon.start()
    peer.devices(all_healthy, 20)
