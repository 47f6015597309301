# SPDX-License-Identifier: Apache-2.0
"""The processes a simulated fabric runs: the sysfs follower in the node
namespace and lldpd on every leaf."""

from __future__ import annotations

import os
import time

import sysfs_follower
import sysfs_tree
from fabric_paths import SYSFS_TIMEOUT
from simutil import FabricError, pid_alive, proc_stat, terminate

from leaves import Leaf


class FabricProcesses:
    """Fabric's process control; mixed into Fabric (fabric.py)."""

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
