#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Builds rocenet's operator bundle for OpenShift's Operator Lifecycle
Manager (registry+v1) from the manifests of the openshift-dra overlay
(the openshift overlay with DRA's component, whose RBAC a DRA policy's
plugin needs: a policy chooses its mode, the bundle serves both).

  packaging/olm/make-bundle.py [--kubectl=PATH] OUTDIR

OUTDIR gets:

  manifests/rocenet.clusterserviceversion.yaml   the ClusterServiceVersion
  manifests/rocenet.io_*.yaml                    the CRDs, the files of
                                                 packaging/kubernetes/base/crds
  manifests/<name>_<group>_<version>_<kind>.yaml the other objects a bundle
                                                 may carry
  metadata/annotations.yaml                      package, channel, media type
  bundle.Dockerfile                              the bundle image, built with
                                                 OUTDIR as its context

It renders packaging/kubernetes/overlays/openshift-dra with `kubectl kustomize`
and sorts every object into exactly one place, failing on one it does not
know:

  - rocenet-controller's Deployment goes into the CSV's install strategy
    (`spec.install.spec.deployments`);
  - the RBAC of each ServiceAccount (the controller's and the DaemonSet's
    rocenet) goes into the CSV's `clusterPermissions` (ClusterRoleBindings)
    and `permissions` (RoleBindings), from which OLM makes the roles and
    bindings;
  - the CRDs, the ServiceAccount rocenet (it mounts no token by default,
    which an account OLM makes would not say), the metrics Services, the
    ServiceMonitors, the PrometheusRule and the ClusterRoles aggregated
    into Kubernetes' view and edit roles are bundle manifests;
  - the Namespace, with its labels and annotations, is the CSV's
    suggested-namespace-template, which the console creates
    (docs/deploying.md, "OpenShift through OLM"); the overlay's default
    RocenetNodePolicy is the CSV's example (alm-examples), which the
    admin creates. The node side (each policy's DaemonSet and ConfigMaps,
    the admission policies, the SCC, DRA's DeviceClass) is no overlay's:
    the operator makes it (packaging/kubernetes/node).

The version is CMakeLists.txt's project version; the images are the
overlay's (set them there, or in an overlay of your own, before building).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
OVERLAY = os.path.join(REPO, "packaging", "kubernetes", "overlays", "openshift-dra")
CRDS = os.path.join(REPO, "packaging", "kubernetes", "base", "crds")
EXAMPLE_POLICY = os.path.join(REPO, "packaging", "kubernetes", "base", "node-policy.yaml")
PACKAGE = "rocenet"
CHANNEL = "alpha"
NAMESPACE = "rocenet-system"
# The policy's requirements (docs/deploying.md, "The fleet"): Kubernetes
# 1.30, OpenShift 4.17.
MIN_KUBE_VERSION = "1.30.0"
OPENSHIFT_VERSIONS = "v4.17"
# Bundle manifests beside the CSV and the CRDs: kinds OLM installs from a
# bundle (operator-registry's supported resources) that the overlay has.
BUNDLE_KINDS = {"ServiceAccount", "Service", "ServiceMonitor", "PrometheusRule", "PriorityClass"}
# Kinds the bundle does not carry: the console makes the Namespace from
# the CSV's suggested-namespace-template, and the admin the policy the
# CSV's alm-examples offer (the overlays' default one).
OUTSIDE_KINDS = {"Namespace", "RocenetNodePolicy"}
RBAC_KINDS = {"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}
ANNOTATIONS = {
    "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
    "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
    "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
    "operators.operatorframework.io.bundle.package.v1": PACKAGE,
    "operators.operatorframework.io.bundle.channels.v1": CHANNEL,
    "operators.operatorframework.io.bundle.channel.default.v1": CHANNEL,
    # The OpenShift releases whose catalogs may list it: 4.17 and later.
    "com.redhat.openshift.versions": OPENSHIFT_VERSIONS,
}

DESCRIPTION = """\
rocenet runs the RoCE scale-out network of AI clusters: on every node
rocenetd addresses the scale-out ports from LLDP, rocenet-diagd tests them,
the kubelet device plugin hands them to pods, and the node reporter writes
each node's `RocenetNode` and its Node condition `ScaleOutNetworkReady`.
rocenet-controller, which this operator runs, counts them all in the one
`RocenetCluster`, named `cluster`.

Install the operator into the namespace `rocenet-system`, for all
namespaces, then create a `RocenetNodePolicy` (the example holds a Gaudi
one): the operator makes each policy's node side, a DaemonSet on the
nodes it selects, and the SecurityContextConstraints and admission
policies that node side runs under.
"""

# The status fields the console shows for each CRD (x-descriptors from
# OLM's descriptor list).
STATUS_DESCRIPTORS = {
    "RocenetCluster": [
        ("conditions", "Conditions", "Available, Progressing and Degraded.",
         ["urn:alm:descriptor:io.kubernetes.conditions"]),
        ("readyNodes", "Ready nodes", "Ready nodes of the target, as ready/target.",
         ["urn:alm:descriptor:text"]),
        ("readyPorts", "Ready ports", "Healthy ports of all, on the target nodes.",
         ["urn:alm:descriptor:text"]),
        ("degradedNodeCount", "Degraded nodes", "Target nodes that are not ready.",
         ["urn:alm:descriptor:text"]),
        ("staleNodes", "Stale nodes", "Target nodes whose reporter stopped writing.",
         ["urn:alm:descriptor:text"]),
        ("excludedNodes", "Excluded nodes", "RocenetNodes whose Node is NotReady or gone.",
         ["urn:alm:descriptor:text"]),
        ("missingNodeCount", "Missing nodes", "Nodes rocenet should run on that never reported.",
         ["urn:alm:descriptor:text"]),
        ("version", "Version", "The newest rocenet version and how many nodes run it.",
         ["urn:alm:descriptor:text"]),
    ],
    "RocenetTriage": [
        ("phase", "Phase", "Pending, Running, Succeeded, Failed, Inconclusive or Error.",
         ["urn:alm:descriptor:text"]),
        ("message", "Message", "What the last run found, or why it could not run.",
         ["urn:alm:descriptor:text"]),
        ("nodeCount", "Nodes", "The nodes of the last run.", ["urn:alm:descriptor:text"]),
        ("suspectCount", "Suspects", "What explains the failures: ports, nodes, leaves, rails.",
         ["urn:alm:descriptor:text"]),
        ("completionTime", "Completed", "When the last run ended.", ["urn:alm:descriptor:text"]),
    ],
    "RocenetNodePolicy": [
        ("conditions", "Conditions", "Ready, Progressing and Degraded.",
         ["urn:alm:descriptor:io.kubernetes.conditions"]),
        ("matchedNodes", "Matched nodes", "The nodes the policy holds.",
         ["urn:alm:descriptor:text"]),
        ("updatedNodes", "Updated nodes", "Held nodes that run the policy's current revision.",
         ["urn:alm:descriptor:text"]),
        ("readyNodes", "Ready nodes", "Held nodes whose rocenet is ready.",
         ["urn:alm:descriptor:text"]),
        ("contestedNodeCount", "Contested nodes", "Nodes the policy selects that an older "
         "policy holds.", ["urn:alm:descriptor:text"]),
    ],
    "RocenetNetwork": [
        ("conditions", "Conditions", "Ready and Degraded.",
         ["urn:alm:descriptor:io.kubernetes.conditions"]),
        ("namespaceCount", "Namespaces", "The namespaces the network is in.",
         ["urn:alm:descriptor:text"]),
        ("conflictingNamespaces", "Conflicting namespaces",
         "Selected namespaces whose NetworkAttachmentDefinition of that name is not rocenet's.",
         ["urn:alm:descriptor:text"]),
    ],
    "RocenetNode": [
        ("conditions", "Conditions", "Ready: every scale-out port of the node healthy.",
         ["urn:alm:descriptor:io.kubernetes.conditions"]),
        ("readyPorts", "Ready ports", "Healthy ports of all, as healthy/all.",
         ["urn:alm:descriptor:text"]),
        ("downPorts", "Down ports", "The ports not healthy, each with its first condition.",
         ["urn:alm:descriptor:text"]),
        ("readyRails", "Ready rails", "Rails whose every port is healthy, of all.",
         ["urn:alm:descriptor:text"]),
        ("validation.stage", "Validated", "The highest diagnostics stage passed in the last 24 "
         "hours.", ["urn:alm:descriptor:text"]),
        ("version", "Version", "rocenet's version on the node.", ["urn:alm:descriptor:text"]),
        ("heartbeatTime", "Heartbeat", "When the node's reporter last wrote it.",
         ["urn:alm:descriptor:text"]),
    ],
}
DISPLAY = {
    "RocenetCluster": ("rocenet cluster", "The whole scale-out fabric at a glance: nodes and "
                       "ports ready, each rail, the nodes that are not ready and why, the "
                       "versions during a rollout. One object, named cluster, kept by "
                       "rocenet-controller."),
    "RocenetNode": ("rocenet node", "One node's scale-out network as rocenetd sees it: every "
                    "port, its rail, state, address, switch and conditions. Written by that "
                    "node's reporter alone."),
    "RocenetNodePolicy": ("rocenet node policy", "rocenet on a group of nodes: which nodes, "
                          "the device plugin, DRA or the host, every setting of rocenetd, and "
                          "how a change rolls out, in waves that follow the leaf switches. "
                          "rocenet-controller makes the policy's DaemonSet and configuration."),
    "RocenetNetwork": ("rocenet network", "The secondary network training jobs join for their "
                       "scale-out ports: rocenet-controller keeps its "
                       "NetworkAttachmentDefinition in every namespace its selector picks."),
    "RocenetTriage": ("rocenet triage", "A triage run over the scale-out network of nodes "
                      "chosen by name, label selector or job: rocenet-controller runs it from "
                      "one of them and writes the plan, each rail's figures, the suspects and "
                      "what it did to the validation labels."),
}


def project_version() -> str:
    with open(os.path.join(REPO, "CMakeLists.txt")) as f:
        m = re.search(r"^project\(rocenet VERSION (\d+\.\d+\.\d+)", f.read(), re.MULTILINE)
    if not m:
        sys.exit("make-bundle: no `project(rocenet VERSION x.y.z` in CMakeLists.txt")
    return m.group(1)


def render(kubectl: str) -> list[dict]:
    cp = subprocess.run([kubectl, "kustomize", OVERLAY], capture_output=True, text=True)
    if cp.returncode != 0:
        sys.exit(f"make-bundle: kubectl kustomize {OVERLAY} failed:\n{cp.stderr}")
    return [d for d in yaml.safe_load_all(cp.stdout) if d]


def key(obj: dict) -> str:
    return f"{obj['kind']}/{obj['metadata']['name']}"


def aggregated(obj: dict) -> bool:
    """A ClusterRole that Kubernetes aggregates into its user-facing roles
    (view, edit, admin, cluster-reader): bound to no account of rocenet's,
    so a bundle manifest rather than CSV permissions."""
    return obj["kind"] == "ClusterRole" and any(
        k.startswith("rbac.authorization.k8s.io/aggregate-to-")
        for k in obj["metadata"].get("labels", {}))


def permissions(docs: list[dict]) -> tuple[list[dict], list[dict], set[str]]:
    """The CSV's clusterPermissions and permissions: the rules of every role
    bound to a ServiceAccount of the namespace, by account (sorted), and the
    roles and bindings so used."""
    roles = {key(d): d for d in docs if d["kind"] in ("ClusterRole", "Role") and not aggregated(d)}
    cluster: dict[str, list] = {}
    local: dict[str, list] = {}
    used: set[str] = set()
    for b in docs:
        if b["kind"] not in ("ClusterRoleBinding", "RoleBinding"):
            continue
        subjects = b["subjects"]
        if len(subjects) != 1 or subjects[0]["kind"] != "ServiceAccount" \
                or subjects[0]["namespace"] != NAMESPACE:
            sys.exit(f"make-bundle: {key(b)} binds {subjects}, not one ServiceAccount of "
                     f"{NAMESPACE}: OLM binds roles to the CSV's accounts only")
        role = roles[f"{b['roleRef']['kind']}/{b['roleRef']['name']}"]
        into = cluster if b["kind"] == "ClusterRoleBinding" else local
        into.setdefault(subjects[0]["name"], []).extend(role["rules"])
        used.update({key(b), key(role)})
    unused = set(roles) - used
    if unused:
        sys.exit(f"make-bundle: roles bound to no ServiceAccount: {sorted(unused)}")

    def listed(by: dict[str, list]) -> list[dict]:
        return [{"serviceAccountName": sa, "rules": rules} for sa, rules in sorted(by.items())]
    return listed(cluster), listed(local), used


def owned_crds(crds: list[dict]) -> list[dict]:
    out = []
    for crd in sorted(crds, key=lambda c: c["spec"]["names"]["kind"]):
        kind = crd["spec"]["names"]["kind"]
        # The storage version: the one every object is kept in (a CRD may
        # serve several while it converts between them).
        (version,) = [v["name"] for v in crd["spec"]["versions"] if v.get("storage")]
        display, description = DISPLAY[kind]
        out.append({
            "name": crd["metadata"]["name"], "version": version, "kind": kind,
            "displayName": display, "description": description,
            # No spec descriptors: RocenetNode and RocenetCluster are status
            # written by rocenet's programs; a RocenetTriage's spec is edited
            # as YAML.
            "specDescriptors": [],
            "statusDescriptors": [{"path": p, "displayName": d, "description": text,
                                   "x-descriptors": x}
                                  for p, d, text, x in STATUS_DESCRIPTORS[kind]],
        })
    return out


def images(docs: list[dict]) -> list[dict]:
    """relatedImages: every image a pod of the overlay runs, by a name each."""
    found = set()
    for d in docs:
        spec = d.get("spec", {}).get("template", {}).get("spec", {})
        for c in spec.get("initContainers", []) + spec.get("containers", []):
            found.add(c["image"])
    return [{"name": re.split(r"[:@]", img.rsplit("/", 1)[-1])[0].lower(), "image": img}
            for img in sorted(found)]


def csv(version: str, docs: list[dict], crds: list[dict]) -> tuple[dict, set[str]]:
    deployments = [d for d in docs if d["kind"] == "Deployment"]
    if [d["metadata"]["name"] for d in deployments] != ["rocenet-controller"]:
        sys.exit(f"make-bundle: want the one Deployment rocenet-controller, got "
                 f"{[key(d) for d in deployments]}")
    (dep,) = deployments
    cluster, local, used = permissions(docs)
    (namespace,) = [{k: v for k, v in d.items() if k in ("apiVersion", "kind", "metadata")}
                    for d in docs if d["kind"] == "Namespace"]
    controller_image = dep["spec"]["template"]["spec"]["containers"][0]["image"]
    # The node side runs the operator's image (one image holds every
    # program), named in the environment OLM rewrites for a mirror.
    dep = json.loads(json.dumps(dep))
    container = dep["spec"]["template"]["spec"]["containers"][0]
    container["env"] = [e for e in container.get("env", []) if e["name"] != "RELATED_IMAGE_ROCENET"] + [
        {"name": "RELATED_IMAGE_ROCENET", "value": controller_image}]
    # What the console offers to create: the example Gaudi policy.
    with open(EXAMPLE_POLICY) as f:
        example = yaml.safe_load(f)
    out = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {
            "name": f"{PACKAGE}.v{version}",
            "annotations": {
                "alm-examples": json.dumps([example], indent=2),
                # The upgrade graph: this version replaces any earlier one.
                "olm.skipRange": f"<{version}",
                "capabilities": "Basic Install",
                "categories": "Networking",
                "containerImage": controller_image,
                "description": "RoCE scale-out network of AI clusters: the fleet's status "
                               "from every node's scale-out ports.",
                "operatorframework.io/suggested-namespace": NAMESPACE,
                # The namespace as the overlay makes it (its Pod Security
                # and SCC labels, its node selector), which the console
                # creates.
                "operatorframework.io/suggested-namespace-template": json.dumps(namespace),
                "support": "rocenet maintainers",
                # What OpenShift's console asks of an operator.
                "features.operators.openshift.io/disconnected": "false",
                "features.operators.openshift.io/fips-compliant": "false",
                "features.operators.openshift.io/proxy-aware": "false",
                "features.operators.openshift.io/cnf": "false",
                "features.operators.openshift.io/cni": "true",
                "features.operators.openshift.io/csi": "false",
                "features.operators.openshift.io/tls-profiles": "false",
                "features.operators.openshift.io/token-auth-aws": "false",
                "features.operators.openshift.io/token-auth-azure": "false",
                "features.operators.openshift.io/token-auth-gcp": "false",
            },
        },
        "spec": {
            "displayName": "rocenet",
            "description": DESCRIPTION,
            "version": version,
            "minKubeVersion": MIN_KUBE_VERSION,
            "maturity": CHANNEL,
            "provider": {"name": "rocenet"},
            "maintainers": [{"name": "rocenet maintainers", "email": "maintainers@rocenet.invalid"}],
            "links": [{"name": "Deploying", "url": "https://rocenet.invalid/docs/deploying.md"}],
            "keywords": ["roce", "rdma", "gaudi", "scale-out", "network", "cni"],
            # AllNamespaces alone: the CRDs are cluster-scoped, the controller
            # counts every node, and the DaemonSet and the reporter's policy
            # are cluster-wide; there is nothing to scope to a namespace.
            "installModes": [
                {"type": "OwnNamespace", "supported": False},
                {"type": "SingleNamespace", "supported": False},
                {"type": "MultiNamespace", "supported": False},
                {"type": "AllNamespaces", "supported": True},
            ],
            "customresourcedefinitions": {"owned": owned_crds(crds)},
            "install": {
                "strategy": "deployment",
                "spec": {
                    "deployments": [{"name": dep["metadata"]["name"],
                                     "label": dep["metadata"].get("labels", {}),
                                     "spec": dep["spec"]}],
                    "clusterPermissions": cluster,
                    "permissions": local,
                },
            },
            "relatedImages": images(docs + [dep]),
        },
    }
    return out, used | {key(dep)}


def manifest_name(obj: dict) -> str:
    """operator-sdk's file names: <name>_<group>_<version>_<kind>.yaml."""
    group, _, version = obj["apiVersion"].rpartition("/")
    parts = [obj["metadata"]["name"]] + ([group] if group else []) + [version, obj["kind"].lower()]
    return "_".join(parts) + ".yaml"


def strip(obj: dict) -> dict:
    """A namespaced object as a bundle holds it: OLM puts it into the
    operator's namespace."""
    out = json.loads(json.dumps(obj))
    out["metadata"].pop("namespace", None)
    return out


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (the description, alm-examples) as literal
    blocks, as people write them."""


_Dumper.add_representer(str, lambda dumper, data: dumper.represent_scalar(
    "tag:yaml.org,2002:str", data, style="|" if "\n" in data else None))


def dump(path: str, obj: dict) -> None:
    with open(path, "w") as f:
        yaml.dump(obj, f, Dumper=_Dumper, sort_keys=False, width=100)


def build(out: str, kubectl: str) -> None:
    version = project_version()
    docs = render(kubectl)
    crd_files = sorted(f for f in os.listdir(CRDS) if f.endswith(".yaml"))
    crds = []
    for name in crd_files:
        with open(os.path.join(CRDS, name)) as f:
            crds.append(yaml.safe_load(f))
    rendered_crds = {d["metadata"]["name"] for d in docs if d["kind"] == "CustomResourceDefinition"}
    if rendered_crds != {c["metadata"]["name"] for c in crds}:
        sys.exit(f"make-bundle: the overlay's CRDs {sorted(rendered_crds)} are not {CRDS}'s")
    the_csv, in_csv = csv(version, docs, crds)

    if os.path.exists(out):
        shutil.rmtree(out)
    manifests, metadata = os.path.join(out, "manifests"), os.path.join(out, "metadata")
    os.makedirs(manifests)
    os.makedirs(metadata)
    dump(os.path.join(manifests, f"{PACKAGE}.clusterserviceversion.yaml"), the_csv)
    for name in crd_files:
        shutil.copyfile(os.path.join(CRDS, name), os.path.join(manifests, name))
    outside, unknown = [], []
    for d in docs:
        if d["kind"] == "CustomResourceDefinition" or key(d) in in_csv:
            continue
        if d["kind"] == "ServiceAccount" and d["metadata"]["name"] != "rocenet":
            # OLM makes the CSV's other accounts; rocenet says it mounts no
            # token, so the bundle carries it.
            continue
        if d["kind"] in BUNDLE_KINDS or aggregated(d):
            dump(os.path.join(manifests, manifest_name(d)), strip(d))
        elif d["kind"] in OUTSIDE_KINDS:
            outside.append(key(d))
        else:
            unknown.append(key(d))
    if unknown:
        sys.exit(f"make-bundle: neither in the bundle nor applied outside it: {sorted(unknown)}")
    with open(os.path.join(metadata, "annotations.yaml"), "w") as f:
        yaml.safe_dump({"annotations": ANNOTATIONS}, f, sort_keys=False)
    with open(os.path.join(out, "bundle.Dockerfile"), "w") as f:
        f.write("# rocenet's operator bundle (packaging/olm/make-bundle.py):\n"
                f"#   podman build -f bundle.Dockerfile -t <registry>/rocenet-bundle:v{version} .\n"
                "FROM scratch\n\n")
        for k, v in ANNOTATIONS.items():
            f.write(f"LABEL {k}={v}\n")
        f.write("\nCOPY manifests /manifests/\nCOPY metadata /metadata/\n")
    print(f"bundle {PACKAGE}.v{version} in {out}: {len(os.listdir(manifests))} manifests; "
          f"made by the operator or the console: {', '.join(sorted(outside))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kubectl", default=os.environ.get("KUBECTL", "kubectl"),
                        help="the kubectl whose kustomize renders the overlay (default: $KUBECTL, "
                             "else kubectl)")
    parser.add_argument("out", help="the bundle's directory (replaced)")
    args = parser.parse_args()
    build(args.out, args.kubectl)


if __name__ == "__main__":
    main()
