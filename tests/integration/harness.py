# SPDX-License-Identifier: Apache-2.0
"""Shared helpers for rocenet integration tests: start the real rocenetd in a
simulated fabric's node namespace, run the real rocectl, read metrics."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "sim"))

import fabric as sim  # noqa: E402, F401  (the tests take the simulator from here)

BUILD_DIR = os.environ.get("ROCENET_BUILD_DIR", os.path.join(HERE, "..", "..", "build"))


def binary(name: str) -> str:
    """Path of a built binary."""
    for sub in ("daemon/server", "daemon/diagd", "client", "plugins/cni", "plugins/device", "go",
                "tests/sim/dcb", "."):
        path = os.path.join(BUILD_DIR, sub, name)
        if os.access(path, os.X_OK):
            return path
    raise FileNotFoundError(f"{name} not built under {BUILD_DIR}")


def wait_until(pred, timeout: float, interval: float = 0.02, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = pred()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


class Daemon:
    """rocenetd running in `netns` (None: the current namespace)."""

    def __init__(self, netns: str | None, args: list[str], workdir: str | None = None,
                 runtime_dir: str | None = None, program: str = "rocenetd",
                 env: dict[str, str] | None = None):
        # `program`: rocenetd, or its test build rocenetd_fake_dcb (a
        # driver's dcbnl in files; `env` names the directory).
        self.program = program
        self.env = env
        self.workdir = workdir or tempfile.mkdtemp(prefix="rocenetd-")
        os.makedirs(self.workdir, exist_ok=True)
        self.socket = os.path.join(self.workdir, "run", "rocenetd.sock")
        # The attachment journal lives in the runtime directory, a tmpfs on a
        # real host (/run/rocenet); /dev/shm is one here whatever /run is.
        # Pass the same runtime_dir to a second Daemon that takes over.
        self.runtime_dir = runtime_dir or tempfile.mkdtemp(
            prefix="rocenetd-run-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
        self.log_path = os.path.join(self.workdir, "rocenetd.log")
        self.netns = netns
        self.args = [
            f"--socket={self.socket}",
            f"--state-dir={os.path.join(self.workdir, 'state')}",
            f"--runtime-dir={self.runtime_dir}",
            "--metrics-address=127.0.0.1:0",
            # The sim's ports are Gaudi ports: keep HCL's file out of the
            # host's /etc/habanalabs.
            f"--gaudinet-path={os.path.join(self.workdir, 'gaudinet.json')}",
            # Reservations' HCL files out of the host's /run/rocenet/hcl too.
            f"--hcl-dir={os.path.join(self.workdir, 'hcl')}",
            *args,
        ]
        self.proc: subprocess.Popen | None = None
        self.log_offset = 0
        self.metrics_url: str | None = None

    def command(self) -> list[str]:
        prefix = ["ip", "netns", "exec", self.netns] if self.netns else []
        return [*prefix, binary(self.program), *self.args]

    def start(self, wait: bool = True) -> Daemon:
        self.log_offset = os.path.getsize(self.log_path) if os.path.exists(self.log_path) else 0
        log = open(self.log_path, "ab")
        env = {**os.environ, **self.env} if self.env else None
        self.proc = subprocess.Popen(self.command(), stdout=log, stderr=log, env=env)
        log.close()
        if wait:
            wait_until(lambda: self.proc.poll() is not None or "serving metrics" in self.run_log(),
                       10, what=f"{self.program} to serve")
            if self.proc.poll() is not None:
                raise AssertionError(f"{self.program} exited {self.proc.returncode}:\n{self.log()}")
            urls = re.findall(r"serving metrics on (http://\S+/metrics)", self.log())
            self.metrics_url = urls[-1] if urls else None
        return self

    def log(self) -> str:
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def run_log(self) -> str:
        """The log of the latest start only."""
        with open(self.log_path, errors="replace") as f:
            f.seek(self.log_offset)
            return f.read()

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10) -> int | None:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"{self.program} did not stop on SIGTERM") from None

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)
        shutil.rmtree(self.runtime_dir, ignore_errors=True)

    @property
    def journal_path(self) -> str:
        return os.path.join(self.runtime_dir, "attachments.json")

    def metrics(self) -> str:
        assert self.metrics_url, "metrics not enabled"
        # The listener is inside the node namespace: fetch from there.
        cp = subprocess.run(["ip", "netns", "exec", self.netns, "curl", "-sS", "--max-time", "5",
                             self.metrics_url], capture_output=True, text=True, check=True)
        return cp.stdout

    def rocectl_argv(self, *args: str) -> list[str]:
        return [binary("rocectl"), "--socket", self.socket, *args]

    def rocectl(self, *args: str, check: bool = False, **kw) -> subprocess.CompletedProcess:
        return rocectl("--socket", self.socket, *args, check=check, **kw)

    def ready(self) -> bool:
        """Whether rocectl health says the node is ready (every port healthy)."""
        cp = self.rocectl("health", "-o", "json")
        return cp.returncode == 0 and bool(json.loads(cp.stdout or "{}").get("ready"))

    def wait_ready(self, timeout: float = 10) -> Daemon:
        wait_until(self.ready, timeout, interval=0.05, what="node ready")
        return self

    def ports(self) -> list[dict]:
        cp = self.rocectl("ports", "-o", "json", check=True)
        return json.loads(cp.stdout).get("ports", [])


class Diagd(Daemon):
    """rocenet-diagd beside `node` (a Daemon): in its namespace, its socket
    beside rocenetd's (where rocectl diag looks by default), its ports from
    rocenetd's stream."""

    def __init__(self, node: Daemon, args: list[str]):
        self.program = "rocenet-diagd"
        self.env = None
        self.node = node
        self.workdir = node.workdir
        self.runtime_dir = node.runtime_dir
        self.socket = os.path.join(os.path.dirname(node.socket), "diagd.sock")
        self.log_path = os.path.join(self.workdir, "diagd.log")
        self.netns = node.netns
        self.args = [f"--socket={self.socket}", f"--node-socket={node.socket}",
                     "--metrics-address=127.0.0.1:0", *args]
        self.proc = None
        self.log_offset = 0
        self.metrics_url = None

    def cleanup(self) -> None:
        """Stops it; the files are the node's (node.cleanup())."""
        self.stop()

    def rocectl(self, *args: str, check: bool = False, **kw) -> subprocess.CompletedProcess:
        return rocectl("--socket", self.node.socket, "--diag-socket", self.socket, *args,
                       check=check, **kw)


def threads_of(pid: int) -> str:
    """Where each thread of a process that does not stop is waiting: its
    name and kernel wait channel, and gdb's backtraces when gdb is there."""
    lines = []
    for tid in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
        def read(name: str) -> str:
            try:
                with open(f"/proc/{pid}/task/{tid}/{name}") as f:
                    return f.read().strip()
            except OSError:
                return "?"
        lines.append(f"thread {tid} {read('comm')}: {read('wchan')}")
    if shutil.which("gdb"):
        gdb = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt"],
                             capture_output=True, text=True, timeout=60)
        lines.append(gdb.stdout[-40000:])
    return "\n".join(lines)


@contextlib.contextmanager
def ready_daemon(fabric, *args: str, timeout: float = 10):
    """rocenetd on `fabric` (its fake sysfs, plus `args`), once the node is
    ready; cleaned up afterwards. For module fixtures."""
    d = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}", *args])
    try:
        d.start()
        d.wait_ready(timeout)
        yield d
    finally:
        d.cleanup()


def rocectl(*args: str, check: bool = False, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 30)
    return subprocess.run([binary("rocectl"), *args], check=check, **kw)


def metric_value(text: str, name: str, labels: dict[str, str] | None = None) -> float | None:
    """The value of one sample in Prometheus text exposition."""
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)$", line)
        if not m or m.group(1) != name:
            continue
        got = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        if labels and any(got.get(k) != v for k, v in labels.items()):
            continue
        return float(m.group(4))
    return None


def network_state(netns: str) -> str:
    """Links, IPv4 addresses, routes and rules of a namespace, for
    before/after comparisons. IPv6 is left out: rocenet never touches it, and
    the kernel's own link-local autoconfiguration (DAD) moves on its own.
    Routes and rules are shown with numbers (ip -N), not the names of
    /etc/iproute2: the DEB test installs and removes the name of rocenet's
    route protocol (158) while other tests run."""
    out = []
    for argv in (["ip", "-d", "link", "show"], ["ip", "-4", "-d", "addr", "show"],
                 ["ip", "-4", "-N", "route", "show", "table", "all"],
                 ["ip", "-4", "-N", "rule", "show"]):
        cp = subprocess.run(["ip", "netns", "exec", netns, *argv], capture_output=True,
                            text=True, check=True)
        out.append(cp.stdout)
    return "\n".join(out)


@contextlib.contextmanager
def diag_daemons(cl, node_address, rails: int, prefix: str, env: dict[int, dict[str, str]] | None = None):
    """rocenetd and rocenet-diagd on every node of the simulated cluster
    `cl` (tests/sim/cluster.py), sharing a fresh secret, each diagd's data
    port listening on its node's `rails` addresses (`node_address(i, r)`),
    diagd of node i run with `env[i]` added to its environment; yields
    the diagds (each with `.validation`, its label file), stopped after."""
    nodes: list[Daemon] = []
    daemons: list[Diagd] = []
    secrets = tempfile.mkdtemp(prefix=prefix)
    secret = os.path.join(secrets, "secret")
    with open(secret, "w", encoding="utf-8") as f:
        f.write(os.urandom(24).hex() + "\n")
    try:
        for i in range(cl.nodes):
            node = Daemon(cl.node_netns(i), ["--gaudi=false", "--interfaces=so*",
                                             f"--sysfs-root={cl.sysfs_root(i)}"])
            nodes.append(node)
            node.start()
            d = Diagd(node, [f"--node-name=n{i}", f"--secret-file={secret}",
                             f"--validation-file={secrets}/n{i}/rocenet-validated"])
            d.validation = f"{secrets}/n{i}/rocenet-validated"
            d.env = (env or {}).get(i)
            daemons.append(d)
            d.start()
        for i, d in enumerate(daemons):
            for r in range(rails):
                address = node_address(i, r)
                wait_until(lambda: f"listening on {address}:50153" in d.log(), 30,
                           what=f"node {i} rail {r} addressed and its data port listening")
        yield daemons
    finally:
        for d in daemons:
            d.cleanup()
        for node in nodes:
            node.cleanup()
        shutil.rmtree(secrets, ignore_errors=True)
