# SPDX-License-Identifier: Apache-2.0
"""Process, namespace and command helpers shared by the simulated fabric
(fabric.py), its sysfs follower and the multi-node cluster (cluster.py).

Kept apart from fabric.py so that the small helper processes (the sysfs
follower, the LLDP capture) import only what they use.  Python stdlib only.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

NAME_RE = re.compile(r"^[A-Za-z0-9_]{1,24}$")


class FabricError(Exception):
    """A fabric operation failed (exit code 1 on the command line)."""


class UsageError(FabricError):
    """Bad input (exit code 2 on the command line)."""


def log(msg: str) -> None:
    print(f"fabric: {msg}", file=sys.stderr, flush=True)


def check_name(name: str) -> None:
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise UsageError(
            f"invalid fabric name {name!r}: use 1-24 characters from "
            "[A-Za-z0-9_] ('-' separates the name from the namespace role)"
        )


def unique_name(prefix: str = "rn") -> str:
    """A short fabric name unlikely to clash: prefix + 6 hex characters."""
    name = prefix + secrets.token_hex(3)
    check_name(name)
    return name


def run(
    argv: Sequence[str],
    *,
    input: str | None = None,
    check: bool = True,
    timeout: float = 60,
) -> subprocess.CompletedProcess:
    """subprocess.run with text output captured; FabricError on failure."""
    try:
        cp = subprocess.run(
            list(argv),
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=None if input is not None else subprocess.DEVNULL,
        )
    except FileNotFoundError as e:
        raise FabricError(f"{argv[0]}: not found ({e})") from None
    except subprocess.TimeoutExpired:
        raise FabricError(f"timed out after {timeout}s: {' '.join(argv)}") from None
    if check and cp.returncode != 0:
        msg = (cp.stderr or cp.stdout or "").strip()
        raise FabricError(f"command failed ({cp.returncode}): {' '.join(argv)}: {msg}")
    return cp


def ip_batch(cmds: Iterable[str], netns: str | None = None, force: bool = False) -> None:
    """Run iproute2 commands in one 'ip -batch' (one process, not one per command)."""
    lines = [c for c in cmds if c]
    if not lines:
        return
    argv = ["ip"]
    if netns:
        argv += ["-n", netns]
    if force:
        argv.append("-force")
    argv += ["-batch", "-"]
    run(argv, input="\n".join(lines) + "\n", check=not force)


def ip_links(netns: str) -> list[dict]:
    """'ip -j -d link show' of a namespace; [] if the namespace is gone."""
    cp = run(["ip", "-j", "-d", "-n", netns, "link", "show"], check=False)
    if cp.returncode != 0:
        return []
    return json.loads(cp.stdout or "[]")


def write_json_atomic(path: str, data: Any) -> None:
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=2, sort_keys=False)
        f.write("\n")
    os.replace(tmp, path)


def netns_list() -> list[str]:
    try:
        return sorted(os.listdir("/run/netns"))
    except FileNotFoundError:
        return []


def netns_exists(ns: str) -> bool:
    return os.path.exists(os.path.join("/run/netns", ns))


def proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, starttime) of a pid, or None if it does not exist."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    rest = data[data.rfind(")") + 2 :].split()
    return rest[0], int(rest[19])


def proc_comm(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return None


def proc_cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def pid_alive(pid: int | None, starttime: int | None = None) -> bool:
    """True if pid runs (not a zombie) and, given starttime, is still the same process."""
    if not pid:
        return False
    st = proc_stat(pid)
    if st is None or st[0] in ("Z", "X", "x"):
        return False
    if starttime is not None and st[1] != starttime:
        return False  # pid reused
    return True


def pids_in_netns(ns: str) -> list[int]:
    """Live processes whose network namespace is the named netns."""
    try:
        ref = os.stat(os.path.join("/run/netns", ns))
    except FileNotFoundError:
        return []
    me = os.getpid()
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == me:
            continue
        try:
            st = os.stat(f"/proc/{d}/ns/net")
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == (ref.st_dev, ref.st_ino) and pid_alive(int(d)):
            out.append(int(d))
    return out


def send_signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def terminate(pids: Iterable[int], timeout: float, reap: Callable[[], None] | None = None) -> list[int]:
    """SIGTERM, wait up to timeout, SIGKILL. Returns pids that needed SIGKILL."""
    pids = [p for p in pids if pid_alive(p)]
    starts = {p: st[1] for p in pids if (st := proc_stat(p))}
    for p in pids:
        send_signal(p, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if reap:
            reap()
        if not any(pid_alive(p, starts.get(p)) for p in pids):
            return []
        time.sleep(0.05)
    killed = [p for p in pids if pid_alive(p, starts.get(p))]
    for p in killed:
        send_signal(p, signal.SIGKILL)
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline and any(pid_alive(p, starts.get(p)) for p in killed):
        if reap:
            reap()
        time.sleep(0.05)
    return killed
