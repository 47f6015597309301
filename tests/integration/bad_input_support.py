# SPDX-License-Identifier: Apache-2.0
"""What the bad-input tests (bad_input_lldp_test.py, bad_input_cni_grpc_test.py)
share: LLDP frames written by hand, a raw packet socket that sends them from
the switch side of a fabric port, and the network state of every namespace of
the fabric, to compare before and after each case. The fixtures that set up
their fabric, daemon and baseline are in conftest.py."""

from __future__ import annotations

import difflib
import json
import struct
import subprocess
import sys

# ---------------------------------------------------------------------------
# LLDP frames
# ---------------------------------------------------------------------------

NEAREST_BRIDGE = bytes.fromhex("0180c200000e")
# The frame's own port: the neighbor every case talks as, unless it says.
CHASSIS_MAC = bytes.fromhex("025eaa000001")
TTL = 900  # longer than the whole module runs: the baseline never ages out


def tlv(kind: int, value: bytes, length: int | None = None) -> bytes:
    """A TLV; `length` overrides the header's length field (0..511)."""
    n = len(value) if length is None else length
    return struct.pack("!H", (kind << 9) | (n & 0x1FF)) + value


def chassis(subtype: int = 4, ident: bytes = CHASSIS_MAC) -> bytes:
    return tlv(1, bytes([subtype]) + ident)


def port_id(subtype: int = 5, ident: bytes = b"Ethernet1/1") -> bytes:
    return tlv(2, bytes([subtype]) + ident)


def ttl(seconds: int = TTL) -> bytes:
    return tlv(3, struct.pack("!H", seconds))


def desc(text: str | bytes) -> bytes:
    return tlv(4, text.encode() if isinstance(text, str) else text)


END = b"\x00\x00"
GOOD_DESC = "no-alert 10.200.1.2/30"  # so0's baseline: local 10.200.1.1/30
SO1_DESC = "no-alert 10.200.2.2/30"  # so1's baseline: local 10.200.2.1/30
IN_USE_DESC = "no-alert 10.201.0.2/30"  # local 10.201.0.1: held by a dummy link


def mandatory(port: bytes = b"Ethernet1/1") -> bytes:
    return chassis() + port_id(ident=port) + ttl()


def pdu(*tlvs: bytes) -> bytes:
    return b"".join(tlvs)


def good_lldpdu(text: str = GOOD_DESC, port: bytes = b"Ethernet1/1") -> bytes:
    return pdu(mandatory(port), desc(text), END)


# The marker before a whole Ethernet frame: Sender.send sends anything else
# as an LLDPDU to the nearest-bridge address.
FRAME = b"FRAME"


SENDER = r"""
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
for line in sys.stdin:
    s.send(bytes.fromhex(line.strip()))
    sys.stdout.write("sent\n")
    sys.stdout.flush()
"""


class Sender:
    """A raw packet socket on one switch port, in the switch namespace."""

    def __init__(self, fabric, index: int):
        port = fabric.port(index)
        self.src = bytes.fromhex(port["switch_mac"].replace(":", ""))
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", fabric.switch_netns, sys.executable, "-c", SENDER,
             port["switch_ifname"]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def send(self, data: bytes) -> None:
        if data.startswith(FRAME):
            frame = data[len(FRAME):]
        else:
            frame = NEAREST_BRIDGE + self.src + b"\x88\xcc" + data
        self.proc.stdin.write(frame.hex() + "\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline() == "sent\n"

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(5)


# ---------------------------------------------------------------------------
# The network state every case is compared with.
# ---------------------------------------------------------------------------

STATE_COMMANDS = "link show\naddr show\nroute show table all\nrule show\n"


def all_namespaces_state(fabric) -> dict[str, str]:
    """Links, IPv4 addresses, routes (every table) and rules of every
    namespace of the fabric, as `ip -d -4` prints them (one `ip` per
    namespace). IPv6 is left out as in harness.network_state: rocenet never
    touches it and the kernel's link-local autoconfiguration moves on its own.
    Numbers, not names (ip -N), as there too: the DEB test installs and
    removes the name of rocenet's route protocol while this test runs."""
    names = [n for n in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                                       check=True).stdout.split() if n.startswith(fabric.name)]
    return {n: subprocess.run(["ip", "-n", n, "-d", "-4", "-N", "-batch", "-"],
                              input=STATE_COMMANDS, capture_output=True, text=True,
                              check=True).stdout for n in names}


def assert_unchanged(fabric, before: dict[str, str]) -> None:
    """Every namespace of the fabric as it was, byte for byte; the difference
    line by line when not."""
    after = all_namespaces_state(fabric)
    if after == before:
        return
    diff = []
    for ns in sorted(set(before) | set(after)):
        diff += difflib.unified_diff(before.get(ns, "").splitlines(),
                                     after.get(ns, "").splitlines(), f"{ns} before",
                                     f"{ns} after", lineterm="")
    raise AssertionError("network state changed:\n" + "\n".join(diff))


def plans(daemon) -> dict[str, dict]:
    cp = daemon.rocectl("addressing", "-o", "json")
    assert cp.returncode == 0, cp.stderr
    return {p["name"]: p for p in json.loads(cp.stdout)["plans"]}


def plan_is(daemon, port: str, state: str, reason: str | None, local: str | None = None):
    plan = plans(daemon).get(port, {})
    if plan.get("state") != f"PLAN_STATE_{state.upper()}":
        return None
    if (plan.get("reason") or None) != reason:
        return None
    if local is not None and plan.get("local") != local:
        return None
    return plan
