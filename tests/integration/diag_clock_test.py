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
import time

import pytest

from harness import Diagd, binary, diag_daemons

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
    try:
        with diag_daemons(cl, sim_cluster.node_address, RAILS, "rocenet-clock-",
                          env={AHEAD: AHEAD_ENV}) as daemons:
            yield cl, daemons
    finally:
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


def run(d: Diagd, *test: str, bound: float) -> tuple[subprocess.CompletedProcess, dict, float]:
    """`rocectl diag TEST -o json` against `d`: its exit, its result and
    how long it took."""
    started = time.monotonic()
    cp = subprocess.run([binary("rocectl"), "--socket", d.node.socket, "--diag-socket", d.socket,
                         "diag", *test, "-o", "json"], capture_output=True, text=True, timeout=bound)
    took = time.monotonic() - started
    result = json.loads(cp.stdout) if cp.stdout.strip() else {}
    print(f"{' '.join(test[:1])} from {d.args[-3].split('=')[1]}: exit {cp.returncode} in {took:.1f} s")
    print(json.dumps({k: v for k, v in result.items() if k != "ports"}, indent=1))
    print(cp.stderr[-2000:])
    return cp, result, took


def test_a_reach_names_the_node_whose_clock_is_ahead_and_measures_the_rest(fabric):
    """From node 0: node 2 is not tested, and the reason is its clock; the
    other two are measured and pass; no port is suspected."""
    _, daemons = fabric
    cp, result, took = run(daemons[0], "reach", "--nodes", nodes_arg(), "--count", "3",
                           "--time-limit", "10s", bound=90)
    assert cp.returncode == 8, cp.stderr  # measured nothing wrong, but not every node
    [skipped] = result["not_tested"]
    assert "node n2 refused the request: peer 10.201.1.1 (node n0): its request was signed 1m30s " \
        "behind this node's clock" in skipped["reason"], skipped
    assert "clocks disagree" in skipped["reason"], skipped
    assert result["labels"]["validated"] == 2 and not result["labels"]["unvalidated"], result["labels"]
    assert not result["suspects"], result["suspects"]
    assert took < 30, f"the reach took {took:.0f} s"


def test_from_the_node_whose_clock_is_ahead_every_peer_says_so(fabric):
    """From node 2: both peers refuse it, each saying its request is 90 s
    ahead; the run ends at once, nothing unvalidated."""
    _, daemons = fabric
    cp, result, took = run(daemons[AHEAD], "reach", "--nodes", nodes_arg(), "--count", "3",
                           "--time-limit", "10s", bound=90)
    reasons = [n["reason"] for n in result.get("not_tested", [])]
    assert len(reasons) == 2, (cp.returncode, result, cp.stderr)
    for who in ("n0", "n1"):
        assert any(f"node {who} refused the request" in r and "signed 1m30s ahead of this node's clock" in r
                   for r in reasons), reasons
    assert not result["labels"]["unvalidated"], result["labels"]
    assert took < 30, f"the reach took {took:.0f} s"


def test_an_allreduce_names_the_clocks_and_ends_at_once(fabric):
    """An all-reduce over the three nodes cannot build its ring: it fails
    at once naming the clocks, and unvalidates no port (a clock is not a
    cable)."""
    _, daemons = fabric
    cp, result, took = run(daemons[0], "allreduce", "--nodes", nodes_arg(), "--time-limit", "20s",
                           bound=120)
    assert cp.returncode == 6, cp.stderr  # the test found a failure
    assert any("node n2 refused the request" in p and "clocks disagree" in p
               for p in result["problems"]), result["problems"]
    assert not result["labels"]["unvalidated"], result["labels"]
    assert took < 30, f"the all-reduce took {took:.0f} s"
