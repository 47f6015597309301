#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Keeps a fabric's fake sysfs in step with the kernel, as sysfs tagging does.

On a real node a netdev moved into another network namespace (a pod)
disappears from the host's /sys/class/net/<if> and
/sys/bus/pci/devices/<pci>/net/<if>, reappears under its current name when
it comes back, and a rename renames both.  This process runs inside the
fabric's node namespace, listens to rtnetlink link events there and makes the
fake tree follow, whoever moves the port: rocenetd, a test, ``ip link set
netns``, a namespace that dies.

A fabric port is recognised by its MAC (a veth keeps its MAC across moves)
and its link kind (veth: a VLAN on top of a port shares its MAC but is no
port).  Its entries are present, under the link's current name, exactly
while the link is in the node namespace.

Order matters: it subscribes to RTMGRP_LINK before it dumps the links once,
so no change between the two is lost; messages are handled in the order the
kernel queued them, and the tree is reconciled once per burst of events.  If
the socket overflows (ENOBUFS) it dumps again.

Speed matters too: the kernel changes sysfs before it announces a move, so
every moment the follower takes is a moment a daemon that rescans on the
event sees the old state.  Each port's directory is kept ready-made outside
the tree, so a move is two system calls, and the follower runs at a low
real-time priority (SCHED_FIFO 1) when it may, so that a busy machine does
not make it wait: about 0.1-0.5 ms from the event to the change.  After the first dump it
writes ``sysfs-follower.ready`` (its pid) into the state dir.  The ports it
knows come from fabric.json, re-read when it changes.

It also keeps each port's RDMA GID table (sysfs_tree.write_gid_table) in
step with the port's IPv4 addresses in the node namespace, as the kernel's
RDMA core does when an address is added or removed: it listens to
RTMGRP_IPV4_IFADDR too and dumps the addresses after the links.  A port in
a pod keeps the table it had (the follower sees only the node namespace).

Run as: ip netns exec NAME-node python3 sysfs_follower.py STATE_DIR
It exits by itself when the state dir goes away.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import select
import socket
import struct
import subprocess
import sys
import time

import sysfs_tree
from simutil import FabricError, pids_in_netns, proc_cmdline

RTMGRP_LINK = 1
RTMGRP_IPV4_IFADDR = 0x10
RTM_NEWLINK, RTM_DELLINK, RTM_GETLINK = 16, 17, 18
RTM_NEWADDR, RTM_DELADDR, RTM_GETADDR = 20, 21, 22
IFA_LOCAL = 2
NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REQUEST, NLM_F_DUMP, NLM_F_DUMP_INTR = 0x1, 0x300, 0x10
IFLA_ADDRESS, IFLA_IFNAME, IFLA_LINKINFO, IFLA_INFO_KIND = 1, 3, 18, 1
SO_RCVBUFFORCE = 33
READY_FILE = "sysfs-follower.ready"
STATE_FILE = "fabric.json"
IDLE_CHECK = 2.0  # seconds between checks that the fabric still exists


def _attrs(data: bytes, off: int = 0) -> dict[int, bytes]:
    out = {}
    while off + 4 <= len(data):
        ln, typ = struct.unpack_from("HH", data, off)
        if ln < 4:
            break
        out[typ & 0x3FFF] = data[off + 4 : off + ln]
        off += (ln + 3) & ~3
    return out


def parse_addr(payload: bytes) -> tuple[int, str]:
    """(ifindex, dotted IPv4) of an RTM_NEWADDR/RTM_DELADDR payload; "" if not IPv4."""
    family, _plen, _flags, _scope, index = struct.unpack_from("BBBBI", payload)
    local = _attrs(payload, 8).get(IFA_LOCAL, b"")
    if family != socket.AF_INET or len(local) != 4:
        return index, ""
    return index, socket.inet_ntoa(local)


def parse_link(payload: bytes) -> tuple[int, str, str, str]:
    """(ifindex, ifname, mac, kind) of an RTM_NEWLINK/RTM_DELLINK payload."""
    _family, _type, index, _flags, _change = struct.unpack_from("BxHiII", payload)
    a = _attrs(payload, 16)
    name = a.get(IFLA_IFNAME, b"").rstrip(b"\0").decode(errors="replace")
    mac = ":".join(f"{b:02x}" for b in a.get(IFLA_ADDRESS, b""))
    kind = _attrs(a.get(IFLA_LINKINFO, b"")).get(IFLA_INFO_KIND, b"").rstrip(b"\0").decode()
    return index, name, mac, kind


class Follower:
    def __init__(self, state_dir: str):
        self.state_dir = state_dir
        self.state_path = os.path.join(state_dir, STATE_FILE)
        self.root = ""
        self.ports: dict[str, dict] = {}  # host MAC -> where its entries go
        self.links: dict[int, tuple[str, str, str]] = {}  # ifindex -> (mac, name, kind)
        self.applied: dict[str, str] = {}  # host MAC -> name published in the tree
        self.addrs: dict[int, set[str]] = {}  # ifindex -> IPv4 addresses
        self.gids: dict[str, tuple] = {}  # host MAC -> (netdev, GID table) written
        self.dump_queue: list[int] = []  # dumps still to request after this one
        self.stamp: tuple | None = None
        self.dumping = False
        self.redump = False
        self.ready = False
        self.seq = 0
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)

    # ---- fabric.json

    def load_ports(self) -> bool:
        """Re-read the fabric's ports if fabric.json changed; True if it did."""
        try:
            st = os.stat(self.state_path)
        except FileNotFoundError:
            return False
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        if stamp == self.stamp:
            return False
        with open(self.state_path) as f:
            state = json.load(f)
        self.stamp = stamp
        self.root = state["sysfs_root"]
        mods = state["modules"]
        self.ports = {
            p["host_mac"]: {
                "device_dir": mods[p["module_id"]]["device_dir"],
                "pci": p["pci_address"],
                "dev_port": p["port_index"],
                "module": mods[p["module_id"]],
            }
            for p in state["ports"]
        }
        return True

    # ---- netlink

    def subscribe(self) -> None:
        for opt, size in ((SO_RCVBUFFORCE, 8 << 20), (socket.SO_RCVBUF, 8 << 20)):
            try:
                self.sock.setsockopt(socket.SOL_SOCKET, opt, size)
                break
            except OSError:
                continue
        self.sock.bind((0, RTMGRP_LINK | RTMGRP_IPV4_IFADDR))

    def request_dump(self) -> None:
        """The links, then the addresses: one dump at a time per socket."""
        self.links = {}
        self.addrs = {}
        self.dump_queue = [RTM_GETADDR]
        self.dumping = True
        self._send_dump(RTM_GETLINK)

    def _send_dump(self, kind: int) -> None:
        self.seq += 1
        if kind == RTM_GETLINK:
            body = struct.pack("BxHiII", socket.AF_UNSPEC, 0, 0, 0, 0)
        else:
            body = struct.pack("BBBBI", socket.AF_INET, 0, 0, 0, 0)
        hdr = struct.pack("IHHII", 16 + len(body), kind, NLM_F_REQUEST | NLM_F_DUMP, self.seq, 0)
        self.sock.send(hdr + body)

    def handle(self, data: bytes) -> None:
        off = 0
        while off + 16 <= len(data):
            ln, typ, flags, seq, _pid = struct.unpack_from("IHHII", data, off)
            if ln < 16:
                break
            payload = data[off + 16 : off + ln]
            off += (ln + 3) & ~3
            if flags & NLM_F_DUMP_INTR:
                self.redump = True
            if typ == RTM_NEWLINK:
                index, name, mac, kind = parse_link(payload)
                self.links[index] = (mac, name, kind)
            elif typ == RTM_DELLINK:
                index = parse_link(payload)[0]
                self.links.pop(index, None)
                self.addrs.pop(index, None)
            elif typ in (RTM_NEWADDR, RTM_DELADDR):
                index, address = parse_addr(payload)
                if address:
                    held = self.addrs.setdefault(index, set())
                    (held.add if typ == RTM_NEWADDR else held.discard)(address)
            elif typ == NLMSG_DONE and seq == self.seq:
                if self.dump_queue:
                    self._send_dump(self.dump_queue.pop(0))
                else:
                    self.dumping = False
            elif typ == NLMSG_ERROR and seq == self.seq:
                (err,) = struct.unpack_from("i", payload)
                if err:
                    raise OSError(-err, f"link dump failed: {os.strerror(-err)}")
        if not self.dumping and self.redump:
            self.redump = False
            self.request_dump()

    def receive(self, block: bool) -> bool:
        """Handle one datagram; False if none was waiting (block=False)."""
        try:
            data = self.sock.recv(1 << 20, 0 if block else socket.MSG_DONTWAIT)
        except BlockingIOError:
            return False
        except OSError as e:
            if e.errno != errno.ENOBUFS:
                raise
            log("netlink socket overflowed; dumping the links again")
            if self.dumping:
                self.redump = True
            else:
                self.request_dump()
            return True
        self.handle(data)
        return True

    # ---- the tree

    def desired(self) -> dict[str, str]:
        return {mac: name for mac, name, kind in self.links.values() if kind == "veth" and mac in self.ports}

    def reconcile(self) -> list[str]:
        """Make the tree match the links; returns what changed, for the log."""
        if any(kind == "veth" and mac not in self.ports for mac, _, kind in self.links.values()):
            if self.load_ports():  # a port added since we last read fabric.json
                self.stage_all()
        want = self.desired()
        changed = [mac for mac in set(self.applied) | set(want) if self.applied.get(mac) != want.get(mac)]
        # Withdraw every change first, then publish: a name one port gives up
        # in this burst may be the name another port takes.  A rename is a
        # withdrawal and a publication (four system calls in all).
        for mac in changed:
            if mac in self.applied:
                sysfs_tree.withdraw_port(self.root, self.ports[mac]["device_dir"], mac, self.applied.pop(mac))
        for mac in changed:
            if mac in want:
                p = self.ports[mac]
                sysfs_tree.stage_port(self.root, p["device_dir"], p["pci"], p["dev_port"], mac)
                sysfs_tree.publish_port(self.root, p["device_dir"], mac, want[mac])
                self.applied[mac] = want[mac]
        self.follow_gids(want)
        return [f"{mac} {want.get(mac) or 'absent'}" for mac in sorted(changed)]

    def follow_gids(self, want: dict[str, str]) -> None:
        """Rewrite the GID table of every port in the namespace whose name or
        addresses changed."""
        index_of = {mac: index for index, (mac, _, kind) in self.links.items() if kind == "veth"}
        for mac, name in want.items():
            p = self.ports[mac]
            table = sysfs_tree.gid_table(mac, sorted(self.addrs.get(index_of.get(mac), ())))
            if self.gids.get(mac) == (name, table):
                continue
            sysfs_tree.write_gid_table(self.root, p["module"], p["dev_port"], name, table)
            self.gids[mac] = (name, table)

    def stage_all(self) -> None:
        """Park a ready-made directory for every port not in the tree, so
        that its publication is a rename."""
        for mac, p in self.ports.items():
            if mac not in self.applied:
                sysfs_tree.stage_port(self.root, p["device_dir"], p["pci"], p["dev_port"], mac)

    def start(self) -> None:
        self.load_ports()
        self.applied = {mac: name for mac, (dd, name) in sysfs_tree.published(
            self.root, sorted({p["device_dir"] for p in self.ports.values()})).items()
            if mac in self.ports}
        self.stage_all()
        # The kernel updates sysfs before it tells anyone; the closest a
        # process gets is to run first when the event wakes it and a busy
        # machine (compilers, the daemon under test) has every core taken.
        with contextlib.suppress(OSError, AttributeError):
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        self.subscribe()
        self.request_dump()

    def run(self) -> int:
        self.start()
        while os.path.isdir(self.state_dir):
            r, _, _ = select.select([self.sock], [], [], IDLE_CHECK)
            if not r:
                continue
            t0 = time.monotonic()
            self.receive(block=True)
            while self.receive(block=False):
                pass
            if self.dumping:
                continue
            changes = self.reconcile()
            if not self.ready:
                self.ready = True
                self.write_ready()
            if changes:
                log(f"{', '.join(changes)} ({(time.monotonic() - t0) * 1000:.2f} ms)")
        return 0

    def write_ready(self) -> None:
        path = os.path.join(self.state_dir, READY_FILE)
        tmp = f"{path}.tmp"
        with open(tmp, "w") as f:
            f.write(f"{os.getpid()}\n")
        os.replace(tmp, path)


# ---- control, used by fabric.py (outside the node namespace)


def spawn(state_dir: str, node_netns: str, log_path: str, timeout: float = 10.0) -> subprocess.Popen:
    """Start a follower in node_netns and wait until it has done its first
    dump; its pid is the Popen's (ip netns exec execs python)."""
    ready = os.path.join(state_dir, READY_FILE)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(ready)
    argv = ["ip", "netns", "exec", node_netns, sys.executable, os.path.abspath(__file__), state_dir]
    with open(log_path, "ab") as logf:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                                start_new_session=True, close_fds=True)
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError, ValueError):
            with open(ready) as f:
                if int(f.read()) == proc.pid:
                    return proc
        if proc.poll() is not None:
            raise FabricError(f"sysfs follower exited ({proc.returncode}); see {log_path}")
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            raise FabricError(f"sysfs follower not ready after {timeout}s; see {log_path}")
        time.sleep(0.01)


def followers_of(state_dir: str, node_netns: str) -> list[int]:
    """Follower processes of this fabric still running in its node namespace."""
    me = os.path.abspath(__file__)
    return [pid for pid in pids_in_netns(node_netns)
            if proc_cmdline(pid)[1:3] == [me, state_dir]]


def log(msg: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} sysfs-follower: {msg}", file=sys.stderr, flush=True)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: sysfs_follower.py STATE_DIR (inside the node namespace)", file=sys.stderr)
        return 2
    try:
        return Follower(os.path.abspath(argv[0])).run()
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
