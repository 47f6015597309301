# SPDX-License-Identifier: Apache-2.0
"""The reach benchmark's arithmetic (tests/triage/triage_bench.py), apart
from the processes so that it is tested on made-up results
(triage_figures_test.py): where the faults go, what the result must name,
the figures beside their goals."""

from __future__ import annotations

import dataclasses

# The goals at 128 nodes x 2 rails on 2 cores (docs/development.md#the-reach-benchmark).
WALL_SECONDS = 60.0
COORDINATOR_MIB = 200.0


class BenchError(RuntimeError):
    """The run is broken: a figure could not be had."""


@dataclasses.dataclass(frozen=True)
class Faults:
    """Where the three faults go: a cut cable (node a, rail 0), a dead port
    (node b, rail 1) and a whole leaf down (leaf k of rail 0)."""

    cut_node: int
    dead_node: int
    leaf: int


def leaf_of(node: int, nodes_per_leaf: int) -> int:
    return node // nodes_per_leaf


def choose_faults(nodes: int, nodes_per_leaf: int, rails: int = 2) -> Faults:
    """Faults away from node 0 (the coordinator) and its leaves (leaf 0 on
    every rail): the cable and the dead port in the middle of leaf 1 (the
    dead port on leaf 2 when there are four leaves or more), the last leaf
    down. ValueError when the cluster is too small to keep them apart."""
    if rails < 2:
        raise ValueError("the dead port is on rail 1: at least 2 rails")
    if nodes_per_leaf < 1:
        raise ValueError("the faults need leaves: nodes_per_leaf >= 1")
    leaves = -(-nodes // nodes_per_leaf)
    if leaves < 3:
        raise ValueError(f"{nodes} nodes at {nodes_per_leaf} a leaf make {leaves} leaves a rail: "
                         "the faults need 3 (node 0's, the faulty ports', the one that goes down)")
    k = leaves - 1
    cut = nodes_per_leaf + nodes_per_leaf // 2
    if leaves >= 4:
        dead = 2 * nodes_per_leaf + nodes_per_leaf // 2
    elif nodes_per_leaf >= 2:
        dead = nodes_per_leaf + (nodes_per_leaf // 2 + 1) % nodes_per_leaf
    else:
        raise ValueError("with 3 leaves of one node, the cut cable and the dead port would share a node")
    for n in (cut, dead):
        assert n < nodes and leaf_of(n, nodes_per_leaf) not in (0, k), (n, k)
    return Faults(cut, dead, k)


def nodes_file(addresses: list[list[str]]) -> str:
    """rocectl diag reach --nodes-file: one node a line, its daemon's
    addresses (one a rail) joined by '+'."""
    lines = ["# rocectl diag reach --nodes-file: ADDR[+ADDR...] a node (tests/triage/triage_bench.py)"]
    lines += ["+".join(addrs) for addrs in addresses]
    return "\n".join(lines) + "\n"


def suspect_key(s: dict) -> tuple:
    """What identifies a suspect: its kind and the names that kind needs."""
    kind = s.get("kind", "")
    if kind == "port":
        return (kind, s.get("node", ""), s.get("port", ""))
    if kind == "node":
        return (kind, s.get("node", ""))
    if kind in ("leaf", "leaf-uplink"):
        return (kind, s.get("leaf", ""))
    if kind == "rail":
        return (kind, s.get("rail", ""))
    return (kind, s.get("node", ""), s.get("port", ""), s.get("leaf", ""), s.get("rail", ""))


def describe_key(key: tuple) -> str:
    kind, *names = key
    return f"{kind} " + "/".join(n for n in names if n)


def judge(expected: dict[str, tuple], details: list[dict]) -> tuple[dict[str, bool], list[str]]:
    """Each planted fault (label -> suspect key): named or not; and the
    suspects that name no planted fault (as text, with their evidence)."""
    keys = [suspect_key(s) for s in details]
    named = {label: key in keys for label, key in expected.items()}
    wanted = set(expected.values())
    false = [describe_key(k) + (f" ({s['evidence']})" if s.get("evidence") else "")
             for k, s in zip(keys, details, strict=True) if k not in wanted]
    return named, false


@dataclasses.dataclass
class Figure:
    name: str
    value: str
    goal: str = ""
    missed: bool = False


def span(nodes: list[str]) -> str:
    """A group of a ring by its ends when long ("n4..n19 (16)"), else every
    node."""
    if len(nodes) > 3:
        return f"{nodes[0]}..{nodes[-1]} ({len(nodes)})"
    return ",".join(nodes)


def mib(n: float) -> str:
    return f"{n / (1 << 20):.1f} MiB"


def at_most(name: str, value: float | None, goal: float, unit: str, fmt: str = ".1f") -> Figure:
    """A figure with its goal: missed when over it (or never had)."""
    if value is None:
        return Figure(name, "never", f"< {goal:g} {unit}", True)
    return Figure(name, f"{value:{fmt}} {unit}", f"< {goal:g} {unit}", value >= goal)


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


def memory_summary(values_kib: list[int]) -> str:
    """mean and max of /proc figures in kB, as MiB."""
    if not values_kib:
        return "none"
    mean = sum(values_kib) / len(values_kib) / 1024
    return f"mean {mean:.1f} MiB, max {max(values_kib) / 1024:.1f} MiB"


def proc_status(pid: int) -> dict[str, int]:
    """The kB fields of /proc/PID/status (VmRSS, VmHWM, RssAnon, ...)."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                parts = rest.split()
                if len(parts) == 2 and parts[1] == "kB":
                    out[key] = int(parts[0])
    except OSError:
        pass
    return out
