# SPDX-License-Identifier: Apache-2.0
"""The simulated fabric's sysfs follows the kernel as real sysfs does: a port
moved into a pod leaves the host's tree, comes back under its current name,
within milliseconds, never half-written, and a dead follower catches up."""

import os
import signal
import statistics
import subprocess
import sys
import time

from fabric import Fabric, unique_name  # noqa: E402
from simcheck import carrier, cli, entries, ip, needs_fabric, snapshot, wait_until

# ---- sysfs follows the kernel


@needs_fabric
def test_sysfs_follows_moves_and_renames(fab, pod):
    node = fab.node_netns
    before = snapshot(fab, "so2")
    ip("-n", node, "link", "set", "so2", "netns", pod)
    wait_until(lambda: entries(fab, 2, "so2") == (False, False), what="so2 to leave sysfs")
    ip("-n", pod, "link", "set", "so2", "name", "net1")  # renames in the pod are none of the host's business
    ip("-n", pod, "link", "set", "net1", "netns", node, "name", "so2")
    wait_until(lambda: entries(fab, 2, "so2") == (True, True), what="so2 to come back")
    assert snapshot(fab, "so2") == before
    ip("-n", node, "link", "set", "so2", "name", "rn2")  # it came back down: renaming is allowed
    wait_until(lambda: entries(fab, 2, "rn2") == (True, True), what="the rename")
    assert entries(fab, 2, "so2") == (False, False) and snapshot(fab, "rn2") == before
    assert fab.host_ifname(2) == "rn2"
    # a passthru macvlan on top shares the port's MAC but is no port
    ip("-n", node, "link", "add", "link", "rn2", "name", "rn2m", "type", "macvlan", "mode", "passthru")
    ip("-n", node, "link", "set", "rn2", "name", "so2")
    wait_until(lambda: entries(fab, 2, "so2") == (True, True), what="the rename back")
    assert entries(fab, 2, "rn2m") == (False, False) and fab.host_ifname(2) == "so2"
    ip("-n", node, "link", "del", "rn2m")
    fab.link(2, "up", side="node")
    wait_until(lambda: carrier(fab, "so2") == "1", what="carrier on so2")


# A daemon's view: a link listener in the node namespace that, woken by the
# move of a port out (RTM_DELLINK) or back in (RTM_NEWLINK), looks at
# class/net/<if> until it agrees, and prints how long that took in ms.
LISTENER = r"""
import os, socket, struct, sys, time
root, ifname = sys.argv[1:]
link, name = os.path.join(root, "class/net", ifname), ifname.encode() + b"\0"
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
s.bind((0, 1))
print("READY", flush=True)
present = True
while True:
    data = s.recv(65536)
    heard = time.monotonic()
    ln, typ = struct.unpack_from("IH", data)
    if name not in data[:ln] or typ != (17 if present else 16):
        continue
    present = not present
    while os.path.lexists(link) != present:
        pass
    print((time.monotonic() - heard) * 1000, flush=True)
"""

# Reads every port's dev_port as fast as it can until SIGTERM; prints what
# is not a whole number, then how many it read.
READER = r"""
import os, re, signal, sys
root, reads, stop = sys.argv[1], 0, []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
while not stop:
    for n in os.listdir(os.path.join(root, "class/net")):
        try:
            with open(os.path.join(root, "class/net", n, "dev_port")) as f:
                v = f.read()
        except FileNotFoundError:
            continue
        reads += 1
        if not re.fullmatch(r"\d+\n", v):
            print("BAD", repr(v), flush=True)
print("READS", reads, flush=True)
"""


def _move(fab, pod, out):
    """Start moving so1 out to pod (or back); returns the running ip."""
    node = fab.node_netns
    return subprocess.Popen(["ip", "-n", node if out else pod, "link", "set", "so1", "netns",
                             pod if out else node])


@needs_fabric
def test_sysfs_follower_lag(fab, pod):
    """How long a daemon that looks right after the netlink event still sees
    the old state, over 20 moves out and back."""
    lst = subprocess.Popen(["ip", "netns", "exec", fab.node_netns, sys.executable, "-c", LISTENER,
                            fab.sysfs_root, "so1"], stdout=subprocess.PIPE, text=True)
    try:
        assert lst.stdout.readline().strip() == "READY"
        lags = []
        for move in range(20):
            assert _move(fab, pod, move % 2 == 0).wait() == 0
            lags.append(float(lst.stdout.readline()))
    finally:
        lst.kill()
        lst.wait()
    lags.sort()
    print(f"sysfs follower lag after the netlink event over {len(lags)} moves: median "
          f"{statistics.median(lags):.2f} ms, 90% {lags[17]:.2f} ms, max {lags[-1]:.2f} ms")
    assert lags[-1] < 100
    fab.link(1, "up", side="node")


@needs_fabric
def test_sysfs_readers_never_see_half_an_entry(fab, pod):
    reader = subprocess.Popen([sys.executable, "-c", READER, fab.sysfs_root], stdout=subprocess.PIPE,
                              text=True)
    try:
        for move in range(20):
            assert _move(fab, pod, move % 2 == 0).wait() == 0
            wait_until(lambda: entries(fab, 1, "so1") == ((False, False) if move % 2 == 0 else (True, True)))
    finally:
        reader.terminate()
        seen = reader.communicate()[0]
    assert "BAD" not in seen and int(seen.split("READS")[1]) > 100, seen


@needs_fabric
def test_pod_deleted_with_port_inside_leaves_no_entry(fab, pod):
    p = fab.add_port()
    i = p["index"]
    ip("-n", fab.node_netns, "link", "set", p["host_ifname"], "netns", pod)
    wait_until(lambda: entries(fab, i, p["host_ifname"]) == (False, False))
    ip("netns", "delete", pod)  # the veth dies with it, switch end too
    wait_until(lambda: not fab._switch_end_exists(p), what="the switch end to die")
    time.sleep(0.1)
    assert entries(fab, i, p["host_ifname"]) == (False, False)
    assert fab.host_ifname(i) is None
    again = fab.add_port(i)  # re-plug the dead port
    assert again["index"] == i and entries(fab, i, p["host_ifname"]) == (True, True)
    fab.remove_port(i)
    assert entries(fab, i, p["host_ifname"]) == (False, False)


@needs_fabric
def test_a_dead_follower_is_restarted_and_catches_up(fab, pod):
    old = fab.reload().follower_pid
    os.kill(old, signal.SIGKILL)
    wait_until(lambda: not Fabric.load(fab.name).follower_running(), what="the follower to die")
    ip("-n", fab.node_netns, "link", "set", "so0", "netns", pod)
    time.sleep(0.05)
    assert entries(fab, 0, "so0") == (True, True)  # nobody follows: stale, as the restart must fix
    new = fab.ensure_follower()
    assert new != old and Fabric.load(fab.name).follower_running()
    assert entries(fab, 0, "so0") == (False, False)
    ip("-n", pod, "link", "set", "so0", "netns", fab.node_netns)
    wait_until(lambda: entries(fab, 0, "so0") == (True, True))
    fab.link(0, "up", side="node")


@needs_fabric
def test_cli_errors(fab):
    assert cli("link", fab.name, "9", "down").returncode == 2
    assert cli("set-description", fab.name, "x", "foo").returncode == 2
    assert cli("up", "bad-name").returncode == 2
    assert cli("up", unique_name("rnx"), "--platform", "gaudi9").returncode == 2
    assert cli("up", unique_name("rnx"), "--leaves", "2").returncode == 2
    assert cli("up", unique_name("rnx"), "--platform", "gaudi3", "--ports", "27").returncode == 2
    assert cli("recable", fab.name, "0", "1").returncode == 2  # one leaf only
    assert cli("recable", fab.name, "0", "x").returncode == 2
    cp = cli("up", fab.name)
    assert cp.returncode == 1 and "already exists" in cp.stderr
    assert cli("show", fab.name).returncode == 0
