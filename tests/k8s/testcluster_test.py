# SPDX-License-Identifier: Apache-2.0
"""The teardown of the pods' cgroups (hostcleanup.py) on fake cgroupfs trees in
a temporary directory: cgroup v1 as on the machines the end-to-end tests
run on (a hierarchy per controller, cpu and cpuacct links to one, the v2
hierarchy beside them as `unified`), and cgroup v2 alone, Debian 12's
default (one hierarchy, cgroup.controllers at its root, cgroup.kill in each
cgroup). The kernel's side is played by two stand-ins: kill() records the
pids it is asked to kill, and rmdir() removes a directory as cgroupfs does
(its interface files with it, but not while a child cgroup is left)."""

from __future__ import annotations

import errno
import os
import signal
import subprocess

import pytest

import hostcleanup as k8s


def cgroup(root, path: str, pids: tuple[int, ...] = (), kill_file: bool = False) -> None:
    """A cgroup at root/path (its parents made too) with `pids` in it."""
    d = root / path
    d.mkdir(parents=True, exist_ok=True)
    (d / "cgroup.procs").write_text("".join(f"{p}\n" for p in pids))
    if kill_file:
        (d / "cgroup.kill").write_text("")


class Kernel:
    def __init__(self, busy: tuple[str, ...] = ()):
        self.killed: list[int] = []
        self.removed: list[str] = []
        self.busy = busy

    def kill(self, pid: int, sig: int) -> None:
        assert sig == signal.SIGKILL
        self.killed.append(pid)

    def rmdir(self, path: str) -> None:
        if any(path.endswith(b) for b in self.busy):
            raise OSError(errno.EBUSY, os.strerror(errno.EBUSY), path)
        for entry in os.scandir(path):
            if entry.is_file():
                os.remove(entry.path)
        os.rmdir(path)  # ENOTEMPTY while a child cgroup is there, as cgroupfs
        self.removed.append(path)


def remove(root, kernel: Kernel) -> list[str]:
    return k8s.remove_cgroups(str(root), timeout=0, kill=kernel.kill, rmdir=kernel.rmdir)


def assert_children_first(removed: list[str]) -> None:
    for i, path in enumerate(removed):
        assert not [p for p in removed[i + 1:] if p.startswith(path + os.sep)], removed


def test_cgroup_v2_kills_the_subtree_and_removes_kubepods_bottom_up(tmp_path):
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    cgroup(tmp_path, "kubepods", kill_file=True)
    cgroup(tmp_path, "kubepods/besteffort/pod-a/c1", (101, 102), kill_file=True)
    cgroup(tmp_path, "kubepods/burstable/pod-b", (201,), kill_file=True)
    cgroup(tmp_path, "kubepods/burstable/pod-b/c2", (202,), kill_file=True)
    cgroup(tmp_path, "system.slice/ssh.service", (1, 2), kill_file=True)
    assert k8s.pod_cgroups(str(tmp_path)) == [os.path.realpath(tmp_path / "kubepods")]
    kernel = Kernel()
    # cgroup.kill is written before the tree goes: read it on the way.
    written = []
    real_rmdir = kernel.rmdir

    def rmdir(path):
        if path == str(tmp_path / "kubepods"):
            written.append((tmp_path / "kubepods" / "cgroup.kill").read_text())
        real_rmdir(path)
    kernel.rmdir = rmdir
    assert remove(tmp_path, kernel) == []
    assert written == ["1"]
    assert sorted(kernel.killed) == [101, 102, 201, 202]
    assert_children_first(kernel.removed)
    assert not (tmp_path / "kubepods").exists()
    assert (tmp_path / "system.slice" / "ssh.service" / "cgroup.procs").exists()


def test_cgroup_v1_handles_every_hierarchy_once_and_the_unified_one_beside_them(tmp_path):
    for hierarchy in ("cpu,cpuacct", "memory", "pids", "systemd"):
        cgroup(tmp_path, f"{hierarchy}/kubepods/besteffort/pod-a/c1", (101,))
    (tmp_path / "cpu").symlink_to("cpu,cpuacct")
    (tmp_path / "cpuacct").symlink_to("cpu,cpuacct")
    (tmp_path / "unified").mkdir()
    (tmp_path / "unified" / "cgroup.controllers").write_text("")
    cgroup(tmp_path, "unified/kubepods/besteffort/pod-a/c1", (101,), kill_file=True)
    cgroup(tmp_path, "memory/other", (7,))
    tops = k8s.pod_cgroups(str(tmp_path))
    assert sorted(os.path.relpath(t, os.path.realpath(tmp_path)) for t in tops) == [
        "cpu,cpuacct/kubepods", "memory/kubepods", "pids/kubepods", "systemd/kubepods",
        "unified/kubepods"]
    kernel = Kernel()
    assert remove(tmp_path, kernel) == []
    assert kernel.killed == [101]
    assert_children_first(kernel.removed)
    assert len(kernel.removed) == 5 * 4
    for hierarchy in ("cpu,cpuacct", "memory", "pids", "systemd", "unified"):
        assert not (tmp_path / hierarchy / "kubepods").exists()
    assert (tmp_path / "memory" / "other").exists()


def test_a_cgroup_that_will_not_go_is_reported_and_the_others_still_go(tmp_path):
    (tmp_path / "cgroup.controllers").write_text("")
    cgroup(tmp_path, "kubepods/besteffort/pod-a/c1", (101,))
    cgroup(tmp_path, "kubepods/besteffort/pod-b/c2", (102,))
    left = remove(tmp_path, Kernel(busy=("pod-a/c1",)))
    # c1 stays, and so do its parents; pod-b's branch is gone.
    stayed = ("kubepods/besteffort/pod-a/c1", "kubepods/besteffort/pod-a", "kubepods/besteffort",
              "kubepods")
    assert [line.split(": ")[0] for line in left] == [
        os.path.realpath(tmp_path / p) for p in stayed]
    assert "Device or resource busy" in left[0]
    assert not (tmp_path / "kubepods" / "besteffort" / "pod-b").exists()


@pytest.mark.parametrize("v2", [False, True])
def test_no_kubepods_no_kill(tmp_path, v2):
    if v2:
        (tmp_path / "cgroup.controllers").write_text("")
    else:
        (tmp_path / "memory").mkdir()
    cgroup(tmp_path, "other", (1,))
    kernel = Kernel()
    assert k8s.pod_cgroups(str(tmp_path)) == []
    assert remove(tmp_path, kernel) == []
    assert kernel.killed == [] and kernel.removed == []


@pytest.mark.parametrize("v2", [False, True])
def test_a_nodes_own_cgroup_goes_after_its_pods(tmp_path, v2):
    """A node other than node 0 puts its pods under a cgroup of its own:
    its kubepods are found there, not at the top (another node's), and
    the node's cgroup itself goes last."""
    hierarchies = [""] if v2 else ["memory", "pids"]
    if v2:
        (tmp_path / "cgroup.controllers").write_text("")
    for h in hierarchies:
        cgroup(tmp_path, os.path.join(h, "kubepods", "pod-top"), (7,))
        cgroup(tmp_path, os.path.join(h, "rocenet-k8s-n1", "kubepods", "pod-x"), (42,))
    kernel = Kernel()
    left = k8s.remove_cgroups(str(tmp_path), timeout=0, kill=kernel.kill, rmdir=kernel.rmdir,
                              parent="rocenet-k8s-n1")
    assert left == []
    assert set(kernel.killed) == {42}, "node 0's pods are not this node's"
    for h in hierarchies:
        assert not (tmp_path / h / "rocenet-k8s-n1").exists()
        assert (tmp_path / h / "kubepods" / "pod-top").exists()
    assert kernel.removed[-1].endswith("rocenet-k8s-n1")


def test_the_addons_are_stopped_and_the_named_programs_left_to_their_order():
    """down() stops the programs it knows in their order; every other
    program of the record (an addon: the JobSet controller) goes too."""
    addon = subprocess.Popen(["sleep", "60"])
    known = subprocess.Popen(["sleep", "60"])
    try:
        stopped = k8s.stop_others({"jobset-controller": addon.pid, "kube-apiserver": known.pid},
                                  {"kube-apiserver"})
        assert stopped == ["jobset-controller"]
        # Reaped by stop_others (its child here): gone.
        with pytest.raises(ProcessLookupError):
            os.kill(addon.pid, 0)
        assert known.poll() is None, "a program down() stops in its own order was stopped"
    finally:
        for p in (addon, known):
            p.kill()
            p.wait()
