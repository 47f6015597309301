# SPDX-License-Identifier: Apache-2.0
"""rocenet leaving a node, both ways, on the simulated fabric.

The uninstall procedure of docs/deploying.md, step by step: pods holding
ports are found with `rocectl attachments` and drained first (DEL needs
the daemon: without it DEL fails with CNI code 11 and the port stays in
the pod), rocenetd stops cleanly (the readiness label goes, the ports keep
their addresses and routes), and the documented clean-up commands leave
the node's addresses and routes as they were before rocenet ran.

`rocectl uninstall` (rocenet.v1.Lifecycle/Uninstall,
docs/rocenetd.md#uninstall): rocenetd takes back its addresses, routes,
host outputs and state directory, keeps a pod's port and the CNI plugin
the pod still needs, and from then on corrects nothing and writes
nothing; a second call removes nothing; a caller who may only read is
refused."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from cni_test import Cni, ip_json

from harness import HERE, Daemon, binary, metric_value, network_state, wait_until

READ_GID = 4243  # a group id no account needs to exist for
NOBODY = 65534


def addresses_and_routes(netns: str) -> dict:
    return {"addr": sorted((a["ifname"], i["local"], i["prefixlen"])
                           for a in ip_json(netns, "-4", "addr", "show")
                           for i in a.get("addr_info", [])),
            # Numbers, not /etc/iproute2's names, which the DEB test
            # installs and removes while this one runs.
            "route": sorted(json.dumps(r, sort_keys=True)
                            for r in ip_json(netns, "-4", "-N", "route", "show", "table", "all"))}


@pytest.fixture(scope="module")
def fabric(fabrics):
    return fabrics("un", ports=3)


def test_uninstall_as_the_readme_says(fabric, tmp_path):
    node = fabric.node_netns
    pristine = addresses_and_routes(node)
    features = tmp_path / "features.d" / "rocenet"
    features.parent.mkdir()
    config = tmp_path / "config.yaml"
    config.write_text(f"outputs:\n  nfd_features: {features}\n")
    daemon = Daemon(node, [f"--sysfs-root={fabric.sysfs_root}", f"--config={config}"])
    pod = f"{fabric.name}-pod"
    subprocess.run(["ip", "netns", "add", pod], check=True)
    try:
        daemon.start()
        daemon.wait_ready(15)
        wait_until(features.exists, 5, what="the readiness label")
        cni = Cni(daemon)
        rc, out = cni.run("ADD", "job-1", f"/run/netns/{pod}", "net1", cni.conf())
        assert rc == 0, out

        # 1. Which ports are in pods, and which ports rocenet manages.
        attached = json.loads(daemon.rocectl("attachments", "-o", "json", check=True).stdout)
        assert [a["ifname"] for a in attached["attachments"]] == ["net1"], attached
        ports = [p["name"] for p in daemon.ports()]

        # Skipping the drain: with rocenetd gone, DEL cannot bring the port
        # home. It fails with code 11 (try again later), which kubelet does.
        daemon.stop()
        rc, out = cni.run("DEL", "job-1", f"/run/netns/{pod}", "net1", cni.conf())
        assert rc != 0 and out.get("code") == 11, out
        assert daemon.socket in out.get("msg", "") + out.get("details", ""), out
        assert [link["ifname"] for link in ip_json(pod, "link", "show")
                if link["ifname"] != "lo"] == ["net1"]
        daemon.start()
        daemon.wait_ready(15)

        # 2. Drain: the pod's DEL (what deleting the pod does) brings it home.
        rc, out = cni.run("DEL", "job-1", f"/run/netns/{pod}", "net1", cni.conf())
        assert rc == 0, out
        attached = json.loads(daemon.rocectl("attachments", "-o", "json", check=True).stdout)
        assert not attached.get("attachments"), attached

        # 3. Delete the DaemonSet: SIGTERM. The label goes; the ports stay
        # configured (rocenet's routes carry protocol 158).
        assert daemon.stop() == 0
        assert not features.exists()
        kept = addresses_and_routes(node)
        assert kept != pristine
        assert any('"protocol": "158"' in r or '"protocol": 158' in r for r in kept["route"]), kept

        # 4. The clean-up commands of docs/deploying.md, for the ports of step 1.
        subprocess.run(["ip", "-n", node, "route", "flush", "proto", "158"], check=True)
        for port in ports:
            subprocess.run(["ip", "-n", node, "-4", "addr", "flush", "dev", port], check=True)
        assert addresses_and_routes(node) == pristine
    finally:
        daemon.cleanup()
        subprocess.run(["ip", "netns", "del", pod], capture_output=True)


@pytest.fixture(scope="module")
def leaving(fabrics):
    return fabrics("ul", ports=3)


def rocenet_routes(netns: str) -> list[dict]:
    return [r for r in ip_json(netns, "-4", "-N", "route", "show", "table", "all")
            if str(r.get("protocol")) == "158"]


def uninstall(daemon: Daemon) -> dict:
    cp = daemon.rocectl("uninstall", "-o", "json")
    assert cp.returncode == 0, cp.stderr
    return json.loads(cp.stdout or "{}")


def whats(items: list[dict]) -> list[str]:
    return [i["what"] for i in items]


def lldp_frames(daemon: Daemon, port: str) -> float:
    return metric_value(daemon.metrics(), "rocenet_lldp_frames_received_total",
                        {"device": port}) or 0


def descriptions(daemon: Daemon, port: str) -> list[str]:
    cp = daemon.rocectl("neighbors", "-o", "json", check=True)
    for entry in json.loads(cp.stdout).get("ports", []):
        if entry.get("name") == port:
            return [d for n in entry.get("neighbors", []) for d in n.get("port_descriptions", [])]
    return []


def test_rocectl_uninstall_takes_back_what_rocenetd_made_and_then_changes_nothing(leaving):
    fabric = leaving
    node = fabric.node_netns
    pristine = addresses_and_routes(node)
    # Reachable by a caller of the read group (who may only read).
    workdir = tempfile.mkdtemp(prefix="rocenetd-ul-")
    os.chmod(workdir, 0o755)
    host = Path(workdir) / "host"
    nfd = host / "features.d" / "rocenet"
    networkd = host / "network"
    theirs = networkd / "10-eth0.network"
    cni_plugin = host / "cni" / "bin" / "rocenet"
    for d in (nfd.parent, networkd, cni_plugin.parent):
        d.mkdir(parents=True)
    theirs.write_text("[Match]\nName=eth0\n")
    shutil.copy(binary("rocenet"), cni_plugin)
    config = Path(workdir) / "config.yaml"
    config.write_text(f"outputs:\n  nfd_features: {nfd}\n  networkd_dir: {networkd}\n"
                      f"  cni_plugin: {cni_plugin}\n")
    daemon = Daemon(node, [f"--sysfs-root={fabric.sysfs_root}", f"--config={config}",
                           f"--read-group={READ_GID}"], workdir=workdir)
    gaudinet = Path(workdir) / "gaudinet.json"
    state = Path(workdir) / "state"
    pod = f"{fabric.name}-pod"
    subprocess.run(["ip", "netns", "add", pod], check=True)
    try:
        daemon.start()
        daemon.wait_ready(15)
        wait_until(lambda: nfd.exists() and gaudinet.exists(), 5, what="the host outputs")
        ports = [p["name"] for p in daemon.ports()]
        assert sorted(f.name for f in networkd.iterdir()) == sorted(
            ["10-eth0.network", *(f"50-rocenet-{p}.network" for p in ports)])
        assert len(rocenet_routes(node)) == len(ports)

        cni = Cni(daemon)
        rc, out = cni.run("ADD", "job-1", f"/run/netns/{pod}", "net1", cni.conf())
        assert rc == 0, out
        attached = json.loads(daemon.rocectl("attachments", "-o", "json", check=True).stdout)
        in_pod = attached["attachments"][0]["host_ifname"]
        host_ports = [p for p in ports if p != in_pod]
        wait_until(lambda: len(rocenet_routes(node)) == len(host_ports), 5,
                   what="the attached port's route to leave the host with it")
        # Its carrier comes a moment after the move: compare once it is there.
        wait_until(lambda: ip_json(pod, "link", "show", "dev", "net1")[0]["operstate"] == "UP",
                   5, what="the pod's port up")
        pod_before = network_state(pod)
        host_addresses = {a["ifname"]: f"{i['local']}/{i['prefixlen']}"
                          for a in ip_json(node, "-4", "addr", "show")
                          for i in a.get("addr_info", []) if a["ifname"] in host_ports}
        assert sorted(host_addresses) == sorted(host_ports), host_addresses

        # A caller who may only read is refused, and nothing is removed.
        as_reader = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", f"--groups={READ_GID}"]
        cp = subprocess.run([*as_reader, "/usr/bin/python3", os.path.join(HERE, "grpc_probe.py"),
                             f"unix:{daemon.socket}", "/rocenet.v1.Lifecycle/Uninstall"],
                            capture_output=True, text=True, timeout=30)
        assert cp.returncode == 0, cp.stderr
        assert json.loads(cp.stdout)["code"] == "PERMISSION_DENIED", cp.stdout
        cp = subprocess.run([*as_reader, *daemon.rocectl_argv("uninstall")], capture_output=True,
                            text=True, timeout=30)
        assert cp.returncode == 3, cp.stderr
        assert "rocenet.v1.Lifecycle/Uninstall" in cp.stderr and "may not change the node" in \
            cp.stderr, cp.stderr
        assert gaudinet.exists() and state.exists() and len(rocenet_routes(node)) == len(host_ports)

        answer = uninstall(daemon)
        removed, kept = whats(answer.get("removed", [])), answer.get("kept", [])
        for port, address in host_addresses.items():
            assert f"address {address} on {port}" in removed, removed
        for path in (gaudinet, nfd, *(networkd / f"50-rocenet-{p}.network" for p in ports)):
            assert f"file {path}" in removed, removed
        assert removed[-1] == f"directory {state}", removed
        assert [k["what"].split(" in pod ")[0] for k in kept] == [
            f"port {in_pod}", f"file {cni_plugin}"], kept
        assert "default/job-1" in kept[0]["what"] and "comes home" in kept[0]["reason"], kept
        assert "pod default/job-1" in kept[1]["reason"], kept

        # What a user checks: the host as before rocenet, the files gone but
        # the host's own, the pod's port as it was, the plugin in place.
        assert addresses_and_routes(node) == pristine
        assert not gaudinet.exists() and not nfd.exists() and not state.exists()
        assert [f.name for f in networkd.iterdir()] == ["10-eth0.network"]
        assert network_state(pod) == pod_before
        assert cni_plugin.exists()
        assert metric_value(daemon.metrics(), "rocenet_node_uninstalled") == 1

        # Nothing is corrected now: an address put back by hand, a port set
        # down by hand, the switch announcing a new address. Each would be
        # acted on in the pass that reads it; the pass has run once
        # rocenetd shows the change, and the switch's next frames after it.
        drifted, downed = host_ports[0], host_ports[1]
        subprocess.run(["ip", "-n", node, "addr", "add", host_addresses[drifted], "dev",
                        drifted], check=True)
        subprocess.run(["ip", "-n", node, "link", "set", downed, "down"], check=True)
        wait_until(lambda: any(p["name"] == downed and not p.get("admin_up", False)
                               for p in daemon.ports()), 5, what="rocenetd to see the port down")
        index = next(i for i, p in enumerate(fabric.ports) if p["host_ifname"] == drifted)
        fabric.set_description(index, "no-alert 10.200.7.6/30")
        wait_until(lambda: descriptions(daemon, drifted) == ["no-alert 10.200.7.6/30"], 15,
                   what="rocenetd to hear the new description")
        seen = lldp_frames(daemon, drifted)
        wait_until(lambda: lldp_frames(daemon, drifted) >= seen + 2, 15,
                   what="two more of lldpd's advertisements")
        addresses = [f"{i['local']}/{i['prefixlen']}"
                     for a in ip_json(node, "-4", "addr", "show", "dev", drifted)
                     for i in a.get("addr_info", [])]
        assert addresses == [host_addresses[drifted]], addresses
        assert rocenet_routes(node) == []
        assert "UP" not in ip_json(node, "link", "show", "dev", downed)[0]["flags"]
        assert not gaudinet.exists() and not nfd.exists() and not state.exists()
        assert [f.name for f in networkd.iterdir()] == ["10-eth0.network"]

        # Nor on request: a reconcile is refused, saying why.
        cp = daemon.rocectl("reconcile")
        assert cp.returncode == 1 and "uninstalled" in cp.stderr, cp.stderr
        assert rocenet_routes(node) == []

        # A second call removes nothing and lists what is still kept.
        again = uninstall(daemon)
        assert not again.get("removed"), again
        assert again.get("kept") == kept, again
        cp = daemon.rocectl("uninstall", check=True)
        assert cp.stdout.startswith("Nothing was left to remove.\nKept:\n"), cp.stdout
    finally:
        daemon.cleanup()
        subprocess.run(["ip", "netns", "del", pod], capture_output=True)

