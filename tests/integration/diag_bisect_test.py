# SPDX-License-Identifier: Apache-2.0
"""The collective's bisection on the simulated fabric (tests/sim/cluster.py):
8 nodes x 1 rail, each with its own rocenetd and rocenet-diagd, the real
all-reduce rings over veth through the switch. One node's port is shaped
to 100 Mbit/s both ways (tc's token bucket on the node's and the switch's
end, as a port that trained down); `rocectl diag allreduce --bisect` must
name that node and no other, and take its validation label only; with the
shaping off, the same run names nobody. Nothing is left behind.

The ring over veth runs at what 2 shared cores give it, which varies from
run to run, and between rings of other members, by far more than Habana's
10 % (healthy rings of the triage benchmark were 2.6 times apart): the runs
here judge at --min-fraction 0.25, against a slow port that runs at 2 % of
a healthy one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import pytest

from harness import Daemon, Diagd, wait_until

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim"))
import cluster as sim_cluster  # noqa: E402

NODES = 8
SLOW = 5
SLOW_MBIT = 100


@pytest.fixture(scope="module")
def ring():
    cl = sim_cluster.Cluster.up(sim_cluster.fabric.unique_name("bs"), nodes=NODES, rails=1)
    nodes: list[Daemon] = []
    daemons: list[Diagd] = []
    secrets = tempfile.mkdtemp(prefix="rocenet-bisect-")
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
            d.validation = f"{secrets}/n{i}/rocenet-validated"
            daemons.append(d)
            d.start()
        for i, d in enumerate(daemons):
            address = sim_cluster.node_address(i, 0)
            wait_until(lambda: f"listening on {address}:50153" in d.log(), 30,
                       what=f"node {i} addressed and its data port listening")
        yield cl, daemons
    finally:
        for d in daemons:
            d.cleanup()
        for node in nodes:
            node.cleanup()
        cl.down()
        left = [ns for ns in os.listdir("/run/netns") if ns.startswith(cl.name + "-")]
        assert left == [], f"namespaces left behind: {left}"
        assert not any(d.proc and d.proc.poll() is None for d in daemons), "rocenet-diagd left"


def bisect(daemon: Diagd) -> tuple[int, dict, str, float]:
    nodes = ",".join(sim_cluster.node_address(i, 0) for i in range(NODES))
    start = time.monotonic()
    cp = daemon.rocectl("diag", "allreduce", "--nodes", nodes, "--min-bytes", "1M",
                        "--max-bytes", "1M", "--iterations", "3", "--time-limit", "20s",
                        "--bisect", "--min-fraction", "0.25", "-o", "json", timeout=400)
    took = time.monotonic() - start
    return cp.returncode, json.loads(cp.stdout) if cp.stdout.strip() else {}, cp.stderr, took


def label(daemon: Diagd) -> str:
    try:
        with open(daemon.validation, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def steps(result: dict) -> list[str]:
    out = []
    for s in result.get("bisection", []):
        out.append(f"{s.get('depth', 0)}{' pair' if s.get('pair') else ''} "
                   f"{','.join(s['nodes'])} {s.get('busbw_bytes_per_second', 0) / 1e9:.3f} GB/s"
                   f"{' SLOW' if s.get('slow') else ''}")
    return out


def test_bisection_names_the_slow_node_and_only_it(ring):
    cl, daemons = ring
    # A first healthy run validates every node at the ethernet stage.
    rc, result, err, took = bisect(daemons[0])
    print(f"healthy: {took:.1f}s", *steps(result), result.get("bisection_conclusion"), sep="\n  ")
    assert rc == 0, err + json.dumps(result)[:2000]
    assert not result.get("slow_nodes"), result["bisection_conclusion"]
    assert "no node makes the all-reduce slow" in result["bisection_conclusion"]
    # The whole and its halves; halves apart by the noise of the shared
    # cores are followed down to pairs, each fine beside a good node.
    assert not any(s.get("slow") for s in result["bisection"]), steps(result)
    assert len(result["bisection"]) <= 2 * 3 + 5  # the bound of runs for 8 nodes
    for d in daemons:
        assert "rocenet.io/scale-out-validated=ethernet" in label(d), label(d)

    cl.slow(SLOW, 0, SLOW_MBIT)
    try:
        rc, result, err, took = bisect(daemons[0])
    finally:
        cl.slow(SLOW, 0, 0)
    print(f"n{SLOW} at {SLOW_MBIT} Mbit/s: {took:.1f}s", *steps(result),
          result.get("bisection_conclusion"), sep="\n  ")
    assert rc == 6, err
    assert result["slow_nodes"] == [f"n{SLOW}"], json.dumps(result["bisection"], indent=1)
    assert result["bisection_conclusion"].startswith(f"n{SLOW} makes the all-reduce slow")
    by_nodes = {(",".join(s["nodes"]), bool(s.get("pair"))): s for s in result["bisection"]}
    # Halves, quarters, then n4 and n5 each beside a node of a good half.
    assert by_nodes[("n4,n5,n6,n7", False)].get("slow")
    assert not by_nodes[("n0,n1,n2,n3", False)].get("slow")
    assert by_nodes[("n4,n5", False)].get("slow")
    assert not by_nodes[("n6,n7", False)].get("slow")
    assert by_nodes[(f"n{SLOW},n0", True)].get("slow")
    assert not by_nodes[("n4,n0", True)].get("slow")
    # The shaped port's ring links are the slowest a slow group names.
    assert f"n{SLOW}/so0" in by_nodes[("n4,n5", False)]["slowest_link"]
    # The label goes from the slow node only; the ends of the whole ring's
    # links around it keep theirs.
    assert result["labels"]["unvalidated"] == [f"n{SLOW}"], result["labels"]
    for i, d in enumerate(daemons):
        want = i != SLOW
        assert ("rocenet.io/scale-out-validated=ethernet" in label(d)) == want, (i, label(d))

    # The shaping is off again: no token bucket left at either end.
    for ns, dev in ((cl.node_netns(SLOW), "so0"),
                    (cl.leaf_netns(0, cl.leaf_of(SLOW)), cl.switch_ifname(SLOW))):
        cp = subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "show", "dev", dev],
                            capture_output=True, text=True, check=True)
        assert "tbf" not in cp.stdout, cp.stdout
