# SPDX-License-Identifier: Apache-2.0
"""LinkFlapping on a real kernel: the switch end of a simulated port (a
veth) goes down and up three times in a row, each time up again within
milliseconds; rocenetd counts the losses from the kernel's carrier down
count (IFLA_CARRIER_DOWN_COUNT), raises LinkFlapping while the link reads
up, shows the counts in the metrics and the API, holds the condition until
the link has been up for health.flap_stable, and a reload makes it
advisory."""

from __future__ import annotations

import os
import signal
import tempfile
import time

from metrics_test import health, scrape

from harness import ready_daemon, wait_until

# health.flap_stable here: how long the link must stay up to clear it.
STABLE_S = 4


def config(path: str, unhealthy: bool) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write("health:\n  flap_downs: 3\n  flap_window: 1m\n"
                f"  flap_stable: {STABLE_S}s\n  flap_unhealthy: {str(unhealthy).lower()}\n")


def port(daemon, name: str) -> dict:
    return next(p for p in health(daemon)["ports"] if p["name"] == name)


def flapping(daemon, name: str) -> dict | None:
    return next((c for c in port(daemon, name).get("conditions", [])
                 if c["type"] == "LinkFlapping"), None)


def test_three_quick_losses_raise_link_flapping_until_the_link_is_stable(fabrics):
    fabric = fabrics("lf", ports=2)
    path = os.path.join(tempfile.mkdtemp(prefix="rocenetd-flap-"), "rocenetd.yaml")
    config(path, unhealthy=True)
    # A look at the ports every second, so the stable time is seen to end.
    with ready_daemon(fabric, f"--config={path}", "--errors-interval=1s", timeout=15) as d:
        name, other = fabric.ports[0]["host_ifname"], fabric.ports[1]["host_ifname"]
        before = scrape(d).value("rocenet_port_carrier_down_changes_total", device=name)
        assert before is not None, "no carrier counts from this kernel"
        for _ in range(3):
            fabric.link(0, "down")
            fabric.link(0, "up")
        wait_until(lambda: flapping(d, name) is not None, 10, interval=0.2, what="LinkFlapping")
        raised = time.monotonic()
        condition = flapping(d, name)
        assert condition["reason"] == "CarrierFlapping", condition
        assert condition["message"] == (
            f"port {name}: carrier lost 3 times within 1m; held until the link stays up for "
            f"{STABLE_S}s; check the cable, the optics and the switch port"), condition
        assert port(d, name)["healthy"] is False and health(d)["ready"] is False
        assert flapping(d, other) is None, "the other port did not flap"
        s = scrape(d)
        assert s.value("rocenet_port_carrier_down_changes_total", device=name) == before + 3
        assert s.value("rocenet_port_condition", device=name, condition="LinkFlapping") == 1
        ports = {p["name"]: p for p in d.ports()}
        assert ports[name]["carrier"] is True, "the link reads up while it flaps"
        assert int(ports[name]["counters"]["carrier_down_changes"]) == before + 3

        # Held while the link is stable, then cleared.
        wait_until(lambda: flapping(d, name) is None, STABLE_S + 10, interval=0.2,
                   what="LinkFlapping cleared")
        held = time.monotonic() - raised
        assert held >= STABLE_S - 1, f"cleared after {held:.1f}s, before the stable time"
        wait_until(lambda: health(d)["ready"], 10, what="the node ready again")
        print(f"LinkFlapping raised, then cleared after {held:.1f}s of a stable link")

        # A reload makes it advisory: the next flaps report it, the port
        # stays healthy.
        config(path, unhealthy=False)
        d.proc.send_signal(signal.SIGHUP)
        wait_until(lambda: "configuration reloaded" in d.log(), 10, what="the reload")
        for _ in range(3):
            fabric.link(0, "down")
            fabric.link(0, "up")
        wait_until(lambda: flapping(d, name) is not None, 10, interval=0.2,
                   what="LinkFlapping again")
        assert flapping(d, name)["advisory"] is True
        assert port(d, name)["healthy"] is True
