#!/usr/bin/env python3
"""Simulated RoCE scale-out fabric for rocenet tests and demos.

A fabric NAME is a Gaudi node cabled to one or more leaf switches, as
unkind as the real hardware:

* network namespaces ``NAME-node`` (the worker node, where rocenetd runs)
  and one per leaf switch: ``NAME-sw`` (leaf 0), ``NAME-sw1``, ``NAME-sw2``...;
* one veth pair per scale-out port: ``so<i>`` in the node, ``swp<n>`` in
  its leaf.  **The node ends start administratively down with no carrier**,
  as habanalabs registers its netdevs: whoever uses the fabric brings them up
  (``link(i, "up", side="node")`` does it by hand).  The switch ends are up;
  they have no carrier until the node end is up;
* cabling (``--leaves``): one leaf (the Gaudi 2 default) takes port i on
  ``swp<i+1>`` and announces ``no-alert 10.200.<i+1>.2/30``.  Rail-optimised
  (one leaf per rail, the Gaudi 3 default) takes rail k (the k-th scale-out
  port of each module) of module m to leaf k, ``swp<m+1>``, announcing
  ``no-alert 10.<200+k>.<m+1>.2/30``; the switch end owns that address;
* the real lldpd on every leaf (own chassis ID, system name ``leaf-NAME``
  or, with several leaves, ``leaf<k>-NAME``), advertising Port ID
  ``Ethernet1/<n>`` (subtype local) and the Port Description;
* a fake sysfs tree (``<state_dir>/sysfs``) in which the node ends are the
  scale-out ports of PCI functions bound to ``habanalabs`` (``--platform``
  gaudi2, gaudi3 or gaudi3-pcie: PCI ids, dev_ports, module ids; see
  platforms.py).  **It is tagged by network namespace like real sysfs**: a
  follower process in the node namespace (sysfs_follower.py) removes a
  port's ``class/net/<if>`` and ``<pci>/net/<if>`` while the port is in
  another namespace (a pod), and brings them back, under its current name,
  when it returns, within milliseconds of the netlink event;
* ``<state_dir>/fabric.json`` describing all of the above.

``recable`` moves a port's cable (its switch end) to another leaf, as a
technician plugging it into the wrong switch, and back.

Usable as a module (``Fabric``, ``unique_name``) and as a command line tool
(``fabric.py --help``).  Needs root, iproute2 and lldpd; Python stdlib only.
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import json
import os
import shutil
import subprocess
import sys
import time
from typing import Callable, Mapping, Sequence

import platforms
import sysfs_follower
import sysfs_tree
from leaves import LLDPD_STOP_TIMEOUT, Leaf, mgmt_cmds, new_leaf
from lldp import LldpCapture, check_description, decode_lldp, parse_description
from simutil import (FabricError, UsageError, check_name, ip_batch, ip_links, log, netns_list,
                     pid_alive, pids_in_netns, proc_comm, proc_stat, run, terminate, unique_name,
                     write_json_atomic)

__all__ = [
    "Fabric",
    "FabricError",
    "UsageError",
    "LldpCapture",
    "decode_lldp",
    "unique_name",
    "parse_description",
    "default_state_dir",
    "down",
]

STATE_VERSION = 2
DEFAULT_BASE = os.environ.get("ROCENET_SIM_ROOT", "/tmp/rocenet-sim")
MARKER = ".rocenet-sim"
STATE_FILE = "fabric.json"
MAX_PORTS = platforms.MAX_HOSTS  # one leaf: port i announces 10.200.<i+1>.2
SYSFS_TIMEOUT = 10.0  # how long add_port/remove_port wait for the follower


def default_state_dir(name: str) -> str:
    return os.path.join(DEFAULT_BASE, name)


def _resolve_state_dir(name_or_state_dir: str) -> str:
    if os.sep in name_or_state_dir:
        return os.path.abspath(name_or_state_dir)
    check_name(name_or_state_dir)
    return default_state_dir(name_or_state_dir)


def _check_index(index, what: str = "port index") -> int:
    if not isinstance(index, int) or isinstance(index, bool):
        raise UsageError(f"{what} must be an integer, not {index!r}")
    return index


class Fabric:
    """A simulated fabric.  Create with ``Fabric.up()``, attach with ``Fabric.load()``."""

    def __init__(self, state: dict):
        self.state = state
        self._children: list[subprocess.Popen] = []  # ours to reap
        self._created_netns: list[str] = []

    # ---- properties

    @property
    def name(self) -> str:
        return self.state["name"]

    @property
    def state_dir(self) -> str:
        return self.state["state_dir"]

    @property
    def platform(self) -> str:
        return self.state["platform"]

    @property
    def node_netns(self) -> str:
        return self.state["node_netns"]

    @property
    def switch_netns(self) -> str:
        """Leaf 0's namespace (the only one of a one-leaf fabric)."""
        return self.state["leaves"][0]["netns"]

    @property
    def sysfs_root(self) -> str:
        return self.state["sysfs_root"]

    @property
    def ports(self) -> list[dict]:
        """Present ports (dicts as in fabric.json), in index order."""
        return [dict(p) for p in self.state["ports"] if p["present"]]

    @property
    def all_ports(self) -> list[dict]:
        """All ports ever created, including removed ones (present: false)."""
        return [dict(p) for p in self.state["ports"]]

    @property
    def modules(self) -> list[dict]:
        return [dict(m) for m in self.state["modules"]]

    @property
    def leaves(self) -> list[dict]:
        return [dict(leaf) for leaf in self.state["leaves"]]

    @property
    def lldpd_pid(self) -> int | None:
        return self.state["leaves"][0]["lldpd"]["pid"]

    @property
    def lldpd_socket(self) -> str:
        return self.state["leaves"][0]["lldpd"]["socket"]

    @property
    def follower_pid(self) -> int | None:
        return self.state["follower"]["pid"]

    def port(self, index: int) -> dict:
        return dict(self._port(index))

    def leaf(self, k: int) -> dict:
        return dict(self._leaf(k).d)

    def __repr__(self) -> str:
        return (f"Fabric({self.name!r}, platform={self.platform!r}, ports={len(self.ports)}, "
                f"leaves={len(self.state['leaves'])}, state_dir={self.state_dir!r})")

    # ---- exec helpers

    def node_exec(self, argv: Sequence[str], **kw) -> subprocess.CompletedProcess:
        """subprocess.run(argv) inside the node netns."""
        return subprocess.run(["ip", "netns", "exec", self.node_netns, *argv], **kw)

    def switch_exec(self, argv: Sequence[str], leaf: int = 0, **kw) -> subprocess.CompletedProcess:
        """subprocess.run(argv) inside a leaf's netns."""
        return subprocess.run(["ip", "netns", "exec", self._leaf(leaf).netns, *argv], **kw)

    def lldpcli(self, *args: str, input: str | None = None, check: bool = True,
                leaf: int = 0) -> subprocess.CompletedProcess:
        return self._leaf(leaf).lldpcli(*args, input=input, check=check)

    def lldpd_interfaces(self, leaf: int = 0) -> dict[str, dict]:
        """What a leaf's lldpd says it advertises: {switch_ifname: {port_id, description}}."""
        return self._leaf(leaf).interfaces()

    def host_ifname(self, index: int) -> str | None:
        """The current name of port index's host end in the node namespace
        (rocenetd may have renamed it), None while it is elsewhere."""
        mac = self._port(index)["host_mac"]
        for link in ip_links(self.node_netns):  # a veth: a macvlan on top may share the MAC
            if link.get("address") == mac and link.get("linkinfo", {}).get("info_kind") == "veth":
                return link["ifname"]
        return None

    def capture(self, index: int, timeout: float = 30.0) -> LldpCapture:
        """Start receiving LLDP frames on port index's host end (see LldpCapture)."""
        ifname = self.host_ifname(index) or self._port(index)["host_ifname"]
        return LldpCapture(self.node_netns, ifname, timeout)

    def capture_lldp(self, index: int, timeout: float = 3.0, count: int = 1,
                     match: str | Callable[[dict], bool] | None = None) -> list[dict]:
        """Frames received on port index within timeout; returns early after
        ``count`` frames that match (match: substring of the Port
        Description, or a predicate on the decoded frame)."""
        if isinstance(match, str):
            needle = match
            pred = lambda f: needle in (f.get("port_description") or "")  # noqa: E731
        else:
            pred = match
        got: list[dict] = []
        deadline = time.monotonic() + timeout
        with self.capture(index, timeout + 2) as cap:
            while len(got) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                f = cap.wait_for(pred, left)
                if f is None:
                    break
                got.append(f)
        return got

    # ---- state handling

    @contextlib.contextmanager
    def _locked(self):
        """Serialise mutations between processes; reloads state inside."""
        path = os.path.join(self.state_dir, ".lock")
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except FileNotFoundError:
            raise FabricError(f"fabric {self.name} is gone (no {self.state_dir})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._reload()
            yield
            self._save()
        finally:
            os.close(fd)

    def _reload(self) -> None:
        path = os.path.join(self.state_dir, STATE_FILE)
        try:
            with open(path) as f:
                self.state = json.load(f)
        except FileNotFoundError:
            raise FabricError(f"fabric {self.name} is gone (no {path})") from None

    def reload(self) -> "Fabric":
        """Re-read fabric.json (after another process changed the fabric)."""
        self._reload()
        return self

    def _save(self) -> None:
        st = self.state
        for k in range(len(st["leaves"])):
            st["leaves"][k]["lldpd"]["running"] = Leaf(st, k).running()
        st["lldpd"] = st["leaves"][0]["lldpd"]  # the one-switch key, kept for its readers
        st["follower"]["running"] = self.follower_running()
        write_json_atomic(os.path.join(self.state_dir, STATE_FILE), st)

    def _port(self, index: int, present: bool = True) -> dict:
        _check_index(index)
        ports = self.state["ports"]
        if index < 0 or index >= len(ports):
            raise UsageError(f"port index {index} out of range (fabric {self.name} has ports 0..{len(ports) - 1})")
        p = ports[index]
        if present and not p["present"]:
            raise UsageError(f"port {index} of fabric {self.name} was removed")
        return p

    def _leaf(self, k: int) -> Leaf:
        _check_index(k, "leaf")
        n = len(self.state["leaves"])
        if not 0 <= k < n:
            raise UsageError(f"leaf {k} out of range (fabric {self.name} has leaves 0..{n - 1})")
        return Leaf(self.state, k)

    def _reap(self) -> None:
        for proc in self._children:
            proc.poll()

    # ---- creation

    @classmethod
    def load(cls, name_or_state_dir: str) -> "Fabric":
        """Attach to a running fabric by name or by state directory."""
        sd = _resolve_state_dir(name_or_state_dir)
        path = os.path.join(sd, STATE_FILE)
        try:
            with open(path) as f:
                state = json.load(f)
        except FileNotFoundError:
            raise FabricError(f"no fabric at {sd} (missing {STATE_FILE})") from None
        if state.get("version") != STATE_VERSION:
            raise FabricError(f"{path} is version {state.get('version')}, not {STATE_VERSION}: "
                              "tear it down and build it again")
        return cls(state)

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
    ) -> "Fabric":
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
            raise FabricError(f"fabric {name} already exists (netns {', '.join(taken)}); run 'down {name}' first")
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
            f"type veth peer name {p['switch_ifname']} netns {p['switch_netns']} address {p['switch_mac']}{mtu}"
        )

    @staticmethod
    def _addr_cmd(p: dict) -> str:
        if p["switch_ip"] and p["switch_ip_assigned"]:
            return f"address add {p['switch_ip']}/{p['prefix_len']} dev {p['switch_ifname']}"
        return ""

    def _switch_end_exists(self, p: dict) -> bool:
        """False once the veth is gone (destroyed with the pod namespace its host end was in)."""
        return any(link.get("address") == p["switch_mac"] for link in ip_links(p["switch_netns"]))

    # ---- the sysfs follower

    def follower_running(self) -> bool:
        f = self.state["follower"]
        return pid_alive(f.get("pid"), f.get("starttime"))

    def ensure_follower(self) -> int:
        """Start the sysfs follower again if it died; returns its pid.  A new
        follower first makes the tree match wherever the ports are now."""
        with self._locked():
            self._ensure_follower()
            return self.state["follower"]["pid"]

    def _ensure_follower(self) -> None:
        if not self.follower_running():
            self._start_follower()

    def _start_follower(self) -> None:
        stale = sysfs_follower.followers_of(self.state_dir, self.node_netns)
        if stale:
            terminate(stale, 2, self._reap)
        f = self.state["follower"]
        proc = sysfs_follower.spawn(self.state_dir, self.node_netns, f["log"])
        self._children.append(proc)
        st = proc_stat(proc.pid)
        f.update(pid=proc.pid, starttime=st[1] if st else None, running=True)

    def _stop_follower(self) -> None:
        f = self.state["follower"]
        pids = [f["pid"]] if self.follower_running() else []
        pids += [p for p in sysfs_follower.followers_of(self.state_dir, self.node_netns) if p not in pids]
        if pids:
            terminate(pids, 2, self._reap)
        f["running"] = False

    def _wait_sysfs(self, p: dict, present: bool) -> None:
        """Wait until the follower has published (or withdrawn) port p, under
        whatever name it has by then."""
        dd = self.state["modules"][p["module_id"]]["device_dir"]
        deadline = time.monotonic() + SYSFS_TIMEOUT
        while True:
            where = sysfs_tree.published(self.sysfs_root, [dd]).get(p["host_mac"])
            if present and where and os.path.lexists(os.path.join(self.sysfs_root, "class/net", where[1])):
                return
            if not present and where is None:
                return
            if not self.follower_running():
                raise FabricError(f"the sysfs follower died; see {self.state['follower']['log']}")
            if time.monotonic() > deadline:
                raise FabricError(f"sysfs entries of {p['host_ifname']} not "
                                  f"{'published' if present else 'withdrawn'} after {SYSFS_TIMEOUT}s; "
                                  f"see {self.state['follower']['log']}")
            time.sleep(0.005)

    # ---- lldpd

    def _leaves(self, leaf: int | None) -> list[Leaf]:
        if leaf is None:
            return [Leaf(self.state, k) for k in range(len(self.state["leaves"]))]
        return [self._leaf(leaf)]

    def lldpd_running(self, leaf: int | None = None) -> bool:
        """Whether lldpd runs on leaf (None: on every leaf)."""
        return all(lf.running() for lf in self._leaves(leaf))

    def stop_lldpd(self, leaf: int | None = None) -> None:
        """SIGTERM lldpd of a leaf (None: every leaf); it sends TTL-0 frames; SIGKILL after 5 s."""
        with self._locked():
            for lf in self._leaves(leaf):
                lf.stop(self._reap)

    def start_lldpd(self, leaf: int | None = None) -> None:
        """(Re)start lldpd of a leaf (None: every leaf not running) with the
        current configuration; waits until it advertises."""
        with self._locked():
            started = []
            for lf in self._leaves(leaf):
                if leaf is None and lf.running():
                    continue
                lf.write_conf()
                self._children.append(lf.start())
                started.append(lf)
            for lf in started:
                lf.wait_ready(reap=self._reap)

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
            run(["ip", "-n", src.netns, "link", "set", p["switch_ifname"], "netns", dst.netns, "name", ifname])
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

    # ---- teardown

    def down(self, kill_processes: bool = False) -> None:
        """Stop the sysfs follower and every lldpd, delete all NAME-*
        namespaces, remove the state dir.

        Other processes still inside the namespaces are reported, or killed
        with kill_processes=True."""
        with contextlib.suppress(FabricError):
            self._reload()  # another process may have restarted lldpd
        _teardown(self.name, self.state_dir, self, kill_processes)

    def __enter__(self) -> "Fabric":
        return self

    def __exit__(self, *exc) -> None:
        self.down()


def _teardown(name: str | None, state_dir: str | None, fab: Fabric | None = None,
              kill_processes: bool = False) -> None:
    if fab is None and state_dir:
        try:
            with open(os.path.join(state_dir, STATE_FILE)) as f:
                fab = Fabric(json.load(f))
            name = name or fab.name
        except (FileNotFoundError, ValueError):
            pass
        if name is None:
            with contextlib.suppress(OSError):
                with open(os.path.join(state_dir, MARKER)) as f:
                    name = f.read().strip() or None
    if name is not None:
        check_name(name)
        ours = [ns for ns in netns_list() if ns.startswith(name + "-")]
        if fab is not None and fab.state.get("version") == STATE_VERSION:
            fab._stop_follower()
            for k in range(len(fab.state["leaves"])):
                Leaf(fab.state, k).stop(fab._reap)
        else:  # no usable fabric.json: stop what we can recognise
            if state_dir:
                terminate(sysfs_follower.followers_of(state_dir, f"{name}-node"), 2)
            terminate([p for ns in ours for p in pids_in_netns(ns) if proc_comm(p) == "lldpd"],
                      LLDPD_STOP_TIMEOUT)
        for ns in ours:
            pids = pids_in_netns(ns)
            if pids and kill_processes:
                terminate(pids, LLDPD_STOP_TIMEOUT)
            elif pids:
                log(f"warning: processes still in netns {ns}: {' '.join(map(str, pids))} "
                    "(the namespace lives on until they exit; use --kill-processes)")
            run(["ip", "netns", "delete", ns], check=False)
        still = [ns for ns in netns_list() if ns.startswith(name + "-")]
        if still:
            raise FabricError(f"could not delete netns {', '.join(still)}")
    if state_dir and os.path.isdir(state_dir):
        if os.path.exists(os.path.join(state_dir, MARKER)) or os.path.exists(os.path.join(state_dir, STATE_FILE)):
            shutil.rmtree(state_dir)
        else:
            log(f"not removing {state_dir}: not a fabric state dir")


def down(name_or_state_dir: str, kill_processes: bool = False) -> None:
    """Tear a fabric down by name or state dir; no error if it is already gone."""
    sd = _resolve_state_dir(name_or_state_dir)
    name = None if os.sep in name_or_state_dir else name_or_state_dir
    _teardown(name, sd, None, kill_processes)


if __name__ == "__main__":
    sys.modules.setdefault("fabric", sys.modules[__name__])  # one module, not a second copy
    from fabric_cli import main

    sys.exit(main())
