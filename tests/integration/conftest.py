# SPDX-License-Identifier: Apache-2.0
"""Fixtures shared by the integration tests.

``fabrics`` makes simulated fabrics that are torn down when the test module
ends, also after a failure; a module's own ``fabric`` fixture says only what
its fabric looks like:

    @pytest.fixture(scope="module")
    def fabric(fabrics):
        return fabrics("cn", ports=6)
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from bad_input_support import SO1_DESC, Sender, all_namespaces_state, good_lldpdu, plan_is
from harness import Daemon, sim, wait_until
from kubelet import plugin_with_peer
from packaging_support import ALL_OVERLAYS, system


@pytest.fixture(scope="module")
def fabrics():
    made: list = []

    def make(prefix: str, **kwargs):
        fab = sim.Fabric.up(sim.unique_name(prefix), **kwargs)
        made.append(fab)
        return fab

    yield make
    for fab in reversed(made):
        fab.down()


@pytest.fixture
def plugin_and_peers(daemon):
    """rocenet-device-plugin and a kubelet peer beside the module's `daemon`
    fixture (kubelet.plugin_with_peer): (plugin, [peers])."""
    with plugin_with_peer(daemon) as both:
        yield both


# The simulated fabric's own self-tests (sim_*_test.py).

@pytest.fixture(scope="module")
def fab():
    """A default fabric with its node ports brought up, as rocenetd would."""
    f = sim.Fabric.up(sim.unique_name("rnt"), ports=3)
    try:
        for i in range(3):
            f.link(i, "up", side="node")
        yield f
    finally:
        f.down()


@pytest.fixture(scope="module")
def g3():
    """A Gaudi 3 HLS-3 node: 8 modules, 3 rails, 3 leaves."""
    f = sim.Fabric.up(sim.unique_name("rg3"), platform="gaudi3")
    try:
        yield f
    finally:
        f.down()


@pytest.fixture
def pod(fab):
    """A pod network namespace, deleted afterwards whatever is left in it."""
    name = f"{fab.name}-pod{os.getpid() % 1000}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        yield name
    finally:
        subprocess.run(["ip", "netns", "delete", name], check=False, capture_output=True)


# The bad-input catalogue (bad_input_*_test.py): one fabric with lldpd
# stopped, its daemon, and so0 and so1 addressed from a hand-written frame
# each, the state every case is compared with.

@pytest.fixture(scope="module")
def bad_input_fabric():
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
def bad_input_daemon(bad_input_fabric):
    fabric = bad_input_fabric
    # Counters sampled every half second (half the ErrorsRising interval,
    # below the 5 s default): the tests read the LLDP counters after each
    # of many bad frames.
    d = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}", "--errors-interval=1s"])
    d.start()
    yield d
    d.cleanup()


@pytest.fixture(scope="module")
def bad_input_senders(bad_input_fabric):
    """Raw packet sockets on the switch side of so0 and so1."""
    s = {0: Sender(bad_input_fabric, 0), 1: Sender(bad_input_fabric, 1)}
    yield s
    for sender in s.values():
        sender.close()


@pytest.fixture(scope="module")
def bad_input_baseline(bad_input_fabric, bad_input_daemon, bad_input_senders):
    """so0 and so1 addressed from a good frame each; the state to compare with."""
    fabric, daemon, senders = bad_input_fabric, bad_input_daemon, bad_input_senders
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


# Every overlay, rendered: the packaging tests' fixture.
@pytest.fixture(scope="module", params=sorted(ALL_OVERLAYS))
def any_overlay(request):
    return request.param, system(request.param)
