# SPDX-License-Identifier: Apache-2.0
"""rocenetd on a 3-port simulated fabric: discovery, live link state, watch,
health, metrics, bad input, clean shutdown."""

from __future__ import annotations

import datetime
import json
import os
import queue
import signal
import subprocess
import tempfile
import threading
import time

import pytest

from harness import Daemon, binary, metric_value, network_state, rocectl, sim, wait_until


@pytest.fixture(scope="module")
def fabric(fabrics):
    return fabrics("rp", ports=3)


@pytest.fixture(scope="module")
def daemon(fabric):
    d = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}", "--interfaces=sx9"])
    d.start()
    # The fabric's ports start down, as drivers register them: rocenetd sets
    # them up, and the kernel reports them operationally up a moment later.
    wait_until(lambda: all(p.get("oper_state") == "OPER_STATE_UP"
                           for p in d.ports() if p["name"].startswith("so")), 10,
               what="the ports operationally up")
    yield d
    d.cleanup()


def by_name(ports: list[dict]) -> dict[str, dict]:
    return {p["name"]: p for p in ports}


def test_rocectl_ports_json_shows_the_fabric_ports_with_sysfs_data(fabric, daemon):
    ports = by_name(daemon.ports())
    for expected in fabric.ports:
        port = ports[expected["host_ifname"]]
        assert port["present"] is True
        assert port["mac"] == expected["host_mac"]
        assert port["mtu"] == 1500
        assert port["carrier"] is True
        assert port["admin_up"] is True
        assert port["oper_state"] == "OPER_STATE_UP"
        assert port["pci_address"] == expected["pci_address"]
        assert port["pcie_root"] == expected["pcie_root"]
        assert port["numa_node"] == expected["numa_node"]
        assert port["module_id"] == expected["module_id"]
        assert port["port_index"] == expected["port_index"]
        assert port["driver"] == "habanalabs"
        assert port["discovery"] == "DISCOVERY_GAUDI_SYSFS"
        assert port["id"] == f"{expected['pci_address']}-p{expected['port_index']}"
        assert port["ifindex"] > 0
        assert int(port["speed_mbps"]) == 10000  # veth reports 10 Gb/s


def test_configured_interface_that_does_not_exist_is_reported(daemon):
    ports = by_name(daemon.ports())
    assert ports["sx9"]["present"] is False
    assert ports["sx9"]["oper_state"] == "OPER_STATE_NOT_PRESENT"
    health = json.loads(daemon.rocectl("health", "-o", "json", check=True).stdout)
    sx9 = next(p for p in health["ports"] if p["name"] == "sx9")
    assert sx9["healthy"] is False
    assert sx9["conditions"][0]["type"] == "PortMissing"
    assert health["ready"] is False
    # The real ports are still served, and healthy once addressed from LLDP.
    def so0_healthy():
        h = json.loads(daemon.rocectl("health", "-o", "json", check=True).stdout)
        return next(p for p in h["ports"] if p["name"] == "so0")["healthy"]

    wait_until(so0_healthy, 5, what="so0 healthy")
    assert "so0" in daemon.rocectl("ports").stdout


def test_rocectl_ports_get_by_name_and_by_id(fabric, daemon):
    first = fabric.ports[0]
    # The port settled: its RoCE v2 GID follows its address a moment later.
    wait_until(lambda: by_name(daemon.ports())[first["host_ifname"]]["rdma"]["gid_index"] >= 0,
               10, what="the port's GID index")
    by_ifname = json.loads(daemon.rocectl("ports", "get", first["host_ifname"], "-o", "json",
                                          check=True).stdout)
    by_id = json.loads(daemon.rocectl("ports", "get", by_ifname["id"], "-o", "json",
                                      check=True).stdout)
    assert by_ifname == {**by_id, "counters": by_ifname["counters"]}
    missing = daemon.rocectl("ports", "get", "nosuchport")
    assert missing.returncode == 4
    assert "nosuchport" in missing.stderr


class Watch:
    """`rocectl ports watch -o json`: one JSON snapshot per line, read by a
    thread so the test can wait with a timeout."""

    def __init__(self, daemon: Daemon):
        self.proc = subprocess.Popen(daemon.rocectl_argv("ports", "watch", "-o", "json"),
                                     stdout=subprocess.PIPE, text=True)
        self.lines: queue.Queue = queue.Queue()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put((json.loads(line), time.monotonic()))

    def next_matching(self, pred, timeout: float = 5.0) -> tuple[dict, float]:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("no matching snapshot from WatchPorts")
            try:
                snap, when = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if pred(snap):
                return snap, when

    def close(self):
        self.proc.terminate()
        self.proc.wait(5)


def carrier(snap: dict, name: str) -> bool | None:
    for p in snap.get("ports", []):
        if p["name"] == name:
            return p["carrier"]
    return None


def test_switch_end_down_shows_carrier_false_through_watch_and_recovers(fabric, daemon):
    name = fabric.ports[1]["host_ifname"]
    watch = Watch(daemon)
    try:
        watch.next_matching(lambda s: carrier(s, name) is True)
        fabric.link(1, "down")
        snap, _ = watch.next_matching(lambda s: carrier(s, name) is False)
        port = by_name(snap["ports"])[name]
        assert port["oper_state"] in ("OPER_STATE_DOWN", "OPER_STATE_LOWER_LAYER_DOWN")
        health = json.loads(daemon.rocectl("health", name, "-o", "json", check=True).stdout)
        assert health["healthy"] is False
        assert health["conditions"][0]["type"] == "LinkDown"
        fabric.link(1, "up")
        watch.next_matching(lambda s: carrier(s, name) is True)
    finally:
        watch.close()
        fabric.link(1, "up")


def test_port_created_after_start_appears(fabric, daemon):
    added = fabric.add_port()
    try:
        port = wait_until(lambda: by_name(daemon.ports()).get(added["host_ifname"]), 5,
                          what="the new port")
        assert port["present"] is True
        assert port["pci_address"] == added["pci_address"]
        assert port["mac"] == added["host_mac"]
    finally:
        fabric.remove_port(added["index"])
    wait_until(lambda: added["host_ifname"] not in by_name(daemon.ports()), 5,
               what="the removed port to go")


def test_metrics_follow_node_exporter_conventions(fabric, daemon):
    text = daemon.metrics()
    name = fabric.ports[0]["host_ifname"]
    assert metric_value(text, "rocenet_build_info") == 1
    assert metric_value(text, "rocenet_port_up", {"device": name}) == 1
    assert metric_value(text, "rocenet_port_carrier", {"device": name}) == 1
    assert metric_value(text, "rocenet_port_mtu_bytes", {"device": name}) == 1500
    assert metric_value(text, "rocenet_port_speed_bytes", {"device": name}) > 0
    assert metric_value(text, "rocenet_port_present", {"device": "sx9"}) == 0
    for direction in ("receive", "transmit"):
        for what in ("bytes", "packets", "errors", "drops"):
            value = metric_value(text, f"rocenet_port_{direction}_{what}_total", {"device": name})
            assert value is not None and value >= 0
    # lldpd sends frames to the node end: receive counters move (in the
    # node's next counter sample, every 5 s).
    wait_until(lambda: (metric_value(daemon.metrics(), "rocenet_port_receive_packets_total",
                                     {"device": name}) or 0) > 0, 12, what="receive counters")
    for line in text.splitlines():
        if line.startswith("# TYPE rocenet_") and line.endswith(" counter"):
            assert line.split()[2].endswith("_total"), line


def test_socket_is_for_its_owner_only(daemon):
    mode = os.stat(daemon.socket).st_mode & 0o777
    assert mode == 0o600
    assert os.stat(os.path.dirname(daemon.socket)).st_mode & 0o777 == 0o700


def test_rocectl_without_daemon_socket_fails_clearly():
    cp = rocectl("--socket", "/nonexistent/rocenetd.sock", "ports")
    assert cp.returncode == 3
    assert "/nonexistent/rocenetd.sock" in cp.stderr
    assert "does not exist" in cp.stderr


def test_rocectl_as_non_root_is_denied_clearly(daemon):
    # The socket is 0600 root: an unprivileged user cannot connect.
    cp = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                         *daemon.rocectl_argv("ports")], capture_output=True, text=True)
    assert cp.returncode == 3, cp.stderr
    assert "permission denied" in cp.stderr.lower()


def test_bad_config_unknown_flag_and_bad_values_exit_2_and_change_nothing(fabric):
    before = network_state(fabric.node_netns)
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "bad.yaml")
        with open(config, "w") as f:
            f.write("interfaces: [so0]\nsockett: /tmp/x.sock\n")
        cases = [
            ([f"--config={config}"], "sockett"),
            (["--no-such-flag"], "--no-such-flag"),
            (["--mode=L4"], "mode"),
            (["--interfaces=bad/name"], "bad/name"),
            (["--metrics-address=nonsense"], "metrics_address"),
            ([f"--config={tmp}/missing.yaml"], "missing.yaml"),
        ]
        for i, (args, fragment) in enumerate(cases):
            d = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}", *args],
                       workdir=os.path.join(tmp, f"w{i}"))
            d.start(wait=False)
            rc = d.proc.wait(10)
            assert rc == 2, (args, d.log())
            assert fragment in d.log(), (args, d.log())
            assert not os.path.exists(d.socket)
    assert network_state(fabric.node_netns) == before


def test_json_logs_and_sigterm_leave_the_network_as_it_is(fabric):
    before = network_state(fabric.node_netns)
    d = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}", "--log-format=json"])
    try:
        d.start()
        assert len(d.ports()) == 3
        assert d.stop(signal.SIGTERM) == 0
        lines = [json.loads(line) for line in d.log().splitlines() if line.strip()]
        assert any("SIGTERM" in entry["msg"] for entry in lines)
        assert all({"ts", "level", "msg"} <= entry.keys() for entry in lines)
        assert not os.path.exists(d.socket)
    finally:
        d.cleanup()
    assert network_state(fabric.node_netns) == before


def test_second_daemon_on_the_same_socket_waits_then_refuses(fabric, daemon):
    d = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}",
                                   f"--socket={daemon.socket}", "--takeover-wait=1s"])
    t0 = time.monotonic()
    d.start(wait=False)
    assert d.proc.wait(10) == 1
    assert time.monotonic() - t0 >= 1
    log = d.log()
    pid = daemon.proc.pid
    assert f"another rocenetd (pid {pid}) still holds it; waiting up to 1s" in log, log
    assert f"another rocenetd (pid {pid}) still holds {daemon.socket}.lock after 1s" in log, log
    # It touched nothing of the first one's: its socket still answers.
    assert daemon.rocectl("ports").returncode == 0
    d.cleanup()


def test_drivers_match_the_name_ethtool_shows():
    """`drivers: [veth]`: veth has no PCI device, so only the kernel's ethtool
    answer (ETHTOOL_GDRVINFO) can name its driver; Gaudi's netdevs likewise
    call themselves habanalabs_en while their PCI driver is habanalabs."""
    fab = sim.Fabric.up(sim.unique_name("ed"), ports=2)
    d = Daemon(fab.node_netns, [f"--sysfs-root={fab.sysfs_root}", "--gaudi=false",
                                "--drivers=veth"])
    try:
        d.start()
        ports = by_name(d.ports())
        assert sorted(ports) == ["so0", "so1"], ports
        assert all(p["discovery"] == "DISCOVERY_DRIVER" for p in ports.values()), ports
        # veth's ethtool statistics hold no MAC counters: no MAC series.
        assert "rocenet_port_mac_receive_errors_total{" not in d.metrics()
    finally:
        d.cleanup()
        fab.down()


def nfd_expiry(path: str) -> datetime.datetime:
    with open(path) as f:
        first = f.readline().strip()
    assert first.startswith("# +expiry-time="), first
    return datetime.datetime.strptime(first.split("=", 1)[1], "%Y-%m-%dT%H:%M:%S%z")


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "crash"])
def test_the_readiness_label_file_expires_and_goes_with_a_clean_stop(stop):
    fab = sim.Fabric.up(sim.unique_name("nf"), ports=1)
    with tempfile.TemporaryDirectory() as tmp:
        features = os.path.join(tmp, "features.d", "rocenet")
        config = os.path.join(tmp, "rocenetd.yaml")
        with open(config, "w") as f:
            f.write(f"outputs:\n  nfd_features: {features}\n")
        d = Daemon(fab.node_netns, [f"--sysfs-root={fab.sysfs_root}", f"--config={config}"])
        try:
            d.start()
            d.wait_ready(15)
            wait_until(lambda: os.path.exists(features), 5, what="the features file")
            with open(features) as f:
                assert "rocenet.io/scale-out-ready=true\n" in f.read()
            now = datetime.datetime.now(datetime.UTC)
            left = (nfd_expiry(features) - now).total_seconds()
            assert 9 * 60 < left <= 10 * 60 + 1, left
            d.stop(stop)
            if stop == signal.SIGTERM:
                assert not os.path.exists(features)
            else:
                # A crash leaves it, but NFD drops its labels at the expiry.
                assert nfd_expiry(features) > now
        finally:
            d.cleanup()
            fab.down()


def test_a_node_without_scale_out_ports_says_so(fabric):
    # No Gaudi device in sysfs, as on a CPU or control-plane node.
    empty_sysfs = tempfile.mkdtemp(prefix="rocenet-nosysfs-")
    d = Daemon(fabric.node_netns, [f"--sysfs-root={empty_sysfs}"])
    try:
        d.start()
        cp = d.rocectl("health", check=True)
        assert cp.stdout.startswith("node ready: no (no scale-out ports on this node"), cp.stdout
        metrics = d.metrics()
        assert metric_value(metrics, "rocenet_node_managed_ports") == 0
        assert metric_value(metrics, "rocenet_node_ready") == 0
    finally:
        d.cleanup()
        os.rmdir(empty_sysfs)


@pytest.mark.parametrize("value", ["0s", "500ms", "soon"])
def test_an_errors_interval_below_a_second_or_not_a_duration_is_refused(value):
    cp = subprocess.run([binary("rocenetd"), "--check-config", f"--errors-interval={value}"],
                        capture_output=True, text=True, timeout=10)
    assert cp.returncode == 2, (cp.returncode, cp.stderr)
    assert f'flag --errors-interval: "{value}" is not a duration of 1s or more' in cp.stderr, \
        cp.stderr
