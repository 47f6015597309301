# SPDX-License-Identifier: Apache-2.0
"""The reach benchmark's arithmetic on made-up results: where the faults
go, the nodes file, which suspects name a planted fault and which are
false, the goals (label unit: no process is started)."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import triage_figures as figs  # noqa: E402


@pytest.mark.parametrize("nodes,per_leaf", [(32, 8), (128, 16), (512, 32), (20, 5), (1024, 32)])
def test_every_node_keeps_a_clean_rail_to_node_0(nodes, per_leaf):
    f = figs.choose_faults(nodes, per_leaf)
    leaves = -(-nodes // per_leaf)
    ports = {f.cut_node, f.lossy_node, f.dead_node, f.mtu_node}
    assert len(ports) == 4 and 0 not in ports and f.silent not in ports
    assert all(figs.leaf_of(n, per_leaf) == 0 for n in ports)
    # Each leaf-wide fault on a leaf of its own, none on node 0's.
    assert f.leaf == leaves - 1
    assert len({f.mtu_leaf, f.leaf, f.uplink_leaf, 0}) == 4
    assert 0 < f.silent < nodes
    # A node cut off on one rail is reached on the other: on rail 0 the
    # cut cable, the lossy port and the leaf down; on rail 1 the dead port,
    # the small-MTU link and the uplink down.
    for n in range(nodes):
        rail0 = n == f.cut_node or figs.leaf_of(n, per_leaf) == f.leaf
        rail1 = n in (f.dead_node, f.mtu_node) or figs.leaf_of(n, per_leaf) == f.uplink_leaf
        assert not (rail0 and rail1), n


def test_the_faults_at_the_benchmarks_sizes():
    assert figs.choose_faults(32, 8) == figs.Faults(cut_node=3, lossy_node=4, dead_node=5, mtu_node=6,
                                                    mtu_leaf=1, leaf=3, uplink_leaf=2, silent=12)
    assert figs.choose_faults(512, 32).leaf == 15


@pytest.mark.parametrize("nodes,per_leaf,rails", [(24, 8, 2), (4, 0, 2), (16, 4, 2), (32, 8, 1)])
def test_too_small_a_fabric_is_refused(nodes, per_leaf, rails):
    with pytest.raises(ValueError):
        figs.choose_faults(nodes, per_leaf, rails)


def test_nodes_file_one_node_a_line_its_rails_joined():
    text = figs.nodes_file([["10.201.1.1", "10.202.1.1"], ["10.201.2.1", "10.202.2.1"]])
    lines = text.splitlines()
    assert lines[0].startswith("#")
    assert lines[1:] == ["10.201.1.1+10.202.1.1", "10.201.2.1+10.202.2.1"]
    assert text.endswith("\n")


EXPECTED = {
    "cut": ("port", "n3", "so0"),
    "lossy": ("lossy-port", "n4", "so0"),
    "mtu": ("port-mtu", "n6", "so1"),
    "uplink mtu": ("leaf-uplink-mtu", "leaf-x-r0-l1"),
    "leaf": ("leaf", "leaf-x-r0-l3"),
}


def test_every_fault_named_and_nothing_else():
    details = [
        {"kind": "leaf", "leaf": "leaf-x-r0-l3", "rail": "10.201.0.0/16", "evidence": "8 of 8 ports failed"},
        {"kind": "port", "node": "n3", "port": "so0", "rail": "10.201.0.0/16", "leaf": "leaf-x-r0-l0"},
        {"kind": "lossy-port", "node": "n4", "port": "so0", "loss_ratio": 0.19},
        {"kind": "port-mtu", "node": "n6", "port": "so1"},
        {"kind": "leaf-uplink-mtu", "leaf": "leaf-x-r0-l1"},
    ]
    named, false = figs.judge(EXPECTED, details)
    assert all(named.values()) and false == []


def test_a_fault_named_otherwise_is_missed_and_the_other_name_false():
    details = [
        # the leaf's nodes one by one, not the leaf
        {"kind": "port", "node": "n24", "port": "so0", "evidence": "0 of 3"},
        {"kind": "port", "node": "n3", "port": "so0"},
        # the lossy port's node, not its port
        {"kind": "node", "node": "n4"},
        {"kind": "leaf-uplink", "leaf": "leaf-x-r0-l3"},
        # the small MTU as the uplink's outage
        {"kind": "leaf-uplink", "leaf": "leaf-x-r0-l1"},
        {"kind": "port-mtu", "node": "n6", "port": "so1"},
    ]
    named, false = figs.judge(EXPECTED, details)
    assert named == {"cut": True, "lossy": False, "mtu": True, "uplink mtu": False, "leaf": False}
    assert false == ["port n24/so0 (0 of 3)", "node n4", "leaf-uplink leaf-x-r0-l3",
                     "leaf-uplink leaf-x-r0-l1"]


def test_the_stopped_daemon_is_not_tested_and_nobody_else():
    names = {"n20", "10.201.21.1+10.202.21.1"}
    result = {"not_tested": [{"node": "10.201.21.1+10.202.21.1", "reason": "connection refused"}]}
    assert figs.judge_not_tested(names, result) == (True, [])
    result["not_tested"].append({"node": "n7", "reason": "timed out"})
    assert figs.judge_not_tested(names, result) == (True, ["n7: timed out"])
    assert figs.judge_not_tested(names, {}) == (False, [])


def test_goals_missed_at_or_over_them():
    assert not figs.at_most("wall", 59.9, figs.WALL_SECONDS, "s").missed
    assert figs.at_most("wall", 60.0, figs.WALL_SECONDS, "s").missed
    assert figs.at_most("rss", None, figs.COORDINATOR_MIB, "MiB").missed
    lines = figs.table([figs.at_most("wall", 75, 60, "s"), figs.Figure("size", "1,000 bytes")])
    assert lines[0].endswith("GOAL MISSED") and "< 60 s" in lines[0]
    assert lines[1].split() == ["size", "1,000", "bytes"]


def test_memory_summary_in_mib():
    assert figs.memory_summary([1024, 3072]) == "mean 2.0 MiB, max 3.0 MiB"
    assert figs.memory_summary([]) == "none"


def test_proc_status_reads_the_kb_fields():
    status = figs.proc_status(os.getpid())
    assert status["VmRSS"] > 0 and status["VmHWM"] >= status["VmRSS"]


def test_a_group_by_its_ends_when_long():
    assert figs.span(["n4", "n5", "n6", "n7"]) == "n4..n7 (4)"
    assert figs.span(["n5", "n0"]) == "n5,n0"
    assert figs.span([]) == ""


def test_phases_of_a_run_from_its_progress_lines():
    lines = [(0.01, "diag: asking 32 daemons for their ports"), (1.2, "diag: plan mesh: 32 nodes"),
             (2.0, "diag: node n1 done"), (6.4, "diag: node n5 done")]
    assert figs.phases(lines, 7.5) == ("the daemons' ports and the plan 1.2 s, the probes 5.2 s, "
                                       "the rest 1.1 s")
    assert figs.phases([], 3.0) == "3.0 s in all (no progress lines to split it by)"
