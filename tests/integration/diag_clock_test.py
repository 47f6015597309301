# SPDX-License-Identifier: Apache-2.0
"""A node whose clock is 90 s ahead, on the simulated fabric
(tests/sim/cluster.py): 3 nodes x 2 rails, each with its own rocenetd and
rocenet-diagd; node 2's rocenet-diagd runs with its wall clock 90 s ahead
(Debian's libfaketime; its monotonic clock left alone, as NTP would leave
it). The data port admits a signed request only within 60 s of its own
clock, so node 2 refuses the requests of the others and they refuse its.
A triage from node 0 must end within its bound and say why: the clocks,
by how much and on which nodes, not a closed connection or a hang; and
what the two good nodes measure between themselves still passes."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import tempfile
import time

import pytest

from harness import Daemon, Diagd, binary, wait_until

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim"))
import cluster as sim_cluster  # noqa: E402

NODES = 3
RAILS = 2
AHEAD = 2
FAKETIME = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1"))
# The wall clock 90 s ahead, the monotonic one the kernel's.
AHEAD_ENV = {"LD_PRELOAD": FAKETIME[0] if FAKETIME else "", "FAKETIME": "+90s",
             "FAKETIME_DONT_FAKE_MONOTONIC": "1", "FAKETIME_NO_CACHE": "1"}


@pytest.fixture(scope="module")
def fabric():
    if not FAKETIME:
        pytest.skip("libfaketime not installed (packaging/debian-deps.sh test installs it)")
    cl = sim_cluster.Cluster.up(sim_cluster.fabric.unique_name("ck"), nodes=NODES, rails=RAILS)
    nodes: list[Daemon] = []
    daemons: list[Diagd] = []
    secrets = tempfile.mkdtemp(prefix="rocenet-clock-")
    secret = os.path.join(secrets, "secret")
    with open(secret, "w", encoding="utf-8") as f:
        f.write(os.urandom(24).hex() + "\n")
    try:
        for i in range(NODES):
            node = Daemon(cl.node_netns(i), ["--gaudi=false", "--interfaces=so*",
                                             f"--sysfs-root={cl.sysfs_root(i)}"])
            nodes.append(node)
            node.start()
            d = Diagd(node, [f"--node-name=n{i}", f"--secret-file={secret}",
                             f"--validation-file={secrets}/n{i}/rocenet-validated"])
            if i == AHEAD:
                d.env = AHEAD_ENV
            daemons.append(d)
            d.start()
        for i, d in enumerate(daemons):
            for r in range(RAILS):
                address = sim_cluster.node_address(i, r)
                wait_until(lambda: f"listening on {address}:50153" in d.log(), 30,
                           what=f"node {i} rail {r} addressed and its data port listening")
        yield cl, daemons
    finally:
        for d in daemons:
            d.cleanup()
        for node in nodes:
            node.cleanup()
        cl.down()


def nodes_arg() -> str:
    return ",".join("+".join(sim_cluster.node_address(i, r) for r in range(RAILS)) for i in range(NODES))


def test_the_ahead_clock_is_what_the_daemon_reads():
    """The stand-in for a wrong clock moves the wall clock a program reads,
    and only by its offset."""
    if not FAKETIME:
        pytest.skip("libfaketime not installed (packaging/debian-deps.sh test installs it)")
    ahead = subprocess.run(["date", "+%s"], env={**os.environ, **AHEAD_ENV}, capture_output=True,
                           text=True, check=True)
    skew = int(ahead.stdout) - time.time()
    assert 85 < skew < 95, f"libfaketime moved the clock by {skew:.0f} s, not 90"


def run(daemons, *test: str, bound: float) -> tuple[subprocess.CompletedProcess, dict, float]:
    started = time.monotonic()
    cp = subprocess.run([binary("rocectl"), "--socket", daemons[0].node.socket, "--diag-socket",
                         daemons[0].socket, "diag", *test, "-o", "json"],
                        capture_output=True, text=True, timeout=bound)
    took = time.monotonic() - started
    result = json.loads(cp.stdout) if cp.stdout.strip() else {}
    return cp, result, took


def test_a_reach_names_the_node_whose_clock_is_ahead_and_ends(fabric):
    _, daemons = fabric
    cp, result, took = run(daemons, "reach", "--nodes", nodes_arg(), "--count", "3",
                           "--time-limit", "10s", bound=90)
    print(f"reach with n{AHEAD}'s clock 90 s ahead: exit {cp.returncode} in {took:.1f} s")
    print(json.dumps(result, indent=1)[:4000])
    print(cp.stderr[-2000:])
    text = json.dumps(result) + cp.stderr
    assert "1m30s ahead of this node's clock" in text or "1m30s behind this node's clock" in text, text
    assert "clocks disagree" in text


def test_an_allreduce_names_the_clocks_and_ends_within_its_bound(fabric):
    _, daemons = fabric
    cp, result, took = run(daemons, "allreduce", "--nodes", nodes_arg(), "--time-limit", "20s",
                           bound=120)
    print(f"allreduce with n{AHEAD}'s clock 90 s ahead: exit {cp.returncode} in {took:.1f} s")
    print(json.dumps(result, indent=1)[:4000])
    print(cp.stderr[-2000:])
    text = json.dumps(result) + cp.stderr
    assert "clocks disagree" in text, text
    assert took < 60, f"the all-reduce took {took:.0f} s with a node's clock ahead"
