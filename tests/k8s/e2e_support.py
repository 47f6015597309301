# SPDX-License-Identifier: Apache-2.0
"""What the end-to-end tests share: the set-up (components, image, fabric,
cluster, rocenet applied from an overlay), the wait loop and Env, the
cluster seen through kubectl, and what a failure leaves for its reader
under the build tree (collect_evidence)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "sim"))

import fabric as sim  # noqa: E402
import testcluster as k8s  # noqa: E402

ROOT = os.path.join(HERE, "..", "..")
# What a run leaves under the build tree: the figures the tests print (the
# Makefile shows them after a passing run, whose output CTest hides) and,
# per failure, what the cluster showed.
FIGURES = "e2e-figures.txt"
EVIDENCE = "e2e-evidence"
FABRIC_DIR = "/run/rocenet-e2e/fabric"
NODE_LABEL = "feature.node.kubernetes.io/pci-1200_1da3.present=true"
RESOURCE = "rocenet.io/scale-out-port"
NAD = os.path.join(ROOT, "packaging", "kubernetes", "examples", "network-attachment-definition.yaml")
PORTS = 4
IMAGE = "localhost/rocenet:e2e"
NEXT_IMAGE = "localhost/rocenet:e2e-next"
TRAINING_IMAGE = "localhost/rocenet-training:e2e"
DAEMON_SOCKET = "/run/rocenet/rocenetd.sock"
# The overlays' default policy, and the DaemonSet rocenet-controller makes
# of it.
POLICY = "gaudi"
NODE_DAEMONSET = f"rocenet-{POLICY}"
OVERLAYS = os.path.join(ROOT, "packaging", "kubernetes", "overlays")
# The image the overlays name, which the test cluster's mirror rewrites.
SHIPPED_IMAGE = "registry.example.com/rocenet/rocenet"
# The fabric's sysfs tree on the host, which rocenetd reads.
SYSFS = "/run/rocenet-e2e/fabric/sysfs"
# The simulated switches' port MTU (the veths' both ends, until rocenetd
# sets the node's end to the policy's MTU).
SWITCH_MTU = 9216
# The node side's DaemonSets, as the operator makes them.
NODE_MANIFESTS = os.path.join(ROOT, "operator", "internal", "nodeset", "manifests")


def wait(what: str, pred, timeout: float = 60, interval: float = 0.5):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = pred()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"{what}: not within {timeout:.0f} s (last: {last!r})")


def read_text(path: str) -> str:
    """A file's text, or "" when it cannot be read (a /proc entry whose
    process has just gone, say)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def process_named(name: str) -> tuple[int, dict]:
    """The one process running `name` on this machine (the node's): its pid
    and its /proc status fields."""
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()
            and os.path.basename(read_text(f"/proc/{p}/cmdline").split("\0")[0]) == name]
    assert len(pids) == 1, f"{name}: pids {pids}"
    status = dict(line.split(":\t", 1) for line in read_text(f"/proc/{pids[0]}/status").splitlines()
                  if ":\t" in line)
    return pids[0], status


def build_dir() -> str:
    """CTest's build tree (ROCENET_BUILD_DIR), or the Makefile's default
    one, build/, for a run by hand."""
    return os.environ.get("ROCENET_BUILD_DIR") or os.path.normpath(os.path.join(ROOT, "build"))


def evidence_dir(name: str) -> str:
    """Where the failure called `name` keeps what it showed."""
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)
    return os.path.join(build_dir(), EVIDENCE, safe)


def skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "needs root"
    if shutil.which("go") is None:
        return "needs Go (the components are built from the Go module proxy)"
    for tool in ("podman", "debootstrap", "runc", "busybox", "gcc"):
        if shutil.which(tool) is None and not os.path.exists(f"/usr/sbin/{tool}"):
            return f"needs {tool} (packaging/debian-deps.sh test)"
    probe = f"rnk8sprobe{os.getpid()}"
    if subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode != 0:
        return "needs network namespaces"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


class Env:
    """The cluster, the fabric and kubectl."""

    def __init__(self, cluster: k8s.Cluster, fab, say=print):
        self.cluster = cluster
        self.fab = fab
        self.say = say

    def kubectl(self, *args: str, check: bool = True, input: str | None = None):
        return self.cluster.kubectl(*args, check=check, input=input)

    def rocenet(self, *args: str) -> subprocess.CompletedProcess:
        """`kubectl rocenet ARGS` as an admin runs it: the real kubectl,
        finding the plugin the build made on its PATH."""
        plugin_dir = os.path.join(build_dir(), "go")
        if not os.access(os.path.join(plugin_dir, "kubectl-rocenet"), os.X_OK):
            pytest.fail(f"kubectl-rocenet is not built in {plugin_dir}")
        # kubectl takes no flag before a plugin's name: the kubeconfig goes
        # in the environment, as an admin's would.
        return subprocess.run(
            [os.path.join(self.cluster.bin, "kubectl"), "rocenet", *args],
            capture_output=True, text=True, timeout=120,
            env={**os.environ, "KUBECONFIG": self.cluster.kubeconfig,
                 "PATH": f"{plugin_dir}:{os.environ.get('PATH', '')}"})

    def json(self, *args: str) -> dict:
        return json.loads(self.kubectl(*args, "-o", "json").stdout)

    def apply(self, obj: dict) -> None:
        self.kubectl("apply", "-f", "-", input=json.dumps(obj))

    def allocatable(self) -> int:
        node = self.json("get", "node", self.cluster.node)
        return int(node["status"]["allocatable"].get(RESOURCE, "0"))

    def rocectl(self, *args: str) -> str:
        return self.kubectl("-n", "rocenet-system", "exec", f"ds/{NODE_DAEMONSET}", "-c", "rocenetd",
                            "--", "rocectl", *args).stdout

    def attachments(self, pod: str | None = None) -> list[dict]:
        listed = json.loads(self.rocectl("attachments", "-o", "json")).get("attachments", [])
        return [a for a in listed if pod is None or a.get("pod", {}).get("name") == pod]

    def pod(self, name: str, ports: int, annotate: bool = True, attachments: int = 1) -> None:
        """A pod that asks for `ports` ports (none: no limit at all) and,
        when `annotate`, joins the network `attachments` times (one port
        each: net1, net2, ...)."""
        networks = ",".join(["gaudi-scale-out"] * attachments)
        self.apply({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default",
                         "annotations": {"k8s.v1.cni.cncf.io/networks": networks}
                         if annotate else {}},
            "spec": {"terminationGracePeriodSeconds": 1,
                     "containers": [{"name": "main", "image": k8s.TEST_IMAGE,
                                     "command": ["/bin/sh", "-c", "sleep 3600"],
                                     "resources": {"limits": {RESOURCE: ports}}
                                     if ports else {}}]},
        })

    def rocenet_pods(self) -> list[str]:
        """The DaemonSet's pods that are not being deleted."""
        listed = self.json("-n", "rocenet-system", "get", "pods",
                           "-l", "app.kubernetes.io/name=rocenet,app.kubernetes.io/component=node")["items"]
        return sorted(p["metadata"]["name"] for p in listed
                      if not p["metadata"].get("deletionTimestamp"))

    def roll(self, meanwhile) -> float:
        """The default policy's image changed to NEXT_IMAGE, as an admin
        upgrades rocenet, with meanwhile() called right after; returns the
        seconds until the old pod was gone (the operator's rollout lets
        the new pod run beside it, and the DaemonSet controller deletes
        the old one once the new one is ready)."""
        [old_pod] = self.rocenet_pods()
        started = time.monotonic()
        self.kubectl("patch", "rocenetnodepolicy", POLICY, "--type=merge",
                     "-p", json.dumps({"spec": {"image": NEXT_IMAGE}}))
        meanwhile()
        wait("the old rocenet pod gone", lambda: old_pod not in self.rocenet_pods(), 180)
        wait("the policy Ready", lambda: (lambda p: p["status"].get("observedGeneration") ==
                                           p["metadata"]["generation"] and any(
            c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", [])))(
            self.json("get", "rocenetnodepolicy", POLICY)), 120)
        return time.monotonic() - started

    def phase(self, name: str) -> str:
        return self.json("get", "pod", name)["status"].get("phase", "")

    def delete(self, name: str) -> None:
        self.kubectl("delete", "pod", name, "--wait=true", "--timeout=60s")

    def exec(self, pod: str, *argv: str) -> str:
        return self.kubectl("exec", pod, "--", *argv).stdout


class Serving:
    """While entered: rocenetd's socket dialled every few milliseconds, as
    a CNI call or kubelet's probe would, and kubelet's allocatable ports
    watched; what a user of the node would have met while rocenet's pods
    changed."""

    def __init__(self, env: Env, socket_path: str = DAEMON_SOCKET, allocatable=None):
        """`socket_path`: rocenetd's socket as the host sees it (another
        node's is under its own directory); `allocatable`: how many ports
        kubelet counts (default: on node 0)."""
        self.env = env
        self.socket_path = socket_path
        self.count = allocatable or env.allocatable
        self.served = 0
        self.failures: list[str] = []
        self.lowest: int | None = None
        # When allocatable changed, and to what: where a fall came from.
        self.allocatable_seen: list[str] = []
        self._done = threading.Event()
        self._threads = [threading.Thread(target=self._dial), threading.Thread(target=self._allocatable)]

    def _dial(self) -> None:
        while not self._done.is_set():
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                try:
                    s.connect(self.socket_path)
                    self.served += 1
                except OSError as e:
                    self.failures.append(f"{time.strftime('%H:%M:%S')} {e}")
            time.sleep(0.005)

    def _allocatable(self) -> None:
        while not self._done.is_set():
            n = self.count()
            if self.lowest is None or n != int(self.allocatable_seen[-1].split()[-1]):
                self.allocatable_seen.append(f"{time.strftime('%H:%M:%S')} {n}")
            self.lowest = n if self.lowest is None else min(self.lowest, n)
            time.sleep(0.5)

    def __enter__(self) -> Serving:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        for t in self._threads:
            t.join()

    def summary(self) -> str:
        return (f"{self.served} connections to {self.socket_path}, {len(self.failures)} failed; "
                f"allocatable at least {self.lowest} ({', '.join(self.allocatable_seen)})")


def host_paths(rendered: str) -> list[str]:
    """The hostPath volumes of the rendered manifests."""
    paths = []
    for line in rendered.splitlines():
        stripped = line.strip()
        if stripped.startswith("path: /"):
            paths.append(stripped.split(":", 1)[1].strip())
    return paths


class Artifacts:
    """What every cluster of a run is made from, built once: the
    components, rocenet's image (and the same image under a second tag,
    the rolling update's "new version") and the training job's image."""

    def __init__(self, work: str, took, reuse: bool = False):
        self.bin_dir = os.path.join(work, "bin")
        self.archive = os.path.join(work, "rocenet.tar")
        self.next_archive = os.path.join(work, "rocenet-next.tar")
        self.training_archive = os.path.join(work, "training.tar")
        # Cached by components.sh: seconds when none changed.
        subprocess.run(["bash", os.path.join(HERE, "components.sh"), self.bin_dir], check=True)
        took("components (tests/k8s/components.sh)")
        if reuse and all(os.path.exists(p) for p in (self.archive, self.next_archive,
                                                      self.training_archive)):
            took(f"images reused from {work}")
            return
        # The C++ programs of the build tree under test, not compiled again
        # (image.sh --native; `make image` builds it wholly from source).
        subprocess.run(["bash", os.path.join(HERE, "image.sh"), "--native", build_dir(), self.archive, "e2e"],
                       check=True)
        took("rocenet's image (tests/k8s/image.sh --native)")
        subprocess.run(["podman", "tag", IMAGE, NEXT_IMAGE], check=True)
        subprocess.run(["podman", "save", "--format", "oci-archive", "-o", self.next_archive,
                        NEXT_IMAGE], check=True, capture_output=True)
        subprocess.run(["podman", "rmi", NEXT_IMAGE], capture_output=True)
        took("the image's second tag")
        subprocess.run(["bash", os.path.join(HERE, "training_image.sh"), self.training_archive,
                        TRAINING_IMAGE], check=True)
        took("the training job's image (tests/k8s/training_image.sh)")


# One failure's evidence: each item bounded in time, all of them together too
# (a cluster whose API server is gone must not hold the run for long).
ITEM_TIMEOUT = 30
EVIDENCE_BUDGET = 150
ROCECTL_VIEWS = ("attachments", "reservations", "health", "ports", "addressing")


def collect_evidence(env: Env, to: str) -> None:
    """What the cluster shows now, into the directory `to`: its events and
    pods (`kubectl get -A -o wide`, and the pods, the node and the DRA
    objects in full), every container's log of every pod (and the previous
    instance's where a container restarted), rocenetd's own view from each
    rocenet pod (`rocectl attachments|reservations|health|ports|addressing
    -o json`) and the node's addresses and routes. Best-effort: what could
    not be had is listed in `to`/NOT-COLLECTED.txt, and nothing raises, so
    the failure that asked for it stays the one reported."""
    try:
        os.makedirs(to, exist_ok=True)
    except OSError:
        return
    deadline = time.monotonic() + EVIDENCE_BUDGET
    missed: list[str] = []

    def keep(name: str, argv: list[str]) -> str | None:
        """Runs argv, its output into `to`/name; returns the output."""
        path = os.path.join(to, name)
        left = deadline - time.monotonic()
        if left <= 0:
            missed.append(f"{name}: not tried, the {EVIDENCE_BUDGET} s for the evidence spent")
            return None
        try:
            cp = subprocess.run(argv, capture_output=True, text=True,
                                timeout=min(ITEM_TIMEOUT, left))
        except subprocess.TimeoutExpired:
            missed.append(f"{name}: no answer within {min(ITEM_TIMEOUT, left):.0f} s")
            return None
        except OSError as err:
            missed.append(f"{name}: {err}")
            return None
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(cp.stdout)
                if cp.returncode != 0:
                    f.write(cp.stderr)
        except OSError as err:
            missed.append(f"{name}: {err}")
        if cp.returncode != 0:
            missed.append(f"{name}: exit status {cp.returncode}: {cp.stderr.strip()[-300:]}")
            return None
        return cp.stdout

    def kubectl(*args: str) -> list[str]:
        return [os.path.join(env.cluster.bin, "kubectl"), "--kubeconfig", env.cluster.kubeconfig,
                "--request-timeout", f"{ITEM_TIMEOUT}s", *args]

    try:
        keep("events.txt", kubectl("get", "events", "-A", "-o", "wide",
                                   "--sort-by", ".metadata.creationTimestamp"))
        keep("pods.txt", kubectl("get", "pods", "-A", "-o", "wide"))
        listed = keep("pods.json", kubectl("get", "pods", "-A", "-o", "json"))
        keep("node.yaml", kubectl("get", "nodes", "-o", "yaml"))
        keep("dra.yaml", kubectl("get", "resourceslices,resourceclaims", "-A", "-o", "yaml"))
        pods = json.loads(listed)["items"] if listed else []
        for pod in pods:
            ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
            keep(f"logs/{ns}_{name}.log", kubectl("-n", ns, "logs", name, "--all-containers",
                                                  "--prefix", "--timestamps"))
            status = pod.get("status", {})
            for c in status.get("initContainerStatuses", []) + status.get("containerStatuses", []):
                if c.get("restartCount", 0) > 0:
                    keep(f"logs/{ns}_{name}_{c['name']}.previous.log",
                         kubectl("-n", ns, "logs", name, "-c", c["name"], "--previous",
                                 "--timestamps"))
        for pod in pods:
            meta = pod["metadata"]
            labels = meta.get("labels", {})
            if meta["namespace"] != "rocenet-system" or labels.get("app.kubernetes.io/name") != "rocenet" \
                    or labels.get("app.kubernetes.io/component") != "node":
                continue
            for view in ROCECTL_VIEWS:
                keep(f"rocectl/{meta['name']}_{view}.json",
                     kubectl("-n", "rocenet-system", "exec", meta["name"], "-c", "rocenetd", "--",
                             "rocectl", "--timeout", "10s", view, "-o", "json"))
        netns = env.fab.node_netns
        keep("node-addresses.txt", ["ip", "-n", netns, "-d", "address", "show"])
        keep("node-routes.txt", ["ip", "-n", netns, "route", "show", "table", "all"])
    except Exception as err:  # a surprise in the collection itself
        missed.append(f"the collection stopped: {type(err).__name__}: {err}")
    if missed:
        try:
            with open(os.path.join(to, "NOT-COLLECTED.txt"), "w") as f:
                f.write("\n".join(missed) + "\n")
        except OSError:
            pass


def operator_on_the_test_cluster(env, kustomization: dict, sysfs: str = SYSFS) -> None:
    """rocenet's operator on the test cluster: the shipped image name
    rewritten to the one imported into its containerd (as a mirror does),
    and rocenet-controller told the API server's own address (the cluster
    has no kube-proxy, so the Service address the in-cluster configuration
    names leads nowhere; the flag gives it to the node pods too) and the
    fabric's sysfs tree, which the node pods' rocenetd reads."""
    host_port = env.cluster.record["server"].removeprefix("https://")
    host, port = host_port.rsplit(":", 1)
    name, tag = IMAGE.rsplit(":", 1)
    kustomization["images"] = [{"name": SHIPPED_IMAGE, "newName": name, "newTag": tag}]
    kustomization.setdefault("patches", []).extend([
        {"target": {"kind": "Deployment", "name": "rocenet-controller"}, "patch": json.dumps({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "rocenet-controller"},
            "spec": {"template": {"spec": {"containers": [{"name": "controller", "env": [
                {"name": "KUBERNETES_SERVICE_HOST", "value": host},
                {"name": "KUBERNETES_SERVICE_PORT", "value": port}]}]}}}})},
        {"target": {"kind": "Deployment", "name": "rocenet-controller"}, "patch": json.dumps([
            {"op": "add", "path": "/spec/template/spec/containers/0/command/-",
             "value": f"--node-api-server={host_port}"},
            {"op": "add", "path": "/spec/template/spec/containers/0/command/-",
             "value": f"--node-sysfs-root={sysfs}"}])},
    ])


def node_side_up(env, timeout: float = 240) -> dict:
    """Waits for the default policy's DaemonSet and its pod ready; returns
    the DaemonSet."""
    def ready():
        cp = env.kubectl("-n", "rocenet-system", "get", "ds", NODE_DAEMONSET, "-o", "json", check=False)
        if cp.returncode != 0:
            return None
        ds = json.loads(cp.stdout)
        return ds if ds["status"].get("numberReady") == 1 else None
    return wait(f"the DaemonSet {NODE_DAEMONSET} ready", ready, timeout)


def apply_overlay(e: Env, overlay: str, work: str, patch, nodes: list[str]) -> None:
    """rocenet applied from `overlay` through a kustomization in `work`
    (`patch(e, kustomization)` adds to it), with Multus' CRD and the
    example NetworkAttachmentDefinition; `nodes` get NFD's Gaudi label."""
    kustomization = {"resources": [os.path.relpath(overlay, work)]}
    if patch is not None:
        patch(e, kustomization)
    with open(os.path.join(work, "kustomization.yaml"), "w") as f:
        json.dump(kustomization, f)
    rendered = e.kubectl("kustomize", work).stdout
    # What the node pods may make on the host (the node side the operator
    # makes, of either mode), gone with the cluster whatever the tests
    # leave.
    for mode in ("generic", "generic-dra"):
        with open(os.path.join(NODE_MANIFESTS, f"{mode}.yaml")) as f:
            rendered += "\n---\n" + f.read()
    # And NetworkManager's drop-in directory and the system bus, which a
    # policy's pods mount unless it leaves NetworkManager alone.
    e.cluster.track_host_paths(host_paths(rendered) + ["/etc/NetworkManager/conf.d", "/run/dbus"])
    for node in nodes:
        e.kubectl("label", "node", node, NODE_LABEL)
    e.kubectl("apply", "-f", os.path.join(e.cluster.bin, "nad-crd.yaml"))
    e.kubectl("wait", "--for=condition=established", "--timeout=60s",
              "crd/network-attachment-definitions.k8s.cni.cncf.io")
    # The CRDs and a policy in one apply: the policy's kind is served once
    # its CRD is established, so a first apply may refuse it.
    if e.kubectl("apply", "-k", work, check=False).returncode != 0:
        e.kubectl("wait", "--for=condition=established", "--timeout=60s", "crd", "--all")
        e.kubectl("apply", "-k", work)
    e.kubectl("apply", "-f", NAD)


def one_node(artifacts: Artifacts, say, logs_on_failure: str):
    """The single-node set-up: the Gaudi-like fabric of PORTS ports and a
    cluster whose node is its node namespace, both images imported;
    returns (fabric, cluster, env), each as far as it was made."""
    # What a run killed midway left (a timeout): the cluster first, whose
    # pods hold the fabric's node namespace, then the fabric.
    k8s.down()
    sim.down(FABRIC_DIR)
    # Jumbo frames on the switches' ports, as a RoCE fabric has them: the
    # default policy sets the ports' MTU to 9000.
    fab = sim.Fabric.up("e2e", ports=PORTS, state_dir=FABRIC_DIR, mtu=SWITCH_MTU)
    try:
        cluster = k8s.Cluster.up(artifacts.bin_dir, node_netns=fab.node_netns,
                                 logs_on_failure=logs_on_failure)
    except BaseException:
        fab.down()
        raise
    return fab, cluster, Env(cluster, fab, say)


@contextlib.contextmanager
def deployed(artifacts: Artifacts, overlay: str, say, took, patch=None, up=one_node,
             images: tuple[str, ...] | None = None):
    """A fabric, a cluster on it (`up`: one node by default) and rocenet
    applied from `overlay` (a kustomization directory), `images` (default:
    rocenet's and its next version's) imported; `patch(env,
    kustomization_dict)` may add to the kustomization applied (which names
    `overlay` as its resource). Everything is taken down afterwards. When
    the set-up fails, what the cluster showed is kept in
    evidence_dir("set-up-<overlay>"), named in a note of the exception."""
    fab = cluster = e = None
    work = tempfile.mkdtemp(prefix="rocenet-e2e-apply-")
    set_up_failed = evidence_dir(f"set-up-{os.path.basename(os.path.normpath(overlay))}")
    ready = False
    try:
        fab, cluster, e = up(artifacts, say, os.path.join(set_up_failed, "components"))
        for archive in images if images is not None else (artifacts.archive, artifacts.next_archive):
            cluster.import_image(archive)
        took(f"the fabric and the cluster up ({len(cluster.nodes)} "
             f"{'node' if len(cluster.nodes) == 1 else 'nodes'}), the images imported")
        apply_overlay(e, overlay, work, patch, [n.name for n in cluster.nodes])
        took("rocenet applied")
        ready = True
        yield e
    except Exception as error:
        if not ready:
            if e is not None:
                collect_evidence(e, set_up_failed)
            if cluster is not None:
                cluster.keep_logs_in(os.path.join(set_up_failed, "components"))
            error.add_note(f"e2e evidence: {set_up_failed}")
        raise
    finally:
        if hasattr(took, "reset"):
            took.reset()  # the tests' time is not the teardown's
        if cluster is not None:
            k8s.down()
            took("the cluster down")
        if fab is not None:
            fab.down()
        shutil.rmtree("/run/rocenet-e2e", ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


def generic_install(artifacts: Artifacts, say, took):
    """The single-node cluster with rocenet as the generic overlay installs
    it (the operator, its default policy), on the test cluster's terms
    (operator_on_the_test_cluster)."""
    return deployed(artifacts, os.path.join(OVERLAYS, "generic"), say, took,
                    patch=operator_on_the_test_cluster)
