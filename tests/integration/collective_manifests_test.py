# SPDX-License-Identifier: Apache-2.0
"""`rocectl diag collective plan` and `report` through the real binary: the
MPIJob and the JobSet for 2 and 4 nodes pass yamllint (packaging/.yamllint),
render with `kubectl kustomize` without a warning, and match the fields of
their upstream Go types (collective_schema.py), which a misspelled field
fails; planning needs neither rocenetd nor rocenet-diagd; `report` reads
a public hccl_demo sample from stdin and prints its busbw as published. No
cluster and no Gaudi here: what runs on one is checked only against the
schemas and recorded output."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess

import pytest
import yaml

from collective_schema import SCHEMAS, check
from harness import binary
from packaging_support import PKG, REPO, render

FIXTURES = os.path.join(REPO, "tests", "fixtures", "hccl_demo")


def rocectl(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([binary("rocectl"), *args], input=stdin, capture_output=True,
                          text=True, timeout=30)


def plan(engine: str, nodes: int, *extra: str, global_flags: tuple[str, ...] = ()) -> str:
    names = ",".join(f"gaudi-node-{i}" for i in range(nodes))
    cp = rocectl(*global_flags, "diag", "collective", "plan", "--engine", engine, "--nodes", names,
                 "--image", "vault.habana.ai/gaudi-docker/1.21.0/hccl-demo:latest",
                 "--test", "both", *extra)
    assert cp.returncode == 0, cp.stderr
    return cp.stdout


CASES = [(engine, nodes) for engine in ("mpijob", "jobset") for nodes in (2, 4)]


@pytest.mark.parametrize("engine,nodes", CASES)
def test_plan_passes_yamllint(engine, nodes, tmp_path):
    if not shutil.which("yamllint"):
        pytest.skip("yamllint not installed (packaging/debian-deps.sh test installs it)")
    path = tmp_path / "plan.yaml"
    path.write_text(plan(engine, nodes))
    # The project's settings; the networks annotation (one name per port,
    # comma-separated) is one word, longer than a line.
    config = tmp_path / "yamllint.yaml"
    config.write_text(f"extends: {os.path.join(PKG, '.yamllint')}\n"
                      "rules:\n  line-length:\n    max: 120\n"
                      "    allow-non-breakable-inline-mappings: true\n")
    cp = subprocess.run(["yamllint", "-f", "parsable", "-c", str(config), str(path)],
                        capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0 and not cp.stdout.strip(), cp.stdout + cp.stderr


@pytest.mark.parametrize("engine,nodes", CASES)
def test_plan_renders_with_kustomize(engine, nodes, tmp_path):
    (tmp_path / "plan.yaml").write_text(plan(engine, nodes))
    (tmp_path / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        "resources:\n  - plan.yaml\n")
    docs = render(str(tmp_path))  # fails on any warning too
    assert [d["kind"] for d in docs] == ["MPIJob" if engine == "mpijob" else "JobSet"]


@pytest.mark.parametrize("engine,nodes", CASES)
def test_plan_matches_the_upstream_schema(engine, nodes):
    docs = [d for d in yaml.safe_load_all(plan(engine, nodes)) if d]
    assert len(docs) == 1
    doc = docs[0]
    assert check(doc, SCHEMAS[doc["kind"]]) == []
    if engine == "mpijob":
        worker = doc["spec"]["mpiReplicaSpecs"]["Worker"]
        assert worker["replicas"] == nodes
        pod = worker["template"]
    else:
        job = doc["spec"]["replicatedJobs"][0]["template"]["spec"]
        assert job["completions"] == job["parallelism"] == nodes
        pod = job["template"]
    limits = pod["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"habana.ai/gaudi": 8, "rocenet.io/scale-out-port": 24}
    terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == \
        [f"gaudi-node-{i}" for i in range(nodes)]


@pytest.mark.parametrize("engine", ["mpijob", "jobset"])
def test_a_split_plan_is_a_job_a_group_each_to_the_schema(engine, tmp_path):
    """--split 4 over 9 nodes: four jobs (3, 2, 2, 2 nodes in order), each
    to the upstream schema, each its own name and rank 0; kustomize takes
    the stream as it is."""
    text = plan(engine, 9, "--split", "4")
    docs = [d for d in yaml.safe_load_all(text) if d]
    assert [d["metadata"]["name"] for d in docs] == [f"hccl-demo-4-{i}" for i in range(4)]
    groups = [[0, 1, 2], [3, 4], [5, 6], [7, 8]]
    for doc, group in zip(docs, groups, strict=True):
        assert check(doc, SCHEMAS[doc["kind"]]) == []
        if engine == "mpijob":
            pod = doc["spec"]["mpiReplicaSpecs"]["Worker"]["template"]
        else:
            pod = doc["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
        terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert terms["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == \
            [f"gaudi-node-{i}" for i in group]
        env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0].get("env", [])}
        if "HCCL_COMM_ID" in env:
            assert doc["metadata"]["name"] in env["HCCL_COMM_ID"], env["HCCL_COMM_ID"]
    (tmp_path / "plan.yaml").write_text(text)
    (tmp_path / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        "resources:\n  - plan.yaml\n")
    assert len(render(str(tmp_path))) == 4
    cp = rocectl("diag", "collective", "plan", "--nodes", "a,b,c", "--image", "x", "--split", "2")
    assert cp.returncode == 2 and "flag --split: 3 nodes do not make 2 groups of at least 2" in cp.stderr


@pytest.mark.parametrize("engine", ["mpijob", "jobset"])
def test_plan_needs_no_daemon(engine, tmp_path):
    """Planning is rocectl's alone: with neither rocenetd's socket nor
    rocenet-diagd's beside it (an admin's workstation), the plan is the
    same."""
    absent = str(tmp_path / "absent" / "rocenetd.sock")
    assert plan(engine, 2, global_flags=(f"--socket={absent}",)) == plan(engine, 2)


def test_schema_check_fails_a_misspelled_field():
    doc = yaml.safe_load(plan("mpijob", 2))
    bad = copy.deepcopy(doc)
    bad["spec"]["slotPerWorker"] = bad["spec"].pop("slotsPerWorker")
    assert ".spec.slotPerWorker: unknown field" in check(bad, SCHEMAS["MPIJob"])
    bad = copy.deepcopy(doc)
    bad["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = "2"
    assert any("replicas: want an integer" in e for e in check(bad, SCHEMAS["MPIJob"]))
    jobset = yaml.safe_load(plan("jobset", 2))
    jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["completionMode"] = "indexed"
    assert any("completionMode" in e for e in check(jobset, SCHEMAS["JobSet"]))


def test_plan_refuses_bad_flags_naming_them():
    cp = rocectl("diag", "collective", "plan", "--nodes", "gaudi-a", "--image", "x")
    assert cp.returncode == 2
    assert "flag --nodes: a collective test needs at least 2 nodes, got 1" in cp.stderr
    cp = rocectl("diag", "collective", "plan", "--nodes", "a,b")
    assert cp.returncode == 2 and "flag --image" in cp.stderr


def test_report_reproduces_the_public_busbw_from_stdin():
    with open(os.path.join(FIXTURES, "vllm_fork_2x8_all_reduce.log")) as f:
        sample = f.read()
    cp = rocectl("diag", "collective", "report", "-", "--expected-busbw", "220", stdin=sample)
    assert cp.returncode == 0, cp.stderr
    assert "205.899" in cp.stdout and "pass" in cp.stdout
    cp = rocectl("-o", "json", "diag", "collective", "report", "-", "--expected-busbw", "240",
                 stdin=sample)
    assert cp.returncode == 6, cp.stderr
    result = json.loads(cp.stdout)
    assert result["tests"][0]["sizes"][0]["busbw_gbs"] == 205.899352
    assert result["tests"][0]["verdict"] == "fail"


def test_report_without_hccl_demo_output_is_bad_input():
    cp = rocectl("diag", "collective", "report", "-", stdin="Error from server (NotFound)\n")
    assert cp.returncode == 2
    assert "no hccl_demo results in the input" in cp.stderr
