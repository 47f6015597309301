# SPDX-License-Identifier: Apache-2.0
"""Upgrading rocenetd while pods hold ports: the old daemon stops (SIGTERM),
the new one starts on the same state directory, and nothing in any
namespace moves: links, addresses, routes and rules of the node, the switch
and every pod are byte-for-byte what they were, `ip monitor` sees no event
meanwhile, the journal holds the same attachments, and the new daemon
reports them (ports attached, CNI CHECK passes, DEL works).

The old daemon is the binary in ROCENET_OLD_ROCENETD when set (e.g. one built
from the last release), else the same binary as the new one: what CI runs
checks that a restart changes nothing; the upgrade proper is run by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time

import pytest
from cni_test import Cni, all_namespaces_state, ip_json

from harness import Daemon, binary, wait_until


class OldDaemon(Daemon):
    """rocenetd from ROCENET_OLD_ROCENETD, with only the flags it knows: one
    from before --runtime-dir keeps its journal in the state directory, and
    the new daemon takes it over from there."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.binary = os.environ.get("ROCENET_OLD_ROCENETD") or binary("rocenetd")
        known = subprocess.run([self.binary, "--help"], capture_output=True, text=True)
        self.has_runtime_dir = "runtime_dir" in known.stdout + known.stderr or \
            "runtime-dir" in known.stdout + known.stderr
        if not self.has_runtime_dir:
            self.args = [a for a in self.args if not a.startswith("--runtime-dir=")]

    def command(self) -> list[str]:
        return ["ip", "netns", "exec", self.netns, self.binary, *self.args]

    @property
    def journal_path(self) -> str:
        if self.has_runtime_dir:
            return super().journal_path
        return os.path.join(self.workdir, "state", "attachments.json")


@pytest.fixture(scope="module")
def fabric(fabrics):
    return fabrics("hfu", ports=4)


class Monitor:
    """`ip monitor` of links, addresses, routes and rules in one namespace."""

    def __init__(self, netns: str):
        self.lines: list[str] = []
        self.proc = subprocess.Popen(["ip", "-n", netns, "-o", "monitor", "link", "address",
                                      "route", "rule"], stdout=subprocess.PIPE, text=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.strip())

    def close(self) -> list[str]:
        self.proc.terminate()
        self.proc.wait(5)
        return self.lines


def journal(daemon: Daemon) -> list[dict]:
    with open(daemon.journal_path) as f:
        return sorted(json.load(f)["attachments"], key=lambda r: (r["container_id"], r["ifname"]))


def test_upgrade_with_pods_holding_ports_changes_nothing(fabric):
    old_binary = os.environ.get("ROCENET_OLD_ROCENETD")
    print(f"old rocenetd: {old_binary or 'the same binary (restart)'}")
    old = OldDaemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}"])
    pods = [f"{fabric.name}-poda", f"{fabric.name}-podb"]
    for ns in pods:
        subprocess.run(["ip", "netns", "add", ns], check=True)
    new = None
    try:
        old.start()
        wait_until(old.ready, 15, what="node ready")
        cni = Cni(old)
        ids = {p["name"]: p["id"] for p in old.ports()}
        holds = [("a", pods[0], "net1", "so0"), ("a", pods[0], "net2", "so1"),
                 ("b", pods[1], "net1", "so2")]
        results = {}
        for container, ns, ifname, port in holds:
            rc, out = cni.run("ADD", container, f"/run/netns/{ns}", ifname,
                              cni.conf(deviceID=ids[port]))
            assert rc == 0, out
            results[(container, ifname)] = out
        for _container, ns, ifname, _ in holds:
            wait_until(lambda: ip_json(ns, "link", "show", ifname)[0]["operstate"] == "UP", 5,
                       what=f"{ifname} up in {ns}")
        # Let everything settle (LLDP inside the pods, the host's own port).
        time.sleep(2.5)
        before = all_namespaces_state(fabric)
        journal_before = journal(old)
        monitors = {ns: Monitor(ns) for ns in before}
        time.sleep(0.3)

        assert old.stop() == 0, old.log()
        new = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}"],
                     workdir=old.workdir, runtime_dir=old.runtime_dir)
        t0 = time.monotonic()
        new.start()
        wait_until(new.ready, 15, what="node ready after the upgrade")
        ready_after = time.monotonic() - t0
        # Long enough for LLDP to be heard again everywhere and for the
        # checks that follow attachments (pod namespaces, addressing) to run.
        time.sleep(3.0)
        events = {ns: m.close() for ns, m in monitors.items()}
        after = all_namespaces_state(fabric)
        print(f"new rocenetd ready {ready_after:.2f} s after start")

        assert {ns: e for ns, e in events.items() if e} == {}
        for ns in before:
            assert after[ns] == before[ns], ns
        assert journal(new) == journal_before

        # The new daemon reports the attachments as they are.
        attached = {p["name"]: p.get("attached_to") for p in new.ports()}
        for _container, ns, _ifname, port in holds:
            assert attached[port] == f"/run/netns/{ns}", attached
        assert attached["so3"] in (None, "")
        cni = Cni(new)
        for container, ns, ifname, _ in holds:
            rc, out = cni.run("CHECK", container, f"/run/netns/{ns}", ifname,
                              {**cni.conf(), "prevResult": results[(container, ifname)]})
            assert rc == 0, out
        for container, ns, ifname, _port in holds:
            rc, out = cni.run("DEL", container, f"/run/netns/{ns}", ifname, cni.conf())
            assert rc == 0, out
        wait_until(new.ready, 15, what="node ready with every port home")
    finally:
        (new or old).cleanup()
        for ns in pods:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
