# SPDX-License-Identifier: Apache-2.0
"""The Helm chart's fleet objects are the kustomize overlays': its CRDs,
the reporter's and the controller's RBAC, admission policies and
Deployment, for each overlay's settings, and that they follow the
release's name and namespace (packaging_fleet_test.py checks the
overlays themselves)."""

from __future__ import annotations

import glob
import os
import re

import pytest
import yaml

from packaging_support import (
    CHART,
    CRD_NAMES,
    CRDS,
    NODE_POLICY_LABEL_POLICY,
    NODE_STATUS_POLICY,
    REPORTER_POLICY,
    RESOURCESLICE_POLICY,
    bound_to,
    containers,
    controller,
    helm_template,
    one,
    system,
    volumes,
)
from packaging_support import helm as run_helm

# --- the Helm chart -------------------------------------------------------------------

# The fleet's objects the chart makes as the base does (release rocenet),
# by kind and name; the controller's are left out by controller.enabled=false.
CONTROLLER_OBJECTS = {("ServiceAccount", "rocenet-controller"), ("ClusterRole", "rocenet-controller"),
                      ("ClusterRoleBinding", "rocenet-controller"),
                      ("Role", "rocenet-controller-leader-election"),
                      ("RoleBinding", "rocenet-controller-leader-election"),
                      ("Role", "rocenet-controller-triage"),
                      ("RoleBinding", "rocenet-controller-triage"),
                      ("Role", "rocenet-controller-nodes"),
                      ("RoleBinding", "rocenet-controller-nodes"),
                      ("Role", "rocenet-controller-node-policies"),
                      ("RoleBinding", "rocenet-controller-node-policies"),
                      ("ValidatingAdmissionPolicy", NODE_POLICY_LABEL_POLICY),
                      ("ValidatingAdmissionPolicyBinding", NODE_POLICY_LABEL_POLICY),
                      ("Deployment", "rocenet-controller"),
                      ("PriorityClass", "rocenet-triage-holder"),
                      ("ValidatingAdmissionPolicy", "rocenet-triage-pods.rocenet.io"),
                      ("ValidatingAdmissionPolicyBinding", "rocenet-triage-pods.rocenet.io")}
REPORTER_OBJECTS = {("ClusterRole", "rocenet-node-reporter"),
                    ("ClusterRoleBinding", "rocenet-node-reporter"),
                    ("ValidatingAdmissionPolicy", REPORTER_POLICY),
                    ("ValidatingAdmissionPolicyBinding", REPORTER_POLICY),
                    ("ValidatingAdmissionPolicy", NODE_STATUS_POLICY),
                    ("ValidatingAdmissionPolicyBinding", NODE_STATUS_POLICY)}
# With allocation dra.
DRA_OBJECTS = {("ClusterRole", "rocenet-dra-plugin"), ("ClusterRoleBinding", "rocenet-dra-plugin"),
               ("ValidatingAdmissionPolicy", RESOURCESLICE_POLICY),
               ("ValidatingAdmissionPolicyBinding", RESOURCESLICE_POLICY)}
# The chart's values for each overlay it must match.
HELM_SETTINGS = {"generic": [], "generic-dra": ["allocation=dra"],
                 "openshift": ["openshift.enabled=true", "cniBinDir=/var/lib/cni/bin"],
                 "openshift-dra": ["openshift.enabled=true", "cniBinDir=/var/lib/cni/bin",
                                   "allocation=dra"]}


@pytest.fixture(scope="module")
def helm():
    """helm (packaging_support.helm); skips where it cannot be had."""
    run_helm("version")
    return run_helm


def without_pull_policy(container: dict) -> dict:
    # The chart's image.pullPolicy, IfNotPresent: Kubernetes' default for a
    # tagged image, which the kustomize manifests leave to it.
    out = dict(container)
    assert out.pop("imagePullPolicy") == "IfNotPresent", container["name"]
    return out


def test_helm_chart_crds_are_the_bases(helm):
    """The chart's crds/ hold the base's files, byte for byte
    (operator/api/v1alpha1/generate.sh writes both), and helm renders
    them unchanged; no template makes a CRD (helm would upgrade it)."""
    base = sorted(os.path.basename(p) for p in glob.glob(os.path.join(CRDS, "*.yaml")))
    chart = sorted(os.path.basename(p) for p in glob.glob(os.path.join(CHART, "crds", "*")))
    assert chart == base and len(base) == len(CRD_NAMES)
    for name in base:
        with open(os.path.join(CRDS, name), "rb") as a, \
                open(os.path.join(CHART, "crds", name), "rb") as b:
            assert a.read() == b.read(), f"packaging/helm/rocenet/crds/{name} differs from the base's"
    rendered = {d["metadata"]["name"]: d for d in helm_template()
                if d["kind"] == "CustomResourceDefinition"}
    assert set(rendered) == CRD_NAMES
    for name in base:
        with open(os.path.join(CRDS, name)) as f:
            want = yaml.safe_load(f)
        assert rendered[want["metadata"]["name"]] == want
    cp = helm("template", "rocenet", CHART)
    assert cp.returncode == 0 and "CustomResourceDefinition" not in cp.stdout


@pytest.mark.parametrize("overlay_name", sorted(HELM_SETTINGS))
def test_helm_chart_makes_the_overlays_fleet_objects(helm, overlay_name):
    """The reporter's ClusterRole, binding, policy and its binding, and
    rocenet-controller's ServiceAccount, RBAC and Deployment are the
    overlay's (OpenShift's with openshift.enabled): same names, rules,
    subjects, policy and pod; the node-reporter container and the api-token
    volume too."""
    kustomized = system(overlay_name)
    rendered = helm_template(*HELM_SETTINGS[overlay_name])
    objects = REPORTER_OBJECTS | CONTROLLER_OBJECTS
    if overlay_name.endswith("-dra"):
        objects |= DRA_OBJECTS
    for kind, name in sorted(objects):
        want, got = one(kustomized, kind, name), one(rendered, kind, name)
        where = f"{overlay_name}: {kind} {name}"
        assert got["metadata"].get("namespace") == want["metadata"].get("namespace"), where
        for key in ("rules", "roleRef", "subjects", "automountServiceAccountToken"):
            assert got.get(key) == want.get(key), f"{where}: {key}"
        if kind.startswith("ValidatingAdmissionPolicy"):
            assert got["spec"] == want["spec"], where
        if kind == "PriorityClass":
            for key in ("value", "preemptionPolicy", "globalDefault"):
                assert got.get(key) == want.get(key), f"{where}: {key}"
        if kind == "Deployment":
            assert got["spec"]["replicas"] == want["spec"]["replicas"], where
            gt, wt = got["spec"]["template"], want["spec"]["template"]
            assert gt["metadata"].get("annotations") == wt["metadata"].get("annotations"), where
            assert got["spec"]["selector"]["matchLabels"].items() <= gt["metadata"]["labels"].items()
            gspec, wspec = dict(gt["spec"]), dict(wt["spec"])
            # Each selects its own pods: the chart by release, kustomize by
            # its part-of label.
            for spec, labels in ((gspec, gt["metadata"]["labels"]),
                                 (wspec, wt["metadata"]["labels"])):
                (term,) = spec.pop("affinity")["podAntiAffinity"][
                    "preferredDuringSchedulingIgnoredDuringExecution"]
                assert term["podAffinityTerm"]["labelSelector"]["matchLabels"].items() \
                    <= labels.items()
            gspec["containers"] = [without_pull_policy(c) for c in gspec["containers"]]
            assert gspec == wspec, f"{where}:\n  helm      {gspec}\n  kustomize {wspec}"
    kds, hds = one(kustomized, "DaemonSet", "rocenet"), one(rendered, "DaemonSet", "rocenet")
    assert without_pull_policy(containers(hds)["node-reporter"]) == containers(kds)["node-reporter"]
    names = [v["name"] for v in hds["spec"]["template"]["spec"]["volumes"]]
    assert len(names) == len(set(names)), f"{overlay_name}: a volume name twice: {names}"
    assert volumes(hds)["api-token"] == volumes(kds)["api-token"]


def test_helm_chart_policy_confines_the_releases_account(helm):
    """The chart's ServiceAccount is the release's name: its policy, RBAC
    and controller follow the release and its namespace, so a release of
    another name is confined the same way (a dot in the name is a dot)."""
    for release, namespace in (("fabric", "net"), ("roce.a", "rocenet-system")):
        cp = helm("template", release, CHART, "--namespace", namespace)
        assert cp.returncode == 0, cp.stderr
        docs = [d for d in yaml.safe_load_all(cp.stdout) if d]
        policy = one(docs, "ValidatingAdmissionPolicy", f"{release}-node-reporter.rocenet.io")
        (condition,) = policy["spec"]["matchConditions"]
        pattern = re.search(r"matches\('([^']+)'\)", condition["expression"]).group(1)
        assert re.search(pattern, f"system:serviceaccount:{namespace}:{release}")
        assert not re.search(pattern, "system:serviceaccount:rocenet-system:rocenet")
        assert not re.search(pattern, f"system:serviceaccount:{namespace}:{release}-controller")
        if "." in release:
            assert not re.search(pattern, f"system:serviceaccount:{namespace}:"
                                          f"{release.replace('.', 'x')}")
        binding = one(docs, "ValidatingAdmissionPolicyBinding",
                      f"{release}-node-reporter.rocenet.io")
        assert binding["spec"]["policyName"] == policy["metadata"]["name"]
        status = one(docs, "ValidatingAdmissionPolicy", f"{release}-node-status.rocenet.io")
        (condition,) = status["spec"]["matchConditions"]
        pattern = re.search(r"matches\('([^']+)'\)", condition["expression"]).group(1)
        for account in (release, f"{release}-controller"):
            assert re.search(pattern, f"system:serviceaccount:{namespace}:{account}"), account
        assert not re.search(pattern, "system:serviceaccount:rocenet-system:rocenet-controller")
        ds = one(docs, "DaemonSet", release)
        assert ds["spec"]["template"]["spec"]["serviceAccountName"] == release
        assert one(docs, "ClusterRoleBinding", f"{release}-node-reporter")["subjects"] == [
            {"kind": "ServiceAccount", "name": release, "namespace": namespace}]
        assert bound_to(docs, namespace, f"{release}-controller") == {
            f"ClusterRole/{release}-controller", f"Role/{release}-controller-leader-election",
            f"Role/{release}-controller-triage", f"Role/{release}-controller-nodes",
            f"Role/{release}-controller-node-policies"}
        label = one(docs, "ValidatingAdmissionPolicy", f"{release}-node-policy-label.rocenet.io")
        (condition,) = label["spec"]["matchConditions"]
        pattern = re.search(r"matches\('([^']+)'\)", condition["expression"]).group(1)
        assert re.search(pattern, f"system:serviceaccount:{namespace}:{release}-controller")
        assert not re.search(pattern, "system:serviceaccount:rocenet-system:rocenet-controller")
        # A triage run copies the release's DaemonSet; the policy on its
        # pods takes it as parameter in the release's namespace alone.
        triage = one(docs, "ValidatingAdmissionPolicyBinding", f"{release}-triage-pods.rocenet.io")
        assert triage["spec"]["paramRef"]["selector"]["matchLabels"].items() <= \
            ds["metadata"]["labels"].items()
        assert triage["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"] == [
            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": [namespace]}]
        dep = one(docs, "Deployment", f"{release}-controller")
        assert f"--daemonset={release}" in dep["spec"]["template"]["spec"]["containers"][0]["command"]


def test_helm_chart_controller_values(helm):
    """controller.enabled=false leaves out the controller's objects and
    nothing else (the CRDs, the reporter and its policy stay);
    controller.replicas and controller.resources reach the Deployment; the
    NOTES say what runs."""
    on, off = helm_template(), helm_template("controller.enabled=false")
    objects = {(d["kind"], d["metadata"]["name"]) for d in on}
    left = {(d["kind"], d["metadata"]["name"]) for d in off}
    assert objects - left == CONTROLLER_OBJECTS, sorted(objects - left)
    assert not left - objects
    assert REPORTER_OBJECTS <= left
    assert {("CustomResourceDefinition", n) for n in CRD_NAMES} <= left
    assert one(off, "DaemonSet", "rocenet") == one(on, "DaemonSet", "rocenet")

    docs = helm_template("controller.replicas=3", "controller.resources.limits.memory=512Mi")
    dep = controller(docs)
    assert dep["spec"]["replicas"] == 3
    assert dep["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] == \
        {"cpu": "1", "memory": "512Mi"}

    for settings, present, absent in (
            ([], ["deployment/rocenet-controller", "kubectl get rocenetcluster cluster"],
             ["controller.enabled is false"]),
            (["controller.enabled=false"], ["controller.enabled is false"],
             ["deployment/rocenet-controller"])):
        args = ["install", "rocenet", CHART, "--dry-run=client", "--namespace", "rocenet-system"]
        for setting in settings:
            args += ["--set", setting]
        cp = helm(*args)
        assert cp.returncode == 0, cp.stderr
        notes = cp.stdout[cp.stdout.index("NOTES:"):]
        for text in present + ["rocenet-node-reporter.rocenet.io", "kubectl get rocenetnodes"]:
            assert text in notes, f"{settings}: NOTES lack {text!r}:\n{notes}"
        for text in absent:
            assert text not in notes, f"{settings}: NOTES say {text!r}"
