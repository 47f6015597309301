# SPDX-License-Identifier: Apache-2.0
"""Moving from Intel's network-operator (docs/migrating.md), where it
touches the node, against the real lldpd: ports addressed the way Intel's
`discover` addresses them (the other host of the switch's /30, the
fabric's /16 via the switch in the main table, protocol boot, metric 0)
and its gaudinet.json are taken over by rocenetd, not refused: the same
addresses, never taken off, rocenet's route beside Intel's. When Intel's
pod then stops and takes its addresses off (its clean stop), rocenetd puts
them back at once."""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from harness import Daemon, wait_until

DESCRIPTIONS = {0: "no-alert 10.200.1.2/30", 1: "no-alert 10.200.2.2/30"}
ADDRESSES = {"so0": ("10.200.1.1/30", "10.200.1.2"), "so1": ("10.200.2.1/30", "10.200.2.2")}
RTPROT_BOOT = 3


def ip_json(fabric, *args: str) -> list[dict]:
    cp = fabric.node_exec(["ip", "-j", "-N", "-4", *args], capture_output=True, text=True, check=True)
    return json.loads(cp.stdout or "[]")


def addresses(fabric, port: str) -> list[str]:
    return [f"{a['local']}/{a['prefixlen']}" for d in ip_json(fabric, "addr", "show", "dev", port)
            for a in d.get("addr_info", [])]


def routes(fabric, port: str) -> list[dict]:
    return ip_json(fabric, "route", "show", "dev", port)


@pytest.fixture(scope="module")
def fabric(fabrics):
    fab = fabrics("it", ports=2, descriptions=DESCRIPTIONS)
    # What Intel's discover leaves on a node in L3 mode.
    for port, (local, _) in ADDRESSES.items():
        fab.node_exec(["ip", "link", "set", port, "up"], check=True)
        fab.node_exec(["ip", "addr", "add", local, "dev", port], check=True)
    # Its /16 via the switch, main table, metric 0: the first port's wins
    # (the second is the same destination and metric).
    fab.node_exec(["ip", "route", "add", "10.200.0.0/16", "via", "10.200.1.2", "dev", "so0",
                   "proto", "boot"], check=True)
    return fab


@pytest.fixture(scope="module")
def monitor(fabric):
    """`ip monitor address` in the node from before rocenetd starts."""
    path = os.path.join("/tmp", f"{fabric.name}-addr-monitor.log")
    with open(path, "w") as out:
        proc = subprocess.Popen(["ip", "netns", "exec", fabric.node_netns, "ip", "-4", "monitor", "address"],
                                stdout=out, stderr=subprocess.STDOUT)
    # Listening before rocenetd starts: it hears an address come and go.
    def heard() -> bool:
        fabric.node_exec(["ip", "addr", "replace", "127.0.0.9/8", "dev", "lo"], check=True)
        fabric.node_exec(["ip", "addr", "del", "127.0.0.9/8", "dev", "lo"], check=True)
        with open(path) as f:
            return "127.0.0.9" in f.read()
    wait_until(heard, 5, what="ip monitor listening")
    yield path
    proc.terminate()
    proc.wait(timeout=10)
    os.unlink(path)


@pytest.fixture(scope="module")
def daemon(fabric, monitor):
    d = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}"])
    gaudinet = os.path.join(d.workdir, "gaudinet.json")
    d.args.append(f"--gaudinet-path={gaudinet}")
    with open(gaudinet, "w") as f:  # Intel's, as its discover writes it
        entries = [{"NIC_MAC": p["host_mac"], "NIC_IP": ADDRESSES[p["host_ifname"]][0][:-3],
                    "SUBNET_MASK": "255.255.255.252", "GATEWAY_MAC": p["switch_mac"]}
                   for p in fabric.ports]
        json.dump({"NIC_NET_CONFIG": entries}, f)
    d.start()
    yield d
    d.cleanup()


def plans(daemon: Daemon) -> dict[str, dict]:
    out = json.loads(daemon.rocectl("addressing", "-o", "json", check=True).stdout)
    return {p["name"]: p for p in out["plans"]}


def test_intels_addresses_are_taken_over_not_refused_nor_flapped(fabric, daemon, monitor):
    wait_until(lambda: all(p["state"] == "PLAN_STATE_READY" and p["provisioned"]
                           for p in plans(daemon).values()), 15, what="both ports taken over")
    for port, (local, peer) in ADDRESSES.items():
        assert addresses(fabric, port) == [local], port
        plan = plans(daemon)[port]
        assert (plan["local"], plan["reason"] if "reason" in plan else "") == (local, ""), plan
        # rocenet's own route beside Intel's.
        assert any(r["dst"] == "10.200.0.0/16" and r.get("gateway") == peer and r.get("protocol") == "158"
                   for r in routes(fabric, port)), routes(fabric, port)
    # `ip` names no protocol for boot, the default.
    assert any(r["dst"] == "10.200.0.0/16" and r.get("protocol", str(RTPROT_BOOT)) == str(RTPROT_BOOT)
               and "metric" not in r for r in routes(fabric, "so0")), "Intel's route was removed"
    # Never taken off on the way.
    with open(monitor) as f:
        taken = [line for line in f if line.startswith("Deleted") and "127.0.0.9" not in line]
    assert not taken, f"an address was taken off: {taken}"
    health = json.loads(daemon.rocectl("health", "-o", "json", check=True).stdout)
    assert health["ready"] is True, health


def test_intels_clean_stop_taking_the_addresses_off_is_repaired(fabric, daemon):
    # Intel's pod stopping cleanly deletes every IPv4 address of the ports.
    started = time.monotonic()
    for port in ADDRESSES:
        fabric.node_exec(["ip", "-4", "addr", "flush", "dev", port], check=True)
    wait_until(lambda: all(addresses(fabric, p) == [a] for p, (a, _) in ADDRESSES.items()), 5,
               what="the addresses put back")
    took = time.monotonic() - started
    for port, (_, peer) in ADDRESSES.items():
        assert any(r["dst"] == "10.200.0.0/16" and r.get("gateway") == peer and r.get("protocol") == "158"
                   for r in routes(fabric, port)), routes(fabric, port)
    with open(os.path.join(daemon.workdir, "gaudinet.json")) as f:
        ips = [e["NIC_IP"] for e in json.load(f)["NIC_NET_CONFIG"]]
    assert ips == ["10.200.1.1", "10.200.2.1"], ips
    print(f"takeover: Intel's addresses flushed on both ports, put back by rocenetd within "
        f"{took * 1000:.0f} ms")
