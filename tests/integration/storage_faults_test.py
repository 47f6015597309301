# SPDX-License-Identifier: Apache-2.0
"""A full or read-only runtime directory (where the attachment journal is
written ahead of every move), with the real binaries on a simulated fabric:
ADD is refused with CNI code 11 and a message naming the directory and the
reason, and nothing changes; DEL of an existing attachment fails the same
clean way; once there is room again, ADD and DEL work. A full or read-only
state directory (the host addressing record) stops neither."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile

import pytest
from cni_test import Cni, all_namespaces_state, ip_json
from faults_test import check_invariant, delete_pods, make_pods, release

from harness import Daemon, wait_until


@pytest.fixture(scope="module")
def fabric(fabrics):
    return fabrics("hfs", ports=4)


def port_states(daemon: Daemon) -> list[dict]:
    ports = json.loads(daemon.rocectl("ports", "-o", "json", check=True).stdout)["ports"]
    return [{k: v for k, v in p.items() if k != "counters"} for p in ports]


class TinyMount:
    """A tiny tmpfs, to fill up or to remount read-only."""

    def __init__(self, path: str):
        self.path = path
        os.makedirs(path, mode=0o700, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k,mode=0700", "hf-tiny", path],
                       check=True)
        self.filler = os.path.join(path, "filler")

    def break_it(self, fault: str) -> str:
        """Fills it or makes it read-only; returns the kernel's words for it."""
        if fault == "read-only":
            subprocess.run(["mount", "-o", "remount,ro", self.path], check=True)
            return "Read-only file system"
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while True:
                os.write(fd, b"\0" * 512)
        except OSError:
            pass
        finally:
            os.close(fd)
        return "No space left on device"

    def mend(self, fault: str) -> None:
        if fault == "read-only":
            subprocess.run(["mount", "-o", "remount,rw", self.path], check=True)
        elif os.path.exists(self.filler):
            os.unlink(self.filler)

    def unmount(self) -> None:
        subprocess.run(["umount", "-l", self.path], capture_output=True)


@pytest.mark.parametrize("fault", ["full", "read-only"])
def test_journal_directory_full_or_read_only(fabric, fault):
    """The runtime directory holds the attachment journal, written ahead of
    every move: when it cannot be written, ADD and DEL are refused (try again
    later) and change nothing; once it can, they work."""
    workdir = tempfile.mkdtemp(prefix="rocenetd-hff-")
    tiny = TinyMount(os.path.join(workdir, "runtime"))
    daemon = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}"], workdir=workdir,
                    runtime_dir=tiny.path)
    pods = make_pods(fabric, "r" + fault[0], 2)
    netns = [f"/run/netns/{ns}" for ns in pods]
    try:
        daemon.start()
        wait_until(daemon.ready, 15, what="node ready")
        cni = Cni(daemon)
        ports = {p["name"]: p["id"] for p in daemon.ports()}
        rc, held = cni.run("ADD", "held", netns[0], "net1", cni.conf(deviceID=ports["so0"]))
        assert rc == 0, held
        wait_until(lambda: ip_json(pods[0], "link", "show", "net1")[0]["operstate"] == "UP", 5,
                   what="the held port up in its pod")
        # rocenetd reads the port inside the pod on its own schedule: the
        # listing compared below is taken once it has seen the port up too.
        wait_until(lambda: next(p for p in port_states(daemon) if p["name"] == "so0")[
            "oper_state"] == "OPER_STATE_UP", 10, what="rocenetd seeing the held port up")

        reason = tiny.break_it(fault)
        before = all_namespaces_state(fabric)
        listing = port_states(daemon)

        # ADD is refused: try again later, naming the journal's directory and why.
        rc, out = cni.run("ADD", "refused", netns[1], "net1", cni.conf(deviceID=ports["so1"]))
        assert rc == 1, out
        assert out["code"] == 11, out
        assert tiny.path in out["msg"], out
        assert reason in out["msg"], out
        rc, out = cni.run("ADD", "refused", netns[1], "net2", cni.conf())
        assert rc == 1 and out["code"] == 11, out
        # DEL of what is attached cannot be recorded either: it fails the
        # same way and leaves the port where it is, still working.
        rc, out = cni.run("DEL", "held", netns[0], "net1", cni.conf())
        assert rc == 1 and out["code"] == 11, out
        assert reason in out["msg"], out
        # DEL of what never was attached needs no record: it succeeds.
        rc, out = cni.run("DEL", "refused", netns[1], "net1", cni.conf())
        assert rc == 0, out
        assert all_namespaces_state(fabric) == before
        assert port_states(daemon) == listing
        rc, out = cni.run("CHECK", "held", netns[0], "net1", {**cni.conf(), "prevResult": held})
        assert rc == 0, out

        # Room again: everything works.
        tiny.mend(fault)
        rc, out = cni.run("ADD", "refused", netns[1], "net1", cni.conf(deviceID=ports["so1"]))
        assert rc == 0, out
        for container, ns in (("held", netns[0]), ("refused", netns[1])):
            rc, out = cni.run("DEL", container, ns, "net1", cni.conf())
            assert rc == 0, out
        check_invariant(fabric, daemon, pods)
        wait_until(daemon.ready, 15, what="node ready")
    finally:
        tiny.mend(fault)
        release(daemon, [("held", netns[0]), ("refused", netns[1])], ("net1", "net2"))
        daemon.stop()
        tiny.unmount()
        delete_pods(pods)
        subprocess.run(["rm", "-rf", workdir])


@pytest.mark.parametrize("fault", ["full", "read-only"])
def test_state_directory_full_or_read_only(fabric, fault):
    """The state directory holds the record of the host addressing: when it
    cannot be written, pods still get their ports and give them back, and a
    port that comes home is addressed again."""
    workdir = tempfile.mkdtemp(prefix="rocenetd-hff-")
    tiny = TinyMount(os.path.join(workdir, "state"))
    daemon = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}"], workdir=workdir)
    pods = make_pods(fabric, "s" + fault[0], 1)
    try:
        daemon.start()
        wait_until(daemon.ready, 15, what="node ready")
        tiny.break_it(fault)
        cni = Cni(daemon)
        netns = f"/run/netns/{pods[0]}"
        for ifname in ("net1", "net2"):
            rc, out = cni.run("ADD", "pod", netns, ifname, cni.conf())
            assert rc == 0, out
        for ifname in ("net1", "net2"):
            rc, out = cni.run("DEL", "pod", netns, ifname, cni.conf())
            assert rc == 0, out
        check_invariant(fabric, daemon, pods)
        wait_until(daemon.ready, 15, what="node ready")
    finally:
        tiny.mend(fault)
        release(daemon, [("pod", f"/run/netns/{pods[0]}")], ("net1", "net2"))
        daemon.stop()
        tiny.unmount()
        delete_pods(pods)
        subprocess.run(["rm", "-rf", workdir])
