# SPDX-License-Identifier: Apache-2.0
"""The reach benchmark's arithmetic (tests/triage/triage_bench.py), apart
from the processes so that it is tested on made-up results
(triage_figures_test.py): where the faults go, what the result must name,
the figures beside their goals."""

from __future__ import annotations

import dataclasses
import os

# The goals at 512 nodes x 2 rails on 2 cores (docs/development.md#the-reach-benchmark).
WALL_SECONDS = 60.0
COORDINATOR_MIB = 200.0


class BenchError(RuntimeError):
    """The run is broken: a figure could not be had."""


@dataclasses.dataclass(frozen=True)
class Faults:
    """Where the faults go, each of a kind the reach stage names. Nodes by
    index, leaves by index within their rail; `silent` is the node whose
    rocenet-diagd is stopped (not tested, never a suspect)."""

    cut_node: int        # a cut cable: rail 0, the switch end down
    lossy_node: int      # a port losing LOSS_PERCENT of its packets: rail 0
    dead_node: int       # a dead port (carrier, no packet): rail 1
    mtu_node: int        # the switch end of its cable at PORT_MTU: rail 1
    mtu_leaf: int        # a leaf's uplink at UPLINK_MTU: rail 0
    leaf: int            # a leaf down: rail 0
    uplink_leaf: int     # a leaf's uplink down: rail 1
    silent: int          # its rocenet-diagd stopped


# The gray faults' sizes: a share of a port's packets lost (each way, each
# packet on its own), and MTUs smaller than the ports' 1500.
LOSS_PERCENT = 10
PORT_MTU = 1400
UPLINK_MTU = 1280


def leaf_of(node: int, nodes_per_leaf: int) -> int:
    return node // nodes_per_leaf


def choose_faults(nodes: int, nodes_per_leaf: int, rails: int = 2) -> Faults:
    """Faults of every kind at once, each where it is named as itself and
    no node is cut off from node 0 (the coordinator, which reaches every
    node at its rail-0 address, else its rail-1 one) on both rails:

    * leaf 0 holds node 0 and the port faults, on four other nodes: a cut
      cable and a lossy port on rail 0, a dead port and a small-MTU link on
      rail 1 (each node keeps a clean rail in node 0's own leaf);
    * rail 0: leaf 1's uplink has a small MTU, the last leaf is down (its
      nodes are reached on rail 1, where their leaf is clean);
    * rail 1: leaf 2's uplink is down (its nodes are reached on rail 0);
    * the node whose rocenet-diagd is stopped is in leaf 1, where both its
      addresses refuse the coordinator at once, as a node whose daemon was
      OOM-killed does (on leaf 2 its rail-1 address would be unroutable,
      and every call to it would wait out its time bound).

    ValueError when the fabric is too small for them: 2 rails, 4 leaves a
    rail, 5 nodes a leaf."""
    if rails < 2:
        raise ValueError("the faults take both rails: at least 2")
    if nodes_per_leaf < 5:
        raise ValueError("leaf 0 holds node 0 and four faulty ports: at least 5 nodes a leaf")
    leaves = -(-nodes // nodes_per_leaf)
    if leaves < 4:
        raise ValueError(f"{nodes} nodes at {nodes_per_leaf} a leaf make {leaves} leaves a rail: "
                         "the faults need 4 (node 0's, a small-MTU uplink, an uplink down, a "
                         "leaf down)")
    half = nodes_per_leaf // 2
    cut, lossy, dead, mtu = half - 1, half, half + 1, half + 2
    silent = nodes_per_leaf + half
    assert max(cut, lossy, dead, mtu) < nodes_per_leaf and silent < nodes
    return Faults(cut_node=cut, lossy_node=lossy, dead_node=dead, mtu_node=mtu, mtu_leaf=1,
                  leaf=leaves - 1, uplink_leaf=2, silent=silent)


def phases(lines: list[tuple[float, str]], total: float) -> str:
    """Where a reach run's time went, from its progress lines (seconds
    since the start, text): asking the daemons for their ports until the
    plan is printed, the probes until the last node is done, and the rest
    (the counters read after, the verdict told)."""
    plan = next((t for t, line in lines if "plan " in line), None)
    done = [t for t, line in lines if line.endswith(" done") and "node " in line]
    if plan is None or not done:
        return f"{total:.1f} s in all (no progress lines to split it by)"
    return (f"the daemons' ports and the plan {plan:.1f} s, the probes {done[-1] - plan:.1f} s, "
            f"the rest {total - done[-1]:.1f} s")


def nodes_file(addresses: list[list[str]]) -> str:
    """rocectl diag reach --nodes-file: one node a line, its daemon's
    addresses (one a rail) joined by '+'."""
    lines = ["# rocectl diag reach --nodes-file: ADDR[+ADDR...] a node (tests/triage/triage_bench.py)"]
    lines += ["+".join(addrs) for addrs in addresses]
    return "\n".join(lines) + "\n"


def suspect_key(s: dict) -> tuple:
    """What identifies a suspect: its kind and the names that kind needs."""
    kind = s.get("kind", "")
    if kind in ("port", "port-mtu", "lossy-port"):
        return (kind, s.get("node", ""), s.get("port", ""))
    if kind == "node":
        return (kind, s.get("node", ""))
    if kind in ("leaf", "leaf-uplink", "leaf-mtu", "leaf-uplink-mtu"):
        return (kind, s.get("leaf", ""))
    if kind in ("rail", "rail-mtu"):
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


def judge_not_tested(silent: set[str], result: dict) -> tuple[bool, list[str]]:
    """Whether the node whose daemon was stopped is listed as not tested (by
    any of `silent`: its name, or the addresses it was given by, which is
    all a daemon that never answered leaves to name it by), and the nodes
    listed so that are not it (as "NODE: reason")."""
    entries = result.get("not_tested") or []
    listed = any(e.get("node") in silent for e in entries)
    others = [f"{e.get('node')}: {e.get('reason', '')}" for e in entries if e.get("node") not in silent]
    return listed, others


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


def mem_available() -> int:
    """The machine's MemAvailable (/proc/meminfo), in bytes; 0 if unread."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


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


def save(path: str, data: bytes) -> None:
    """Keeps a run's raw output under the benchmark's logs."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as out:
        out.write(data)
