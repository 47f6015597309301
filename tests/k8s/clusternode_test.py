# SPDX-License-Identifier: Apache-2.0
"""A test cluster node's view of the host's paths (clusternode.Node.path):
node 0's are the host's own; another node's private paths are its own
directory's, what the caller bound is the bound directory, and the rest
(the kernel's, /run/netns) the host's."""

from __future__ import annotations

import json

import pytest

import clusternode
import runc_hybrid


class FakeCluster:
    mount_ns_dir = "/run/rocenet-k8s/mnt"
    bin = "/nonexistent"


def node(index: int, binds: dict | None = None) -> clusternode.Node:
    return clusternode.Node(FakeCluster(), clusternode.spec(index, f"n{index}", None, binds,
                                                            work="/srv/k8s"))


def test_node_0_sees_the_hosts_own_paths():
    n = node(0)
    assert not n.private
    assert n.path("/var/lib/kubelet/device-plugins") == "/var/lib/kubelet/device-plugins"
    assert n.program("kubelet") == "kubelet"
    assert (n.host_address, n.address, n.pod_cidr) == ("10.254.0.1", "10.254.0.2", "10.244.0.0/24")
    assert n.enter(["true"]) == ["nsenter", "--net=/run/netns/rocenet-k8s-node", "--", "true"]


def test_another_node_keeps_its_paths_and_its_binds():
    n = node(2, binds={"/run/sim/sysfs": "/tmp/fabric/n2/sysfs"})
    assert n.private
    assert n.path("/run/rocenet/rocenetd.sock") == "/srv/k8s/nodes/n2/root/run/rocenet/rocenetd.sock"
    # /var/run is /run: the same private directory by either name.
    assert n.path("/var/run/k8s.cni.cncf.io/devinfo") == "/srv/k8s/nodes/n2/root/run/k8s.cni.cncf.io/devinfo"
    assert n.path("/run/sim/sysfs/class/net") == "/tmp/fabric/n2/sysfs/class/net"
    assert n.path("/run/netns/cni-1") == "/run/netns/cni-1"
    # Its pods' logs its own: another kubelet collects the logs of every
    # pod it does not run.
    assert n.path("/var/log/pods/ns_p_uid/c/0.log") == "/srv/k8s/nodes/n2/root/var/log/pods/ns_p_uid/c/0.log"
    assert n.program("kubelet") == "kubelet-n2"
    assert (n.host_address, n.address, n.pod_cidr) == ("10.254.2.1", "10.254.2.2", "10.244.2.0/24")
    assert n.cgroup_parent == "rocenet-k8s-n2"
    assert n.enter(["true"]) == ["nsenter", "--net=/run/netns/rocenet-k8s-node-2",
                                 "--mount=/run/rocenet-k8s/mnt/n2", "--", "true"]


def test_a_thick_multus_node_keeps_its_daemons_token_where_a_pods_is():
    n = clusternode.Node(FakeCluster(), clusternode.spec(2, "n2", None, work="/srv/k8s", multus="thick"))
    assert n.thick_multus
    assert n.path("/run/secrets/kubernetes.io/serviceaccount/token") == \
        "/srv/k8s/nodes/n2/serviceaccount/token"
    assert not node(1).thick_multus


def test_node_0_cannot_run_multus_thick():
    # Its mount namespace is the host's: the token would land on the host.
    with pytest.raises(ValueError, match="thick on a node other than node 0"):
        clusternode.spec(0, "n0", None, work="/srv/k8s", multus="thick")


def test_a_crio_node_has_its_own_socket_and_storage():
    n = clusternode.Node(FakeCluster(), clusternode.spec(2, "n2", None, work="/srv/k8s", runtime="crio"))
    assert n.crio and not node(1).crio
    assert n.runtime_socket == "/srv/k8s/nodes/n2/crio/crio.sock"
    assert node(1).runtime_socket == "/srv/k8s/nodes/n1/containerd/containerd.sock"
    assert n.crio_storage() == ["--root", "/srv/k8s/nodes/n2/crio/root", "--runroot",
                                "/srv/k8s/nodes/n2/crio/run", "--storage-driver", "vfs"]


def test_node_0_cannot_run_crio_nor_an_unknown_runtime():
    # Its mount namespace is the host's: CRI-O's pinned namespaces and
    # storage would be the host's.
    with pytest.raises(ValueError, match="crio on a node other than node 0"):
        clusternode.spec(0, "n0", None, work="/srv/k8s", runtime="crio")
    with pytest.raises(ValueError, match="runtime 'docker'"):
        clusternode.spec(1, "n1", None, work="/srv/k8s", runtime="docker")


def test_the_runc_wrapper_finds_the_bundle_and_drops_only_hugepage_limits(tmp_path):
    assert runc_hybrid.bundle(["create", "--bundle", "/b", "id"]) == "/b"
    assert runc_hybrid.bundle(["--root", "/r", "create", "--bundle=/c", "id"]) == "/c"
    assert runc_hybrid.bundle(["state", "id"]) is None
    config = tmp_path / "config.json"
    spec = {"ociVersion": "1.2.1", "linux": {"resources": {
        "memory": {"limit": 1 << 30}, "hugepageLimits": [{"pageSize": "2MB", "limit": 0}]}}}
    config.write_text(json.dumps(spec))
    assert runc_hybrid.drop_hugepage_limits(str(config))
    assert json.loads(config.read_text()) == {"ociVersion": "1.2.1", "linux": {"resources": {
        "memory": {"limit": 1 << 30}}}}
    assert not runc_hybrid.drop_hugepage_limits(str(config))
