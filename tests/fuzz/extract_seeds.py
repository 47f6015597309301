#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes every frame of the classic pcap files in a directory as fuzz seeds.

    extract_seeds.py PCAP_DIR OUT_DIR

For each frame, OUT_DIR gets <capture>-<n>.frame (the whole Ethernet frame)
and <capture>-<n>.lldpdu (what follows the EtherType), since the fuzz target
feeds its input to both Decode() and DecodeLldpdu().
"""
import pathlib
import struct
import sys

MAGICS = {0xA1B2C3D4, 0xA1B23C4D}
ETHERNET_HEADER = 14


def frames(path):
    data = path.read_bytes()
    if len(data) < 24:
        raise ValueError(f"{path}: too short for a pcap header")
    for order in "<>":
        if struct.unpack(order + "I", data[:4])[0] in MAGICS:
            break
    else:
        raise ValueError(f"{path}: not a classic pcap file")
    pos = 24
    while pos + 16 <= len(data):
        _, _, included, _ = struct.unpack(order + "IIII", data[pos:pos + 16])
        pos += 16
        if pos + included > len(data):
            raise ValueError(f"{path}: record at {pos - 16} runs past the end")
        yield data[pos:pos + included]
        pos += included


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    source, out = pathlib.Path(argv[1]), pathlib.Path(argv[2])
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    for pcap in sorted(source.glob("*.pcap")):
        for n, frame in enumerate(frames(pcap)):
            (out / f"{pcap.stem}-{n}.frame").write_bytes(frame)
            (out / f"{pcap.stem}-{n}.lldpdu").write_bytes(frame[ETHERNET_HEADER:])
            count += 1
    if count == 0:
        print(f"no frames found under {source}", file=sys.stderr)
        return 1
    print(f"{count} frames from {source} -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
