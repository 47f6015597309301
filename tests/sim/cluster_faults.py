# SPDX-License-Identifier: Apache-2.0
"""The faults of a simulated cluster (cluster.py): what breaks, and how
each is planted in the switches' namespaces so that the nodes see what a
real fabric would show them.

``ClusterFaults`` is a part of ``cluster.Cluster``: its methods read the
cluster's names (``leaf_netns``, ``switch_ifname``, ...) and record every
fault in ``state["faults"]`` (cluster.json), so that ``cluster.py`` verbs
run one after the other see each other's faults.
"""

from __future__ import annotations

import ipaddress
import shutil

from simutil import FabricError, UsageError, ip_batch, run

# The preference of a dead port's ip rules in its switch (after the local
# table's rule 0: the switch still answers ARP and takes in what the node
# sends to the switch itself, but nothing it would send back or forward).
BLACKHOLE_PREF = 10
# A veth's MTU when nothing set it: what `mtu ... 0` restores.
DEFAULT_MTU = 1500


def empty_faults() -> dict:
    return {"links_down": [], "leaves_down": [], "uplinks_down": [], "blackholes": [], "slow": [],
            "loss": [], "mtu": [], "uplink_mtu": []}


def uplink_addresses(rail: int, leaf: int) -> tuple[str, str]:
    """(spine end, leaf end) of leaf's uplink on rail, a /30 out of every
    node's (third octets 251..254)."""
    third, base = 251 + leaf // 64, 4 * (leaf % 64)
    return f"10.{201 + rail}.{third}.{base + 1}", f"10.{201 + rail}.{third}.{base + 2}"


class ClusterFaults:
    """Faults planted in a cluster's switches; mixed into Cluster."""


    def _check_port(self, node: int, rail: int) -> None:
        if not 0 <= node < self.nodes or not 0 <= rail < self.rails:
            raise UsageError(f"no node {node} rail {rail} (nodes 0..{self.nodes - 1}, "
                             f"rails 0..{self.rails - 1})")

    def _leaf_down(self, rail: int, leaf: int) -> bool:
        return [rail, leaf] in self.state["faults"]["leaves_down"]

    def link(self, node: int, rail: int, state: str) -> None:
        """Set the switch end of node's port on rail up or down (while its
        leaf is down, the cable's state applies when the leaf is back)."""
        if state not in ("up", "down"):
            raise UsageError("state must be up or down")
        self._check_port(node, rail)
        if not self._leaf_down(rail, self.leaf_of(node)):
            run(["ip", "-n", self.leaf_netns(rail, self.leaf_of(node)), "link", "set",
                 self.switch_ifname(node), state])
        self._switch_port(node, rail)["link"] = state
        _toggle(self.state["faults"]["links_down"], [node, rail], state == "down")
        self._save()

    def leaf(self, rail: int, leaf: int, state: str) -> None:
        """A whole leaf switch loses power (down: every node port of it and
        its uplink down) and comes back (up: its cables and its uplink as
        they were, with its route to the spine). lldpd keeps running: with every
        port down it sends nothing, and it speaks again when they are up."""
        if state not in ("up", "down"):
            raise UsageError("state must be up or down")
        if not 0 <= rail < self.rails or not 0 <= leaf < self.leaves_per_rail:
            raise UsageError(f"no leaf {leaf} on rail {rail} ({self.leaves_per_rail} a rail)")
        cmds = []
        for i in self.leaf_nodes(leaf):
            up = state == "up" and self._switch_port(i, rail)["link"] == "up"
            cmds.append(f"link set {self.switch_ifname(i)} {'up' if up else 'down'}")
        if self.nodes_per_leaf and [rail, leaf] not in self.state["faults"]["uplinks_down"]:
            cmds.append(f"link set up0 {state}")
            if state == "up":  # the route went with the link
                cmds.append(f"route replace default via {uplink_addresses(rail, leaf)[0]} dev up0")
        ip_batch(cmds, self.leaf_netns(rail, leaf))
        _toggle(self.state["faults"]["leaves_down"], [rail, leaf], state == "down")
        self._save()

    def _check_leaf(self, rail: int, leaf: int) -> None:
        if not self.nodes_per_leaf:
            raise UsageError("a cluster without leaves has no uplinks")
        if not 0 <= rail < self.rails or not 0 <= leaf < self.leaves_per_rail:
            raise UsageError(f"no leaf {leaf} on rail {rail} ({self.leaves_per_rail} a rail)")

    def uplink(self, rail: int, leaf: int, state: str) -> None:
        """A leaf's uplink to the spine down (its node ports stay up: the
        leaf's nodes reach each other and nothing beyond) or back up."""
        if state not in ("up", "down"):
            raise UsageError("state must be up or down")
        self._check_leaf(rail, leaf)
        if self._leaf_down(rail, leaf):
            raise UsageError(f"leaf {leaf} of rail {rail} is down; bring it up first")
        cmds = [f"link set up0 {state}"]
        if state == "up":  # the route went with the link
            cmds.append(f"route replace default via {uplink_addresses(rail, leaf)[0]} dev up0")
        ip_batch(cmds, self.leaf_netns(rail, leaf))
        _toggle(self.state["faults"]["uplinks_down"], [rail, leaf], state == "down")
        self._save()

    def loss(self, node: int, rail: int, percent: float) -> None:
        """A gray port: the switch drops `percent` % of the IP packets from
        and to node's port on rail at random, each packet on its own (an
        echo's request and reply each run the risk), in its forwarding and
        its own traffic (iptables' statistic match in the leaf's
        namespace); 0 takes it off. Carrier, LLDP and ARP stay."""
        self._check_port(node, rail)
        if not 0 <= percent < 100:
            raise UsageError("the loss must be 0 (off) up to below 100 %")
        if shutil.which("iptables") is None:
            raise FabricError("loss needs iptables (Debian: iptables)")
        ns, swp = self.leaf_netns(rail, self.leaf_of(node)), self.switch_ifname(node)
        faults = self.state["faults"]["loss"]
        old = next((f[2] for f in faults if f[:2] == [node, rail]), 0)

        def rules(p: float) -> list[list[str]]:
            match = ["-m", "statistic", "--mode", "random", "--probability", f"{p / 100:.4f}",
                     "-j", "DROP"]
            return [["FORWARD", "-i", swp, *match], ["FORWARD", "-o", swp, *match],
                    ["INPUT", "-i", swp, *match], ["OUTPUT", "-o", swp, *match]]
        if old:
            for rule in rules(old):
                run(["ip", "netns", "exec", ns, "iptables", "-w", "-D", *rule])
        if percent:
            for rule in rules(percent):
                run(["ip", "netns", "exec", ns, "iptables", "-w", "-A", *rule])
        faults[:] = [f for f in faults if f[:2] != [node, rail]]
        if percent:
            faults.append([node, rail, percent])
        self._save()

    def mtu(self, node: int, rail: int, mtu: int) -> None:
        """The switch end of node's cable on rail with a smaller MTU than the
        port's: what the node sends larger is dropped where it arrives, and
        the leaf answers "fragmentation needed" to a larger Don't Fragment
        packet for the port. 0 restores DEFAULT_MTU."""
        self._check_port(node, rail)
        if mtu and not 576 <= mtu <= 9216:
            raise UsageError("the MTU must be 0 (restore) or 576..9216")
        run(["ip", "-n", self.leaf_netns(rail, self.leaf_of(node)), "link", "set",
             self.switch_ifname(node), "mtu", str(mtu or DEFAULT_MTU)])
        faults = self.state["faults"]["mtu"]
        faults[:] = [f for f in faults if f[:2] != [node, rail]]
        if mtu:
            faults.append([node, rail, mtu])
        self._save()

    def uplink_mtu(self, rail: int, leaf: int, mtu: int) -> None:
        """Both ends of a leaf's uplink with a smaller MTU than the ports':
        the leaf's ports reach each other at full size, and nothing beyond
        it. 0 restores DEFAULT_MTU."""
        self._check_leaf(rail, leaf)
        if mtu and not 576 <= mtu <= 9216:
            raise UsageError("the MTU must be 0 (restore) or 576..9216")
        value = str(mtu or DEFAULT_MTU)
        run(["ip", "-n", self.leaf_netns(rail, leaf), "link", "set", "up0", "mtu", value])
        run(["ip", "-n", self.spine_netns(rail), "link", "set", f"dn{leaf}", "mtu", value])
        faults = self.state["faults"]["uplink_mtu"]
        faults[:] = [f for f in faults if f[:2] != [rail, leaf]]
        if mtu:
            faults.append([rail, leaf, mtu])
        self._save()

    def blackhole(self, node: int, rail: int, state: str) -> None:
        """A dead port (on) and back (off): ip rules in the switch drop
        (blackhole) every IP packet from node's port on rail that it would
        forward, and every one it would send or forward to the port's /30
        (the local table's rule comes first: an echo to the switch's own
        address gets in, its reply does not get out). Carrier, LLDP (the
        node keeps its address) and ARP stay as they were."""
        if state not in ("on", "off"):
            raise UsageError("state must be on or off")
        self._check_port(node, rail)
        on = [node, rail] in self.state["faults"]["blackholes"]
        if on == (state == "on"):
            return
        sw_ip = self._switch_port(node, rail)["description"].split()[-1]
        net = ipaddress.ip_interface(sw_ip).network
        verb = "add" if state == "on" else "del"
        ip_batch([f"rule {verb} pref {BLACKHOLE_PREF} iif {self.switch_ifname(node)} blackhole",
                  f"rule {verb} pref {BLACKHOLE_PREF} to {net} blackhole"],
                 self.leaf_netns(rail, self.leaf_of(node)))
        _toggle(self.state["faults"]["blackholes"], [node, rail], state == "on")
        self._save()

    def slow(self, node: int, rail: int, mbit: int) -> None:
        """A slow port (a NIC or cable that trains down, a thermally
        throttled node): both directions of node's port on rail shaped to
        mbit Mbit/s by a token bucket (tc tbf) on the node's end and on the
        switch's; 0 takes the shaping off. Carrier, LLDP and addresses stay."""
        self._check_port(node, rail)
        if mbit < 0:
            raise UsageError("the rate must be 0 (off) or a positive Mbit/s")
        ends = [(self.node_netns(node), f"so{rail}"),
                (self.leaf_netns(rail, self.leaf_of(node)), self.switch_ifname(node))]
        for ns, dev in ends:
            if mbit:
                # A burst of 1 ms at the rate, and at least 16 KB.
                burst = max(16 * 1024, mbit * 1000 // 8)
                run(["ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", dev, "root",
                     "tbf", "rate", f"{mbit}mbit", "burst", str(burst), "latency", "100ms"])
            else:
                run(["ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", dev, "root"],
                    check=False)
        faults = self.state["faults"].setdefault("slow", [])
        faults[:] = [f for f in faults if f[:2] != [node, rail]]
        if mbit:
            faults.append([node, rail, mbit])
        self._save()

    def readdress(self, node: int, rail: int, switch_ip: str) -> None:
        """Give the switch end of node's port on rail the address switch_ip/30
        and announce it in the Port Description, as a re-cabled or re-planned
        fabric would; the node's daemon follows from LLDP."""
        self._check_port(node, rail)
        if [node, rail] in self.state["faults"]["blackholes"]:
            raise UsageError("turn the port's blackhole off before readdressing it")
        ns, swp = self.leaf_netns(rail, self.leaf_of(node)), self.switch_ifname(node)
        cmds = [f"address flush dev {swp}", f"address add {switch_ip}/30 dev {swp}"]
        ip_batch(cmds, ns)
        if self.nodes_per_leaf:
            spine, leaf = uplink_addresses(rail, self.leaf_of(node))
            net = ipaddress.ip_interface(f"{switch_ip}/30").network
            ip_batch([f"route replace {net} via {leaf} dev dn{self.leaf_of(node)}"], self.spine_netns(rail))
        p = self._switch_port(node, rail)
        p["description"] = f"no-alert {switch_ip}/30"
        leaf = self.leaves[self._leaf_index(rail, self.leaf_of(node))]
        leaf.write_conf()
        leaf.configure_port(p)


def _toggle(items: list, item: list, present: bool) -> None:
    if present and item not in items:
        items.append(item)
    elif not present and item in items:
        items.remove(item)
