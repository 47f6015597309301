# SPDX-License-Identifier: Apache-2.0
"""The bad-input catalogue, LLDP: malformed frames thrown at the real rocenetd
on a simulated fabric. Each case is its own test; each asserts the exact error
class the daemon reports, and that the network state of every namespace of
the fabric (links, addresses, routes, rules) is byte-for-byte what it was
before.

LLDP frames are written by hand and sent from the switch side of a fabric
port with a raw packet socket, lldpd being stopped so that only these frames
reach the node. Port so0 and so1 first hear a good frame each and are
addressed from it; that configuration is the baseline every case is compared
with. A frame the decoder refuses must show in
rocenet_lldp_frames_discarded_total{reason=...}; a frame it accepts with a
bad Port Description must show in `rocectl addressing` as the plan's state
and reason, with the address left as it was. (The fabric, the daemon and the
baseline are fixtures in conftest.py, shared with bad_input_cni_grpc_test.py.)
"""

from __future__ import annotations

import time

import pytest

from bad_input_support import (
    CHASSIS_MAC,
    END,
    FRAME,
    GOOD_DESC,
    IN_USE_DESC,
    SO1_DESC,
    all_namespaces_state,
    assert_unchanged,
    chassis,
    desc,
    good_lldpdu,
    mandatory,
    pdu,
    plan_is,
    plans,
    port_id,
    tlv,
    ttl,
)
from harness import metric_value, wait_until

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


def restore(daemon, senders) -> None:
    """Back to the baseline neighbor on so0 (only it ever changes)."""
    senders[0].send(pdu(chassis(4, bytes.fromhex("025ebb000002")), port_id(), ttl(0), END))
    senders[0].send(good_lldpdu())
    wait_until(lambda: plan_is(daemon, "so0", "ready", None, "10.200.1.1/30"), 10,
               what="so0 back to its baseline plan")


def discarded(daemon, reason: str) -> float:
    return metric_value(daemon.metrics(), "rocenet_lldp_frames_discarded_total",
                        {"device": "so0", "reason": reason}) or 0.0


# rocenetd samples its counters at half its --errors-interval (1s here).
COUNTER_SAMPLE_SECONDS = 0.5


def counter(daemon, name: str) -> float:
    return metric_value(daemon.metrics(), name, {"device": "so0"}) or 0.0


@pytest.mark.parametrize("frames,expect", [(c[1], c[2]) for c in LLDP_CASES],
                         ids=[c[0] for c in LLDP_CASES])
def test_malformed_lldp(bad_input_fabric, bad_input_daemon, bad_input_senders, bad_input_baseline,
                       frames, expect):
    fabric, daemon, senders = bad_input_fabric, bad_input_daemon, bad_input_senders
    baseline = bad_input_baseline
    frames = frames if isinstance(frames, list) else [frames]
    kind = expect[0]
    if kind == "discard":
        before = discarded(daemon, expect[1])
        for f in frames:
            senders[0].send(f)
        wait_until(lambda: discarded(daemon, expect[1]) >= before + len(frames), 12,
                   what=f"{len(frames)} frame(s) discarded as {expect[1]}")
        assert discarded(daemon, expect[1]) == before + len(frames)
        assert plan_is(daemon, "so0", "ready", None, "10.200.1.1/30"), plans(daemon)["so0"]
    elif kind == "tlv":
        received = counter(daemon, "rocenet_lldp_frames_received_total")
        tlvs = counter(daemon, "rocenet_lldp_tlvs_discarded_total")
        for f in frames:
            senders[0].send(f)
        # The switch's lldpd sends frames of its own, so the count received
        # may move before ours is read: wait for the discarded TLVs too, then
        # for two more of rocenetd's counter samples, so that a count still
        # to come (or one too many) would show.
        wait_until(lambda: counter(daemon, "rocenet_lldp_frames_received_total")
                   >= received + len(frames) and
                   counter(daemon, "rocenet_lldp_tlvs_discarded_total") >= tlvs + expect[1], 12,
                   what="the frame received")
        time.sleep(2 * COUNTER_SAMPLE_SECONDS + 0.1)
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

