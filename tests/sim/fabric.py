#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
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
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

import sysfs_follower
from fabric_build import FabricBuild
from fabric_changes import FabricChanges
from fabric_paths import (
    MARKER,
    STATE_FILE,
    STATE_VERSION,
    _check_index,
    _resolve_state_dir,
    default_state_dir,
)
from fabric_processes import FabricProcesses
from lldp import LldpCapture, decode_lldp, parse_description
from simutil import (
    FabricError,
    UsageError,
    check_name,
    ip_links,
    log,
    netns_list,
    pids_in_netns,
    proc_comm,
    run,
    terminate,
    unique_name,
    write_json_atomic,
)

from leaves import LLDPD_STOP_TIMEOUT, Leaf

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


class Fabric(FabricBuild, FabricProcesses, FabricChanges):
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

    def reload(self) -> Fabric:
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
            raise UsageError(f"port index {index} out of range "
                             f"(fabric {self.name} has ports 0..{len(ports) - 1})")
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
    def load(cls, name_or_state_dir: str) -> Fabric:
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

    # ---- teardown

    def down(self, kill_processes: bool = False) -> None:
        """Stop the sysfs follower and every lldpd, delete all NAME-*
        namespaces, remove the state dir.

        Other processes still inside the namespaces are reported, or killed
        with kill_processes=True."""
        with contextlib.suppress(FabricError):
            self._reload()  # another process may have restarted lldpd
        _teardown(self.name, self.state_dir, self, kill_processes)

    def __enter__(self) -> Fabric:
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
        if (os.path.exists(os.path.join(state_dir, MARKER))
                or os.path.exists(os.path.join(state_dir, STATE_FILE))):
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
