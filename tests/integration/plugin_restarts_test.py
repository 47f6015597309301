# SPDX-License-Identifier: Apache-2.0
"""The device plugin through kubelet restarts and rocenetd restarts and
crashes, interleaved, with the real binaries on a simulated fabric: after
each, kubelet has the full device list with the right health; while rocenetd
is gone past the grace period, every device is Unhealthy."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import tempfile
import time

import pytest

from harness import Daemon, wait_until


@pytest.fixture(scope="module")
def fabric(fabrics):
    return fabrics("hfp", ports=4)


def latest_devices(peer) -> dict | None:
    """The last full device list the kubelet peer has been sent so far."""
    while True:
        try:
            event = peer.events.get_nowait()
        except queue.Empty:
            break
        peer.seen.append(event)
        if event["event"] == "devices":
            peer.last_devices = {d["ID"]: d for d in event.get("devices", [])}
    return getattr(peer, "last_devices", None)


def settles(peer, pred, timeout: float, what: str) -> None:
    wait_until(lambda: pred(latest_devices(peer) or {}), timeout, interval=0.05, what=what)


def stays(peer, pred, seconds: float, what: str) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        devices = latest_devices(peer) or {}
        assert pred(devices), (what, devices)
        time.sleep(0.05)


def test_device_plugin_through_kubelet_and_daemon_restarts(fabric):
    from kubelet import GRACE, KubeletPeer, Plugin

    daemon = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}"])
    daemon.start()
    workdir = tempfile.mkdtemp(prefix="rocenet-dp-faults-")
    plugin = Plugin(daemon, workdir)
    peers = [KubeletPeer(plugin.kubelet_dir)]
    down = fabric.ports[1]
    try:
        wait_until(daemon.ready, 15, what="node ready")
        plugin.start()
        ids = {p["name"]: p["id"] for p in daemon.ports()}
        # so1 loses its switch: its device must stay Unhealthy through it all.
        fabric.link(1, "down")
        sick = ids[down["host_ifname"]]

        def right(devices: dict) -> bool:
            return (set(devices) == set(ids.values()) and
                    all(d["health"] == ("Unhealthy" if i == sick else "Healthy")
                        for i, d in devices.items()))

        def all_unhealthy(devices: dict) -> bool:
            return set(devices) == set(ids.values()) and all(
                d["health"] == "Unhealthy" for d in devices.values())

        def restart_kubelet():
            peers[-1].stop()
            # A restarting kubelet removes every socket in its directory.
            for name in os.listdir(plugin.kubelet_dir):
                os.unlink(os.path.join(plugin.kubelet_dir, name))
            fresh = KubeletPeer(plugin.kubelet_dir)
            peers.append(fresh)
            fresh.next(lambda e: e["event"] == "register", 5)

        settles(peers[-1], right, 15, "the first list, so1 Unhealthy")
        steps = ["kubelet", "daemon-term", "kubelet", "daemon-kill", "daemon-away-kubelet",
                 "kubelet", "daemon-kill"]
        for step in steps:
            if step == "kubelet":
                restart_kubelet()
                settles(peers[-1], right, 10, f"the full list after {step}")
            elif step in ("daemon-term", "daemon-kill"):
                daemon.stop(signal.SIGTERM if step == "daemon-term" else signal.SIGKILL)
                daemon.start()
                wait_until(lambda: daemon.rocectl("ports").returncode == 0, 10,
                           what="rocenetd back")
                # Back within the grace period: kubelet keeps the right list
                # and never sees a false Unhealthy, also once the period ends.
                settles(peers[-1], right, 10, f"the full list after {step}")
                stays(peers[-1], right, GRACE + 1, f"the list after {step}")
            elif step == "daemon-away-kubelet":
                # rocenetd crashes and stays away past the grace period;
                # kubelet restarts meanwhile and must hear the same thing.
                daemon.stop(signal.SIGKILL)
                t0 = time.monotonic()
                settles(peers[-1], all_unhealthy, GRACE + 5, "everything Unhealthy")
                assert time.monotonic() - t0 >= GRACE - 0.3
                restart_kubelet()
                settles(peers[-1], all_unhealthy, 10, "everything Unhealthy, new kubelet")
                daemon.start()
                settles(peers[-1], right, 15, "the right list with rocenetd back")
        print(f"{len(steps)} restarts: {steps}")
    finally:
        fabric.link(1, "up")
        for p in peers:
            p.stop()
        if plugin.proc is not None:
            assert plugin.stop() == 0, plugin.log()
        daemon.cleanup()
        subprocess.run(["rm", "-rf", workdir])
