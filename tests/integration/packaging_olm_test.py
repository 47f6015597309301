# SPDX-License-Identifier: Apache-2.0
"""Packaging, the operator bundle for OpenShift's OLM: what
packaging/olm/make-bundle.py builds from the openshift-dra overlay is a valid
registry+v1 bundle by operator-framework/api's own validators (the
checker in tests/olm/bundle-check, built from its pinned module; SKIPPED
without Go); its ClusterServiceVersion carries the version of
CMakeLists.txt, AllNamespaces alone, the CRDs it owns with their status
descriptors, rocenet-controller's Deployment and the RBAC of each
ServiceAccount exactly as the overlay has them, and every image; its CRDs
are the base's files; its annotations and bundle.Dockerfile agree; and the
bundle with what the operator makes (what a bundle cannot carry) is the
overlay, each object in one of them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest
import yaml

from packaging_support import K8S, NODE_SIDES, PKG, REPO, kubectl, one, render

OLM = os.path.join(PKG, "olm")
CRDS = os.path.join(K8S, "base", "crds")
# The overlay the bundle is made from: OpenShift's, with DRA's component.
OPENSHIFT = os.path.join(K8S, "overlays", "openshift-dra")
CHECKER = os.path.join(REPO, "tests", "olm", "bundle-check")
CSV_FILE = "rocenet.clusterserviceversion.yaml"
# The kinds OLM installs from a bundle (operator-registry's
# pkg/lib/bundle/supported_resources.go).
BUNDLE_KINDS = {"ClusterServiceVersion", "CustomResourceDefinition", "Secret", "ClusterRole",
                "ClusterRoleBinding", "ConfigMap", "ServiceAccount", "Service", "Role",
                "RoleBinding", "PrometheusRule", "ServiceMonitor", "PodDisruptionBudget",
                "PriorityClass", "VerticalPodAutoscaler", "ConsoleYAMLSample"}


def aggregated(obj: dict) -> bool:
    """A ClusterRole aggregated into Kubernetes' user-facing roles."""
    return obj["kind"] == "ClusterRole" and any(
        k.startswith("rbac.authorization.k8s.io/aggregate-to-")
        for k in obj["metadata"].get("labels", {}))


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> str:
    out = str(tmp_path_factory.mktemp("olm") / "bundle")
    cp = subprocess.run(["/usr/bin/python3", os.path.join(OLM, "make-bundle.py"),
                         f"--kubectl={kubectl()}", out], capture_output=True, text=True,
                        timeout=120)
    assert cp.returncode == 0, f"make-bundle.py failed:\n{cp.stdout}{cp.stderr}"
    return out


def manifests(bundle: str) -> dict[str, dict]:
    out = {}
    for name in sorted(os.listdir(os.path.join(bundle, "manifests"))):
        with open(os.path.join(bundle, "manifests", name)) as f:
            out[name] = yaml.safe_load(f)
    return out


def the_csv(bundle: str) -> dict:
    return manifests(bundle)[CSV_FILE]


def project_version() -> str:
    with open(os.path.join(REPO, "CMakeLists.txt")) as f:
        return re.search(r"^project\(rocenet VERSION (\S+)", f.read(), re.MULTILINE).group(1)


def rules_by_account(docs: list[dict], binding_kind: str) -> dict[str, list]:
    """The rules of the roles each binding of a kind grants, by ServiceAccount."""
    out: dict[str, list] = {}
    for b in docs:
        if b["kind"] != binding_kind:
            continue
        role = one(docs, b["roleRef"]["kind"], b["roleRef"]["name"])
        for s in b["subjects"]:
            out.setdefault(s["name"], []).extend(role["rules"])
    return out


def schema_has(schema: dict, path: str) -> bool:
    node = schema
    for part in path.split("."):
        node = node.get("properties", {}).get(part)
        if node is None:
            return False
    return True


# --- the bundle's files -----------------------------------------------------------------

def test_bundle_layout_annotations_and_dockerfile(bundle):
    """registry+v1: manifests/ with the CSV and the CRDs (the base's files,
    byte for byte), metadata/annotations.yaml naming the package, the
    channel and the directories, and a bundle.Dockerfile whose labels are
    those annotations and which copies both directories."""
    found = manifests(bundle)
    assert CSV_FILE in found
    crd_files = sorted(f for f in os.listdir(CRDS) if f.endswith(".yaml"))
    for name in crd_files:
        with open(os.path.join(CRDS, name), "rb") as a, \
                open(os.path.join(bundle, "manifests", name), "rb") as b:
            assert a.read() == b.read(), name
    for name, obj in found.items():
        assert obj["kind"] in BUNDLE_KINDS, f"{name}: OLM does not install a {obj['kind']}"
        assert "namespace" not in obj["metadata"], f"{name}: OLM sets the namespace"
    with open(os.path.join(bundle, "metadata", "annotations.yaml")) as f:
        annotations = yaml.safe_load(f)["annotations"]
    prefix = "operators.operatorframework.io.bundle."
    assert annotations[prefix + "mediatype.v1"] == "registry+v1"
    assert annotations[prefix + "manifests.v1"] == "manifests/"
    assert annotations[prefix + "metadata.v1"] == "metadata/"
    assert annotations[prefix + "package.v1"] == "rocenet"
    assert annotations[prefix + "channel.default.v1"] in \
        annotations[prefix + "channels.v1"].split(",")
    assert annotations["com.redhat.openshift.versions"] == "v4.17"
    with open(os.path.join(bundle, "bundle.Dockerfile")) as f:
        dockerfile = f.read()
    labels = dict(re.findall(r"^LABEL (\S+)=(\S+)$", dockerfile, re.MULTILINE))
    assert labels == annotations
    assert re.search(r"^FROM scratch$", dockerfile, re.MULTILINE)
    for directory in ("manifests", "metadata"):
        assert re.search(rf"^COPY {directory} /{directory}/$", dockerfile, re.MULTILINE)


def test_csv_metadata_install_modes_and_owned_crds(bundle):
    """The CSV's version is the project's; AllNamespaces alone (the CRDs,
    the controller's count and the DaemonSet are cluster-wide);
    minKubeVersion is the policy's 1.30; each CRD it owns is in the bundle
    with its served version, a display name, a description and status
    descriptors whose paths are in the CRD's status schema; alm-examples
    holds the example Gaudi policy; the upgrade graph takes any earlier
    version."""
    csv = the_csv(bundle)
    version = project_version()
    assert csv["metadata"]["name"] == f"rocenet.v{version}"
    assert csv["spec"]["version"] == version
    assert csv["spec"]["minKubeVersion"] == "1.30.0"
    modes = {m["type"]: m["supported"] for m in csv["spec"]["installModes"]}
    assert modes == {"OwnNamespace": False, "SingleNamespace": False, "MultiNamespace": False,
                     "AllNamespaces": True}
    crds = {o["metadata"]["name"]: o for o in manifests(bundle).values()
            if o["kind"] == "CustomResourceDefinition"}
    owned = csv["spec"]["customresourcedefinitions"]["owned"]
    assert sorted(o["name"] for o in owned) == sorted(crds)
    for o in owned:
        crd = crds[o["name"]]
        (served,) = [v for v in crd["spec"]["versions"] if v["storage"]]
        assert (o["version"], o["kind"]) == (served["name"], crd["spec"]["names"]["kind"])
        assert o["displayName"] and o["description"], o["name"]
        status = served["schema"]["openAPIV3Schema"]["properties"]["status"]
        paths = [d["path"] for d in o["statusDescriptors"]]
        # The summary a console shows first: conditions, or a triage's phase.
        assert ("conditions" in paths or "phase" in paths) and len(paths) >= 3, o["name"]
        for d in o["statusDescriptors"]:
            assert schema_has(status, d["path"]), f"{o['name']}: no status.{d['path']}"
            assert d["displayName"] and d["x-descriptors"], d
    (example,) = json.loads(csv["metadata"]["annotations"]["alm-examples"])
    # The overlays' default policy, with the device plugin.
    with open(os.path.join(K8S, "base", "node-policy.yaml")) as f:
        assert example == yaml.safe_load(f)
    assert example["spec"]["mode"] == "DevicePlugin"
    assert csv["metadata"]["annotations"]["olm.skipRange"] == f"<{version}"
    assert csv["metadata"]["annotations"]["capabilities"] == "Basic Install"


def test_csv_install_strategy_is_the_overlays_controller(bundle):
    """strategy deployment, holding rocenet-controller's Deployment as the
    openshift overlay renders it (restricted-v2, no fixed UID); the RBAC of
    each ServiceAccount, the controller's and the DaemonSet's, as the
    overlay's bindings grant it, cluster-wide and in the namespace; every
    image of the overlay's pods in relatedImages."""
    csv = the_csv(bundle)
    docs = render(OPENSHIFT)
    install = csv["spec"]["install"]
    assert install["strategy"] == "deployment"
    (dep,) = install["spec"]["deployments"]
    want = one(docs, "Deployment", "rocenet-controller")
    assert dep["name"] == want["metadata"]["name"]
    # The overlay's, and the node side's image in the environment OLM
    # rewrites for a mirror: the operator's own.
    container = dep["spec"]["template"]["spec"]["containers"][0]
    related = [e for e in container["env"] if e["name"] == "RELATED_IMAGE_ROCENET"]
    assert related == [{"name": "RELATED_IMAGE_ROCENET", "value": container["image"]}]
    container["env"].remove(related[0])
    assert dep["spec"] == want["spec"]
    assert "runAsUser" not in dep["spec"]["template"]["spec"]["securityContext"]
    for field, binding in (("clusterPermissions", "ClusterRoleBinding"),
                           ("permissions", "RoleBinding")):
        got = {p["serviceAccountName"]: p["rules"] for p in install["spec"][field]}
        assert got == rules_by_account(docs, binding), field
    assert set(rules_by_account(docs, "ClusterRoleBinding")) == {"rocenet", "rocenet-controller",
                                                                 "rocenet-metrics-scraper"}
    pods = [d["spec"]["template"]["spec"] for d in docs if "template" in d.get("spec", {})]
    images = {c["image"] for p in pods for c in p.get("initContainers", []) + p["containers"]}
    assert {r["image"] for r in csv["spec"]["relatedImages"]} == images
    assert csv["metadata"]["annotations"]["containerImage"] == \
        dep["spec"]["template"]["spec"]["containers"][0]["image"]


def _operator_made(platform: str) -> list[dict]:
    """What rocenet-controller makes at run time on a platform
    (operator/internal/clusterobjects/manifests) and the DaemonSet a
    policy's is made from (operator/internal/nodeset/manifests)."""
    out = []
    internal = os.path.join(REPO, "operator", "internal")
    for package in ("clusterobjects", "nodeset"):
        path = os.path.join(internal, package, "manifests", f"{platform}.yaml")
        with open(path) as f:
            out += [d for d in yaml.safe_load_all(f) if d]
    return out


def test_bundle_and_the_operator_make_the_overlay(bundle):
    """Every object of the openshift-dra overlay, and of its node side, is
    in exactly one place: a bundle manifest (as rendered, less its
    namespace), the CSV (the controller's Deployment, the roles and
    bindings; OLM makes the controller's ServiceAccount; the Namespace, as
    the console makes it, in suggested-namespace-template; the default
    policy, as alm-examples offers it), or what the operator makes (the
    SCC and the admission policies at run time, as rendered; the
    DaemonSet, by a policy, from the node side's, and its ConfigMap):
    nothing is left to apply by hand."""
    docs = render(OPENSHIFT) + render(NODE_SIDES["openshift-dra"])
    in_bundle = {(o["kind"], o["metadata"]["name"]): o for o in manifests(bundle).values()}
    made = {(o["kind"], o["metadata"]["name"]): o for o in _operator_made("openshift")}
    csv = the_csv(bundle)
    in_csv = {("Deployment", d["name"]) for d in csv["spec"]["install"]["spec"]["deployments"]}
    in_csv |= {(d["kind"], d["metadata"]["name"]) for d in docs
               if d["kind"] in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
               and not aggregated(d)}
    template = json.loads(csv["metadata"]["annotations"]["operatorframework.io/suggested-namespace-template"])
    in_csv.add((template["kind"], template["metadata"]["name"]))
    examples = json.loads(csv["metadata"]["annotations"]["alm-examples"])
    in_csv |= {(e["kind"], e["metadata"]["name"]) for e in examples}
    accounts = {p["serviceAccountName"] for field in ("clusterPermissions", "permissions")
                for p in csv["spec"]["install"]["spec"][field]}
    for d in docs:
        k = (d["kind"], d["metadata"]["name"])
        by_policy = d["kind"] == "ConfigMap" and d["metadata"]["name"].startswith("rocenetd-config")
        places = [k in in_bundle, k in made or by_policy, k in in_csv]
        if d["kind"] == "ServiceAccount" and k not in in_bundle:
            places.append(d["metadata"]["name"] in accounts)
        assert places.count(True) == 1, f"{k}: in {places.count(True)} places"
        if d["kind"] == "Namespace":
            assert template == d, template
        if k in made and d["kind"] != "DaemonSet":
            assert made[k] == d, k
        if k in in_bundle and d["kind"] != "CustomResourceDefinition":
            want = json.loads(json.dumps(d))
            want["metadata"].pop("namespace", None)
            assert in_bundle[k] == want, k
    # The operator makes only what a bundle cannot carry.
    assert not {kind for kind, _ in made} & BUNDLE_KINDS, sorted(made)
    # The DaemonSet's account mounts no token by default: the bundle says so.
    assert in_bundle[("ServiceAccount", "rocenet")]["automountServiceAccountToken"] is False
    assert not os.path.exists(os.path.join(OLM, "nodes")), "packaging/olm/nodes: nothing is applied by hand"


# --- operator-framework's validators ---------------------------------------------------

@pytest.fixture(scope="module")
def bundle_check(tmp_path_factory) -> str:
    """tests/olm/bundle-check, built from its own pinned module (the module
    proxy the first time, the module cache after)."""
    go = shutil.which("go") or ("/usr/local/go/bin/go" if os.access("/usr/local/go/bin/go", os.X_OK)
                                else None)
    if not go:
        pytest.skip("go not installed: the bundle checker is built from operator-framework/api")
    cache = os.environ.get("ROCENET_CACHE", "/var/cache/rocenet")
    env = dict(os.environ, GOTOOLCHAIN="local", GOFLAGS="-mod=readonly", CGO_ENABLED="0")
    env.setdefault("GOMODCACHE", os.path.join(cache, "go", "mod"))
    env.setdefault("GOCACHE", os.path.join(cache, "go", "build"))
    out = str(tmp_path_factory.mktemp("bundle-check") / "bundle-check")
    cp = subprocess.run([go, "build", "-o", out, "."], cwd=CHECKER, env=env, capture_output=True,
                        text=True, timeout=1200)
    assert cp.returncode == 0, f"go build tests/olm/bundle-check failed:\n{cp.stderr}"
    return out


def test_bundle_passes_operator_framework_validators(bundle, bundle_check):
    """No error and no warning from the validators of `operator-sdk bundle
    validate` and OperatorHub: the bundle's structure, the CSV, the CRDs,
    OperatorHub's fields, good practices, APIs removed by Kubernetes 1.30."""
    cp = subprocess.run([bundle_check, "--strict", bundle], capture_output=True, text=True,
                        timeout=120)
    assert cp.returncode == 0, f"bundle-check:\n{cp.stdout}{cp.stderr}"
    assert "5 owned CRDs" in cp.stdout, cp.stdout


def test_bundle_check_finds_a_broken_bundle(bundle, bundle_check, tmp_path):
    """The checker is not a rubber stamp: an example of a kind the bundle
    does not own and an owned CRD of a version it lacks are errors."""
    broken = str(tmp_path / "broken")
    shutil.copytree(bundle, broken)
    path = os.path.join(broken, "manifests", CSV_FILE)
    with open(path) as f:
        csv = yaml.safe_load(f)
    csv["metadata"]["annotations"]["alm-examples"] = json.dumps(
        [{"apiVersion": "rocenet.io/v1alpha1", "kind": "RocenetFabric", "metadata": {"name": "x"}}])
    csv["spec"]["customresourcedefinitions"]["owned"][0]["version"] = "v9"
    with open(path, "w") as f:
        yaml.safe_dump(csv, f)
    cp = subprocess.run([bundle_check, broken], capture_output=True, text=True, timeout=120)
    assert cp.returncode == 1, cp.stdout + cp.stderr
    assert "RocenetFabric" in cp.stdout and "v9" in cp.stdout, cp.stdout
