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
  other rail;
* an empty sysfs tree per node (the daemons select ports by name, ``so*``);
* ``/tmp/rocenet-sim/NAME/cluster.json`` describing it.

Everything lives in namespaces of its own; ``down()`` stops every process
in them (lldpd, daemons) and deletes them, also after a failure.

Usable as a module (``Cluster.up(...)`` as a context manager) and from the
command line (``cluster.py up NAME --nodes 3 --rails 2``, ``down NAME``,
``link NAME NODE RAIL up|down``). Needs root, iproute2 and lldpd.
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

from simutil import FabricError, UsageError, check_name, ip_batch, netns_list, pids_in_netns, run, terminate  # noqa: E402

import fabric  # noqa: E402
from leaves import Leaf  # noqa: E402

MAX_NODES = 32
MAX_RAILS = 8


def rail_network(rail: int) -> str:
    return f"10.{201 + rail}.0.0/16"


def switch_address(node: int, rail: int) -> str:
    return f"10.{201 + rail}.{node + 1}.2"


def node_address(node: int, rail: int) -> str:
    return f"10.{201 + rail}.{node + 1}.1"


class Cluster:
    """N node namespaces and one switch namespace per rail."""

    def __init__(self, state: dict):
        self.state = state
        self._lldpd: list[subprocess.Popen] = []
        # the rail switches as leaves.Leaf sees them (not in cluster.json)
        self._switches = self._switch_state()
        self.leaves = [Leaf(self._switches, r) for r in range(self.rails)]

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
    def state_dir(self) -> str:
        return self.state["state_dir"]

    def node_netns(self, node: int) -> str:
        return f"{self.name}-n{node}"

    def switch_netns(self, rail: int) -> str:
        return f"{self.name}-s{rail}"

    def sysfs_root(self, node: int) -> str:
        return os.path.join(self.state_dir, f"sysfs-n{node}")

    def namespaces(self) -> list[str]:
        return [self.node_netns(i) for i in range(self.nodes)] + [
            self.switch_netns(r) for r in range(self.rails)]

    def _switch_state(self) -> dict:
        """leaves.Leaf's view of the rail switches: leaf r is rail r's switch
        (no management port), its port swp<i+1> is cabled to node i."""
        leaves = []
        for r in range(self.rails):
            base = os.path.join(self.state_dir, f"lldpd-s{r}")
            leaves.append({
                "index": r, "netns": self.switch_netns(r), "hostname": f"leaf-{self.name}-r{r}",
                "mgmt_ifname": None, "description": f"rocenet simulated rail {r} switch",
                "lldpd": {"pid": None, "starttime": None, "running": False, "socket": base + ".sock",
                          "pidfile": base + ".pid", "config": base + ".conf", "log": base + ".log"},
            })
        ports = [{"node": i, "leaf": r, "present": True, "link": "up", "switch_ifname": f"swp{i + 1}",
                  "switch_port_id": f"Ethernet1/{i + 1}",
                  "description": f"no-alert {switch_address(i, r)}/30"}
                 for r in range(self.rails) for i in range(self.nodes)]
        return {"name": self.name, "tx_interval": self.state["tx_interval"], "leaves": leaves,
                "ports": ports}

    def _switch_port(self, node: int, rail: int) -> dict:
        return next(p for p in self._switches["ports"] if p["leaf"] == rail and p["node"] == node)

    def node_exec(self, node: int, argv: list[str], **kw) -> subprocess.CompletedProcess:
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
        return subprocess.run(["ip", "netns", "exec", self.node_netns(node), *argv], **kw)

    # ---- life cycle

    @classmethod
    def up(cls, name: str | None = None, nodes: int = 3, rails: int = 2,
           tx_interval: int = 1) -> Cluster:
        if os.geteuid() != 0:
            raise FabricError("must run as root (network namespaces, veths, lldpd)")
        name = name or fabric.unique_name("cl")
        check_name(name)
        if not 2 <= nodes <= MAX_NODES or not 1 <= rails <= MAX_RAILS:
            raise UsageError(f"nodes must be 2..{MAX_NODES}, rails 1..{MAX_RAILS}")
        taken = [ns for ns in netns_list() if ns.startswith(name + "-")]
        if taken:
            raise FabricError(f"cluster {name} already exists (netns {', '.join(taken)})")
        sd = fabric.default_state_dir(name)
        if os.path.exists(sd):
            raise FabricError(f"state dir {sd} exists; run 'cluster.py down {name}' first")
        os.makedirs(sd, mode=0o755)
        os.chmod(sd, 0o755)  # lldpd's unprivileged half must reach its socket
        cl = cls({"name": name, "nodes": nodes, "rails": rails, "state_dir": sd,
                  "tx_interval": tx_interval})
        try:
            cl._build()
        except BaseException:
            cl.down()
            raise
        return cl

    def _build(self) -> None:
        for ns in self.namespaces():
            run(["ip", "netns", "add", ns])
        cmds = []
        for i in range(self.nodes):
            os.makedirs(self.sysfs_root(i), exist_ok=True)
            for r in range(self.rails):
                cmds.append(f"link add so{r} netns {self.node_netns(i)} type veth "
                            f"peer name swp{i + 1} netns {self.switch_netns(r)}")
        ip_batch(cmds)
        for i in range(self.nodes):
            # the node ports stay down, as a Gaudi registers them: the daemons bring them up
            ip_batch(["link set lo up"], self.node_netns(i))
        for r in range(self.rails):
            sw = ["link set lo up"]
            for i in range(self.nodes):
                sw.append(f"link set swp{i + 1} up")
                sw.append(f"address add {switch_address(i, r)}/30 dev swp{i + 1}")
            ip_batch(sw, self.switch_netns(r))
            for key in ("net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0",
                        "net.ipv4.conf.default.rp_filter=0"):
                run(["ip", "netns", "exec", self.switch_netns(r), "sysctl", "-qw", key])
        with open(os.path.join(self.state_dir, "cluster.json"), "w") as f:
            json.dump(self.describe(), f, indent=2)
        for leaf in self.leaves:
            leaf.write_conf()
            self._lldpd.append(leaf.start())
        for leaf in self.leaves:
            leaf.wait_ready()

    def describe(self) -> dict:
        return {
            **self.state,
            "node_netns": [self.node_netns(i) for i in range(self.nodes)],
            "switch_netns": [self.switch_netns(r) for r in range(self.rails)],
            "ports": [{"node": i, "rail": r, "ifname": f"so{r}", "switch_ifname": f"swp{i + 1}",
                       "address": node_address(i, r), "gateway": switch_address(i, r),
                       "rail_network": rail_network(r)}
                      for i in range(self.nodes) for r in range(self.rails)],
        }

    def link(self, node: int, rail: int, state: str) -> None:
        """Set the switch end of node's port on rail up or down."""
        if state not in ("up", "down"):
            raise UsageError("state must be up or down")
        run(["ip", "-n", self.switch_netns(rail), "link", "set", f"swp{node + 1}", state])
        self._switch_port(node, rail)["link"] = state

    def readdress(self, node: int, rail: int, switch_ip: str) -> None:
        """Give the switch end of node's port on rail the address switch_ip/30
        and announce it in the Port Description, as a re-cabled or re-planned
        fabric would; the node's daemon follows from LLDP."""
        ns, swp = self.switch_netns(rail), f"swp{node + 1}"
        ip_batch([f"address flush dev {swp}", f"address add {switch_ip}/30 dev {swp}"], ns)
        p = self._switch_port(node, rail)
        p["description"] = f"no-alert {switch_ip}/30"
        self.leaves[rail].write_conf()
        self.leaves[rail].configure_port(p)

    def processes(self) -> dict[str, list[int]]:
        """Live processes in each of the cluster's namespaces."""
        return {ns: pids_in_netns(ns) for ns in self.namespaces() if pids_in_netns(ns)}

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


def _teardown(name: str) -> None:
    check_name(name)
    ours = [ns for ns in netns_list() if ns.startswith(name + "-")]
    for ns in ours:
        pids = pids_in_netns(ns)
        if pids:
            terminate(pids, 5)
    for ns in ours:
        run(["ip", "netns", "delete", ns], check=False)
    left = [ns for ns in netns_list() if ns.startswith(name + "-")]
    sd = fabric.default_state_dir(name)
    if os.path.isdir(sd):
        shutil.rmtree(sd, ignore_errors=True)
    if left:
        raise FabricError(f"could not delete netns {', '.join(left)}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="cluster.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    u = sub.add_parser("up", help="create a cluster and print its description")
    u.add_argument("name")
    u.add_argument("--nodes", type=int, default=3)
    u.add_argument("--rails", type=int, default=2)
    d = sub.add_parser("down", help="stop everything in the cluster and delete it")
    d.add_argument("name")
    lk = sub.add_parser("link", help="set the switch end of a node's port up or down")
    lk.add_argument("name")
    lk.add_argument("node", type=int)
    lk.add_argument("rail", type=int)
    lk.add_argument("state", choices=["up", "down"])
    args = p.parse_args(argv)
    try:
        if args.cmd == "up":
            cl = Cluster.up(args.name, args.nodes, args.rails)
            print(json.dumps(cl.describe(), indent=2))
        elif args.cmd == "down":
            _teardown(args.name)
        elif args.cmd == "link":
            with open(os.path.join(fabric.default_state_dir(args.name), "cluster.json")) as f:
                Cluster(json.load(f)).link(args.node, args.rail, args.state)
    except UsageError as e:
        print(f"cluster: {e}", file=sys.stderr)
        return 2
    except FabricError as e:
        print(f"cluster: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
