#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A simulated multi-node RoCE scale-out cluster for the diagnostics tests.

A cluster NAME with N nodes and R rails is made of:

* network namespaces ``NAME-n<i>`` (node i, where its rocenetd runs) and
  ``NAME-s<r>`` (the leaf switch of rail r);
* per node and rail a veth pair ``so<r>`` (in the node) -- ``swp<i+1>`` (in
  the switch of rail r); the node ends start down with no carrier, as a
  Gaudi registers its netdevs, and the daemons bring them up;
* rail r is the network ``10.<201+r>.0.0/16``: switch port ``swp<i+1>``
  owns ``10.<201+r>.<i+1>.2/30`` and announces it over LLDP as the Port
  Description ``no-alert 10.<201+r>.<i+1>.2/30`` (the real lldpd, run by
  ``leaves.Leaf`` as in fabric.py, without a management port: the chassis
  ID comes from the switch ports), so node i's port r takes
  ``10.<201+r>.<i+1>.1/30`` and routes the rail's /16 via the switch; the
  switch forwards between its /30s (ip_forward), so port r of every node
  reaches port r of every other node through its rail's switch, and no
  other rail. Nodes 250 and on (up to MAX_NODES) have their /30s packed in
  the rest of those /24s, 63 a /24 after the first node's: node 250+j on
  ``10.<201+r>.<1+j//63>.<4(1+j%63)>/30`` (``node_network``);
* an empty sysfs tree per node (the daemons select ports by name, ``so*``);
* ``/tmp/rocenet-sim/NAME/cluster.json`` describing it.

With ``nodes_per_leaf`` K > 0 each rail is a two-tier fabric instead: L =
ceil(N/K) leaf switches ``NAME-s<r>l<j>``, each with its own lldpd, System
Name ``leaf-NAME-r<r>-l<j>`` and chassis; node i is cabled to leaf i // K,
its port on the leaf is ``swp<i%K+1>`` (Port ID ``Ethernet1/<i%K+1>``), its
addresses are those above. A spine ``NAME-p<r>`` per rail is joined to each
leaf j by a veth (``dn<j>`` in the spine, ``up0`` in the leaf) on
``10.<201+r>.<251+j//64>.<4(j%64)>/30`` (spine .1, leaf .2: out of every
node's /30), routes each node's /30 to its leaf, and the leaves route
everything else to the spine.

Faults, besides ``link`` (the switch end of one cable down): ``leaf`` (a
whole leaf switch loses power: its node ports and its uplink go down),
``uplink`` (a leaf's uplink down, its node ports up), ``blackhole`` (a
dead port: carrier, LLDP, ARP and the node's address stay, but no IP packet
from or to the node's port gets through the switch), ``slow`` (both
directions of a port shaped to a rate by tc's token bucket, as a port that
trained down or a throttled node would run), ``loss`` (a gray port: the
switch drops a share of the IP packets from and to it at random, iptables'
statistic match, as a cable with bit errors would; this kernel has no
netem) and ``mtu`` / ``uplink-mtu`` (the switch end of a cable, or both
ends of a leaf's uplink, with an MTU smaller than the ports': a frame
larger than a veth's MTU is dropped where it arrives, and a router sends
"fragmentation needed" for a Don't Fragment packet it cannot forward).

Everything lives in namespaces of its own; ``down()`` stops every process
in them (lldpd, daemons) and deletes them, also after a failure. One thing
is the host's: the kernel keeps one ARP table for all namespaces, whose
limits (net.ipv4.neigh.default.gc_thresh2/3, 512/1024) a cluster of more
than about 100 nodes x 2 rails would pass; ``up`` raises them as far as the
cluster needs and leaves them raised.

Usable as a module (``Cluster.up(...)`` as a context manager) and from the
command line (``cluster.py up NAME --nodes 3 --rails 2 [--nodes-per-leaf
K]``, ``down NAME``, ``link NAME NODE RAIL up|down``, ``leaf NAME RAIL LEAF
up|down``, ``uplink NAME RAIL LEAF up|down``, ``blackhole NAME NODE RAIL
on|off``, ``slow NAME NODE RAIL MBIT``, ``loss NAME NODE RAIL PERCENT``,
``mtu NAME NODE RAIL BYTES``, ``uplink-mtu NAME RAIL LEAF BYTES``; 0 takes
a rate, a loss or an MTU off). Needs root, iproute2 (with tc), lldpd, and
iptables for ``loss``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cluster_faults import ClusterFaults, empty_faults, uplink_addresses  # noqa: E402
from simutil import (  # noqa: E402
    FabricError,
    UsageError,
    check_name,
    ip_batch,
    netns_list,
    pid_alive,
    run,
    terminate,
)

import fabric  # noqa: E402
from leaves import Leaf  # noqa: E402

# Node i < 250 has the third octet i+1 (and the first /30 of that /24); the
# nodes after it are packed in the rest of those /24s; 251..254 are the
# uplinks'. rocenet-diagd's reach takes 1024 nodes at most.
READABLE_NODES = 250
PACKED_PER_24 = 63
MAX_NODES = 1024
MAX_RAILS = 8
SWITCH_SYSCTLS = ("net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0",
                  "net.ipv4.conf.default.rp_filter=0")


def rail_network(rail: int) -> str:
    return f"10.{201 + rail}.0.0/16"


def _subnet(node: int) -> tuple[int, int]:
    """(third octet, first address's last octet) of node's /30 on any rail:
    the readable 10.R.<node+1>.0/30 for the first 250 nodes, then the rest
    of those /24s, packed."""
    if node < READABLE_NODES:
        return node + 1, 0
    j = node - READABLE_NODES
    return 1 + j // PACKED_PER_24, 4 * (1 + j % PACKED_PER_24)


def switch_address(node: int, rail: int) -> str:
    third, base = _subnet(node)
    return f"10.{201 + rail}.{third}.{base + 2}"


def node_address(node: int, rail: int) -> str:
    third, base = _subnet(node)
    return f"10.{201 + rail}.{third}.{base + 1}"


def node_network(node: int, rail: int) -> str:
    """Node's port on rail and its switch end: a /30."""
    third, base = _subnet(node)
    return f"10.{201 + rail}.{third}.{base}/30"


def neighbor_entries(nodes: int, rails: int, nodes_per_leaf: int) -> int:
    """The ARP entries a cluster makes: each port and its switch end learn
    each other, each leaf and its spine too."""
    uplinks = leaves_per_rail(nodes, nodes_per_leaf) * rails if nodes_per_leaf else 0
    return 2 * nodes * rails + 2 * uplinks


def raise_neighbor_limits(entries: int) -> dict[str, tuple[int, int]]:
    """The kernel's ARP table is one for the whole host: every namespace's
    entries count against gc_thresh2 (above it, entries older than 5 s are
    reclaimed) and gc_thresh3 (the hard cap: no new entry, so no ARP reply
    is heard: "neighbor table overflow"), 512 and 1024 by default. Raises
    them, in the host's namespace, to what `entries` more need; never
    lowers them (another cluster may need them). Returns {sysctl: (old,
    new)} of what it raised."""
    raised = {}
    for name, margin in (("gc_thresh2", 256), ("gc_thresh3", 512)):
        path = f"/proc/sys/net/ipv4/neigh/default/{name}"
        with open(path) as f:
            old = int(f.read())
        if old < entries + margin:
            with open(path, "w") as f:
                f.write(f"{entries + margin}\n")
            raised[f"net.ipv4.neigh.default.{name}"] = (old, entries + margin)
    return raised


def leaves_per_rail(nodes: int, nodes_per_leaf: int) -> int:
    return 1 if nodes_per_leaf <= 0 else -(-nodes // nodes_per_leaf)


class Cluster(ClusterFaults):
    """N node namespaces and, per rail, one switch namespace, or leaves and
    a spine (nodes_per_leaf > 0)."""

    def __init__(self, state: dict):
        # cluster.json holds the description too; keep what defines the cluster
        self.state = {
            "name": state["name"], "nodes": state["nodes"], "rails": state["rails"],
            "state_dir": state["state_dir"], "tx_interval": state.get("tx_interval", 1),
            "nodes_per_leaf": state.get("nodes_per_leaf", 0),
            "faults": {**empty_faults(), **(state.get("faults") or {})},
        }
        self._lldpd: list[subprocess.Popen] = []
        # the leaf switches as leaves.Leaf sees them (not in cluster.json):
        # leaf j of rail r is entry r * leaves_per_rail + j
        self._switches = self._switch_state()
        self.leaves = [Leaf(self._switches, k) for k in range(len(self._switches["leaves"]))]

    # ---- names

    @property
    def name(self) -> str:
        return self.state["name"]

    @property
    def nodes(self) -> int:
        return self.state["nodes"]

    @property
    def rails(self) -> int:
        return self.state["rails"]

    @property
    def nodes_per_leaf(self) -> int:
        return self.state["nodes_per_leaf"]

    @property
    def leaves_per_rail(self) -> int:
        return leaves_per_rail(self.nodes, self.nodes_per_leaf)

    @property
    def state_dir(self) -> str:
        return self.state["state_dir"]

    def node_netns(self, node: int) -> str:
        return f"{self.name}-n{node}"

    def switch_netns(self, rail: int) -> str:
        """The one switch of a rail (without leaves)."""
        if self.nodes_per_leaf:
            raise UsageError("a cluster with leaves has no single switch a rail: leaf_netns(rail, leaf)")
        return f"{self.name}-s{rail}"

    def leaf_of(self, node: int) -> int:
        """The leaf (index within its rail) node is cabled to."""
        return node // self.nodes_per_leaf if self.nodes_per_leaf else 0

    def leaf_netns(self, rail: int, leaf: int) -> str:
        if not self.nodes_per_leaf:
            return self.switch_netns(rail)
        return f"{self.name}-s{rail}l{leaf}"

    def leaf_name(self, rail: int, leaf: int) -> str:
        """The leaf's LLDP System Name (lldpd's hostname)."""
        if not self.nodes_per_leaf:
            return f"leaf-{self.name}-r{rail}"
        return f"leaf-{self.name}-r{rail}-l{leaf}"

    def leaf_nodes(self, leaf: int) -> list[int]:
        """The nodes cabled to leaf (the same on every rail)."""
        return [i for i in range(self.nodes) if self.leaf_of(i) == leaf]

    def spine_netns(self, rail: int) -> str:
        if not self.nodes_per_leaf:
            raise UsageError("a cluster without leaves has no spine")
        return f"{self.name}-p{rail}"

    def switch_ifname(self, node: int) -> str:
        """The switch end of node's cable (on every rail)."""
        return f"swp{(node % self.nodes_per_leaf if self.nodes_per_leaf else node) + 1}"

    def sysfs_root(self, node: int) -> str:
        return os.path.join(self.state_dir, f"sysfs-n{node}")

    def switch_namespaces(self) -> list[str]:
        return [self.leaf_netns(r, j) for r in range(self.rails) for j in range(self.leaves_per_rail)]

    def spine_namespaces(self) -> list[str]:
        return [self.spine_netns(r) for r in range(self.rails)] if self.nodes_per_leaf else []

    def namespaces(self) -> list[str]:
        return ([self.node_netns(i) for i in range(self.nodes)] + self.switch_namespaces()
                + self.spine_namespaces())

    def _leaf_index(self, rail: int, leaf: int) -> int:
        return rail * self.leaves_per_rail + leaf

    def _switch_state(self) -> dict:
        """leaves.Leaf's view of the switches: without leaves, leaf r is rail
        r's switch (no management port), its port swp<i+1> cabled to node i;
        with them, leaf r*L+j is leaf j of rail r."""
        leaves = []
        for r in range(self.rails):
            for j in range(self.leaves_per_rail):
                k = self._leaf_index(r, j)
                base = os.path.join(self.state_dir, f"lldpd-s{r}" + (f"l{j}" if self.nodes_per_leaf else ""))
                descr = f"rocenet simulated rail {r} switch" + (f" leaf {j}" if self.nodes_per_leaf else "")
                leaves.append({
                    "index": k, "netns": self.leaf_netns(r, j), "hostname": self.leaf_name(r, j),
                    "mgmt_ifname": None, "description": descr,
                    "lldpd": {"pid": None, "starttime": None, "running": False, "socket": base + ".sock",
                              "pidfile": base + ".pid", "config": base + ".conf", "log": base + ".log"},
                })
        ports = []
        for r in range(self.rails):
            for i in range(self.nodes):
                sw = self.switch_ifname(i)
                ports.append({"node": i, "leaf": self._leaf_index(r, self.leaf_of(i)), "present": True,
                              "link": "down" if [i, r] in self.state["faults"]["links_down"] else "up",
                              "switch_ifname": sw, "switch_port_id": f"Ethernet1/{sw[3:]}",
                              "description": f"no-alert {switch_address(i, r)}/30"})
        return {"name": self.name, "tx_interval": self.state["tx_interval"], "leaves": leaves,
                "ports": ports}

    def _switch_port(self, node: int, rail: int) -> dict:
        k = self._leaf_index(rail, self.leaf_of(node))
        return next(p for p in self._switches["ports"] if p["leaf"] == k and p["node"] == node)

    def node_exec(self, node: int, argv: list[str], **kw) -> subprocess.CompletedProcess:
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
        return subprocess.run(["ip", "netns", "exec", self.node_netns(node), *argv], **kw)

    # ---- life cycle

    @classmethod
    def up(cls, name: str | None = None, nodes: int = 3, rails: int = 2,
           tx_interval: int = 1, nodes_per_leaf: int = 0) -> Cluster:
        if os.geteuid() != 0:
            raise FabricError("must run as root (network namespaces, veths, lldpd)")
        name = name or fabric.unique_name("cl")
        check_name(name)
        if not 2 <= nodes <= MAX_NODES or not 1 <= rails <= MAX_RAILS:
            raise UsageError(f"nodes must be 2..{MAX_NODES}, rails 1..{MAX_RAILS}")
        if nodes_per_leaf < 0 or nodes_per_leaf > nodes:
            raise UsageError(f"nodes_per_leaf must be 0 (one switch a rail) or 1..{nodes}")
        taken = [ns for ns in netns_list() if ns.startswith(name + "-")]
        if taken:
            raise FabricError(f"cluster {name} already exists (netns {', '.join(taken)})")
        sd = fabric.default_state_dir(name)
        if os.path.exists(sd):
            raise FabricError(f"state dir {sd} exists; run 'cluster.py down {name}' first")
        os.makedirs(sd, mode=0o755)
        os.chmod(sd, 0o755)  # lldpd's unprivileged half must reach its socket
        cl = cls({"name": name, "nodes": nodes, "rails": rails, "state_dir": sd,
                  "tx_interval": tx_interval, "nodes_per_leaf": nodes_per_leaf})
        raised = raise_neighbor_limits(neighbor_entries(nodes, rails, nodes_per_leaf))
        if raised:
            print("cluster: the host's ARP table is shared by every namespace; raised (and left) "
                  + ", ".join(f"{k} {a} -> {b}" for k, (a, b) in raised.items()), file=sys.stderr)
        try:
            cl._build()
        except BaseException:
            cl.down()
            raise
        return cl

    def _build(self) -> None:
        # one ip process for the namespaces and one for the cables: a
        # 128-node cluster is a few hundred of each
        ip_batch(f"netns add {ns}" for ns in self.namespaces())
        cmds = []
        for i in range(self.nodes):
            os.makedirs(self.sysfs_root(i), exist_ok=True)
            for r in range(self.rails):
                cmds.append(f"link add so{r} netns {self.node_netns(i)} type veth "
                            f"peer name {self.switch_ifname(i)} "
                            f"netns {self.leaf_netns(r, self.leaf_of(i))}")
        if self.nodes_per_leaf:
            for r in range(self.rails):
                for j in range(self.leaves_per_rail):
                    cmds.append(f"link add up0 netns {self.leaf_netns(r, j)} type veth "
                                f"peer name dn{j} netns {self.spine_netns(r)}")
        ip_batch(cmds)
        for i in range(self.nodes):
            # the node ports stay down, as a Gaudi registers them: the daemons bring them up
            ip_batch(["link set lo up"], self.node_netns(i))
        for r in range(self.rails):
            for j in range(self.leaves_per_rail):
                sw = ["link set lo up"]
                for i in self.leaf_nodes(j):
                    sw.append(f"link set {self.switch_ifname(i)} up")
                    sw.append(f"address add {switch_address(i, r)}/30 dev {self.switch_ifname(i)}")
                if self.nodes_per_leaf:
                    spine, leaf = uplink_addresses(r, j)
                    sw += ["link set up0 up", f"address add {leaf}/30 dev up0",
                           f"route add default via {spine} dev up0"]
                ip_batch(sw, self.leaf_netns(r, j))
            if self.nodes_per_leaf:
                sp = ["link set lo up"]
                for j in range(self.leaves_per_rail):
                    spine, leaf = uplink_addresses(r, j)
                    sp += [f"link set dn{j} up", f"address add {spine}/30 dev dn{j}"]
                    sp += [f"route add {node_network(i, r)} via {leaf} dev dn{j}"
                           for i in self.leaf_nodes(j)]
                ip_batch(sp, self.spine_netns(r))
        for ns in self.switch_namespaces() + self.spine_namespaces():
            run(["ip", "netns", "exec", ns, "sysctl", "-qw", *SWITCH_SYSCTLS])
        self._save()
        for leaf in self.leaves:
            leaf.write_conf()
            self._lldpd.append(leaf.start())
        for leaf in self.leaves:
            leaf.wait_ready()

    def _save(self) -> None:
        with open(os.path.join(self.state_dir, "cluster.json"), "w") as f:
            json.dump(self.describe(), f, indent=2)

    def describe(self) -> dict:
        out = {
            **self.state,
            "node_netns": [self.node_netns(i) for i in range(self.nodes)],
            "switch_netns": self.switch_namespaces(),
            "ports": [{"node": i, "rail": r, "ifname": f"so{r}", "switch_ifname": self.switch_ifname(i),
                       "switch_netns": self.leaf_netns(r, self.leaf_of(i)),
                       "leaf": self.leaf_name(r, self.leaf_of(i)), "leaf_index": self.leaf_of(i),
                       "address": node_address(i, r), "gateway": switch_address(i, r),
                       "rail_network": rail_network(r)}
                      for i in range(self.nodes) for r in range(self.rails)],
        }
        if self.nodes_per_leaf:
            out["leaves_per_rail"] = self.leaves_per_rail
            out["spine_netns"] = self.spine_namespaces()
            out["leaves"] = [{"rail": r, "leaf": j, "name": self.leaf_name(r, j),
                              "netns": self.leaf_netns(r, j), "nodes": self.leaf_nodes(j),
                              "uplink": {"spine_ifname": f"dn{j}", "leaf_ifname": "up0",
                                         "spine_address": uplink_addresses(r, j)[0],
                                         "leaf_address": uplink_addresses(r, j)[1]}}
                             for r in range(self.rails) for j in range(self.leaves_per_rail)]
        return out

    def processes(self) -> dict[str, list[int]]:
        """Live processes in each of the cluster's namespaces."""
        return _pids_in_namespaces(self.namespaces())

    def down(self) -> None:
        """Stops every process in the cluster's namespaces, deletes them and the
        state dir. Safe to call twice, and after a failed up."""
        try:
            _teardown(self.name)
        finally:
            for proc in self._lldpd:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=5)

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc) -> None:
        self.down()


def _pids_in_namespaces(names: list[str]) -> dict[str, list[int]]:
    """pids_in_netns for many namespaces, in one pass over /proc."""
    refs = {}
    for ns in names:
        with contextlib.suppress(FileNotFoundError):
            st = os.stat(os.path.join("/run/netns", ns))
            refs[(st.st_dev, st.st_ino)] = ns
    out: dict[str, list[int]] = {}
    me = os.getpid()
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == me:
            continue
        try:
            st = os.stat(f"/proc/{d}/ns/net")
        except OSError:
            continue
        ns = refs.get((st.st_dev, st.st_ino))
        if ns is not None and pid_alive(int(d)):
            out.setdefault(ns, []).append(int(d))
    return out


def _teardown(name: str) -> None:
    check_name(name)
    ours = [ns for ns in netns_list() if ns.startswith(name + "-")]
    # all at once: a 128-node cluster has hundreds of namespaces and daemons
    pids = [pid for ns_pids in _pids_in_namespaces(ours).values() for pid in ns_pids]
    if pids:
        terminate(pids, 5)
    ip_batch((f"netns delete {ns}" for ns in ours), force=True)
    left = [ns for ns in netns_list() if ns.startswith(name + "-")]
    sd = fabric.default_state_dir(name)
    if os.path.isdir(sd):
        shutil.rmtree(sd, ignore_errors=True)
    if left:
        raise FabricError(f"could not delete netns {', '.join(left)}")


def down(name: str) -> None:
    """Tears the cluster NAME down (what a run killed midway left); no
    error if it is already gone."""
    _teardown(name)


def load(name: str) -> Cluster:
    """The cluster NAME that 'cluster.py up' made (its cluster.json)."""
    check_name(name)
    path = os.path.join(fabric.default_state_dir(name), "cluster.json")
    try:
        with open(path) as f:
            return Cluster(json.load(f))
    except FileNotFoundError:
        raise FabricError(f"no cluster {name} ({path} missing)") from None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="cluster.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    u = sub.add_parser("up", help="create a cluster and print its description")
    u.add_argument("name")
    u.add_argument("--nodes", type=int, default=3)
    u.add_argument("--rails", type=int, default=2)
    u.add_argument("--nodes-per-leaf", type=int, default=0,
                   help="K > 0: ceil(nodes/K) leaves a rail under a spine (default 0: one switch a rail)")
    d = sub.add_parser("down", help="stop everything in the cluster and delete it")
    d.add_argument("name")
    lk = sub.add_parser("link", help="set the switch end of a node's port up or down")
    lk.add_argument("name")
    lk.add_argument("node", type=int)
    lk.add_argument("rail", type=int)
    lk.add_argument("state", choices=["up", "down"])
    lf = sub.add_parser("leaf", help="a whole leaf switch down (lost power) or back up")
    lf.add_argument("name")
    lf.add_argument("rail", type=int)
    lf.add_argument("leaf", type=int)
    lf.add_argument("state", choices=["up", "down"])
    bh = sub.add_parser("blackhole", help="a dead port: carrier and address, but no packet through")
    bh.add_argument("name")
    bh.add_argument("node", type=int)
    bh.add_argument("rail", type=int)
    bh.add_argument("state", choices=["on", "off"])
    sl = sub.add_parser("slow", help="shape both directions of a node's port to a rate (0: off)")
    sl.add_argument("name")
    sl.add_argument("node", type=int)
    sl.add_argument("rail", type=int)
    sl.add_argument("mbit", type=int, help="Mbit/s; 0 takes the shaping off")
    ul = sub.add_parser("uplink", help="a leaf's uplink to the spine down or back up")
    ul.add_argument("name")
    ul.add_argument("rail", type=int)
    ul.add_argument("leaf", type=int)
    ul.add_argument("state", choices=["up", "down"])
    ls = sub.add_parser("loss", help="the switch drops a share of a port's packets (0: off)")
    ls.add_argument("name")
    ls.add_argument("node", type=int)
    ls.add_argument("rail", type=int)
    ls.add_argument("percent", type=float, help="of the packets from and to the port; 0 off")
    mt = sub.add_parser("mtu", help="the switch end of a port's cable with a smaller MTU (0: restore)")
    mt.add_argument("name")
    mt.add_argument("node", type=int)
    mt.add_argument("rail", type=int)
    mt.add_argument("mtu", type=int)
    um = sub.add_parser("uplink-mtu", help="a leaf's uplink with a smaller MTU (0: restore)")
    um.add_argument("name")
    um.add_argument("rail", type=int)
    um.add_argument("leaf", type=int)
    um.add_argument("mtu", type=int)
    args = p.parse_args(argv)
    try:
        if args.cmd == "up":
            cl = Cluster.up(args.name, args.nodes, args.rails, nodes_per_leaf=args.nodes_per_leaf)
            print(json.dumps(cl.describe(), indent=2))
        elif args.cmd == "down":
            _teardown(args.name)
        elif args.cmd == "link":
            load(args.name).link(args.node, args.rail, args.state)
        elif args.cmd == "leaf":
            load(args.name).leaf(args.rail, args.leaf, args.state)
        elif args.cmd == "blackhole":
            load(args.name).blackhole(args.node, args.rail, args.state)
        elif args.cmd == "slow":
            load(args.name).slow(args.node, args.rail, args.mbit)
        elif args.cmd == "uplink":
            load(args.name).uplink(args.rail, args.leaf, args.state)
        elif args.cmd == "loss":
            load(args.name).loss(args.node, args.rail, args.percent)
        elif args.cmd == "mtu":
            load(args.name).mtu(args.node, args.rail, args.mtu)
        elif args.cmd == "uplink-mtu":
            load(args.name).uplink_mtu(args.rail, args.leaf, args.mtu)
    except UsageError as e:
        print(f"cluster: {e}", file=sys.stderr)
        return 2
    except FabricError as e:
        print(f"cluster: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
