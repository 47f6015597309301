# SPDX-License-Identifier: Apache-2.0
"""A config change on disk reaches the running rocenetd without SIGHUP, as a
Kubernetes ConfigMap edit does: kubelet's atomic writer swaps the volume's
`..data` link, rocenetd (given the volume directory) notices, reloads with
validation first, applies live keys, refuses an invalid override naming its
file, and reports keys that need a restart in
`rocenet_config_restart_pending`."""

from __future__ import annotations

import os
import shutil
import time

import pytest
from reload_test import routes

from harness import Daemon, metric_value, network_state, wait_until


class ConfigMapVolume:
    """A directory laid out and updated the way kubelet does a ConfigMap
    volume: keys are links into ..data, a link to a timestamped directory
    that one rename replaces."""

    def __init__(self, path: str):
        self.path = path
        self.generation = 0
        self.current: str | None = None
        os.makedirs(path)

    def publish(self, files: dict[str, str]) -> None:
        self.generation += 1
        version = f"..2026_12_01_00_00_00.{self.generation:03d}"
        os.mkdir(os.path.join(self.path, version))
        for name, text in files.items():
            with open(os.path.join(self.path, version, name), "w") as f:
                f.write(text)
        os.symlink(version, os.path.join(self.path, "..data_tmp"))
        os.rename(os.path.join(self.path, "..data_tmp"), os.path.join(self.path, "..data"))
        for name in os.listdir(self.path):
            if not name.startswith(".") and name not in files:
                os.remove(os.path.join(self.path, name))
        for name in files:
            link = os.path.join(self.path, name)
            if not os.path.islink(link):
                os.symlink(os.path.join("..data", name), link)
        if self.current:
            shutil.rmtree(os.path.join(self.path, self.current))
        self.current = version


@pytest.fixture(scope="module")
def fabric(fabrics):
    return fabrics("cw", ports=2)


class Watched:
    def __init__(self, fabric):
        self.fabric = fabric
        self.daemon = Daemon(fabric.node_netns, [])
        self.volume = ConfigMapVolume(os.path.join(self.daemon.workdir, "config"))
        self.base = f"sysfs_root: {fabric.sysfs_root}\nlog_level: info\n"
        self.volume.publish({"config.yaml": self.base})
        self.daemon.args.append(f"--config={self.volume.path}")

    def metrics(self) -> str:
        return self.daemon.metrics()

    def reloads(self, result: str) -> float | None:
        return metric_value(self.metrics(), "rocenet_config_reloads_total", {"result": result})

    def update(self, files: dict[str, str], outcome: str) -> str:
        """Publishes `files` and waits for the daemon's log line `outcome`
        after it; no signal is sent."""
        start = len(self.daemon.log())
        self.volume.publish(files)
        return wait_until(lambda: outcome in self.daemon.log()[start:] and
                          self.daemon.log()[start:], 10, what=outcome)


@pytest.fixture(scope="module")
def watched(fabric):
    w = Watched(fabric)
    w.daemon.start()
    w.daemon.wait_ready(15)
    yield w
    w.daemon.cleanup()


def test_an_override_file_is_applied_without_sighup(watched, fabric):
    before = watched.reloads("success")
    log = watched.update(
        {"config.yaml": watched.base,
         "local.yaml": "addressing:\n  static_routes: [10.210.0.0/16]\n"},
        "configuration reloaded")
    assert "the config file changed; reloading the configuration" in log
    assert "received SIGHUP" not in log
    assert "applied [addressing.static_routes]" in log
    for port in ("so0", "so1"):
        wait_until(lambda: "10.210.0.0/16" in routes(fabric, port), 5, what=f"route on {port}")
    assert watched.reloads("success") == before + 1


def test_an_invalid_override_is_refused_naming_its_file(watched, fabric):
    failures = watched.reloads("failure")
    before = network_state(fabric.node_netns)
    log = watched.update(
        {"config.yaml": watched.base, "local.yaml": 'addressing:\n  mtu: "9000"\n'},
        "configuration reload refused")
    assert "/local.yaml" in log and "addressing.mtu" in log, log
    assert watched.daemon.proc.poll() is None
    assert watched.reloads("failure") == failures + 1
    assert metric_value(watched.metrics(), "rocenet_config_last_reload_successful") == 0
    # The route of the previous override is still there: nothing changed.
    assert network_state(fabric.node_netns) == before
    assert "10.210.0.0/16" in routes(fabric, "so0")


def test_a_restart_only_key_is_reported_until_it_is_back(watched, fabric):
    watched.update({"config.yaml": watched.base + "mode: L2\n"},
                   'key "mode" changed but needs a restart')
    assert metric_value(watched.metrics(), "rocenet_config_restart_pending",
                        {"key": "mode"}) == 1
    # The override is gone with this update: its static route goes too.
    wait_until(lambda: "10.210.0.0/16" not in routes(fabric, "so0"), 5, what="route removed")
    watched.update({"config.yaml": watched.base}, "configuration reloaded")
    assert metric_value(watched.metrics(), "rocenet_config_restart_pending",
                        {"key": "mode"}) is None


def test_touching_the_volume_without_a_change_does_not_reload(watched):
    successes = watched.reloads("success")
    failures = watched.reloads("failure")
    start = len(watched.daemon.log())
    watched.volume.publish({"config.yaml": watched.base})
    time.sleep(1)  # well past the watch's settle time: this was a burst of its own
    # A real change published after it is the next reload the log shows.
    watched.update({"config.yaml": watched.base.replace("info", "debug")},
                   "configuration reloaded: applied [log_level]")
    assert watched.daemon.log()[start:].count("reloading the configuration") == 1
    assert watched.reloads("success") == successes + 1
    assert watched.reloads("failure") == failures
