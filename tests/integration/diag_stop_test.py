# SPDX-License-Identifier: Apache-2.0
"""A triage test stopped midway, on the simulated fabric (tests/sim/cluster.py):
4 nodes x 2 rails, each with its own rocenetd and rocenet-diagd. rocectl
runs an all-reduce or the bandwidth pairs long enough to be interrupted,
and gets SIGTERM (what the kubelet sends a triage run's pod when its Job
times out or the triage is deleted) or SIGKILL once traffic flows on the
ports. Then, read from every node's ports' transmit counters (the kernel's,
through `ip -s link`): no test traffic leaves any port more than 1 s after
the signal; rocectl says every node confirmed (exit 9) after SIGTERM; and
no validation label changed. Traffic that is left is LLDP and ARP, a few
frames a port: the bound is on bytes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from harness import binary, diag_daemons, wait_until

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim"))
import cluster as sim_cluster  # noqa: E402

NODES = 4
RAILS = 2
# What a port may send in 2 s once the test is stopped: LLDP and ARP frames,
# far below the megabytes a second of test traffic.
QUIET_BYTES = 4096


@pytest.fixture(scope="module")
def fabric():
    cl = sim_cluster.Cluster.up(sim_cluster.fabric.unique_name("st"), nodes=NODES, rails=RAILS)
    try:
        with diag_daemons(cl, sim_cluster.node_address, RAILS, "rocenet-stop-") as daemons:
            yield cl, daemons
    finally:
        cl.down()


def transmitted(cl) -> dict[str, int]:
    """Every node port's transmitted bytes, by "n<i>/so<r>"."""
    out = {}
    for i in range(NODES):
        cp = subprocess.run(["ip", "-n", cl.node_netns(i), "-s", "-j", "link", "show"],
                            capture_output=True, text=True, check=True)
        for link in json.loads(cp.stdout):
            if link["ifname"].startswith("so"):
                out[f"n{i}/{link['ifname']}"] = link["stats64"]["tx"]["bytes"]
    return out


def labels(daemons) -> list[str]:
    out = []
    for d in daemons:
        try:
            with open(d.validation, encoding="utf-8") as f:
                out.append(f.read())
        except FileNotFoundError:
            out.append("")
    return out


def run_and_stop(cl, daemons, test: list[str], sig: int) -> tuple[int, str, dict, dict, float]:
    """Starts `rocectl diag TEST` on node 0, sends `sig` once a second of
    traffic has left the ports, and returns rocectl's exit code and stderr,
    the ports' bytes sent from 1 s to 3 s after the signal, the bytes sent
    in the second before it, and how long rocectl took to end."""
    d = daemons[0]
    proc = subprocess.Popen([binary("rocectl"), "--socket", d.node.socket, "--diag-socket",
                             d.socket, "diag", *test, "-o", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        start = transmitted(cl)
        wait_until(lambda: sum(transmitted(cl).values()) - sum(start.values()) > 20 << 20, 60,
                   interval=0.1, what="20 MB of test traffic on the ports")
        before = transmitted(cl)
        time.sleep(1)  # a second of traffic, to compare with
        at = transmitted(cl)
        running = {k: at[k] - before[k] for k in at}
        t0 = time.monotonic()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
        took = time.monotonic() - t0
        # From 1 s after the signal, for 2 s.
        time.sleep(max(0.0, t0 + 1 - time.monotonic()))
        quiet_from = transmitted(cl)
        time.sleep(max(0.0, t0 + 3 - time.monotonic()))
        quiet_to = transmitted(cl)
        after = {k: quiet_to[k] - quiet_from[k] for k in quiet_to}
        return proc.returncode, err, after, running, took
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def nodes_arg(rail: int = 0) -> str:
    return ",".join(sim_cluster.node_address(i, rail) for i in range(NODES))


@pytest.mark.parametrize("stage,test", [
    ("allreduce", ["allreduce", "--nodes", nodes_arg(), "--min-bytes", "16M", "--max-bytes",
                   "64M", "--iterations", "100", "--time-limit", "120s"]),
    ("bandwidth", ["bandwidth", "--nodes", ",".join(sim_cluster.node_address(i, 0)
                                                     for i in range(1, NODES)),
                   "--duration", "30s"]),
])
def test_sigterm_stops_the_traffic_within_a_second_and_every_node_confirms(fabric, stage, test):
    cl, daemons = fabric
    before = labels(daemons)
    rc, err, after, running, took = run_and_stop(cl, daemons, test, signal.SIGTERM)
    print(f"{stage}: traffic before the signal (bytes/s) {running}")
    print(f"{stage}: rocectl ended {took:.2f} s after SIGTERM; bytes sent 1-3 s after: {after}")
    assert sum(running.values()) > 5 << 20, f"the test was not sending: {running}"
    assert rc == 9, err
    assert "every node confirmed its traffic ended" in err, err
    assert took < 5, took
    loud = {port: sent for port, sent in after.items() if sent > QUIET_BYTES}
    assert not loud, f"ports still sending 1 s after the stop: {loud}"
    assert labels(daemons) == before, "a stopped run changed a validation label"
    # A second run starts at once: nothing was left holding the daemons.
    cp = daemons[0].rocectl("diag", "reach", "--nodes", nodes_arg(), "-o", "json", timeout=60)
    assert cp.returncode == 0, cp.stderr


def test_a_killed_rocectl_stops_the_run_too(fabric):
    cl, daemons = fabric
    before = labels(daemons)
    test = ["allreduce", "--nodes", nodes_arg(), "--min-bytes", "16M", "--max-bytes", "64M",
            "--iterations", "100", "--time-limit", "120s"]
    rc, err, after, running, took = run_and_stop(cl, daemons, test, signal.SIGKILL)
    print(f"killed: bytes sent 1-3 s after SIGKILL: {after}")
    assert rc == -signal.SIGKILL
    loud = {port: sent for port, sent in after.items() if sent > QUIET_BYTES}
    assert not loud, f"ports still sending 1 s after rocectl was killed: {loud}"
    assert labels(daemons) == before
    wait_until(lambda: "went away: the run was stopped" in daemons[0].log(), 10,
               what="rocenet-diagd saying why it stopped the run")
