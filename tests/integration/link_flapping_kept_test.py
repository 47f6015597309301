# SPDX-License-Identifier: Apache-2.0
"""LinkFlapping where the port is hard to watch, on a real kernel: across a
restart of rocenetd (the flap history is kept in the runtime directory for
this boot, so losses before, during and after the restart add up, and the
condition keeps when it began), and for a port in a pod (its carrier counts
read in the pod's namespace)."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile

from cni_test import Cni
from link_flapping_test import flapping, port

from harness import Daemon, ready_daemon, wait_until


def flap(fabric, index: int, times: int) -> None:
    for _ in range(times):
        fabric.link(index, "down")
        fabric.link(index, "up")


def config(workdir: str) -> str:
    path = os.path.join(workdir, "rocenetd.yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write("health:\n  flap_downs: 3\n  flap_window: 5m\n  flap_stable: 5m\n")
    return path


def test_the_flap_history_is_kept_across_a_restart(fabrics):
    fabric = fabrics("lk", ports=2)
    workdir = tempfile.mkdtemp(prefix="rocenetd-kept-")
    args = [f"--sysfs-root={fabric.sysfs_root}", f"--config={config(workdir)}",
            "--errors-interval=1s"]
    first = Daemon(fabric.node_netns, args)
    second = None
    try:
        first.start()
        first.wait_ready(15)
        name = fabric.ports[0]["host_ifname"]
        before = int(port_counters(first, name)["carrier_down_changes"])
        flap(fabric, 0, 1)
        wait_until(lambda: int(port_counters(first, name)["carrier_down_changes"]) == before + 1,
                   10, what="the first loss seen")
        port_id = next(p for p in first.ports() if p["name"] == name)["id"]
        # The memory is written at each sample and at the stop.
        first.stop()
        with open(os.path.join(first.runtime_dir, "health.json"), encoding="utf-8") as f:
            saved = json.load(f)
        assert len(saved["ports"][port_id]["flaps"]["downs"]) == 1, saved
        with open("/proc/sys/kernel/random/boot_id", encoding="utf-8") as f:
            assert saved["boot_id"] == f.read().strip()
        # One loss while no rocenetd looks, then the next one starts.
        flap(fabric, 0, 1)
        second = Daemon(fabric.node_netns, args, runtime_dir=first.runtime_dir)
        second.start()
        wait_until(lambda: "health memory of" in second.run_log(), 10, what="the memory restored")
        second.wait_ready(15)
        assert flapping(second, name) is None, "two losses of three"
        flap(fabric, 0, 1)
        wait_until(lambda: flapping(second, name) is not None, 10, interval=0.2,
                   what="LinkFlapping after the restart")
        condition = flapping(second, name)
        assert condition["message"].startswith(f"port {name}: carrier lost 3 times within 5m"), \
            condition
        print(f"LinkFlapping across a restart: {condition['message']}")
    finally:
        first.cleanup()
        if second is not None:
            second.stop()


def port_counters(daemon, name: str) -> dict:
    return next(p for p in daemon.ports() if p["name"] == name)["counters"]


def test_a_port_in_a_pod_flaps_too(fabrics):
    fabric = fabrics("lp", ports=2)
    workdir = tempfile.mkdtemp(prefix="rocenetd-podflap-")
    netns = f"{fabric.name}-pod"
    subprocess.run(["ip", "netns", "add", netns], check=True)
    try:
        with ready_daemon(fabric, f"--config={config(workdir)}", "--errors-interval=1s",
                          timeout=15) as d:
            code, result = Cni(d).run("ADD", "flapper", f"/run/netns/{netns}")
            assert code == 0, result
            attached = next(p for p in d.ports() if p.get("attached_to"))
            name = attached["name"]
            index = next(i for i, p in enumerate(fabric.ports) if p["host_ifname"] == name)
            # Moving the port into the pod closed and opened it: not a flap.
            wait_until(lambda: port(d, name)["healthy"], 10, what="the port healthy in the pod")
            flap(fabric, index, 3)
            wait_until(lambda: flapping(d, name) is not None, 15, interval=0.2,
                       what="LinkFlapping of the port in the pod")
            assert port(d, name)["healthy"] is False
            code, result = Cni(d).run("DEL", "flapper", f"/run/netns/{netns}")
            assert code == 0, result
    finally:
        subprocess.run(["ip", "netns", "del", netns], capture_output=True)
