# SPDX-License-Identifier: Apache-2.0
"""Packaging, the systemd units of hosts outside Kubernetes, read as systemd
reads them (no DEB needed): rocenet-diagd.service runs as root with
CAP_NET_RAW alone, leaves /run/rocenet to rocenetd.service (which makes and
keeps it) and writes only there and in the NFD directory, reaches the
verbs devices the RDMA stage's perftest opens and no other device, uses the
address families of its probes, keeps every hardening setting of
rocenetd.service, gives rocenet-diagd only flags it knows, and systemd rates
its exposure no worse than rocenetd's; the DEB installs it and its maintainer
scripts handle it as they handle rocenetd.service. packaging_deb_test
installs both units from the built DEB."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess

import pytest

from packaging_support import DIAGD_FLAGS, PKG, REPO, built, flags

SYSTEMD = os.path.join(PKG, "systemd")
DIAGD_UNIT = os.path.join(SYSTEMD, "rocenet-diagd.service")
DAEMON_UNIT = os.path.join(SYSTEMD, "rocenetd.service")
# Settings rocenetd.service has that diagd's must have alike: the sandbox,
# the system call filter, the file mode, no restart on a bad flag.
SHARED_HARDENING = (
    "NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp", "ProtectKernelTunables",
    "ProtectKernelModules", "ProtectKernelLogs", "ProtectControlGroups", "ProtectClock",
    "ProtectHostname", "LockPersonality", "MemoryDenyWriteExecute", "RestrictRealtime",
    "RestrictSUIDSGID", "SystemCallArchitectures", "SystemCallFilter", "SystemCallErrorNumber",
    "UMask", "RestartPreventExitStatus", "Restart", "KillSignal")


def unit(path: str) -> dict[str, dict[str, list[str]]]:
    """Section -> key -> every value given, in order (systemd lets a key
    repeat; an empty value resets the list, as systemd does)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current = None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith(("#", ";")):
                continue
            if line.startswith("["):
                current = sections.setdefault(line.strip("[]"), {})
                continue
            key, _, value = line.partition("=")
            values = current.setdefault(key.strip(), [])
            if value.strip():
                values.append(value.strip())
            else:
                values.clear()
    return sections


def words(values: list[str]) -> list[str]:
    return [w for v in values for w in v.split()]


@pytest.fixture(scope="module")
def diagd() -> dict[str, dict[str, list[str]]]:
    return unit(DIAGD_UNIT)


@pytest.fixture(scope="module")
def daemon() -> dict[str, dict[str, list[str]]]:
    return unit(DAEMON_UNIT)


def test_diagd_runs_as_root_with_cap_net_raw_alone(diagd):
    service = diagd["Service"]
    assert words(service["CapabilityBoundingSet"]) == ["CAP_NET_RAW"]
    # Root keeps its bounding set's capabilities; nothing to add for another user.
    assert "User" not in service and "DynamicUser" not in service
    assert "AmbientCapabilities" not in service
    assert service["NoNewPrivileges"] == ["yes"]
    assert service["RestrictNamespaces"] == ["yes"], "diagd enters no namespace"


def test_diagd_leaves_run_rocenet_to_rocenetd(diagd, daemon):
    """rocenetd.service makes /run/rocenet and keeps it when it stops (the
    journal of ports in pods is there); diagd's unit must not declare it
    too, or stopping diagd could take the directory away. diagd writes its
    socket there and, where the directory is, the validation label's file."""
    assert daemon["Service"]["RuntimeDirectory"] == ["rocenet"]
    assert daemon["Service"]["RuntimeDirectoryPreserve"] == ["yes"]
    service = diagd["Service"]
    for key in ("RuntimeDirectory", "RuntimeDirectoryPreserve", "StateDirectory",
                "ConfigurationDirectory", "LogsDirectory", "CacheDirectory"):
        assert key not in service, f"diagd's unit declares {key}"
    writable = words(service["ReadWritePaths"])
    assert "/run/rocenet" in writable, "its socket must be writable, and the directory there"
    assert set(writable) == {"/run/rocenet", "-/etc/kubernetes/node-feature-discovery/features.d"}
    # Wants, not Requires: diagd waits for rocenetd's socket by itself, and
    # a stopped rocenetd must not stop it.
    section = diagd["Unit"]
    assert "rocenetd.service" in words(section["Wants"])
    assert "rocenetd.service" in words(section["After"])
    for key in ("Requires", "BindsTo", "PartOf", "Requisite"):
        assert "rocenetd.service" not in words(section.get(key, [])), key


def test_diagd_reaches_the_verbs_devices_and_nothing_else(diagd):
    """The RDMA stage runs perftest on /dev/infiniband/uverbs*: PrivateDevices
    would hide them, so the device cgroup allows those (and the standard
    pseudo devices) alone; perftest pins the memory it registers."""
    service = diagd["Service"]
    assert service["PrivateDevices"] == ["no"]
    assert service["DevicePolicy"] == ["closed"]
    assert service["DeviceAllow"] == ["char-infiniband_verbs rw"]
    assert service["LimitMEMLOCK"] == ["infinity"]
    assert set(words(service["RestrictAddressFamilies"])) == {
        "AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK", "AF_PACKET"}


def test_diagd_keeps_rocenetds_hardening(diagd, daemon):
    for key in SHARED_HARDENING:
        assert diagd["Service"].get(key) == daemon["Service"].get(key), \
            f"{key}: diagd {diagd['Service'].get(key)}, rocenetd {daemon['Service'].get(key)}"
    assert diagd["Install"]["WantedBy"] == daemon["Install"]["WantedBy"]


def test_diagd_execstart_gives_known_flags(diagd):
    argv = shlex.split(diagd["Service"]["ExecStart"][0])
    assert argv[0] == "/usr/sbin/rocenet-diagd"
    given = flags(argv)
    assert set(given) <= DIAGD_FLAGS, sorted(set(given) - DIAGD_FLAGS)
    assert given["--secret-file"] == "/etc/rocenet/diag-secret"
    # Local only, as rocenetd's metrics in the packaged config.
    with open(os.path.join(SYSTEMD, "config.yaml")) as f:
        daemon_metrics = re.search(r'^metrics_address: "([^"]+)"', f.read(), re.M).group(1)
    assert daemon_metrics.startswith("127.0.0.1:")
    assert given["--metrics-address"] == "127.0.0.1:50154"
    # The docs say where the file goes on a host.
    with open(os.path.join(REPO, "docs", "deploying.md")) as f:
        assert given["--secret-file"] in f.read(), "docs/deploying.md does not name the file"


def test_diagd_execstart_flags_are_in_its_help(diagd):
    usage = subprocess.run([built("rocenet-diagd"), "--help"], capture_output=True, text=True,
                           timeout=10)
    assert usage.returncode == 0, usage.stderr
    known = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]+", usage.stdout))
    given = set(flags(shlex.split(diagd["Service"]["ExecStart"][0])))
    assert not given - known, f"rocenet-diagd does not know {sorted(given - known)}"


def test_systemd_rates_diagd_no_worse_than_rocenetd():
    if not shutil.which("systemd-analyze"):
        pytest.skip("systemd-analyze not installed")
    levels = {}
    for path in (DAEMON_UNIT, DIAGD_UNIT):
        cp = subprocess.run(["systemd-analyze", "security", "--offline=true", path],
                            capture_output=True, text=True, timeout=60)
        name = os.path.basename(path)
        level = re.search(rf"Overall exposure level for {re.escape(name)}: ([0-9.]+)", cp.stdout)
        assert level, cp.stdout[-2000:] + cp.stderr
        levels[name] = float(level.group(1))
    assert levels["rocenet-diagd.service"] <= levels["rocenetd.service"], levels
    assert levels["rocenet-diagd.service"] <= 3.0, levels


def test_the_deb_installs_and_handles_the_diagd_unit():
    """Without building the DEB: the install rules put the unit beside
    rocenetd's and the binary beside rocenetd, and each maintainer script
    that names rocenetd.service names rocenet-diagd.service too."""
    with open(os.path.join(REPO, "cmake", "RocenetPackaging.cmake")) as f:
        rules = f.read()
    units = re.search(r"install\(FILES ([^)]*?)\s+DESTINATION /lib/systemd/system", rules, re.S)
    assert units and {"${ROCENET_PACKAGING_DIR}/systemd/rocenetd.service",
                      "${ROCENET_PACKAGING_DIR}/systemd/rocenet-diagd.service"} == \
        set(units.group(1).split())
    assert re.search(r"install\(TARGETS rocenetd rocenet-diagd RUNTIME DESTINATION sbin "
                     r"COMPONENT runtime\)", rules)
    assert '"rocenet-diagd|8|' in rules, "a man page from its --help"
    for script in ("postinst", "prerm", "postrm"):
        with open(os.path.join(PKG, "deb", script)) as f:
            text = f.read()
        assert "rocenetd.service" in text and "rocenet-diagd.service" in text, script
        cp = subprocess.run(["sh", "-n", os.path.join(PKG, "deb", script)], capture_output=True,
                            text=True)
        assert cp.returncode == 0, f"{script}: {cp.stderr}"
