#!/usr/bin/env python3
"""Simulated RoCE scale-out fabric for rocenet tests and demos.

A fabric NAME is made of:

* two network namespaces, ``NAME-node`` (the worker node, where rocenetd
  runs) and ``NAME-sw`` (the leaf switch);
* one veth pair per scale-out port: ``so<i>`` in the node namespace,
  ``swp<i+1>`` in the switch namespace;
* the real lldpd running in the switch namespace, advertising on each switch
  port a Port ID ``Ethernet1/<i+1>`` (subtype local) and a Port Description
  ``no-alert <switch_ip>/30``;
* a fake sysfs tree (``<state_dir>/sysfs``) in which the host ends look like
  Gaudi 2 scale-out ports of PCI devices bound to ``habanalabs``;
* ``<state_dir>/fabric.json`` describing all of the above.

Usable as a module (``Fabric``, ``unique_name``) and as a command line tool
(``fabric.py --help``).  Needs root, iproute2 and lldpd; Python stdlib only.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import ipaddress
import json
import os
import re
import secrets
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from typing import Any, Callable, Iterable, Mapping, Sequence

__all__ = [
    "Fabric",
    "FabricError",
    "UsageError",
    "LldpCapture",
    "unique_name",
    "parse_description",
    "default_state_dir",
]

STATE_VERSION = 1
DEFAULT_BASE = os.environ.get("ROCENET_SIM_ROOT", "/tmp/rocenet-sim")
MARKER = ".rocenet-sim"
STATE_FILE = "fabric.json"
LLDPD_CHROOT = "/run/lldpd"  # compiled into Debian's lldpd; shared by all instances

HABANA_VENDOR = "0x1da3"
GAUDI2_DEVICE = "0x1020"
GAUDI2_PCI_CLASS = "0x120000"  # processing accelerator
GAUDI2_SCALE_OUT_PORTS = (8, 22, 23)
DRIVER = "habanalabs"

MAX_PORTS = 255  # default switch IPs are 10.200.<i+1>.2
MAX_DESCRIPTION = 255  # LLDP Port Description TLV limit
NAME_RE = re.compile(r"^[A-Za-z0-9_]{1,24}$")
CIDR_RE = re.compile(r"^(\d{1,3}(?:\.\d{1,3}){3})/(\d{1,2})$")

LLDP_ETHERTYPE = 0x88CC
LLDPD_READY_TIMEOUT = 15.0
LLDPD_STOP_TIMEOUT = 5.0


class FabricError(Exception):
    """A fabric operation failed (exit code 1 on the command line)."""


class UsageError(FabricError):
    """Bad input (exit code 2 on the command line)."""


# --------------------------------------------------------------------------
# small helpers


def _log(msg: str) -> None:
    print(f"fabric: {msg}", file=sys.stderr, flush=True)


def unique_name(prefix: str = "rn") -> str:
    """A short fabric name unlikely to clash: prefix + 6 hex characters."""
    name = prefix + secrets.token_hex(3)
    _check_name(name)
    return name


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise UsageError(
            f"invalid fabric name {name!r}: use 1-24 characters from "
            "[A-Za-z0-9_] ('-' separates the name from the namespace role)"
        )


def default_state_dir(name: str) -> str:
    return os.path.join(DEFAULT_BASE, name)


def _run(
    argv: Sequence[str],
    *,
    input: str | None = None,
    check: bool = True,
    timeout: float = 60,
) -> subprocess.CompletedProcess:
    try:
        cp = subprocess.run(
            list(argv),
            input=input,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
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


def _ip_batch(cmds: Iterable[str], netns: str | None = None, force: bool = False) -> None:
    lines = [c for c in cmds if c]
    if not lines:
        return
    argv = ["ip"]
    if netns:
        argv += ["-n", netns]
    if force:
        argv.append("-force")
    argv += ["-batch", "-"]
    _run(argv, input="\n".join(lines) + "\n", check=not force)


def _write(path: str, content: str) -> None:
    with open(path, "w") as f:
        f.write(content if content.endswith("\n") else content + "\n")


def _write_json_atomic(path: str, data: Any) -> None:
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=2, sort_keys=False)
        f.write("\n")
    os.replace(tmp, path)


def _relsymlink(target: str, link: str, rel: str | None = None) -> None:
    """Create link -> target with a relative path, like real sysfs.

    rel: the relative spelling to use (must resolve to target), for links
    the kernel spells with a detour, e.g. net/eth0/device -> ../../../<pci>.
    """
    os.makedirs(os.path.dirname(link), exist_ok=True)
    if rel is None:
        rel = os.path.relpath(target, os.path.dirname(link))
    elif os.path.normpath(os.path.join(os.path.dirname(link), rel)) != os.path.normpath(target):
        raise AssertionError(f"{link} -> {rel} does not resolve to {target}")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(link)
    os.symlink(rel, link)


def _netns_list() -> list[str]:
    try:
        return sorted(os.listdir("/run/netns"))
    except FileNotFoundError:
        return []


def _netns_exists(ns: str) -> bool:
    return os.path.exists(os.path.join("/run/netns", ns))


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, starttime) of a pid, or None if it does not exist."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    rest = data[data.rfind(")") + 2 :].split()
    return rest[0], int(rest[19])


def _proc_comm(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return None


def _pid_alive(pid: int | None, starttime: int | None = None) -> bool:
    if not pid:
        return False
    st = _proc_stat(pid)
    if st is None or st[0] in ("Z", "X", "x"):
        return False
    if starttime is not None and st[1] != starttime:
        return False  # pid reused
    return True


def _pids_in_netns(ns: str) -> list[int]:
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
        if (st.st_dev, st.st_ino) == (ref.st_dev, ref.st_ino) and _pid_alive(int(d)):
            out.append(int(d))
    return out


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def _terminate(pids: Iterable[int], timeout: float, reap: Callable[[], None] | None = None) -> list[int]:
    """SIGTERM, wait up to timeout, SIGKILL. Returns pids that needed SIGKILL."""
    pids = [p for p in pids if _pid_alive(p)]
    starts = {p: _proc_stat(p)[1] for p in pids if _proc_stat(p)}
    for p in pids:
        _signal(p, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if reap:
            reap()
        if not any(_pid_alive(p, starts.get(p)) for p in pids):
            return []
        time.sleep(0.05)
    killed = [p for p in pids if _pid_alive(p, starts.get(p))]
    for p in killed:
        _signal(p, signal.SIGKILL)
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline and any(_pid_alive(p, starts.get(p)) for p in killed):
        if reap:
            reap()
        time.sleep(0.05)
    return killed


# --------------------------------------------------------------------------
# addressing and naming


def parse_description(text: str) -> dict:
    """What the switch end owns for a Port Description.

    Returns switch_ip, prefix_len, expected_local_ip (each possibly None) and
    switch_ip_assigned (whether the switch end gets the address).  The
    address is the description's last whitespace-separated token if it is
    A.B.C.D/N; the node side takes the other host of a /30 (XOR 3) or /31
    (XOR 1).
    """
    res = {"switch_ip": None, "prefix_len": None, "expected_local_ip": None, "switch_ip_assigned": False}
    tokens = text.split()
    if not tokens:
        return res
    m = CIDR_RE.match(tokens[-1])
    if not m:
        return res
    try:
        ip = ipaddress.IPv4Address(m.group(1))
    except ValueError:
        return res
    plen = int(m.group(2))
    if plen > 32:
        return res
    res["switch_ip"] = str(ip)
    res["prefix_len"] = plen
    n = int(ip)
    if plen == 30 and (n & 3) in (1, 2):
        res["expected_local_ip"] = str(ipaddress.IPv4Address(n ^ 3))
    elif plen == 31:
        res["expected_local_ip"] = str(ipaddress.IPv4Address(n ^ 1))
    res["switch_ip_assigned"] = bool(
        plen >= 1
        and not (ip.is_multicast or ip.is_unspecified or ip.is_loopback or ip.is_reserved)
    )
    return res


def default_description(index: int) -> str:
    return f"no-alert 10.200.{index + 1}.2/30"


def _check_description(text: Any) -> str:
    if not isinstance(text, str):
        raise UsageError(f"description must be a string, not {type(text).__name__}")
    if text == "" or text.isspace():
        raise UsageError("empty description: lldpd cannot advertise an empty Port Description")
    if any(c in text for c in "\n\r\0"):
        raise UsageError("description must not contain newline, carriage return or NUL")
    if len(text.encode()) > MAX_DESCRIPTION:
        raise UsageError(f"description longer than {MAX_DESCRIPTION} bytes")
    return text


def _mac(name: str, kind: int, index: int) -> str:
    h = hashlib.sha256(name.encode()).digest()[0]
    return f"02:5e:{kind:02x}:{h:02x}:{index >> 8:02x}:{index & 0xFF:02x}"


def _module_layout(m: int) -> dict:
    v = 0x19 + 0x10 * m  # 0x19, 0x29, ... past 0xff continues in PCI domain 1, 2, ...
    domain, bus = v >> 8, v & 0xFF
    root = bus - 2
    pci = f"{domain:04x}:{bus:02x}:00.0"
    pcie_root = f"pci{domain:04x}:{root:02x}"
    bridge = f"{domain:04x}:{root:02x}:01.0"
    return {
        "module_id": m,
        "pci_address": pci,
        "pcie_root": pcie_root,
        "pcie_bridge": bridge,
        "device_dir": f"devices/{pcie_root}/{bridge}/{pci}",
        "accel": f"accel{m}",
    }


def _numa_for_module(m: int, initial_modules: int) -> int:
    if m < initial_modules:
        return 0 if m < (initial_modules + 1) // 2 else 1
    return 1 if m >= 1 else 0  # modules added later join the second half


def _dev_port(slot: int, ports_per_module: int) -> int:
    if ports_per_module == len(GAUDI2_SCALE_OUT_PORTS):
        return GAUDI2_SCALE_OUT_PORTS[slot]
    return slot


def _lldpcli_quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _tx_interval_arg(tx: float) -> str:
    if float(tx).is_integer():
        return str(int(tx))
    return f"{int(round(tx * 1000))}ms"


# --------------------------------------------------------------------------
# LLDP frame decoding (for captures)


def decode_lldp(frame: bytes) -> dict | None:
    """Decode an Ethernet LLDP frame into a dict; None if not LLDP."""
    if len(frame) < 14:
        return None
    dst, src = frame[0:6], frame[6:12]
    (etype,) = struct.unpack("!H", frame[12:14])
    off = 14
    if etype == 0x8100 and len(frame) >= 18:
        (etype,) = struct.unpack("!H", frame[16:18])
        off = 18
    if etype != LLDP_ETHERTYPE:
        return None
    out: dict[str, Any] = {
        "dst_mac": ":".join(f"{b:02x}" for b in dst),
        "src_mac": ":".join(f"{b:02x}" for b in src),
        "chassis_id": None,
        "port_id_subtype": None,
        "port_id": None,
        "ttl": None,
        "port_description": None,
        "system_name": None,
        "management_addresses": [],
        "raw": frame.hex(),
    }
    data = frame[off:]
    i = 0
    while i + 2 <= len(data):
        (hdr,) = struct.unpack("!H", data[i : i + 2])
        t, ln = hdr >> 9, hdr & 0x1FF
        v = data[i + 2 : i + 2 + ln]
        i += 2 + ln
        if t == 0:
            break
        if t == 1 and v:
            sub, val = v[0], v[1:]
            out["chassis_id"] = ":".join(f"{b:02x}" for b in val) if sub == 4 else val.decode("utf-8", "replace")
        elif t == 2 and v:
            sub, val = v[0], v[1:]
            out["port_id_subtype"] = sub
            out["port_id"] = ":".join(f"{b:02x}" for b in val) if sub == 3 else val.decode("utf-8", "replace")
        elif t == 3 and len(v) >= 2:
            out["ttl"] = struct.unpack("!H", v[:2])[0]
        elif t == 4:
            out["port_description"] = v.decode("utf-8", "replace")
        elif t == 5:
            out["system_name"] = v.decode("utf-8", "replace")
        elif t == 8 and len(v) >= 2:
            alen = v[0]
            afi, addr = v[1], v[2 : 1 + alen]
            if afi == 1 and len(addr) == 4:
                out["management_addresses"].append(str(ipaddress.IPv4Address(addr)))
            elif afi == 2 and len(addr) == 16:
                out["management_addresses"].append(str(ipaddress.IPv6Address(addr)))
    return out


def _capture_child(ifname: str, timeout: float) -> int:
    """Runs inside the node netns: print READY, then one JSON line per LLDP frame."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(LLDP_ETHERTYPE))
    s.bind((ifname, LLDP_ETHERTYPE))
    print("READY", flush=True)
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return 0
        r, _, _ = select.select([s], [], [], left)
        if not r:
            continue
        frame, addr = s.recvfrom(65535)
        if addr[2] == socket.PACKET_OUTGOING:
            continue
        d = decode_lldp(frame)
        if d is None:
            continue
        d["time"] = time.time()
        print(json.dumps(d), flush=True)


class LldpCapture:
    """Receives LLDP frames on a host end (raw AF_PACKET socket in the node netns).

    The capture is live when the constructor returns.  ``frames()`` collects
    what arrives; ``wait_for(pred)`` returns the first frame for which pred
    is true (pred gets the decoded dict), or None at timeout.
    """

    def __init__(self, node_netns: str, ifname: str, timeout: float = 30.0):
        self.ifname = ifname
        self._buf = b""
        self._frames: list[dict] = []
        self._proc = subprocess.Popen(
            ["ip", "netns", "exec", node_netns, sys.executable, os.path.abspath(__file__),
             "_capture", ifname, str(timeout)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        line = self._readline(time.monotonic() + 10)
        if line != "READY":
            err = b""
            with contextlib.suppress(Exception):
                self._proc.kill()
                err = self._proc.communicate(timeout=2)[1]
            raise FabricError(f"LLDP capture on {ifname} did not start: {err.decode(errors='replace').strip()}")

    def _readline(self, deadline: float) -> str | None:
        fd = self._proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line.decode()

    def wait_for(self, pred: Callable[[dict], bool] | None = None, timeout: float = 3.0) -> dict | None:
        for f in self._frames:
            if pred is None or pred(f):
                self._frames.remove(f)
                return f
        deadline = time.monotonic() + timeout
        while True:
            line = self._readline(deadline)
            if line is None:
                return None
            f = json.loads(line)
            if pred is None or pred(f):
                return f
            self._frames.append(f)

    def frames(self, timeout: float = 3.0) -> list[dict]:
        """All frames received until timeout (including ones buffered earlier)."""
        deadline = time.monotonic() + timeout
        while True:
            line = self._readline(deadline)
            if line is None:
                break
            self._frames.append(json.loads(line))
        out, self._frames = self._frames, []
        return out

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        for s in (self._proc.stdout, self._proc.stderr):
            with contextlib.suppress(Exception):
                s.close()

    def __enter__(self) -> "LldpCapture":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# --------------------------------------------------------------------------
# the fabric


def _resolve_state_dir(name_or_state_dir: str) -> str:
    if os.sep in name_or_state_dir:
        return os.path.abspath(name_or_state_dir)
    _check_name(name_or_state_dir)
    return default_state_dir(name_or_state_dir)


class Fabric:
    """A simulated fabric.  Create with ``Fabric.up()``, attach with ``Fabric.load()``."""

    def __init__(self, state: dict):
        self.state = state
        self._lldpd_proc: subprocess.Popen | None = None
        self._created_netns: list[str] = []

    # ---- properties

    @property
    def name(self) -> str:
        return self.state["name"]

    @property
    def state_dir(self) -> str:
        return self.state["state_dir"]

    @property
    def node_netns(self) -> str:
        return self.state["node_netns"]

    @property
    def switch_netns(self) -> str:
        return self.state["switch_netns"]

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
    def lldpd_pid(self) -> int | None:
        return self.state["lldpd"]["pid"]

    @property
    def lldpd_socket(self) -> str:
        return self.state["lldpd"]["socket"]

    def port(self, index: int) -> dict:
        return dict(self._port(index))

    def __repr__(self) -> str:
        return f"Fabric({self.name!r}, ports={len(self.ports)}, state_dir={self.state_dir!r})"

    # ---- exec helpers

    def node_exec(self, argv: Sequence[str], **kw) -> subprocess.CompletedProcess:
        """subprocess.run(argv) inside the node netns."""
        return subprocess.run(["ip", "netns", "exec", self.node_netns, *argv], **kw)

    def switch_exec(self, argv: Sequence[str], **kw) -> subprocess.CompletedProcess:
        """subprocess.run(argv) inside the switch netns."""
        return subprocess.run(["ip", "netns", "exec", self.switch_netns, *argv], **kw)

    def lldpcli(self, *args: str, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        return _run(
            ["ip", "netns", "exec", self.switch_netns, "lldpcli", "-u", self.lldpd_socket, *args],
            input=input,
            check=check,
            timeout=30,
        )

    def capture(self, index: int, timeout: float = 30.0) -> LldpCapture:
        """Start receiving LLDP frames on port index's host end (see LldpCapture)."""
        return LldpCapture(self.node_netns, self._port(index)["host_ifname"], timeout)

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

    def lldpd_interfaces(self) -> dict[str, dict]:
        """What lldpd says it advertises: {switch_ifname: {port_id, description}}."""
        cp = self.lldpcli("-f", "json0", "show", "interfaces")
        data = json.loads(cp.stdout or "{}")
        out = {}
        for block in data.get("lldp", []):
            for itf in block.get("interface", []):
                port = (itf.get("port") or [{}])[0]
                pid = (port.get("id") or [{}])[0]
                descr = (port.get("descr") or [{}])[0]
                out[itf.get("name")] = {
                    "port_id": pid.get("value"),
                    "port_id_type": pid.get("type"),
                    "description": descr.get("value"),
                }
        return out

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
        self.state["lldpd"]["running"] = self.lldpd_running()
        _write_json_atomic(os.path.join(self.state_dir, STATE_FILE), self.state)

    def _port(self, index: int, present: bool = True) -> dict:
        if not isinstance(index, int) or isinstance(index, bool):
            raise UsageError(f"port index must be an integer, not {index!r}")
        ports = self.state["ports"]
        if index < 0 or index >= len(ports):
            raise UsageError(f"port index {index} out of range (fabric {self.name} has ports 0..{len(ports) - 1})")
        p = ports[index]
        if present and not p["present"]:
            raise UsageError(f"port {index} of fabric {self.name} was removed")
        return p

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
        return cls(state)

    @classmethod
    def up(
        cls,
        name: str | None = None,
        ports: int = 3,
        descriptions: Mapping[int, str] | Sequence[str | None] | None = None,
        mtu: int | None = None,
        tx_interval: float = 1,
        ports_per_module: int = 3,
        state_dir: str | None = None,
        med_class: int | None = 4,
    ) -> "Fabric":
        """Create a fabric; on failure everything created so far is removed."""
        if os.geteuid() != 0:
            raise FabricError("must run as root (network namespaces, veths, lldpd)")
        name = name or unique_name()
        _check_name(name)
        if not isinstance(ports, int) or not 1 <= ports <= MAX_PORTS:
            raise UsageError(f"--ports must be 1..{MAX_PORTS}, not {ports!r}")
        if not isinstance(ports_per_module, int) or not 1 <= ports_per_module <= 64:
            raise UsageError(f"--ports-per-module must be 1..64, not {ports_per_module!r}")
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
                descs[i] = _check_description(text)
        sd = os.path.abspath(state_dir) if state_dir else default_state_dir(name)
        sock = os.path.join(sd, "lldpd.sock")
        if len(sock.encode()) > 100:
            raise UsageError(f"state dir path too long for a unix socket: {sock}")

        node_ns, sw_ns = f"{name}-node", f"{name}-sw"
        taken = [ns for ns in _netns_list() if ns.startswith(name + "-")]
        if taken:
            raise FabricError(f"fabric {name} already exists (netns {', '.join(taken)}); run 'down {name}' first")
        if os.path.exists(os.path.join(sd, STATE_FILE)) or os.path.exists(os.path.join(sd, MARKER)):
            raise FabricError(f"state dir {sd} is in use; run 'down --state-dir {sd}' first")
        if os.path.exists(sd) and os.listdir(sd):
            raise FabricError(f"state dir {sd} exists and is not empty")

        initial_modules = (ports + ports_per_module - 1) // ports_per_module
        state = {
            "version": STATE_VERSION,
            "name": name,
            "state_dir": sd,
            "node_netns": node_ns,
            "switch_netns": sw_ns,
            "sysfs_root": os.path.join(sd, "sysfs"),
            "switch_hostname": f"leaf-{name}",
            "tx_interval": tx_interval,
            "mtu": mtu,
            "ports_per_module": ports_per_module,
            "initial_modules": initial_modules,
            "med_class": med_class or None,
            "lldpd": {
                "pid": None,
                "starttime": None,
                "running": False,
                "socket": sock,
                "pidfile": os.path.join(sd, "lldpd.pid"),
                "config": os.path.join(sd, "lldpd.conf"),
                "log": os.path.join(sd, "lldpd.log"),
            },
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
            _log(f"up {name} failed, removing what it created: {e}")
            fab._abort()
            raise
        return fab

    def _abort(self) -> None:
        """Undo a half-done up: only what this process created."""
        for what, fn in (
            ("stop lldpd", lambda: self._stop_lldpd() if self._lldpd_proc is not None else None),
            *((f"delete netns {ns}", lambda ns=ns: _run(["ip", "netns", "delete", ns]))
              for ns in reversed(self._created_netns)),
            ("remove state dir", lambda: shutil.rmtree(self.state_dir)),
        ):
            try:
                fn()
            except Exception as e:  # best effort, report and go on
                _log(f"cleanup: could not {what}: {e}")

    def _new_port(self, i: int, description: str | None = None) -> dict:
        name = self.name
        ppm = self.state["ports_per_module"]
        m, slot = divmod(i, ppm)
        mod = self._module(m)
        desc = description if description is not None else default_description(i)
        p = {
            "index": i,
            "present": True,
            "host_ifname": f"so{i}",
            "switch_ifname": f"swp{i + 1}",
            "host_mac": _mac(name, 0, i),
            "switch_mac": _mac(name, 1, i),
            "switch_port_id": f"Ethernet1/{i + 1}",
            "description": desc,
            **parse_description(desc),
            "link": "up",
            "mtu": self.state["mtu"],
            "pci_address": mod["pci_address"],
            "pcie_root": mod["pcie_root"],
            "numa_node": mod["numa_node"],
            "module_id": m,
            "accel": mod["accel"],
            "port_index": _dev_port(slot, ppm),
            "sysfs_net_dir": os.path.join(self.sysfs_root, mod["device_dir"], "net", f"so{i}"),
        }
        return p

    def _module(self, m: int) -> dict:
        mods = self.state["modules"]
        while len(mods) <= m:
            k = len(mods)
            mod = _module_layout(k)
            mod["numa_node"] = _numa_for_module(k, self.state["initial_modules"])
            mod["sysfs_device_dir"] = os.path.join(self.sysfs_root, mod["device_dir"])
            mods.append(mod)
            self._sysfs_add_module(mod)
        return mods[m]

    def _build(self, n: int, descs: dict[int, str]) -> None:
        st = self.state
        os.makedirs(self.sysfs_root, exist_ok=True)
        for d in ("bus/pci/drivers/" + DRIVER, "bus/pci/devices", "class/net", "class/accel"):
            os.makedirs(os.path.join(self.sysfs_root, d), exist_ok=True)
        ports = [self._new_port(i, descs.get(i)) for i in range(n)]
        st["ports"] = ports

        for ns in (self.node_netns, self.switch_netns):
            _run(["ip", "netns", "add", ns])
            self._created_netns.append(ns)
        _ip_batch(self._veth_add_cmds(p) for p in ports)
        node_cmds = ["link set lo up"] + [f"link set {p['host_ifname']} up" for p in ports]
        sw_cmds = ["link set lo up"]
        for p in ports:
            sw_cmds.append(f"link set {p['switch_ifname']} up")
            sw_cmds.append(self._addr_cmd(p))
        _ip_batch(node_cmds, self.node_netns)
        _ip_batch(sw_cmds, self.switch_netns)
        for p in ports:
            self._sysfs_add_port(p)
        self._write_lldpd_conf()
        self._save()
        self._start_lldpd()
        self._save()

    def _veth_add_cmds(self, p: dict) -> str:
        mtu = f" mtu {p['mtu']}" if p.get("mtu") else ""
        return (
            f"link add {p['host_ifname']} netns {self.node_netns} address {p['host_mac']}{mtu} "
            f"type veth peer name {p['switch_ifname']} netns {self.switch_netns} address {p['switch_mac']}{mtu}"
        )

    @staticmethod
    def _addr_cmd(p: dict) -> str:
        if p["switch_ip"] and p["switch_ip_assigned"]:
            return f"address add {p['switch_ip']}/{p['prefix_len']} dev {p['switch_ifname']}"
        return ""

    # ---- sysfs

    def _sysfs_add_module(self, mod: dict) -> None:
        root = self.sysfs_root
        dev = os.path.join(root, mod["device_dir"])
        os.makedirs(os.path.join(dev, "net"), exist_ok=True)
        for fname, val in (
            ("vendor", HABANA_VENDOR),
            ("device", GAUDI2_DEVICE),
            ("class", GAUDI2_PCI_CLASS),
            ("numa_node", str(mod["numa_node"])),
            ("module_id", str(mod["module_id"])),
            ("pci_addr", mod["pci_address"]),
            ("device_type", "GAUDI2"),
        ):
            _write(os.path.join(dev, fname), val)
        _relsymlink(os.path.join(root, "bus/pci/drivers", DRIVER), os.path.join(dev, "driver"))
        _relsymlink(os.path.join(root, "bus/pci"), os.path.join(dev, "subsystem"))
        _relsymlink(dev, os.path.join(root, "bus/pci/drivers", DRIVER, mod["pci_address"]))
        _relsymlink(dev, os.path.join(root, "bus/pci/devices", mod["pci_address"]))
        accel_dir = os.path.join(dev, "accel", mod["accel"])
        os.makedirs(accel_dir, exist_ok=True)
        _write(os.path.join(accel_dir, "dev"), f"511:{mod['module_id']}")
        _relsymlink(dev, os.path.join(accel_dir, "device"), f"../../../{mod['pci_address']}")
        _relsymlink(accel_dir, os.path.join(root, "class/accel", mod["accel"]))

    def _sysfs_add_port(self, p: dict) -> None:
        root = self.sysfs_root
        mod = self.state["modules"][p["module_id"]]
        dev = os.path.join(root, mod["device_dir"])
        net = os.path.join(dev, "net", p["host_ifname"])
        os.makedirs(net, exist_ok=True)
        _write(os.path.join(net, "dev_port"), str(p["port_index"]))
        _write(os.path.join(net, "address"), p["host_mac"])
        _write(os.path.join(net, "type"), "1")
        _relsymlink(dev, os.path.join(net, "device"), f"../../../{mod['pci_address']}")
        _relsymlink(os.path.join(root, "class/net"), os.path.join(net, "subsystem"))
        _relsymlink(net, os.path.join(root, "class/net", p["host_ifname"]))

    def _sysfs_remove_port(self, p: dict) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(self.sysfs_root, "class/net", p["host_ifname"]))
        shutil.rmtree(p["sysfs_net_dir"], ignore_errors=True)

    # ---- lldpd

    def _write_lldpd_conf(self) -> None:
        lines = [
            "# generated by tests/sim/fabric.py; rewritten on every change",
            f"configure system hostname {_lldpcli_quote(self.state['switch_hostname'])}",
            f"configure lldp tx-interval {_tx_interval_arg(self.state['tx_interval'])}",
        ]
        for p in self.state["ports"]:
            if p["present"]:
                lines.append(
                    f"configure ports {p['switch_ifname']} lldp portidsubtype local "
                    f"{p['switch_port_id']} description {_lldpcli_quote(p['description'])}"
                )
        _write(self.state["lldpd"]["config"], "\n".join(lines))

    def lldpd_running(self) -> bool:
        ld = self.state["lldpd"]
        # pid + start time identify our instance (comm is "ip" until it execs lldpd)
        return _pid_alive(ld.get("pid"), ld.get("starttime"))

    def _reap(self) -> None:
        if self._lldpd_proc is not None:
            self._lldpd_proc.poll()

    def _start_lldpd(self) -> None:
        ld = self.state["lldpd"]
        if self.lldpd_running():
            raise FabricError(f"lldpd of fabric {self.name} already runs (pid {ld['pid']})")
        # leftovers of a killed instance would make lldpd believe another one runs
        stale = [p for p in _pids_in_netns(self.switch_netns) if _proc_comm(p) == "lldpd"]
        if stale:
            _terminate(stale, LLDPD_STOP_TIMEOUT)
        for f in (ld["socket"], ld["socket"] + ".lock", ld["pidfile"]):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f)
        os.makedirs(LLDPD_CHROOT, mode=0o755, exist_ok=True)
        argv = [
            "ip", "netns", "exec", self.switch_netns,
            "lldpd",
            "-ddd",  # foreground, log to stderr only (no syslog), info level
            "-u", ld["socket"],
            "-p", ld["pidfile"],
            "-I", "swp*",
            "-O", ld["config"],
            "-S", f"rocenet simulated leaf switch {self.name}",
        ]
        if self.state.get("med_class"):
            argv += ["-M", str(self.state["med_class"])]
        log = open(ld["log"], "ab")
        try:
            log.write(f"--- {time.strftime('%Y-%m-%dT%H:%M:%S')} starting: {' '.join(argv)}\n".encode())
            log.flush()
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
            )
        finally:
            log.close()
        self._lldpd_proc = proc
        ld["pid"] = proc.pid  # ip netns exec execs lldpd: same pid
        st = _proc_stat(proc.pid)
        ld["starttime"] = st[1] if st else None
        ld["running"] = True
        deadline = time.monotonic() + 5
        while _proc_comm(proc.pid) != "lldpd" and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        self._wait_lldpd_ready()

    def _wait_lldpd_ready(self, ports: Sequence[dict] | None = None) -> None:
        ld = self.state["lldpd"]
        want = {
            p["switch_ifname"]: p
            for p in (ports if ports is not None else self.state["ports"])
            if p["present"] and p["link"] == "up"
        }
        deadline = time.monotonic() + LLDPD_READY_TIMEOUT
        last = None
        while True:
            self._reap()
            if not self.lldpd_running():
                raise FabricError(f"lldpd exited during start-up; see {ld['log']}:\n{self._log_tail()}")
            if os.path.exists(ld["socket"]):
                try:
                    have = self.lldpd_interfaces()
                except (FabricError, ValueError) as e:
                    have, last = {}, str(e)
                missing = [
                    n for n, p in want.items()
                    if have.get(n, {}).get("description") != p["description"]
                    or have.get(n, {}).get("port_id") != p["switch_port_id"]
                ]
                if not missing:
                    return
                last = f"not configured yet: {', '.join(missing[:8])}"
            if time.monotonic() > deadline:
                raise FabricError(f"lldpd not ready after {LLDPD_READY_TIMEOUT}s ({last}); see {ld['log']}")
            time.sleep(0.1)

    def _log_tail(self, n: int = 15) -> str:
        try:
            with open(self.state["lldpd"]["log"], errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def _stop_lldpd(self, timeout: float = LLDPD_STOP_TIMEOUT) -> None:
        ld = self.state["lldpd"]
        main = [ld["pid"]] if self.lldpd_running() else []
        if main:
            killed = _terminate(main, timeout, self._reap)
            if killed:
                _log(f"lldpd pid {killed[0]} ignored SIGTERM; killed")
        # privsep child (and anything named lldpd left in our switch netns)
        rest = [p for p in _pids_in_netns(self.switch_netns) if _proc_comm(p) == "lldpd"]
        if rest:
            _terminate(rest, 2, self._reap)
        self._reap()
        ld["running"] = False
        for f in (ld["socket"], ld["socket"] + ".lock"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f)

    def stop_lldpd(self) -> None:
        """SIGTERM lldpd (it sends TTL-0 shutdown LLDPDUs), SIGKILL after 5 s."""
        with self._locked():
            self._stop_lldpd()

    def start_lldpd(self) -> None:
        """(Re)start lldpd with the current configuration; waits until it advertises."""
        with self._locked():
            self._write_lldpd_conf()
            self._start_lldpd()

    # ---- mutations

    def set_description(self, index: int, text: str) -> dict:
        """Change port index's Port Description (sent at once) and move the
        switch end's address to the one the new description names."""
        text = _check_description(text)
        with self._locked():
            p = self._port(index)
            sw = p["switch_ifname"]
            new = parse_description(text)
            cmds = [f"address flush dev {sw} scope global"]
            p.update(description=text, **new)
            cmds.append(self._addr_cmd(p))
            _ip_batch(cmds, self.switch_netns)
            self._write_lldpd_conf()
            if self.lldpd_running():
                # 'portdescription' alone: 'portidsubtype ... description' would
                # first advertise the interface name as description.
                self.lldpcli("configure", "ports", sw, "lldp", "portdescription", text)
                if p["link"] == "up":
                    self._wait_lldpd_ready([p])
            return dict(p)

    def link(self, index: int, state: str | bool, side: str = "switch") -> dict:
        """Set the switch end (or, side="node", the host end) of a port up or down."""
        if isinstance(state, bool):
            state = "up" if state else "down"
        if state not in ("up", "down"):
            raise UsageError(f"link state must be 'up' or 'down', not {state!r}")
        if side not in ("switch", "node"):
            raise UsageError(f"side must be 'switch' or 'node', not {side!r}")
        with self._locked():
            p = self._port(index)
            if side == "switch":
                _run(["ip", "-n", self.switch_netns, "link", "set", p["switch_ifname"], state])
                p["link"] = state
            else:
                _run(["ip", "-n", self.node_netns, "link", "set", p["host_ifname"], state])
                p["host_link"] = state
            return dict(p)

    def add_port(self, index: int | None = None, description: str | None = None) -> dict:
        """Add a port at run time: the next index (or re-plug a removed one).

        The switch end's lldpd configuration is applied before the host end
        comes up, so the node never sees a frame without the description.
        """
        if description is not None:
            _check_description(description)
        with self._locked():
            ports = self.state["ports"]
            if index is None:
                index = len(ports)
            if not isinstance(index, int) or isinstance(index, bool) or index < 0:
                raise UsageError(f"port index must be a non-negative integer, not {index!r}")
            if index > len(ports):
                raise UsageError(f"next new port index is {len(ports)}, not {index}")
            if index < len(ports) and ports[index]["present"]:
                raise UsageError(f"port {index} of fabric {self.name} already exists")
            if index >= MAX_PORTS:
                raise UsageError(f"at most {MAX_PORTS} ports")
            old = ports[index] if index < len(ports) else None
            if description is None and old is not None:
                description = old["description"]
            p = self._new_port(index, description)
            if index < len(ports):
                ports[index] = p
            else:
                ports.append(p)
            try:
                # The kernel publishes a net device in sysfs before it
                # announces it over netlink; keep that order.
                self._sysfs_add_port(p)
                _ip_batch([self._veth_add_cmds(p)])
                _ip_batch(
                    [f"link set {p['switch_ifname']} up", self._addr_cmd(p)],
                    self.switch_netns,
                )
                self._write_lldpd_conf()
                if self.lldpd_running():
                    self._configure_new_port(p)
                _run(["ip", "-n", self.node_netns, "link", "set", p["host_ifname"], "up"])
            except BaseException:
                p["present"] = False
                with contextlib.suppress(Exception):
                    _run(["ip", "-n", self.switch_netns, "link", "del", p["switch_ifname"]], check=False)
                self._sysfs_remove_port(p)
                self._write_lldpd_conf()
                raise
            return dict(p)

    def _configure_new_port(self, p: dict) -> None:
        sw = p["switch_ifname"]
        cmd = ["configure", "ports", sw, "lldp", "portidsubtype", "local", p["switch_port_id"],
               "description", p["description"]]
        deadline = time.monotonic() + LLDPD_READY_TIMEOUT
        while True:
            have = self.lldpd_interfaces().get(sw)
            if have is not None:
                if have["description"] == p["description"] and have["port_id"] == p["switch_port_id"]:
                    return
                self.lldpcli(*cmd)
            if time.monotonic() > deadline:
                raise FabricError(f"lldpd did not pick up new port {sw} (has {have}); see {self.state['lldpd']['log']}")
            time.sleep(0.1)

    def remove_port(self, index: int) -> dict:
        """Delete port index's veth pair; like real sysfs, its net/<if> dir and
        class/net link go too (the PCI device stays).  The entry stays in
        fabric.json with present: false, so indices never shift."""
        with self._locked():
            p = self._port(index)
            _run(["ip", "-n", self.node_netns, "link", "del", p["host_ifname"]])
            self._sysfs_remove_port(p)
            p["present"] = False
            self._write_lldpd_conf()
            return dict(p)

    # ---- teardown

    def down(self, kill_processes: bool = False) -> None:
        """Stop lldpd, delete all NAME-* namespaces, remove the state dir.

        Processes other than lldpd still inside the namespaces are reported,
        or killed with kill_processes=True."""
        with contextlib.suppress(FabricError):
            self._reload()  # another process may have restarted lldpd
        _teardown(self.name, self.state_dir, self, kill_processes)

    def __enter__(self) -> "Fabric":
        return self

    def __exit__(self, *exc) -> None:
        self.down()


def _teardown(name: str | None, state_dir: str | None, fab: Fabric | None = None, kill_processes: bool = False) -> None:
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
        _check_name(name)
        sw_ns = f"{name}-sw"
        if fab is not None:
            fab._stop_lldpd()
        else:
            left = [p for p in _pids_in_netns(sw_ns) if _proc_comm(p) == "lldpd"]
            _terminate(left, LLDPD_STOP_TIMEOUT)
        for ns in [ns for ns in _netns_list() if ns.startswith(name + "-")]:
            pids = _pids_in_netns(ns)
            if pids and kill_processes:
                _terminate(pids, LLDPD_STOP_TIMEOUT)
            elif pids:
                _log(f"warning: processes still in netns {ns}: {' '.join(map(str, pids))} "
                     "(the namespace lives on until they exit; use --kill-processes)")
            _run(["ip", "netns", "delete", ns], check=False)
        still = [ns for ns in _netns_list() if ns.startswith(name + "-")]
        if still:
            raise FabricError(f"could not delete netns {', '.join(still)}")
    if state_dir and os.path.isdir(state_dir):
        if os.path.exists(os.path.join(state_dir, MARKER)) or os.path.exists(os.path.join(state_dir, STATE_FILE)):
            shutil.rmtree(state_dir)
        else:
            _log(f"not removing {state_dir}: not a fabric state dir")


def down(name_or_state_dir: str, kill_processes: bool = False) -> None:
    """Tear a fabric down by name or state dir; no error if it is already gone."""
    sd = _resolve_state_dir(name_or_state_dir)
    name = None if os.sep in name_or_state_dir else name_or_state_dir
    _teardown(name, sd, None, kill_processes)


# --------------------------------------------------------------------------
# command line


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # exit code 2 with a clear message
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def _parse_descriptions(items: list[str] | None) -> dict[int, str]:
    out = {}
    for it in items or []:
        k, sep, v = it.partition("=")
        if not sep or not k.strip().isdigit():
            raise UsageError(f"--description wants INDEX=TEXT, got {it!r}")
        out[int(k)] = v
    return out


def _int_arg(s: str, what: str) -> int:
    try:
        return int(s, 10)
    except ValueError:
        raise UsageError(f"{what} must be an integer, not {s!r}") from None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_capture"]:
        return _capture_child(argv[1], float(argv[2]))

    ap = _Parser(
        prog="fabric.py",
        description="Simulated RoCE scale-out fabric (netns + veth + lldpd + fake sysfs) for rocenet.",
        epilog="FABRIC is a fabric name or a state directory (anything containing '/').",
    )
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=_Parser)

    p = sub.add_parser("up", help="create a fabric and print its fabric.json")
    p.add_argument("name", nargs="?", help="fabric name (default: rn + 6 hex digits)")
    p.add_argument("--ports", type=int, default=3, help="number of scale-out ports (default 3)")
    p.add_argument("--mtu", type=int, default=None, help="MTU of both veth ends (default: kernel default)")
    p.add_argument("--tx-interval", type=float, default=1, help="lldpd tx-interval in seconds (default 1)")
    p.add_argument("--ports-per-module", type=int, default=3, help="ports per accelerator module (default 3)")
    p.add_argument("--description", action="append", metavar="I=TEXT",
                   help="Port Description for port I (repeatable); default 'no-alert 10.200.<I+1>.2/30'")
    p.add_argument("--state-dir", help=f"state directory (default {DEFAULT_BASE}/NAME)")
    p.add_argument("--no-med", action="store_true", help="do not send LLDP-MED TLVs (default: class 4)")

    p = sub.add_parser("down", help="tear a fabric down (no error if already gone)")
    p.add_argument("fabric", nargs="?")
    p.add_argument("--state-dir")
    p.add_argument("--kill-processes", action="store_true",
                   help="also kill processes still running in the fabric's namespaces")

    p = sub.add_parser("show", help="print fabric.json")
    p.add_argument("fabric")

    p = sub.add_parser("set-description", help="change a port's Port Description (and switch address)")
    p.add_argument("fabric")
    p.add_argument("index")
    p.add_argument("text")

    p = sub.add_parser("link", help="set a port's switch end (or host end) up or down")
    p.add_argument("fabric")
    p.add_argument("index")
    p.add_argument("state", choices=["up", "down"])
    p.add_argument("--side", choices=["switch", "node"], default="switch")

    p = sub.add_parser("stop-lldpd", help="SIGTERM the switch's lldpd (sends TTL 0 frames)")
    p.add_argument("fabric")
    p = sub.add_parser("start-lldpd", help="start the switch's lldpd again")
    p.add_argument("fabric")

    p = sub.add_parser("add-port", help="add a port at run time (prints it)")
    p.add_argument("fabric")
    p.add_argument("--index", help="re-plug this removed port instead of adding the next one")
    p.add_argument("--description", help="Port Description (default as for up)")

    p = sub.add_parser("remove-port", help="delete a port's veth pair and sysfs net entries")
    p.add_argument("fabric")
    p.add_argument("index")

    p = sub.add_parser("capture", help="print LLDP frames received on a host end, one JSON per line")
    p.add_argument("fabric")
    p.add_argument("index")
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--timeout", type=float, default=5)

    sub.add_parser("list", help="list fabrics with a state dir under " + DEFAULT_BASE)

    args = ap.parse_args(argv)
    try:
        if args.cmd not in ("list", "show") and os.geteuid() != 0:
            raise FabricError("must run as root")
        if args.cmd == "up":
            fab = Fabric.up(
                args.name,
                ports=args.ports,
                descriptions=_parse_descriptions(args.description),
                mtu=args.mtu,
                tx_interval=args.tx_interval,
                ports_per_module=args.ports_per_module,
                state_dir=args.state_dir,
                med_class=None if args.no_med else 4,
            )
            print(json.dumps(fab.state, indent=2))
        elif args.cmd == "down":
            if not args.fabric and not args.state_dir:
                raise UsageError("down needs a fabric name or --state-dir")
            if args.state_dir:
                name = args.fabric
                if name is not None:
                    _check_name(name)
                _teardown(name, os.path.abspath(args.state_dir), None, args.kill_processes)
            else:
                down(args.fabric, args.kill_processes)
        elif args.cmd == "list":
            for n in sorted(os.listdir(DEFAULT_BASE)) if os.path.isdir(DEFAULT_BASE) else []:
                if os.path.exists(os.path.join(DEFAULT_BASE, n, STATE_FILE)):
                    print(n)
        else:
            fab = Fabric.load(args.fabric)
            if args.cmd == "show":
                print(json.dumps(fab.state, indent=2))
            elif args.cmd == "set-description":
                fab.set_description(_int_arg(args.index, "index"), args.text)
            elif args.cmd == "link":
                fab.link(_int_arg(args.index, "index"), args.state, args.side)
            elif args.cmd == "stop-lldpd":
                fab.stop_lldpd()
            elif args.cmd == "start-lldpd":
                fab.start_lldpd()
            elif args.cmd == "add-port":
                idx = None if args.index is None else _int_arg(args.index, "--index")
                print(json.dumps(fab.add_port(idx, args.description), indent=2))
            elif args.cmd == "remove-port":
                fab.remove_port(_int_arg(args.index, "index"))
            elif args.cmd == "capture":
                fab._port(_int_arg(args.index, "index"))
                for f in fab.capture_lldp(_int_arg(args.index, "index"), args.timeout, args.count):
                    f.pop("raw", None)
                    print(json.dumps(f), flush=True)
    except UsageError as e:
        print(f"fabric.py: error: {e}", file=sys.stderr)
        return 2
    except FabricError as e:
        print(f"fabric.py: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
