# SPDX-License-Identifier: Apache-2.0
"""The rocenet CNI plugin under bad input and a crashing daemon: each bad
invocation gets the right CNI error code and a message naming the problem,
and changes nothing in any namespace; kill -9 of rocenetd in the middle of
ADD/DEL leaves every port in the host or in exactly one recorded pod."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time

import pytest
from cni_test import Cni, all_namespaces_state, ip_json

from harness import ready_daemon, sim, wait_until


@pytest.fixture(scope="module")
def fabric():
    fab = sim.Fabric.up(sim.unique_name("cf"), ports=4)
    subprocess.run(["ip", "netns", "add", f"{fab.name}-podx"], check=True)
    yield fab
    fab.down()


@pytest.fixture(scope="module")
def daemon(fabric):
    with ready_daemon(fabric, timeout=10) as d:
        yield d


def test_bad_invocations_get_the_right_code_and_change_nothing(fabric, daemon):
    cni = Cni(daemon)
    ports = {p["name"]: p for p in daemon.ports()}
    # so3 is busy: attached to another pod for the duration of the test.
    subprocess.run(["ip", "netns", "add", f"{fabric.name}-podbusy"], check=True)
    rc, out = cni.run("ADD", "busy", f"/run/netns/{fabric.name}-podbusy", "net1",
                      cni.conf(deviceID=ports["so3"]["id"]))
    assert rc == 0, out
    # Let the busy port's link settle (operstate follows a moment after up)
    # before the state everything is compared with is taken.
    wait_until(lambda: ip_json(f"{fabric.name}-podbusy", "link", "show", "net1")[0]
               .get("operstate") == "UP", 5, what="the busy port up in its pod")

    def port_states():
        ports = json.loads(daemon.rocectl("ports", "-o", "json").stdout)["ports"]
        return [{k: v for k, v in p.items() if k != "counters"} for p in ports]

    # rocenetd reads a port inside a pod at its next counter sample: wait
    # until it has seen the busy port up there too.
    wait_until(lambda: any(p["name"] == "so3" and p.get("oper_state") == "OPER_STATE_UP"
                           for p in port_states()), 15, what="rocenetd sees so3 up in its pod")
    try:
        check_bad_invocations(fabric, cni, ports, port_states)
    finally:
        assert cni.run("DEL", "busy", f"/run/netns/{fabric.name}-podbusy", "net1")[0] == 0


def check_bad_invocations(fabric, cni, ports, port_states):
    pod = f"/run/netns/{fabric.name}-podx"
    good = cni.conf()
    cases = [
        # (name, conf, env overrides, expected code, message fragment)
        ("invalid JSON", "{not json", {}, 6, "invalid JSON"),
        ("empty stdin", "", {}, 6, ""),
        ("missing cniVersion", {k: v for k, v in good.items() if k != "cniVersion"}, {}, 7,
         "cniVersion"),
        ("missing name", {k: v for k, v in good.items() if k != "name"}, {}, 7, "name"),
        ("unsupported version", {**good, "cniVersion": "0.3.1"}, {}, 1, "0.3.1"),
        ("mtu not a number", {**good, "mtu": "big"}, {}, 7, "mtu"),
        ("mtu out of range", {**good, "mtu": 10}, {}, 7, "mtu"),
        ("bad mode", {**good, "mode": "L4"}, {}, 7, "mode"),
        ("bad timeout", {**good, "timeout": "soon"}, {}, 7, "timeout"),
        ("ifname with slash", good, {"CNI_IFNAME": "net/1"}, 4, "CNI_IFNAME"),
        ("ifname too long", good, {"CNI_IFNAME": "a" * 16}, 4, "CNI_IFNAME"),
        ("ifname empty", good, {"CNI_IFNAME": ""}, 4, "CNI_IFNAME"),
        ("bad container id", good, {"CNI_CONTAINERID": "-bad id"}, 4, "CNI_CONTAINERID"),
        ("netns outside the allowed places", good, {"CNI_NETNS": "/tmp/notns"}, 4, "netns"),
        ("netns relative", good, {"CNI_NETNS": "run/netns/x"}, 4, "CNI_NETNS"),
        ("netns that does not exist", good, {"CNI_NETNS": "/run/netns/does-not-exist"}, None,
         "does-not-exist"),
        ("unknown command", good, {"CNI_COMMAND": "FROB"}, 4, "CNI_COMMAND"),
        ("unknown device id", {**good, "deviceID": "0000:ff:00.0-p9"}, {}, 7, "0000:ff:00.0-p9"),
        ("busy device id", {**good, "deviceID": ports["so3"]["id"]}, {}, 11,
         f"port {ports['so3']['id']} (so3) is attached to pod default/busy (container busy, "
         "net1)"),
        ("daemon not there", {**good, "socket": "/nonexistent/rocenetd.sock"}, {}, 11,
         "/nonexistent/rocenetd.sock"),
    ]
    before = all_namespaces_state(fabric)
    ports_before = port_states()
    for name, conf, env, code, fragment in cases:
        t0 = time.monotonic()
        rc, out = cni.run(env.get("CNI_COMMAND", "ADD"), env.get("CNI_CONTAINERID", "bad"),
                          env.get("CNI_NETNS", pod), env.get("CNI_IFNAME", "net1"), conf,
                          env={k: v for k, v in env.items()})
        assert rc == 1, (name, out)
        if code is not None:
            assert out.get("code") == code, (name, out)
        else:
            assert out.get("code", 0) > 0, (name, out)
        assert fragment in out.get("msg", ""), (name, out)
        assert time.monotonic() - t0 < 5, name
    assert all_namespaces_state(fabric) == before
    after = port_states()
    changed = {b["name"]: {k: (b.get(k), a.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k)}
               for b, a in zip(ports_before, after, strict=False) if a != b}
    assert after == ports_before, ("rocenetd's ports changed (before, after)", changed)


def test_refusals_say_why_for_each_port(fabric, daemon):
    """A refused plan is its own error, and an ADD without a device id takes
    only a healthy port and says why it took none."""
    cni = Cni(daemon)
    pod = f"/run/netns/{fabric.name}-podx"
    ports = {p["name"]: p for p in daemon.ports()}
    subprocess.run(["ip", "netns", "add", f"{fabric.name}-podbusy2"], check=True)
    busy = f"/run/netns/{fabric.name}-podbusy2"
    try:
        assert cni.run("ADD", "busy2", busy, "net1", cni.conf(deviceID=ports["so3"]["id"]))[0] == 0
        fabric.set_description(2, "no-alert 10.200.9.0/30")  # a network address: refused
        wait_until(lambda: "PeerIsNetworkAddress" in daemon.rocectl("addressing").stdout, 10,
                   what="so2's plan refused")
        rc, out = cni.run("ADD", "r1", pod, "net1", cni.conf(deviceID=ports["so2"]["id"]))
        assert (rc, out.get("code")) == (1, 11), out
        assert "(so2) has no address: its switch's Port Description is refused " \
               "(PeerIsNetworkAddress" in out["msg"], out
        assert "yet" not in out["msg"], out

        for index in (0, 1):
            fabric.link(index, "down")  # so0, so1: no carrier
        wait_until(lambda: sum(not p["healthy"] for p in
                               json.loads(daemon.rocectl("health", "-o", "json").stdout)["ports"])
                   >= 3, 10, what="so0, so1 and so2 unhealthy")
        rc, out = cni.run("ADD", "r2", pod, "net1", cni.conf())
        assert (rc, out.get("code")) == (1, 11), out
        msg = out["msg"]
        assert msg.startswith("no free port: "), msg
        for fragment in ("(so0) is not healthy (LinkDown/NoCarrier", "(so1) is not healthy",
                         "(so2) has no address: its switch's Port Description is refused",
                         "(so3) is attached to pod default/busy2"):
            assert fragment in msg, (fragment, msg)
        assert ip_json(f"{fabric.name}-podx", "link", "show") == \
            [link for link in ip_json(f"{fabric.name}-podx", "link", "show")
             if link["ifname"] == "lo"]
    finally:
        for index in (0, 1):
            fabric.link(index, "up")
        fabric.set_description(2, "no-alert 10.200.3.2/30")
        cni.run("DEL", "busy2", busy, "net1")
        subprocess.run(["ip", "netns", "del", f"{fabric.name}-podbusy2"], capture_output=True)
    daemon.wait_ready(15)


def invariant(fabric, daemon):
    """Every port is in the host or in exactly one recorded pod."""
    records = json.load(open(daemon.journal_path))
    recorded = {(a["netns"], a["ifname"]): a for a in records["attachments"]}
    host = {link["ifname"] for link in ip_json(fabric.node_netns, "link", "show")}
    seen: dict[str, list[str]] = {}
    for port in fabric.ports:
        seen[port["host_mac"]] = []
        if port["host_ifname"] in host:
            seen[port["host_mac"]].append("host")
    for ns in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                             check=True).stdout.split():
        if not ns.startswith(f"{fabric.name}-pod"):
            continue
        for link in ip_json(ns, "link", "show"):
            if link.get("address") in seen:
                seen[link["address"]].append(ns)
                assert (f"/run/netns/{ns}", link["ifname"]) in recorded, (ns, link, recorded)
                assert recorded[(f"/run/netns/{ns}", link["ifname"])]["state"] == "attached"
    for mac, places in seen.items():
        assert len(places) == 1, (mac, places)


def test_kill_9_during_add_del_keeps_every_port_accounted_for(fabric, daemon):
    cni = Cni(daemon)
    rng = random.Random(7)
    pods = [f"{fabric.name}-podk{i}" for i in range(3)]
    for ns in pods:
        subprocess.run(["ip", "netns", "add", ns], check=True)
    for _round in range(10):
        # A burst of ADD/DEL in the background, and kill -9 somewhere in it.
        procs = []
        for i, ns in enumerate(pods):
            cmd = "ADD" if rng.random() < 0.6 else "DEL"
            env = {"CNI_COMMAND": cmd, "CNI_CONTAINERID": f"k{i}", "CNI_NETNS": f"/run/netns/{ns}",
                   "CNI_IFNAME": "net1", "CNI_PATH": "/x", "PATH": os.environ["PATH"]}
            procs.append(subprocess.Popen([cni_binary()], stdin=subprocess.PIPE,
                                          stdout=subprocess.DEVNULL, env=env))
            procs[-1].stdin.write(json.dumps(cni.conf()).encode())
            procs[-1].stdin.close()
        time.sleep(rng.uniform(0.0, 0.08))
        daemon.proc.send_signal(signal.SIGKILL)
        daemon.proc.wait(5)
        for p in procs:
            p.wait(30)
        daemon.start()
        wait_until(lambda: daemon.rocectl("ports").returncode == 0, 10, what="restart")
        invariant(fabric, daemon)
    for i, ns in enumerate(pods):
        assert cni.run("DEL", f"k{i}", f"/run/netns/{ns}", "net1")[0] == 0
    invariant(fabric, daemon)


def cni_binary() -> str:
    from harness import binary
    return binary("rocenet")
