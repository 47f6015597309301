# SPDX-License-Identifier: Apache-2.0
"""A node of the test cluster: a network namespace (the simulated fabric's
node namespace, or one of its own) joined to the host by a veth pair (the
host's end 10.254.<i>.1, the node's 10.254.<i>.2: node 0's host end is
API_ADDRESS), and in it containerd (Debian's runc; Multus' thin plugin as
the CNI configuration, delegating to a bridge for the pods' primary
network, 10.244.<i>.0/24) and the kubelet.

Node 0 runs in the host's mount namespace: its kubelet's directory,
rocenet's host paths and the CNI directory are the host's own, which the
single-node tests read. Every other node, as kind makes nodes out of
containers, has a mount namespace of its own (kept by a bind mount of
/proc/<pid>/ns/mnt under the cluster's state directory) in which a
directory of the node's own is mounted over each path a node keeps to
itself (PRIVATE_PATHS, and what the caller binds, a fabric's sysfs tree);
its kubelet puts its pods' cgroups under a cgroup of its own. containerd
and the kubelet of a node share its mount namespace: the kubelet's volume
mounts and containerd's must be seen by each other."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess

import cluster_config as cfg
import images
from clusterutil import first_missing, free_port, run, wait_for
from controlplane import API_ADDRESS, Credentials
from hostcleanup import CGROUP_ROOT, chains_of, hierarchies

OWN_NODE_NETNS = "rocenet-k8s-node"
HOST_LINK, NODE_LINK = "rk8s-host", "rk8s-node"
NODE_ADDRESS = "10.254.0.2"
KUBELET_ROOT = "/var/lib/kubelet"
CNI_BIN = "/opt/cni/bin"
# Where a node's runtime (and Multus' daemon) look for CNI plugins: the
# node's own, then Debian's.
CNI_PATH = (CNI_BIN, "/usr/lib/cni")
TEST_IMAGE = "rocenet.test/busybox:1"
# Where a pod finds its service account's token and CA, which Multus'
# daemon reads as in its pod.
SERVICE_ACCOUNT_DIR = "/run/secrets/kubernetes.io/serviceaccount"
# The cluster's addresses: each node's veth /30 and pods' /24 in these.
NODES_CIDR = "10.254.0.0/16"
PODS_CIDR = "10.244.0.0/16"
# What a node other than node 0 keeps to itself: the kubelet's directory,
# the CNI plugins and their state, and every host path rocenet's node pods
# write (their DaemonSets' hostPath volumes, /run/netns aside: the pods'
# network namespaces are the kernel's, and each node's containerd makes its
# own there), and the pods' logs: a kubelet's garbage collection removes
# every pod log directory of a pod it does not run, so shared logs would
# vanish under the other nodes' pods.
PRIVATE_PATHS = (KUBELET_ROOT, CNI_BIN, "/var/lib/cni", "/run/rocenet", "/var/lib/rocenet",
                 "/etc/habanalabs", "/etc/kubernetes/node-feature-discovery",
                 "/run/k8s.cni.cncf.io", "/run/cdi", "/etc/NetworkManager/conf.d",
                 "/var/log/pods", "/var/log/containers")


def spec(index: int, name: str, netns: str | None, binds: dict[str, str] | None = None,
         work: str = "", multus: str = "thin", runtime: str = "containerd") -> dict:
    """A node's part of the cluster's record. Node 0's directory is the
    cluster's own (its files where they always were). `multus` is how the
    node runs Multus: "thin" (the plugin alone, as the cluster always
    has) or "thick" (multus-daemon executing the delegates, as OpenShift
    runs it; a node other than node 0, where its service account's token
    is at the path a pod's would be)."""
    directory = work if index == 0 else os.path.join(work, "nodes", name)
    own = OWN_NODE_NETNS if index == 0 else f"{OWN_NODE_NETNS}-{index}"
    binds = dict(binds or {})
    if multus not in ("thin", "thick") or (multus == "thick" and index == 0):
        raise ValueError(f"node {name}: Multus {multus!r}: thin, or thick on a node other than node 0")
    if multus == "thick":
        binds[SERVICE_ACCOUNT_DIR] = os.path.join(directory, "serviceaccount")
    if runtime not in ("containerd", "crio") or (runtime == "crio" and index == 0):
        raise ValueError(f"node {name}: runtime {runtime!r}: containerd, or crio on a node other than node 0")
    return {
        "index": index, "name": name, "netns": netns or own,
        "created_netns": netns is None, "dir": directory,
        "containerd_socket": os.path.join(directory, "containerd", "containerd.sock"),
        "crio_socket": os.path.join(directory, "crio", "crio.sock"),
        "binds": binds, "multus": multus, "runtime": runtime,
    }


class Node:
    """One node, from its part of the cluster's record."""

    def __init__(self, cluster, record: dict):
        self.cluster = cluster
        self.record = record

    @property
    def index(self) -> int:
        return self.record["index"]

    @property
    def name(self) -> str:
        return self.record["name"]

    @property
    def netns(self) -> str:
        return self.record["netns"]

    @property
    def private(self) -> bool:
        """Whether the node has a mount namespace of its own."""
        return self.index > 0

    @property
    def dir(self) -> str:
        return self.record["dir"]

    @property
    def thick_multus(self) -> bool:
        return self.record.get("multus") == "thick"

    @property
    def containerd_socket(self) -> str:
        return self.record["containerd_socket"]

    @property
    def crio(self) -> bool:
        """Whether the node's runtime is CRI-O (else containerd)."""
        return self.record.get("runtime") == "crio"

    @property
    def runtime_socket(self) -> str:
        """The CRI socket its kubelet talks to."""
        return self.record["crio_socket"] if self.crio else self.record["containerd_socket"]

    def crio_storage(self) -> list[str]:
        """CRI-O's storage options, for podman too: its own root of images
        and containers, vfs (no mount left behind if it is stopped)."""
        base = os.path.join(self.dir, "crio")
        return ["--root", os.path.join(base, "root"), "--runroot", os.path.join(base, "run"),
                "--storage-driver", "vfs"]

    def load_image(self, archive: str) -> subprocess.CompletedProcess:
        """Loads an image archive into the node's runtime."""
        if self.crio:
            # On stdin: podman takes a path with a colon for a reference.
            with open(archive, "rb") as f:
                return subprocess.run(["podman", *self.crio_storage(), "load"], stdin=f,
                                      capture_output=True, text=True)
        return self.ctr("images", "import", "--no-unpack=false", archive)

    @property
    def links(self) -> tuple[str, str]:
        """The veth pair's names: the host's end, the node's."""
        if self.index == 0:
            return HOST_LINK, NODE_LINK
        return f"rk8s-h{self.index}", f"rk8s-n{self.index}"

    @property
    def host_address(self) -> str:
        return API_ADDRESS if self.index == 0 else f"10.254.{self.index}.1"

    @property
    def address(self) -> str:
        return NODE_ADDRESS if self.index == 0 else f"10.254.{self.index}.2"

    @property
    def pod_cidr(self) -> str:
        return cfg.POD_CIDR if self.index == 0 else f"10.244.{self.index}.0/24"

    @property
    def mount_ns(self) -> str:
        """The file that keeps a private node's mount namespace."""
        return os.path.join(self.cluster.mount_ns_dir, self.name)

    @property
    def cgroup_parent(self) -> str:
        """The cgroup its kubelet puts the pods under ("": the top)."""
        return "" if self.index == 0 else f"rocenet-k8s-{self.name}"

    def program(self, name: str) -> str:
        """The cluster's name for the node's `name` (containerd, kubelet):
        node 0's keep theirs."""
        return name if self.index == 0 else f"{name}-{self.name}"

    def path(self, host_path: str) -> str:
        """Where the node's `host_path` is on the host."""
        real = os.path.realpath(host_path)
        if not self.private:
            return real
        for private in [*PRIVATE_PATHS, *self.record["binds"]]:
            private = os.path.realpath(private)
            if real == private or real.startswith(private + "/"):
                if private in self.record["binds"]:
                    return self.record["binds"][private] + real[len(private):]
                return os.path.join(self.dir, "root", real.lstrip("/"))
        return real

    def enter(self, argv: list[str]) -> list[str]:
        """`argv` run in the node: its network namespace, and its mount
        namespace when it has one."""
        mount = [f"--mount={self.mount_ns}"] if self.private else []
        return ["nsenter", f"--net=/run/netns/{self.netns}", *mount, "--", *argv]

    def ctr(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([os.path.join(self.cluster.bin, "ctr"), "--address",
                               self.containerd_socket, "-n", "k8s.io", *args],
                              capture_output=True, text=True)

    def ready(self) -> bool:
        """Whether the Node says Ready."""
        cp = self.cluster.kubectl("get", "node", self.name, "-o", "json", check=False)
        if cp.returncode != 0:
            return False
        conditions = json.loads(cp.stdout).get("status", {}).get("conditions", [])
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def join(node: Node, nodes: int) -> None:
    """The node's network namespace, the veth pair between it and the host,
    the routes between the nodes' pods (when there are several), and a
    private node's mount namespace."""
    ns = node.netns
    if node.record["created_netns"]:
        run(["ip", "netns", "add", ns])
        run(["ip", "-n", ns, "link", "set", "lo", "up"])
    node.record["chains"] = chains_of(ns)
    node.cluster.save()
    host_link, node_link = node.links
    run(["ip", "link", "add", host_link, "type", "veth", "peer", "name", node_link, "netns", ns])
    run(["ip", "address", "add", f"{node.host_address}/30", "dev", host_link])
    run(["ip", "link", "set", host_link, "up"])
    run(["ip", "-n", ns, "address", "add", f"{node.address}/30", "dev", node_link])
    run(["ip", "-n", ns, "link", "set", node_link, "up"])
    # Pods on the node's bridge reach the API server (API_ADDRESS) through
    # the node, which forwards for its bridge: the host routes their
    # replies back. Gone with the veth pair.
    run(["ip", "route", "add", node.pod_cidr, "via", node.address, "dev", host_link])
    if nodes > 1:
        # The API server and the other nodes' pods through the host, which
        # forwards between the nodes (specific routes: a default one would
        # carry what the fabric's routes refuse).
        for cidr in (NODES_CIDR, PODS_CIDR):
            run(["ip", "-n", ns, "route", "add", cidr, "via", node.host_address, "dev", node_link])
    if node.private:
        _make_mount_ns(node)


def _make_mount_ns(node: Node) -> None:
    """A mount namespace for the node, a slave of the host's (what the host
    mounts later reaches it, nothing of its own reaches the host), with a
    directory of the node's over each private path."""
    cluster = node.cluster
    if not cluster.record.get("mount_ns_dir_bound"):
        # unshare keeps a namespace by a bind mount, which a shared parent
        # mount would copy into the namespace itself.
        os.makedirs(cluster.mount_ns_dir, exist_ok=True)
        run(["mount", "--bind", cluster.mount_ns_dir, cluster.mount_ns_dir])
        run(["mount", "--make-private", cluster.mount_ns_dir])
        cluster.record["mount_ns_dir_bound"] = True
        cluster.save()
    open(node.mount_ns, "w").close()
    run(["unshare", f"--mount={node.mount_ns}", "--propagation", "slave", "true"])
    binds = {os.path.realpath(p): os.path.join(node.dir, "root", os.path.realpath(p).lstrip("/"))
             for p in PRIVATE_PATHS}
    binds.update({os.path.realpath(target): source
                  for target, source in node.record["binds"].items()})
    for target, source in binds.items():
        os.makedirs(source, exist_ok=True)
        missing = first_missing(target)
        if missing:
            # A mount point must exist; what the host did not have goes at down.
            cluster.record["created_paths"].append(missing)
            cluster.save()
            os.makedirs(target)
        run(["nsenter", f"--mount={node.mount_ns}", "--", "mount", "--bind", source, target])
    # Pod volumes with mount propagation need their source shared or slave.
    run(["nsenter", f"--mount={node.mount_ns}", "--", "mount", "--make-rshared", "/"])


def make_cgroup_parent(node: Node, root: str = CGROUP_ROOT) -> None:
    """The cgroup a private node's kubelet puts its pods under, in every
    hierarchy (the kubelet refuses a cgroup root that does not exist); on
    cgroup v1, cpuset's with the CPUs and memory nodes of its parent, which
    a new cpuset cgroup lacks."""
    parent = node.cgroup_parent
    if not parent:
        return
    for top in hierarchies(root):
        path = os.path.join(top, parent)
        os.makedirs(path, exist_ok=True)
        for name in ("cpuset.cpus", "cpuset.mems"):
            if os.path.exists(os.path.join(path, name)):
                with open(os.path.join(top, name)) as f:
                    value = f.read().strip()
                with open(os.path.join(path, name), "w") as f:
                    f.write(value)


def start_runtime(node: Node, creds: Credentials) -> None:
    """The node's container runtime (containerd, or CRI-O), with the
    cluster's CNI configuration (Multus, which the node's /opt/cni/bin
    gets; its daemon first where it is thick) and the pause and test
    images imported."""
    cluster, b = node.cluster, node.cluster.bin
    conf_dir = os.path.join(node.dir, "cni", "net.d")
    os.makedirs(conf_dir)
    cni_bin = node.path(CNI_BIN)
    os.makedirs(cni_bin, exist_ok=True)
    if node.thick_multus:
        # The pods' network alone; multus-daemon writes the shim's
        # configuration in front of it.
        shutil.copy(os.path.join(b, "multus-shim"), os.path.join(cni_bin, "multus-shim"))
        with open(os.path.join(conf_dir, "10-pods.conflist"), "w") as f:
            json.dump(cfg.bridge_conflist(os.path.join(node.dir, "cni", "ipam"), node.pod_cidr), f)
        start_multus_daemon(node, creds, conf_dir)
    else:
        multus = os.path.join(cni_bin, "multus")
        shutil.copy(os.path.join(b, "multus"), multus)
        if not node.private:
            cluster.record["installed"].append(multus)
            cluster.save()
        multus_kubeconfig = os.path.join(node.dir, "multus.kubeconfig")
        shutil.copy(cluster.kubeconfig, multus_kubeconfig)
        with open(os.path.join(conf_dir, "00-multus.conf"), "w") as f:
            f.write(cfg.multus_conf(multus_kubeconfig, os.path.join(node.dir, "multus"),
                                    os.path.join(node.dir, "cni", "ipam"), node.pod_cidr))
    if node.crio:
        start_crio(node, conf_dir)
    else:
        start_containerd(node, conf_dir)
    _import_base_images(node)


def start_containerd(node: Node, conf_dir: str) -> None:
    """containerd, as the cluster's nodes have always run it."""
    cluster, b = node.cluster, node.cluster.bin
    config = os.path.join(node.dir, "containerd.toml")
    with open(config, "w") as f:
        f.write(cfg.containerd_config(os.path.join(node.dir, "containerd", "root"),
                                      os.path.join(node.dir, "containerd", "state"),
                                      node.containerd_socket, conf_dir,
                                      list(CNI_PATH)))
    # The shim is looked up on PATH.
    path = f"{b}:{os.environ.get('PATH', '/usr/sbin:/usr/bin:/sbin:/bin')}"
    name = node.program("containerd")
    log = cluster.spawn(name, node.enter([os.path.join(b, "containerd"), "--config", config]),
                        env={"PATH": path})
    wait_for(f"containerd of {node.name} serving", lambda: node.ctr("version").returncode == 0,
             30, log=log, proc=cluster.procs[name])


def _import_base_images(node: Node) -> None:
    cluster = node.cluster
    for image in (images.pause_image(cfg.SANDBOX_IMAGE, cluster.work),
                  images.busybox_image(TEST_IMAGE)):
        archive = os.path.join(cluster.work, image.name.replace("/", "_") + ".tar")
        if not os.path.exists(archive):
            images.write_archive(image, archive)
        cluster.import_image(archive, nodes=[node])


def start_crio(node: Node, conf_dir: str) -> None:
    """CRI-O as the node's runtime, as on an OpenShift node: built from its
    module (with its pinns), Debian's conmon and runc, the cgroupfs
    manager, a storage root of its own, the cluster's CNI configuration,
    and a signature policy that takes the images loaded into it. Not
    Debian's crun: its 1.8 refuses the OCI version CRI-O writes (1.2)."""
    cluster, b = node.cluster, node.cluster.bin
    base = os.path.join(node.dir, "crio")
    for sub in ("log", "hooks"):
        os.makedirs(os.path.join(base, sub), exist_ok=True)
    policy = os.path.join(base, "policy.json")
    with open(policy, "w") as f:
        json.dump({"default": [{"type": "insecureAcceptAnything"}]}, f)
    run_root = os.path.join(base, "run")
    argv = [os.path.join(b, "crio"), "--config", "", *node.crio_storage(),
            "--listen", node.runtime_socket, "--log-level", "info",
            "--conmon", "/usr/bin/conmon", "--conmon-cgroup", "pod",
            "--default-runtime", "runc",
            "--runtimes", f"runc:{os.path.join(os.path.dirname(os.path.abspath(__file__)), 'runc_hybrid.py')}"
                          f":{run_root}/runc:oci",
            "--pinns-path", os.path.join(b, "pinns"), "--cgroup-manager", "cgroupfs",
            "--signature-policy", policy, "--pause-image", cfg.SANDBOX_IMAGE,
            "--cni-config-dir", conf_dir, *[a for d in CNI_PATH for a in ("--cni-plugin-dir", d)],
            # Its default: the pods' network namespaces where CNI plugins
            # expect them (/var/run/netns/<id>), as on an OpenShift node.
            "--log-dir", os.path.join(base, "log"), "--namespaces-dir", "/var/run",
            "--hooks-dir", os.path.join(base, "hooks"),
            "--version-file", os.path.join(base, "version"),
            "--version-file-persist", os.path.join(base, "version-persist"),
            "--clean-shutdown-file", os.path.join(base, "clean.shutdown"),
            "--enable-nri", "--nri-listen", os.path.join(base, "nri.sock")]
    for kind in ("ipcns", "utsns", "userns", "cgroupns", "pidns"):
        missing = first_missing(os.path.join("/run", kind))
        if missing and missing not in cluster.record["created_paths"]:
            cluster.record["created_paths"].append(missing)
    cluster.save()
    name = node.program("crio")
    log = cluster.spawn(name, node.enter(argv))
    wait_for(f"CRI-O of {node.name} serving", lambda: os.path.exists(node.runtime_socket), 60, log=log,
             proc=cluster.procs[name])
    # No process here may lower its OOM score (no CAP_SYS_RESOURCE):
    # containers get at least 0.
    floor = node.program("oomfloor")
    floor_log = cluster.spawn(floor, node.enter([os.path.join(b, "oomfloor"), "--socket",
                                                 os.path.join(base, "nri.sock")]))

    def registered() -> bool:
        with open(log) as f, open(floor_log) as g:
            return "oomfloor" in f.read() or "oomfloor" in g.read()
    wait_for(f"the OOM floor plugin of {node.name} registered", registered, 30, log=floor_log,
             proc=cluster.procs[floor])


def start_multus_daemon(node: Node, creds: Credentials, conf_dir: str) -> None:
    """Multus' thick plugin on the node as its DaemonSet runs it: the
    daemon with its own service account (its ClusterRole from its
    manifest) and token, writing the shim's configuration in front of the
    pods' network in `conf_dir` and executing the delegates itself, in
    the node's namespaces."""
    cluster, b = node.cluster, node.cluster.bin
    if "multus-daemon-rbac" not in cluster.record:
        # Its CRD with it, as its manifest installs it: the daemon's
        # informer of NetworkAttachmentDefinitions starts with the daemon.
        cluster.kubectl("apply", "-f", os.path.join(b, "nad-crd.yaml"))
        with open(os.path.join(b, "multus-clusterrole.yaml")) as f:
            role = f.read()
        cluster.kubectl("apply", "-f", "-", input=role)
        cluster.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "ServiceAccount",
             "metadata": {"name": "multus", "namespace": "kube-system"}},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
             "metadata": {"name": "multus"},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "multus"},
             "subjects": [{"kind": "ServiceAccount", "name": "multus", "namespace": "kube-system"}]}]}))
        cluster.record["multus-daemon-rbac"] = True
        cluster.save()
    token = cluster.kubectl("-n", "kube-system", "create", "token", "multus",
                            "--duration", "48h").stdout.strip()
    account = node.path(SERVICE_ACCOUNT_DIR)
    os.makedirs(account, exist_ok=True)
    with open(os.path.join(account, "token"), "w") as f:
        f.write(token)
    shutil.copy(creds.pki.ca.cert, os.path.join(account, "ca.crt"))
    with open(os.path.join(account, "namespace"), "w") as f:
        f.write("kube-system")
    config = os.path.join(node.dir, "multus-daemon.json")
    socket_dir = os.path.join(node.dir, "multus-socket")
    with open(config, "w") as f:
        json.dump({"cniVersion": "1.0.0", "logLevel": "verbose", "logToStderr": True,
                   "cniConfigDir": conf_dir, "multusAutoconfigDir": conf_dir,
                   "multusConfigFile": "auto", "socketDir": socket_dir,
                   # What the shim's configuration tells the shim.
                   "daemonSocketDir": socket_dir, "cniDir": os.path.join(node.dir, "multus")}, f)
    host, port = creds.server.removeprefix("https://").rsplit(":", 1)
    name = node.program("multus-daemon")
    log = cluster.spawn(name, node.enter([os.path.join(b, "multus-daemon"), "--config", config]),
                        env={"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port,
                             "MULTUS_NODE_NAME": node.name,
                             # Where it finds the delegates, as containerd does.
                             "CNI_PATH": os.pathsep.join(CNI_PATH)})
    def configured() -> bool:
        try:
            with open(os.path.join(conf_dir, "00-multus.conf")) as f:
                return json.load(f).get("daemonSocketDir") == socket_dir
        except (OSError, ValueError):
            return False
    wait_for(f"multus-daemon of {node.name} writing its configuration", configured, 60, log=log,
             proc=cluster.procs[name])


def start_kubelet(node: Node, creds: Credentials, dns: bool = False) -> str:
    """The node's kubelet, which gives its pods the cluster DNS on the
    node's host address when `dns`; returns its log's path (ready() says
    when its Node is Ready)."""
    cluster, b = node.cluster, node.cluster.bin
    os.makedirs(node.path(KUBELET_ROOT), exist_ok=True)
    make_cgroup_parent(node)
    serving = creds.pki.issue(f"kubelet-serving-{node.name}", f"/CN={node.name}", server=True,
                              ips=(node.address, "127.0.0.1"), dns=(node.name, "localhost"))
    config = os.path.join(node.dir, "kubelet.yaml")
    with open(config, "w") as f:
        f.write(cfg.kubelet_config(creds.pki.ca.cert, serving.cert, serving.key,
                                   node.runtime_socket, node.address, free_port(),
                                   cgroup_root=f"/{node.cgroup_parent}",
                                   cluster_dns=[node.host_address] if dns else []))
    kubeconfig = creds.client(f"kubelet-{node.name}", f"/O=system:nodes/CN=system:node:{node.name}")
    name = node.program("kubelet")
    log = cluster.spawn(name, node.enter([
        os.path.join(b, "kubelet"), "--config", config, "--kubeconfig", kubeconfig,
        "--root-dir", KUBELET_ROOT, "--hostname-override", node.name, "--node-ip", node.address,
        "--v", "2"]))
    node.record["kubelet_log"] = log
    cluster.save()
    return log


def node_names(count: int) -> list[str]:
    """The nodes' names: the machine's for a single node (as the cluster
    has always had), else <machine>-<i>."""
    host = socket.gethostname().lower()
    return [host] if count == 1 else [f"{host}-{i}" for i in range(count)]
