# SPDX-License-Identifier: Apache-2.0
"""The fleet benchmark's control plane, on this machine and nothing else:
etcd and kube-apiserver on 127.0.0.1 (ports of their own, a temporary
directory of their own, started the way tests/k8s/testcluster.py starts
them, with its certificates and kubeconfigs, tests/k8s/pki.py and
cluster_config.py), kwok faking the Nodes, rocenet-controller; a watch of
one object over HTTPS; the API server's and etcd's metrics; a process's
peak RSS and CPU time from /proc.

Every process is started in a session of its own with the parent-death
signal set (setpriv --pdeathsig), and stopped by its pid: nothing outlives
the benchmark, even one killed."""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "k8s"))

from fleet_figures import BenchError, request_totals  # noqa: E402

import cluster_config as cfg  # noqa: E402
from pki import Pki  # noqa: E402

ADDRESS = "127.0.0.1"
SERVICE_CIDR = cfg.SERVICE_CIDR
# The identity the reporters write with: a ServiceAccount of rocenet's
# namespace bound to the reporter's ClusterRole (node-reporter-rbac.yaml),
# so that its RBAC applies and API Priority and Fairness puts it in the
# service accounts' flow, not the exempt one of an admin. Not the
# DaemonSet's account itself: the reporter's admission policy, which
# rocenet-controller makes at start, refuses its writes without a token
# bound to a pod on the node, which no simulated node has.
REPORTER_USER = "system:serviceaccount:rocenet-system:rocenet-fleet-load"
REPORTER_GROUPS = ("system:serviceaccounts", "system:serviceaccounts:rocenet-system")
KWOK_ANNOTATION = "kwok.x-k8s.io/node"

def free_port() -> int:
    with socket.socket() as s:
        s.bind((ADDRESS, 0))
        return s.getsockname()[1]


def wait_for(what: str, pred, timeout: float, interval: float = 0.2, proc=None, log=None):
    """Polls pred until it is true; fails after timeout, or at once when
    proc (the process that should make it true) has exited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise BenchError(f"{what}: exited with {proc.returncode}{_tail(log)}")
        time.sleep(interval)
    raise BenchError(f"{what}: not within {timeout:.0f} s{_tail(log)}")


def _tail(log: str | None, lines: int = 20) -> str:
    if not log or not os.path.exists(log):
        return ""
    with open(log, errors="replace") as f:
        return "\n" + "".join(f.readlines()[-lines:])


class Processes:
    """The processes the benchmark started, by name; each logs to
    logs/NAME.log."""

    def __init__(self, logs: str):
        self.logs = logs
        self.procs: dict[str, subprocess.Popen] = {}
        os.makedirs(logs, exist_ok=True)

    def log(self, name: str) -> str:
        return os.path.join(self.logs, f"{name}.log")

    def start(self, name: str, argv: list[str], env: dict | None = None) -> subprocess.Popen:
        """Starts argv; SIGTERM reaches it when the benchmark dies (setpriv
        execs it, so the pid is the program's)."""
        with open(self.log(name), "ab") as out:
            proc = subprocess.Popen(["setpriv", "--pdeathsig", "TERM", "--", *argv], stdout=out,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True, env={**os.environ, **(env or {})})
        self.procs[name] = proc
        return proc

    def stop(self, name: str, timeout: float = 10) -> None:
        """SIGTERM to the process (by its pid), SIGKILL after timeout."""
        proc = self.procs.pop(name, None)
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def stop_all(self) -> None:
        """In the reverse order of their start."""
        for name in reversed(list(self.procs)):
            self.stop(name)


class ControlPlane:
    """etcd and kube-apiserver, with the admin's and the reporters'
    kubeconfigs and the TLS context to speak to the API server."""

    def __init__(self, work: str, bin_dir: str, procs: Processes):
        self.work, self.bin, self.procs = work, bin_dir, procs
        pki = Pki(os.path.join(work, "pki"))
        self.pki = pki
        self.etcd_port, etcd_peer, self.etcd_metrics_port, self.api_port = (
            free_port() for _ in range(4))
        self.server = f"https://{ADDRESS}:{self.api_port}"
        admin = pki.issue("admin", "/O=system:masters/CN=fleet-admin")
        self.admin = admin
        self.kubeconfig = self._kubeconfig("admin", admin)
        groups = "".join(f"/O={g}" for g in REPORTER_GROUPS)
        self.reporter_kubeconfig = self._kubeconfig(
            "reporter", pki.issue("reporter", f"{groups}/CN={REPORTER_USER}"))
        serving = pki.issue("apiserver", "/CN=kube-apiserver", server=True,
                            ips=(ADDRESS,), dns=("localhost",))

        proc = procs.start("etcd", [
            os.path.join(self.bin, "etcd"), "--data-dir", os.path.join(work, "etcd"),
            "--listen-client-urls", f"http://{ADDRESS}:{self.etcd_port}",
            "--advertise-client-urls", f"http://{ADDRESS}:{self.etcd_port}",
            "--listen-peer-urls", f"http://{ADDRESS}:{etcd_peer}",
            "--initial-advertise-peer-urls", f"http://{ADDRESS}:{etcd_peer}",
            "--initial-cluster", f"default=http://{ADDRESS}:{etcd_peer}",
            "--listen-metrics-urls", f"http://{ADDRESS}:{self.etcd_metrics_port}",
            "--quota-backend-bytes", str(2 << 30)])
        wait_for("etcd serving", lambda: _http_ok(self.etcd_port, "/health"), 30,
                 proc=proc, log=procs.log("etcd"))

        proc = procs.start("kube-apiserver", [
            os.path.join(self.bin, "kube-apiserver"),
            "--etcd-servers", f"http://{ADDRESS}:{self.etcd_port}",
            # The kubernetes Service's endpoint may not be a loopback
            # address; nothing here uses that Service.
            "--bind-address", ADDRESS, "--advertise-address", ADDRESS,
            "--endpoint-reconciler-type", "none",
            "--secure-port", str(self.api_port),
            "--tls-cert-file", serving.cert, "--tls-private-key-file", serving.key,
            "--client-ca-file", pki.ca.cert,
            "--service-account-key-file", pki.sa_pub,
            "--service-account-signing-key-file", pki.sa_key,
            "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
            "--service-cluster-ip-range", SERVICE_CIDR,
            "--authorization-mode", "Node,RBAC", "--profiling=false"])
        self.tls = ssl.create_default_context(cafile=pki.ca.cert)
        self.tls.load_cert_chain(admin.cert, admin.key)
        wait_for("kube-apiserver ready", lambda: self._ready(), 90, interval=0.5, proc=proc,
                 log=procs.log("kube-apiserver"))

    def _kubeconfig(self, name: str, pair) -> str:
        path = os.path.join(self.work, f"{name}.kubeconfig")
        with open(path, "w") as f:
            f.write(cfg.kubeconfig(self.server, self.pki.ca.cert, pair.cert, pair.key, name))
        return path

    def _ready(self) -> bool:
        try:
            return self.get("/readyz", timeout=2)[0] == 200
        except OSError:
            return False

    def get(self, path: str, timeout: float = 30) -> tuple[int, bytes]:
        conn = http.client.HTTPSConnection(ADDRESS, self.api_port, context=self.tls,
                                           timeout=timeout)
        try:
            conn.request("GET", path)
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()

    def request(self, method: str, path: str, body: bytes, content_type: str,
                timeout: float = 30) -> tuple[int, bytes]:
        """One request as the admin: its status and body."""
        conn = http.client.HTTPSConnection(ADDRESS, self.api_port, context=self.tls,
                                           timeout=timeout)
        try:
            conn.request(method, path, body=body, headers={"Content-Type": content_type})
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()

    def kubectl(self, *args: str, input: str | None = None, timeout: float = 120) -> str:
        cp = subprocess.run([os.path.join(self.bin, "kubectl"), "--kubeconfig", self.kubeconfig,
                             *args], capture_output=True, text=True, input=input, timeout=timeout)
        if cp.returncode != 0:
            raise BenchError(f"kubectl {' '.join(args)}: {cp.stderr.strip()}")
        return cp.stdout

    def api_requests(self) -> dict[tuple[str, str], float]:
        """apiserver_request_total summed by (verb, resource[/subresource])."""
        status, body = self.get("/metrics")
        if status != 200:
            raise BenchError(f"kube-apiserver /metrics: HTTP {status}")
        return request_totals(body.decode())

    def etcd_db_bytes(self) -> int:
        with socket.create_connection((ADDRESS, self.etcd_metrics_port), timeout=5) as s:
            s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        match = re.search(rb"^etcd_mvcc_db_total_size_in_bytes (\S+)$", data, re.M)
        if not match:
            raise BenchError("etcd /metrics: no etcd_mvcc_db_total_size_in_bytes")
        return int(float(match.group(1)))


def _http_ok(port: int, path: str) -> bool:
    try:
        with socket.create_connection((ADDRESS, port), timeout=1) as s:
            s.sendall(f"GET {path} HTTP/1.0\r\n\r\n".encode())
            return b" 200 " in s.recv(256)
    except OSError:
        return False


def fake_nodes(names: list[str]) -> str:
    """A List of Nodes for kwok to manage (its annotation), tainted as
    kwok's nodes are so that nothing would be scheduled there."""
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": [{
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "annotations": {KWOK_ANNOTATION: "fake"},
                     "labels": {"kubernetes.io/hostname": name, "type": "kwok"}},
        "spec": {"taints": [{"key": KWOK_ANNOTATION, "value": "fake", "effect": "NoSchedule"}]},
    } for name in names]})


class Watch:
    """A watch over HTTPS, on a thread of its own, of one object of a
    collection (by name) or of those with a label selector: every version
    of them, with the time it arrived (time.time()), reconnecting from the
    last resourceVersion when the API server ends the stream."""

    def __init__(self, plane: ControlPlane, collection: str, name: str = "", labels: str = ""):
        self.plane, self.collection, self.name = plane, collection, name
        self._select = ({"fieldSelector": f"metadata.name={name}"} if name else {}) | (
            {"labelSelector": labels} if labels else {})
        self.events: list[tuple[float, dict]] = []
        self.error: str | None = None
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._conn: http.client.HTTPSConnection | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        version = ""
        failures = 0
        while not self._stopped.is_set():
            query = urllib.parse.urlencode({
                "watch": "true", **self._select,
                "timeoutSeconds": "3600", **({"resourceVersion": version} if version else {})})
            try:
                conn = http.client.HTTPSConnection(ADDRESS, self.plane.api_port,
                                                   context=self.plane.tls, timeout=None)
                self._conn = conn
                conn.request("GET", f"{self.collection}?{query}")
                resp = conn.getresponse()
                if resp.status != 200:
                    raise OSError(f"HTTP {resp.status}: {resp.read()[:200]!r}")
                while line := resp.readline():
                    event = json.loads(line)
                    if event.get("type") == "ERROR":
                        version = ""  # too old: start again from now
                        break
                    obj = event["object"]
                    version = obj["metadata"]["resourceVersion"]
                    with self._lock:
                        self.events.append((time.time(), obj))
                    failures = 0
            except (OSError, ValueError, http.client.HTTPException) as e:
                if self._stopped.is_set():
                    return
                failures += 1
                if failures > 10:
                    self.error = f"watch of {self.collection} {self._select}: {e}"
                    return
                time.sleep(0.2)
            finally:
                self._conn = None

    def snapshot(self) -> list[tuple[float, dict]]:
        with self._lock:
            return list(self.events)

    def stop(self) -> None:
        self._stopped.set()
        conn = self._conn
        if conn is not None and conn.sock is not None:
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(5)


def proc_usage(pid: int) -> tuple[int, float]:
    """A live process's peak RSS (VmHWM, bytes) and CPU time (user and
    system, seconds) from /proc."""
    with open(f"/proc/{pid}/status") as f:
        hwm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    # utime and stime: the 14th and 15th fields, the 12th and 13th after the name.
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return hwm, cpu
