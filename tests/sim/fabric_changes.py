# SPDX-License-Identifier: Apache-2.0
"""Changes to a running simulated fabric, as the real one sees them: a new
Port Description or PFC TLV, a link down, a port added, removed or
recabled."""

from __future__ import annotations

import ipaddress

import platforms
from fabric_paths import MAX_PORTS, _check_index
from lldp import check_description, parse_description
from simutil import FabricError, UsageError, ip_batch, run

from leaves import Leaf


class FabricChanges:
    """Fabric's mutations; each runs under the fabric's lock; mixed into Fabric
    (fabric.py)."""

    # ---- mutations

    def set_description(self, index: int, text: str) -> dict:
        """Change port index's Port Description (sent at once) and move the
        switch end's address to the one the new description names."""
        text = check_description(text)
        with self._locked():
            p = self._port(index)
            self._set_description(p, text)
            return dict(p)

    def _set_description(self, p: dict, text: str) -> None:
        sw = p["switch_ifname"]
        p.update(description=text, **parse_description(text))
        ip_batch([f"address flush dev {sw} scope global", self._addr_cmd(p)], p["switch_netns"])
        lf = Leaf(self.state, p["leaf"])
        lf.write_conf()
        if lf.running():
            # 'portdescription' alone: 'portidsubtype ... description' would
            # first advertise the interface name as description.
            lf.lldpcli("configure", "ports", sw, "lldp", "portdescription", text)
            if p["link"] == "up":
                lf.wait_ready([p], reap=self._reap)

    def set_pfc(self, index: int, priorities: list[int] | None, willing: bool = False,
                capability: int = 8) -> dict:
        """Make the switch end of port `index` advertise PFC on `priorities`
        (the IEEE 802.1Qaz PFC TLV, sent at once); None: no PFC TLV."""
        if priorities is not None and any(not 0 <= q <= 7 for q in priorities):
            raise FabricError(f"PFC priorities {priorities}: each must be 0..7")
        with self._locked():
            p = self._port(index)
            p["pfc"] = None if priorities is None else {
                "priorities": sorted(set(priorities)), "willing": willing, "capability": capability}
            lf = Leaf(self.state, p["leaf"])
            lf.write_conf()
            if lf.running():
                lf.set_pfc(p)
            return dict(p)

    def link(self, index: int, state: str | bool, side: str = "switch") -> dict:
        """Set the switch end (or, side="node", the host end, under its
        current name) of a port up or down."""
        if isinstance(state, bool):
            state = "up" if state else "down"
        if state not in ("up", "down"):
            raise UsageError(f"link state must be 'up' or 'down', not {state!r}")
        if side not in ("switch", "node"):
            raise UsageError(f"side must be 'switch' or 'node', not {side!r}")
        with self._locked():
            p = self._port(index)
            if side == "switch":
                run(["ip", "-n", p["switch_netns"], "link", "set", p["switch_ifname"], state])
                p["link"] = state
            else:
                ifname = self.host_ifname(index)
                if ifname is None:
                    raise FabricError(f"port {index}'s host end is not in {self.node_netns} (in a pod?)")
                run(["ip", "-n", self.node_netns, "link", "set", ifname, state])
                p["host_link"] = state
            return dict(p)

    def add_port(self, index: int | None = None, description: str | None = None) -> dict:
        """Add a port at run time: the next index, or re-plug a removed one
        (or one whose veth died with a pod namespace).  It comes back home,
        host end down, and returns once its sysfs entries exist.

        lldpd is configured for the switch end before that end comes up, so
        the node never sees a frame without the description."""
        if description is not None:
            check_description(description)
        with self._locked():
            ports = self.state["ports"]
            if index is None:
                index = len(ports)
            if _check_index(index) < 0:
                raise UsageError(f"port index must be a non-negative integer, not {index!r}")
            if index > len(ports):
                raise UsageError(f"next new port index is {len(ports)}, not {index}")
            if index >= MAX_PORTS:
                raise UsageError(f"at most {MAX_PORTS} ports")
            old = ports[index] if index < len(ports) else None
            if old is not None and old["present"] and self._switch_end_exists(old):
                raise UsageError(f"port {index} of fabric {self.name} already exists")
            if description is None and old is not None:
                description = old["home"]["description"] if old["miscabled"] else old["description"]
            p = self._new_port(index, description)
            if old is not None:
                ports[index] = p
            else:
                ports.append(p)
            self._ensure_follower()
            self._save()  # the follower learns the new MAC from fabric.json
            lf = Leaf(self.state, p["leaf"])
            try:
                ip_batch([self._veth_add_cmd(p)])
                ip_batch([self._addr_cmd(p)], p["switch_netns"])
                lf.write_conf()
                if lf.running():
                    lf.configure_port(p)
                run(["ip", "-n", p["switch_netns"], "link", "set", p["switch_ifname"], "up"])
                self._wait_sysfs(p, present=True)
            except BaseException:
                p["present"] = False
                run(["ip", "-n", p["switch_netns"], "link", "del", p["switch_ifname"]], check=False)
                lf.write_conf()
                self._save()
                raise
            return dict(p)

    def remove_port(self, index: int) -> dict:
        """Delete port index's veth pair, wherever its host end is; like real
        sysfs, its net/<if> dir and class/net link go too (the PCI device
        stays).  The entry stays in fabric.json with present: false, so
        indices never shift."""
        with self._locked():
            p = self._port(index)
            self._ensure_follower()
            run(["ip", "-n", p["switch_netns"], "link", "del", p["switch_ifname"]], check=False)
            if self._switch_end_exists(p):
                raise FabricError(f"could not delete {p['switch_ifname']} in {p['switch_netns']}")
            p["present"] = False
            Leaf(self.state, p["leaf"]).write_conf()
            self._wait_sysfs(p, present=False)
            return dict(p)

    def recable(self, index: int, leaf: int, description: str | None = None) -> dict:
        """Move port index's cable (its switch end) to another leaf, as a
        technician plugging it into the wrong switch.

        The switch end moves into the leaf's namespace as its next free
        ``swp<n>`` (Port ID ``Ethernet1/<n>``), up, and that leaf's lldpd
        announces description (default: the next free ``no-alert
        10.<200+leaf>.<x>.2/30`` of the leaf).  Recabling to the port's home
        leaf restores its original switch port and description.  Recabling
        to the leaf it is on only changes the description, if one is given."""
        if description is not None:
            check_description(description)
        with self._locked():
            p = self._port(index)
            dst = self._leaf(leaf)
            if leaf == p["leaf"]:
                if description is not None and description != p["description"]:
                    self._set_description(p, description)
                return dict(p)
            if not self._switch_end_exists(p):
                raise FabricError(f"port {index} has no cable any more (its veth was destroyed)")
            src = Leaf(self.state, p["leaf"])
            home = p["home"]
            if not p["miscabled"]:
                home["description"] = p["description"]  # what a recable home restores
            if leaf == home["leaf"]:
                ifname, port_id = home["switch_ifname"], home["switch_port_id"]
                desc = description if description is not None else home["description"]
            else:
                n = self._free_switch_port(leaf)
                ifname, port_id = f"swp{n}", f"Ethernet1/{n}"
                desc = description if description is not None else \
                    platforms.leaf_description(leaf, self._free_host(leaf))
            run(["ip", "-n", src.netns, "link", "set", p["switch_ifname"], "netns", dst.netns,
                 "name", ifname])
            p.update(leaf=leaf, switch_netns=dst.netns, switch_ifname=ifname, switch_port_id=port_id,
                     description=desc, **parse_description(desc), miscabled=leaf != home["leaf"], link="up")
            ip_batch([self._addr_cmd(p)], dst.netns)
            src.write_conf()
            dst.write_conf()
            if dst.running():
                dst.configure_port(p)
            run(["ip", "-n", dst.netns, "link", "set", ifname, "up"])
            return dict(p)

    def _free_switch_port(self, leaf: int) -> int:
        """The lowest leaf port number neither a port's home there nor in use."""
        used = {int(p["home"]["switch_ifname"][3:]) for p in self.state["ports"] if p["home"]["leaf"] == leaf}
        used |= {int(p["switch_ifname"][3:]) for p in Leaf(self.state, leaf).ports()}
        return min(set(range(1, len(used) + 2)) - used)

    def _free_host(self, leaf: int) -> int:
        """The lowest x whose 10.<200+leaf>.<x>.0/30 no port there announces or comes home to."""
        net = ipaddress.IPv4Network(platforms.leaf_network(leaf))
        ips = [parse_description(p["home"]["description"])["switch_ip"]
               for p in self.state["ports"] if p["home"]["leaf"] == leaf]
        ips += [p["switch_ip"] for p in Leaf(self.state, leaf).ports()]
        used = {ipaddress.IPv4Address(ip).packed[2] for ip in ips if ip and ipaddress.IPv4Address(ip) in net}
        free = sorted(set(range(1, platforms.MAX_HOSTS + 1)) - used)
        if not free:
            raise FabricError(f"leaf {leaf} has no free /30 left in {net}")
        return free[0]
