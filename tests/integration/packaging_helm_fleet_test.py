# SPDX-License-Identifier: Apache-2.0
"""The Helm chart installs what the kustomize overlays install: the CRDs,
rocenet-controller with its account, RBAC and Deployment, the node pods'
account and RBAC, the metrics Service and the default RocenetNodePolicy,
for each overlay's settings; under the fixed names the node side
rocenet-controller makes and its admission policies use, whatever the
release's name and namespace; and it refuses, naming where each went, the
values of the charts that installed the node side from files
(packaging_fleet_test.py checks the overlays themselves)."""

from __future__ import annotations

import glob
import os
import re

import pytest
import yaml

from packaging_support import (
    ALL_OVERLAYS,
    CHART,
    CRD_NAMES,
    CRDS,
    REPO,
    bound_to,
    controller,
    helm_template,
    one,
    render,
)
from packaging_support import helm as run_helm

# The chart's values for each overlay it must match.
HELM_SETTINGS = {"generic": [], "generic-dra": ["policy.spec.mode=DRA"],
                 "openshift": ["openshift.enabled=true", "serviceMonitor.enabled=true",
                               "prometheusRule.enabled=true"],
                 "openshift-dra": ["openshift.enabled=true", "serviceMonitor.enabled=true",
                                   "prometheusRule.enabled=true", "policy.spec.mode=DRA"]}
# The controller's objects, which policy.create leaves alone.
CONTROLLER_OBJECTS = {("ServiceAccount", "rocenet-controller"), ("ClusterRole", "rocenet-controller"),
                      ("ClusterRoleBinding", "rocenet-controller"), ("Deployment", "rocenet-controller")}


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


# --- the Helm chart -------------------------------------------------------------------

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
def test_helm_chart_installs_what_the_overlay_installs(helm, overlay_name):
    """Every object of the overlay but the Namespace (helm's --namespace)
    and the CRDs (crds/) is the chart's, and no other: same kind, name and
    namespace, rules, subjects, Service, PriorityClass, policy and
    controller pod."""
    kustomized = [d for d in render(ALL_OVERLAYS[overlay_name])
                  if d["kind"] not in ("Namespace", "CustomResourceDefinition")]
    rendered = [d for d in helm_template(*HELM_SETTINGS[overlay_name])
                if d["kind"] != "CustomResourceDefinition"]
    names = lambda docs: sorted((d["kind"], d["metadata"]["name"]) for d in docs)  # noqa: E731
    assert names(rendered) == names(kustomized), overlay_name
    for want in kustomized:
        kind, name = want["kind"], want["metadata"]["name"]
        got = one(rendered, kind, name)
        where = f"{overlay_name}: {kind} {name}"
        assert got["metadata"].get("namespace") == want["metadata"].get("namespace"), where
        for key in ("rules", "roleRef", "subjects", "automountServiceAccountToken"):
            assert got.get(key) == want.get(key), f"{where}: {key}"
        if kind == "PriorityClass":
            for key in ("value", "preemptionPolicy", "globalDefault"):
                assert got.get(key) == want.get(key), f"{where}: {key}"
        if kind in ("Service", "RocenetNodePolicy", "PrometheusRule"):
            assert got["spec"] == want["spec"], where
        if kind == "ServiceMonitor":
            assert [e["port"] for e in got["spec"]["endpoints"]] == \
                [e["port"] for e in want["spec"]["endpoints"]], where
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


def test_helm_chart_names_are_the_ones_the_node_side_uses(helm):
    """The chart's accounts are named as the node side rocenet-controller
    makes and its admission policies expect them, whatever the release's
    name and namespace: the node pods' `rocenet`, the controller's
    `rocenet-controller`, bound in the release's namespace."""
    with open(os.path.join(REPO, "operator", "internal", "nodeset", "manifests", "generic.yaml")) as f:
        (ds,) = [d for d in yaml.safe_load_all(f) if d]
    with open(os.path.join(REPO, "operator", "internal", "clusterobjects", "manifests", "generic.yaml")) as f:
        made = [d for d in yaml.safe_load_all(f) if d]

    def pattern(policy: str) -> str:
        (condition,) = one(made, "ValidatingAdmissionPolicy", policy)["spec"]["matchConditions"]
        return re.search(r"matches\('([^']+)'\)", condition["expression"]).group(1)
    for release, namespace in (("fabric", "net"), ("roce.a", "rocenet-system")):
        cp = helm("template", release, CHART, "--namespace", namespace)
        assert cp.returncode == 0, cp.stderr
        docs = [d for d in yaml.safe_load_all(cp.stdout) if d]
        account = ds["spec"]["template"]["spec"]["serviceAccountName"]
        assert one(docs, "ServiceAccount", account)["metadata"]["namespace"] == namespace
        assert one(docs, "ClusterRoleBinding", "rocenet-node-reporter")["subjects"] == [
            {"kind": "ServiceAccount", "name": account, "namespace": namespace}]
        assert re.search(pattern("rocenet-node-reporter.rocenet.io"),
                         f"system:serviceaccount:{namespace}:{account}")
        assert re.search(pattern("rocenet-node-policy-label.rocenet.io"),
                         f"system:serviceaccount:{namespace}:rocenet-controller")
        assert bound_to(docs, namespace, "rocenet-controller") == {
            "ClusterRole/rocenet-controller", "Role/rocenet-controller-leader-election",
            "Role/rocenet-controller-triage", "Role/rocenet-controller-nodes",
            "Role/rocenet-controller-node-policies"}
        command = controller(docs)["spec"]["template"]["spec"]["containers"][0]["command"]
        assert "--triage-priority-class=rocenet-triage-holder" in command
        assert one(docs, "PriorityClass", "rocenet-triage-holder")


def test_helm_chart_controller_and_policy_values(helm):
    """controller.replicas and controller.resources reach the Deployment;
    policy.create=false leaves out the policy alone, policy.name and
    policy.spec make it; the NOTES say what runs."""
    docs = helm_template("controller.replicas=3", "controller.resources.limits.memory=512Mi")
    dep = controller(docs)
    assert dep["spec"]["replicas"] == 3
    assert dep["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] == \
        {"cpu": "1", "memory": "512Mi"}
    on, off = helm_template(), helm_template("policy.create=false")
    objects = {(d["kind"], d["metadata"]["name"]) for d in on}
    assert objects - {(d["kind"], d["metadata"]["name"]) for d in off} == {("RocenetNodePolicy", "gaudi")}
    assert CONTROLLER_OBJECTS <= objects
    named = one(helm_template("policy.name=rack", "policy.spec.addressing.mtu=4200"), "RocenetNodePolicy")
    assert named["metadata"]["name"] == "rack" and named["spec"]["addressing"]["mtu"] == 4200
    for settings, present, absent in (
            ([], ["rocenetnodepolicy/gaudi", "ds/rocenet-gaudi", "kubectl get rocenetcluster cluster"],
             ["policy.create is false"]),
            (["policy.create=false"], ["policy.create is false"], ["ds/rocenet-gaudi"])):
        args = ["install", "rocenet", CHART, "--dry-run=client", "--namespace", "rocenet-system"]
        for setting in settings:
            args += ["--set", setting]
        cp = helm(*args)
        assert cp.returncode == 0, cp.stderr
        notes = cp.stdout[cp.stdout.index("NOTES:"):]
        for text in present + ["deployment/rocenet-controller", "kubectl get rocenetnodes"]:
            assert text in notes, f"{settings}: NOTES lack {text!r}:\n{notes}"
        for text in absent:
            assert text not in notes, f"{settings}: NOTES say {text!r}"


@pytest.mark.parametrize("setting,moved_to", [
    ("allocation=dra", "policy.spec.mode"),
    ("configOverrides.log_level=debug", "policy.spec"),
    ("diagd.enabled=false", "the policy's pods"),
    ("updateStrategy.maxSurge=1", "policy.spec.rollout"),
    ("cniBinDir=/var/lib/cni/bin", "API discovery"),
    ("tolerations=null", "policy.spec.tolerations"),
])
def test_helm_chart_refuses_the_values_that_moved(helm, setting, moved_to):
    """A value of the charts that installed the node side from files fails
    rendering, naming it and where it went, rather than being ignored."""
    cp = helm("template", "rocenet", CHART, "--set", setting)
    old = setting.split("=")[0].split(".")[0]
    assert cp.returncode != 0 and f"{old}: the chart installs rocenet's operator now" in cp.stderr \
        and moved_to in cp.stderr, f"{setting}: {cp.stderr}"
