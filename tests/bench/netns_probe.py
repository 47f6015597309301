# SPDX-License-Identifier: Apache-2.0
"""Watch a network namespace from inside: LLDP frames on its ports and
rtnetlink address/route events, timestamped with one monotonic clock.

Used by the benchmarks; needs root. Python's os.setns arrives in 3.12, so
setns(2) is called through libc."""

from __future__ import annotations

import ctypes
import errno
import os
import select
import socket
import struct
import time

CLONE_NEWNET = 0x40000000
ETH_P_LLDP = 0x88CC
RTMGRP_IPV4_IFADDR = 0x10
RTMGRP_IPV4_ROUTE = 0x40
RTM_NEWADDR, RTM_NEWROUTE = 20, 24
RTA_GATEWAY = 5


def enter_netns(name: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns {name}")
    finally:
        os.close(fd)


class Probe:
    """Opened inside a namespace (the calling thread stays there)."""

    def __init__(self, netns: str, ports: list[str]):
        enter_netns(netns)
        self.lldp = {}
        for ifname in ports:
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_LLDP))
            s.bind((ifname, ETH_P_LLDP))
            s.setblocking(False)
            self.lldp[s] = ifname
        self.nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
        self.nl.bind((0, RTMGRP_IPV4_IFADDR | RTMGRP_IPV4_ROUTE))
        self.nl.setblocking(False)

    def events(self, timeout: float):
        """Yields ("lldp", ifname, frame, t) and ("route", gateway, None, t) /
        ("addr", None, None, t) until `timeout` passes without one."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            ready, _, _ = select.select([*self.lldp, self.nl], [], [], left)
            now = time.monotonic()
            for s in ready:
                if s is self.nl:
                    data = s.recv(65536)
                    for kind, gateway in _parse_netlink(data):
                        yield kind, gateway, None, now
                else:
                    try:
                        frame = s.recv(9216)
                    except BlockingIOError:
                        continue
                    except OSError as e:
                        # A socket bound to a port that is down reports it
                        # once (ENETDOWN); frames follow once it is up.
                        if e.errno == errno.ENETDOWN:
                            continue
                        raise
                    yield "lldp", self.lldp[s], frame, now


def _parse_netlink(data: bytes):
    offset = 0
    while offset + 16 <= len(data):
        length, kind = struct.unpack_from("=IH", data, offset)
        if length < 16:
            break
        if kind == RTM_NEWADDR:
            yield "addr", None
        elif kind == RTM_NEWROUTE:
            gateway = None
            attr = offset + 16 + 12  # nlmsghdr + rtmsg
            while attr + 4 <= offset + length:
                alen, atype = struct.unpack_from("=HH", data, attr)
                if alen < 4:
                    break
                if atype == RTA_GATEWAY and alen == 8:
                    gateway = socket.inet_ntoa(data[attr + 4:attr + 8])
                attr += (alen + 3) & ~3
            yield "route", gateway
        offset += (length + 3) & ~3
