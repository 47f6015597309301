# SPDX-License-Identifier: Apache-2.0
"""The host gaudinet.json on a node with a dead cable from day one, against
the real lldpd: HCL gives a port it finds no entry for the IP 0, harmless
while the port is down, so the file lists the ports that have an address
and leaves out the one without; rocectl health names it; the cable in,
the port addressed, the file lists all three."""

from __future__ import annotations

import json
import os

import pytest

from harness import Daemon, wait_until

DESCRIPTIONS = {0: "no-alert 10.200.1.2/30", 1: "no-alert 10.200.2.2/30",
                2: "no-alert 10.200.3.6/30"}


@pytest.fixture(scope="module")
def fabric(fabrics):
    fab = fabrics("gp", ports=3, descriptions=DESCRIPTIONS)
    fab.link(1, "down")  # so1's cable, before rocenetd ever starts
    return fab


@pytest.fixture(scope="module")
def daemon(fabric):
    d = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}"])
    d.args.append(f"--gaudinet-path={os.path.join(d.workdir, 'gaudinet.json')}")
    d.start()
    yield d
    d.cleanup()


def health(daemon: Daemon) -> dict:
    return json.loads(daemon.rocectl("health", "-o", "json", check=True).stdout)


def gaudinet_ips(daemon: Daemon) -> list[str] | None:
    try:
        with open(os.path.join(daemon.workdir, "gaudinet.json")) as f:
            return [e["NIC_IP"] for e in json.load(f)["NIC_NET_CONFIG"]]
    except FileNotFoundError:
        return None


def test_a_port_down_from_the_start_is_left_out_and_named(fabric, daemon):
    wait_until(lambda: gaudinet_ips(daemon) == ["10.200.1.1", "10.200.3.5"], 15,
               what="gaudinet.json listing so0 and so2")
    node = health(daemon)
    assert node["gaudinet_missing"] == ["so1"], node
    assert node["ready"] is False
    text = daemon.rocectl("health", check=True).stdout
    assert "gaudinet.json lacks so1" in text, text


def test_the_cable_in_adds_the_port_and_nothing_is_missing(fabric, daemon):
    fabric.link(1, "up")
    wait_until(lambda: gaudinet_ips(daemon) == ["10.200.1.1", "10.200.2.1", "10.200.3.5"], 20,
               what="gaudinet.json listing so1 once its switch is heard")
    node = health(daemon)
    assert not node.get("gaudinet_missing"), node
    assert "gaudinet.json lacks" not in daemon.rocectl("health", check=True).stdout
