# SPDX-License-Identifier: Apache-2.0
"""The fields of a Kubeflow MPIJob (kubeflow.org/v2beta1) and a JobSet
(jobset.x-k8s.io/v1alpha2), written down from the upstream Go types, with
the Kubernetes core types they embed, so a manifest can be walked without a
cluster: an unknown field, a wrong type, a missing required field or a value
outside an enum is an error.

Sources: kubeflow/mpi-operator pkg/apis/kubeflow/v2beta1/types.go (MPIJob,
MPIJobSpec, RunPolicy, ReplicaSpec, the Enum markers);
kubernetes-sigs/jobset api/jobset/v1alpha2/jobset_types.go (JobSet,
JobSetSpec, ReplicatedJob, Network, SuccessPolicy, FailurePolicy,
StartupPolicy, Coordinator); k8s.io/api core/v1 and batch/v1 for the pod
and Job templates (only the fields listed here; others are unknown here too,
which keeps the check strict for what rocectl writes)."""

from __future__ import annotations

ANY = {"type": "any"}
STR = {"type": "str"}
INT = {"type": "int"}
BOOL = {"type": "bool"}


def obj(fields: dict, required: tuple = ()) -> dict:
    return {"type": "object", "fields": fields, "required": set(required)}


def lst(item: dict) -> dict:
    return {"type": "list", "item": item}


def mapping(value: dict, keys: tuple | None = None) -> dict:
    return {"type": "map", "value": value, "keys": keys}


def enum(*values: str) -> dict:
    return {"type": "enum", "values": set(values)}


QUANTITY = {"type": "quantity"}

OBJECT_META = obj({"name": STR, "generateName": STR, "namespace": STR,
                   "labels": mapping(STR), "annotations": mapping(STR)})

LABEL_SELECTOR = obj({"matchLabels": mapping(STR),
                      "matchExpressions": lst(obj({"key": STR, "operator": STR,
                                                   "values": lst(STR)}, ("key", "operator")))})

NODE_SELECTOR_REQUIREMENT = obj({"key": STR, "operator": enum("In", "NotIn", "Exists",
                                                              "DoesNotExist", "Gt", "Lt"),
                                 "values": lst(STR)}, ("key", "operator"))
NODE_SELECTOR_TERM = obj({"matchExpressions": lst(NODE_SELECTOR_REQUIREMENT),
                          "matchFields": lst(NODE_SELECTOR_REQUIREMENT)})
POD_AFFINITY_TERM = obj({"labelSelector": LABEL_SELECTOR, "namespaces": lst(STR),
                         "topologyKey": STR, "namespaceSelector": LABEL_SELECTOR,
                         "matchLabelKeys": lst(STR), "mismatchLabelKeys": lst(STR)},
                        ("topologyKey",))
POD_AFFINITY = obj({"requiredDuringSchedulingIgnoredDuringExecution": lst(POD_AFFINITY_TERM),
                    "preferredDuringSchedulingIgnoredDuringExecution": lst(ANY)})
AFFINITY = obj({
    "nodeAffinity": obj({
        "requiredDuringSchedulingIgnoredDuringExecution":
            obj({"nodeSelectorTerms": lst(NODE_SELECTOR_TERM)}, ("nodeSelectorTerms",)),
        "preferredDuringSchedulingIgnoredDuringExecution": lst(ANY)}),
    "podAffinity": POD_AFFINITY,
    "podAntiAffinity": POD_AFFINITY,
})

ENV_VAR = obj({"name": STR, "value": STR,
               "valueFrom": obj({"fieldRef": obj({"fieldPath": STR, "apiVersion": STR},
                                                 ("fieldPath",)),
                                 "resourceFieldRef": ANY, "configMapKeyRef": ANY,
                                 "secretKeyRef": ANY})}, ("name",))

CONTAINER = obj({
    "name": STR, "image": STR, "imagePullPolicy": enum("Always", "Never", "IfNotPresent"),
    "command": lst(STR), "args": lst(STR), "workingDir": STR, "env": lst(ENV_VAR),
    "envFrom": lst(ANY), "ports": lst(ANY), "volumeMounts": lst(ANY),
    "resources": obj({"limits": mapping(QUANTITY), "requests": mapping(QUANTITY),
                      "claims": lst(ANY)}),
    "securityContext": obj({"capabilities": obj({"add": lst(STR), "drop": lst(STR)}),
                            "privileged": BOOL, "runAsUser": INT, "runAsGroup": INT,
                            "runAsNonRoot": BOOL, "allowPrivilegeEscalation": BOOL,
                            "readOnlyRootFilesystem": BOOL, "seccompProfile": ANY}),
    "livenessProbe": ANY, "readinessProbe": ANY, "startupProbe": ANY, "lifecycle": ANY,
    "stdin": BOOL, "tty": BOOL,
}, ("name",))

POD_SPEC = obj({
    "containers": lst(CONTAINER), "initContainers": lst(CONTAINER),
    "restartPolicy": enum("Always", "OnFailure", "Never"), "affinity": AFFINITY,
    "nodeSelector": mapping(STR), "tolerations": lst(ANY), "volumes": lst(ANY),
    "hostIPC": BOOL, "hostNetwork": BOOL, "hostPID": BOOL, "hostname": STR, "subdomain": STR,
    "serviceAccountName": STR, "securityContext": ANY, "priorityClassName": STR,
    "terminationGracePeriodSeconds": INT, "dnsPolicy": STR, "schedulerName": STR,
    "imagePullSecrets": lst(ANY), "runtimeClassName": STR,
}, ("containers",))

POD_TEMPLATE = obj({"metadata": OBJECT_META, "spec": POD_SPEC})

# --- kubeflow/mpi-operator pkg/apis/kubeflow/v2beta1/types.go --------------

REPLICA_SPEC = obj({"replicas": INT, "template": POD_TEMPLATE,
                    "restartPolicy": enum("Always", "OnFailure", "Never", "ExitCode")})
RUN_POLICY = obj({"cleanPodPolicy": enum("All", "Running", "None"),
                  "ttlSecondsAfterFinished": INT, "activeDeadlineSeconds": INT,
                  "backoffLimit": INT,
                  "schedulingPolicy": obj({"minAvailable": INT, "queue": STR,
                                           "minResources": mapping(QUANTITY),
                                           "priorityClass": STR,
                                           "scheduleTimeoutSeconds": INT}),
                  "suspend": BOOL, "managedBy": STR})
MPIJOB = obj({
    "apiVersion": enum("kubeflow.org/v2beta1"), "kind": enum("MPIJob"), "metadata": OBJECT_META,
    "spec": obj({"slotsPerWorker": INT, "runLauncherAsWorker": BOOL, "runPolicy": RUN_POLICY,
                 "mpiReplicaSpecs": mapping(REPLICA_SPEC, keys=("Launcher", "Worker")),
                 "sshAuthMountPath": STR,
                 "launcherCreationPolicy": enum("AtStartup", "WaitForWorkersReady"),
                 "mpiImplementation": enum("OpenMPI", "Intel", "MPICH")},
                ("mpiReplicaSpecs",)),
}, ("apiVersion", "kind", "metadata", "spec"))

# --- kubernetes-sigs/jobset api/jobset/v1alpha2/jobset_types.go -------------

JOB_SPEC = obj({"parallelism": INT, "completions": INT,
                "completionMode": enum("NonIndexed", "Indexed"), "backoffLimit": INT,
                "backoffLimitPerIndex": INT, "maxFailedIndexes": INT,
                "activeDeadlineSeconds": INT, "ttlSecondsAfterFinished": INT, "suspend": BOOL,
                "podFailurePolicy": ANY, "successPolicy": ANY, "podReplacementPolicy": STR,
                "manualSelector": BOOL, "selector": LABEL_SELECTOR, "managedBy": STR,
                "template": POD_TEMPLATE}, ("template",))
REPLICATED_JOB = obj({"name": STR, "groupName": STR,
                      "template": obj({"metadata": OBJECT_META, "spec": JOB_SPEC}),
                      "replicas": INT,
                      "dependsOn": lst(obj({"name": STR, "status": enum("Ready", "Complete")},
                                           ("name", "status")))},
                     ("name", "template"))
JOBSET = obj({
    "apiVersion": enum("jobset.x-k8s.io/v1alpha2"), "kind": enum("JobSet"),
    "metadata": OBJECT_META,
    "spec": obj({
        "replicatedJobs": lst(REPLICATED_JOB),
        "network": obj({"enableDNSHostnames": BOOL, "subdomain": STR,
                        "publishNotReadyAddresses": BOOL}),
        "successPolicy": obj({"operator": enum("All", "Any"),
                              "targetReplicatedJobs": lst(STR)}, ("operator",)),
        "failurePolicy": obj({"maxRestarts": INT,
                              "restartStrategy": enum("Recreate", "BlockingRecreate",
                                                      "InPlaceRestart"),
                              "rules": lst(ANY)}),
        "startupPolicy": obj({"startupPolicyOrder": enum("AnyOrder", "InOrder")},
                             ("startupPolicyOrder",)),
        "suspend": BOOL,
        "coordinator": obj({"replicatedJob": STR, "jobIndex": INT, "podIndex": INT},
                           ("replicatedJob",)),
        "managedBy": STR, "ttlSecondsAfterFinished": INT, "volumeClaimPolicies": lst(ANY),
    }),
}, ("apiVersion", "kind", "metadata", "spec"))

SCHEMAS = {"MPIJob": MPIJOB, "JobSet": JOBSET}


def check(value, schema: dict, path: str = "") -> list[str]:
    """Every way `value` departs from `schema`, as "path: problem"."""
    kind = schema["type"]
    where = path or "."
    if kind == "any":
        return []
    if kind == "str":
        return [] if isinstance(value, str) else [f"{where}: want a string, got {value!r}"]
    if kind == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{where}: want an integer, got {value!r}"]
    if kind == "bool":
        return [] if isinstance(value, bool) else [f"{where}: want true or false, got {value!r}"]
    if kind == "quantity":
        ok = isinstance(value, (str, int)) and not isinstance(value, bool)
        return [] if ok else [f"{where}: want a quantity, got {value!r}"]
    if kind == "enum":
        ok = value in schema["values"]
        return [] if ok else [f"{where}: {value!r} is not one of {sorted(schema['values'])}"]
    if kind == "list":
        if not isinstance(value, list):
            return [f"{where}: want a list, got {type(value).__name__}"]
        return [e for i, item in enumerate(value) for e in check(item, schema["item"], f"{path}[{i}]")]
    if kind == "map":
        if not isinstance(value, dict):
            return [f"{where}: want a map, got {type(value).__name__}"]
        errors = []
        for key, item in value.items():
            if schema["keys"] is not None and key not in schema["keys"]:
                errors.append(f"{path}.{key}: not one of {list(schema['keys'])}")
            errors += check(item, schema["value"], f"{path}.{key}")
        return errors
    if kind == "object":
        if not isinstance(value, dict):
            return [f"{where}: want an object, got {type(value).__name__}"]
        errors = [f"{path}.{name}: required" for name in sorted(schema["required"] - value.keys())]
        for key, item in value.items():
            if key not in schema["fields"]:
                errors.append(f"{path}.{key}: unknown field")
            else:
                errors += check(item, schema["fields"][key], f"{path}.{key}")
        return errors
    raise ValueError(f"schema type {kind}")
