# SPDX-License-Identifier: Apache-2.0
"""ErrorsRising on a real kernel: a node whose one port is a VXLAN device
with an unreachable remote counts a transmit error for every frame sent, as
a bad link counts errors; rocenetd raises the condition after two rising
sampling intervals in a row and shows it in health and the metrics."""

from __future__ import annotations

import subprocess
import tempfile
import time

import pytest
from metrics_test import health, port_conditions, scrape

from harness import Daemon, sim, wait_until

# rocenetd's --errors-interval here, in seconds.
ERRORS_INTERVAL = 2


@pytest.fixture
def vxlan_node():
    """A node of its own whose one port is a VXLAN device whose remote is
    unreachable: every frame sent out of it is a transmit error of the
    kernel's (no route to the remote), the way a bad link counts errors."""
    ns = sim.unique_name("obx")
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        for argv in (["link", "set", "lo", "up"],
                     ["link", "add", "obvx0", "type", "vxlan", "id", "42", "remote", "192.0.2.1",
                      "dstport", "4789"],
                     ["link", "set", "obvx0", "up"],
                     ["addr", "add", "10.99.0.1/30", "dev", "obvx0"],
                     ["neigh", "add", "10.99.0.2", "lladdr", "02:00:00:00:00:02", "dev", "obvx0"]):
            subprocess.run(["ip", "-n", ns, *argv], check=True)
        d = Daemon(ns, ["--gaudi=false", "--interfaces=obvx0", "--mode=L2",
                        f"--errors-interval={ERRORS_INTERVAL}s"],
                   workdir=tempfile.mkdtemp(prefix="rocenetd-"))
        d.start()
        yield ns, d
        d.cleanup()
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_transmit_errors_raise_errors_rising(vxlan_node):
    ns, daemon = vxlan_node
    wait_until(lambda: health(daemon)["ready"], 10, what="the VXLAN port healthy")
    # Two sampling intervals in a row with new errors raise it, not sooner.
    ping = subprocess.Popen(["ip", "netns", "exec", ns, "ping", "-q", "-i", "0.2", "-w", "60",
                             "10.99.0.2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.monotonic()
    try:
        wait_until(lambda: "ErrorsRising" in port_conditions(daemon, "obvx0"),
                   8 * ERRORS_INTERVAL, interval=0.2, what="ErrorsRising")
        assert time.monotonic() - t0 >= ERRORS_INTERVAL, "raised within one sampling interval"
        port = next(p for p in health(daemon)["ports"] if p["name"] == "obvx0")
        rising = next(c for c in port["conditions"] if c["type"] == "ErrorsRising")
        assert rising["reason"] == "TransmitErrors", rising
        assert "obvx0" in rising["message"] and rising.get("since")
        s = scrape(daemon)
        assert s.value("rocenet_port_condition", device="obvx0", condition="ErrorsRising") == 1
        assert s.value("rocenet_port_transmit_errors_total", device="obvx0") > 0
        assert s.value("rocenet_port_healthy", device="obvx0") == 0
        assert health(daemon)["ready"] is False
    finally:
        ping.kill()
        ping.wait()
