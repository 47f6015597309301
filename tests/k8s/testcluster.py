#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A Kubernetes cluster for the end-to-end tests, made of the real
components (tests/k8s/components.sh) on this machine: etcd, the API server,
the controller manager and the scheduler in the host's network namespace,
and one node or several, each with its own containerd (with Debian's runc)
and kubelet in a network namespace of its own: the simulated fabric's node
namespace when one is given, so that the node's scale-out ports are the
fabric's and host-network pods (rocenet's DaemonSet) manage them without
touching the host's own network. A veth pair joins each node to the host
(node 0: 10.254.0.1 on the host, the API server's address; 10.254.0.2 in
the node, the kubelet's; node i: 10.254.i.1 and .2). Pods get their
primary network from a bridge in their node (10.244.i.0/24), and the host
routes between the nodes' pods; Multus' thin plugin is the cluster's CNI
configuration, as a cluster runs it. Node 0 shares the host's mount
namespace; every other node has one of its own (clusternode.py).

    testcluster.py up [--bin DIR] [--node-netns NS] [--nodes N] [--addon dns|jobset|trainer]...
                                start it (tearing down a stale one first);
                                prints the admin kubeconfig's path
    testcluster.py down             stop it and leave nothing behind
    testcluster.py kubectl ARGS...  kubectl with the admin kubeconfig

What it changes on the host, and puts back on `down`: processes of its own
(found by pid, and containerd's shims by their sockets), /var/lib/kubelet and
/opt/cni/bin (it refuses to start when a kubelet's directory is already
there), the pods' network namespaces, kubelet's cgroups and the sysctls it
sets, mounts under those directories and the other nodes' mount
namespaces, the veth pairs, and in each node namespace the bridge and the
iptables chains the kubelet makes (with the namespace itself when it made
it). The running cluster's record is /run/rocenet-k8s/cluster.json.

The parts: controlplane.py (etcd, the API server, the controller manager,
the scheduler and the cluster's certificates), clusternode.py (the node's
namespace, containerd and the kubelet), addons.py (the cluster DNS and the
JobSet controller, when asked for), hostcleanup.py (finding and removing what a cluster left
on the host), clusterutil.py (what they share)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cluster_config as cfg  # noqa: E402
import clusternode  # noqa: E402
import controlplane  # noqa: E402
from addons import ADDONS  # noqa: E402
from clusternode import CNI_BIN, KUBELET_ROOT, OWN_NODE_NETNS, TEST_IMAGE  # noqa: E402,F401
from clusterutil import ClusterError, first_missing, wait_for  # noqa: E402
from hostcleanup import (  # noqa: E402
    keep_logs,
    kill_pod_processes,
    mounts_under,
    processes_mentioning,
    remove_cgroups,
    remove_chains,
    stop_others,
    stop_process,
)

STATE_DIR = "/run/rocenet-k8s"
RECORD = os.path.join(STATE_DIR, "cluster.json")
# The host forwards between the nodes' pods when there are several.
SYSCTLS = ("vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops", "net/ipv4/ip_forward")
MOUNT_NS_DIR = os.path.join(STATE_DIR, "mnt")


class Cluster:
    """A running cluster, from its record."""

    def __init__(self, record: dict):
        self.record = record
        self.procs: dict[str, subprocess.Popen] = {}
        self.work = record["work"]
        self.bin = record["bin"]
        self.kubeconfig = record["kubeconfig"]
        self.mount_ns_dir = MOUNT_NS_DIR
        if "nodes" not in record:
            # The record of an earlier release's cluster of one node, which
            # down() must still be able to take apart.
            record["nodes"] = [{
                "index": 0, "name": record.get("node", ""), "dir": record["work"],
                "netns": record.get("node_netns", OWN_NODE_NETNS),
                "created_netns": record.get("created_netns", False),
                "containerd_socket": record.get("containerd_socket", ""),
                "chains": record.get("chains", {}), "binds": {}}]

    @property
    def nodes(self) -> list[clusternode.Node]:
        return [clusternode.Node(self, n) for n in self.record["nodes"]]

    # ---- use -------------------------------------------------------------

    def kubectl(self, *args: str, check: bool = True, input: str | None = None,
                timeout: float = 120) -> subprocess.CompletedProcess:
        cp = subprocess.run([os.path.join(self.bin, "kubectl"), "--kubeconfig", self.kubeconfig,
                             *args], capture_output=True, text=True, input=input, timeout=timeout)
        if check and cp.returncode != 0:
            raise ClusterError(f"kubectl {' '.join(args)}: {cp.stderr.strip()}")
        return cp

    def ctr(self, *args: str) -> subprocess.CompletedProcess:
        """ctr against node 0's containerd."""
        return self.nodes[0].ctr(*args)

    def import_image(self, archive: str, nodes: list[clusternode.Node] | None = None) -> None:
        """Imports an image archive into every node's containerd (or those
        of `nodes`)."""
        for node in nodes if nodes is not None else self.nodes:
            cp = node.load_image(archive)
            if cp.returncode != 0:
                raise ClusterError(f"import {archive} on {node.name}: {cp.stderr.strip()}")

    @property
    def node(self) -> str:
        """Node 0's name (the only node's, in a cluster of one)."""
        return self.record["nodes"][0]["name"]

    def restart(self, name: str) -> None:
        """Stops component `name` (SIGTERM, as its service manager would) and
        starts it again as it was started."""
        stop_process(self.record["pids"][name])
        argv, env = self.record["argv"][name]
        self.spawn(name, argv, env)

    def keep_logs_in(self, directory: str) -> None:
        """Has down() copy the components' logs (etcd, kube-apiserver,
        kube-controller-manager, kube-scheduler, containerd, kubelet) to
        `directory` before it removes them, when something failed: the first
        directory asked for wins, the logs then reaching to the teardown."""
        if not self.record.get("keep_logs_in"):
            self.record["keep_logs_in"] = directory
            self.save()

    def track_host_paths(self, paths: list[str]) -> None:
        """Paths on the host that workloads may create (a DaemonSet's
        hostPath volumes): what of them is not there now is removed on down."""
        for path in paths:
            missing = first_missing(path)
            if missing and missing not in self.record["created_paths"]:
                self.record["created_paths"].append(missing)
        self.save()

    # ---- start -----------------------------------------------------------

    @classmethod
    def up(cls, bin_dir: str, node_netns: str | None = None,
           logs_on_failure: str | None = None,
           more_nodes: list[dict] | tuple = (), addons: tuple[str, ...] = ()) -> Cluster:
        """Starts a cluster whose node 0 is `node_netns` (a network
        namespace of /run/netns), or a namespace it makes, and one more node
        for each of `more_nodes` ({"netns": NS or None, "binds": {path on
        the node: directory on the host}, "multus": "thin" or "thick"}), with `addons` (tests/k8s/addons.py:
        "dns", the cluster DNS every kubelet gives its pods; "jobset";
        "trainer", after "jobset"). When
        it cannot, it takes down what it started, its components' logs
        copied to `logs_on_failure` if given."""
        if os.path.exists(RECORD):
            down()
        if os.path.exists(KUBELET_ROOT):
            raise ClusterError(f"{KUBELET_ROOT} exists: a kubelet runs or ran on this machine")
        os.makedirs(STATE_DIR, exist_ok=True)
        work = tempfile.mkdtemp(prefix="rocenet-k8s-")
        names = clusternode.node_names(1 + len(more_nodes))
        nodes = [clusternode.spec(0, names[0], node_netns, work=work)]
        nodes += [clusternode.spec(i, names[i], more.get("netns"), more.get("binds"), work,
                                   more.get("multus", "thin"), more.get("runtime", "containerd"))
                  for i, more in enumerate(more_nodes, start=1)]
        record = {
            "work": work, "bin": bin_dir, "nodes": nodes, "pids": {},
            "kubeconfig": os.path.join(work, "admin.kubeconfig"),
            "created_kubelet_root": True,
            "created_cni_dir": first_missing(CNI_BIN),
            # What the cluster's DaemonSets install there (rocenet's CNI
            # plugin) goes with it; what was there before stays.
            "cni_bin_before": sorted(os.listdir(CNI_BIN)) if os.path.isdir(CNI_BIN) else [],
            "installed": [],
            "created_paths": [],
            "netns_before": sorted(os.listdir("/run/netns")) if os.path.isdir("/run/netns") else [],
            "sysctls": {k: open(f"/proc/sys/{k}").read().strip() for k in SYSCTLS},
        }
        cluster = cls(record)
        cluster.save()
        try:
            os.makedirs(KUBELET_ROOT)
            for node in cluster.nodes:
                clusternode.join(node, len(nodes))
            if len(nodes) > 1:
                with open("/proc/sys/net/ipv4/ip_forward", "w") as f:
                    f.write("1")
            creds = controlplane.start(cluster)
            for addon in addons:
                ADDONS[addon](cluster, creds)
            logs = {}
            for node in cluster.nodes:
                clusternode.start_runtime(node, creds)
                logs[node.name] = clusternode.start_kubelet(node, creds, dns="dns" in addons)
            for node in cluster.nodes:
                wait_for(f"node {node.name} Ready", node.ready, 120, interval=1,
                         log=logs[node.name], proc=cluster.procs[node.program("kubelet")])
            # Pods are refused until the controller manager has made the
            # namespace's service account.
            wait_for("the default service account", lambda: cluster.kubectl(
                "get", "serviceaccount", "default", check=False).returncode == 0, 60, interval=0.5)
        except BaseException:
            if logs_on_failure:
                cluster.keep_logs_in(logs_on_failure)
            down()
            raise
        return cluster

    def save(self) -> None:
        with open(RECORD + ".tmp", "w") as f:
            json.dump(self.record, f, indent=1)
        os.replace(RECORD + ".tmp", RECORD)

    def spawn(self, name: str, argv: list[str], env: dict | None = None) -> str:
        """Starts `argv` as the cluster's program `name` (a node's enters
        it: Node.enter); returns its log's path."""
        self.record.setdefault("argv", {})[name] = [argv, env or {}]
        log = os.path.join(self.work, "logs", f"{name}.log")
        os.makedirs(os.path.dirname(log), exist_ok=True)
        with open(log, "ab") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True,
                                    env={**os.environ, **(env or {})})
        self.record["pids"][name] = proc.pid
        self.save()
        self.procs[name] = proc
        return log


def down() -> None:
    """Stops the cluster in the record and removes everything it left (the
    components' logs copied first where keep_logs_in said)."""
    if not os.path.exists(RECORD):
        return
    with open(RECORD) as f:
        record = json.load(f)
    cluster = Cluster(record)
    nodes = cluster.nodes
    pids = record.get("pids", {})
    kubelets = [n.program("kubelet") for n in nodes]
    # Nothing recreates a pod once the controllers are gone.
    if "kube-controller-manager" in pids:
        stop_process(pids["kube-controller-manager"])
    if "kube-apiserver" in pids and any(k in pids for k in kubelets):
        # Pods first, through the kubelets: their CNI DEL runs (Multus, then
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
                wait_for("the kubelets' pods gone", lambda: not listed(daemons), 60, interval=0.5)
            except ClusterError:
                pass
        try:
            wait_for("the containers gone",
                     lambda: not any(n.ctr("tasks", "ls", "-q").stdout.strip() for n in nodes),
                     20, interval=0.5)
        except ClusterError:
            pass
    for name in [*kubelets, "kube-scheduler"]:
        if name in pids:
            stop_process(pids[name])
    for node in nodes:
        if node.program("containerd") in pids:
            # Whatever is left, the hard way: tasks, then containerd and its shims.
            for cid in node.ctr("tasks", "ls", "-q").stdout.split():
                node.ctr("tasks", "kill", "-s", "KILL", cid)
            stop_process(pids[node.program("containerd")])
            for pid in processes_mentioning(node.containerd_socket):
                stop_process(pid, timeout=2)
        kill_pod_processes(parent=node.cgroup_parent)
    # The addons (addons.py), while the API server still answers them.
    stop_others(pids, {"kube-controller-manager", "kube-scheduler", "kube-apiserver", "etcd",
                       *kubelets, *(n.program("containerd") for n in nodes)})
    for name in ("kube-apiserver", "etcd"):
        if name in pids:
            stop_process(pids[name])
    # The other nodes' mounts go with their mount namespaces.
    for node in nodes:
        if node.private and os.path.exists(node.mount_ns):
            subprocess.run(["umount", "-l", node.mount_ns], capture_output=True)
    for point in mounts_under((record["work"], KUBELET_ROOT, "/run/netns", MOUNT_NS_DIR)):
        if point.startswith("/run/netns/") and os.path.basename(point) in record["netns_before"]:
            continue
        subprocess.run(["umount", "-l", point], capture_output=True)
    if os.path.isdir("/run/netns"):
        for name in os.listdir("/run/netns"):
            if name.startswith("cni-") and name not in record["netns_before"]:
                os.remove(os.path.join("/run/netns", name))
    for node in nodes:
        subprocess.run(["ip", "link", "del", node.links[0]], capture_output=True)
        if node.record.get("created_netns"):
            subprocess.run(["ip", "netns", "delete", node.netns], capture_output=True)
        elif os.path.exists(f"/run/netns/{node.netns}"):
            subprocess.run(["ip", "-n", node.netns, "link", "del", cfg.BRIDGE], capture_output=True)
            if len(nodes) > 1:
                for cidr in (clusternode.NODES_CIDR, clusternode.PODS_CIDR):
                    subprocess.run(["ip", "-n", node.netns, "route", "del", cidr],
                                   capture_output=True)
            remove_chains(node.netns, node.record.get("chains", {}))
        for cgroup in remove_cgroups(parent=node.cgroup_parent):
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
        keep_logs(os.path.join(record["work"], "logs"), record["keep_logs_in"])
    shutil.rmtree(record["work"], ignore_errors=True)
    shutil.rmtree(MOUNT_NS_DIR, ignore_errors=True)
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
    up_cmd.add_argument("--node-netns", help="node 0's network namespace (default: one of its "
                        "own, " + OWN_NODE_NETNS + ")")
    up_cmd.add_argument("--nodes", type=int, default=1,
                        help="how many nodes (the others in namespaces of their own)")
    up_cmd.add_argument("--addon", action="append", choices=sorted(ADDONS), default=[],
                        help="an addon to run (tests/k8s/addons.py); again for another")
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
            if args.nodes < 1:
                raise ClusterError(f"--nodes {args.nodes}: a cluster has at least one node")
            more = [{"netns": None}] * (args.nodes - 1)
            print(Cluster.up(os.path.abspath(bin_dir), args.node_netns, more_nodes=more,
                             addons=tuple(args.addon)).kubeconfig)
        else:
            down()
    except ClusterError as e:
        print(f"testcluster.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
