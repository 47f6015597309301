# SPDX-License-Identifier: Apache-2.0
"""PFC (qos.pfc) end to end.

On the real kernel: the sim's ports are veth, which has no dcbnl operations;
asking for PFC reports PfcUnsupported on every port, says so in the log and
changes nothing else (addresses, routes, LLDP). With the daemon's test build
(rocenetd_fake_dcb: hbl_en's dcbnl rules, the device state in files this
test plays the driver with), rocenetd sets PFC, sets it again after a driver
reset, compares it with what the real lldpd advertises in its PFC TLV
(PfcMismatch, cleared when lldpd is reconfigured to agree), counts pause
frames, and changes it live on reload. Nothing is changed when it stops."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile

import pytest

from harness import Daemon, metric_value, network_state, wait_until

# hbl_en as rocenet's FakeDcb writes it (tests/unit/fakes/fake_dcb.h): PFC on
# priorities 0-3 after probe, host-managed IEEE DCBX mode (0x0c).
HBL_EN_DEFAULT = {"driver": "hbl_en", "dcbx": 12, "cap": 4, "enabled": 15,
                  "requests": [0] * 8, "indications": [0] * 8}


@pytest.fixture(scope="module")
def fabric(fabrics):
    return fabrics("pfc", ports=2)


@pytest.fixture
def dcb_dir():
    path = tempfile.mkdtemp(prefix="rocenet-dcb-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def write_device(dcb_dir: str, ifname: str, **fields) -> None:
    device = {**HBL_EN_DEFAULT, **fields}
    lines = [f"{key} {' '.join(map(str, v)) if isinstance(v, list) else v}"
             for key, v in device.items()]
    tmp = os.path.join(dcb_dir, f".{ifname}.tmp")
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.rename(tmp, os.path.join(dcb_dir, ifname))


def read_device(dcb_dir: str, ifname: str) -> dict:
    out = {}
    with open(os.path.join(dcb_dir, ifname)) as f:
        for line in f:
            key, *values = line.split()
            if key == "driver":
                out[key] = values[0]
            else:
                out[key] = [int(v) for v in values] if len(values) > 1 else int(values[0])
    return out


def health(daemon: Daemon) -> dict:
    return json.loads(daemon.rocectl("health", "-o", "json", check=True).stdout)


def conditions(daemon: Daemon, name: str) -> dict[str, dict]:
    port = next(p for p in health(daemon)["ports"] if p["name"] == name)
    return {c["type"]: c for c in port.get("conditions", [])}


def port_pfc(daemon: Daemon, name: str) -> dict:
    port = next(p for p in daemon.ports() if p["name"] == name)
    return port.get("pfc", {})


def start(fabric, *args: str, dcb_dir: str | None = None, wait: bool = True) -> Daemon:
    kw = {}
    if dcb_dir is not None:
        kw = {"program": "rocenetd_fake_dcb", "env": {"ROCENET_FAKE_DCB_DIR": dcb_dir}}
    daemon = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}", *args], **kw)
    return daemon.start(wait=wait)


def test_pfc_on_ports_without_dcb_is_reported_and_changes_nothing_else(fabric):
    daemon = start(fabric)
    try:
        daemon.wait_ready(15)
        before = network_state(fabric.node_netns)
        neighbors_before = daemon.rocectl("neighbors", "-o", "json", check=True).stdout
        assert all("PfcUnsupported" not in conditions(daemon, p["host_ifname"])
                   for p in fabric.ports), "keep asks nothing: nothing to report"
        assert port_pfc(daemon, "so0")["requested"] == "keep"
        assert port_pfc(daemon, "so0").get("supported") is not True
    finally:
        daemon.cleanup()

    daemon = start(fabric, "--pfc=all")
    try:
        # PfcUnsupported is advisory by default: the node stays ready.
        daemon.wait_ready(15)
        for name in ("so0", "so1"):
            unsupported = conditions(daemon, name)["PfcUnsupported"]
            assert unsupported["reason"] == "NoDcb"
            assert unsupported.get("advisory") is True
            assert f"port {name}: qos.pfc asks for PFC all but the device has no DCB support" \
                in unsupported["message"]
            pfc = port_pfc(daemon, name)
            assert pfc["requested"] == "all" and pfc["problem"] == "NoDcb"
        log = daemon.run_log()
        assert "port so0: qos.pfc asks for PFC all but the device has no DCB support (dcbnl); " \
            "its PFC is left as it is" in log
        assert log.count("port so0: qos.pfc asks for PFC all") == 1, "said once, not per pass"
        assert network_state(fabric.node_netns) == before
        after = json.loads(daemon.rocectl("neighbors", "-o", "json", check=True).stdout)
        assert [p.get("neighbor_count") for p in after["ports"]] == \
            [p.get("neighbor_count") for p in json.loads(neighbors_before)["ports"]]
        wide = daemon.rocectl("ports", "-o", "wide", check=True).stdout
        assert "no-dcb" in wide
        text = daemon.metrics()
        assert metric_value(text, "rocenet_port_condition",
                            {"device": "so0", "condition": "PfcUnsupported"}) == 1
        assert metric_value(text, "rocenet_port_pfc_enabled", {"device": "so0"}) is None
    finally:
        daemon.cleanup()

    daemon = start(fabric, "--pfc=all", "--pfc-unhealthy")
    try:
        wait_until(lambda: not conditions(daemon, "so0")["PfcUnsupported"].get("advisory"), 15,
                   what="PfcUnsupported counting against health")
        assert not health(daemon)["ready"]
        assert network_state(fabric.node_netns) == before
    finally:
        daemon.cleanup()


def test_mismatch_with_the_switch_is_raised_and_clears_when_they_agree(fabric, dcb_dir):
    for p in fabric.ports:
        write_device(dcb_dir, p["host_ifname"])
    fabric.set_pfc(0, [3])
    fabric.set_pfc(1, [0, 1, 2, 3])
    daemon = start(fabric, dcb_dir=dcb_dir)
    try:
        # keep: rocenet reads the port's PFC (0-3, hbl_en's default) and sets nothing.
        wait_until(lambda: "PfcMismatch" in conditions(daemon, "so0"), 15, what="PfcMismatch")
        mismatch = conditions(daemon, "so0")["PfcMismatch"]
        assert mismatch["reason"] == "SwitchDiffers" and mismatch.get("advisory") is True
        assert "port so0: PFC on priorities 0-3 here but 3 at the switch" in mismatch["message"]
        assert "PfcMismatch" not in conditions(daemon, "so1")
        assert health(daemon)["ready"], "advisory: the node stays ready"
        pfc = port_pfc(daemon, "so0")
        assert pfc["supported"] and pfc["enabled_priorities"] == [0, 1, 2, 3]
        assert pfc["switch_advertised"] and pfc["switch_priorities"] == [3]
        wide = daemon.rocectl("neighbors", "so0", "-o", "wide", check=True).stdout
        assert wide.splitlines()[1].split()[-2:] == ["3", "0-3"], wide
        assert metric_value(daemon.metrics(), "rocenet_port_condition",
                            {"device": "so0", "condition": "PfcMismatch"}) == 1
        assert all(read_device(dcb_dir, p["host_ifname"])["enabled"] == 15 for p in fabric.ports)

        fabric.set_pfc(0, [0, 1, 2, 3])
        wait_until(lambda: "PfcMismatch" not in conditions(daemon, "so0"), 15,
                   what="PfcMismatch to clear")
        assert metric_value(daemon.metrics(), "rocenet_port_condition",
                            {"device": "so0", "condition": "PfcMismatch"}) == 0
    finally:
        daemon.cleanup()


def test_a_start_with_pfc_a_port_cannot_have_stops_before_anything_changes(fabric, dcb_dir):
    for p in fabric.ports:
        write_device(dcb_dir, p["host_ifname"], enabled=0)
    daemon = start(fabric, "--pfc=3", dcb_dir=dcb_dir, wait=False)
    try:
        assert daemon.proc.wait(10) == 2, daemon.log()
        assert "qos.pfc 3: port so0: a Gaudi port (hbl_en) takes PFC on all of priorities 0-3 " \
            "or on none, not on 3" in daemon.log()
        assert all(read_device(dcb_dir, p["host_ifname"])["enabled"] == 0 for p in fabric.ports)
    finally:
        daemon.cleanup()


def test_pfc_is_set_kept_across_a_reset_counted_and_left_on_exit(fabric, dcb_dir):
    for p in fabric.ports:
        write_device(dcb_dir, p["host_ifname"])
    fabric.set_pfc(0, [])
    fabric.set_pfc(1, [])
    config = os.path.join(dcb_dir, "..", os.path.basename(dcb_dir) + ".yaml")
    with open(config, "w") as f:
        f.write("qos:\n  pfc: none\n")
    daemon = start(fabric, f"--config={config}", "--pfc-unhealthy", dcb_dir=dcb_dir)
    try:
        wait_until(lambda: all(read_device(dcb_dir, p["host_ifname"])["enabled"] == 0
                               for p in fabric.ports), 10, what="PFC off on both ports")
        daemon.wait_ready(15)
        assert "so0: PFC on none (was 0-3)" in daemon.run_log()

        # The driver reset so0 (PFC back on, as hbl_en does), and its link
        # bounced: rocenetd sets PFC off again on its own.
        write_device(dcb_dir, "so0")
        fabric.link(0, "down")
        fabric.link(0, "up")
        wait_until(lambda: read_device(dcb_dir, "so0")["enabled"] == 0, 15,
                   what="PFC set again after the reset")
        # rocenetd logs the change once the driver took it: a moment after
        # the file shows it.
        wait_until(lambda: "changed since rocenet set it: reset or by hand" in daemon.run_log(), 5,
                   what="the reset named in the log")

        # Pause counters, from dcbnl.
        write_device(dcb_dir, "so1", enabled=0, requests=[0, 0, 0, 7, 0, 0, 0, 0],
                     indications=[0, 0, 0, 9, 0, 0, 0, 0])
        # In the node's next counter sample (every 5 s).
        wait_until(lambda: str(port_pfc(daemon, "so1")["pause_sent"][3]) == "7", 12,
                   what="so1's pause counters in rocectl")
        text = daemon.metrics()
        assert metric_value(text, "rocenet_port_pfc_pause_frames_sent_total",
                            {"device": "so1", "priority": "3"}) == 7
        assert metric_value(text, "rocenet_port_pfc_pause_frames_received_total",
                            {"device": "so1", "priority": "3"}) == 9
        assert metric_value(text, "rocenet_port_pfc_enabled",
                            {"device": "so1", "priority": "3"}) == 0

        # Live: a priority hbl_en cannot have is refused, naming the port,
        # and nothing changes; all is taken.
        with open(config, "w") as f:
            f.write("qos:\n  pfc: [3]\n")
        daemon.proc.send_signal(signal.SIGHUP)
        wait_until(lambda: "configuration reload refused" in daemon.run_log(), 10,
                   what="the reload refused")
        assert "a Gaudi port (hbl_en) takes PFC on all of priorities 0-3 or on none" \
            in daemon.run_log()
        assert read_device(dcb_dir, "so0")["enabled"] == 0
        with open(config, "w") as f:
            f.write("qos:\n  pfc: all\n")
        daemon.proc.send_signal(signal.SIGHUP)
        wait_until(lambda: all(read_device(dcb_dir, p["host_ifname"])["enabled"] == 15
                               for p in fabric.ports), 10, what="PFC on after the reload")
        # The switch advertises none now: with --pfc-unhealthy the mismatch counts.
        wait_until(lambda: not health(daemon)["ready"], 15, what="PfcMismatch making ports unhealthy")
        assert conditions(daemon, "so0")["PfcMismatch"].get("advisory") is not True
    finally:
        daemon.stop()
        # Never changed on exit.
        assert all(read_device(dcb_dir, p["host_ifname"])["enabled"] == 15 for p in fabric.ports)
        daemon.cleanup()
        os.unlink(config)
        fabric.set_pfc(0, None)
        fabric.set_pfc(1, None)


def test_the_device_plugin_follows_pfc_health_when_it_counts(fabric, dcb_dir):
    from kubelet import KubeletPeer, Plugin, all_healthy

    for p in fabric.ports:
        write_device(dcb_dir, p["host_ifname"])
    fabric.set_pfc(0, [3])
    fabric.set_pfc(1, [0, 1, 2, 3])
    daemon = start(fabric, "--pfc-unhealthy", dcb_dir=dcb_dir)
    workdir = tempfile.mkdtemp(prefix="rocenet-pfc-dp-")
    plugin = Plugin(daemon, workdir)
    peer = KubeletPeer(plugin.kubelet_dir)
    try:
        plugin.start()
        ids = {p["name"]: p["id"] for p in daemon.ports()}
        devices = peer.devices(lambda d: d.get(ids["so0"], {}).get("health") == "Unhealthy"
                               and d.get(ids["so1"], {}).get("health") == "Healthy", 15)
        assert len(devices) == 2
        fabric.set_pfc(0, [0, 1, 2, 3])
        peer.devices(all_healthy, 15)
    finally:
        peer.stop()
        assert plugin.stop() == 0, plugin.log()
        shutil.rmtree(workdir, ignore_errors=True)
        daemon.cleanup()
        fabric.set_pfc(0, None)
        fabric.set_pfc(1, None)
