# SPDX-License-Identifier: Apache-2.0
"""The test cluster's control plane, in the host's network namespace: etcd,
kube-apiserver (on API_ADDRESS, the host's end of each node's veth),
kube-controller-manager and kube-scheduler, and the certificates and
kubeconfigs every component and the tests use."""

from __future__ import annotations

import os

import cluster_config as cfg
from clusterutil import free_port, http_ok, wait_for
from pki import Pki

API_ADDRESS = "10.254.0.1"


class Credentials:
    """The cluster's CA, and a kubeconfig for each client it issues."""

    def __init__(self, work: str, server: str):
        self.work = work
        self.server = server
        self.pki = Pki(os.path.join(work, "pki"))

    def client(self, name: str, subject: str) -> str:
        """A kubeconfig for `name`, its certificate's subject `subject`
        ("/O=group/CN=user"); returns its path."""
        pair = self.pki.issue(name, subject)
        path = os.path.join(self.work, f"{name}.kubeconfig")
        with open(path, "w") as f:
            f.write(cfg.kubeconfig(self.server, self.pki.ca.cert, pair.cert, pair.key, name))
        return path


def start(cluster) -> Credentials:
    """Starts the control plane of `cluster` (a testcluster.Cluster) and
    writes its admin kubeconfig; returns the credentials the nodes join
    with."""
    work, b = cluster.work, cluster.bin
    api_port, etcd_port, etcd_peer = (free_port() for _ in range(3))
    server = f"https://{API_ADDRESS}:{api_port}"
    cluster.record["server"] = server
    creds = Credentials(work, server)
    pki = creds.pki
    creds.client("admin", "/O=system:masters/CN=e2e-admin")
    apiserver = pki.issue("apiserver", "/CN=kube-apiserver", server=True,
                          ips=(API_ADDRESS, "127.0.0.1", cfg.SERVICE_IP),
                          dns=("localhost", "kubernetes", "kubernetes.default",
                               "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"))
    to_kubelet = pki.issue("apiserver-kubelet-client",
                           "/O=system:masters/CN=kube-apiserver-kubelet-client")

    log = cluster.spawn("etcd", [
        os.path.join(b, "etcd"), "--data-dir", os.path.join(work, "etcd"),
        "--listen-client-urls", f"http://127.0.0.1:{etcd_port}",
        "--advertise-client-urls", f"http://127.0.0.1:{etcd_port}",
        "--listen-peer-urls", f"http://127.0.0.1:{etcd_peer}",
        "--initial-advertise-peer-urls", f"http://127.0.0.1:{etcd_peer}",
        "--initial-cluster", f"default=http://127.0.0.1:{etcd_peer}",
        "--listen-metrics-urls", f"http://127.0.0.1:{free_port()}",
        "--quota-backend-bytes", str(2 << 30)])
    wait_for("etcd serving", lambda: http_ok("127.0.0.1", etcd_port, "/health"), 30,
             log=log, proc=cluster.procs["etcd"])

    log = cluster.spawn("kube-apiserver", [
        os.path.join(b, "kube-apiserver"),
        "--etcd-servers", f"http://127.0.0.1:{etcd_port}",
        "--bind-address", API_ADDRESS, "--advertise-address", API_ADDRESS,
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
             lambda: cluster.kubectl("get", "--raw", "/readyz", check=False).returncode == 0,
             90, interval=0.5, log=log, proc=cluster.procs["kube-apiserver"])

    cluster.spawn("kube-controller-manager", [
        os.path.join(b, "kube-controller-manager"),
        "--kubeconfig", creds.client("controller-manager", "/CN=system:kube-controller-manager"),
        "--service-account-private-key-file", pki.sa_key,
        "--root-ca-file", pki.ca.cert, "--use-service-account-credentials=true",
        "--leader-elect=false", "--bind-address", "127.0.0.1",
        "--secure-port", str(free_port()), "--controllers", "*"])
    cluster.spawn("kube-scheduler", [
        os.path.join(b, "kube-scheduler"),
        "--kubeconfig", creds.client("scheduler", "/CN=system:kube-scheduler"),
        "--leader-elect=false", "--bind-address", "127.0.0.1",
        "--secure-port", str(free_port())])
    return creds
