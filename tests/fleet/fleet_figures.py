# SPDX-License-Identifier: Apache-2.0
"""The fleet benchmark's figures, from what the run recorded: the load
program's timeline (phase starts, writes per second), the watched
RocenetCluster's versions, the API server's request counts. Pure: each
function takes the records and returns numbers or text.

The goals (docs/fleet.md#at-fleet-size) hold for 512 nodes; a smaller run
shows them too, and no goal missed makes a run fail: only a broken run
does (BenchError)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# The goals.
STEADY_WRITES = 2.0        # writes/s, a quiet fleet of 512 nodes
PEAK_WRITES = 60.0         # writes/s, a rail down and back on every node
CONDITION_SECONDS = 15.0   # the rail down -> Degraded, back -> Available
CONTROLLER_MIB = 100.0     # rocenet-controller's peak RSS
# What the reporter allows itself on one flapping port: one write of each
# object per MinInterval (10 s).
FLAP_WRITES_PER_NODE = 0.2


class BenchError(RuntimeError):
    """The run is broken: a figure could not be had."""


def phases(timeline: dict) -> dict[str, tuple[float, float]]:
    """Each phase's (start, end): a phase ends where the next starts; the
    last mark, "end", has no phase of its own."""
    marks = timeline["phases"]
    return {m["name"]: (m["start"], n["start"]) for m, n in zip(marks, marks[1:], strict=False)}


def seconds(start: float, end: float) -> range:
    """The whole seconds of a phase: the load program starts each phase
    just after a whole second, so second floor(start) is the phase's first
    and floor(end) the next phase's."""
    return range(math.floor(start), math.floor(end))


def per_second(timeline: dict, start: float, end: float) -> list[int]:
    """The writes of each second of [start, end), in order, every second
    present (a quiet one as 0)."""
    counts = {s["t"]: sum((s.get("writes") or {}).values()) for s in timeline["seconds"]}
    return [counts.get(t, 0) for t in seconds(start, end)]


def rate(timeline: dict, start: float, end: float) -> float:
    return sum(per_second(timeline, start, end)) / max(len(seconds(start, end)), 1)


def peak(counts: list[int], width: int) -> float:
    """The largest average over `width` consecutive seconds."""
    if not counts:
        return 0.0
    if len(counts) <= width:
        return sum(counts) / width
    return max(sum(counts[i:i + width]) for i in range(len(counts) - width + 1)) / width


def writes_by_kind(timeline: dict, start: float, end: float,
                   field: str = "writes") -> dict[str, int]:
    """The writes of [start, end) by "VERB resource"; with field
    "throttled", the requests the API server turned away with 429."""
    out: dict[str, int] = {}
    for s in timeline["seconds"]:
        if s["t"] in seconds(start, end):
            for kind, n in (s.get(field) or {}).items():
                out[kind] = out.get(kind, 0) + n
    return out


def condition(obj: dict, kind: str) -> str | None:
    for c in obj.get("status", {}).get("conditions") or []:
        if c.get("type") == kind:
            return c.get("status")
    return None


def state_at(events: list[tuple[float, dict]], t: float) -> dict | None:
    """The object as last seen at or before t."""
    seen = None
    for when, obj in events:
        if when > t:
            break
        seen = obj
    return seen


def first_after(events: list[tuple[float, dict]], t: float, pred) -> float | None:
    """Seconds from t to the first version seen after t that pred accepts."""
    for when, obj in events:
        if when >= t and pred(obj):
            return when - t
    return None


def api_diff(before: dict, after: dict) -> dict[tuple[str, str], int]:
    """The requests the API server counted between two scrapes, by (verb,
    resource), without the ones that did not change."""
    out = {}
    for key, value in after.items():
        delta = round(value - before.get(key, 0))
        if delta > 0:
            out[key] = delta
    return out


_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def request_totals(text: str) -> dict[tuple[str, str], float]:
    """apiserver_request_total of a /metrics text, by (verb, resource or
    resource/subresource); a request of no resource (discovery, /readyz)
    by its path, which the API server counts as its subresource."""
    totals: dict[tuple[str, str], float] = {}
    for line in text.splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        labels_text, _, value = line.rpartition("} ")
        labels = dict(_LABEL.findall(labels_text))
        resource, sub = labels.get("resource", ""), labels.get("subresource", "")
        if resource and sub:
            resource += "/" + sub
        elif not resource:
            resource = sub or "-"
        key = (labels.get("verb", "?"), resource)
        totals[key] = totals.get(key, 0) + float(value)
    return totals


@dataclass
class Figure:
    name: str
    value: str
    goal: str = ""
    missed: bool = False


def mib(n: float) -> str:
    return f"{n / (1 << 20):.1f} MiB"


def at_most(name: str, value: float | None, goal: float, unit: str, fmt: str = ".2f") -> Figure:
    """A figure with its goal: missed when over it (or never seen)."""
    if value is None:
        return Figure(name, "never", f"<= {goal:g} {unit}", True)
    return Figure(name, f"{value:{fmt}} {unit}", f"<= {goal:g} {unit}", value > goal)


def rail_figures(timeline: dict, events: list[tuple[float, dict]]) -> list[Figure]:
    """The write rates of each phase and the cluster condition's latencies;
    BenchError when the cluster never showed the rail's event."""
    windows = phases(timeline)
    for name in ("steady", "flap", "settle", "rail-down", "rail-up"):
        if name not in windows:
            raise BenchError(f"the timeline has no phase {name}: the schedule did not finish")
    nodes = timeline["nodes"]
    figures = [at_most("writes/s, steady (heartbeats only)", rate(timeline, *windows["steady"]),
                       STEADY_WRITES, "/s")]
    flappers = timeline.get("flappingNodes") or 0
    if flappers:
        per_node = rate(timeline, *windows["flap"]) / flappers
        figures.append(at_most(f"writes/s per flapping node ({flappers} nodes)", per_node,
                               FLAP_WRITES_PER_NODE, "/s", ".3f"))
    figures.append(Figure("writes/s, settle (after the flaps)",
                          f"{rate(timeline, *windows['settle']):.2f} /s"))
    down, end = windows["rail-down"][0], windows["rail-up"][1]
    counts = per_second(timeline, down, end)
    figures.append(at_most("writes/s, rail event: peak second", float(max(counts, default=0)),
                           PEAK_WRITES, "/s", ".0f"))
    figures.append(at_most("writes/s, rail event: peak 5 s average", peak(counts, 5),
                           PEAK_WRITES, "/s", ".1f"))
    figures.append(Figure("writes, rail event (down and back)",
                          f"{sum(counts)} ({sum(counts) / nodes:.2f} a node)"))

    before = state_at(events, down)
    if before is None or condition(before, "Available") != "True":
        seen = "no RocenetCluster" if before is None else \
            f"Available={condition(before, 'Available')}"
        raise BenchError(f"the cluster was not Available when the rail went down ({seen}): "
                         "the settle phase is too short for this size")
    degraded = first_after(events, down, lambda o: condition(o, "Degraded") == "True")
    if degraded is None:
        raise BenchError("RocenetCluster never showed Degraded=True after the rail went down")
    all_counted = first_after(events, down,
                              lambda o: o.get("status", {}).get("degradedNodeCount") == nodes)
    up = windows["rail-up"][0]
    available = first_after(events, up, lambda o: condition(o, "Available") == "True")
    if available is None:
        raise BenchError("RocenetCluster never showed Available=True after the rail came back")
    figures += [
        at_most("rail down -> Degraded=True", degraded, CONDITION_SECONDS, "s", ".1f"),
        Figure(f"rail down -> all {nodes} nodes counted degraded",
               "never" if all_counted is None else f"{all_counted:.1f} s"),
        at_most("rail back -> Available=True", available, CONDITION_SECONDS, "s", ".1f"),
    ]
    return figures


def table(figures: list[Figure]) -> list[str]:
    """The figures as aligned lines: name, value, goal, GOAL MISSED."""
    width = max(len(f.name) for f in figures)
    vwidth = max(len(f.value) for f in figures)
    gwidth = max((len(f.goal) for f in figures), default=0)
    lines = []
    for f in figures:
        line = f"{f.name:<{width}}  {f.value:>{vwidth}}  {f.goal:<{gwidth}}"
        if f.missed:
            line += "  GOAL MISSED"
        lines.append(line.rstrip())
    return lines
