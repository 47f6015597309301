# SPDX-License-Identifier: Apache-2.0
"""Packaging, the configuration the manifests carry, taken by the real
binaries: rocenetd starts with the rendered ConfigMap and answers the
DaemonSet's probes exactly; rocenet-diagd knows every flag the DaemonSet and
the chart give it, starts with them beside that rocenetd before the
diagnostics Secret exists, answers its probes, serves the metrics port the
Service names and stops cleanly; the config-override example overlay
changes one key, rolls the DaemonSet, and is checked by `rocenetd
--check-config`; and the example NetworkAttachmentDefinition is accepted by
the real CNI plugin."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess

import yaml

from harness import wait_until
from packaging_support import (
    DIAGD_FLAGS,
    K8S,
    OVERLAYS,
    REPO,
    built,
    containers,
    flags,
    one,
    render,
    rocenetd_config,
    running_daemon,
    system,
)


def write_volume(cm: dict, directory) -> str:
    """The ConfigMap's keys as the files its volume shows; the directory."""
    os.makedirs(str(directory), exist_ok=True)
    for key, text in cm["data"].items():
        with open(os.path.join(str(directory), key), "w") as f:
            f.write(text)
    return str(directory)


def remap(argv: list[str], paths: dict[str, str]) -> list[str]:
    """argv with each host path under a key of `paths` moved to its value."""
    out = []
    for arg in argv:
        for host, local in paths.items():
            arg = re.sub(rf"(?<![\w/]){re.escape(host)}(?=/|$|\s)", local, arg)
        out.append(arg)
    return out


def help_flags(program: str) -> set[str]:
    usage = subprocess.run([program, "--help"], capture_output=True, text=True, timeout=10)
    assert usage.returncode == 0, usage.stderr
    return set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]+", usage.stdout))


def config_flag(ds: dict) -> str:
    """The --config path of rocenetd's command in the DaemonSet."""
    flags = [a for a in containers(ds)["rocenetd"]["command"] if a.startswith("--config=")]
    assert len(flags) == 1
    return flags[0].split("=", 1)[1]


# --- the ConfigMap and the probes ----------------------------------------------------

def test_probes_and_configmap_against_the_real_daemon(tmp_path):
    """rocenetd starts with the ConfigMap's config (paths that would touch this
    host moved into a temporary directory) and answers exactly the probes."""
    docs = system("generic")
    ds = one(docs, "DaemonSet", "rocenet")
    daemon = containers(ds)["rocenetd"]
    cm = rocenetd_config(docs)
    # rocenetd reads the whole volume: config.yaml and any override beside it.
    assert config_flag(ds) == next(m["mountPath"] for m in daemon["volumeMounts"]
                                   if m["name"] == "config")
    config = yaml.safe_load(cm["data"]["config.yaml"])
    config["outputs"]["nfd_features"] = str(tmp_path / "features.d" / "rocenet")
    (tmp_path / "features.d").mkdir()
    cm["data"]["config.yaml"] = yaml.safe_dump(config)
    # The volume's directory, as the DaemonSet passes it.
    config_path = write_volume(cm, tmp_path / "etc-rocenet")
    with running_daemon(built("rocenetd"), config_path, tmp_path) as (ns, sock):
        port = int(config["metrics_address"].rsplit(":", 1)[1])
        url = f"http://127.0.0.1:{port}/metrics"

        def scrape():
            cp = subprocess.run(["ip", "netns", "exec", ns, "curl", "-sS", "-o", "-", "-w",
                                 "\n%{http_code}", "--max-time", "5", url],
                                capture_output=True, text=True)
            return cp if cp.returncode == 0 else None
        cp = wait_until(scrape, 10, interval=0.2, what=f"metrics at {url}")
        body, code = cp.stdout.rsplit("\n", 1)
        assert code == "200" and "rocenet_build_info" in body

        def run(probe: str) -> subprocess.CompletedProcess:
            command = daemon[probe]["exec"]["command"]
            return subprocess.run([built("rocectl"), f"--socket={sock}", *command[1:]],
                                  capture_output=True, text=True, timeout=30)
        for probe in ("readinessProbe", "livenessProbe"):
            cp = run(probe)
            assert cp.returncode == 0, f"{probe} failed: {cp.stdout}{cp.stderr}"
        # The socket path gone (what an overlapping restart used to do): the
        # metrics still answer, the liveness probe must not.
        os.rename(sock, sock + ".moved")
        try:
            assert run("livenessProbe").returncode != 0
            assert scrape() is not None
        finally:
            os.rename(sock + ".moved", sock)


# --- rocenet-diagd ---------------------------------------------------------------------

def test_diagd_knows_every_flag_the_manifests_give_it():
    """The DaemonSet's diagd command (the chart renders the same, see
    packaging_manifests_test) uses only flags `rocenet-diagd --help` lists,
    and the help lists every flag the deployment docs name."""
    known = help_flags(built("rocenet-diagd"))
    for overlay in OVERLAYS:
        argv = containers(one(system(overlay), "DaemonSet", "rocenet"))["diagd"]["command"]
        missing = set(flags(argv)) - known
        assert not missing, f"{overlay}: rocenet-diagd does not know {sorted(missing)}"
    assert not DIAGD_FLAGS - known, f"rocenet-diagd --help lacks {sorted(DIAGD_FLAGS - known)}"


def test_diagd_starts_with_the_daemonsets_flags_and_answers_its_probes(tmp_path):
    """rocenet-diagd with the DaemonSet's command (host paths moved into a
    temporary directory), beside rocenetd with the ConfigMap's config in one
    network namespace, before the optional Secret exists: it stays up, makes
    the socket its probes test, serves metrics on the port the Service's
    diag-metrics names, and SIGTERM stops it with exit code 0."""
    docs = system("generic")
    ds = one(docs, "DaemonSet", "rocenet")
    diagd = containers(ds)["diagd"]
    svc_port = {p["name"]: p["targetPort"] for p in one(docs, "Service", "rocenet-metrics")["spec"]["ports"]}
    cm = rocenetd_config(docs)
    config = yaml.safe_load(cm["data"]["config.yaml"])
    (tmp_path / "features.d").mkdir()
    config["outputs"]["nfd_features"] = str(tmp_path / "features.d" / "rocenet")
    cm["data"]["config.yaml"] = yaml.safe_dump(config)
    config_path = write_volume(cm, tmp_path / "etc-rocenet")
    program = built("rocenet-diagd")
    with running_daemon(built("rocenetd"), config_path, tmp_path) as (ns, sock):
        # running_daemon puts rocenetd's socket in <tmp>/run, as /run/rocenet.
        paths = {os.path.dirname(config["socket"]): os.path.dirname(sock),
                 "/etc/rocenet-diag": str(tmp_path / "etc-rocenet-diag"),
                 os.path.dirname(flags(diagd["command"])["--validation-file"]):
                     str(tmp_path / "features.d")}
        argv = remap(diagd["command"], paths)
        assert flags(argv)["--node-socket"] == sock
        assert argv[0] == "/usr/sbin/rocenet-diagd"
        argv[0] = program
        env = dict(os.environ, NODE_NAME="pk-node")
        log_path = tmp_path / "diagd.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(["ip", "netns", "exec", ns, *argv], stdout=log, stderr=log,
                                    env=env)
        try:
            def log_text() -> str:
                return log_path.read_text(errors="replace")

            def probe(name: str) -> subprocess.CompletedProcess:
                return subprocess.run(remap(diagd[name]["exec"]["command"], paths),
                                      capture_output=True, text=True, timeout=10)
            wait_until(lambda: proc.poll() is not None or probe("readinessProbe").returncode == 0,
                       15, what="diagd's socket")
            assert proc.poll() is None, f"rocenet-diagd exited {proc.returncode}:\n{log_text()}"
            assert probe("livenessProbe").returncode == 0

            port = int(flags(argv)["--metrics-address"].rsplit(":", 1)[1])
            assert port == svc_port["diag-metrics"]
            url = f"http://127.0.0.1:{port}/metrics"

            def scrape():
                cp = subprocess.run(["ip", "netns", "exec", ns, "curl", "-sS", "-o", "/dev/null",
                                     "-w", "%{http_code}", "--max-time", "5", url],
                                    capture_output=True, text=True)
                return cp.stdout if cp.returncode == 0 else None
            assert wait_until(scrape, 10, interval=0.2, what=f"diagd's metrics at {url}") == "200"
            # Still up without the Secret: the data port refuses, the rest runs.
            assert proc.poll() is None, f"rocenet-diagd exited {proc.returncode}:\n{log_text()}"
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            try:
                code = proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                raise AssertionError(f"rocenet-diagd did not stop on SIGTERM:\n{log_text()}") from None
        assert code == 0, f"rocenet-diagd exited {code} on SIGTERM:\n{log_text()}"


# --- Multus and the example pod -------------------------------------------------------

def test_network_attachment_definition_is_accepted_by_the_plugin(tmp_path):
    docs = render(os.path.join(K8S, "examples"))
    nad = one(docs, "NetworkAttachmentDefinition")
    with open(os.path.join(REPO, "plugins", "device", "main.cc")) as f:
        resource = re.search(r'resource_name, "([^"]+)"', f.read()).group(1)
    assert nad["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"] == resource
    config = json.loads(nad["spec"]["config"])
    assert config["type"] == "rocenet"
    assert config["name"] == nad["metadata"]["name"]

    pod = one(docs, "Pod")
    networks = [n.strip() for n in pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"].split(",")]
    assert set(networks) == {nad["metadata"]["name"]}
    limits = pod["spec"]["containers"][0]["resources"]["limits"]
    assert int(limits[resource]) == len(networks), "one port per attachment"

    # Under Kubernetes a pod without a port of its own is refused: no shipped
    # network lets it take any free one behind kubelet's back.
    assert "anyFreePort" not in config, config

    # The real plugin takes the configuration and only fails reaching the
    # daemon (code 11), not on the configuration (code 7).
    config["socket"] = str(tmp_path / "absent.sock")
    env = {"CNI_COMMAND": "ADD", "CNI_CONTAINERID": "pkexample", "CNI_NETNS": "/var/run/netns/pk-absent",
           "CNI_IFNAME": "net1", "CNI_PATH": "/opt/cni/bin",
           "CNI_ARGS": "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=example"}
    cp = subprocess.run([built("rocenet")], input=json.dumps(config), env=env,
                        capture_output=True, text=True, timeout=30)
    result = json.loads(cp.stdout)
    assert cp.returncode == 1 and result["code"] == 11, result

