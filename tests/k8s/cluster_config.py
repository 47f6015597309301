# SPDX-License-Identifier: Apache-2.0
"""The configuration files of the test cluster: kubeconfigs,
containerd's config, the kubelet's, and the CNI configuration Multus and
the primary network read. Pure: each returns text."""

from __future__ import annotations

import json
import os

# Addresses of the cluster, away from the simulated fabric's 10.200.0.0/16.
SERVICE_CIDR = "10.96.0.0/16"
SERVICE_IP = "10.96.0.1"
POD_CIDR = "10.244.0.0/24"
BRIDGE = "rocenet-e2e0"
SANDBOX_IMAGE = "registry.k8s.io/pause:3.10.1"


def kubeconfig(server: str, ca: str, cert: str, key: str, user: str) -> str:
    return json.dumps({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "e2e", "cluster": {"server": server, "certificate-authority": ca}}],
        "users": [{"name": user, "user": {"client-certificate": cert, "client-key": key}}],
        "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": user}}],
        "current-context": "e2e",
    }, indent=1)


def containerd_config(root: str, state: str, socket: str, cni_conf_dir: str,
                      cni_bin_dirs: list[str]) -> str:
    """containerd 2 (config version 3) for these machines: cgroupfs (PID 1 is
    not systemd), no lowering of oom_score_adj (no CAP_SYS_RESOURCE here),
    no hugetlb controller (only on the cgroup2 mount), Debian's runc."""
    bins = ", ".join(json.dumps(d) for d in cni_bin_dirs)
    return f"""version = 3
root = {json.dumps(root)}
state = {json.dumps(state)}

[grpc]
  address = {json.dumps(socket)}

[plugins]
  # Nothing of the test cluster outside its directory: no /opt/containerd,
  # no /run/nri (no NRI plugins here).
  [plugins.'io.containerd.nri.v1.nri']
    disable = true
  [plugins.'io.containerd.internal.v1.opt']
    path = {json.dumps(os.path.join(root, "opt"))}

  [plugins.'io.containerd.cri.v1.images']
    snapshotter = 'overlayfs'
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = {json.dumps(SANDBOX_IMAGE)}

  [plugins.'io.containerd.cri.v1.runtime']
    restrict_oom_score_adj = true
    disable_hugetlb_controller = true
    enable_cdi = true
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runc'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = 'io.containerd.runc.v2'
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = '/usr/sbin/runc'
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = [{bins}]
      conf_dir = {json.dumps(cni_conf_dir)}

  [plugins.'io.containerd.grpc.v1.cri']
    stream_server_address = '127.0.0.1'
    stream_server_port = '0'
"""


def kubelet_config(ca: str, cert: str, key: str, runtime_socket: str, address: str,
                   port: int, cgroup_root: str = "/", cluster_dns: list[str] | tuple = ()) -> str:
    """The kubelet on a machine with cgroup v1 and no systemd as PID 1,
    serving on the node's `address`, its pods under `cgroup_root`, their
    name servers `cluster_dns` (none: the host's resolv.conf)."""
    return json.dumps({
        "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
        "address": address, "port": port, "readOnlyPort": 0, "healthzPort": 0,
        "authentication": {"x509": {"clientCAFile": ca}, "webhook": {"enabled": True},
                           "anonymous": {"enabled": False}},
        "authorization": {"mode": "Webhook"},
        "tlsCertFile": cert, "tlsPrivateKeyFile": key,
        "cgroupDriver": "cgroupfs", "failCgroupV1": False,
        "containerRuntimeEndpoint": f"unix://{runtime_socket}",
        "clusterDomain": "cluster.local", "clusterDNS": list(cluster_dns),
        "resolvConf": "/etc/resolv.conf",
        # The machine's disk may be fuller than a node's: evict nothing.
        "evictionHard": {"memory.available": "1Mi", "nodefs.available": "1%",
                         "imagefs.available": "1%"},
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "serializeImagePulls": False,
        "syncFrequency": "5s",
        "nodeStatusUpdateFrequency": "4s",
        "shutdownGracePeriod": "0s",
        **({"cgroupRoot": cgroup_root} if cgroup_root != "/" else {}),
    }, indent=1)


def bridge_conflist(ipam_dir: str, subnet: str = POD_CIDR) -> dict:
    """The pods' primary network: a bridge in the node, host-local addresses
    from the node's `subnet`, no masquerading (nothing in iptables to clean
    up)."""
    return {
        "cniVersion": "1.0.0", "name": "e2e-pods",
        "plugins": [
            {"type": "bridge", "bridge": BRIDGE, "isGateway": True, "ipMasq": False,
             "ipam": {"type": "host-local", "dataDir": ipam_dir,
                      "ranges": [[{"subnet": subnet}]],
                      "routes": [{"dst": "0.0.0.0/0"}]}},
            {"type": "loopback"},
        ],
    }


def multus_conf(kubeconfig_path: str, cache_dir: str, ipam_dir: str, subnet: str = POD_CIDR) -> str:
    """Multus' thin plugin as the cluster's CNI configuration, delegating the
    pods' primary network to the bridge and reading extra networks from
    NetworkAttachmentDefinitions; devices allocated by kubelet come from its
    PodResources API (the default socket)."""
    return json.dumps({
        "cniVersion": "1.0.0", "name": "multus-cni-network", "type": "multus",
        "kubeconfig": kubeconfig_path, "cniDir": cache_dir,
        "delegates": [bridge_conflist(ipam_dir, subnet)],
    }, indent=1)
