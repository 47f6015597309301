# SPDX-License-Identifier: Apache-2.0
"""rocenet's operator bundle installed as OLM v0 installs a bundle, for
the end-to-end tests: what packaging/olm/make-bundle.py builds becomes
the objects OLM's olm-operator makes from it, written as a kustomization
that the tests apply (and patch) like any overlay.

From the ClusterServiceVersion: a ServiceAccount for each account its
permissions name (unless the bundle carries the account), a Role and
RoleBinding in the operator's namespace for each `permissions` entry, a
ClusterRole and ClusterRoleBinding for each `clusterPermissions` entry,
and the Deployments of its install strategy. From the bundle's other
manifests: the CRDs and the objects OLM installs beside them, namespaced
ones into the operator's namespace. The namespace is the CSV's
suggested-namespace-template, as OpenShift's console creates it. Kinds the
cluster does not serve (the Prometheus Operator's) are left out: OLM
would not install the bundle there, and nothing here scrapes or alerts.

OLM itself (the catalog operator resolving a Subscription against a
catalog that `opm serve` serves, unpacking the bundle image in a Job) does
not run here: this is what it would leave in the cluster.
"""

from __future__ import annotations

import json
import os
import subprocess

import yaml

CSV_KIND = "ClusterServiceVersion"
# Kinds of a bundle a plain Kubernetes without the Prometheus Operator
# does not serve.
UNSERVED = {"ServiceMonitor", "PrometheusRule"}


def build_bundle(root: str, kubectl: str, out: str) -> str:
    """Runs packaging/olm/make-bundle.py into out; returns out."""
    subprocess.run(["/usr/bin/python3", os.path.join(root, "packaging", "olm", "make-bundle.py"),
                    f"--kubectl={kubectl}", out], check=True, capture_output=True, text=True,
                   timeout=300)
    return out


def _manifests(bundle: str) -> list[dict]:
    out = []
    directory = os.path.join(bundle, "manifests")
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name)) as f:
            out += [d for d in yaml.safe_load_all(f) if d]
    return out


def installed_objects(bundle: str) -> tuple[dict, list[dict]]:
    """The CSV, and the objects OLM would make from the bundle."""
    docs = _manifests(bundle)
    (csv,) = [d for d in docs if d["kind"] == CSV_KIND]
    annotations = csv["metadata"]["annotations"]
    namespace_doc = json.loads(annotations["operatorframework.io/suggested-namespace-template"])
    ns = namespace_doc["metadata"]["name"]
    objects = [namespace_doc]
    carried = {d["metadata"]["name"] for d in docs if d["kind"] == "ServiceAccount"}
    strategy = csv["spec"]["install"]["spec"]
    accounts = []
    for cluster_wide, field in ((False, "permissions"), (True, "clusterPermissions")):
        for i, entry in enumerate(strategy.get(field, [])):
            account = entry["serviceAccountName"]
            if account not in carried and account not in accounts:
                accounts.append(account)
            name = f"{csv['metadata']['name']}-{account}-{i}"
            role = {"apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": "ClusterRole" if cluster_wide else "Role",
                    "metadata": {"name": name}, "rules": entry["rules"]}
            binding = {"apiVersion": "rbac.authorization.k8s.io/v1",
                       "kind": "ClusterRoleBinding" if cluster_wide else "RoleBinding",
                       "metadata": {"name": name},
                       "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role["kind"],
                                   "name": name},
                       "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": ns}]}
            if not cluster_wide:
                role["metadata"]["namespace"] = binding["metadata"]["namespace"] = ns
            objects += [role, binding]
    objects += [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": a, "namespace": ns}}
                for a in accounts]
    for d in strategy["deployments"]:
        objects.append({"apiVersion": "apps/v1", "kind": "Deployment",
                        "metadata": {"name": d["name"], "namespace": ns, "labels": d.get("label", {})},
                        "spec": d["spec"]})
    for d in docs:
        if d["kind"] == CSV_KIND or d["kind"] in UNSERVED:
            continue
        if d["kind"] in ("ServiceAccount", "Service", "ConfigMap", "Secret", "Role", "RoleBinding"):
            d = dict(d, metadata=dict(d["metadata"], namespace=ns))
        objects.append(d)
    return csv, objects


def write_kustomization(bundle: str, out: str) -> str:
    """The objects OLM would make from the bundle, as a kustomization in
    out (its directory); returns out."""
    _, objects = installed_objects(bundle)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "installed.yaml"), "w") as f:
        yaml.safe_dump_all(objects, f, sort_keys=False)
    with open(os.path.join(out, "kustomization.yaml"), "w") as f:
        yaml.safe_dump({"resources": ["installed.yaml"]}, f)
    return out
