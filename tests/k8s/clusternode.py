# SPDX-License-Identifier: Apache-2.0
"""The test cluster's node: a network namespace (the simulated fabric's
node namespace, or one of its own) joined to the host by a veth pair
(API_ADDRESS on the host, NODE_ADDRESS in the node), and in it containerd
(Debian's runc; Multus' thin plugin as the CNI configuration, delegating
to a bridge for the pods' primary network) and the kubelet. Both run in
the host's mount namespace: the kubelet's volume mounts and containerd's
must be seen by each other."""

from __future__ import annotations

import json
import os
import shutil

import cluster_config as cfg
import images
from clusterutil import free_port, run, wait_for
from controlplane import API_ADDRESS, Credentials
from hostcleanup import chains_of

OWN_NODE_NETNS = "rocenet-k8s-node"
HOST_LINK, NODE_LINK = "rk8s-host", "rk8s-node"
NODE_ADDRESS = "10.254.0.2"
KUBELET_ROOT = "/var/lib/kubelet"
CNI_BIN = "/opt/cni/bin"
TEST_IMAGE = "rocenet.test/busybox:1"


def join(cluster) -> None:
    """The node's namespace, and the veth pair between it and the host."""
    ns = cluster.record["node_netns"]
    if cluster.record["created_netns"]:
        run(["ip", "netns", "add", ns])
        run(["ip", "-n", ns, "link", "set", "lo", "up"])
    cluster.record["chains"] = chains_of(ns)
    cluster.save()
    run(["ip", "link", "add", HOST_LINK, "type", "veth", "peer", "name", NODE_LINK, "netns", ns])
    run(["ip", "address", "add", f"{API_ADDRESS}/30", "dev", HOST_LINK])
    run(["ip", "link", "set", HOST_LINK, "up"])
    run(["ip", "-n", ns, "address", "add", f"{NODE_ADDRESS}/30", "dev", NODE_LINK])
    run(["ip", "-n", ns, "link", "set", NODE_LINK, "up"])
    # Pods on the node's bridge reach the API server (API_ADDRESS) through
    # the node, which forwards for its bridge: the host routes their
    # replies back. Gone with the veth pair.
    run(["ip", "route", "add", cfg.POD_CIDR, "via", NODE_ADDRESS, "dev", HOST_LINK])


def start_containerd(cluster) -> None:
    """containerd in the node, with the cluster's CNI configuration (Multus,
    which /opt/cni/bin gets) and the pause and test images imported."""
    work, b = cluster.work, cluster.bin
    conf_dir = os.path.join(work, "cni", "net.d")
    os.makedirs(conf_dir)
    os.makedirs(CNI_BIN, exist_ok=True)
    multus = os.path.join(CNI_BIN, "multus")
    shutil.copy(os.path.join(b, "multus"), multus)
    cluster.record["installed"].append(multus)
    cluster.save()
    multus_kubeconfig = os.path.join(work, "multus.kubeconfig")
    shutil.copy(cluster.kubeconfig, multus_kubeconfig)
    with open(os.path.join(conf_dir, "00-multus.conf"), "w") as f:
        f.write(cfg.multus_conf(multus_kubeconfig, os.path.join(work, "multus"),
                                os.path.join(work, "cni", "ipam")))
    config = os.path.join(work, "containerd.toml")
    with open(config, "w") as f:
        f.write(cfg.containerd_config(os.path.join(work, "containerd", "root"),
                                      os.path.join(work, "containerd", "state"),
                                      cluster.record["containerd_socket"], conf_dir,
                                      [CNI_BIN, "/usr/lib/cni"]))
    # The shim is looked up on PATH.
    path = f"{b}:{os.environ.get('PATH', '/usr/sbin:/usr/bin:/sbin:/bin')}"
    log = cluster.spawn("containerd", [os.path.join(b, "containerd"), "--config", config],
                        env={"PATH": path}, in_node=True)
    wait_for("containerd serving", lambda: cluster.ctr("version").returncode == 0, 30,
             log=log, proc=cluster.procs["containerd"])
    for image in (images.pause_image(cfg.SANDBOX_IMAGE, work), images.busybox_image(TEST_IMAGE)):
        archive = os.path.join(work, image.name.replace("/", "_") + ".tar")
        images.write_archive(image, archive)
        cluster.import_image(archive)


def start_kubelet(cluster, creds: Credentials) -> None:
    """The kubelet in the node, registered as the cluster's node; returns
    once the Node is Ready and pods can be made."""
    work, b = cluster.work, cluster.bin
    node = cluster.record["node"]
    os.makedirs(KUBELET_ROOT)
    serving = creds.pki.issue("kubelet-serving", f"/CN={node}", server=True,
                              ips=(NODE_ADDRESS, "127.0.0.1"), dns=(node, "localhost"))
    config = os.path.join(work, "kubelet.yaml")
    with open(config, "w") as f:
        f.write(cfg.kubelet_config(creds.pki.ca.cert, serving.cert, serving.key,
                                   cluster.record["containerd_socket"], NODE_ADDRESS,
                                   free_port()))
    kubeconfig = creds.client("kubelet", f"/O=system:nodes/CN=system:node:{node}")
    log = cluster.spawn("kubelet", [
        os.path.join(b, "kubelet"), "--config", config, "--kubeconfig", kubeconfig,
        "--root-dir", KUBELET_ROOT, "--hostname-override", node, "--node-ip", NODE_ADDRESS,
        "--v", "2"], in_node=True)
    cluster.record["kubelet_log"] = log
    cluster.save()
    wait_for(f"node {node} Ready", lambda: ready(cluster), 120, interval=1, log=log,
             proc=cluster.procs["kubelet"])
    # Pods are refused until the controller manager has made the
    # namespace's service account.
    wait_for("the default service account", lambda: cluster.kubectl(
        "get", "serviceaccount", "default", check=False).returncode == 0, 60, interval=0.5)


def ready(cluster) -> bool:
    """Whether the cluster's Node says Ready."""
    cp = cluster.kubectl("get", "node", cluster.node, "-o", "json", check=False)
    if cp.returncode != 0:
        return False
    conditions = json.loads(cp.stdout).get("status", {}).get("conditions", [])
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
