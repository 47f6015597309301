# SPDX-License-Identifier: Apache-2.0
"""SIGHUP reloads rocenetd's configuration file: live keys take effect
without disturbing configured ports, keys that need a restart are reported
and kept, an invalid file is refused and the running configuration stays;
and `rocenetd --check_config` validates the example configuration. The file
watch is off here, so that every reload is the SIGHUP the test sent."""

from __future__ import annotations

import json
import os
import signal
import subprocess

import pytest

from harness import HERE, Daemon, binary, metric_value, network_state, wait_until

EXAMPLE = os.path.join(HERE, "..", "..", "packaging", "config", "rocenetd.yaml")


def health(daemon: Daemon) -> dict:
    return json.loads(daemon.rocectl("health", "-o", "json", check=True).stdout)


def routes(fabric, ifname: str) -> list[str]:
    cp = fabric.node_exec(["ip", "-j", "-4", "route", "show", "dev", ifname],
                          capture_output=True, text=True, check=True)
    return [r["dst"] for r in json.loads(cp.stdout)]


def addresses(fabric, ifname: str) -> list[str]:
    cp = fabric.node_exec(["ip", "-j", "-4", "addr", "show", "dev", ifname],
                          capture_output=True, text=True, check=True)
    return [f"{a['local']}/{a['prefixlen']}" for d in json.loads(cp.stdout)
            for a in d.get("addr_info", [])]


@pytest.fixture(scope="module")
def fabric(fabrics):
    return fabrics("sr", ports=2)


class Configured:
    def __init__(self, fabric):
        self.fabric = fabric
        # SIGHUP alone: the file watch has tests of its own (config_watch_test).
        self.daemon = Daemon(fabric.node_netns, ["--watch-config=false"])
        self.path = os.path.join(self.daemon.workdir, "rocenetd.yaml")
        self.base = f"sysfs_root: {fabric.sysfs_root}\nlog_level: info\n"
        self.write(self.base)
        self.daemon.args.append(f"--config={self.path}")

    def write(self, text: str) -> None:
        with open(self.path + ".new", "w") as f:
            f.write(text)
        os.replace(self.path + ".new", self.path)

    def reload(self, text: str, outcome: str) -> str:
        """Writes the file, sends SIGHUP, waits for the log line `outcome`."""
        self.write(text)
        start = len(self.daemon.log())
        self.daemon.proc.send_signal(signal.SIGHUP)
        return wait_until(lambda: outcome in self.daemon.log()[start:] and
                          self.daemon.log()[start:], 10, what=outcome)

    def reloads(self, result: str) -> float | None:
        return metric_value(self.daemon.metrics(), "rocenet_config_reloads_total",
                            {"result": result})


@pytest.fixture(scope="module")
def configured(fabric):
    c = Configured(fabric)
    c.daemon.start()
    wait_until(lambda: health(c.daemon)["ready"], 15, what="node ready")
    yield c
    c.daemon.cleanup()


def test_log_level_reload_leaves_configured_ports_untouched(configured, fabric):
    before = network_state(fabric.node_netns)
    log = configured.reload(configured.base.replace("info", "debug"),
                            "configuration reloaded: applied [log_level]")
    assert "needs restart []" in log
    assert network_state(fabric.node_netns) == before
    assert configured.daemon.proc.poll() is None
    assert configured.reloads("success") == 1
    assert configured.reloads("failure") == 0
    # Debug lines appear now: a link change of a managed port is logged.
    fabric.link(1, "down")
    try:
        wait_until(lambda: "link so1 " in configured.daemon.log(), 5, what="a debug line")
    finally:
        fabric.link(1, "up")
    wait_until(lambda: health(configured.daemon)["ready"], 15, what="ready again")


def test_static_route_reload_routes_without_moving_addresses(configured, fabric):
    before = {p: addresses(fabric, p) for p in ("so0", "so1")}
    text = configured.base.replace("info", "debug") + "addressing:\n  static_routes: [10.210.0.0/16]\n"
    configured.reload(text, "applied [addressing.static_routes]")
    for port in ("so0", "so1"):
        wait_until(lambda: "10.210.0.0/16" in routes(fabric, port), 5, what=f"route on {port}")
        assert "10.200.0.0/16" in routes(fabric, port)
        assert addresses(fabric, port) == before[port]
    # And back: the route goes, nothing else moves.
    configured.reload(configured.base.replace("info", "debug"),
                      "applied [addressing.static_routes]")
    for port in ("so0", "so1"):
        wait_until(lambda: "10.210.0.0/16" not in routes(fabric, port), 5,
                   what=f"route gone from {port}")
        assert addresses(fabric, port) == before[port]


def test_keys_that_need_a_restart_are_reported_and_kept(configured, fabric):
    before = network_state(fabric.node_netns)
    text = configured.base.replace("info", "debug") + "interfaces: [sx1]\nmode: L2\n"
    log = configured.reload(text, "configuration reloaded")
    assert 'key "interfaces" changed but needs a restart' in log
    assert 'key "mode" changed but needs a restart' in log
    assert "needs restart [mode, interfaces]" in log
    # Still L3, still the same ports, nothing touched.
    plans = json.loads(configured.daemon.rocectl("addressing", "-o", "json", check=True).stdout)
    assert plans["mode"] in ("L3", "MODE_L3"), plans["mode"]
    assert {p["name"] for p in configured.daemon.ports()} == {"so0", "so1"}
    assert network_state(fabric.node_netns) == before


@pytest.mark.parametrize("text,key", [
    ("log_levle: debug\n", "log_levle"),
    ("addressing:\n  routed_prefix_length: 99\n", "addressing"),
    ("log_level: loud\n", "log_level"),
    ("limits:\n  mutating_rpc_burst: 0\n", "limits.mutating_rpc_burst"),
    ("read_group: no-such-group-sr\n", "no-such-group-sr"),
    ("[not, a, mapping\n", "not valid YAML"),
])
def test_invalid_file_is_refused_and_the_running_config_stays(configured, fabric, text, key):
    failures = configured.reloads("failure")
    before = network_state(fabric.node_netns)
    log = configured.reload(configured.base + text, "configuration reload refused")
    assert key in log, log
    assert configured.daemon.proc.poll() is None
    assert configured.reloads("failure") == failures + 1
    assert metric_value(configured.daemon.metrics(),
                        "rocenet_config_last_reload_successful") == 0
    assert {p["name"] for p in configured.daemon.ports()} == {"so0", "so1"}
    assert network_state(fabric.node_netns) == before


def test_a_valid_file_after_a_refused_one_is_taken(configured):
    successes = configured.reloads("success")
    configured.reload(configured.base, "configuration reloaded: applied [log_level]")
    assert configured.reloads("success") == successes + 1
    assert metric_value(configured.daemon.metrics(), "rocenet_config_last_reload_successful") == 1


def test_check_config_validates_the_example_and_refuses_a_bad_file(tmp_path):
    cp = subprocess.run([binary("rocenetd"), "--check_config", f"--config={EXAMPLE}"],
                        capture_output=True, text=True, timeout=10)
    assert cp.returncode == 0, cp.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("tls:\n  address: 127.0.0.1:0\n")
    cp = subprocess.run([binary("rocenetd"), "--check_config", f"--config={bad}"],
                        capture_output=True, text=True, timeout=10)
    assert cp.returncode == 2
    assert "tls.cert" in cp.stderr
