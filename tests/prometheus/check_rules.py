#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the Prometheus rules in packaging/prometheus/.

  check_rules.py check ROOT     promtool check rules, and every alert has `for`,
                                a severity, a summary and a description (naming
                                the node where its series are a node's) and a
                                runbook_url to a section of docs/runbooks.md;
                                every metric and health condition it names exists
  check_rules.py test ROOT      promtool test rules rocenet-rules.test.yaml
  check_rules.py operator ROOT  the PrometheusRule in packaging/kubernetes/monitoring
                                has exactly the plain file's groups, and the Helm
                                chart's copy (files/rocenet-rules.yaml) is the
                                plain file's
  check_rules.py --write ROOT   writes that PrometheusRule and the chart's copy
                                from the plain file
  check_rules.py --self-test    planted mistakes are found

Exit 1 on a mistake, naming it; 77 (CTest: skipped) when promtool or
python3-yaml is missing, so that a check that could not run never passes.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    yaml = None

SKIP = 77
RULES = os.path.join("packaging", "prometheus", "rocenet-rules.yaml")
RULES_TEST = os.path.join("packaging", "prometheus", "rocenet-rules.test.yaml")
OPERATOR_RULE = os.path.join("packaging", "kubernetes", "monitoring", "prometheusrule.yaml")
HELM_RULES = os.path.join("packaging", "helm", "rocenet", "files", "rocenet-rules.yaml")
METRIC = re.compile(r'"(rocenet_[a-z0-9_]+)"')
# A recorded series in an expression: level:metric:operations.
RECORDED = re.compile(r"\b[a-z_][a-z0-9_]*:[a-z0-9_:]+")
# Its name: rocenet's either in the level (rocenet:attach_operations:rate5m)
# or in the metric (node:rocenet_port_healthy:sum).
RECORD_NAME = re.compile(r"rocenet:[a-z0-9_]+:[a-z0-9_]+|[a-z_]+:rocenet_[a-z0-9_]+:[a-z0-9_]+")
CONDITION = re.compile(r'inline constexpr absl::string_view k\w+ = "(\w+)";')
SEVERITIES = {"critical", "warning", "info"}
RUNBOOKS = os.path.join("docs", "runbooks.md")
RUNBOOK_URL = "https://rocenet.invalid/docs/runbooks.md#"

OPERATOR_HEADER = """\
# The groups of packaging/prometheus/rocenet-rules.yaml as a PrometheusRule
# for the Prometheus Operator. Written from that file by
#   python3 tests/prometheus/check_rules.py --write .
# Edit the rules there: ctest prometheus.operator_rule fails when the two
# differ.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: rocenet
  namespace: rocenet-system
  labels:
    app.kubernetes.io/name: rocenet
spec:
"""

HELM_HEADER = """\
# The groups of packaging/prometheus/rocenet-rules.yaml for the Helm chart's
# PrometheusRule (prometheusRule.enabled; templates/prometheusrule.yaml reads
# this file as data). Written from that file by
#   python3 tests/prometheus/check_rules.py --write .
# Edit the rules there: ctest prometheus.operator_rule fails when the two
# differ.
"""


class Skip(Exception):
    pass


def promtool() -> str:
    path = os.environ.get("ROCENET_PROMTOOL") or shutil.which("promtool")
    if not path:
        raise Skip("promtool not installed (packaging/debian-deps.sh test installs prometheus)")
    return path


def load(path: str):
    if yaml is None:
        raise Skip("python3-yaml not installed")
    with open(path) as f:
        return yaml.safe_load(f)


def run_promtool(*args: str, cwd: str) -> list[str]:
    cp = subprocess.run([promtool(), *args], cwd=cwd, capture_output=True, text=True,
                        timeout=120)
    if cp.returncode != 0:
        return [f"promtool {' '.join(args)} exited {cp.returncode}:\n{cp.stdout}{cp.stderr}"]
    print(cp.stdout.strip())
    return []


def exported(root: str) -> tuple[set[str], set[str], set[str]]:
    """The metric families the node side (rocenetd, rocenet-diagd) and
    rocenet-controller define, and the health conditions."""
    node, controller, conditions = set(), set(), set()
    for path in glob.glob(os.path.join(root, "daemon", "**", "*.cc"), recursive=True):
        with open(path) as f:
            node.update(METRIC.findall(f.read()))
    for path in glob.glob(os.path.join(root, "operator", "**", "*.go"), recursive=True):
        if not path.endswith("_test.go"):
            with open(path) as f:
                controller.update(METRIC.findall(f.read()))
    for path in glob.glob(os.path.join(root, "daemon", "health", "*.h")):
        with open(path) as f:
            conditions.update(CONDITION.findall(f.read()))
    return node, controller, conditions


def runbook_anchors(root: str) -> set[str]:
    """The anchors of docs/runbooks.md's sections, as GitHub makes them."""
    path = os.path.join(root, RUNBOOKS)
    if not os.path.exists(path):
        return set()
    with open(path) as f:
        return {re.sub(r"[^a-z0-9_ -]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
                for line in f if line.startswith("#")}


def lint(root: str) -> list[str]:
    rules = load(os.path.join(root, RULES))
    node, controller, conditions = exported(root)
    metrics = node | controller
    anchors = runbook_anchors(root)
    problems = []
    recorded = {r["record"] for g in rules["groups"] for r in g["rules"] if "record" in r}
    for group in rules["groups"]:
        for rule in group["rules"]:
            name = rule.get("alert") or rule.get("record")
            expr = rule["expr"]
            for record in set(RECORDED.findall(expr)):
                if record not in recorded:
                    problems.append(f"{name}: no recording rule {record}")
            for metric in set(re.findall(r"\b(rocenet_[a-z0-9_]+)", RECORDED.sub(" ", expr))):
                family = re.sub(r"_(bucket|sum|count)$", "", metric)
                if metric not in metrics and family not in metrics:
                    problems.append(f"{name}: neither rocenet's nodes nor its controller export {metric}")
            # A port's health conditions (the fleet's objects have their own).
            for values in re.findall(r'rocenet_port_condition[a-z_:]*\{[^}]*condition=~?"([^"]+)"', expr):
                for condition in values.split("|"):
                    if condition not in conditions:
                        problems.append(f"{name}: no health condition {condition}")
            if "record" in rule:
                if not RECORD_NAME.fullmatch(rule["record"]):
                    problems.append(f"{name}: recording rules are named level:metric:operations, "
                                    "rocenet:<metric>:... or <level>:rocenet_<metric>:...")
                continue
            if not rule.get("for"):
                problems.append(f"{name}: no `for`")
            if rule.get("labels", {}).get("severity") not in SEVERITIES:
                problems.append(f"{name}: severity not one of {sorted(SEVERITIES)}")
            runbook = rule.get("annotations", {}).get("runbook_url", "")
            if not runbook.startswith(RUNBOOK_URL) or runbook[len(RUNBOOK_URL):] not in anchors:
                problems.append(f"{name}: runbook_url {runbook!r} is not {RUNBOOK_URL}<a section of "
                                f"{RUNBOOKS}>")
            # An alert on a node's series names the node; one on the
            # controller's (the fleet's state, its being up) has none.
            named = set(re.findall(r"\b(rocenet_[a-z0-9_]+)", expr))
            on_controller = bool(named & controller) or "rocenet-controller-metrics" in expr
            on_node = not on_controller and (bool(named - controller) or "node:" in expr)
            for key in ("summary", "description"):
                text = rule.get("annotations", {}).get(key, "")
                if on_node and "$labels.instance" not in text:
                    problems.append(f"{name}: the {key} does not name the node")
                # An alert on a port's series (label `device`) names the port.
                if re.search(r"\brocenet_(port|lldp)_", expr) and "$labels.device" not in text:
                    problems.append(f"{name}: the {key} does not name the port")
    return problems


def groups_text(root: str) -> list[str]:
    """The plain file's lines from `groups:` on."""
    with open(os.path.join(root, RULES)) as f:
        lines = f.read().split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("groups:"))
    return lines[start:]


def operator_text(root: str) -> str:
    body = ["  " + line if line.strip() else "" for line in groups_text(root)]
    return OPERATOR_HEADER + "\n".join(body).rstrip("\n") + "\n"


def helm_text(root: str) -> str:
    return HELM_HEADER + "\n".join(groups_text(root)).rstrip("\n") + "\n"


def write(root: str) -> None:
    for rel, text in ((OPERATOR_RULE, operator_text(root)), (HELM_RULES, helm_text(root))):
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        with open(os.path.join(root, rel), "w") as f:
            f.write(text)


def operator(root: str) -> list[str]:
    plain = load(os.path.join(root, RULES))
    path = os.path.join(root, OPERATOR_RULE)
    if not os.path.exists(path):
        return [f"{OPERATOR_RULE} is missing (check_rules.py --write)"]
    rule = load(path)
    problems = []
    if rule.get("apiVersion") != "monitoring.coreos.com/v1" or rule.get("kind") != "PrometheusRule":
        problems.append(f"{OPERATOR_RULE}: not a monitoring.coreos.com/v1 PrometheusRule")
    if set(rule.get("spec", {})) != {"groups"}:
        problems.append(f"{OPERATOR_RULE}: spec has {sorted(rule.get('spec', {}))}, want groups only")
    if rule.get("spec", {}).get("groups") != plain["groups"]:
        theirs = {g["name"]: g for g in rule.get("spec", {}).get("groups", [])}
        differ = [g["name"] for g in plain["groups"] if theirs.get(g["name"]) != g]
        differ += sorted(set(theirs) - {g["name"] for g in plain["groups"]})
        problems.append(f"{OPERATOR_RULE}: spec.groups differ from {RULES} in {differ} "
                        f"(python3 tests/prometheus/check_rules.py --write .)")
    helm = os.path.join(root, HELM_RULES)
    if not os.path.exists(helm):
        problems.append(f"{HELM_RULES} is missing (check_rules.py --write)")
    else:
        with open(helm) as f:
            if f.read() != helm_text(root):
                problems.append(f"{HELM_RULES} differs from {RULES} "
                                f"(python3 tests/prometheus/check_rules.py --write .)")
    return problems


def run(mode: str, root: str) -> list[str]:
    root = os.path.abspath(root)
    if mode == "check":
        problems = lint(root)
        return problems + run_promtool("check", "rules", os.path.basename(RULES),
                                       cwd=os.path.join(root, os.path.dirname(RULES)))
    if mode == "test":
        return run_promtool("test", "rules", os.path.basename(RULES_TEST),
                            cwd=os.path.join(root, os.path.dirname(RULES_TEST)))
    if mode == "operator":
        return operator(root)
    raise SystemExit(f"unknown mode {mode}")


def self_test(root: str) -> int:
    """Copies of the files, each with one planted mistake, must fail."""
    promtool()
    plants = {
        "check": [(RULES, "expr: rocenet_port_condition{condition=\"LinkDown\"} == 1",
                   "expr: rocenet_port_condition{condition=\"LinkDown\"} == == 1"),
                  (RULES, "rocenet_node_ready == 0", "rocenet_node_readiness == 0"),
                  (RULES, '{condition="LinkDown"}', '{condition="LinkGone"}'),
                  (RULES, "for: 10m\n", ""),
                  (RULES, "(node_rail:rocenet_port_healthy:sum)",
                   "(node_rail:rocenet_port_health:sum)"),
                  (RULES, "record: rail:rocenet_port_healthy:sum", "record: rail:port_healthy:sum"),
                  (RULES, "runbooks.md#rocenetportdown", "runbooks.md#rocenet-port-down"),
                  (RULES, "rocenet_cluster_nodes{state=\"stale\"}", "rocenet_cluster_node{state=\"stale\"}")],
        # A port down for one minute would fire on the 2-minute flap.
        "test": [(RULES, "== 1\n        for: 5m", "== 1\n        for: 1m"),
                 (RULES, "quantile_rate5m\n        expr: >-\n          histogram_quantile(0.99",
                  "quantile_rate5m\n        expr: >-\n          histogram_quantile(0.9"),
                 # A node in a rolling update, scraped as two targets, counts once.
                 (RULES, "max by (instance, node, device) (rocenet_port_healthy)",
                  "rocenet_port_healthy"),
                 (RULES, "count by (instance, node, rail)\n"
                  "          (topk by (instance, node, device) (1, rocenet_port_info))",
                  "count by (instance, node, rail) (rocenet_port_info)")],
        "operator": [(OPERATOR_RULE, "for: 5m", "for: 6m"), (HELM_RULES, "for: 5m", "for: 6m")],
    }
    for mode in ("check", "test", "operator"):
        if run(mode, root):
            print(f"self-test: the tree itself fails {mode}", file=sys.stderr)
            return 1
        for rel, old, new in plants[mode]:
            with tempfile.TemporaryDirectory() as tmp:
                for sub in ("packaging", "daemon", "operator", "docs"):
                    shutil.copytree(os.path.join(root, sub), os.path.join(tmp, sub))
                path = os.path.join(tmp, rel)
                with open(path) as f:
                    text = f.read()
                if old not in text:
                    print(f"self-test: {rel} no longer has {old!r} to plant a mistake in",
                          file=sys.stderr)
                    return 1
                with open(path, "w") as f:
                    f.write(text.replace(old, new, 1))
                if not run(mode, tmp):
                    print(f"self-test: {mode} passes with {old!r} -> {new!r} in {rel}",
                          file=sys.stderr)
                    return 1
    print("self-test: a broken expression, an unknown metric, condition and recorded series, a "
          "misnamed recording rule, a missing `for`, a runbook that is no section, a misspelt "
          "controller metric, a wrong `for` and quantile, a port counted twice in a rolling update, "
          "and a stale PrometheusRule or chart copy are each found")
    return 0


def main(argv: list[str]) -> int:
    try:
        if len(argv) == 3 and argv[1] == "--self-test":
            return self_test(argv[2])
        if len(argv) == 3 and argv[1] == "--write":
            write(argv[2])
            return 0
        if len(argv) != 3:
            print(__doc__, file=sys.stderr)
            return 2
        problems = run(argv[1], argv[2])
    except Skip as e:
        print(f"SKIPPED: {e}")
        return SKIP
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
