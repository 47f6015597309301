#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Floods one interface with LLDP frames, each from a random chassis.

  lldp_flood.py IFNAME --rate 10000 --seconds 15

Run it inside the namespace that holds IFNAME (the switch end of a port):
an AF_PACKET socket sends 802.1AB frames to the nearest-bridge group address,
each with a random MAC chassis id, Port ID "flood", TTL 120 and no Port
Description. Frames go out in small batches paced against the clock, so the
rate holds over the run. Prints one JSON line: frames sent, seconds, rate.
Needs root (CAP_NET_RAW).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import struct
import sys
import time

LLDP_GROUP = bytes.fromhex("0180c200000e")
ETH_P_LLDP = 0x88CC


def tlv(kind: int, value: bytes) -> bytes:
    return struct.pack("!H", (kind << 9) | len(value)) + value


def frame(chassis: bytes, source: bytes) -> bytes:
    body = (tlv(1, b"\x04" + chassis) +           # Chassis ID, subtype MAC address
            tlv(2, b"\x07" + b"flood") +          # Port ID, subtype locally assigned
            tlv(3, struct.pack("!H", 120)) +      # TTL
            tlv(0, b""))                          # End of LLDPDU
    return LLDP_GROUP + source + struct.pack("!H", ETH_P_LLDP) + body


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ifname")
    ap.add_argument("--rate", type=float, default=10000.0, help="frames per second")
    ap.add_argument("--seconds", type=float, default=15.0)
    args = ap.parse_args()

    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    sock.bind((args.ifname, 0))
    source = bytes.fromhex("02") + os.urandom(5)
    # Random chassis ids, made ahead in a pool so the loop only sends; the
    # pool is larger than the table's bound by far, every frame a stranger.
    pool = [frame(os.urandom(6), source) for _ in range(65536)]
    batch = max(1, int(args.rate / 1000))  # one batch per millisecond
    sent = 0
    start = time.monotonic()
    end = start + args.seconds
    next_batch = start
    send = sock.send
    while True:
        now = time.monotonic()
        if now >= end:
            break
        if now < next_batch:
            time.sleep(min(next_batch - now, 0.001))
            continue
        for _ in range(batch):
            try:
                send(pool[sent & 0xFFFF])
            except BlockingIOError:
                pass
            sent += 1
        next_batch += batch / args.rate
    elapsed = time.monotonic() - start
    print(json.dumps({"frames": sent, "seconds": round(elapsed, 3),
                      "rate": round(sent / elapsed, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
