#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A single-node Kubernetes cluster for the end-to-end tests, made of the
real components (tests/k8s/components.sh) on this machine: etcd, the API
server, the controller manager and the scheduler in the host's network
namespace, and the node, containerd (with Debian's runc) and the kubelet,
in a network namespace of its own: the simulated fabric's node namespace
when one is given, so that the node's scale-out ports are the fabric's and
host-network pods (rocenet's DaemonSet) manage them without touching the
host's own network. A veth pair joins the two (10.254.0.1 on the host, the
API server's address; 10.254.0.2 in the node, the kubelet's). Pods get
their primary network from a bridge in the node; Multus' thin plugin is the
cluster's CNI configuration, as a cluster runs it.

    testcluster.py up [--bin DIR] [--node-netns NS]
                                start it (tearing down a stale one first);
                                prints the admin kubeconfig's path
    testcluster.py down             stop it and leave nothing behind
    testcluster.py kubectl ARGS...  kubectl with the admin kubeconfig

What it changes on the host, and puts back on `down`: processes of its own
(found by pid, and containerd's shims by its socket), /var/lib/kubelet and
/opt/cni/bin (it refuses to start when a kubelet's directory is already
there), the pods' network namespaces, kubelet's cgroups and the sysctls it
sets, mounts under those directories, the veth pair, and in the node
namespace the bridge and the iptables chains the kubelet makes (with the
namespace itself when it made it). The running cluster's record is
/run/rocenet-k8s/cluster.json."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cluster_config as cfg  # noqa: E402
import images  # noqa: E402
from pki import Pki  # noqa: E402

STATE_DIR = "/run/rocenet-k8s"
RECORD = os.path.join(STATE_DIR, "cluster.json")
KUBELET_ROOT = "/var/lib/kubelet"
CNI_BIN = "/opt/cni/bin"
TEST_IMAGE = "rocenet.test/busybox:1"
SYSCTLS = ("vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops")
OWN_NODE_NETNS = "rocenet-k8s-node"
HOST_LINK, NODE_LINK = "rk8s-host", "rk8s-node"
HOST_ADDRESS, NODE_ADDRESS = "10.254.0.1", "10.254.0.2"
CGROUP_ROOT = "/sys/fs/cgroup"


class ClusterError(RuntimeError):
    pass


def _first_missing(path: str) -> str | None:
    """The topmost directory of `path` that does not exist yet, if any."""
    missing = None
    while not os.path.exists(path):
        missing, path = path, os.path.dirname(path)
    return missing


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what: str, pred, timeout: float, interval: float = 0.2, log: str | None = None,
             proc: subprocess.Popen | None = None):
    """Polls `pred` until it is true; fails after `timeout`, or at once when
    `proc` (the program that should make it true) has exited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            timeout = 0
            what = f"{what}: exited with {proc.returncode}"
            break
        time.sleep(interval)
    tail = ""
    if log and os.path.exists(log):
        with open(log, errors="replace") as f:
            tail = "\n" + "".join(f.readlines()[-30:])
    raise ClusterError(f"{what}{f': not within {timeout:.0f} s' if timeout else ''}{tail}")


class Cluster:
    """A running cluster, from its record."""

    def __init__(self, record: dict):
        self.record = record
        self.procs: dict[str, subprocess.Popen] = {}
        self.work = record["work"]
        self.bin = record["bin"]
        self.kubeconfig = record["kubeconfig"]

    # ---- use -------------------------------------------------------------

    def kubectl(self, *args: str, check: bool = True, input: str | None = None,
                timeout: float = 120) -> subprocess.CompletedProcess:
        cp = subprocess.run([os.path.join(self.bin, "kubectl"), "--kubeconfig", self.kubeconfig,
                             *args], capture_output=True, text=True, input=input, timeout=timeout)
        if check and cp.returncode != 0:
            raise ClusterError(f"kubectl {' '.join(args)}: {cp.stderr.strip()}")
        return cp

    def ctr(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([os.path.join(self.bin, "ctr"), "--address",
                               self.record["containerd_socket"], "-n", "k8s.io", *args],
                              capture_output=True, text=True)

    def import_image(self, archive: str) -> None:
        cp = self.ctr("images", "import", "--no-unpack=false", archive)
        if cp.returncode != 0:
            raise ClusterError(f"import {archive}: {cp.stderr.strip()}")

    @property
    def node(self) -> str:
        return self.record["node"]

    def restart(self, name: str) -> None:
        """Stops component `name` (SIGTERM, as its service manager would) and
        starts it again as it was started."""
        _kill(self.record["pids"][name])
        argv, env = self.record["argv"][name]
        self._spawn(name, argv, env)

    def keep_logs_in(self, directory: str) -> None:
        """Has down() copy the components' logs (etcd, kube-apiserver,
        kube-controller-manager, kube-scheduler, containerd, kubelet) to
        `directory` before it removes them, when something failed: the first
        directory asked for wins, the logs then reaching to the teardown."""
        if not self.record.get("keep_logs_in"):
            self.record["keep_logs_in"] = directory
            self._save()

    def track_host_paths(self, paths: list[str]) -> None:
        """Paths on the host that workloads may create (a DaemonSet's
        hostPath volumes): what of them is not there now is removed on down."""
        for path in paths:
            missing = _first_missing(path)
            if missing and missing not in self.record["created_paths"]:
                self.record["created_paths"].append(missing)
        self._save()

    # ---- start -----------------------------------------------------------

    @classmethod
    def up(cls, bin_dir: str, node_netns: str | None = None,
           logs_on_failure: str | None = None) -> Cluster:
        """Starts a cluster whose node is `node_netns` (a network namespace
        of /run/netns), or a namespace it makes. When it cannot, it takes
        down what it started, its components' logs copied to
        `logs_on_failure` if given."""
        if os.path.exists(RECORD):
            down()
        if os.path.exists(KUBELET_ROOT):
            raise ClusterError(f"{KUBELET_ROOT} exists: a kubelet runs or ran on this machine")
        os.makedirs(STATE_DIR, exist_ok=True)
        work = tempfile.mkdtemp(prefix="rocenet-k8s-")
        node = socket.gethostname().lower()
        record = {
            "work": work, "bin": bin_dir, "node": node, "pids": {},
            "node_netns": node_netns or OWN_NODE_NETNS, "created_netns": node_netns is None,
            "kubeconfig": os.path.join(work, "admin.kubeconfig"),
            "containerd_socket": os.path.join(work, "containerd", "containerd.sock"),
            "created_kubelet_root": True,
            "created_cni_dir": _first_missing(CNI_BIN),
            # What the cluster's DaemonSets install there (rocenet's CNI
            # plugin) goes with it; what was there before stays.
            "cni_bin_before": sorted(os.listdir(CNI_BIN)) if os.path.isdir(CNI_BIN) else [],
            "installed": [],
            "created_paths": [],
            "netns_before": sorted(os.listdir("/run/netns")) if os.path.isdir("/run/netns") else [],
            "sysctls": {k: open(f"/proc/sys/{k}").read().strip() for k in SYSCTLS},
        }
        cluster = cls(record)
        cluster._save()
        try:
            cluster._join_node()
            cluster._start()
        except BaseException:
            if logs_on_failure:
                cluster.keep_logs_in(logs_on_failure)
            down()
            raise
        return cluster

    def _save(self) -> None:
        with open(RECORD + ".tmp", "w") as f:
            json.dump(self.record, f, indent=1)
        os.replace(RECORD + ".tmp", RECORD)

    def _join_node(self) -> None:
        """The node's namespace, and the veth pair between it and the host."""
        ns = self.record["node_netns"]
        if self.record["created_netns"]:
            _run(["ip", "netns", "add", ns])
            _run(["ip", "-n", ns, "link", "set", "lo", "up"])
        self.record["chains"] = _chains(ns)
        self._save()
        _run(["ip", "link", "add", HOST_LINK, "type", "veth", "peer", "name", NODE_LINK,
              "netns", ns])
        _run(["ip", "address", "add", f"{HOST_ADDRESS}/30", "dev", HOST_LINK])
        _run(["ip", "link", "set", HOST_LINK, "up"])
        _run(["ip", "-n", ns, "address", "add", f"{NODE_ADDRESS}/30", "dev", NODE_LINK])
        _run(["ip", "-n", ns, "link", "set", NODE_LINK, "up"])
        # Pods on the node's bridge reach the API server (HOST_ADDRESS)
        # through the node, which forwards for its bridge: the host routes
        # their replies back. Gone with the veth pair.
        _run(["ip", "route", "add", cfg.POD_CIDR, "via", NODE_ADDRESS, "dev", HOST_LINK])

    def _spawn(self, name: str, argv: list[str], env: dict | None = None,
               in_node: bool = False) -> str:
        """Starts `argv`, in the node's network namespace when `in_node`
        (and in the host's mount namespace either way: the kubelet's volume
        mounts and containerd's must be seen by each other)."""
        if in_node:
            argv = ["nsenter", f"--net=/run/netns/{self.record['node_netns']}", "--", *argv]
        self.record.setdefault("argv", {})[name] = [argv, env or {}]
        log = os.path.join(self.work, "logs", f"{name}.log")
        os.makedirs(os.path.dirname(log), exist_ok=True)
        with open(log, "ab") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True,
                                    env={**os.environ, **(env or {})})
        self.record["pids"][name] = proc.pid
        self._save()
        self.procs[name] = proc
        return log

    def _start(self) -> None:
        work, b = self.work, self.bin
        pki = Pki(os.path.join(work, "pki"))
        api_port, etcd_port, etcd_peer, kubelet_port = (free_port() for _ in range(4))
        server = f"https://{HOST_ADDRESS}:{api_port}"
        self.record["server"] = server

        def client(name: str, subject: str) -> str:
            pair = pki.issue(name, subject)
            path = os.path.join(work, f"{name}.kubeconfig")
            with open(path, "w") as f:
                f.write(cfg.kubeconfig(server, pki.ca.cert, pair.cert, pair.key, name))
            return path

        client("admin", "/O=system:masters/CN=e2e-admin")
        apiserver = pki.issue("apiserver", "/CN=kube-apiserver", server=True,
                              ips=(HOST_ADDRESS, "127.0.0.1", cfg.SERVICE_IP),
                              dns=("localhost", "kubernetes", "kubernetes.default",
                                   "kubernetes.default.svc",
                                   "kubernetes.default.svc.cluster.local"))
        to_kubelet = pki.issue("apiserver-kubelet-client",
                               "/O=system:masters/CN=kube-apiserver-kubelet-client")

        log = self._spawn("etcd", [
            os.path.join(b, "etcd"), "--data-dir", os.path.join(work, "etcd"),
            "--listen-client-urls", f"http://127.0.0.1:{etcd_port}",
            "--advertise-client-urls", f"http://127.0.0.1:{etcd_port}",
            "--listen-peer-urls", f"http://127.0.0.1:{etcd_peer}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{etcd_peer}",
            "--initial-cluster", f"default=http://127.0.0.1:{etcd_peer}",
            "--listen-metrics-urls", f"http://127.0.0.1:{free_port()}",
            "--quota-backend-bytes", str(2 << 30)])
        wait_for("etcd serving", lambda: _http_ok("127.0.0.1", etcd_port, "/health"), 30,
                 log=log, proc=self.procs["etcd"])

        log = self._spawn("kube-apiserver", [
            os.path.join(b, "kube-apiserver"),
            "--etcd-servers", f"http://127.0.0.1:{etcd_port}",
            "--bind-address", HOST_ADDRESS, "--advertise-address", HOST_ADDRESS,
            "--secure-port", str(api_port),
            "--tls-cert-file", apiserver.cert, "--tls-private-key-file", apiserver.key,
            "--client-ca-file", pki.ca.cert,
            "--kubelet-client-certificate", to_kubelet.cert,
            "--kubelet-client-key", to_kubelet.key,
            "--kubelet-certificate-authority", pki.ca.cert,
            "--kubelet-preferred-address-types", "InternalIP",
            "--service-account-key-file", pki.sa_pub,
            "--service-account-signing-key-file", pki.sa_key,
            "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
            "--service-cluster-ip-range", cfg.SERVICE_CIDR,
            "--authorization-mode", "Node,RBAC", "--allow-privileged=true",
            "--profiling=false"])
        wait_for("kube-apiserver ready",
                 lambda: self.kubectl("get", "--raw", "/readyz", check=False).returncode == 0,
                 90, interval=0.5, log=log, proc=self.procs["kube-apiserver"])

        self._spawn("kube-controller-manager", [
            os.path.join(b, "kube-controller-manager"),
            "--kubeconfig", client("controller-manager", "/CN=system:kube-controller-manager"),
            "--service-account-private-key-file", pki.sa_key,
            "--root-ca-file", pki.ca.cert, "--use-service-account-credentials=true",
            "--leader-elect=false", "--bind-address", "127.0.0.1",
            "--secure-port", str(free_port()), "--controllers", "*"])
        self._spawn("kube-scheduler", [
            os.path.join(b, "kube-scheduler"),
            "--kubeconfig", client("scheduler", "/CN=system:kube-scheduler"),
            "--leader-elect=false", "--bind-address", "127.0.0.1",
            "--secure-port", str(free_port())])

        self._start_containerd(pki)
        self._start_kubelet(pki, kubelet_port, client)

    def _start_containerd(self, pki: Pki) -> None:
        work, b = self.work, self.bin
        conf_dir = os.path.join(work, "cni", "net.d")
        os.makedirs(conf_dir)
        os.makedirs(CNI_BIN, exist_ok=True)
        multus = os.path.join(CNI_BIN, "multus")
        shutil.copy(os.path.join(b, "multus"), multus)
        self.record["installed"].append(multus)
        self._save()
        multus_kubeconfig = os.path.join(work, "multus.kubeconfig")
        shutil.copy(self.kubeconfig, multus_kubeconfig)
        with open(os.path.join(conf_dir, "00-multus.conf"), "w") as f:
            f.write(cfg.multus_conf(multus_kubeconfig, os.path.join(work, "multus"),
                                    os.path.join(work, "cni", "ipam")))
        config = os.path.join(work, "containerd.toml")
        with open(config, "w") as f:
            f.write(cfg.containerd_config(os.path.join(work, "containerd", "root"),
                                          os.path.join(work, "containerd", "state"),
                                          self.record["containerd_socket"], conf_dir,
                                          [CNI_BIN, "/usr/lib/cni"]))
        # The shim is looked up on PATH.
        path = f"{b}:{os.environ.get('PATH', '/usr/sbin:/usr/bin:/sbin:/bin')}"
        log = self._spawn("containerd", [os.path.join(b, "containerd"), "--config", config],
                          env={"PATH": path}, in_node=True)
        wait_for("containerd serving", lambda: self.ctr("version").returncode == 0, 30,
                 log=log, proc=self.procs["containerd"])
        for image in (images.pause_image(cfg.SANDBOX_IMAGE, work),
                      images.busybox_image(TEST_IMAGE)):
            archive = os.path.join(work, image.name.replace("/", "_") + ".tar")
            images.write_archive(image, archive)
            self.import_image(archive)

    def _start_kubelet(self, pki: Pki, port: int, client) -> None:
        work, b = self.work, self.bin
        node = self.record["node"]
        address = NODE_ADDRESS
        os.makedirs(KUBELET_ROOT)
        serving = pki.issue("kubelet-serving", f"/CN={node}", server=True,
                            ips=(address, "127.0.0.1"), dns=(node, "localhost"))
        config = os.path.join(work, "kubelet.yaml")
        with open(config, "w") as f:
            f.write(cfg.kubelet_config(pki.ca.cert, serving.cert, serving.key,
                                       self.record["containerd_socket"], address, port))
        kubeconfig = client("kubelet", f"/O=system:nodes/CN=system:node:{node}")
        log = self._spawn("kubelet", [
            os.path.join(b, "kubelet"), "--config", config, "--kubeconfig", kubeconfig,
            "--root-dir", KUBELET_ROOT, "--hostname-override", node, "--node-ip", address,
            "--v", "2"], in_node=True)
        self.record["kubelet_log"] = log
        self._save()
        wait_for(f"node {node} Ready", lambda: self._node_ready(), 120, interval=1, log=log,
                 proc=self.procs["kubelet"])
        # Pods are refused until the controller manager has made the
        # namespace's service account.
        wait_for("the default service account", lambda: self.kubectl(
            "get", "serviceaccount", "default", check=False).returncode == 0, 60, interval=0.5)

    def _node_ready(self) -> bool:
        cp = self.kubectl("get", "node", self.node, "-o", "json", check=False)
        if cp.returncode != 0:
            return False
        conditions = json.loads(cp.stdout).get("status", {}).get("conditions", [])
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def _run(argv: list[str]) -> None:
    cp = subprocess.run(argv, capture_output=True, text=True)
    if cp.returncode != 0:
        raise ClusterError(f"{' '.join(argv)}: {cp.stderr.strip()}")


def _http_ok(host: str, port: int, path: str) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1) as s:
            s.sendall(f"GET {path} HTTP/1.0\r\n\r\n".encode())
            return b" 200 " in s.recv(256)
    except OSError:
        return False


# ---- stop -------------------------------------------------------------------

def _kill(pid: int, timeout: float = 10) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        _reap(pid)
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _reap(pid)


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def _processes_mentioning(text: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if text.encode() in f.read():
                    pids.append(int(entry))
        except OSError:
            continue
    return pids


def _mounts_under(prefixes: tuple[str, ...]) -> list[str]:
    points = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            point = line.split()[4].replace("\\040", " ")
            if any(point == p or point.startswith(p + "/") for p in prefixes):
                points.append(point)
    return sorted(set(points), key=len, reverse=True)


IPTABLES = ("iptables", "ip6tables")
IPTABLES_TABLES = ("filter", "nat", "mangle")


def _in(netns: str) -> list[str]:
    return ["ip", "netns", "exec", netns]


def _chains(netns: str) -> dict[str, list[str]]:
    """The chains of every table in `netns`, by "tool table"."""
    out = {}
    for tool in IPTABLES:
        for table in IPTABLES_TABLES:
            cp = subprocess.run([*_in(netns), tool, "-t", table, "-S"], capture_output=True,
                                text=True)
            out[f"{tool} {table}"] = [line.split()[1] for line in cp.stdout.splitlines()
                                     if line.startswith("-N ")]
    return out


def _remove_chains(netns: str, before: dict[str, list[str]]) -> None:
    """Removes the chains the kubelet made in `netns` (KUBE-FIREWALL, the
    canaries...) and the rules that jump to them, leaving every other rule
    alone."""
    for key, chains in _chains(netns).items():
        tool, table = key.split()
        new = [c for c in chains if c not in before.get(key, [])]
        if not new:
            continue
        do = [*_in(netns), tool, "-t", table]
        cp = subprocess.run([*do, "-S"], capture_output=True, text=True)
        for line in cp.stdout.splitlines():
            words = line.split()
            if words[0] == "-A" and "-j" in words and words[words.index("-j") + 1] in new:
                subprocess.run([*do, "-D", *words[1:]], capture_output=True)
        for chain in new:
            subprocess.run([*do, "-F", chain], capture_output=True)
        for chain in new:
            subprocess.run([*do, "-X", chain], capture_output=True)


def pod_cgroups(root: str = CGROUP_ROOT) -> list[str]:
    """The kubepods cgroup of every hierarchy under `root` that has one.
    The kubelet (cgroupfs driver) makes `kubepods` at the top of each
    hierarchy its containers join: on cgroup v2 (unified: `root` is the one
    hierarchy and holds cgroup.controllers) that is `root`/kubepods; on v1
    each controller's hierarchy has its own, and so has the v2 hierarchy
    mounted beside them in the hybrid layout (`root`/unified). A hierarchy
    mounted under two names (v1's cpu and cpuacct link to cpu,cpuacct) is
    listed once."""
    if os.path.exists(os.path.join(root, "cgroup.controllers")):
        candidates = [os.path.join(root, "kubepods")]
    else:
        candidates = [os.path.join(root, h, "kubepods") for h in sorted(os.listdir(root))]
    tops = []
    for top in candidates:
        real = os.path.realpath(top)
        if os.path.isdir(real) and real not in tops:
            tops.append(real)
    return tops


def _kill_pod_processes(root: str = CGROUP_ROOT, timeout: float = 10, kill=os.kill) -> None:
    """Kills what still runs in the pods' cgroups (kubepods, made by this
    cluster's kubelet alone: up refuses a machine where another ran): after
    a run killed midway, or a shim killed before its container, a
    container's processes outlive containerd and would hold on to the
    node's sockets and namespace. On cgroup v2 the kernel kills the whole
    subtree at once (cgroup.kill, Linux 5.14), what forks meanwhile
    included; every process listed in a cgroup.procs is killed too, which is
    all that v1 (and an older kernel) offers."""
    pids = set()
    for top in pod_cgroups(root):
        whole = os.path.join(top, "cgroup.kill")
        if os.path.exists(whole):
            try:
                with open(whole, "w") as f:
                    f.write("1")
            except OSError:
                pass
        for path, _, files in os.walk(top):
            if "cgroup.procs" in files:
                try:
                    with open(os.path.join(path, "cgroup.procs")) as f:
                        pids.update(int(line) for line in f if line.strip())
                except OSError:
                    pass
    for pid in pids:
        try:
            kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") for p in pids):
        time.sleep(0.1)


def remove_cgroups(root: str = CGROUP_ROOT, timeout: float = 10, kill=os.kill,
                   rmdir=os.rmdir) -> list[str]:
    """Kills the pods' processes and removes their cgroups, children before
    their parents (a cgroup with a child or a process in it cannot be
    removed, on v1 and v2 alike; its interface files go with it). Returns
    the cgroups that would not go, each with the reason."""
    _kill_pod_processes(root, timeout, kill)
    left = []
    for top in pod_cgroups(root):
        for path, _, _ in os.walk(top, topdown=False):
            try:
                rmdir(path)
            except OSError as e:
                left.append(f"{path}: {e.strerror}")
    return left


def _keep_logs(logs: str, to: str) -> None:
    """Copies the components' logs to `to`; what cannot be copied is said in
    `to`/NOT-KEPT.txt, and nothing here raises: the logs are kept because
    something failed already."""
    try:
        os.makedirs(to, exist_ok=True)
        for name in sorted(os.listdir(logs)):
            shutil.copy(os.path.join(logs, name), os.path.join(to, name))
    except OSError as e:
        try:
            with open(os.path.join(to, "NOT-KEPT.txt"), "a") as f:
                f.write(f"the components' logs from {logs}: {e}\n")
        except OSError:
            pass


def down() -> None:
    """Stops the cluster in the record and removes everything it left (the
    components' logs copied first where keep_logs_in said)."""
    if not os.path.exists(RECORD):
        return
    with open(RECORD) as f:
        record = json.load(f)
    cluster = Cluster(record)
    pids = record.get("pids", {})
    # Nothing recreates a pod once the controllers are gone.
    if "kube-controller-manager" in pids:
        _kill(pids["kube-controller-manager"])
    if "kube-apiserver" in pids and "kubelet" in pids:
        # Pods first, through the kubelet: their CNI DEL runs (Multus, then
        # the delegates) and their ports go home. The workloads before the
        # DaemonSets' pods, whose node daemons their CNI DEL may need.
        def listed(daemons: bool) -> list[str]:
            cp = cluster.kubectl("get", "pods", "--all-namespaces", "-o", "json",
                                 check=False, timeout=10)
            if cp.returncode != 0:
                return ["?"]
            return [f"{p['metadata']['namespace']}/{p['metadata']['name']}"
                    for p in json.loads(cp.stdout)["items"]
                    if daemons or not any(o.get("kind") == "DaemonSet"
                                          for o in p["metadata"].get("ownerReferences", []))]
        for daemons in (False, True):
            for pod in listed(daemons):
                namespace, name = pod.split("/", 1) if "/" in pod else ("", "")
                if name:
                    cluster.kubectl("-n", namespace, "delete", "pod", name, "--grace-period=1",
                                    "--wait=false", check=False, timeout=30)
            try:
                wait_for("the kubelet's pods gone", lambda: not listed(daemons), 60, interval=0.5)
            except ClusterError:
                pass
        try:
            wait_for("the containers gone",
                     lambda: not cluster.ctr("tasks", "ls", "-q").stdout.strip(), 20, interval=0.5)
        except ClusterError:
            pass
    for name in ("kubelet", "kube-scheduler"):
        if name in pids:
            _kill(pids[name])
    if "containerd" in pids:
        # Whatever is left, the hard way: tasks, then containerd and its shims.
        for cid in cluster.ctr("tasks", "ls", "-q").stdout.split():
            cluster.ctr("tasks", "kill", "-s", "KILL", cid)
        _kill(pids["containerd"])
        for pid in _processes_mentioning(record["containerd_socket"]):
            _kill(pid, timeout=2)
    _kill_pod_processes()
    for name in ("kube-apiserver", "etcd"):
        if name in pids:
            _kill(pids[name])
    for point in _mounts_under((record["work"], KUBELET_ROOT, "/run/netns")):
        if point.startswith("/run/netns/") and os.path.basename(point) in record["netns_before"]:
            continue
        subprocess.run(["umount", "-l", point], capture_output=True)
    if os.path.isdir("/run/netns"):
        for name in os.listdir("/run/netns"):
            if name.startswith("cni-") and name not in record["netns_before"]:
                os.remove(os.path.join("/run/netns", name))
    subprocess.run(["ip", "link", "del", HOST_LINK], capture_output=True)
    netns = record.get("node_netns")
    if netns and record.get("created_netns"):
        subprocess.run(["ip", "netns", "delete", netns], capture_output=True)
    elif netns and os.path.exists(f"/run/netns/{netns}"):
        subprocess.run(["ip", "-n", netns, "link", "del", cfg.BRIDGE], capture_output=True)
        _remove_chains(netns, record.get("chains", {}))
    for cgroup in remove_cgroups():
        print(f"testcluster.py: cgroup left behind: {cgroup}", file=sys.stderr)
    for key, value in record.get("sysctls", {}).items():
        with open(f"/proc/sys/{key}", "w") as f:
            f.write(value)
    for path in record.get("installed", []):
        if os.path.lexists(path):
            os.remove(path)
    if os.path.isdir(CNI_BIN):
        for name in os.listdir(CNI_BIN):
            if name not in record.get("cni_bin_before", []):
                os.remove(os.path.join(CNI_BIN, name))
    created = record.get("created_cni_dir")
    if created:
        # Only if nothing else was put there meanwhile.
        for _, _, files in os.walk(created):
            if files:
                break
        else:
            shutil.rmtree(created, ignore_errors=True)
    if record.get("created_kubelet_root"):
        shutil.rmtree(KUBELET_ROOT, ignore_errors=True)
    for path in record.get("created_paths", []):
        shutil.rmtree(path, ignore_errors=True)
    if record.get("keep_logs_in"):
        _keep_logs(os.path.join(record["work"], "logs"), record["keep_logs_in"])
    shutil.rmtree(record["work"], ignore_errors=True)
    os.remove(RECORD)
    if not os.listdir(STATE_DIR):
        os.rmdir(STATE_DIR)


def current() -> Cluster:
    if not os.path.exists(RECORD):
        raise ClusterError("no cluster is running (testcluster.py up)")
    with open(RECORD) as f:
        return Cluster(json.load(f))


def main() -> int:
    if sys.argv[1:2] == ["kubectl"]:
        # Everything after it is kubectl's, options included.
        try:
            cp = current().kubectl(*sys.argv[2:], check=False)
        except ClusterError as e:
            print(f"testcluster.py: {e}", file=sys.stderr)
            return 1
        sys.stdout.write(cp.stdout)
        sys.stderr.write(cp.stderr)
        return cp.returncode
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    up_cmd = sub.add_parser("up")
    up_cmd.add_argument("--bin", help="the components' programs (default: build or take them "
                        "from the cache with components.sh)")
    up_cmd.add_argument("--node-netns", help="the node's network namespace (default: one of its "
                        "own, " + OWN_NODE_NETNS + ")")
    sub.add_parser("down")
    k = sub.add_parser("kubectl")
    k.add_argument("args", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    try:
        if args.command == "up":
            bin_dir = args.bin
            if bin_dir is None:
                bin_dir = os.path.join(STATE_DIR, "bin")
                subprocess.run(["bash", os.path.join(HERE, "components.sh"), bin_dir], check=True)
            print(Cluster.up(os.path.abspath(bin_dir), args.node_netns).kubeconfig)
        else:
            down()
    except ClusterError as e:
        print(f"testcluster.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
