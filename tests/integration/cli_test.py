# SPDX-License-Identifier: Apache-2.0
"""rocectl as an operator or an init container uses it, against the real
rocenetd on a simulated fabric with the real lldpd as the switch: wait
--ready (ready, started before the daemon, timed out when the switch sends
no LLDP), topology drawn with Graphviz, bash completion of port names, and
errors that name the object."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
import time

import pytest

from harness import Daemon, binary, rocectl, sim

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXIT_UNREACHABLE = 3
EXIT_NOT_FOUND = 4
EXIT_TIMEOUT = 5


def addresses(fabric, ifname: str) -> list[str]:
    cp = fabric.node_exec(["ip", "-j", "-4", "addr", "show", "dev", ifname],
                          capture_output=True, text=True, check=True)
    return [f"{a['local']}/{a['prefixlen']}" for d in json.loads(cp.stdout)
            for a in d.get("addr_info", [])]


@pytest.fixture(scope="module")
def fabric(fabrics):
    return fabrics("cl", ports=3)


@pytest.fixture(scope="module")
def daemon(fabric):
    d = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}"]).start()
    yield d
    d.cleanup()


def test_wait_ready_returns_once_every_port_is_addressed(fabric, daemon):
    cp = daemon.rocectl("wait", "--ready", "--timeout", "30s")
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout == "node ready: 3/3 ports ready\n"
    # Not a terminal: progress, if any, is whole lines naming what is missing.
    for line in cp.stderr.splitlines():
        assert line.startswith("rocectl waiting: "), cp.stderr
    for i, port in enumerate(["so0", "so1", "so2"]):
        assert addresses(fabric, port) == [f"10.200.{i + 1}.1/30"]


def test_wait_ready_as_json_is_the_node_health(daemon):
    cp = daemon.rocectl("wait", "--ready", "--timeout", "30s", "-o", "json")
    assert cp.returncode == 0, cp.stderr
    health = json.loads(cp.stdout)
    assert health["ready"] is True
    assert health["ports_total"] == 3


def test_topology_dot_renders_with_graphviz_and_names_ports_and_switch(fabric, daemon):
    assert daemon.rocectl("wait", "--ready", "--timeout", "30s").returncode == 0
    cp = daemon.rocectl("topology", "--format", "dot", check=True)
    dot = cp.stdout
    switch = fabric.state["switch_hostname"]
    assert f"switch {switch}" in dot
    for port in ("so0", "so1", "so2"):
        assert f'label="{port}\\n' in dot, dot
    for i in range(3):
        assert f'label="Ethernet1/{i + 1}"' in dot, dot
        assert f"10.200.{i + 1}.1/30 -> 10.200.{i + 1}.2" in dot, dot
    with tempfile.TemporaryDirectory(prefix="cl-dot-") as tmp:
        png = os.path.join(tmp, "topology.png")
        # Exactly the pipe an operator types.
        pipe = subprocess.run(
            ["bash", "-o", "pipefail", "-c",
             f"{shlex.quote(binary('rocectl'))} --socket {shlex.quote(daemon.socket)} "
             f"topology --format dot | dot -Tpng -o {shlex.quote(png)}"],
            capture_output=True, text=True, timeout=60)
        assert pipe.returncode == 0, pipe.stderr
        with open(png, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
        assert os.path.getsize(png) > 1000


def test_topology_table_and_yaml_show_the_switch_and_the_rails(fabric, daemon):
    assert daemon.rocectl("wait", "--ready", "--timeout", "30s").returncode == 0
    switch = fabric.state["switch_hostname"]
    table = daemon.rocectl("topology", check=True).stdout
    assert "\nRAILS\n" in table
    # The sim's ports have dev_port 8, 22 and 23 on one module: rails 0, 1
    # and 2, all on the one leaf.
    topology = json.loads(daemon.rocectl("topology", "--format", "json", check=True).stdout)
    assert [(r["rail"], r["name"], r["ports"]) for r in topology["rails"]] == \
        [(0, "0", ["so0"]), (1, "1", ["so1"]), (2, "2", ["so2"])], topology["rails"]
    # rocenetd names the rails once; the port list carries the same names.
    ports = json.loads(daemon.rocectl("ports", "-o", "json", check=True).stdout)["ports"]
    assert {p["name"]: p["rail_name"] for p in ports} == {"so0": "0", "so1": "1", "so2": "2"}
    assert {p["name"]: (p["port_index"], p["rail"]) for p in topology["ports"]} == \
        {"so0": (8, 0), "so1": (22, 1), "so2": (23, 2)}
    assert [s["system_name"] for s in topology["switches"]] == [switch]
    assert topology["switches"][0]["ports"] == ["so0", "so1", "so2"]
    yaml_out = daemon.rocectl("topology", "-o", "yaml", check=True).stdout
    assert f"system_name: {switch}" in yaml_out


def test_bash_completion_offers_the_daemons_port_names(daemon):
    with tempfile.NamedTemporaryFile("w", suffix=".bash", delete=False) as f:
        f.write(rocectl("completion", "bash", check=True).stdout)
        script = f.name
    try:
        words = " ".join(shlex.quote(w) for w in
                         (binary("rocectl"), "--socket", daemon.socket, "ports", "get", "so"))
        program = (f"source {shlex.quote(script)}; COMP_WORDS=({words}); COMP_CWORD=5; "
                   "_rocectl; echo \"${COMPREPLY[*]}\"")
        cp = subprocess.run(["bash", "--norc", "--noprofile", "-c", program],
                            capture_output=True, text=True, timeout=30, check=True)
        assert cp.stdout.split() == ["so0", "so1", "so2"]
    finally:
        os.unlink(script)


def test_packaged_completion_script_is_what_rocectl_prints():
    with open(os.path.join(REPO, "packaging", "completion", "rocectl.bash")) as f:
        assert f.read() == rocectl("completion", "bash", check=True).stdout


def test_errors_name_the_object_and_the_reason(daemon):
    cp = daemon.rocectl("ports", "get", "so9")
    assert cp.returncode == EXIT_NOT_FOUND
    assert cp.stderr == 'rocectl ports get so9: port "so9" not found\n'
    cp = daemon.rocectl("ports", "--bogus")
    assert cp.returncode == 2
    assert "unknown flag --bogus" in cp.stderr


def test_wait_started_before_the_daemon_keeps_trying_until_ready():
    with sim.Fabric.up(sim.unique_name("cl"), ports=2) as fab:
        d = Daemon(fab.node_netns, [f"--sysfs-root={fab.sysfs_root}"])
        try:
            waiter = subprocess.Popen(d.rocectl_argv("wait", "--ready", "--timeout", "60s"),
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(1.5)
            assert waiter.poll() is None, "wait gave up before the daemon started"
            d.start()
            out, err = waiter.communicate(timeout=60)
            assert waiter.returncode == 0, err
            assert out == "node ready: 2/2 ports ready\n"
            assert "does not exist (is rocenetd running? set --socket); retrying" in err
        finally:
            d.cleanup()


def test_wait_times_out_with_its_own_exit_code_when_the_switch_sends_no_lldp():
    with sim.Fabric.up(sim.unique_name("cl"), ports=2) as fab:
        fab.stop_lldpd()
        d = Daemon(fab.node_netns, [f"--sysfs-root={fab.sysfs_root}"]).start()
        try:
            start = time.monotonic()
            cp = d.rocectl("wait", "--ready", "--timeout", "4s")
            elapsed = time.monotonic() - start
            assert cp.returncode == EXIT_TIMEOUT, cp.stderr
            assert 4 <= elapsed < 15
            assert cp.stdout == ""
            last = cp.stderr.splitlines()[-1]
            assert last.startswith("rocectl wait: node not ready within 4s: 0/2 ports ready; "
                                   "not ready: so0 ("), cp.stderr
            assert "NoLldpNeighbor" in last, cp.stderr
        finally:
            d.cleanup()


def test_wait_without_a_daemon_is_unreachable_after_the_timeout():
    with tempfile.TemporaryDirectory(prefix="cl-") as tmp:
        cp = rocectl("--socket", os.path.join(tmp, "none.sock"), "wait", "--ready",
                     "--timeout", "1s")
        assert cp.returncode == EXIT_UNREACHABLE
        assert "rocenetd not reached within 1s" in cp.stderr
