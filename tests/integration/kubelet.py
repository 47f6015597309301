# SPDX-License-Identifier: Apache-2.0
"""rocenet-device-plugin and the stand-in for kubelet it registers with
(rocenet-kubelet-peer: the v1beta1 protocol over the real socket layout),
for the tests that run them beside rocenetd."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time

from harness import BUILD_DIR, Daemon, binary

RESOURCE = "rocenet.io/scale-out-port"
GRACE = 3.0
# Two rails: so0/so1 route 10.200.0.0/16, so2/so3 route 10.201.0.0/16.
TWO_RAILS = {0: "no-alert 10.200.1.2/30", 1: "no-alert 10.200.2.2/30",
             2: "no-alert 10.201.3.2/30", 3: "no-alert 10.201.4.2/30"}


def peer_binary() -> str:
    path = os.path.join(BUILD_DIR, "tests", "integration", "kubelet_peer", "rocenet-kubelet-peer")
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(f"rocenet-kubelet-peer not built under {BUILD_DIR}")
    return path


class KubeletPeer:
    """rocenet-kubelet-peer: every JSON line it prints lands in `events`."""

    def __init__(self, kubelet_dir: str):
        self.proc = subprocess.Popen([peer_binary(), kubelet_dir], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        self.events: queue.Queue = queue.Queue()
        self.seen: list[dict] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.next(lambda e: e["event"] == "listening", 5)

    def _read(self):
        for line in self.proc.stdout:
            self.events.put(json.loads(line))

    def next(self, pred, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching kubelet event in {timeout}s; saw {self.seen[-5:]}")
            try:
                event = self.events.get(timeout=left)
            except queue.Empty:
                continue
            self.seen.append(event)
            if pred(event):
                return event

    def devices(self, pred, timeout: float) -> dict[str, dict]:
        """The next full device list (by ID) that satisfies pred."""
        event = self.next(lambda e: e["event"] == "devices" and
                          pred({d["ID"]: d for d in e.get("devices", [])}), timeout)
        return {d["ID"]: d for d in event.get("devices", [])}

    def latest_devices(self, settle: float = 0.5) -> dict[str, dict]:
        """The last full device list kubelet has, after `settle` s of quiet."""
        while True:
            try:
                self.seen.append(self.events.get(timeout=settle))
            except queue.Empty:
                break
        last = [e for e in self.seen if e["event"] == "devices"]
        return {d["ID"]: d for d in last[-1].get("devices", [])} if last else {}

    def call(self, line: str, timeout: float = 10) -> dict:
        verb = line.split()[0]
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.next(lambda e: e["event"] == verb, timeout)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


class Plugin:
    def __init__(self, daemon: Daemon, workdir: str, *extra: str):
        self.kubelet_dir = os.path.join(workdir, "device-plugins")
        self.devinfo_dir = os.path.join(workdir, "devinfo")
        self.hcl_dir = os.path.join(workdir, "hcl")
        os.makedirs(self.kubelet_dir, exist_ok=True)
        self.log_path = os.path.join(workdir, "plugin.log")
        # The container's readiness (packaging: the device plugin's probe).
        self.ready_file = os.path.join(workdir, "listed")
        self.argv = [binary("rocenet-device-plugin"), f"--daemon-socket={daemon.socket}",
                     f"--kubelet-dir={self.kubelet_dir}", f"--devinfo-dir={self.devinfo_dir}",
                     f"--hcl-dir={self.hcl_dir}", f"--grace-period={GRACE}s",
                     f"--pod-resources-socket={os.path.join(workdir, 'pod-resources', 'kubelet.sock')}",
                     "--pod-resources-interval=0.5s",
                     "--log-level=debug", f"--ready-file={self.ready_file}",
                     # The sim's sysfs, where the node's RDMA devices are.
                     *[a for a in daemon.args if a.startswith("--sysfs-root=")], *extra]
        self.proc: subprocess.Popen | None = None

    def start(self):
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.argv, stdout=log, stderr=log)

    def log(self) -> str:
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self) -> int:
        self.proc.terminate()
        return self.proc.wait(10)


def ids_by_name(daemon: Daemon) -> dict[str, str]:
    return {p["name"]: p["id"] for p in daemon.ports()}


def all_healthy(devices: dict) -> bool:
    return bool(devices) and all(d["health"] == "Healthy" for d in devices.values())


@contextlib.contextmanager
def plugin_with_peer(daemon: Daemon):
    """A kubelet peer, then the plugin, in a fresh kubelet directory; after
    the test, the plugin stops cleanly and leaves nothing behind."""
    workdir = tempfile.mkdtemp(prefix="rocenet-dp-")
    plugin = Plugin(daemon, workdir)
    peer = KubeletPeer(plugin.kubelet_dir)
    plugin.start()
    peers = [peer]
    yield plugin, peers
    for p in peers:
        p.stop()

    def left() -> list[str]:
        return [os.path.join(root, name) for top in (plugin.devinfo_dir, plugin.hcl_dir)
                for root, dirs, files in os.walk(top) for name in dirs + files]
    # Nothing stale: once kubelet (a fresh one, which assigns nothing) no
    # longer assigns their ports, the device-info files and HCL directories
    # go; a stopping plugin leaves a live allocation's files to the next.
    if plugin.proc is not None and plugin.proc.poll() is None:
        fresh = KubeletPeer(plugin.kubelet_dir)
        try:
            deadline = time.monotonic() + 15
            while left() and time.monotonic() < deadline:
                time.sleep(0.2)
        finally:
            fresh.stop()
    rc = plugin.stop()
    assert rc == 0, plugin.log()
    assert not os.path.exists(os.path.join(plugin.kubelet_dir, "rocenet.io_scale-out-port.sock"))
    assert left() == [], left()
    shutil.rmtree(workdir, ignore_errors=True)
