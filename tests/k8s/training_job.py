# SPDX-License-Identifier: Apache-2.0
"""The training job of the end-to-end tests on several nodes, as Kubeflow
Trainer's MPI runtime (`mpi-distributed`, runLauncherAsNode) renders a
TrainJob onto a JobSet: a replicated job `launcher` whose pod runs mpirun
and rank 0, and one `node` whose pods run sshd; an SSH key pair in a
Secret mounted in every pod (at mpiuser's ~/.ssh: the pods run as
mpiuser, sshd on port 2222, as Trainer's MPI images do); the hostfile, one
line per pod's DNS name
(`<jobset>-<replicated job>-<index>-<pod>.<jobset>`, from JobSet's headless
Service), in a ConfigMap mounted in the launcher; Open MPI's environment
as Trainer sets it. Each pod asks rocenet for `ports` scale-out ports
(the resource and one network annotation a port), and Open MPI's
transport is pinned to them (net1, net2...): the collective's data never
takes the primary network.

The image is tests/k8s/training/ (Debian's Open MPI, mpi4py, NumPy, SSH);
its allreduce.py prints the run's figures as one line, `ALLREDUCE
{json}`.

The shipped Gaudi 3 TrainJob (packaging/kubernetes/examples/training/)
runs on its shipped MPI runtime, changed only where the fabric needs it
(on_the_fabric); Trainer's controller then renders the JobSet, its Secret
and hostfile itself. The triage's TrainJob runs on Trainer's own MPI
runtime, adapted (cluster_training_runtime)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile

import yaml

NETWORK = "gaudi-scale-out"
RESOURCE = "rocenet.io/scale-out-port"
SSH_DIR = "/home/mpiuser/.ssh"
SSHD_PORT = 2222
HOSTFILE_DIR = "/etc/mpi"
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "packaging",
                        "kubernetes", "examples", "training")


def ssh_secret(name: str, namespace: str) -> dict:
    """The job's SSH key pair, as Trainer keeps it (type ssh-auth)."""
    with tempfile.TemporaryDirectory() as work:
        key = os.path.join(work, "id")
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", key],
                       check=True)
        with open(key) as private, open(key + ".pub") as public:
            data = {"ssh-privatekey": private.read(), "ssh-publickey": public.read()}
    return {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/ssh-auth",
            "metadata": {"name": f"{name}-mpi-ssh-auth", "namespace": namespace},
            "stringData": data}


def endpoints(name: str, nodes: int) -> list[str]:
    """The pods' DNS names, the launcher's first (it is rank 0)."""
    return [f"{name}-launcher-0-0.{name}"] + [f"{name}-node-0-{i}.{name}" for i in range(nodes - 1)]


def hostfile(name: str, namespace: str, nodes: int) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"{name}-mpi-hostfile", "namespace": namespace},
            "data": {"hostfile": "".join(f"{e} slots=1\n" for e in endpoints(name, nodes))}}


def mpirun(nodes: int, ports: int, size_bytes: int, rounds: int) -> list[str]:
    """The launcher's command: the all-reduce over `nodes` ranks, the
    data on the pods' scale-out interfaces alone, Open MPI's own channel
    (its daemons and the launcher) on the pod network; a rank a node,
    however many slots the hostfile gives each. It first waits
    until every host of its hostfile resolves, its own included (a pod's
    DNS name exists once the endpoint controller has seen the pod), as the
    MPI operator's launcher waits for its workers."""
    scale_out = ",".join(f"net{i + 1}" for i in range(ports))
    run = ["mpirun", "-np", str(nodes), "--map-by", "ppr:1:node", "--mca", "btl", "tcp,self",
           "--mca", "btl_tcp_if_include", scale_out, "--mca", "oob_tcp_if_include", "eth0",
           "-x", f"ALLREDUCE_BYTES={size_bytes}", "-x", f"ALLREDUCE_ROUNDS={rounds}",
           "python3", "/opt/training/allreduce.py"]
    wait = ('for host in $(cut -d" " -f1 "$OMPI_MCA_orte_default_hostfile"); do '
            'until getent hosts "$host" >/dev/null; do sleep 0.5; done; done')
    return ["/bin/sh", "-c", f"{wait}; exec {shlex.join(run)}"]


def _pod(name: str, image: str, ports: int, command: list[str], launcher: bool,
         placement: dict) -> dict:
    container: dict = {"name": "node", "image": image, "command": command,
                       "resources": {"limits": {RESOURCE: ports}}}
    pod = {"metadata": {"annotations": {"k8s.v1.cni.cncf.io/networks": ",".join([NETWORK] * ports)}},
           "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 1,
                    "containers": [container], **placement}}
    mounts = [{"name": "mpi-ssh-auth", "mountPath": SSH_DIR}]
    volumes = [{"name": "mpi-ssh-auth", "secret": {
        "secretName": f"{name}-mpi-ssh-auth",
        "items": [{"key": "ssh-privatekey", "path": "id_rsa"},
                  {"key": "ssh-publickey", "path": "id_rsa.pub"},
                  {"key": "ssh-publickey", "path": "authorized_keys"}]}}]
    env: list[dict] = []
    if launcher:
        mounts.append({"name": "mpi-hostfile", "mountPath": HOSTFILE_DIR})
        volumes.append({"name": "mpi-hostfile", "configMap": {
            "name": f"{name}-mpi-hostfile",
            "items": [{"key": "hostfile", "path": "hostfile", "mode": 0o444}]}})
        env += [{"name": "OMPI_MCA_orte_default_hostfile", "value": f"{HOSTFILE_DIR}/hostfile"},
                {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "true"},
                {"name": "OMPI_MCA_orte_set_default_slots", "value": "1"},
                {"name": "OMPI_MCA_plm_rsh_args", "value": "-o ConnectionAttempts=10"}]
    else:
        container["readinessProbe"] = {"tcpSocket": {"port": SSHD_PORT}, "periodSeconds": 1}
    container["env"] = env
    container["volumeMounts"] = mounts
    pod["spec"]["volumes"] = volumes
    return pod


def _replicated(name: str, pods: int, template: dict) -> dict:
    return {"name": name, "replicas": 1, "template": {"spec": {
        "parallelism": pods, "completions": pods, "backoffLimit": 0, "template": template}}}


def jobset(name: str, namespace: str, image: str, nodes: list[str], ports: int,
           launcher_command: list[str]) -> dict:
    """The JobSet over `nodes` (the launcher on the first, one node pod on
    each other), each pod holding `ports` scale-out ports."""
    sshd = ["/usr/sbin/sshd", "-De", "-f", "/home/mpiuser/.sshd_config"]
    launcher_placement, node_placement = _placements(name, nodes)
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
            "successPolicy": {"operator": "All", "targetReplicatedJobs": ["launcher"]},
            "failurePolicy": {"maxRestarts": 0},
            "replicatedJobs": [
                _replicated("launcher", 1, _pod(name, image, ports, launcher_command, True,
                                                launcher_placement)),
                _replicated("node", len(nodes) - 1, _pod(name, image, ports, sshd, False,
                                                         node_placement)),
            ]}}


def _placements(name: str, nodes: list[str]) -> tuple[dict, dict]:
    """Where the launcher goes (the first node) and the node pods (one on
    each other node)."""
    launcher = {"nodeSelector": {"kubernetes.io/hostname": nodes[0]}}
    workers = {"affinity": {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                                   "values": nodes[1:]}]}]}},
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
            "topologyKey": "kubernetes.io/hostname",
            "labelSelector": {"matchLabels": {"jobset.sigs.k8s.io/jobset-name": name}}}]}}}
    return launcher, workers


def example(name: str) -> list[dict]:
    """The documents of a shipped training example."""
    with open(os.path.join(EXAMPLES, name)) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def on_the_fabric(shipped: dict, trainjob: str, image: str, nodes: list[str], ports: int,
                  launcher_command: list[str]) -> dict:
    """A shipped Gaudi 3 runtime (gaudi3-runtimes.yaml) changed only where
    the simulated fabric cannot run it as shipped: the image (the training
    image: no Gaudi program runs here), the launcher's command (the
    all-reduce), the ports (`ports` a pod, the fabric's rails, instead of a
    Gaudi 3's 24, the network named as often) and where the pods go (the
    TrainJob `trainjob` over `nodes`, on two leaves). The Gaudis asked for,
    the security context, HCCL's variable, the SCC's annotation and the MPI
    policy stay as shipped."""
    runtime = json.loads(json.dumps(shipped))
    launcher, workers = _placements(trainjob, nodes)
    for replicated in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        template = replicated["template"]["spec"]["template"]
        annotations = template["metadata"]["annotations"]
        assert [n.strip() for n in annotations["k8s.v1.cni.cncf.io/networks"].split(",")] == \
            [NETWORK] * 24, annotations
        annotations["k8s.v1.cni.cncf.io/networks"] = ",".join([NETWORK] * ports)
        spec = template["spec"]
        spec.update(launcher if replicated["name"] == "launcher" else workers)
        spec["terminationGracePeriodSeconds"] = 1
        [container] = spec["containers"]
        container["image"] = image
        assert container["resources"]["limits"][RESOURCE] == 24, container["resources"]
        container["resources"]["limits"][RESOURCE] = ports
        if replicated["name"] == "launcher":
            container.pop("args", None)
            container["command"] = launcher_command
    return runtime


def pytorchjob_on_the_fabric(shipped: dict, image: str, nodes: list[str], ports: int,
                             size_bytes: int, rounds: int) -> dict:
    """The shipped PyTorchJob (pytorchjob.yaml) changed only where the
    simulated fabric cannot run it as shipped: the image and the command
    (rendezvous.py, the rendezvous from the operator's variables and a sum
    over the ports, instead of torchrun: there is no PyTorch image here),
    the ports (`ports` a pod instead of 24, the network named as often) and
    where the pods go (the master on the first of `nodes`, the worker on
    the second). The Gaudis asked for, nprocPerNode, the master's port, the
    security context, HCCL's variable and the SCC's annotation stay as
    shipped."""
    job = json.loads(json.dumps(shipped))
    for role, node in (("Master", nodes[0]), ("Worker", nodes[1])):
        template = job["spec"]["pytorchReplicaSpecs"][role]["template"]
        annotations = template["metadata"]["annotations"]
        assert [n.strip() for n in annotations["k8s.v1.cni.cncf.io/networks"].split(",")] == \
            [NETWORK] * 24, annotations
        annotations["k8s.v1.cni.cncf.io/networks"] = ",".join([NETWORK] * ports)
        spec = template["spec"]
        spec["nodeSelector"] = {"kubernetes.io/hostname": node}
        spec["terminationGracePeriodSeconds"] = 1
        [container] = spec["containers"]
        container["image"] = image
        container["command"] = ["python3", "/opt/training/rendezvous.py"]
        container["env"] = container.get("env", []) + [
            {"name": "ALLREDUCE_BYTES", "value": str(size_bytes)},
            {"name": "ALLREDUCE_ROUNDS", "value": str(rounds)}]
        assert container["resources"]["limits"][RESOURCE] == 24, container["resources"]
        container["resources"]["limits"][RESOURCE] = ports
    return job


def cluster_training_runtime(shipped: dict, name: str, trainjob: str, image: str, nodes: list[str],
                             ports: int, launcher_command: list[str]) -> dict:
    """Kubeflow Trainer's own MPI runtime (`shipped`: mpi-distributed, as
    its module ships it) as a platform team adapts it for its jobs: named
    `name`, in the training image, each pod holding `ports` scale-out
    ports (the resource and the network annotation; none for 0), the launcher's
    command the all-reduce, placed for the TrainJob `trainjob` over
    `nodes`. Its MPI policy and everything else as shipped; the controller
    adds the SSH Secret, the hostfile and Open MPI's environment to the
    JobSet it makes of each TrainJob."""
    runtime = json.loads(json.dumps(shipped))
    runtime["metadata"] = {"name": name}
    launcher, workers = _placements(trainjob, nodes)
    for replicated in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        template = replicated["template"]["spec"]["template"]
        if ports:
            template.setdefault("metadata", {}).setdefault("annotations", {})[
                "k8s.v1.cni.cncf.io/networks"] = ",".join([NETWORK] * ports)
        spec = template["spec"]
        spec.update(launcher if replicated["name"] == "launcher" else workers)
        spec["terminationGracePeriodSeconds"] = 1
        [container] = spec["containers"]
        container["image"] = image
        if ports:
            container.setdefault("resources", {}).setdefault("limits", {})[RESOURCE] = ports
        if replicated["name"] == "launcher":
            container.pop("args", None)
            container["command"] = launcher_command
    return runtime


def trainjob(name: str, namespace: str, runtime: str, nodes: int) -> dict:
    """The TrainJob a user writes: the runtime by name, how many nodes."""
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"runtimeRef": {"name": runtime, "apiGroup": "trainer.kubeflow.org",
                                    "kind": "ClusterTrainingRuntime"},
                     "trainer": {"numNodes": nodes}}}


def report(log: str) -> dict:
    """allreduce.py's figures from the launcher's log."""
    lines = [line for line in log.splitlines() if line.startswith("ALLREDUCE ")]
    assert len(lines) == 1, f"no ALLREDUCE line in the launcher's log:\n{log[-3000:]}"
    return json.loads(lines[0].split(" ", 1)[1])
