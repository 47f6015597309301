# SPDX-License-Identifier: Apache-2.0
"""What the packaging tests (packaging_*_test.py) share: the paths under
packaging/, the manifests rendered with `kubectl kustomize` (the newest
kubectl on PATH, no warning allowed) and picked apart (the DaemonSet's
containers and volumes, the generated rocenetd ConfigMap, a command's
flags), the built binaries, and rocenetd run with a given config in a
network namespace of its own."""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile

import pytest
import yaml

from harness import BUILD_DIR, binary, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
PKG = os.path.join(REPO, "packaging")
K8S = os.path.join(PKG, "kubernetes")
OVERLAYS = {"generic": os.path.join(K8S, "overlays", "generic"),
            "openshift": os.path.join(K8S, "overlays", "openshift")}
# Every overlay shipped, with either allocation.
ALL_OVERLAYS = {name: os.path.join(K8S, "overlays", name)
                for name in ("generic", "generic-dra", "openshift", "openshift-dra")}
# The node side rocenet-controller makes for a policy of each overlay's
# platform and mode (its DaemonSet, ConfigMap and cluster objects):
# packaging/kubernetes/node, from which the operator's manifests are
# generated.
NODE_SIDES = {name: os.path.join(K8S, "node", name) for name in ALL_OVERLAYS}
CHART = os.path.join(PKG, "helm", "rocenet")
# rocenet-diagd's flags as docs/deploying.md names them; the manifests and
# the systemd unit give it no other (packaging_config_test checks them
# against `rocenet-diagd --help`).
DIAGD_FLAGS = frozenset({"--socket", "--node-socket", "--data-port", "--metrics-address",
                         "--secret-file", "--node-name", "--validation-file", "--takeover-wait",
                         "--log-format", "--log-level"})


def _kubectl_versions() -> dict[str, tuple[tuple[int, ...], tuple[int, ...]]]:
    """Every kubectl on PATH (one per real file): (its version, its
    kustomize's version), from `kubectl version --client -o json`."""
    found = {}
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        path = os.path.join(directory or ".", "kubectl")
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            continue
        real = os.path.realpath(path)
        if real in {os.path.realpath(p) for p in found}:
            continue
        cp = subprocess.run([path, "version", "--client", "-o", "json"], capture_output=True,
                            text=True, timeout=30)
        if cp.returncode != 0:
            continue
        info = json.loads(cp.stdout)
        found[path] = (_version(info.get("clientVersion", {}).get("gitVersion", "")),
                       _version(info.get("kustomizeVersion", "")))
    return found


def _version(text: str) -> tuple[int, ...]:
    m = re.match(r"v?(\d+)\.(\d+)\.(\d+)", text)
    return tuple(int(x) for x in m.groups()) if m else (0, 0, 0)


# The manifests use kustomize v5's fields (resources, labels, patches).
KUSTOMIZE_MIN = (5, 0, 0)


@functools.cache
def kubectl() -> str:
    """ROCENET_KUBECTL, or the newest kubectl on PATH; skips when there is
    none, or when its kustomize is older than the manifests need."""
    if os.environ.get("ROCENET_KUBECTL"):
        return os.environ["ROCENET_KUBECTL"]
    found = _kubectl_versions()
    if not found:
        pytest.skip("kubectl not installed (packaging/debian-deps.sh test installs kubernetes-client)")
    path = max(found, key=lambda p: found[p])
    if found[path][1] < KUSTOMIZE_MIN:
        pytest.skip(f"{path} embeds kustomize {'.'.join(map(str, found[path][1]))}; the manifests "
                    f"need kustomize v{'.'.join(map(str, KUSTOMIZE_MIN))} (kubectl 1.27 or later)")
    return path


def render(directory: str) -> list[dict]:
    """`kubectl kustomize directory`, parsed; fails on any warning kustomize
    prints (a deprecated field) as much as on an error."""
    cp = subprocess.run([kubectl(), "kustomize", directory], capture_output=True, text=True,
                        timeout=60)
    assert cp.returncode == 0, f"kubectl kustomize {directory} failed:\n{cp.stderr}"
    warnings = [line for line in cp.stderr.splitlines()
                if re.search(r"deprecated|warning", line, re.I)]
    assert not warnings, f"kubectl kustomize {directory} warns:\n" + "\n".join(warnings)
    return [d for d in yaml.safe_load_all(cp.stdout) if d]


def system(name: str) -> list[dict]:
    """Every object of rocenet running from overlay `name`: what the
    overlay installs and what rocenet-controller makes of its default
    policy (the node side, whose pods run the controller's image)."""
    installed, node_side = render(ALL_OVERLAYS[name]), render(NODE_SIDES[name])
    image = controller(installed)["spec"]["template"]["spec"]["containers"][0]["image"]
    for d in node_side:
        if d["kind"] == "DaemonSet":
            spec = d["spec"]["template"]["spec"]
            for c in spec.get("initContainers", []) + spec["containers"]:
                c["image"] = image
    return installed + node_side


@functools.cache
def _helm() -> tuple[str, dict[str, str]]:
    """ROCENET_HELM, or helm 4 from tests/k8s/components.sh (built into its
    cache the first time, a few minutes; linked from there after), with
    helm's own directories in a temporary one; skips without Go to build it."""
    path = os.environ.get("ROCENET_HELM")
    if not path and not shutil.which("go"):
        pytest.skip("go not installed: tests/k8s/components.sh builds helm from its Go module")
    work = tempfile.mkdtemp(prefix="rocenet-helm-")
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    if not path:
        bin_dir = os.path.join(work, "bin")
        cp = subprocess.run(["bash", os.path.join(REPO, "tests", "k8s", "components.sh"),
                             bin_dir, "helm"], capture_output=True, text=True, timeout=1800)
        assert cp.returncode == 0, f"tests/k8s/components.sh could not build helm:\n{cp.stderr}"
        path = os.path.join(bin_dir, "helm")
    env = dict(os.environ, HELM_CACHE_HOME=os.path.join(work, "cache"),
               HELM_CONFIG_HOME=os.path.join(work, "config"),
               HELM_DATA_HOME=os.path.join(work, "data"))
    return path, env


def helm(*args: str) -> subprocess.CompletedProcess:
    """helm with `args`; skips when helm cannot be had (see _helm)."""
    path, env = _helm()
    return subprocess.run([path, *args], capture_output=True, text=True, timeout=60, env=env)


def helm_template(*settings: str) -> list[dict]:
    """`helm template --include-crds` of the chart as release rocenet in
    namespace rocenet-system (the kustomize manifests' names), with --set
    settings."""
    args = ["template", "rocenet", CHART, "--namespace", "rocenet-system", "--include-crds"]
    for setting in settings:
        args += ["--set", setting]
    cp = helm(*args)
    assert cp.returncode == 0, f"helm {' '.join(args)} failed:\n{cp.stderr}"
    return [d for d in yaml.safe_load_all(cp.stdout) if d]


def one(docs: list[dict], kind: str, name: str | None = None) -> dict:
    found = [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    assert len(found) == 1, f"want one {kind} {name or ''}, got {[d['metadata']['name'] for d in found]}"
    return found[0]


def rocenetd_config(docs: list[dict]) -> dict:
    """The generated ConfigMap rocenetd-config-<hash>, checked to be the one
    the DaemonSet mounts."""
    cm = one([d for d in docs if d["kind"] == "ConfigMap"], "ConfigMap")
    assert re.fullmatch(r"rocenetd-config-[a-z0-9]{10}", cm["metadata"]["name"]), \
        cm["metadata"]["name"]
    ds = one(docs, "DaemonSet", "rocenet")
    assert volumes(ds)["config"]["configMap"]["name"] == cm["metadata"]["name"]
    return cm


def containers(ds: dict) -> dict[str, dict]:
    spec = ds["spec"]["template"]["spec"]
    return {c["name"]: c for c in spec.get("initContainers", []) + spec["containers"]}


def volumes(ds: dict) -> dict[str, dict]:
    return {v["name"]: v for v in ds["spec"]["template"]["spec"]["volumes"]}


def sanitized() -> bool:
    """Whether BUILD_DIR is a sanitizer build (ROCENET_SANITIZE set): its
    binaries are not the ones shipped (no static CNI plugin, no man pages)."""
    try:
        with open(os.path.join(BUILD_DIR, "CMakeCache.txt")) as f:
            cache = f.read()
    except OSError:
        return False
    m = re.search(r"^ROCENET_SANITIZE:\w+=(.*)$", cache, re.MULTILINE)
    return bool(m and m.group(1).strip())


def built(name: str) -> str:
    try:
        return binary(name)
    except FileNotFoundError:
        pytest.skip(f"{name} is not built in {BUILD_DIR} (build the project first)")


def flags(argv: list[str]) -> dict[str, str]:
    """The --flag=value arguments of a command, by flag name ("--socket");
    each flag given once."""
    out: dict[str, str] = {}
    for arg in argv[1:]:
        name, sep, value = arg.partition("=")
        assert arg.startswith("--") and sep, f"{argv[0]}: {arg!r} is not --flag=value"
        assert name not in out, f"{argv[0]}: {name} given twice"
        out[name] = value
    return out


@contextlib.contextmanager
def netns(name: str):
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "-n", name, "link", "set", "lo", "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


@contextlib.contextmanager
def running_daemon(rocenetd: str, config_path, workdir):
    """rocenetd with `config_path` in a network namespace of its own (so the
    config's metrics port is free), its socket and state under `workdir`.
    Yields (netns, socket) once the socket exists."""
    os.makedirs(str(workdir), exist_ok=True)
    sock = os.path.join(str(workdir), "run", "rocenetd.sock")
    argv = [rocenetd, f"--config={config_path}", f"--socket={sock}",
            f"--state-dir={os.path.join(str(workdir), 'state')}"]
    log_path = os.path.join(str(workdir), "rocenetd.log")
    with netns(f"pk-pkg-{os.getpid()}") as ns, open(log_path, "wb") as log:
        proc = subprocess.Popen(["ip", "netns", "exec", ns, *argv], stdout=log, stderr=log)
        try:
            wait_until(lambda: proc.poll() is not None or os.path.exists(sock), 10,
                       what="rocenetd socket")
            if proc.poll() is not None:
                with open(log_path, errors="replace") as f:
                    raise AssertionError(f"rocenetd exited {proc.returncode}:\n{f.read()}")
            yield ns, sock
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


# --- the fleet's objects, which the manifests, the chart and the bundle share

CRDS = os.path.join(K8S, "base", "crds")
CRD_NAMES = {"rocenetnodes.rocenet.io", "rocenetclusters.rocenet.io", "rocenettriages.rocenet.io",
             "rocenetnodepolicies.rocenet.io", "rocenetnetworks.rocenet.io"}
# The admission policies that confine what the DaemonSet's and the controller's
# tokens write.
REPORTER_POLICY = "rocenet-node-reporter.rocenet.io"
NODE_STATUS_POLICY = "rocenet-node-status.rocenet.io"
NODE_POLICY_LABEL_POLICY = "rocenet-node-policy-label.rocenet.io"
RESOURCESLICE_POLICY = "rocenet-resourceslices.rocenet.io"


def bound_to(docs: list[dict], namespace: str, account: str) -> set[str]:
    """The roles (kind/name) bound to a ServiceAccount."""
    subject = {"kind": "ServiceAccount", "name": account, "namespace": namespace}
    return {f"{b['roleRef']['kind']}/{b['roleRef']['name']}" for b in docs
            if b["kind"] in ("RoleBinding", "ClusterRoleBinding") and subject in b["subjects"]}


def reporter(docs: list[dict]) -> dict:
    return containers(one(docs, "DaemonSet", "rocenet"))["node-reporter"]


def controller(docs: list[dict]) -> dict:
    return one(docs, "Deployment", "rocenet-controller")


# The admission operation each write verb is checked under.
OPERATION = {"create": "CREATE", "update": "UPDATE", "patch": "UPDATE", "delete": "DELETE"}




def source_flags(main_go: str) -> set[str]:
    """The flags a Go program's main.go defines on its FlagSet."""
    for top in ("operator", os.path.join("plugins", "reporter")):
        path = os.path.join(REPO, top, "cmd", main_go)
        if os.path.exists(path):
            break
    with open(path) as f:
        source = f.read()
    names = re.findall(r'fs\.\w*Var\(&?[^,]+, "([a-z-]+)"', source)
    names += re.findall(r'fs\.(?:Bool|String|Duration|Int|Var)\([^"]*"([a-z-]+)"', source)
    return {("-" if len(n) == 1 else "--") + n for n in names}


def grants(role: dict) -> set[tuple[str, str, str]]:
    """A role's rules as (API group, resource, verb), each rule checked to
    name no resourceNames, non-resource URL or wildcard."""
    out = set()
    for rule in role["rules"]:
        assert not rule.get("nonResourceURLs"), rule
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                for verb in rule["verbs"]:
                    assert "*" not in (group, resource, verb), f"{role['metadata']['name']}: {rule}"
                    out.add((group, resource, verb))
    return out


def port(address: str) -> int:
    return int(address.rsplit(":", 1)[1])
