# SPDX-License-Identifier: Apache-2.0
"""What a cluster runs beside Kubernetes itself, for the workloads that
need it, on the control plane's host as the other controllers, each a
program of the cluster (its pid in the record, stopped by `down`):

- "dns", the cluster DNS: CoreDNS (tests/k8s/components/coredns)
  answering cluster.local from the API server on each node's host
  address, which each kubelet gives its pods as their name server;
- "jobset", the JobSet controller (sigs.k8s.io/jobset, built from its
  module), on which Kubeflow Trainer runs its jobs, with its CRD, and its
  admission webhooks served on 127.0.0.1 with a certificate of the
  cluster's CA (the API server calls them by URL: there is no Service in
  front of a program on the host);
- "trainer", Kubeflow Trainer's controller (github.com/kubeflow/trainer,
  its packages in a program of ours, tests/k8s/components/trainer), which
  turns a TrainJob into a JobSet (it needs "jobset"), with its CRDs and
  its validating webhooks served the same way;
- "training-operator", Kubeflow's training operator v1 (its PyTorchJob
  controller, tests/k8s/components/training-operator) with the
  PyTorchJob CRD."""

from __future__ import annotations

import base64
import os
import random
import socket
import struct

import yaml

from clusterutil import ClusterError, free_port, http_ok, wait_for

DOMAIN = "cluster.local"
DNS_PORT = 53


# ---- the cluster DNS ----------------------------------------------------------

def corefile(addresses: list[str], kubeconfig: str) -> str:
    """CoreDNS' configuration: the cluster's names (Services, their pods'
    hostnames, pods by address) on `addresses`; any other name is refused
    (SERVFAIL: the cluster reaches nothing outside)."""
    return (f".:{DNS_PORT} {{\n"
            f"    bind {' '.join(addresses)}\n"
            "    errors\n"
            f"    kubernetes {DOMAIN} in-addr.arpa ip6.arpa {{\n"
            f"        kubeconfig {kubeconfig}\n"
            "        pods insecure\n"
            "        fallthrough in-addr.arpa ip6.arpa\n"
            "    }\n"
            "}\n")


def start_dns(cluster, creds) -> None:
    """CoreDNS on every node's host address, once it answers for the API
    server's own Service. CoreDNS binds with SO_REUSEPORT: another program
    on the port (a CoreDNS left by an earlier cluster) would silently take
    a share of the queries, so the port must be free first."""
    addresses = [node.host_address for node in cluster.nodes]
    for address in addresses:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                s.bind((address, DNS_PORT))
            except OSError as e:
                raise ClusterError(f"the cluster DNS: UDP {address}:{DNS_PORT} is taken "
                                   f"({e.strerror})") from e
    path = os.path.join(cluster.work, "Corefile")
    with open(path, "w") as f:
        f.write(corefile(addresses, creds.client("coredns", "/O=system:masters/CN=coredns")))
    log = cluster.spawn("coredns", [os.path.join(cluster.bin, "coredns"), "-conf", path])
    name = f"kubernetes.default.svc.{DOMAIN}"
    wait_for(f"CoreDNS answering {name}", lambda: resolve(addresses[0], name), 60, interval=0.5,
             log=log, proc=cluster.procs["coredns"])


def resolve(server: str, name: str, timeout: float = 1.0) -> list[str]:
    """The IPv4 addresses `server` gives for `name` (an A query over UDP),
    [] when it gives none or does not answer."""
    query_id = random.randrange(1 << 16)
    question = b"".join(bytes([len(label)]) + label.encode() for label in name.split(".")) + b"\0"
    packet = struct.pack("!HHHHHH", query_id, 0x0100, 1, 0, 0, 0) + question + struct.pack("!HH", 1, 1)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(timeout)
        try:
            s.sendto(packet, (server, DNS_PORT))
            reply = s.recv(4096)
        except OSError:
            return []
    got_id, flags, _, answers, _, _ = struct.unpack("!HHHHHH", reply[:12])
    if got_id != query_id or flags & 0x000F:
        return []
    at = 12 + len(question) + 4
    addresses = []
    for _ in range(answers):
        at = _skip_name(reply, at)
        kind, _, _, length = struct.unpack("!HHIH", reply[at:at + 10])
        at += 10
        if kind == 1 and length == 4:
            addresses.append(socket.inet_ntoa(reply[at:at + 4]))
        at += length
    return addresses


def _skip_name(reply: bytes, at: int) -> int:
    """Past the (possibly compressed) name at `at`."""
    while True:
        length = reply[at]
        if length == 0:
            return at + 1
        if length & 0xC0 == 0xC0:
            return at + 2
        at += 1 + length


# ---- JobSet -------------------------------------------------------------------

def _established(cluster, crd: str) -> None:
    """Waits for the API server to serve the CRD's kind."""
    def served() -> bool:
        got = cluster.kubectl("get", "crd", crd, "-o",
                              "jsonpath={.status.conditions[?(@.type=='Established')].status}", check=False)
        return got.stdout.strip() == "True"
    wait_for(f"the CRD {crd} established", served, 60, interval=0.3)


def _serving_certificate(cluster, creds, name: str) -> str:
    """A directory with tls.crt and tls.key for 127.0.0.1, of the
    cluster's CA, for the addon `name`'s webhooks; returns it."""
    certs = os.path.join(cluster.work, f"{name}-certs")
    os.makedirs(certs, exist_ok=True)
    pair = creds.pki.issue(f"{name}-webhook", f"/CN={name}-webhook", server=True, ips=("127.0.0.1",))
    os.replace(pair.cert, os.path.join(certs, "tls.crt"))
    os.replace(pair.key, os.path.join(certs, "tls.key"))
    return certs


def _webhooks_by_url(cluster, creds, name: str, port: int) -> None:
    """Applies the addon `name`'s webhook configurations (`<name>-webhooks.yaml`
    of the components), each named `<name>-...` and calling it on
    127.0.0.1:`port` by URL under the cluster's CA, in place of its
    Service."""
    with open(creds.pki.ca.cert, "rb") as f:
        ca = base64.b64encode(f.read()).decode()
    with open(os.path.join(cluster.bin, f"{name}-webhooks.yaml")) as f:
        webhooks = [d for d in yaml.safe_load_all(f) if d]
    for doc in webhooks:
        doc["metadata"]["name"] = f"{name}-" + doc["metadata"]["name"]
        for hook in doc["webhooks"]:
            path = hook["clientConfig"]["service"]["path"]
            hook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": ca}
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(webhooks))


def start_jobset(cluster, creds) -> None:
    """The JobSet controller with its CRD and webhooks, once it is ready."""
    b = cluster.bin
    cluster.kubectl("apply", "--server-side", "-f", os.path.join(b, "jobset-crd.yaml"))
    _established(cluster, "jobsets.jobset.x-k8s.io")
    port, health = free_port(), free_port()
    certs = _serving_certificate(cluster, creds, "jobset")
    config = os.path.join(cluster.work, "jobset-config.yaml")
    with open(config, "w") as f:
        yaml.safe_dump({
            "apiVersion": "config.jobset.x-k8s.io/v1alpha1", "kind": "Configuration",
            "leaderElection": {"leaderElect": False},
            "internalCertManagement": {"enable": False},
            "webhook": {"host": "127.0.0.1", "port": port, "certDir": certs},
            "metrics": {"bindAddress": "0"},
            "health": {"healthProbeBindAddress": f"127.0.0.1:{health}"},
        }, f)
    log = cluster.spawn("jobset-controller", [os.path.join(b, "jobset"), "--config", config],
                        env={"KUBECONFIG": creds.client("jobset", "/O=system:masters/CN=jobset")})
    wait_for("the JobSet controller ready", lambda: http_ok("127.0.0.1", health, "/readyz"), 60,
             interval=0.5, log=log, proc=cluster.procs["jobset-controller"])
    _webhooks_by_url(cluster, creds, "jobset", port)


# ---- Kubeflow Trainer -----------------------------------------------------------

def start_trainer(cluster, creds) -> None:
    """Kubeflow Trainer's controller (a TrainJob becomes a JobSet: start
    "jobset" first) with its CRDs and validating webhooks, served on
    127.0.0.1 with a certificate of the cluster's CA, once it is ready."""
    b = cluster.bin
    cluster.kubectl("apply", "--server-side", "-f", os.path.join(b, "trainer-crds.yaml"))
    # The controller maps its kinds when it starts.
    for crd in ("trainjobs", "clustertrainingruntimes", "trainingruntimes"):
        _established(cluster, f"{crd}.trainer.kubeflow.org")
    port, health = free_port(), free_port()
    certs = _serving_certificate(cluster, creds, "trainer")
    log = cluster.spawn("trainer-controller", [
        os.path.join(b, "trainer"), "--webhook-host", "127.0.0.1", "--webhook-port", str(port),
        "--cert-dir", certs, "--health-probe-bind-address", f"127.0.0.1:{health}"],
        env={"KUBECONFIG": creds.client("trainer", "/O=system:masters/CN=kubeflow-trainer")})
    wait_for("Kubeflow Trainer's controller ready", lambda: http_ok("127.0.0.1", health, "/readyz"),
             60, interval=0.5, log=log, proc=cluster.procs["trainer-controller"])
    _webhooks_by_url(cluster, creds, "trainer", port)


# ---- Kubeflow's training operator v1 ----------------------------------------------

# The image the workers' init container runs: the tests' training image
# (training_image.sh's name), which each node already has.
TRAINING_IMAGE = "localhost/rocenet-training:e2e"

# The workers' init container: it waits until the master's name resolves,
# as the operator's own does with nslookup (which that image has not).
INIT_CONTAINER = """- name: init-pytorch
  image: {{.InitContainerImage}}
  imagePullPolicy: IfNotPresent
  resources:
    limits: {cpu: 100m, memory: 64Mi}
  command:
  - sh
  - -c
  - for i in $(seq {{.MaxTries}}); do getent hosts {{.MasterAddr}} && exit 0; sleep 1; done; exit 1
"""


def start_training_operator(cluster, creds) -> None:
    """Kubeflow's training operator v1 (its PyTorchJob controller, without
    webhooks) with the PyTorchJob CRD, once it is ready."""
    b = cluster.bin
    cluster.kubectl("apply", "--server-side", "-f", os.path.join(b, "pytorchjob-crd.yaml"))
    _established(cluster, "pytorchjobs.kubeflow.org")
    health = free_port()
    template = os.path.join(cluster.work, "pytorch-init-container.yaml")
    with open(template, "w") as f:
        f.write(INIT_CONTAINER)
    log = cluster.spawn("training-operator", [
        os.path.join(b, "training-operator"), "--health-probe-bind-address", f"127.0.0.1:{health}",
        "--pytorch-init-container-image", TRAINING_IMAGE,
        "--pytorch-init-container-template-file", template],
        env={"KUBECONFIG": creds.client("training-operator", "/O=system:masters/CN=training-operator")})
    wait_for("Kubeflow's training operator ready", lambda: http_ok("127.0.0.1", health, "/readyz"),
             60, interval=0.5, log=log, proc=cluster.procs["training-operator"])


ADDONS = {"dns": start_dns, "jobset": start_jobset, "trainer": start_trainer,
          "training-operator": start_training_operator}
