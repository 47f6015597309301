# SPDX-License-Identifier: Apache-2.0
"""rocenetd's /metrics as Prometheus scrapes it, on the simulated fabric:
fetched over HTTP, parsed strictly with prometheus_client's text parser,
every family of the expected type; per-port values agree with rocectl and
the kernel; a CNI attach moves the attach counters and latency histogram; a
switch port going down shows as LinkDown in rocectl health and as a metric;
transmit errors on a real kernel counter raise ErrorsRising; `promtool
check metrics` finds nothing to lint in a scrape; and the series one node
exports (rocenetd's per node and per port, on 3 ports, on a Gaudi 3 node's
24 and with a driver's dcbnl; rocenet-diagd's idle and after a reach run)
are the figures docs/metrics.md gives for a fleet."""

from __future__ import annotations

import collections
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
import time

import pytest

from harness import Daemon, Diagd, binary, ready_daemon, sim, wait_until

parser = pytest.importorskip("prometheus_client.parser")
yaml = pytest.importorskip("yaml")

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
METRICS_DOC = os.path.join(TOP, "docs", "metrics.md")
DASHBOARDS = os.path.join(TOP, "packaging", "grafana")
RULES = os.path.join(TOP, "packaging", "prometheus", "rocenet-rules.yaml")
# A recorded series: level:metric:operations.
RECORDED = re.compile(r"\b[a-z_][a-z0-9_]*:[a-z0-9_:]*[a-z0-9_]")

# Every family rocenetd exposes, and its type. A family not listed here fails
# the test: a new metric is a decision (docs/metrics.md, dashboards), not an
# accident.
FAMILIES = {
    "rocenet_build_info": "gauge",
    "rocenet_node_ready": "gauge",
    "rocenet_node_managed_ports": "gauge",
    "rocenet_node_uninstalled": "gauge",
    "rocenet_port_info": "gauge",
    "rocenet_port_present": "gauge",
    "rocenet_port_attached": "gauge",
    "rocenet_port_healthy": "gauge",
    "rocenet_port_condition": "gauge",
    "rocenet_port_condition_since_timestamp_seconds": "gauge",
    "rocenet_port_up": "gauge",
    "rocenet_port_carrier": "gauge",
    "rocenet_port_mtu_bytes": "gauge",
    "rocenet_port_speed_bytes": "gauge",
    "rocenet_port_receive_bytes_total": "counter",
    "rocenet_port_receive_packets_total": "counter",
    "rocenet_port_receive_errors_total": "counter",
    "rocenet_port_receive_drops_total": "counter",
    "rocenet_port_transmit_bytes_total": "counter",
    "rocenet_port_carrier_changes_total": "counter",
    "rocenet_port_carrier_up_changes_total": "counter",
    "rocenet_port_carrier_down_changes_total": "counter",
    "rocenet_port_link_down_reason": "gauge",
    "rocenet_port_module_temperature_celsius": "gauge",
    "rocenet_port_module_voltage_volts": "gauge",
    "rocenet_port_module_rx_power_watts": "gauge",
    "rocenet_port_module_tx_power_watts": "gauge",
    "rocenet_port_module_tx_bias_amperes": "gauge",
    "rocenet_port_rdma_state": "gauge",
    "rocenet_port_rdma_physical_state": "gauge",
    "rocenet_port_rdma_hw_counter_total": "counter",
    "rocenet_port_roce_transport_events_total": "counter",
    "rocenet_port_roce_congestion_events_total": "counter",
    "rocenet_port_lossless_events_total": "counter",
    "rocenet_port_fec_events_total": "counter",
    "rocenet_port_phy_events_total": "counter",
    "rocenet_port_transmit_packets_total": "counter",
    "rocenet_port_transmit_errors_total": "counter",
    "rocenet_port_transmit_drops_total": "counter",
    "rocenet_lldp_frames_received_total": "counter",
    "rocenet_lldp_frames_discarded_total": "counter",
    "rocenet_lldp_tlvs_discarded_total": "counter",
    "rocenet_lldp_tlvs_unrecognized_total": "counter",
    "rocenet_lldp_socket_errors_total": "counter",
    "rocenet_lldp_ageouts_total": "counter",
    "rocenet_lldp_neighbors": "gauge",
    "rocenet_lldp_neighbor_info": "gauge",
    "rocenet_port_provisioned": "gauge",
    "rocenet_port_addressing_failed": "gauge",
    "rocenet_port_link_set_up_total": "counter",
    # MAC counters (ethtool): veth has none, so these families stay empty here.
    "rocenet_port_mac_receive_bytes_total": "counter",
    "rocenet_port_mac_transmit_bytes_total": "counter",
    "rocenet_port_mac_receive_frames_total": "counter",
    "rocenet_port_mac_transmit_frames_total": "counter",
    "rocenet_port_mac_receive_errors_total": "counter",
    "rocenet_port_mac_transmit_errors_total": "counter",
    "rocenet_port_mac_receive_fcs_errors_total": "counter",
    # PFC (dcbnl): veth has no DCB, so these stay empty here; pfc_test
    # fills them through rocenetd's dcbnl test build.
    "rocenet_port_pfc_enabled": "gauge",
    "rocenet_port_pfc_pause_frames_sent_total": "counter",
    "rocenet_port_pfc_pause_frames_received_total": "counter",
    "rocenet_addressing_plan_info": "gauge",
    "rocenet_attach_operations_total": "counter",
    "rocenet_attach_duration_seconds": "histogram",
    "rocenet_reserved_ports": "gauge",
}
NODE_FAMILIES = {"rocenet_build_info", "rocenet_node_ready", "rocenet_node_managed_ports",
                 "rocenet_node_uninstalled", "rocenet_attach_operations_total",
                 "rocenet_attach_duration_seconds", "rocenet_reserved_ports"}
# Families of other parts of rocenetd (configuration reload): held to the
# naming rules here, their values tested with their features. The
# diagnostics' rocenet_diag_* are rocenet-diagd's (diag_test.py): here they
# fail as unlisted.
OTHER_PREFIXES = ("rocenet_config_",)
# prometheus-cpp's exposer describes itself; its names are the library's.
LIBRARY_FAMILIES = {"exposer_transferred_bytes_total": "counter",
                    "exposer_scrapes_total": "counter",
                    "exposer_request_latencies": "summary"}
# The series one node exports on a healthy node, as docs/metrics.md ("At
# fleet size") gives them: one per sample line of a scrape, which is one
# Prometheus series. rocenetd: SERIES_PER_NODE + SERIES_PER_PORT·P where the
# driver has neither dcbnl nor MAC counters (veth, the simulated fabric),
# SERIES_PER_PORT_DCB more per port with dcbnl (hbl_en's PFC: 3 families x
# 8 priorities). rocenet-diagd: DIAGD_SERIES_IDLE (prometheus-cpp's own),
# and a reach run adds DIAGD_SERIES_PER_RUN and, per port and kind of
# target, DIAGD_SERIES_PER_PORT_AND_KIND.
SERIES_PER_NODE = 80
SERIES_PER_PORT = 51
SERIES_PER_PORT_DCB = 24
DIAGD_SERIES_IDLE = 7
DIAGD_SERIES_PER_RUN = 3
DIAGD_SERIES_PER_PORT_AND_KIND = 5
CONDITIONS = {"PortMissing", "LinkDown", "NoLldpNeighbor", "LldpExpired", "AmbiguousNeighbor",
              "AddressConflict", "MtuMismatch", "ErrorsRising", "AddressingRefused",
              "AddressingFailed", "NotProvisioned", "Miscabled", "PfcUnsupported", "PfcMismatch",
              "LinkFlapping", "RdmaPortDown", "GidMissing", "RetransmitsRising",
              "FecDegraded", "LosslessDrops", "OpticsOutOfRange"}


class Scrape:
    """One scrape, parsed: {family: (type, help, [samples])}."""

    def __init__(self, text: str):
        self.text = text
        self.families = {}
        for family in parser.text_string_to_metric_families(text):
            # prometheus_client names a counter family without its _total.
            name = family.name + "_total" if family.type == "counter" else family.name
            assert name not in self.families, f"family {name} twice"
            self.families[name] = (family.type, family.documentation, list(family.samples))

    def samples(self, family: str, sample: str | None = None) -> dict[tuple, float]:
        """{sorted label items: value} of one family's samples named `sample`."""
        _, _, samples = self.families[family]
        return {tuple(sorted(s.labels.items())): s.value for s in samples
                if s.name == (sample or family)}

    def value(self, family: str, sample: str | None = None, **labels) -> float | None:
        return self.samples(family, sample).get(tuple(sorted(labels.items())))


def scrape(daemon: Daemon) -> Scrape:
    return Scrape(daemon.metrics())


def health(daemon: Daemon) -> dict:
    return json.loads(daemon.rocectl("health", "-o", "json", check=True).stdout)


def port_conditions(daemon: Daemon, name: str) -> set[str]:
    port = next(p for p in health(daemon)["ports"] if p["name"] == name)
    return {c["type"] for c in port.get("conditions", [])}


@pytest.fixture(scope="module")
def fabric(fabrics):
    return fabrics("ob", ports=3)


@pytest.fixture(scope="module")
def daemon(fabric):
    with ready_daemon(fabric, timeout=10) as d:
        yield d


def check_name(name: str, kind: str, help_text: str, samples) -> None:
    """The Prometheus naming rules every rocenet family follows."""
    assert re.fullmatch(r"rocenet_[a-z][a-z0-9]*(_[a-z0-9]+)*", name), name
    assert kind in ("counter", "gauge", "histogram"), (name, kind)
    assert name.endswith("_total") == (kind == "counter"), (name, kind)
    assert help_text and help_text.endswith("."), (name, help_text)
    words = name.split("_")
    for bad in ("bits", "milliseconds", "ms", "minutes", "hours", "percent", "mbps", "gbps"):
        assert bad not in words, f"{name}: not a base unit: {bad}"
    if kind == "histogram":
        assert name.endswith(("_seconds", "_bytes")), name
    for sample in samples:
        assert math.isfinite(sample.value) or sample.name.endswith("_bucket"), sample
        if kind == "counter":
            assert sample.name == name and sample.value >= 0, sample
        if name.endswith("_info"):
            assert sample.value == 1, sample


def test_every_family_parses_with_its_type_help_and_conventions(fabric, daemon):
    text = daemon.metrics()
    s = Scrape(text)
    mine = {n for n in s.families if n in FAMILIES}
    others = {n for n in s.families if n.startswith(OTHER_PREFIXES)}
    unexpected = set(s.families) - mine - others - set(LIBRARY_FAMILIES)
    assert not unexpected, f"families nobody declared: {unexpected}"
    assert mine == set(FAMILIES), f"missing {set(FAMILIES) - mine}"
    for name, kind in LIBRARY_FAMILIES.items():
        assert s.families[name][0] == kind, name
    reference = open(METRICS_DOC).read()
    devices = {p["host_ifname"] for p in fabric.ports}
    for name in mine | others:
        kind, help_text, samples = s.families[name]
        check_name(name, kind, help_text, samples)
        # HELP then TYPE then the samples, as the exposition format wants.
        assert re.search(rf"^# HELP {name} .+\n# TYPE {name} {kind}\n", text, re.M), name
        if name not in mine:
            continue
        assert f"`{name}`" in reference, f"{name} is not in docs/metrics.md"
        assert kind == FAMILIES[name], name
        for sample in samples:
            if name in NODE_FAMILIES:
                assert "device" not in sample.labels, sample
            else:
                assert sample.labels.get("device") in devices, sample
            if not name.endswith("_info"):
                free = set(sample.labels) - {"device", "condition", "operation", "result",
                                             "reason", "le"}
                assert not free, f"free-text labels {free} outside an _info family: {sample}"
    for labels, value in s.samples("rocenet_port_condition").items():
        assert dict(labels)["condition"] in CONDITIONS and value in (0, 1), labels
    assert s.value("rocenet_node_ready") == 1
    assert s.value("rocenet_node_managed_ports") == len(fabric.ports)


def series(text: str) -> tuple[int, dict[str, int]]:
    """A scrape's series: (those without a `device` label, {device: its
    series}). Each sample line is one series in Prometheus."""
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    node, ports = 0, collections.Counter()
    for family in parser.text_string_to_metric_families(text):
        for sample in family.samples:
            if "device" in sample.labels:
                ports[sample.labels["device"]] += 1
            else:
                node += 1
    assert node + sum(ports.values()) == len(lines), "a sample line the parser did not count"
    return node, dict(ports)


def fleet_section() -> str:
    text = open(METRICS_DOC).read()
    return text[text.index("\n## At fleet size\n"):]


def test_series_per_node_and_per_port_are_the_documented_ones(fabric, daemon):
    """rocenetd on a healthy node of 3 ports: SERIES_PER_NODE series and
    SERIES_PER_PORT for each port, as docs/metrics.md says. A metric added,
    or a label that multiplies a port's series, fails here until the
    section (and these figures) say what it costs a fleet."""
    node, ports = series(daemon.metrics())
    assert set(ports) == {p["host_ifname"] for p in fabric.ports}
    assert node == SERIES_PER_NODE, f"{node} series without a device, want {SERIES_PER_NODE}"
    for device, count in ports.items():
        assert count == SERIES_PER_PORT, f"{device}: {count} series, want {SERIES_PER_PORT}"
    doc = fleet_section()
    assert f"`{SERIES_PER_NODE} + {SERIES_PER_PORT}·P`" in doc, "docs/metrics.md's formula"
    print(f"rocenetd: {SERIES_PER_NODE} + {SERIES_PER_PORT}·P series; "
          f"{node + sum(ports.values())} at P={len(ports)}")


def wait_for_series(d: Daemon, want: int) -> tuple[int, dict[str, int]]:
    """The daemon's series once they number `want` (a port's counters appear
    with its first sample), or as they are after 10 s."""
    got = [series(d.metrics())]
    def settled() -> bool:
        got[0] = series(d.metrics())
        return got[0][0] + sum(got[0][1].values()) == want
    try:
        wait_until(settled, 10, interval=0.5, what=f"{want} series")
    except AssertionError:
        pass
    return got[0]


def test_a_gaudi3_node_and_a_driver_with_dcbnl_export_the_documented_series():
    """On the simulated Gaudi 3 node (24 ports, 8 modules, 3 rails) rocenetd
    exports SERIES_PER_NODE + SERIES_PER_PORT·24 series, its ports' rails
    are 0, 1 and 2 with 8 ports each (rocenet_port_info's `rail`, what the
    fleet's recording rules sum by); with hbl_en's dcbnl (rocenetd's test
    build) each port adds SERIES_PER_PORT_DCB."""
    want = SERIES_PER_NODE + SERIES_PER_PORT * 24
    fab = sim.Fabric.up(sim.unique_name("mg3"), platform="gaudi3")
    try:
        with ready_daemon(fab, timeout=60) as d:
            node, ports = wait_for_series(d, want)
            rails = collections.Counter(
                dict(labels)["rail"] for labels in Scrape(d.metrics()).samples("rocenet_port_info"))
    finally:
        fab.down()
    assert len(ports) == 24, ports
    assert node + sum(ports.values()) == want, (node, ports)
    assert rails == {"0": 8, "1": 8, "2": 8}, rails
    assert f"{want:,}" in fleet_section(), f"docs/metrics.md does not give {want:,} for 24 ports"

    fab = sim.Fabric.up(sim.unique_name("mdc"), ports=2)
    dcb_dir = tempfile.mkdtemp(prefix="rocenet-dcb-")
    try:
        # hbl_en after probe: PFC on priorities 0-3, host-managed IEEE DCBX.
        for port in fab.ports:
            with open(os.path.join(dcb_dir, port["host_ifname"]), "w") as f:
                f.write("driver hbl_en\ndcbx 12\ncap 4\nenabled 15\n"
                        f"requests {' '.join(['0'] * 8)}\nindications {' '.join(['0'] * 8)}\n")
        d = Daemon(fab.node_netns, [f"--sysfs-root={fab.sysfs_root}"],
                   program="rocenetd_fake_dcb", env={"ROCENET_FAKE_DCB_DIR": dcb_dir})
        try:
            d.start().wait_ready(15)
            node, ports = wait_for_series(d, SERIES_PER_NODE
                                          + 2 * (SERIES_PER_PORT + SERIES_PER_PORT_DCB))
        finally:
            d.cleanup()
    finally:
        fab.down()
        shutil.rmtree(dcb_dir, ignore_errors=True)
    assert node == SERIES_PER_NODE, node
    assert set(ports.values()) == {SERIES_PER_PORT + SERIES_PER_PORT_DCB}, ports
    assert f"`+{SERIES_PER_PORT_DCB}·P`" in fleet_section(), "docs/metrics.md's dcbnl series"
    print(f"rocenetd: {want} series on a Gaudi 3 node of 24 ports; "
          f"{SERIES_PER_PORT + SERIES_PER_PORT_DCB} a port with dcbnl")


def test_diagd_series_idle_and_after_a_reach_run(fabric, daemon):
    """rocenet-diagd exports prometheus-cpp's own series until a test runs;
    a reach run of this node's ports to their switches adds the run's count
    and time and DIAGD_SERIES_PER_PORT_AND_KIND series per port (one kind of
    target: the gateway)."""
    d = Diagd(daemon, ["--node-name=metrics"])
    d.start()
    try:
        assert series(d.metrics()) == (DIAGD_SERIES_IDLE, {})
        cp = d.rocectl("diag", "reach", "--count", "3", "--time-limit", "3s", "-o", "json")
        assert cp.returncode == 0, cp.stderr
        node, ports = series(d.metrics())
    finally:
        d.cleanup()
    assert node == DIAGD_SERIES_IDLE + DIAGD_SERIES_PER_RUN, node
    assert ports == {p["host_ifname"]: DIAGD_SERIES_PER_PORT_AND_KIND for p in fabric.ports}
    formula = f"`{DIAGD_SERIES_IDLE} + {DIAGD_SERIES_PER_RUN} + {DIAGD_SERIES_PER_PORT_AND_KIND}·K·P`"
    assert formula in fleet_section(), f"docs/metrics.md's formula {formula}"
    print(f"rocenet-diagd: {DIAGD_SERIES_IDLE} idle; a reach run adds {DIAGD_SERIES_PER_RUN} and "
          f"{DIAGD_SERIES_PER_PORT_AND_KIND} per port and kind of target")


def test_promtool_check_metrics_finds_nothing(fabric, daemon):
    """Prometheus's own linter on a live scrape: no complaint at all."""
    promtool = shutil.which("promtool")
    if not promtool:
        pytest.skip("promtool not installed (packaging/debian-deps.sh test installs prometheus)")
    text = daemon.metrics()
    assert "rocenet_node_ready" in text
    cp = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                        text=True, timeout=60)
    lint = (cp.stdout + cp.stderr).strip()
    assert cp.returncode == 0 and not lint, \
        f"promtool check metrics exited {cp.returncode}:\n{lint}"


def test_dashboards_query_only_metrics_that_exist(fabric, daemon):
    s = scrape(daemon)
    exposed = set(s.families)
    for name, (kind, _, _) in s.families.items():
        if kind == "histogram":
            exposed |= {name + "_bucket", name + "_sum", name + "_count"}
    dashboards = [os.path.join(DASHBOARDS, f) for f in os.listdir(DASHBOARDS)
                  if f.endswith(".json")] if os.path.isdir(DASHBOARDS) else []
    if not dashboards:
        pytest.skip("no Grafana dashboard in packaging/grafana")
    # A recorded series (level:metric:operations) must be one the rules
    # record; the names in it are not scraped.
    with open(RULES) as f:
        recorded = {r["record"] for g in yaml.safe_load(f)["groups"] for r in g["rules"]
                    if "record" in r}
    for path in dashboards:
        text = open(path).read()
        named = set(RECORDED.findall(text))
        assert named <= recorded, f"{os.path.basename(path)} queries {named - recorded}, " \
                                  "which no rule records"
        used = set(re.findall(r"\brocenet_[a-z0-9_]+", RECORDED.sub(" ", text)))
        assert used, path
        assert used <= exposed, f"{os.path.basename(path)} queries {used - exposed}"


def test_port_values_match_rocectl_and_the_kernel(fabric, daemon):
    s = scrape(daemon)
    ports = {p["name"]: p for p in daemon.ports()}
    plans = {p["name"]: p for p in
             json.loads(daemon.rocectl("addressing", "-o", "json", check=True).stdout)["plans"]}
    for fp in fabric.ports:
        name = fp["host_ifname"]
        port = ports[name]
        link = json.loads(fabric.node_exec(["ip", "-j", "-s", "link", "show", "dev", name],
                                           capture_output=True, text=True, check=True).stdout)[0]
        assert s.value("rocenet_port_present", device=name) == 1
        assert s.value("rocenet_port_carrier", device=name) == (1 if port["carrier"] else 0) == 1
        assert s.value("rocenet_port_mtu_bytes", device=name) == port["mtu"] == link["mtu"]
        assert s.value("rocenet_port_up", device=name) == 1
        assert s.value("rocenet_port_healthy", device=name) == 1
        assert s.value("rocenet_port_attached", device=name) == 0
        assert plans[name].get("provisioned") is True
        assert s.value("rocenet_port_provisioned", device=name) == 1
        assert not plans[name].get("apply_error")
        assert s.value("rocenet_port_addressing_failed", device=name) == 0
        # The fabric registers its ports down, as hbl_en does: set up once.
        assert s.value("rocenet_port_link_set_up_total", device=name) == 1
        info = [dict(k) for k in s.samples("rocenet_addressing_plan_info")
                if dict(k)["device"] == name]
        assert len(info) == 1 and info[0]["local"] == plans[name]["local"], info
        assert info[0]["peer"] == plans[name]["peer"] and info[0]["state"] == "Ready", info
        assert s.value("rocenet_lldp_neighbors", device=name) == 1
        infos = [dict(k) for k in s.samples("rocenet_port_info") if dict(k)["device"] == name]
        assert len(infos) == 1
        assert infos[0]["id"] == port["id"] and infos[0]["mac"] == fp["host_mac"]
        assert infos[0]["pci_address"] == fp["pci_address"]
        # veth reports no firmware; the label is there, empty.
        assert infos[0]["firmware_version"] == "" and port.get("firmware_version", "") == ""
        assert infos[0]["driver"] == port.get("driver", ""), (infos[0], port)
        # Counters are the node's last sample, taken every 5 s (a scrape
        # reads the node's snapshot and makes rocenetd read nothing): within
        # a sample they catch up with what the kernel showed.
        stats = link["stats64"]
        assert stats["rx"]["packets"] > 0
        wait_until(lambda: scrape(daemon).value("rocenet_port_receive_packets_total", device=name)
                   >= stats["rx"]["packets"], 12, interval=0.5,
                   what=f"{name}'s receive counter at the kernel's")
        after = scrape(daemon)
        assert after.value("rocenet_port_receive_bytes_total", device=name) >= stats["rx"]["bytes"]
        assert after.value("rocenet_port_transmit_errors_total", device=name) == stats["tx"]["errors"]
        for condition in CONDITIONS:
            assert s.value("rocenet_port_condition", device=name, condition=condition) == 0


def cni(daemon: Daemon, command: str, container: str, netns: str, conf: dict):
    env = {"CNI_COMMAND": command, "CNI_CONTAINERID": container, "CNI_IFNAME": "net1",
           "CNI_NETNS": netns, "CNI_PATH": "/usr/lib/cni",
           "CNI_ARGS": f"IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME={container}",
           "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    cp = subprocess.run([binary("rocenet")], input=json.dumps(conf), env=env,
                        capture_output=True, text=True, timeout=30)
    return cp.returncode, json.loads(cp.stdout) if cp.stdout.strip() else {}


def test_cni_calls_count_and_time_attach_operations(fabric, daemon):
    pod = f"{fabric.name}-pod"
    subprocess.run(["ip", "netns", "add", pod], check=True)
    netns = f"/run/netns/{pod}"
    port = fabric.ports[2]
    name = port["host_ifname"]
    ports = {p["name"]: p for p in daemon.ports()}
    conf = {"cniVersion": "1.0.0", "name": "ai-net", "type": "rocenet",
            "socket": daemon.socket, "deviceID": ports[name]["id"]}
    hist = "rocenet_attach_duration_seconds"

    def counts(s: Scrape) -> dict:
        out = {}
        for op in ("attach", "detach", "check", "gc"):
            for result in ("success", "failure"):
                out[op, result] = s.value("rocenet_attach_operations_total", operation=op,
                                          result=result)
            out[op, "count"] = s.value(hist, hist + "_count", operation=op)
            out[op, "sum"] = s.value(hist, hist + "_sum", operation=op)
        return out

    try:
        before = counts(scrape(daemon))
        assert None not in before.values(), before  # every series from the start
        rc, result = cni(daemon, "ADD", "metrics1", netns, conf)
        assert rc == 0, result
        s = scrape(daemon)
        after = counts(s)
        assert after["attach", "success"] == before["attach", "success"] + 1
        assert after["attach", "failure"] == before["attach", "failure"]
        assert after["attach", "count"] == before["attach", "count"] + 1
        took = after["attach", "sum"] - before["attach", "sum"]
        assert 0 < took < 30, took
        buckets = s.samples(hist, hist + "_bucket")
        attach = sorted((float(dict(k)["le"]), v) for k, v in buckets.items()
                        if dict(k)["operation"] == "attach")
        assert attach[-1] == (math.inf, after["attach", "count"])
        assert [b for b, _ in attach[:-1]][0] == 0.005
        assert all(a[1] <= b[1] for a, b in zip(attach, attach[1:], strict=False))
        # The node follows the move right after the answer, as it does the
        # way back below.
        wait_until(lambda: scrape(daemon).value("rocenet_port_attached", device=name) == 1, 5,
                   what="the port attached")
        # An attached port belongs to its pod: no conditions from the host.
        assert scrape(daemon).value("rocenet_port_healthy", device=name) == 1

        rc, out = cni(daemon, "CHECK", "metrics1", netns, {**conf, "prevResult": result})
        assert rc == 0, out
        # A device that does not exist: an ADD that fails.
        rc, out = cni(daemon, "ADD", "metrics2", netns, {**conf, "deviceID": "no-such-port"})
        assert rc != 0, out
        rc, out = cni(daemon, "DEL", "metrics1", netns, conf)
        assert rc == 0, out
        final = counts(scrape(daemon))
        assert final["check", "success"] == before["check", "success"] + 1
        assert final["attach", "failure"] == before["attach", "failure"] + 1
        assert final["attach", "count"] == before["attach", "count"] + 2
        assert final["detach", "success"] == before["detach", "success"] + 1
        assert final["detach", "count"] == before["detach", "count"] + 1
        wait_until(lambda: scrape(daemon).value("rocenet_port_attached", device=name) == 0, 5,
                   what="the port back in the host")
    finally:
        cni(daemon, "DEL", "metrics1", netns, conf)
        subprocess.run(["ip", "netns", "del", pod], capture_output=True)
        wait_until(lambda: health(daemon)["ready"], 10, what="node ready again")


def test_switch_port_down_is_link_down_in_health_and_metrics(fabric, daemon):
    name = fabric.ports[1]["host_ifname"]
    fabric.link(1, "down")
    try:
        wait_until(lambda: "LinkDown" in port_conditions(daemon, name), 5, what="LinkDown")
        port = next(p for p in health(daemon)["ports"] if p["name"] == name)
        link_down = next(c for c in port["conditions"] if c["type"] == "LinkDown")
        assert link_down["reason"] == "NoCarrier" and name in link_down["message"]
        s = scrape(daemon)
        assert s.value("rocenet_port_condition", device=name, condition="LinkDown") == 1
        assert s.value("rocenet_port_carrier", device=name) == 0
        assert s.value("rocenet_port_healthy", device=name) == 0
        assert s.value("rocenet_node_ready") == 0
        since = s.value("rocenet_port_condition_since_timestamp_seconds", device=name,
                        condition="LinkDown")
        assert since is not None and abs(since - time.time()) < 60
        other = fabric.ports[0]["host_ifname"]
        assert s.value("rocenet_port_condition", device=other, condition="LinkDown") == 0
    finally:
        fabric.link(1, "up")
    wait_until(lambda: "LinkDown" not in port_conditions(daemon, name), 10, what="LinkDown clears")
    s = scrape(daemon)
    assert s.value("rocenet_port_condition", device=name, condition="LinkDown") == 0
    assert s.value("rocenet_port_condition_since_timestamp_seconds", device=name,
                   condition="LinkDown") is None
