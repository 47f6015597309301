# SPDX-License-Identifier: Apache-2.0
"""Packaging, the Helm chart as the real helm (built by
tests/k8s/components.sh) renders it: the same metrics Service,
ServiceMonitor, PrometheusRule and DRA RBAC as the kustomize manifests,
helm lint passing with each setting that changes what it renders, and
every value the templates use in values.yaml
(packaging_helm_fleet_test compares the rest, object by object)."""

from __future__ import annotations

import glob
import os
import re

import pytest
import yaml

from packaging_support import CHART, K8S, OVERLAYS, PKG, helm_template, one, render
from packaging_support import helm as run_helm


@pytest.fixture(scope="module")
def helm():
    """helm (packaging_support.helm: ROCENET_HELM, or built by
    tests/k8s/components.sh); skips where it cannot be had."""
    run_helm("version")
    return run_helm


def test_helm_chart_prometheusrule_renders_the_plain_rules_file(helm):
    """prometheusRule.enabled: the chart's PrometheusRule carries exactly the
    groups of packaging/prometheus/rocenet-rules.yaml, the fleet's recording
    rules among them, as the kustomize one does; off by default."""
    with open(os.path.join(PKG, "prometheus", "rocenet-rules.yaml")) as f:
        plain = yaml.safe_load(f)
    assert "rocenet.fleet" in [g["name"] for g in plain["groups"]]
    rule = one(helm_template("prometheusRule.enabled=true"), "PrometheusRule", "rocenet")
    assert rule["metadata"]["namespace"] == "rocenet-system"
    assert rule["spec"] == {"groups": plain["groups"]}, \
        "the chart's PrometheusRule differs from the plain rules file"
    assert not [d for d in helm_template() if d["kind"] == "PrometheusRule"]
    cp = helm("lint", "--strict", CHART, "--set", "prometheusRule.enabled=true")
    assert cp.returncode == 0, f"{cp.stdout}{cp.stderr}"


def test_helm_chart_renders_the_dra_components_objects(helm):
    """A DRA policy (policy.spec.mode=DRA) adds
    packaging/kubernetes/components/dra's ClusterRole and
    ClusterRoleBinding with the same names, rules and subject, and the
    policy's mode, as the generic-dra overlay has them; a device-plugin
    policy none of them."""
    kustomized = render(os.path.join(K8S, "overlays", "generic-dra"))
    rendered = helm_template("policy.spec.mode=DRA")
    for kind, name in (("ClusterRole", "rocenet-dra-plugin"), ("ClusterRoleBinding", "rocenet-dra-plugin")):
        want, got = one(kustomized, kind, name), one(rendered, kind, name)
        for key in ("rules", "roleRef", "subjects"):
            assert got.get(key) == want.get(key), f"{kind} {name}: {key}"
    assert one(rendered, "RocenetNodePolicy")["spec"]["mode"] == "DRA"
    plain = helm_template()
    assert not [d["kind"] for d in plain if d["metadata"]["name"] == "rocenet-dra-plugin"]
    assert one(plain, "RocenetNodePolicy")["spec"]["mode"] == "DevicePlugin"


def test_helm_chart_renders_the_service_and_servicemonitor(helm):
    """The chart's metrics Service has the base's ports and selects the
    node pods as the base's does (every policy's), and its ServiceMonitor
    (serviceMonitor.enabled) scrapes the same port names as
    packaging/kubernetes/monitoring."""
    rendered = helm_template("serviceMonitor.enabled=true")
    want = one(render(OVERLAYS["generic"]), "Service", "rocenet-metrics")["spec"]
    got = one(rendered, "Service", "rocenet-metrics")["spec"]
    assert got["ports"] == want["ports"]
    assert got["selector"] == want["selector"]
    monitoring = render(os.path.join(K8S, "monitoring"))
    kept = [e["port"] for e in one(monitoring, "ServiceMonitor", "rocenet")["spec"]["endpoints"]]
    endpoints = one(rendered, "ServiceMonitor", "rocenet")["spec"]["endpoints"]
    assert [e["port"] for e in endpoints] == kept == ["metrics", "diag-metrics"]
    for e in endpoints:
        assert {"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node"} \
            in e["relabelings"], e
    # The controller's: the same Service, endpoint and scraper account.
    want = one(render(OVERLAYS["generic"]), "Service", "rocenet-controller-metrics")["spec"]
    got = one(rendered, "Service", "rocenet-controller-metrics")["spec"]
    assert got["ports"] == want["ports"]
    assert got["selector"] == want["selector"]
    (want,) = one(monitoring, "ServiceMonitor", "rocenet-controller")["spec"]["endpoints"]
    (got,) = one(rendered, "ServiceMonitor", "rocenet-controller")["spec"]["endpoints"]
    assert {k: v for k, v in got.items() if k != "interval"} == \
        {k: v for k, v in want.items() if k not in ("interval", "scrapeTimeout")}
    for kind, name in (("ServiceAccount", "rocenet-metrics-scraper"),
                       ("ClusterRole", "rocenet-metrics-reader"),
                       ("ClusterRoleBinding", "rocenet-metrics-scraper")):
        for key in ("rules", "roleRef", "automountServiceAccountToken"):
            assert one(rendered, kind, name).get(key) == one(monitoring, kind, name).get(key), name


def test_helm_chart_passes_helm_lint(helm):
    for settings in ([], ["policy.spec.mode=DRA"], ["policy.create=false"], ["openshift.enabled=true"],
                     ["serviceMonitor.enabled=true", "prometheusRule.enabled=true"]):
        args = ["lint", "--strict", CHART]
        for setting in settings:
            args += ["--set", setting]
        cp = helm(*args)
        assert cp.returncode == 0, f"{settings}:\n{cp.stdout}{cp.stderr}"


def test_helm_chart_values_cover_the_templates():
    """What rendering does not catch: helm renders a missing value as
    nothing, so every .Values key the templates use is in values.yaml; the
    default policy is the overlays'."""
    with open(os.path.join(CHART, "Chart.yaml")) as f:
        chart = yaml.safe_load(f)
    assert chart["apiVersion"] == "v2" and chart["name"] == "rocenet"
    with open(os.path.join(CHART, "values.yaml")) as f:
        values = yaml.safe_load(f)
    templates = ""
    for path in sorted(glob.glob(os.path.join(CHART, "templates", "*"))):
        with open(path) as f:
            templates += f.read()
    for ref in set(re.findall(r"\.Values\.([A-Za-z0-9_.]+)", templates)):
        node = values
        for key in ref.split("."):
            assert isinstance(node, dict) and key in node, \
                f"templates use .Values.{ref}, values.yaml lacks it"
            node = node[key]
    assert "privileged: true" not in templates
    with open(os.path.join(K8S, "base", "node-policy.yaml")) as f:
        assert values["policy"]["spec"] == yaml.safe_load(f)["spec"]
