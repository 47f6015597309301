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


@pytest.mark.parametrize("nodes,per_leaf", [(32, 8), (128, 16), (6, 2), (9, 3), (250, 1), (250, 32)])
def test_faults_stay_away_from_node_0_and_from_each_other(nodes, per_leaf):
    f = figs.choose_faults(nodes, per_leaf)
    leaves = -(-nodes // per_leaf)
    assert f.leaf == leaves - 1 and f.leaf != 0
    assert f.cut_node != f.dead_node
    for n in (f.cut_node, f.dead_node):
        assert 0 < n < nodes
        assert figs.leaf_of(n, per_leaf) not in (0, f.leaf)


def test_the_faults_at_the_benchmarks_sizes():
    assert figs.choose_faults(32, 8) == figs.Faults(12, 20, 3)
    assert figs.choose_faults(128, 16) == figs.Faults(24, 40, 7)


@pytest.mark.parametrize("nodes,per_leaf,rails", [(16, 8, 2), (4, 0, 2), (3, 1, 2), (32, 8, 1)])
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
    "cut": ("port", "n12", "so0"),
    "dead": ("port", "n20", "so1"),
    "leaf": ("leaf", "leaf-x-r0-l3"),
}


def test_every_fault_named_and_nothing_else():
    details = [
        {"kind": "leaf", "leaf": "leaf-x-r0-l3", "rail": "10.201.0.0/16", "evidence": "8 of 8 ports failed"},
        {"kind": "port", "node": "n12", "port": "so0", "rail": "10.201.0.0/16", "leaf": "leaf-x-r0-l1"},
        {"kind": "port", "node": "n20", "port": "so1"},
    ]
    named, false = figs.judge(EXPECTED, details)
    assert named == {"cut": True, "dead": True, "leaf": True} and false == []


def test_a_fault_named_otherwise_is_missed_and_the_other_name_false():
    details = [
        # the leaf's nodes one by one, not the leaf
        {"kind": "port", "node": "n24", "port": "so0", "evidence": "0 of 3"},
        {"kind": "port", "node": "n12", "port": "so0"},
        # the dead port's node, not its port
        {"kind": "node", "node": "n20"},
        {"kind": "leaf-uplink", "leaf": "leaf-x-r0-l3"},
    ]
    named, false = figs.judge(EXPECTED, details)
    assert named == {"cut": True, "dead": False, "leaf": False}
    assert false == ["port n24/so0 (0 of 3)", "node n20", "leaf-uplink leaf-x-r0-l3"]


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
