# SPDX-License-Identifier: Apache-2.0
"""Packaging, the configuration the manifests carry, taken by the real
binaries: rocenetd starts with the rendered ConfigMap and answers the
DaemonSet's probes exactly; the config-override example overlay changes one
key, rolls the DaemonSet, and is checked by `rocenetd --check-config`; and
the example NetworkAttachmentDefinition is accepted by the real CNI plugin."""

from __future__ import annotations

import json
import os
import re
import subprocess

import yaml

from harness import wait_until
from packaging_support import (K8S, OVERLAYS, REPO, built, containers, one, render,
                               rocenetd_config, running_daemon)


def write_volume(cm: dict, directory) -> str:
    """The ConfigMap's keys as the files its volume shows; the directory."""
    os.makedirs(str(directory), exist_ok=True)
    for key, text in cm["data"].items():
        with open(os.path.join(str(directory), key), "w") as f:
            f.write(text)
    return str(directory)


def config_flag(ds: dict) -> str:
    """The --config path of rocenetd's command in the DaemonSet."""
    flags = [a for a in containers(ds)["rocenetd"]["command"] if a.startswith("--config=")]
    assert len(flags) == 1
    return flags[0].split("=", 1)[1]


# --- the ConfigMap and the probes ----------------------------------------------------

def test_probes_and_configmap_against_the_real_daemon(tmp_path):
    """rocenetd starts with the ConfigMap's config (paths that would touch this
    host moved into a temporary directory) and answers exactly the probes,
    also before the diagnostics Secret exists."""
    docs = render(OVERLAYS["generic"])
    ds = one(docs, "DaemonSet", "rocenet")
    daemon = containers(ds)["rocenetd"]
    cm = rocenetd_config(docs)
    # rocenetd reads the whole volume: config.yaml and any override beside it.
    assert config_flag(ds) == next(m["mountPath"] for m in daemon["volumeMounts"]
                                   if m["name"] == "config")
    config = yaml.safe_load(cm["data"]["config.yaml"])
    config["outputs"]["nfd_features"] = str(tmp_path / "features.d" / "rocenet")
    (tmp_path / "features.d").mkdir()
    # The optional Secret not created yet: the daemon still starts and is
    # ready, its data port refusing every request.
    assert config["diag_secret_file"]
    config["diag_secret_file"] = str(tmp_path / "etc-rocenet-diag" / "secret")
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

        def log_says(text: str) -> bool:
            with open(tmp_path / "rocenetd.log", errors="replace") as f:
                return text in f.read()
        wait_until(lambda: log_says("every request is refused until it can be read"), 10,
                   what="rocenetd's log naming the missing diag secret")
        # The socket path gone (what an overlapping restart used to do): the
        # metrics still answer, the liveness probe must not.
        os.rename(sock, sock + ".moved")
        try:
            assert run("livenessProbe").returncode != 0
            assert scrape() is not None
        finally:
            os.rename(sock + ".moved", sock)


def test_a_config_override_overlay_changes_one_key_and_rolls_the_daemonset(tmp_path):
    """examples/config-override adds local.yaml beside the base's config.yaml
    in the same ConfigMap: the base file is untouched, the name (and so the
    DaemonSet's pod template) changes, and rocenetd takes the directory with
    the override, or refuses it naming the file."""
    base = rocenetd_config(render(OVERLAYS["generic"]))
    docs = render(os.path.join(K8S, "examples", "config-override"))
    cm = rocenetd_config(docs)
    assert set(cm["data"]) == {"config.yaml", "local.yaml"}
    assert cm["data"]["config.yaml"] == base["data"]["config.yaml"]
    assert cm["metadata"]["name"] != base["metadata"]["name"], "a changed config must roll"
    override = yaml.safe_load(cm["data"]["local.yaml"])
    assert override["addressing"] == {"mtu": 9000}
    directory = write_volume(cm, tmp_path / "good")
    check = [built("rocenetd"), "--check-config", f"--config={directory}"]
    cp = subprocess.run(check, capture_output=True, text=True, timeout=10)
    assert cp.returncode == 0, cp.stderr
    cm["data"]["local.yaml"] = 'addressing:\n  mtu: "9000"\n'
    directory = write_volume(cm, tmp_path / "bad")
    cp = subprocess.run([built("rocenetd"), "--check-config", f"--config={directory}"],
                        capture_output=True, text=True, timeout=10)
    assert cp.returncode == 2
    assert f"config {directory}/local.yaml" in cp.stderr and "addressing.mtu" in cp.stderr, \
        cp.stderr


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

