#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""LLDP as the node sees it: decoding frames, capturing them on a host end,
and what a Port Description says (the switch's address for the port).

``LldpCapture`` runs this file as a child inside the node namespace
(``lldp.py _capture IFNAME TIMEOUT``): a raw AF_PACKET socket there prints
one JSON line per frame received.  Python stdlib only.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import re
import select
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from simutil import FabricError, UsageError

LLDP_ETHERTYPE = 0x88CC
MAX_DESCRIPTION = 255  # LLDP Port Description TLV limit
CIDR_RE = re.compile(r"^(\d{1,3}(?:\.\d{1,3}){3})/(\d{1,2})$")


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


def check_description(text: Any) -> str:
    if not isinstance(text, str):
        raise UsageError(f"description must be a string, not {type(text).__name__}")
    if text == "" or text.isspace():
        raise UsageError("empty description: lldpd cannot advertise an empty Port Description")
    if any(c in text for c in "\n\r\0"):
        raise UsageError("description must not contain newline, carriage return or NUL")
    if len(text.encode()) > MAX_DESCRIPTION:
        raise UsageError(f"description longer than {MAX_DESCRIPTION} bytes")
    return text


def lldpcli_quote(s: str) -> str:
    """A string as one lldpcli argument in a configuration file."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def tx_interval_arg(tx: float) -> str:
    if float(tx).is_integer():
        return str(int(tx))
    return f"{int(round(tx * 1000))}ms"


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
        "chassis_id_subtype": None,
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
            out["chassis_id_subtype"] = sub
            out["chassis_id"] = ":".join(f"{b:02x}" for b in val) if sub == 4 else \
                val.decode("utf-8", "replace")
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
            raise FabricError(f"LLDP capture on {ifname} did not start: "
                              f"{err.decode(errors='replace').strip()}")

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

    def __enter__(self) -> LldpCapture:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


if __name__ == "__main__":
    if sys.argv[1:2] != ["_capture"] or len(sys.argv) != 4:
        sys.exit("usage: lldp.py _capture IFNAME TIMEOUT (inside the node namespace)")
    sys.exit(_capture_child(sys.argv[2], float(sys.argv[3])))
