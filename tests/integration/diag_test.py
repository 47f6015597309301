# SPDX-License-Identifier: Apache-2.0
"""Diagnostics across a simulated cluster (tests/sim/cluster.py): three nodes,
each with its own rocenetd and rocenet-diagd and two ports (rails), cabled to
one switch per rail running lldpd that routes between the /30s. rocenetd
configures the ports; rocenet-diagd learns them from its node stream and runs
the tests. Every test is run through rocectl on node 0 and must end within
its bound; then one link is broken (the switch end of node 1's rail-1 port)
and reach and allreduce must name it. Nothing is left behind: no process, no
namespace."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

from harness import Daemon, Diagd, binary, metric_value, wait_until

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim"))
import cluster as sim_cluster  # noqa: E402

NODES = 3
RAILS = 2
# No veth moves data faster than this on any machine we run on.
VETH_LIMIT_BPS = 400e9


def node_addr(i: int, rail: int = 0) -> str:
    return sim_cluster.node_address(i, rail)


@pytest.fixture(scope="module")
def cluster():
    cl = sim_cluster.Cluster.up(sim_cluster.fabric.unique_name("dg"), nodes=NODES, rails=RAILS)
    nodes: list[Daemon] = []
    daemons: list[Diagd] = []
    # The cluster's shared secret, as a Kubernetes Secret would mount it, and
    # each node's NFD features directory (the validation labels).
    secrets = tempfile.mkdtemp(prefix="rocenet-diag-secret-")
    secret = os.path.join(secrets, "secret")
    with open(secret, "w", encoding="utf-8") as f:
        f.write(os.urandom(24).hex() + "\n")
    try:
        for i in range(NODES):
            config = os.path.join(secrets, f"n{i}.yaml")
            with open(config, "w", encoding="utf-8") as f:
                f.write(f"outputs:\n  nfd_features: {secrets}/n{i}/features.d/rocenet\n")
                if i == 0:
                    # A configuration from before rocenet-diagd: rocenetd
                    # starts, warns and ignores it.
                    f.write(f"diag_secret_file: {secret}\ndiag_port: 50153\n")
            node = Daemon(cl.node_netns(i), ["--gaudi=false", "--interfaces=so*",
                                             f"--sysfs-root={cl.sysfs_root(i)}",
                                             f"--config={config}"])
            nodes.append(node)
            node.start()
            d = Diagd(node, [f"--node-name=n{i}", f"--secret-file={secret}",
                             f"--validation-file={secrets}/n{i}/features.d/rocenet-validated"])
            d.nfd_dir = f"{secrets}/n{i}/features.d"
            daemons.append(d)
            d.start()
        for i, d in enumerate(daemons):
            wait_until(lambda: all(f"listening on {node_addr(i, r)}:50153" in d.log()
                                   for r in range(RAILS)),
                       20, what=f"node {i} addressed and its data port listening")
        yield cl, daemons
    finally:
        for d in daemons:
            d.cleanup()
        for node in nodes:
            node.cleanup()
        cl.down()
        left_ns = [ns for ns in os.listdir("/run/netns") if ns.startswith(cl.name + "-")]
        assert left_ns == [], f"namespaces left behind: {left_ns}"
        assert not any(d.proc and d.proc.poll() is None for d in nodes), "rocenetd left running"
        assert not any(d.proc and d.proc.poll() is None for d in daemons), "rocenet-diagd left running"
        assert all(p.poll() is not None for p in cl._lldpd), "lldpd left running"


def diag(daemon: Daemon, *args: str, bound: float) -> tuple[int, dict, str, float]:
    """Runs rocectl diag ... -o json on `daemon`; returns exit code, result,
    stderr and the seconds it took, asserting it ended within `bound`."""
    start = time.monotonic()
    cp = daemon.rocectl("diag", *args, "-o", "json", timeout=bound + 30)
    took = time.monotonic() - start
    assert took < bound, f"diag {args[0]} took {took:.1f}s, bound {bound}s"
    result = json.loads(cp.stdout) if cp.stdout.strip() else {}
    return cp.returncode, result, cp.stderr, took


def test_reach_from_one_node_gateway_and_peers(cluster):
    cl, daemons = cluster
    peers = [node_addr(1, 0), node_addr(2, 0), node_addr(1, 1)]
    rc, result, err, _ = diag(daemons[0], "reach", "--peers", ",".join(peers), "--count", "5",
                              "--time-limit", "3s", bound=8)
    assert rc == 0, err
    assert result["ok"], result
    ports = {p["port"]: p for p in result["ports"]}
    assert set(ports) == {"so0", "so1"}
    # so0 probes its gateway and the two rail-0 peers; so1 its gateway and n1's so1.
    assert [t["address"] for t in ports["so0"]["targets"]] == ["10.201.1.2", *peers[:2]]
    assert [t["address"] for t in ports["so1"]["targets"]] == ["10.202.1.2", peers[2]]
    for port in ports.values():
        gateway = port["targets"][0]
        assert gateway["kind"] == "gateway" and gateway["arp_resolved"] and gateway["arp_mac"]
        for t in port["targets"]:
            assert t["reachable"] and t["received"] == 5 and t["loss_ratio"] == 0, t
            assert 0 < t["rtt_p50_seconds"] <= t["rtt_p90_seconds"] <= t["rtt_p99_seconds"] < 1
    assert "diag:" in err  # progress on stderr

    # An address that no port can reach is a problem, not silently skipped.
    rc, result, err, _ = diag(daemons[0], "reach", "--peers", "10.250.0.1", "--count", "1",
                              "--time-limit", "1s", bound=8)
    assert rc == 6 and not result["ok"], err
    assert any("10.250.0.1" in p for p in result["problems"]), result


def test_data_port_listens_on_the_port_addresses_only(cluster):
    cl, daemons = cluster
    for i in range(NODES):
        cp = cl.node_exec(i, ["ss", "-Hltn", "sport = :50153"], check=True)
        listening = sorted(line.split()[3] for line in cp.stdout.splitlines())
        assert listening == sorted(f"{node_addr(i, r)}:50153" for r in range(RAILS)), cp.stdout


def test_reach_mesh_all_pairs(cluster):
    cl, daemons = cluster
    nodes = ",".join(node_addr(i) for i in range(NODES))
    rc, result, err, _ = diag(daemons[0], "reach", "--nodes", nodes, "--count", "3",
                              "--time-limit", "3s", bound=10)
    assert rc == 0, err
    assert result["ok"] and not result.get("unreachable") and not result.get("suspects")
    assert result["nodes"] == ["n0", "n1", "n2"]
    plan = result["plan"]
    # Three nodes are a mesh: per rail 3 x 2 directed probes.
    assert (plan["kind"], plan["nodes"], plan["ports"]) == ("mesh", NODES, NODES * RAILS), plan
    assert plan["peer_probes"] == RAILS * NODES * (NODES - 1), plan
    assert plan["max_peers_per_port"] == NODES - 1, plan
    assert "plan mesh: 3 nodes, 6 ports, 12 peer probes" in err
    assert len(result["ports"]) == NODES * RAILS
    for port in result["ports"]:
        # Reduced at the node: the gateway and the figures over its peers,
        # no peer that answered.
        assert [t["kind"] for t in port["targets"]] == ["gateway"], port
        assert (port["peers_probed"], port["peers_failed"]) == (NODES - 1, 0), port
        assert port["peer_loss_ratio"] == 0 and port["peer_rtt_p50_seconds"] > 0, port
    assert result["labels"]["validated"] == NODES, result["labels"]
    # Every node's counters were read at both ends of the run; no cable
    # moved meanwhile.
    counters = result["counters"]
    assert counters["nodes_read"] == NODES and not counters.get("unread"), counters
    assert not [c for c in counters.get("changes", []) if c["counter"].startswith("link.carrier")]
    # With --matrix every target comes back, and the table has a matrix per rail.
    rc, result, err, _ = diag(daemons[0], "reach", "--nodes", nodes, "--count", "2", "--matrix",
                              bound=10)
    assert rc == 0, err
    for port in result["ports"]:
        peers = [t for t in port["targets"] if t["kind"] == "peer"]
        assert len(peers) == NODES - 1, port
        assert all(t["reachable"] and t["node"] != port["node"] for t in peers)
    cp = daemons[0].rocectl("diag", "reach", "--nodes", nodes, "--count", "2", "--matrix",
                            timeout=30)
    assert cp.returncode == 0, cp.stderr
    assert "Rail 10.201.0.0/16" in cp.stdout and "Rail 10.202.0.0/16" in cp.stdout
    assert "all reachable" in cp.stdout
    # Without it, a line per rail.
    cp = daemons[0].rocectl("diag", "reach", "--nodes", nodes, "--count", "2", timeout=30)
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout.startswith("plan mesh: 3 nodes"), cp.stdout
    assert "10.202.0.0/16" in cp.stdout and "Labels: reach validated on 3 nodes" in cp.stdout
    assert "during the run (3 nodes read)" in cp.stdout, cp.stdout


def test_reach_by_a_nodes_file_with_alternate_addresses(cluster):
    """A node is tried at its next address when the first does not answer:
    here one that no daemon has (rail 0's network, an unused /30)."""
    cl, daemons = cluster
    nodes_file = os.path.join(tempfile.mkdtemp(prefix="rocenet-nodes-"), "nodes")
    with open(nodes_file, "w", encoding="utf-8") as f:
        f.write("# the cluster\n\n")
        for i in range(NODES):
            first = "10.201.200.1+" if i == 2 else ""
            f.write(f"{first}{node_addr(i, 0)}+{node_addr(i, 1)}  # n{i}\n")
    rc, result, err, _ = diag(daemons[0], "reach", "--nodes-file", nodes_file, "--plan", "rings",
                              "--count", "2", bound=15)
    assert rc == 0, err
    assert result["nodes"] == ["n0", "n1", "n2"]
    # Three ports a rail are too few for two rings: the rail is meshed.
    assert result["plan"]["kind"] == "rings" and result["plan"]["rails"][0]["stride"] == 0
    rc, _, err, _ = diag(daemons[0], "reach", "--nodes-file", nodes_file + ".missing", bound=5)
    assert rc == 2 and "--nodes-file" in err and "No such file" in err, err
    rc, _, err, _ = diag(daemons[0], "reach", "--nodes-file", nodes_file, "--plan", "ring",
                         bound=5)
    assert rc == 2 and "plan: \"ring\" is not a plan" in err, err


def test_bandwidth_each_way(cluster):
    cl, daemons = cluster
    rc, result, err, _ = diag(daemons[0], "bandwidth", "--port", "so0", "--peer", node_addr(1),
                              "--streams", "2", "--duration", "1s", bound=10)
    assert rc == 0, err
    assert result["ok"], result
    directions = {d["direction"]: d for d in result["directions"]}
    assert set(directions) == {"transmit", "receive"}
    for d in directions.values():
        assert 0 < d["bits_per_second"] < VETH_LIMIT_BPS, d
        assert len(d["streams"]) == 2 and all(int(s["bytes"]) > 0 for s in d["streams"])
    # This node's own counters (its port took part) and the peer's.
    assert result["counters"]["nodes_read"] == 2, result["counters"]
    print("bandwidth Gb/s:", {k: round(v["bits_per_second"] / 1e9, 2) for k, v in directions.items()})


def test_bandwidth_to_a_peer_outside_the_rail_is_refused(cluster):
    cl, daemons = cluster
    rc, _, err, _ = diag(daemons[0], "bandwidth", "--port", "so0", "--peer", node_addr(1, 1),
                         bound=10)
    assert rc == 2 and "rail" in err, err


def test_allreduce_rings_on_both_rails(cluster):
    cl, daemons = cluster
    nodes = ",".join(node_addr(i) for i in range(NODES))
    rc, result, err, _ = diag(daemons[0], "allreduce", "--nodes", nodes, "--min-bytes", "4K",
                              "--max-bytes", "1M", "--step-factor", "16", "--iterations", "3",
                              "--time-limit", "10s", bound=20)
    assert rc == 0, err
    assert result["ok"] and result["ranks"] == NODES, result
    assert [r["rail"] for r in result["rails"]] == ["10.201.0.0/16", "10.202.0.0/16"]
    for rail in result["rails"]:
        assert not rail.get("broken")
        assert [int(s["bytes"]) for s in rail["sizes"]] == [4096, 65536, 1048576]
        for s in rail["sizes"]:
            assert s["verified"] and s["seconds"] > 0
            assert s["algbw_bytes_per_second"] == pytest.approx(int(s["bytes"]) / s["seconds"])
            assert s["busbw_bytes_per_second"] == pytest.approx(
                s["algbw_bytes_per_second"] * 2 * (NODES - 1) / NODES)
        assert len(rail["links"]) == NODES
        assert all(0 < link["bits_per_second"] < VETH_LIMIT_BPS for link in rail["links"])
        assert sum(1 for link in rail["links"] if link.get("slowest")) == 1
        print("rail", rail["rail"], "busbw GB/s at 1M:",
              round(rail["sizes"][-1]["busbw_bytes_per_second"] / 1e9, 3))


def test_incast_fairness(cluster):
    cl, daemons = cluster
    senders = [node_addr(1), node_addr(2)]
    rc, result, err, _ = diag(daemons[0], "incast", "--port", "so0", "--senders",
                              ",".join(senders), "--duration", "1s", bound=12)
    assert rc == 0, err
    assert result["ok"], result
    rates = [s["bits_per_second"] for s in result["senders"]]
    assert len(rates) == 2 and all(0 < r < VETH_LIMIT_BPS for r in rates)
    assert [s["node"] for s in result["senders"]] == ["n1", "n2"]
    jain = sum(rates) ** 2 / (len(rates) * sum(r * r for r in rates))
    assert 1 / len(rates) <= result["fairness"] <= 1
    assert result["fairness"] == pytest.approx(jain)
    assert result["total_bits_per_second"] == pytest.approx(sum(rates))
    print("incast fairness", round(result["fairness"], 3))


def test_results_as_metrics(cluster):
    cl, daemons = cluster
    text = daemons[0].metrics()
    assert metric_value(text, "rocenet_diag_reach_rtt_seconds",
                        {"device": "so0", "kind": "gateway", "percentile": "p50"}) > 0
    assert metric_value(text, "rocenet_diag_reach_unreachable_targets",
                        {"device": "so0", "kind": "gateway"}) == 0
    # The last reach was across the nodes, reduced at each: the peers'
    # figures come from every echo, though no peer that answered was sent.
    assert metric_value(text, "rocenet_diag_reach_rtt_seconds",
                        {"node": "n1", "device": "so1", "kind": "peer", "percentile": "p99"}) > 0
    assert metric_value(text, "rocenet_diag_reach_unreachable_targets",
                        {"node": "n1", "device": "so1", "kind": "peer"}) == 0
    assert metric_value(text, "rocenet_diag_bandwidth_bytes_per_second",
                        {"device": "so0", "direction": "transmit"}) > 0
    assert metric_value(text, "rocenet_diag_allreduce_bus_bandwidth_bytes_per_second",
                        {"rail": "10.201.0.0/16"}) > 0
    assert 0.5 <= metric_value(text, "rocenet_diag_incast_fairness_ratio", {"device": "so0"}) <= 1
    assert metric_value(text, "rocenet_diag_runs_total", {"test": "reach", "result": "success"}) >= 1


def test_the_rdma_stage_names_why_each_link_is_skipped(cluster):
    """The sim's ports have no RDMA device: the RDMA stage runs across the
    nodes through rocenet-diagd and says so per link, never passing it."""
    cl, daemons = cluster
    nodes = ",".join(node_addr(i) for i in range(NODES))
    rc, result, err, _ = diag(daemons[0], "rdma", "--nodes", nodes, "--duration", "1s", bound=30)
    links = result["links"]
    # A ring per rail: n0 -> n1 -> n2 -> n0 on each.
    assert len(links) == NODES * RAILS, result
    for link in links:
        assert link["skipped"] == f"{link['from_node']}: no RDMA device on {link['from_port']}", link
        assert link["bits_per_second"] == 0, link
    assert "no link was measured: every link was skipped" in result["stage"]["notes"], result
    # Nothing measured proves nothing: no node is labelled for the RDMA stage.
    for d in daemons:
        path = os.path.join(d.nfd_dir, "rocenet-validated")
        label = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
        assert "scale-out-validated=rdma" not in label, label


def test_promtool_check_metrics_finds_nothing_in_diagds_scrape(cluster):
    """Prometheus's own linter on rocenet-diagd's live scrape, after tests ran."""
    promtool = shutil.which("promtool")
    if not promtool:
        pytest.skip("promtool not installed (packaging/debian-deps.sh test installs prometheus)")
    cl, daemons = cluster
    text = daemons[0].metrics()
    assert "rocenet_diag_runs_total" in text
    cp = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                        text=True, timeout=60)
    lint = (cp.stdout + cp.stderr).strip()
    assert cp.returncode == 0 and not lint, f"promtool check metrics exited {cp.returncode}:\n{lint}"


def test_requests_beyond_the_bounds_are_refused(cluster):
    cl, daemons = cluster
    nodes = ",".join(node_addr(i) for i in range(NODES))
    cp = daemons[0].rocectl("diag", "allreduce", "--nodes", nodes, "--max-bytes", "1024M")
    assert cp.returncode == 2 and "max_bytes" in cp.stderr, cp.stderr
    cp = daemons[0].rocectl("diag", "reach", "--time-limit", "5m")
    assert cp.returncode == 2 and "timeout_ms" in cp.stderr, cp.stderr
    cp = daemons[0].rocectl("diag", "bandwidth", "--port", "so9", "--peer", node_addr(1))
    assert cp.returncode == 4, cp.stderr


def test_data_port_follows_a_new_address(cluster):
    cl, daemons = cluster
    old, new = node_addr(2, 0), "10.201.3.5"

    def listening() -> list[str]:
        cp = cl.node_exec(2, ["ss", "-Hltn", "sport = :50153"], check=True)
        return sorted(line.split()[3] for line in cp.stdout.splitlines())

    cl.readdress(2, 0, "10.201.3.6")
    try:
        wait_until(lambda: listening() == sorted([f"{new}:50153", f"{node_addr(2, 1)}:50153"]),
                   15, what="n2's data port on its new address only")
        rc, result, err, _ = diag(daemons[0], "reach", "--nodes", f"{node_addr(0)},{new}",
                                  "--count", "2", "--time-limit", "2s", bound=10)
        assert rc == 0 and result["ok"], err + json.dumps(result)
        assert result["nodes"] == ["n0", "n2"]
    finally:
        cl.readdress(2, 0, sim_cluster.switch_address(2, 0))
        wait_until(lambda: f"{old}:50153" in listening(), 15, what="n2's data port back")


def test_a_cable_that_flaps_during_a_run_is_in_the_runs_counters(cluster):
    """The switch end of n1's rail-1 cable goes down and up while a mesh
    reach runs: the result lists n1/so1's carrier loss, read from its
    rocenetd at the start and the end of the run, and nothing of the sort
    on the other ports."""
    cl, daemons = cluster
    nodes = ",".join(node_addr(i) for i in range(NODES))
    # 4 s of echoes; its first progress line comes after the counters' first
    # read, and the last read after the echoes.
    run = subprocess.Popen(
        [*daemons[0].node.rocectl_argv("--diag-socket", daemons[0].socket), "diag", "reach",
         "--nodes", nodes, "--count", "40", "--interval", "100ms", "--time-limit", "10s",
         "-o", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = run.stderr.readline()
        assert first.startswith("diag:"), first
        cl.link(1, 1, "down")
        # Until n1's rocenetd has seen the carrier go.
        wait_until(lambda: not {p["name"]: p for p in daemons[1].node.ports()}["so1"]["carrier"],
                   10, what="n1/so1 without carrier")
    finally:
        cl.link(1, 1, "up")
        out, err = run.communicate(timeout=30)
    counters = json.loads(out)["counters"]
    print("counters that moved during the run:", counters.get("changes"))
    assert counters["nodes_read"] == NODES, (counters, first + err)
    carrier = [(c["node"], c["port"], int(c["increase"])) for c in counters.get("changes", [])
               if c["counter"] == "link.carrier_down_changes"]
    assert carrier == [("n1", "so1", 1)], counters
    # The run goes on to be judged as ever; wait for n1/so1 to be back.
    wait_until(lambda: diag(daemons[0], "reach", "--nodes", nodes, "--count", "1",
                            bound=10)[0] == 0, 30, what="n1/so1 reachable again")


def test_broken_link_is_named(cluster):
    cl, daemons = cluster
    cl.link(1, 1, "down")  # the switch end of n1's so1
    nodes = ",".join(node_addr(i) for i in range(NODES))
    rc, result, err, _ = diag(daemons[0], "reach", "--nodes", nodes, "--count", "3",
                              "--time-limit", "2s", bound=10)
    assert rc == 6, err
    assert not result["ok"]
    assert result["suspects"] == ["n1/so1"], result
    [suspect] = result["suspect_details"]
    assert (suspect["kind"], suspect["node"], suspect["port"]) == ("port", "n1", "so1"), suspect
    assert suspect["evidence"].startswith("none of 5 probes from and to it answered"), suspect
    pairs = result["unreachable"]
    assert pairs
    for p in pairs:
        assert (p["from_node"], p["from_port"]) == ("n1", "so1") or \
            (p["to_node"], p["to_port"]) == ("n1", "so1"), p
    # One node named: within the circuit breaker's bound (2 of 3 nodes).
    assert result["labels"]["unvalidated"] == ["n1"], result["labels"]
    assert "rocenet.io/scale-out-validated" not in validated(daemons[1])
    # Two nodes named, a bound of one: inconclusive, no label changed.
    assert diag(daemons[0], "reach", bound=10)[0] == 0  # n0 validates itself
    cl.link(2, 0, "down")
    # n2 is reached at its rail-1 address while its rail-0 cable is cut.
    both = ",".join(f"{node_addr(i, 0)}+{node_addr(i, 1)}" for i in range(NODES))
    try:
        rc, result, err, _ = diag(daemons[0], "reach", "--nodes", both, "--count", "2",
                                  "--max-unvalidated", "1", "--time-limit", "2s", bound=10)
    finally:
        cl.link(2, 0, "up")
    assert rc == 6, err
    assert result["suspects"] == ["n1/so1", "n2/so0"], result
    labels = result["labels"]
    assert labels["inconclusive"] and not labels.get("unvalidated"), labels
    assert "names 2 of 3 nodes, more than the 1" in labels["reason"], labels
    assert "rocenet.io/scale-out-validated=" in validated(daemons[0])

    rc, result, err, took = diag(daemons[0], "allreduce", "--nodes", nodes, "--min-bytes", "4K",
                                 "--max-bytes", "64K", "--iterations", "2", "--time-limit", "5s",
                                 bound=15)
    assert rc == 6, err
    rails = {r["rail"]: r for r in result["rails"]}
    assert rails["10.202.0.0/16"]["broken"], rails
    assert "n1/so1" in rails["10.202.0.0/16"]["error"]
    assert not rails["10.201.0.0/16"].get("broken")
    assert all(s["verified"] for s in rails["10.201.0.0/16"]["sizes"])
    failed = [link for link in rails["10.202.0.0/16"]["links"] if link.get("error")]
    assert failed and all("n1" in (link["from_node"], link["to_node"]) for link in failed)


def validated(daemon: Daemon) -> str:
    """The node's validation label file, as nfd-worker would read it."""
    path = os.path.join(daemon.nfd_dir, "rocenet-validated")
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def test_a_passed_stage_labels_every_node_that_took_part(cluster):
    cl, daemons = cluster
    rc, result, err, _ = diag(daemons[0], "bandwidth", "--port", "so0", "--peer", node_addr(1),
                              "--streams", "1", "--duration", "500ms", bound=10)
    assert rc == 0, err
    assert result["stage"]["stage"] == "ethernet"
    assert result["stage"]["path"].startswith("TCP through the netdev so0"), result["stage"]
    for d in daemons[:2]:
        text = validated(d)
        assert text.startswith("# +expiry-time="), text
        assert "rocenet.io/scale-out-validated=ethernet" in text, text


def test_a_forged_request_to_the_data_port_is_refused_and_counted(cluster):
    """Anyone on the fabric can reach the data port: a request without the
    cluster's MAC (here, one that asks n1 to flood n2) gets no answer and is
    counted, and n1 sends nothing."""
    cl, daemons = cluster
    before = metric_value(daemons[1].metrics(), "rocenet_diag_peer_refused_total",
                          {"reason": "unauthenticated"}) or 0
    # A PeerEnvelope whose request (field 1) is a PeerRequest.send (field 7)
    # to n2, and no auth: the bytes an attacker without the secret can make.
    target = node_addr(2).encode()
    send = b"\x0a" + bytes([len(target)]) + target + b"\x10\xa9\x87\x03\x18\xd0\x0f\x20\x01"
    request = b"\x3a" + bytes([len(send)]) + send
    envelope = b"\x0a" + bytes([len(request)]) + request
    code = (
        "import socket,struct\n"
        f"s=socket.create_connection(('{node_addr(1)}',50153),timeout=3)\n"
        f"s.sendall(struct.pack('>I',{len(envelope)})+bytes.fromhex('{envelope.hex()}'))\n"
        "print(repr(s.recv(4096)))\n")
    cp = cl.node_exec(0, [sys.executable, "-c", code], timeout=15)
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout.strip() == "b''", f"the data port answered a forged request: {cp.stdout}"
    wait_until(lambda: (metric_value(daemons[1].metrics(), "rocenet_diag_peer_refused_total",
                                     {"reason": "unauthenticated"}) or 0) == before + 1,
               5, what="the refusal counted")
    assert "data port: refused: peer " + node_addr(0) in daemons[1].log()


def test_diagd_refuses_a_user_the_socket_lets_in(cluster):
    """rocenet-diagd's socket is root's only (0600); a caller that gets in
    anyway (here: the socket opened by hand) is refused by the uid the kernel
    names, and root still runs tests."""
    _, daemons = cluster
    d = daemons[0]
    assert os.stat(d.socket).st_mode & 0o777 == 0o600
    # The socket, its directory and the daemon's work directory, opened.
    paths = [d.socket, os.path.dirname(d.socket), os.path.dirname(os.path.dirname(d.socket))]
    modes = {p: os.stat(p).st_mode & 0o777 for p in paths}
    try:
        for p in paths[1:]:
            os.chmod(p, 0o755)
        os.chmod(d.socket, 0o666)
        cp = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                             binary("rocectl"), "--socket", d.node.socket, "--diag-socket", d.socket,
                             "diag", "reach"], capture_output=True, text=True, timeout=30)
    finally:
        for p, mode in modes.items():
            os.chmod(p, mode)
    assert cp.returncode != 0, cp.stdout
    assert "rocenet.v1.Diagnostics/Reach" in cp.stderr, cp.stderr
    assert "uid 65534" in cp.stderr, cp.stderr
    code, result, err, _ = diag(d, "reach", bound=20)
    assert code == 0, err
    assert result.get("ok"), result


def test_rocenetd_keeps_no_diagnostics(cluster):
    """With the diagnostics' old keys in its configuration, rocenetd says
    where they went, listens on TCP for its metrics only and has started no
    process, after the tests of this module ran through rocenet-diagd."""
    cl, daemons = cluster
    node = daemons[0].node
    log = node.log()
    assert ("diag_secret_file: the diagnostics moved to rocenet-diagd (--secret-file); "
            "ignored here") in log
    assert "diag_port: the diagnostics moved to rocenet-diagd (--data-port)" in log
    metrics_port = node.metrics_url.split(":")[2].split("/")[0]
    cp = cl.node_exec(0, ["ss", "-Hltnp"], check=True)
    mine = [line.split()[3] for line in cp.stdout.splitlines() if f"pid={node.proc.pid}," in line]
    assert mine == [f"127.0.0.1:{metrics_port}"], cp.stdout
    children = ""
    for task in os.listdir(f"/proc/{node.proc.pid}/task"):
        with open(f"/proc/{node.proc.pid}/task/{task}/children", encoding="utf-8") as f:
            children += f.read()
    assert children.strip() == "", f"rocenetd started processes: {children}"
