"""Fixtures shared by the integration tests.

``fabrics`` makes simulated fabrics that are torn down when the test module
ends, also after a failure; a module's own ``fabric`` fixture says only what
its fabric looks like:

    @pytest.fixture(scope="module")
    def fabric(fabrics):
        return fabrics("cn", ports=6)
"""

from __future__ import annotations

import os
import subprocess

import pytest

from harness import sim
from kubelet import plugin_with_peer


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
