# SPDX-License-Identifier: Apache-2.0
"""Packaging, the DEB: it builds with CPack, its Depends names the libraries
the binaries load, it holds the files where Debian wants them (the CNI plugin
in /usr/lib/cni, not on PATH; the config a conffile; rocenet-diagd beside
rocenetd with a unit of its own), installs with dpkg, runs (rocenetd starts
with the packaged config; where systemd-analyze is there, both units verify
and are hardened), and is purged again leaving nothing behind. lintian
finds no error or warning in it, and its man pages document every flag of
the binaries they describe."""

from __future__ import annotations

import contextlib
import fcntl
import glob
import gzip
import os
import re
import shutil
import subprocess
import time

import pytest

from harness import BUILD_DIR
from packaging_support import built, running_daemon, sanitized


@contextlib.contextmanager
def exclusive(path: str):
    """Only one DEB install test on this machine at a time."""
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def dpkg(*args: str) -> subprocess.CompletedProcess:
    """dpkg, waiting while apt or another dpkg holds the database lock."""
    deadline = time.monotonic() + 300
    while True:
        cp = subprocess.run(["dpkg", *args], capture_output=True, text=True,
                            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        if cp.returncode == 0 or "lock" not in cp.stderr or time.monotonic() > deadline:
            return cp
        time.sleep(2)


def installed(package: str) -> bool:
    cp = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True)
    return "installed" in cp.stdout and "not-installed" not in cp.stdout


@pytest.fixture(scope="module")
def deb(tmp_path_factory) -> str:
    """The DEB, built once for the module's tests."""
    for name in ("rocenetd", "rocenet-diagd", "rocectl", "rocenet", "rocenet-device-plugin",
                 "rocenet-dra-plugin", "kubectl-rocenet"):
        built(name)
    for tool in ("cpack", "dpkg-shlibdeps"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} not installed (packaging/debian-deps.sh test installs dpkg-dev)")
    out = tmp_path_factory.mktemp("deb")
    cp = subprocess.run(["cpack", "-G", "DEB", "-B", str(out)], cwd=BUILD_DIR,
                        capture_output=True, text=True, timeout=600)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    debs = glob.glob(str(out / "*.deb"))
    assert len(debs) == 1, debs
    return debs[0]


def test_lintian_finds_no_error_or_warning(deb):
    if sanitized():
        pytest.skip("a sanitizer build: lintian checks the DEB of the plain build")
    if not shutil.which("lintian"):
        pytest.skip("lintian not installed (packaging/debian-deps.sh test installs it)")
    cp = subprocess.run(["lintian", "--tag-display-limit", "0", deb], capture_output=True,
                        text=True, timeout=300)
    findings = [line for line in (cp.stdout + cp.stderr).splitlines() if line[:2] in ("E:", "W:")]
    assert not findings, "lintian:\n" + "\n".join(findings)
    # The overrides are used, not stale: each still matches a tag lintian sees.
    overridden = subprocess.run(["lintian", "--show-overrides", "--tag-display-limit", "0", deb],
                                capture_output=True, text=True, timeout=300).stdout
    for tag in ("statically-linked-binary", "embedded-library"):
        assert f"O: rocenet: {tag}" in overridden, overridden


def man_text(deb: str, member: str, tmp_path) -> str:
    """A man page of the DEB as plain words (groff escapes undone)."""
    subprocess.run(["dpkg-deb", "-x", deb, str(tmp_path)], check=True)
    with gzip.open(tmp_path / member.lstrip("/"), "rt") as f:
        text = f.read()
    return re.sub(r"\\f[BIRP]", "", text).replace("\\-", "-")


@pytest.mark.parametrize("binary,page", [
    ("rocenetd", "/usr/share/man/man8/rocenetd.8.gz"),
    ("rocenet-diagd", "/usr/share/man/man8/rocenet-diagd.8.gz"),
    ("rocectl", "/usr/share/man/man1/rocectl.1.gz"),
    ("rocenet-device-plugin", "/usr/share/man/man1/rocenet-device-plugin.1.gz"),
    ("rocenet-dra-plugin", "/usr/share/man/man1/rocenet-dra-plugin.1.gz"),
    ("kubectl-rocenet", "/usr/share/man/man1/kubectl-rocenet.1.gz"),
])
def test_each_man_page_documents_every_flag_of_its_binary(deb, binary, page, tmp_path):
    if sanitized():
        pytest.skip("a sanitizer build has no man pages (help2man would run instrumented binaries)")
    usage = subprocess.run([built(binary), "--help"], capture_output=True, text=True)
    assert usage.returncode == 0, usage.stderr
    flags = sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]+", usage.stdout)))
    assert len(flags) >= 3, usage.stdout
    text = man_text(deb, page, tmp_path)
    assert f"{binary} " in text, text[:500]
    missing = [flag for flag in flags if flag not in text]
    assert not missing, f"{page} lacks {missing}"


def test_deb_builds_installs_runs_and_is_removed(deb, tmp_path):

    fields = subprocess.run(["dpkg-deb", "-f", deb, "Package", "Depends"], capture_output=True,
                            text=True, check=True).stdout
    assert "Package: rocenet" in fields
    for lib in ("libgrpc++1.51", "libprotobuf32", "libnl-3-200", "libyaml-cpp0.7", "libc6"):
        assert lib in fields, f"Depends lacks {lib}: {fields}"
    contents = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True, check=True).stdout
    files = sorted("/" + line.split()[-1].lstrip("./") for line in contents.splitlines()
                   if not line.startswith("d"))
    for want in ("/usr/sbin/rocenetd", "/usr/sbin/rocenet-diagd", "/usr/bin/rocectl",
                 "/usr/bin/rocenet-device-plugin", "/usr/bin/rocenet-dra-plugin",
                 "/usr/bin/kubectl-rocenet",
                 "/usr/lib/cni/rocenet", "/lib/systemd/system/rocenetd.service",
                 "/lib/systemd/system/rocenet-diagd.service",
                 "/etc/rocenet/config.yaml", "/etc/iproute2/rt_protos.d/rocenet.conf",
                 "/usr/share/doc/rocenet/README.md", "/usr/share/doc/rocenet/docs/deploying.md"):
        assert want in files, f"{want} not in the DEB: {files}"
    assert "/usr/bin/rocenet" not in files, "the CNI plugin belongs in /usr/lib/cni, not on PATH"
    conffiles = subprocess.run(["dpkg-deb", "-I", deb, "conffiles"], capture_output=True, text=True).stdout
    assert "/etc/rocenet/config.yaml" in conffiles

    with exclusive("/run/lock/rocenet-packaging-deb.lock"):
        if installed("rocenet"):
            pytest.skip("a rocenet package is already installed on this machine; not replacing it")
        clashes = [f for f in files if os.path.lexists(f)]
        if clashes:
            pytest.skip(f"files of the DEB already exist here, not overwriting them: {clashes}")
        try:
            cp = dpkg("-i", deb)
            assert cp.returncode == 0, cp.stdout + cp.stderr
            assert installed("rocenet")
            env = {**os.environ, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
            for daemon in ("rocenetd", "rocenet-diagd"):
                version = subprocess.run([daemon, "--version"], capture_output=True, text=True,
                                         env=env)
                assert version.returncode == 0 and version.stdout.startswith(f"{daemon} "), version
                assert shutil.which(daemon, path=env["PATH"]) == f"/usr/sbin/{daemon}"
            usage = subprocess.run(["rocectl", "--help"], capture_output=True, text=True, env=env)
            assert usage.returncode == 0 and "rocectl" in usage.stdout, usage
            cni = subprocess.run(["/usr/lib/cni/rocenet"], env={"CNI_COMMAND": "VERSION"},
                                 capture_output=True, text=True, stdin=subprocess.DEVNULL)
            assert "supportedVersions" in cni.stdout
            # The packaged config is one rocenetd starts with.
            with running_daemon("/usr/sbin/rocenetd", "/etc/rocenet/config.yaml", tmp_path / "run-deb"):
                pass
            for name in ("rocenetd.service", "rocenet-diagd.service"):
                if not shutil.which("systemd-analyze"):
                    break
                unit = f"/lib/systemd/system/{name}"
                verify = subprocess.run(["systemd-analyze", "verify", unit], capture_output=True, text=True)
                assert verify.returncode == 0, verify.stderr
                # Hardened: systemd rates the unit's exposure (0 best, 10 worst).
                security = subprocess.run(["systemd-analyze", "security", "--offline=true", unit],
                                          capture_output=True, text=True)
                level = re.search(rf"Overall exposure level for {re.escape(name)}: ([0-9.]+)",
                                  security.stdout)
                assert level and float(level.group(1)) <= 4.0, security.stdout[-2000:]
        finally:
            cp = dpkg("--purge", "rocenet")
            assert cp.returncode == 0, cp.stdout + cp.stderr
        assert not installed("rocenet")
        left = [f for f in files if os.path.lexists(f)]
        assert not left, f"left behind after purge: {left}"
