# SPDX-License-Identifier: Apache-2.0
"""What the training programs (allreduce.py, rendezvous.py) say of their
pod's interfaces: the bytes each moved (from /sys/class/net) and their
IPv4 addresses."""

from __future__ import annotations

import os
import subprocess


def interface_bytes() -> dict[str, dict[str, int]]:
    counters = {}
    for name in sorted(os.listdir("/sys/class/net")):
        stats = f"/sys/class/net/{name}/statistics"
        with open(f"{stats}/tx_bytes") as tx, open(f"{stats}/rx_bytes") as rx:
            counters[name] = {"tx": int(tx.read()), "rx": int(rx.read())}
    return counters


def addresses() -> dict[str, str]:
    out = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True,
                         check=True).stdout
    return {fields[1]: fields[3] for fields in (line.split() for line in out.splitlines())}
