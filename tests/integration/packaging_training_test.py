# SPDX-License-Identifier: Apache-2.0
"""The training jobs shipped as examples (packaging/kubernetes/examples/
training/) as an ML engineer and a platform admin take them: every pod
that holds Gaudis holds a whole Gaudi 3 server, every container is one
the SCC rocenet-training admits, the pods name that SCC, and a project's
admin may grant it; the jobs name runtimes and settings that exist.

OpenShift's SCC admission is not here to run (no OpenShift; its library,
openshift/apiserver-library-go, is not served by the module proxy), so the
SCC is read as that admission reads its fields: allowed and required-drop
capabilities, the user strategy, privilege, host namespaces, volume types
and seccomp profiles. The jobs themselves run on the real Trainer
controller in tests/k8s/multinode_test.py; the Gaudi pods' resources are
held to `kubectl rocenet network fragment` in the Go tests of
operator/internal/kubectlplugin."""

from __future__ import annotations

import glob
import os

import pytest
import yaml

from packaging_support import ALL_OVERLAYS, K8S, NODE_SIDES, helm_template, one, render

EXAMPLES = os.path.join(K8S, "examples", "training")
GAUDIS, PORTS, NETWORK = 8, 24, "gaudi-scale-out"
SCC = "rocenet-training"


def examples() -> dict[str, list[dict]]:
    out = {}
    for path in sorted(glob.glob(os.path.join(EXAMPLES, "*.yaml"))):
        with open(path) as f:
            out[os.path.basename(path)] = [d for d in yaml.safe_load_all(f) if d]
    assert out, f"no example in {EXAMPLES}"
    return out


def pod_templates(doc: dict) -> list[tuple[str, dict]]:
    """Every pod template of a runtime or job, by where it is."""
    kind, name = doc["kind"], doc["metadata"]["name"]
    if kind == "ClusterTrainingRuntime":
        return [(f"{name}/{r['name']}", r["template"]["spec"]["template"])
                for r in doc["spec"]["template"]["spec"]["replicatedJobs"]]
    if kind == "PyTorchJob":
        return [(f"{name}/{k}", v["template"]) for k, v in doc["spec"]["pytorchReplicaSpecs"].items()]
    if kind == "MPIJob":
        return [(f"{name}/{k}", v["template"]) for k, v in doc["spec"]["mpiReplicaSpecs"].items()]
    assert kind == "TrainJob", f"an example of kind {kind}"
    return []


def all_templates() -> list[tuple[str, dict]]:
    return [t for docs in examples().values() for d in docs for t in pod_templates(d)]


def gaudi_templates() -> list[tuple[str, dict]]:
    return [(where, t) for where, t in all_templates()
            if any("habana.ai/gaudi" in c.get("resources", {}).get("limits", {})
                   for c in t["spec"]["containers"])]


def test_every_example_kind_is_there_with_its_gaudi_workers():
    kinds = {d["kind"] for docs in examples().values() for d in docs}
    assert kinds == {"ClusterTrainingRuntime", "TrainJob", "PyTorchJob", "MPIJob"}, kinds
    held = {where.split("/")[0] for where, _ in gaudi_templates()}
    # Each runtime and job has its Gaudi workers; the MPI operator's
    # launcher alone holds none.
    assert held == {"gaudi3-torch", "gaudi3-mpi", "llama-sft"}, held
    assert len(gaudi_templates()) == 6


@pytest.mark.parametrize("where,template", gaudi_templates(), ids=lambda v: v if isinstance(v, str) else "")
def test_a_gaudi_pod_holds_a_whole_gaudi3_server_on_the_network(where, template):
    networks = template["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"]
    # Multus reads the list by commas, trimming each name.
    assert [n.strip() for n in networks.split(",")] == [NETWORK] * PORTS, (where, networks)
    [container] = template["spec"]["containers"]
    assert container["resources"]["limits"] == {"habana.ai/gaudi": GAUDIS,
                                                "rocenet.io/scale-out-port": PORTS}, where
    assert template["metadata"]["annotations"]["openshift.io/required-scc"] == SCC, where


def training_scc() -> dict:
    return one(render(NODE_SIDES["openshift"]), "SecurityContextConstraints", SCC)


def scc_refusals(scc: dict, template: dict) -> list[str]:
    """Why the SCC refuses the pod, as its admission reads the fields."""
    why = []
    spec = template["spec"]
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(field):
            why.append(f"{field} (the SCC allows none)")
    for volume in spec.get("volumes", []):
        kind = next(k for k in volume if k != "name")
        if kind not in scc["volumes"]:
            why.append(f"volume {volume['name']} of type {kind}")
    pod_user = spec.get("securityContext", {}).get("runAsUser")
    for c in spec["containers"] + spec.get("initContainers", []):
        sc = c.get("securityContext", {})
        caps = sc.get("capabilities", {})
        added = set(caps.get("add", []))
        if not added <= set(scc["allowedCapabilities"]):
            why.append(f"{c['name']} adds {sorted(added - set(scc['allowedCapabilities']))}")
        if not set(scc["requiredDropCapabilities"]) <= set(caps.get("drop", [])):
            why.append(f"{c['name']} does not drop {scc['requiredDropCapabilities']}")
        if sc.get("privileged"):
            why.append(f"{c['name']} is privileged")
        if sc.get("allowPrivilegeEscalation", True) and not scc["allowPrivilegeEscalation"]:
            why.append(f"{c['name']} may escalate privilege")
        user = sc.get("runAsUser", pod_user)
        if scc["runAsUser"]["type"] == "MustRunAsNonRoot" and (user is None or user == 0) \
                and not sc.get("runAsNonRoot"):
            why.append(f"{c['name']} may run as root")
        profile = sc.get("seccompProfile", {}).get("type")
        if profile != "RuntimeDefault" or "runtime/default" not in scc["seccompProfiles"]:
            why.append(f"{c['name']} seccomp {profile}")
    return why


def test_the_training_scc_admits_every_example_pod_and_refuses_more():
    scc = training_scc()
    # restricted-v2 and IPC_LOCK: nothing of the host, no privilege.
    assert not any(scc[f] for f in ("allowPrivilegedContainer", "allowPrivilegeEscalation",
                                    "allowHostNetwork", "allowHostPorts", "allowHostDirVolumePlugin",
                                    "allowHostPID", "allowHostIPC"))
    assert "IPC_LOCK" in scc["allowedCapabilities"] and scc["requiredDropCapabilities"] == ["ALL"]
    assert "hostPath" not in scc["volumes"] and not scc["users"] and not scc["groups"]
    for where, template in all_templates():
        assert scc_refusals(scc, template) == [], where
    # The reading refuses what the SCC does: a pod that keeps its
    # capabilities, one on the host network, one that adds NET_ADMIN.
    [(_, template)] = [(w, t) for w, t in all_templates() if w == "gaudi3-torch/node"]
    kept = yaml.safe_load(yaml.safe_dump(template))
    kept["spec"]["containers"][0]["securityContext"]["capabilities"] = {"add": ["IPC_LOCK"]}
    kept["spec"]["hostNetwork"] = True
    kept["spec"]["containers"][0]["securityContext"]["capabilities"]["add"].append("NET_ADMIN")
    assert len(scc_refusals(scc, kept)) == 3, scc_refusals(scc, kept)


@pytest.mark.parametrize("overlay", ["openshift", "openshift-dra"])
def test_a_project_admin_may_grant_the_training_scc(overlay):
    role = one(render(ALL_OVERLAYS[overlay]), "ClusterRole", "rocenet-training-scc")
    assert role["metadata"]["labels"] == {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}
    assert role["rules"] == [{"apiGroups": ["security.openshift.io"],
                              "resources": ["securitycontextconstraints"],
                              "resourceNames": [SCC], "verbs": ["use"]}]
    # Both node sides make the SCC the role names.
    assert one(render(NODE_SIDES[overlay]), "SecurityContextConstraints", SCC) == training_scc()


def test_the_chart_on_openshift_grants_the_same():
    docs = helm_template("openshift.enabled=true")
    role = one(docs, "ClusterRole", "rocenet-training-scc")
    shipped = one(render(ALL_OVERLAYS["openshift"]), "ClusterRole", "rocenet-training-scc")
    assert role["rules"] == shipped["rules"]
    assert role["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-admin"] == "true"


def test_each_job_names_a_runtime_and_settings_that_exist():
    docs = examples()
    runtimes = {d["metadata"]["name"]: d for d in docs["gaudi3-runtimes.yaml"]}
    for name, framework in (("trainjob.yaml", "torch"), ("trainjob-mpi.yaml", "mpi")):
        [job] = docs[name]
        runtime = runtimes[job["spec"]["runtimeRef"]["name"]]
        assert framework in runtime["spec"]["mlPolicy"], (name, runtime["spec"]["mlPolicy"])
        assert job["spec"]["trainer"]["numNodes"] >= 2, name
    # A rank runs on each Gaudi; ranks started over SSH get HCL's files
    # and HCCL's interface from mpirun.
    mpi = runtimes["gaudi3-mpi"]["spec"]
    assert mpi["mlPolicy"]["mpi"]["numProcPerNode"] == GAUDIS
    [job] = docs["mpijob.yaml"]
    assert job["spec"]["slotsPerWorker"] == GAUDIS
    launchers = [mpi["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"],
                 job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]]
    for launcher in launchers:
        command = " ".join(launcher["spec"]["containers"][0]["args"])
        for variable in ("HCL_GAUDINET_CONFIG_FILE", "HCL_MAC_INFO_FILE", "HCCL_SOCKET_IFNAME"):
            assert f"-x {variable}" in command, command
        assert "ppr:8:node" in command
    assert runtimes["gaudi3-torch"]["spec"]["mlPolicy"]["torch"]["numProcPerNode"] == GAUDIS
    [job] = docs["pytorchjob.yaml"]
    assert job["spec"]["nprocPerNode"] == str(GAUDIS)
    for spec in job["spec"]["pytorchReplicaSpecs"].values():
        [container] = spec["template"]["spec"]["containers"]
        # The operator finds the master's port by this name and the
        # container by its.
        assert container["name"] == "pytorch"
        assert [p["name"] for p in container["ports"]] == ["pytorchjob-port"]
