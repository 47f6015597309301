# SPDX-License-Identifier: Apache-2.0
"""Building a simulated fabric: Fabric.up() and the parts it makes (ports,
modules, namespaces, veths); on failure it removes what it made."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import platforms
import sysfs_tree
from fabric_paths import MARKER, MAX_PORTS, STATE_FILE, STATE_VERSION, default_state_dir
from lldp import check_description, parse_description
from simutil import FabricError, UsageError, check_name, ip_batch, ip_links, log, netns_list, run, unique_name

from leaves import Leaf, mgmt_cmds, new_leaf

if TYPE_CHECKING:
    from fabric import Fabric


class FabricBuild:
    """Fabric's creation half; mixed into Fabric (fabric.py)."""

    @classmethod
    def up(
        cls,
        name: str | None = None,
        ports: int | None = None,
        descriptions: Mapping[int, str] | Sequence[str | None] | None = None,
        mtu: int | None = None,
        tx_interval: float = 1,
        ports_per_module: int | None = None,
        state_dir: str | None = None,
        med_class: int | None = 4,
        platform: str = platforms.DEFAULT_PLATFORM,
        leaves: int | None = None,
    ) -> Fabric:
        """Create a fabric; on failure everything created so far is removed.

        ports, ports_per_module and leaves default to the platform's (gaudi2:
        3 ports, 3 per module, 1 leaf; gaudi3: 24, 3, 3; gaudi3-pcie: 8, 4, 4).
        """
        if os.geteuid() != 0:
            raise FabricError("must run as root (network namespaces, veths, lldpd)")
        name = name or unique_name()
        check_name(name)
        plat = platforms.platform(platform)
        if ports_per_module is None:
            ports_per_module = plat.ports_per_module
        if not isinstance(ports_per_module, int) or not 1 <= ports_per_module <= 64:
            raise UsageError(f"--ports-per-module must be 1..64, not {ports_per_module!r}")
        if plat.name != "gaudi2" and ports_per_module != plat.ports_per_module:
            raise UsageError(f"{plat.name} has {plat.ports_per_module} scale-out ports per module")
        if ports is None:
            ports = plat.default_ports
        if not isinstance(ports, int) or not 1 <= ports <= MAX_PORTS:
            raise UsageError(f"--ports must be 1..{MAX_PORTS}, not {ports!r}")
        initial_modules = (ports + ports_per_module - 1) // ports_per_module
        if plat.max_modules and initial_modules > plat.max_modules:
            raise UsageError(f"{plat.name} has at most {plat.max_modules} modules "
                             f"({plat.max_modules * ports_per_module} ports)")
        n_leaves = platforms.check_leaves(plat, leaves, ports_per_module)
        if mtu is not None and (not isinstance(mtu, int) or not 68 <= mtu <= 65535):
            raise UsageError(f"--mtu must be 68..65535, not {mtu!r}")
        try:
            tx_interval = float(tx_interval)
        except (TypeError, ValueError):
            raise UsageError(f"--tx-interval must be a number of seconds, not {tx_interval!r}") from None
        if not 0.1 <= tx_interval <= 3600:
            raise UsageError("--tx-interval must be between 0.1 and 3600 seconds")
        if med_class not in (None, 0, 1, 2, 3, 4):
            raise UsageError("med_class must be None/0 (off) or 1..4")
        descs: dict[int, str] = {}
        if descriptions:
            items = descriptions.items() if isinstance(descriptions, Mapping) else enumerate(descriptions)
            for i, text in items:
                if text is None:
                    continue
                if not isinstance(i, int) or not 0 <= i < ports:
                    raise UsageError(f"description for port {i!r}: port index must be 0..{ports - 1}")
                descs[i] = check_description(text)
        sd = os.path.abspath(state_dir) if state_dir else default_state_dir(name)
        leaf_dicts = [new_leaf(name, sd, k, n_leaves) for k in range(n_leaves)]
        for leaf in leaf_dicts:
            if len(leaf["lldpd"]["socket"].encode()) > 100:
                raise UsageError(f"state dir path too long for a unix socket: {leaf['lldpd']['socket']}")

        taken = [ns for ns in netns_list() if ns.startswith(name + "-")]
        if taken:
            raise FabricError(f"fabric {name} already exists (netns {', '.join(taken)}); "
                              f"run 'down {name}' first")
        if os.path.exists(os.path.join(sd, STATE_FILE)) or os.path.exists(os.path.join(sd, MARKER)):
            raise FabricError(f"state dir {sd} is in use; run 'down --state-dir {sd}' first")
        if os.path.exists(sd) and os.listdir(sd):
            raise FabricError(f"state dir {sd} exists and is not empty")

        state = {
            "version": STATE_VERSION,
            "name": name,
            "platform": plat.name,
            "state_dir": sd,
            "node_netns": f"{name}-node",
            "switch_netns": leaf_dicts[0]["netns"],
            "sysfs_root": os.path.join(sd, "sysfs"),
            "switch_hostname": leaf_dicts[0]["hostname"],
            "tx_interval": tx_interval,
            "mtu": mtu,
            "ports_per_module": ports_per_module,
            "initial_modules": initial_modules,
            "med_class": med_class or None,
            "lldpd": leaf_dicts[0]["lldpd"],
            "leaves": leaf_dicts,
            "follower": {"pid": None, "starttime": None, "running": False,
                         "log": os.path.join(sd, "sysfs-follower.log")},
            "modules": [],
            "ports": [],
        }
        fab = cls(state)
        os.makedirs(sd, mode=0o755, exist_ok=True)
        os.chmod(sd, 0o755)  # lldpd's unprivileged half must reach the socket
        try:  # claim the state dir; a concurrent 'up' of the same name loses here
            fd = os.open(os.path.join(sd, MARKER), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            raise FabricError(f"state dir {sd} is in use (concurrent up?)") from None
        os.write(fd, (name + "\n").encode())
        os.close(fd)
        try:
            fab._build(ports, descs)
        except BaseException as e:
            log(f"up {name} failed, removing what it created: {e}")
            fab._abort()
            raise
        return fab

    def _abort(self) -> None:
        """Undo a half-done up: only what this process created."""
        for what, fn in (
            ("stop the sysfs follower", self._stop_follower),
            *((f"stop lldpd of leaf {k}", lambda k=k: Leaf(self.state, k).stop(self._reap))
              for k in range(len(self.state["leaves"]))),
            *((f"delete netns {ns}", lambda ns=ns: run(["ip", "netns", "delete", ns]))
              for ns in reversed(self._created_netns)),
            ("remove state dir", lambda: shutil.rmtree(self.state_dir)),
        ):
            try:
                fn()
            except Exception as e:  # best effort, report and go on
                log(f"cleanup: could not {what}: {e}")

    def _new_port(self, i: int, description: str | None = None) -> dict:
        st = self.state
        plat = platforms.platform(st["platform"])
        ppm = st["ports_per_module"]
        c = platforms.cabling(i, ppm, len(st["leaves"]))
        if plat.max_modules and c["module"] >= plat.max_modules:
            raise UsageError(f"{plat.name} has at most {plat.max_modules} modules")
        mod = self._module(c["module"])
        leaf = st["leaves"][c["leaf"]]
        desc = description if description is not None else platforms.leaf_description(c["leaf"], c["number"])
        sw, port_id = f"swp{c['number']}", f"Ethernet1/{c['number']}"
        return {
            "index": i,
            "present": True,
            "host_ifname": f"so{i}",
            "switch_ifname": sw,
            "host_mac": platforms.mac(self.name, 0, i),
            "switch_mac": platforms.mac(self.name, 1, i),
            "switch_port_id": port_id,
            "description": desc,
            **parse_description(desc),
            "link": "up",
            "host_link": "down",
            "mtu": st["mtu"],
            "pci_address": mod["pci_address"],
            "pcie_root": mod["pcie_root"],
            "numa_node": mod["numa_node"],
            "module_id": c["module"],
            "accel": mod["accel"],
            "port_index": platforms.dev_port(plat, c["module"], c["rail"], ppm),
            "rail": c["rail"],
            "leaf": c["leaf"],
            "switch_netns": leaf["netns"],
            "sysfs_net_dir": sysfs_tree.net_dir(self.sysfs_root, mod["device_dir"], f"so{i}"),
            "home": {"leaf": c["leaf"], "switch_ifname": sw, "switch_port_id": port_id, "description": desc},
            "miscabled": False,
        }

    def _module(self, m: int) -> dict:
        mods = self.state["modules"]
        plat = platforms.platform(self.state["platform"])
        while len(mods) <= m:
            k = len(mods)
            mod = platforms.module_layout(k)
            mod["numa_node"] = platforms.numa_for_module(k, self.state["initial_modules"])
            mod["sysfs_device_dir"] = os.path.join(self.sysfs_root, mod["device_dir"])
            mod["pci_device"] = plat.pci_device
            mod["device_type"] = plat.device_type
            mod["dev_ports"] = list(plat.dev_ports(k))
            mods.append(mod)
            sysfs_tree.add_module(self.sysfs_root, mod, plat)
            sysfs_tree.add_rdma(self.sysfs_root, mod)
        return mods[m]

    def _build(self, n: int, descs: dict[int, str]) -> None:
        st = self.state
        sysfs_tree.make_skeleton(self.sysfs_root)
        ports = [self._new_port(i, descs.get(i)) for i in range(n)]
        st["ports"] = ports
        for ns in [self.node_netns] + [leaf["netns"] for leaf in st["leaves"]]:
            run(["ip", "netns", "add", ns])
            self._created_netns.append(ns)
        ip_batch(self._veth_add_cmd(p) for p in ports)
        ip_batch(["link set lo up"], self.node_netns)  # the ports stay down
        for k, leaf in enumerate(st["leaves"]):
            cmds = ["link set lo up", *mgmt_cmds(leaf)]
            for p in ports:
                if p["leaf"] == k:
                    cmds += [f"link set {p['switch_ifname']} up", self._addr_cmd(p)]
            ip_batch(cmds, leaf["netns"])
            Leaf(st, k).write_conf()
        self._save()
        self._start_follower()
        for p in ports:
            self._wait_sysfs(p, present=True)
        for k in range(len(st["leaves"])):
            self._children.append(Leaf(st, k).start())
            self._save()
        for k in range(len(st["leaves"])):
            Leaf(st, k).wait_ready(reap=self._reap)

    def _veth_add_cmd(self, p: dict) -> str:
        mtu = f" mtu {p['mtu']}" if p.get("mtu") else ""
        return (
            f"link add {p['host_ifname']} netns {self.node_netns} address {p['host_mac']}{mtu} "
            f"type veth peer name {p['switch_ifname']} netns {p['switch_netns']} "
            f"address {p['switch_mac']}{mtu}"
        )

    @staticmethod
    def _addr_cmd(p: dict) -> str:
        if p["switch_ip"] and p["switch_ip_assigned"]:
            return f"address add {p['switch_ip']}/{p['prefix_len']} dev {p['switch_ifname']}"
        return ""

    def _switch_end_exists(self, p: dict) -> bool:
        """False once the veth is gone (destroyed with the pod namespace its host end was in)."""
        return any(link.get("address") == p["switch_mac"] for link in ip_links(p["switch_netns"]))
