# SPDX-License-Identifier: Apache-2.0
"""What a test cluster leaves on the host, found and put back: its
processes (by pid, and those naming its sockets), mounts under its
directories, the iptables chains its kubelet made in a node's network
namespace, and its pods' cgroups and whatever still runs in them."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time

CGROUP_ROOT = "/sys/fs/cgroup"


def stop_process(pid: int, timeout: float = 10) -> None:
    """SIGTERM, as a service manager stops a program, then SIGKILL after
    `timeout`; reaped if it is our child."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        reap(pid)
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    reap(pid)


def stop_others(pids: dict[str, int], known: set[str]) -> list[str]:
    """Stops every program of `pids` (name -> pid) not named in `known`
    (the addons a cluster ran: their own order does not matter); returns
    their names."""
    others = sorted(name for name in pids if name not in known)
    for name in others:
        stop_process(pids[name])
    return others


def reap(pid: int) -> None:
    """Collects our child `pid` if it has exited (else a no-op)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def processes_mentioning(text: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if text.encode() in f.read():
                    pids.append(int(entry))
        except OSError:
            continue
    return pids


def mounts_under(prefixes: tuple[str, ...]) -> list[str]:
    points = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            point = line.split()[4].replace("\\040", " ")
            if any(point == p or point.startswith(p + "/") for p in prefixes):
                points.append(point)
    return sorted(set(points), key=len, reverse=True)


IPTABLES = ("iptables", "ip6tables")
IPTABLES_TABLES = ("filter", "nat", "mangle")


def _in(netns: str) -> list[str]:
    return ["ip", "netns", "exec", netns]


def chains_of(netns: str) -> dict[str, list[str]]:
    """The chains of every table in `netns`, by "tool table"."""
    out = {}
    for tool in IPTABLES:
        for table in IPTABLES_TABLES:
            cp = subprocess.run([*_in(netns), tool, "-t", table, "-S"], capture_output=True,
                                text=True)
            out[f"{tool} {table}"] = [line.split()[1] for line in cp.stdout.splitlines()
                                     if line.startswith("-N ")]
    return out


def remove_chains(netns: str, before: dict[str, list[str]]) -> None:
    """Removes the chains the kubelet made in `netns` (KUBE-FIREWALL, the
    canaries...) and the rules that jump to them, leaving every other rule
    alone."""
    for key, chains in chains_of(netns).items():
        tool, table = key.split()
        new = [c for c in chains if c not in before.get(key, [])]
        if not new:
            continue
        do = [*_in(netns), tool, "-t", table]
        cp = subprocess.run([*do, "-S"], capture_output=True, text=True)
        for line in cp.stdout.splitlines():
            words = line.split()
            if words[0] == "-A" and "-j" in words and words[words.index("-j") + 1] in new:
                subprocess.run([*do, "-D", *words[1:]], capture_output=True)
        for chain in new:
            subprocess.run([*do, "-F", chain], capture_output=True)
        for chain in new:
            subprocess.run([*do, "-X", chain], capture_output=True)


def hierarchies(root: str = CGROUP_ROOT) -> list[str]:
    """The cgroup hierarchies under `root`: `root` itself on cgroup v2
    alone (it holds cgroup.controllers), else each directory in it (v1's
    controllers, and v2's `unified` in the hybrid layout), one under two
    names (v1's cpu and cpuacct link to cpu,cpuacct) listed once."""
    if os.path.exists(os.path.join(root, "cgroup.controllers")):
        return [root]
    tops = []
    for h in sorted(os.listdir(root)):
        real = os.path.realpath(os.path.join(root, h))
        if os.path.isdir(real) and real not in tops:
            tops.append(real)
    return tops


def pod_cgroups(root: str = CGROUP_ROOT, parent: str = "") -> list[str]:
    """The kubepods cgroup of every hierarchy under `root` that has one.
    The kubelet (cgroupfs driver) makes `kubepods` under its cgroup root
    (`parent`, the top by default) in each hierarchy its containers join:
    on cgroup v2 (unified: `root` is the one hierarchy and holds
    cgroup.controllers) that is `root`/kubepods; on v1 each controller's
    hierarchy has its own, and so has the v2 hierarchy mounted beside them
    in the hybrid layout (`root`/unified). A hierarchy mounted under two
    names (v1's cpu and cpuacct link to cpu,cpuacct) is listed once."""
    if os.path.exists(os.path.join(root, "cgroup.controllers")):
        candidates = [os.path.join(root, parent, "kubepods")]
    else:
        candidates = [os.path.join(root, h, parent, "kubepods") for h in sorted(os.listdir(root))]
    tops = []
    for top in candidates:
        real = os.path.realpath(top)
        if os.path.isdir(real) and real not in tops:
            tops.append(real)
    return tops


def kill_pod_processes(root: str = CGROUP_ROOT, timeout: float = 10, kill=os.kill,
                       parent: str = "") -> None:
    """Kills what still runs in the pods' cgroups (kubepods, made by this
    cluster's kubelet alone: up refuses a machine where another ran): after
    a run killed midway, or a shim killed before its container, a
    container's processes outlive containerd and would hold on to the
    node's sockets and namespace. On cgroup v2 the kernel kills the whole
    subtree at once (cgroup.kill, Linux 5.14), what forks meanwhile
    included; every process listed in a cgroup.procs is killed too, which is
    all that v1 (and an older kernel) offers."""
    pids = set()
    for top in pod_cgroups(root, parent):
        whole = os.path.join(top, "cgroup.kill")
        if os.path.exists(whole):
            try:
                with open(whole, "w") as f:
                    f.write("1")
            except OSError:
                pass
        for path, _, files in os.walk(top):
            if "cgroup.procs" in files:
                try:
                    with open(os.path.join(path, "cgroup.procs")) as f:
                        pids.update(int(line) for line in f if line.strip())
                except OSError:
                    pass
    for pid in pids:
        try:
            kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") for p in pids):
        time.sleep(0.1)


def remove_cgroups(root: str = CGROUP_ROOT, timeout: float = 10, kill=os.kill,
                   rmdir=os.rmdir, parent: str = "") -> list[str]:
    """Kills the pods' processes and removes their cgroups, children before
    their parents (a cgroup with a child or a process in it cannot be
    removed, on v1 and v2 alike; its interface files go with it), and then
    `parent` itself, a cgroup of the kubelet's own. Returns the cgroups
    that would not go, each with the reason."""
    kill_pod_processes(root, timeout, kill, parent)
    left = []
    for top in pod_cgroups(root, parent):
        for path, _, _ in os.walk(top, topdown=False):
            try:
                rmdir(path)
            except OSError as e:
                left.append(f"{path}: {e.strerror}")
    if parent:
        for top in hierarchies(root):
            path = os.path.join(top, parent)
            if os.path.isdir(path):
                try:
                    rmdir(path)
                except OSError as e:
                    left.append(f"{path}: {e.strerror}")
    return left


def keep_logs(logs: str, to: str) -> None:
    """Copies the components' logs to `to`; what cannot be copied is said in
    `to`/NOT-KEPT.txt, and nothing here raises: the logs are kept because
    something failed already."""
    try:
        os.makedirs(to, exist_ok=True)
        for name in sorted(os.listdir(logs)):
            shutil.copy(os.path.join(logs, name), os.path.join(to, name))
    except OSError as e:
        try:
            with open(os.path.join(to, "NOT-KEPT.txt"), "a") as f:
                f.write(f"the components' logs from {logs}: {e}\n")
        except OSError:
            pass
