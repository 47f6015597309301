# SPDX-License-Identifier: Apache-2.0
"""What a cluster runs beside Kubernetes itself, for the workloads that
need it, on the control plane's host as the other controllers: the JobSet
controller (sigs.k8s.io/jobset, built from its module), on which Kubeflow
Trainer runs its jobs, with its CRD, and its admission webhooks served on
127.0.0.1 with a certificate of the cluster's CA (the API server calls
them by URL: there is no Service in front of a program on the host). It
runs as a program of the cluster (its pid in the record, stopped by
`down`)."""

from __future__ import annotations

import base64
import os

import yaml

from clusterutil import free_port, http_ok, wait_for


def _established(cluster, crd: str) -> None:
    """Waits for the API server to serve the CRD's kind."""
    def served() -> bool:
        got = cluster.kubectl("get", "crd", crd, "-o",
                              "jsonpath={.status.conditions[?(@.type=='Established')].status}", check=False)
        return got.stdout.strip() == "True"
    wait_for(f"the CRD {crd} established", served, 60, interval=0.3)


def start_jobset(cluster, creds) -> None:
    """The JobSet controller with its CRD and webhooks, once it is ready."""
    b = cluster.bin
    cluster.kubectl("apply", "--server-side", "-f", os.path.join(b, "jobset-crd.yaml"))
    _established(cluster, "jobsets.jobset.x-k8s.io")
    port, health = free_port(), free_port()
    certs = os.path.join(cluster.work, "jobset-certs")
    os.makedirs(certs, exist_ok=True)
    pair = creds.pki.issue("jobset-webhook", "/CN=jobset-webhook", server=True, ips=("127.0.0.1",))
    os.replace(pair.cert, os.path.join(certs, "tls.crt"))
    os.replace(pair.key, os.path.join(certs, "tls.key"))
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
    with open(creds.pki.ca.cert, "rb") as f:
        ca = base64.b64encode(f.read()).decode()
    with open(os.path.join(b, "jobset-webhooks.yaml")) as f:
        webhooks = [d for d in yaml.safe_load_all(f) if d]
    for doc in webhooks:
        doc["metadata"]["name"] = "jobset-" + doc["metadata"]["name"]
        for hook in doc["webhooks"]:
            path = hook["clientConfig"]["service"]["path"]
            hook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": ca}
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(webhooks))


ADDONS = {"jobset": start_jobset}
