"""The bad-input catalogue: malformed LLDP frames, bad CNI invocations and bad
gRPC requests thrown at the real rocenetd, rocenet (CNI) and gRPC API on a
simulated fabric. Each case is its own test; each asserts the exact error
class the daemon or the plugin reports, and that the network state of every
namespace of the fabric (links, addresses, routes, rules) is byte-for-byte
what it was before.

LLDP frames are written by hand and sent from the switch side of a fabric
port with a raw packet socket, lldpd being stopped so that only these frames
reach the node. Port so0 and so1 first hear a good frame each and are
addressed from it; that configuration is the baseline every case is compared
with. A frame the decoder refuses must show in
rocenet_lldp_frames_discarded_total{reason=...}; a frame it accepts with a
bad Port Description must show in `rocectl addressing` as the plan's state
and reason, with the address left as it was.
"""

from __future__ import annotations

import difflib
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

import pytest

from harness import Daemon, binary, metric_value, sim, wait_until

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


# Each LLDP case: (id, LLDPDU bytes or a full frame, expectation).
# Expectations:
#   ("discard", reason)   the whole frame is refused: the discard counter of
#                         `reason` goes up by one, the plan stays ready
#   ("tlv", n)            the frame is used but n TLVs of it are discarded
#                         (rocenet_lldp_tlvs_discarded_total), plan ready
#   ("plan", state, reason)  the frame is used and the plan of so0 becomes
#                         `state` with `reason` (ready/None: nothing wrong)
#   ("moves", local)      a valid change: so0 is re-addressed to `local`, and
#                         back to the baseline when the baseline frame returns
# A bytes value starting with b"FRAME" is a whole Ethernet frame after that
# marker; anything else is an LLDPDU sent to the nearest-bridge address.
FRAME = b"FRAME"


def frame_to(dst: bytes, lldpdu: bytes, src: bytes | None = None) -> bytes:
    return FRAME + dst + (src or b"\x02\x5e\xaa\x00\x00\x09") + b"\x88\xcc" + lldpdu


LONG_ID = b"x" * 256  # one byte more than an ID may hold

LLDP_CASES = [
    # Ethernet framing.
    ("unicast-destination", frame_to(bytes.fromhex("02aabbccddee"), good_lldpdu()),
     ("discard", "bad_destination_mac")),
    ("broadcast-destination", frame_to(b"\xff" * 6, good_lldpdu()),
     ("discard", "bad_destination_mac")),
    ("other-multicast-destination", frame_to(bytes.fromhex("0180c2000002"), good_lldpdu()),
     ("discard", "bad_destination_mac")),
    ("empty-lldpdu", b"", ("discard", "missing_chassis_id")),
    ("only-end-tlv", END, ("discard", "missing_chassis_id")),
    # TLV framing.
    ("one-byte-lldpdu", b"\x02", ("discard", "truncated_tlv_header")),
    ("truncated-tlv-header-after-ttl", pdu(mandatory(), b"\x08"),
     ("discard", "truncated_tlv_header")),
    ("chassis-length-overruns-frame", tlv(1, b"\x04\x02\x5e", length=40),
     ("discard", "tlv_length_overrun")),
    ("ttl-length-overruns-frame", pdu(chassis(), port_id(), tlv(3, b"\x00", length=2)),
     ("discard", "tlv_length_overrun")),
    ("description-length-overruns-frame", pdu(mandatory(), tlv(4, b"no-alert", length=300)),
     ("discard", "tlv_length_overrun")),
    ("max-length-field-on-short-tlv", pdu(mandatory(), tlv(5, b"leaf", length=511)),
     ("discard", "tlv_length_overrun")),
    ("end-tlv-with-length", pdu(mandatory(), desc(GOOD_DESC), tlv(0, b"\x00\x00")),
     ("discard", "bad_end_tlv_length")),
    # Mandatory TLVs missing, out of order, repeated.
    ("no-chassis-id", pdu(port_id(), ttl(), desc(GOOD_DESC), END),
     ("discard", "missing_chassis_id")),
    ("no-port-id", pdu(chassis(), ttl(), desc(GOOD_DESC), END), ("discard", "missing_port_id")),
    ("no-ttl", pdu(chassis(), port_id(), desc(GOOD_DESC), END), ("discard", "missing_ttl")),
    ("ends-after-chassis-id", pdu(chassis(), END), ("discard", "missing_port_id")),
    ("ends-after-port-id", pdu(chassis(), port_id()), ("discard", "missing_ttl")),
    ("port-id-before-chassis-id", pdu(port_id(), chassis(), ttl(), END),
     ("discard", "missing_chassis_id")),
    ("ttl-before-port-id", pdu(chassis(), ttl(), port_id(), END), ("discard", "missing_port_id")),
    ("description-before-ttl", pdu(chassis(), port_id(), desc(GOOD_DESC), ttl(), END),
     ("discard", "missing_ttl")),
    ("second-chassis-id", pdu(mandatory(), chassis(), END), ("discard", "duplicate_chassis_id")),
    ("second-port-id", pdu(mandatory(), port_id(), END), ("discard", "duplicate_port_id")),
    ("second-ttl", pdu(mandatory(), desc(GOOD_DESC), ttl(), END), ("discard", "duplicate_ttl")),
    # Chassis ID and Port ID contents.
    ("chassis-id-empty", pdu(tlv(1, b""), port_id(), ttl(), END),
     ("discard", "bad_chassis_id_length")),
    ("chassis-id-subtype-only", pdu(tlv(1, b"\x04"), port_id(), ttl(), END),
     ("discard", "bad_chassis_id_length")),
    ("chassis-id-256-bytes", pdu(chassis(7, LONG_ID), port_id(), ttl(), END),
     ("discard", "bad_chassis_id_length")),
    ("chassis-mac-5-bytes", pdu(chassis(4, b"\x02\x5e\xaa\x00\x01"), port_id(), ttl(), END),
     ("discard", "bad_chassis_id_mac_address")),
    ("chassis-mac-7-bytes", pdu(chassis(4, CHASSIS_MAC + b"\x00"), port_id(), ttl(), END),
     ("discard", "bad_chassis_id_mac_address")),
    ("chassis-network-address-short-ipv4",
     pdu(chassis(5, b"\x01\x0a\x00\x00"), port_id(), ttl(), END),
     ("discard", "bad_chassis_id_network_address")),
    ("chassis-network-address-ipv6-as-ipv4-size",
     pdu(chassis(5, b"\x02\x0a\x00\x00\x01"), port_id(), ttl(), END),
     ("discard", "bad_chassis_id_network_address")),
    ("port-id-empty", pdu(chassis(), tlv(2, b""), ttl(), END), ("discard", "bad_port_id_length")),
    ("port-id-256-bytes", pdu(chassis(), port_id(7, LONG_ID), ttl(), END),
     ("discard", "bad_port_id_length")),
    ("port-mac-3-bytes", pdu(chassis(), port_id(3, b"\x02\x5e\xaa"), ttl(), END),
     ("discard", "bad_port_id_mac_address")),
    ("port-network-address-family-only", pdu(chassis(), port_id(4, b"\x01"), ttl(), END),
     ("discard", "bad_port_id_network_address")),
    # TTL.
    ("ttl-one-byte", pdu(chassis(), port_id(), tlv(3, b"\x01"), END),
     ("discard", "bad_ttl_length")),
    ("ttl-three-bytes", pdu(chassis(), port_id(), tlv(3, b"\x00\x78\x00"), END),
     ("discard", "bad_ttl_length")),
    ("ttl-empty", pdu(chassis(), port_id(), tlv(3, b""), END), ("discard", "bad_ttl_length")),
    # TLVs that cost only themselves: the frame is used, its address too.
    ("system-name-300-bytes", pdu(mandatory(), desc(GOOD_DESC), tlv(5, b"s" * 300), END),
     ("tlv", 1)),
    ("capabilities-3-bytes", pdu(mandatory(), desc(GOOD_DESC), tlv(7, b"\x00\x14\x00"), END),
     ("tlv", 1)),
    ("management-address-empty", pdu(mandatory(), desc(GOOD_DESC), tlv(8, b""), END), ("tlv", 1)),
    ("org-tlv-2-bytes", pdu(mandatory(), desc(GOOD_DESC), tlv(127, b"\x00\x80"), END), ("tlv", 1)),
    ("pfc-tlv-wrong-length",
     pdu(mandatory(), desc(GOOD_DESC), tlv(127, b"\x00\x80\xc2\x0b\x08"), END), ("tlv", 1)),
    ("unknown-tlv-types", pdu(mandatory(), desc(GOOD_DESC), tlv(9, b"x"), tlv(126, b"y"), END),
     ("tlv", 0)),
    ("no-end-tlv", pdu(mandatory(), desc(GOOD_DESC)), ("tlv", 0)),
    ("trailing-bytes-after-end", pdu(mandatory(), desc(GOOD_DESC), END, b"\xde\xad\xbe\xef"),
     ("tlv", 0)),
    ("ttl-max", pdu(chassis(), port_id(), ttl(65535), desc(GOOD_DESC), END), ("tlv", 0)),
    # Port Descriptions that do not give an address.
    ("description-network-address", good_lldpdu("no-alert 10.200.1.0/30"),
     ("plan", "refused", "PeerIsNetworkAddress")),
    ("description-broadcast-address", good_lldpdu("no-alert 10.200.1.3/30"),
     ("plan", "refused", "PeerIsBroadcastAddress")),
    ("description-prefix-29", good_lldpdu("no-alert 10.200.1.2/29"),
     ("plan", "refused", "PrefixNotSupported")),
    # /31 is valid (RFC 3021): the address moves, and moves back on restore.
    ("description-prefix-31-moves", good_lldpdu("no-alert 10.200.1.2/31"),
     ("moves", "10.200.1.3/31")),
    ("description-prefix-24", good_lldpdu("no-alert 10.200.1.2/24"),
     ("plan", "refused", "PrefixNotSupported")),
    ("description-prefix-32", good_lldpdu("no-alert 10.200.1.2/32"),
     ("plan", "refused", "PrefixNotSupported")),
    ("description-prefix-33", good_lldpdu("no-alert 10.200.1.2/33"),
     ("plan", "refused", "MalformedPrefixLength")),
    ("description-no-prefix", good_lldpdu("no-alert 10.200.1.2"),
     ("plan", "refused", "NoPrefixLength")),
    ("description-leading-zero", good_lldpdu("no-alert 10.200.1.02/30"),
     ("plan", "refused", "MalformedAddress")),
    ("description-three-octets", good_lldpdu("no-alert 10.200.1/30"),
     ("plan", "refused", "MalformedAddress")),
    ("description-octet-256", good_lldpdu("no-alert 10.200.256.2/30"),
     ("plan", "refused", "MalformedAddress")),
    ("description-ipv6", good_lldpdu("no-alert fd00:200:1::2/64"), ("plan", "refused", "NotIpv4")),
    ("description-no-address", good_lldpdu("uplink to spine-3"), ("plan", "refused", "NoAddress")),
    ("description-only-spaces", good_lldpdu("    "), ("plan", "pending", "NoPortDescription")),
    ("description-empty", good_lldpdu(""), ("plan", "pending", "NoPortDescription")),
    ("no-description", pdu(mandatory(), END), ("plan", "pending", "NoPortDescription")),
    ("description-loopback", good_lldpdu("no-alert 127.0.0.2/30"),
     ("plan", "refused", "ReservedAddress")),
    ("description-link-local", good_lldpdu("no-alert 169.254.1.2/30"),
     ("plan", "refused", "ReservedAddress")),
    ("description-multicast", good_lldpdu("no-alert 224.0.0.2/30"),
     ("plan", "refused", "ReservedAddress")),
    ("description-class-e", good_lldpdu("no-alert 240.0.0.2/30"),
     ("plan", "refused", "ReservedAddress")),
    ("description-zero-network", good_lldpdu("no-alert 0.0.0.2/30"),
     ("plan", "refused", "ReservedAddress")),
    ("description-subnet-of-so1", good_lldpdu(SO1_DESC), ("plan", "refused", "DuplicateSubnet")),
    ("description-address-in-use", good_lldpdu(IN_USE_DESC), ("plan", "refused", "AddressInUse")),
    ("description-non-ascii-address", good_lldpdu("no-alert 10.200.1.\u0662/30"),
     ("plan", "refused", "MalformedAddress")),
    ("description-latin1-bytes", good_lldpdu().replace(b"no-alert", b"no-\xe9lert"),
     ("plan", "ready", None)),
    ("description-nul-inside", pdu(mandatory(), desc(b"no-alert\x0010.200.1.2/30"), END),
     ("plan", "refused", "MalformedAddress")),
    ("description-255-bytes", good_lldpdu("r" * (255 - len(GOOD_DESC) - 1) + " " + GOOD_DESC),
     ("plan", "ready", None)),
    ("description-256-bytes", good_lldpdu("r" * (256 - len(GOOD_DESC) - 1) + " " + GOOD_DESC),
     ("plan", "pending", "NoPortDescription")),
    ("two-descriptions-disagree", pdu(mandatory(), desc(GOOD_DESC), desc("no-alert 10.200.9.2/30"),
                                       END), ("plan", "refused", "ConflictingDescriptions")),
    # More than one neighbor on the port.
    ("second-neighbor-other-description",
     [good_lldpdu(), pdu(chassis(4, bytes.fromhex("025ebb000002")), port_id(), ttl(),
                         desc("no-alert 10.200.7.2/30"), END)],
     ("plan", "refused", "ConflictingDescriptions")),
    # TTL edge cases: the neighbor goes, the configuration stays.
    ("ttl-zero-withdraws", pdu(chassis(), port_id(), ttl(0), END),
     ("plan", "pending", "NoLldpNeighbor")),
    ("ttl-one-second-expires", pdu(chassis(), port_id(), ttl(1), desc(GOOD_DESC), END),
     ("plan", "pending", "NoLldpNeighbor")),
    # Many frames in one burst: the last good one wins, nothing flaps.
    ("burst-of-100-bad-frames", [pdu(chassis(), tlv(2, b""), ttl(), END)] * 100,
     ("discard", "bad_port_id_length")),
]


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
# Module set-up: one fabric, one daemon, the baseline.
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fabric():
    fab = sim.Fabric.up(sim.unique_name("hb"), ports=4)
    try:
        fab.stop_lldpd()
        # An address the node already uses on another link (AddressInUse).
        subprocess.run(["ip", "-n", fab.node_netns, "link", "add", "bidummy0", "type", "veth",
                        "peer", "name", "bidummy1"], check=True)
        subprocess.run(["ip", "-n", fab.node_netns, "addr", "add", "10.201.0.1/24", "dev",
                        "bidummy0"], check=True)
        subprocess.run(["ip", "-n", fab.node_netns, "link", "set", "bidummy0", "up"], check=True)
        subprocess.run(["ip", "netns", "add", f"{fab.name}-pod"], check=True)
        yield fab
    finally:
        subprocess.run(["ip", "netns", "del", f"{fab.name}-pod"], check=False,
                       stderr=subprocess.DEVNULL)
        fab.down()


@pytest.fixture(scope="module")
def daemon(fabric):
    d = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}"])
    d.start()
    yield d
    d.cleanup()


STATE_COMMANDS = "link show\naddr show\nroute show table all\nrule show\n"


def all_namespaces_state(fabric) -> dict[str, str]:
    """Links, IPv4 addresses, routes (every table) and rules of every
    namespace of the fabric, as `ip -d -4` prints them (one `ip` per
    namespace). IPv6 is left out as in harness.network_state: rocenet never
    touches it and the kernel's link-local autoconfiguration moves on its own."""
    names = [n for n in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                                       check=True).stdout.split() if n.startswith(fabric.name)]
    return {n: subprocess.run(["ip", "-n", n, "-d", "-4", "-batch", "-"], input=STATE_COMMANDS,
                              capture_output=True, text=True, check=True).stdout for n in names}


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


@pytest.fixture(scope="module")
def senders(fabric):
    s = {0: Sender(fabric, 0), 1: Sender(fabric, 1)}
    yield s
    for sender in s.values():
        sender.close()


@pytest.fixture(scope="module")
def baseline(fabric, daemon, senders):
    """so0 and so1 addressed from a good frame each; the state to compare with."""
    senders[0].send(good_lldpdu())
    senders[1].send(good_lldpdu(SO1_DESC, b"Ethernet1/2"))
    wait_until(lambda: plan_is(daemon, "so0", "ready", None, "10.200.1.1/30")
               and plan_is(daemon, "so1", "ready", None, "10.200.2.1/30"), 15,
               what="so0 and so1 addressed from LLDP")
    # The ports start down (as drivers register them) and rocenetd set them
    # up: wait until the kernel reports carrier on every one (linkwatch may
    # take a second), then let routes settle before the state everything is
    # compared with.
    def carrier() -> bool:
        links = json.loads(subprocess.run(["ip", "-n", fabric.node_netns, "-j", "link", "show"],
                                          capture_output=True, text=True, check=True).stdout)
        return all(link["operstate"] == "UP" for link in links
                   if link["ifname"].startswith("so"))
    wait_until(carrier, 10, what="carrier on every port")
    time.sleep(0.5)
    return all_namespaces_state(fabric)


def restore(daemon, senders) -> None:
    """Back to the baseline neighbor on so0 (only it ever changes)."""
    senders[0].send(pdu(chassis(4, bytes.fromhex("025ebb000002")), port_id(), ttl(0), END))
    senders[0].send(good_lldpdu())
    wait_until(lambda: plan_is(daemon, "so0", "ready", None, "10.200.1.1/30"), 10,
               what="so0 back to its baseline plan")


def discarded(daemon, reason: str) -> float:
    return metric_value(daemon.metrics(), "rocenet_lldp_frames_discarded_total",
                        {"device": "so0", "reason": reason}) or 0.0


def counter(daemon, name: str) -> float:
    return metric_value(daemon.metrics(), name, {"device": "so0"}) or 0.0


@pytest.mark.parametrize("frames,expect", [(c[1], c[2]) for c in LLDP_CASES],
                         ids=[c[0] for c in LLDP_CASES])
def test_malformed_lldp(fabric, daemon, senders, baseline, frames, expect):
    frames = frames if isinstance(frames, list) else [frames]
    kind = expect[0]
    if kind == "discard":
        before = discarded(daemon, expect[1])
        for f in frames:
            senders[0].send(f)
        wait_until(lambda: discarded(daemon, expect[1]) >= before + len(frames), 5,
                   what=f"{len(frames)} frame(s) discarded as {expect[1]}")
        assert discarded(daemon, expect[1]) == before + len(frames)
        assert plan_is(daemon, "so0", "ready", None, "10.200.1.1/30"), plans(daemon)["so0"]
    elif kind == "tlv":
        received = counter(daemon, "rocenet_lldp_frames_received_total")
        tlvs = counter(daemon, "rocenet_lldp_tlvs_discarded_total")
        for f in frames:
            senders[0].send(f)
        wait_until(lambda: counter(daemon, "rocenet_lldp_frames_received_total")
                   >= received + len(frames), 5, what="the frame received")
        assert counter(daemon, "rocenet_lldp_tlvs_discarded_total") == tlvs + expect[1]
        assert plan_is(daemon, "so0", "ready", None, "10.200.1.1/30"), plans(daemon)["so0"]
    elif kind == "moves":
        for f in frames:
            senders[0].send(f)
        wait_until(lambda: plan_is(daemon, "so0", "ready", None, expect[1]), 5,
                   what=f"so0 re-addressed to {expect[1]}")
        wait_until(lambda: f"inet {expect[1]}" in all_namespaces_state(fabric)[fabric.node_netns],
                   5, what=f"{expect[1]} on so0")
        restore(daemon, senders)
        wait_until(lambda: all_namespaces_state(fabric) == baseline, 5,
                   what="the baseline addresses and routes back")
        return
    else:
        _, state, reason = expect
        for f in frames:
            senders[0].send(f)
        try:
            wait_until(lambda: plan_is(daemon, "so0", state, reason), 5,
                       what=f"so0 {state} ({reason})")
        except AssertionError as e:
            raise AssertionError(f"{e}; so0's plan: {plans(daemon)['so0']}") from None
    # Whatever came, the kernel state of every namespace is what it was.
    time.sleep(0.2)
    assert_unchanged(fabric, baseline)
    if kind == "plan" or kind == "tlv":
        restore(daemon, senders)
        assert_unchanged(fabric, baseline)


# ---------------------------------------------------------------------------
# CNI invocations (beyond cni_faults_test.py's): exec'd as Multus does.
# ---------------------------------------------------------------------------

def _conf(**extra):
    """A marker for "the good configuration, with these keys changed"
    (None removes a key); resolved against the running daemon's socket."""
    return ("conf", extra)


DROP = None
NODE_NETNS = object()  # the node's own network namespace, by its /run/netns path
DEEP = 100_000  # levels of brackets in the deeply nested value

# (id, command, configuration (a string is sent as is), environment
#  overrides (None unsets), expected CNI code, a fragment of msg)
CNI_CASES = [
    ("stdin-json-array", "ADD", "[1, 2]", {}, 6, "got array"),
    ("stdin-json-string", "ADD", '"rocenet"', {}, 6, "got string"),
    ("stdin-json-null", "ADD", "null", {}, 6, "got null"),
    ("stdin-trailing-garbage", "ADD", '{"cniVersion": "1.0.0"} x', {}, 6, "invalid JSON"),
    ("stdin-invalid-utf8", "ADD", b'{"cniVersion": "1.0.0", "name": "\xff\xfe"}', {}, 6,
     "invalid JSON"),
    ("stdin-nul-bytes", "ADD", b"\x00" * 64, {}, 6, "invalid JSON"),
    ("stdin-8mib-garbage", "ADD", "x" * (8 << 20), {}, 6, "invalid JSON"),
    ("stdin-deeply-nested-value", "ADD",
     '{"cniVersion":"1.0.0","name":"n","type":"rocenet","mtu":' + "[" * DEEP + "]" * DEEP + "}",
     {}, 6, "nested deeper than"),
    ("number-overflows-double", "ADD", '{"cniVersion":"1.0.0","name":"n","type":"rocenet",'
     '"mtu":1e400}', {}, 6, "1e400"),
    ("cniVersion-number", "ADD", _conf(cniVersion=1.0), {}, 7, "cniVersion"),
    ("cniVersion-future", "ADD", _conf(cniVersion="2.0.0"), {}, 1, "2.0.0"),
    ("cniVersion-empty", "ADD", _conf(cniVersion=""), {}, 1, "cniVersion"),
    ("name-number", "ADD", _conf(name=42), {}, 7, "name"),
    ("name-bad-characters", "ADD", _conf(name="ai net/1"), {}, 7, "name"),
    ("type-missing", "ADD", _conf(type=DROP), {}, 7, "type"),
    ("type-empty", "ADD", _conf(type=""), {}, 7, "type"),
    ("socket-relative", "ADD", _conf(socket="run/rocenetd.sock"), {}, 7, "socket"),
    ("socket-longer-than-sun-path", "ADD", _conf(socket="/" + "s" * 120), {}, 7, "socket"),
    ("timeout-negative", "ADD", _conf(timeout="-1s"), {}, 7, "timeout"),
    ("timeout-above-maximum", "ADD", _conf(timeout="11m"), {}, 7, "timeout"),
    ("timeout-number", "ADD", _conf(timeout=10), {}, 7, "timeout"),
    ("mtu-negative", "ADD", _conf(mtu=-1), {}, 7, "mtu"),
    ("mtu-above-65535", "ADD", _conf(mtu=65536), {}, 7, "mtu"),
    ("mtu-fraction", "ADD", _conf(mtu=1500.5), {}, 7, "mtu"),
    ("mtu-boolean", "ADD", _conf(mtu=True), {}, 7, "mtu"),
    ("mode-number", "ADD", _conf(mode=3), {}, 7, "mode"),
    ("deviceID-number", "ADD", _conf(deviceID=8), {}, 7, "deviceID"),
    ("deviceID-path-traversal", "ADD", _conf(deviceID="../../../sys/class/net/so0"), {}, 7,
     "../../../sys/class/net/so0"),
    ("runtimeConfig-not-object", "ADD", _conf(runtimeConfig=["deviceID"]), {}, 7,
     "runtimeConfig"),
    ("routes-requested", "ADD", _conf(routes=[{"dst": "0.0.0.0/0"}]), {}, 2, "routes"),
    ("prevResult-not-object", "ADD", _conf(prevResult="ok"), {}, 7, "prevResult"),
    ("check-without-prevResult", "CHECK", _conf(), {}, 7, "prevResult"),
    ("status-needs-1.1.0", "STATUS", _conf(cniVersion="1.0.0"), {}, 1, "STATUS"),
    ("gc-attachments-not-array", "GC", _conf(cniVersion="1.1.0",
                                             **{"cni.dev/valid-attachments": "all"}), {}, 7,
     "cni.dev/valid-attachments"),
    ("command-empty", "ADD", _conf(), {"CNI_COMMAND": ""}, 4, "CNI_COMMAND"),
    ("command-lowercase", "ADD", _conf(), {"CNI_COMMAND": "add"}, 4, "CNI_COMMAND"),
    ("command-unset", "ADD", _conf(), {"CNI_COMMAND": None}, 4, "CNI_COMMAND"),
    ("ifname-dot", "ADD", _conf(), {"CNI_IFNAME": "."}, 4, "CNI_IFNAME"),
    ("ifname-dot-dot", "ADD", _conf(), {"CNI_IFNAME": ".."}, 4, "CNI_IFNAME"),
    ("ifname-space", "ADD", _conf(), {"CNI_IFNAME": "net 1"}, 4, "CNI_IFNAME"),
    ("ifname-colon", "ADD", _conf(), {"CNI_IFNAME": "net:1"}, 4, "CNI_IFNAME"),
    ("ifname-unset", "ADD", _conf(), {"CNI_IFNAME": None}, 4, "CNI_IFNAME"),
    ("del-ifname-too-long", "DEL", _conf(), {"CNI_IFNAME": "n" * 16}, 4, "CNI_IFNAME"),
    ("containerid-unset", "ADD", _conf(), {"CNI_CONTAINERID": None}, 4, "CNI_CONTAINERID"),
    # Passed on by the plugin; rocenetd refuses it (INVALID_ARGUMENT -> 4).
    ("containerid-300-chars", "ADD", _conf(), {"CNI_CONTAINERID": "c" * 300}, 4,
     "container id"),
    ("netns-unset-for-add", "ADD", _conf(), {"CNI_NETNS": None}, 4, "CNI_NETNS"),
    ("netns-dot-dot", "ADD", _conf(), {"CNI_NETNS": "/run/netns/../../etc"}, 4, "netns"),
    ("netns-regular-file", "ADD", _conf(), {"CNI_NETNS": "/etc/hostname"}, 4, "netns"),
    ("netns-the-node-itself", "ADD", _conf(), {"CNI_NETNS": NODE_NETNS}, 4,
     "is the node's own network namespace, not a pod's"),
    ("cni-args-without-equals", "ADD", _conf(), {"CNI_ARGS": "K8S_POD_NAME"}, 4, "CNI_ARGS"),
    ("cni-args-unknown-key", "ADD", _conf(), {"CNI_ARGS": "FOO=bar"}, 4, "FOO"),
]


def resolve_conf(conf, daemon) -> str | bytes:
    if isinstance(conf, (str, bytes)):
        return conf
    good = {"cniVersion": "1.0.0", "name": "ai-net", "type": "rocenet", "socket": daemon.socket}
    for key, value in conf[1].items():
        if value is DROP:
            good.pop(key, None)
        else:
            good[key] = value
    return json.dumps(good)


@pytest.mark.parametrize("command,conf,env,code,fragment",
                         [c[1:] for c in CNI_CASES], ids=[c[0] for c in CNI_CASES])
def test_bad_cni_invocation(fabric, daemon, baseline, api, command, conf, env, code, fragment):
    environment = {
        "CNI_COMMAND": command, "CNI_CONTAINERID": "bad-input", "CNI_IFNAME": "net1",
        "CNI_NETNS": f"/run/netns/{fabric.name}-pod", "CNI_PATH": "/usr/lib/cni",
        "CNI_ARGS": "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=bad-input",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    }
    for key, value in env.items():
        if value is None:
            environment.pop(key, None)
        elif value is NODE_NETNS:
            environment[key] = f"/run/netns/{fabric.node_netns}"
        else:
            environment[key] = value
    stdin = resolve_conf(conf, daemon)
    stdin = stdin.encode() if isinstance(stdin, str) else stdin
    before = all_namespaces_state(fabric)
    journal = list_attachments(api)
    cp = subprocess.run([binary("rocenet")], input=stdin, env=environment, capture_output=True,
                        timeout=30)
    assert cp.returncode == 1, (cp.returncode, cp.stdout, cp.stderr)
    out = json.loads(cp.stdout)
    assert out["code"] == code, out
    assert fragment in out["msg"], out
    assert_unchanged(fabric, before)
    assert list_attachments(api) == journal


# ---------------------------------------------------------------------------
# gRPC requests, straight to the daemon's socket.
# ---------------------------------------------------------------------------

PROTOS = ["rocenet/v1/ports.proto", "rocenet/v1/health.proto", "rocenet/v1/addressing.proto",
          "rocenet/v1/attach.proto"]


class Api:
    """The rocenet.v1 messages compiled for Python at test time, and a channel
    to the daemon that sends them, or raw bytes."""

    def __init__(self, socket_path: str):
        grpc = pytest.importorskip("grpc")
        self.grpc = grpc
        self.dir = tempfile.mkdtemp(prefix="rocenet-pb2-")
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "proto")
        subprocess.run(["protoc", f"-I{root}", f"--python_out={self.dir}", *PROTOS], check=True)
        sys.path.insert(0, self.dir)
        from rocenet.v1 import addressing_pb2, attach_pb2, health_pb2, ports_pb2
        self.pb = {"ports": ports_pb2, "health": health_pb2, "addressing": addressing_pb2,
                   "attach": attach_pb2}
        self.channel = grpc.insecure_channel(f"unix:{socket_path}")

    def call(self, method: str, request: bytes):
        """Sends serialized `request` to `method`; the grpc.StatusCode that came back."""
        stub = self.channel.unary_unary(method, request_serializer=lambda b: b,
                                        response_deserializer=lambda b: b)
        try:
            stub(request, timeout=10)
        except self.grpc.RpcError as error:
            return error.code()
        return self.grpc.StatusCode.OK

    def close(self):
        self.channel.close()
        sys.path.remove(self.dir)
        subprocess.run(["rm", "-rf", self.dir], check=False)


@pytest.fixture(scope="module")
def api(daemon):
    a = Api(daemon.socket)
    yield a
    a.close()


def msg(module: str, name: str, **fields):
    """A request, serialized when the test runs (the classes exist only then)."""
    return ("msg", module, name, fields)


def raw(data: bytes):
    return ("raw", data)


NETNS = "/run/netns/{fabric}-pod"

GRPC_CASES = [
    ("getport-empty", "/rocenet.v1.PortDiscovery/GetPort", msg("ports", "GetPortRequest"),
     "INVALID_ARGUMENT"),
    ("getport-unknown", "/rocenet.v1.PortDiscovery/GetPort",
     msg("ports", "GetPortRequest", port="so99"), "NOT_FOUND"),
    ("getport-64k-name", "/rocenet.v1.PortDiscovery/GetPort",
     msg("ports", "GetPortRequest", port="p" * 65536), "INVALID_ARGUMENT"),
    ("neighbors-unknown-port", "/rocenet.v1.PortDiscovery/ListNeighbors",
     msg("ports", "ListNeighborsRequest", port="0000:ff:00.0-p1"), "NOT_FOUND"),
    ("porthealth-empty", "/rocenet.v1.Health/GetPortHealth",
     msg("health", "GetPortHealthRequest"), "INVALID_ARGUMENT"),
    ("porthealth-unknown", "/rocenet.v1.Health/GetPortHealth",
     msg("health", "GetPortHealthRequest", port="so99"), "NOT_FOUND"),
    ("getplan-unknown", "/rocenet.v1.Addressing/GetPlan",
     msg("addressing", "GetPlanRequest", port="so99"), "NOT_FOUND"),
    ("attach-empty", "/rocenet.v1.Attachments/Attach", msg("attach", "AttachRequest"),
     "INVALID_ARGUMENT"),
    ("attach-containerid-leading-dash", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="-x", ifname="net1", netns=NETNS),
     "INVALID_ARGUMENT"),
    ("attach-containerid-300-chars", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="c" * 300, ifname="net1", netns=NETNS),
     "INVALID_ARGUMENT"),
    ("attach-containerid-nul", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="ab\0cd", ifname="net1", netns=NETNS),
     "INVALID_ARGUMENT"),
    ("attach-ifname-slash", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="c1", ifname="a/b", netns=NETNS),
     "INVALID_ARGUMENT"),
    ("attach-ifname-16-bytes", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="c1", ifname="n" * 16, netns=NETNS),
     "INVALID_ARGUMENT"),
    ("attach-netns-outside-netns-dirs", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="c1", ifname="net1", netns="/tmp/ns"),
     "INVALID_ARGUMENT"),
    ("attach-netns-dot-dot", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="c1", ifname="net1",
         netns="/run/netns/../netns/x"), "INVALID_ARGUMENT"),
    ("attach-netns-of-the-node", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="c1", ifname="net1", netns="/run/netns/{node}"),
     "INVALID_ARGUMENT"),
    ("attach-netns-missing", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="c1", ifname="net1",
         netns="/run/netns/bi-does-not-exist"), "NOT_FOUND"),
    ("attach-unknown-device", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="c1", ifname="net1", netns=NETNS,
         device_id="0000:ff:00.0-p9"), "NOT_FOUND"),
    ("attach-bad-mode", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="c1", ifname="net1", netns=NETNS, mode="L4"),
     "INVALID_ARGUMENT"),
    ("attach-mtu-10", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="c1", ifname="net1", netns=NETNS, mtu=10),
     "INVALID_ARGUMENT"),
    ("getplan-empty", "/rocenet.v1.Addressing/GetPlan", msg("addressing", "GetPlanRequest"),
     "INVALID_ARGUMENT"),
    ("check-unknown-attachment", "/rocenet.v1.Attachments/Check",
     msg("attach", "CheckRequest", container_id="nobody", ifname="net1", netns=NETNS),
     "NOT_FOUND"),
    # Bytes that are not the message the method takes.
    ("listports-garbage-bytes", "/rocenet.v1.PortDiscovery/ListPorts", raw(b"\xff" * 32),
     "INTERNAL"),
    # A field of the wrong wire type is an unknown field: the port is empty.
    ("getport-wrong-wire-type", "/rocenet.v1.PortDiscovery/GetPort", raw(b"\x0d\x01\x02\x03\x04"),
     "INVALID_ARGUMENT"),
    ("getport-invalid-utf8-string", "/rocenet.v1.PortDiscovery/GetPort", raw(b"\x0a\x02\xc3\x28"),
     "INTERNAL"),
    ("attach-length-past-end", "/rocenet.v1.Attachments/Attach", raw(b"\x0a\x7fabc"), "INTERNAL"),
    ("unknown-method", "/rocenet.v1.PortDiscovery/DeletePorts", raw(b""), "UNIMPLEMENTED"),
    ("unknown-service", "/rocenet.v2.Ports/List", raw(b""), "UNIMPLEMENTED"),
    ("request-over-4mib", "/rocenet.v1.PortDiscovery/GetPort",
     msg("ports", "GetPortRequest", port="p" * (5 << 20)), "RESOURCE_EXHAUSTED"),
]


def list_attachments(api) -> bytes:
    stub = api.channel.unary_unary("/rocenet.v1.Attachments/List",
                                   request_serializer=lambda b: b,
                                   response_deserializer=lambda b: b)
    return stub(b"", timeout=10)


@pytest.mark.parametrize("method,request_,code", [c[1:] for c in GRPC_CASES],
                         ids=[c[0] for c in GRPC_CASES])
def test_bad_grpc_request(fabric, daemon, baseline, api, method, request_, code):
    if request_[0] == "msg":
        _, module, name, fields = request_
        fields = {k: (v.format(fabric=fabric.name, node=fabric.node_netns)
                      if isinstance(v, str) else v)
                  for k, v in fields.items()}
        data = getattr(api.pb[module], name)(**fields).SerializeToString()
    else:
        data = request_[1]
    before = all_namespaces_state(fabric)
    journal = list_attachments(api)
    assert api.call(method, data).name == code
    assert_unchanged(fabric, before)
    assert list_attachments(api) == journal
    # The daemon still answers.
    assert api.call("/rocenet.v1.PortDiscovery/ListPorts", b"").name == "OK"
