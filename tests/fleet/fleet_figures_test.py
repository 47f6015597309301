# SPDX-License-Identifier: Apache-2.0
"""The fleet benchmark's arithmetic on a made-up run: the phases' windows
and rates, the peaks, the cluster's latencies, what makes a run broken,
the API server's counts (label unit: no process is started)."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fleet_figures as figs  # noqa: E402

T0 = 1_000_000


def timeline(writes: dict[int, int], nodes: int = 4) -> dict:
    """A run of `nodes` nodes whose phases start 10 s apart from T0 (seed,
    steady, flap, settle, rail-down, rail-up, end), with writes[t] writes
    in second T0 + t."""
    names = ["seed", "steady", "flap", "settle", "rail-down", "rail-up", "end"]
    return {
        "nodes": nodes, "flappingNodes": 1,
        "phases": [{"name": n, "start": T0 + 10 * i + 0.5} for i, n in enumerate(names)],
        "seconds": [{"t": T0 + t, "writes": {"PUT rocenetnodes/status": n}}
                    for t, n in writes.items()],
    }


def cluster(available: str, degraded: str, count: int = 0) -> dict:
    return {"status": {"degradedNodeCount": count, "conditions": [
        {"type": "Available", "status": available}, {"type": "Degraded", "status": degraded}]}}


def test_a_phase_is_the_seconds_that_begin_in_it():
    t = timeline({9: 7, 10: 1, 11: 2, 19: 5, 20: 9})
    start, end = figs.phases(t)["steady"]
    assert (start, end) == (T0 + 10.5, T0 + 20.5)
    # The phase started in second 10, the next one in second 20.
    assert figs.per_second(t, start, end) == [1, 2, 0, 0, 0, 0, 0, 0, 0, 5]
    assert figs.rate(t, start, end) == pytest.approx(0.8)
    assert figs.writes_by_kind(t, start, end) == {"PUT rocenetnodes/status": 8}
    assert "end" not in figs.phases(t)


def test_peaks_are_the_largest_second_and_window():
    assert figs.peak([0, 3, 9, 1, 0, 0, 8], 1) == 9
    assert figs.peak([0, 3, 9, 1, 0, 0, 8], 5) == pytest.approx(18 / 5)
    assert figs.peak([4, 4], 5) == pytest.approx(8 / 5)
    assert figs.peak([], 5) == 0


def events():
    return [(T0 + 1, cluster("False", "False")), (T0 + 35, cluster("True", "False")),
            (T0 + 42.0, cluster("False", "True", 1)), (T0 + 47.5, cluster("False", "True", 4)),
            (T0 + 55.0, cluster("False", "True", 2)), (T0 + 58.5, cluster("True", "False"))]


def test_the_rail_figures_and_their_goals():
    t = timeline({40 + i: 20 for i in range(8)} | {52: 70})
    rows = {f.name: f for f in figs.rail_figures(t, events())}
    assert rows["rail down -> Degraded=True"].value == "1.5 s"
    assert not rows["rail down -> Degraded=True"].missed
    assert rows["rail down -> all 4 nodes counted degraded"].value == "7.0 s"
    assert rows["rail back -> Available=True"].value == "8.0 s"
    peak = rows["writes/s, rail event: peak second"]
    assert (peak.value, peak.missed) == ("70 /s", True)
    assert rows["writes/s, rail event: peak 5 s average"].value == "20.0 /s"
    assert rows["writes, rail event (down and back)"].value == "230 (57.50 a node)"
    assert "GOAL MISSED" in "\n".join(figs.table(list(rows.values())))


def test_a_cluster_that_never_shows_the_event_is_a_broken_run():
    t = timeline({})
    with pytest.raises(figs.BenchError, match="never showed Degraded"):
        figs.rail_figures(t, [(T0 + 1, cluster("True", "False"))])
    with pytest.raises(figs.BenchError, match="never showed Available"):
        figs.rail_figures(t, events()[:-1])
    with pytest.raises(figs.BenchError, match="not Available when the rail went down"):
        figs.rail_figures(t, [(T0 + 1, cluster("False", "True"))])
    with pytest.raises(figs.BenchError, match="no phase rail-up"):
        figs.rail_figures({**t, "phases": t["phases"][:6]}, events())


def test_request_totals_by_verb_and_resource():
    text = "\n".join([
        "# TYPE apiserver_request_total counter",
        'apiserver_request_total{code="200",component="apiserver",group="",resource="nodes",'
        'scope="resource",subresource="status",verb="PATCH",version="v1"} 7',
        'apiserver_request_total{code="409",component="apiserver",group="",resource="nodes",'
        'scope="resource",subresource="status",verb="PATCH",version="v1"} 1',
        'apiserver_request_total{code="200",component="",group="",resource="",scope="",'
        'subresource="/api",verb="GET",version=""} 3',
        'apiserver_request_total{code="201",component="apiserver",group="rocenet.io",'
        'resource="rocenetnodes",scope="resource",subresource="",verb="POST",version="v1alpha1"} 2',
    ])
    before = figs.request_totals(text)
    assert before == {("PATCH", "nodes/status"): 8, ("GET", "/api"): 3, ("POST", "rocenetnodes"): 2}
    after = {**before, ("PATCH", "nodes/status"): 20}
    assert figs.api_diff(before, after) == {("PATCH", "nodes/status"): 12}
