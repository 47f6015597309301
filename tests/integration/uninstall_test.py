# SPDX-License-Identifier: Apache-2.0
"""The uninstall procedure of docs/deploying.md, step by step, on the simulated fabric:
pods holding ports are found with `rocectl attachments` and drained first
(DEL needs the daemon: without it DEL fails with CNI code 11 and the port
stays in the pod), rocenetd stops cleanly (the readiness label goes, the
ports keep their addresses and routes), and the documented clean-up
commands leave the node's addresses and routes as they were before rocenet
ran."""

from __future__ import annotations

import json
import subprocess

import pytest
from cni_test import Cni, ip_json

from harness import Daemon, wait_until


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
