# SPDX-License-Identifier: Apache-2.0
"""Packaging, the container image: the runtime stage of the Containerfile
installs exactly the Debian packages that own the shared libraries the
binaries load; the runtime install component holds every command the
DaemonSet runs; and install-cni.sh, the init container's script, replaces the
CNI plugin on the host atomically and never with a binary that does not work."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from harness import BUILD_DIR
from packaging_support import PKG, built, containers, one, system

DYNAMIC_BINARIES = ("rocenetd", "rocenet-diagd", "rocectl", "rocenet-device-plugin")


def runtime_stage_packages() -> set[str]:
    with open(os.path.join(PKG, "container", "Containerfile")) as f:
        text = f.read()
    runtime = re.split(r"^FROM ", text, flags=re.M)[-1]
    assert runtime.startswith("docker.io/library/debian:12-slim"), "runtime stage is debian:12-slim"
    install = re.search(r"apt-get install -y --no-install-recommends((?:\s*\\\n\s*[a-z0-9.+-]+)+)", runtime)
    assert install, "no apt-get install in the runtime stage"
    return set(re.findall(r"[a-z0-9][a-z0-9.+-]+", install.group(1)))


def owning_packages(paths: set[str]) -> dict[str, str]:
    """Library path -> the Debian package that owns it, in one dpkg -S call.
    dpkg knows a file under the name its package ships (/lib or /usr/lib)."""
    def candidates(path):
        out = []
        for c in (path, os.path.realpath(path)):
            out += [c, re.sub(r"^/usr/lib/", "/lib/", c), re.sub(r"^/lib/", "/usr/lib/", c)]
        return out
    everything = sorted({c for p in paths for c in candidates(p)})
    cp = subprocess.run(["dpkg", "-S", *everything], capture_output=True, text=True)
    owner = {}
    for line in cp.stdout.splitlines():
        pkg, _, path = line.partition(": ")
        owner[path] = pkg.split(":")[0]
    result = {}
    for p in paths:
        found = [owner[c] for c in candidates(p) if c in owner]
        assert found, f"no Debian package owns {p}"
        result[p] = found[0]
    return result


def test_runtime_image_packages_are_exactly_what_the_binaries_load():
    libs = set()
    for name in DYNAMIC_BINARIES:
        cp = subprocess.run(["ldd", built(name)], capture_output=True, text=True, check=True)
        libs.update(re.findall(r"=> (/\S+)", cp.stdout))
    if any(re.search(r"/lib(asan|tsan|ubsan)\.so", lib) for lib in libs):
        pytest.skip("a sanitizer build: the image holds the plain build, whose libraries differ")
    needed: dict[str, set[str]] = {}
    for lib, pkg in owning_packages(libs).items():
        needed.setdefault(pkg, set()).add(os.path.basename(lib))
    listed = runtime_stage_packages()
    assert not set(needed) - listed, \
        f"runtime stage lacks {sorted(set(needed) - listed)} for {[needed[p] for p in set(needed) - listed]}"
    assert not listed - set(needed), f"runtime stage installs unneeded {sorted(listed - set(needed))}"
    # The CNI plugin runs from the host's CNI directory, and the DRA plugin
    # is Go: no shared libraries.
    for name in ("rocenet", "rocenet-dra-plugin"):
        cp = subprocess.run(["ldd", built(name)], capture_output=True, text=True)
        assert "not a dynamic executable" in cp.stdout + cp.stderr, (name, cp.stdout)


def test_manifest_commands_exist_in_the_image_layout(tmp_path):
    """stage.sh lays out what the image holds from the build tree, as the
    Containerfile's build stage and the end-to-end image run it; every
    command the DaemonSet runs is there."""
    for name in ("rocenetd", "rocenet-diagd", "rocectl", "rocenet", "rocenet-device-plugin",
                 "rocenet-dra-plugin"):
        built(name)
    root = tmp_path / "image"
    cp = subprocess.run(["bash", os.path.join(PKG, "container", "stage.sh"), BUILD_DIR, str(root)],
                        capture_output=True, text=True)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    with open(os.path.join(PKG, "container", "Containerfile")) as f:
        containerfile = f.read()
    assert "bash packaging/container/stage.sh /build /out" in containerfile
    # The image's build stage builds every C++ program the DaemonSet runs.
    targets = re.search(r"cmake --build /build --target ([^\\\n]+)", containerfile).group(1).split()
    assert {"rocenetd", "rocenet-diagd", "rocectl", "rocenet", "rocenet-device-plugin"} <= set(targets), \
        targets
    # The licence travels with the binaries: the copyright file from the
    # install rules, the licence text where OpenShift's image rules want it.
    assert os.path.isfile(root / "usr/share/doc/rocenet/copyright")
    assert os.path.isfile(root / "licenses/LICENSE")
    # Stripped: the image carries no debug information.
    cp = subprocess.run(["readelf", "--section-headers", "--wide", str(root / "usr/sbin/rocenetd")],
                        capture_output=True, text=True, check=True)
    assert ".debug_info" not in cp.stdout, "rocenetd in the image keeps its debug information"
    present = {"/bin/sh"}
    # The Go programs come from the image's Go stage, one `go build` of
    # their packages into /usr/bin (the node reporter and rocenet-controller
    # are not in the runtime component: they run only from the image).
    go_build = re.search(r"-o /out/usr/bin/ ((?:\./[\w/-]+(?:\s*\\\n\s*| )?)+)", containerfile)
    assert go_build, "the Containerfile's Go stage builds no program into /usr/bin"
    for package in go_build.group(1).replace("\\", " ").split():
        present.add("/usr/bin/" + os.path.basename(package))
    for overlay in ("generic", "generic-dra"):
        rendered = system(overlay)
        ds = one(rendered, "DaemonSet", "rocenet")
        controller = one(rendered, "Deployment", "rocenet-controller")
        for c in [*containers(ds).values(), *containers(controller).values()]:
            commands = [c["command"]]
            commands += [c[p]["exec"]["command"] for p in ("livenessProbe", "readinessProbe")
                         if "exec" in c.get(p, {})]
            for argv in commands:
                path = argv[0]
                assert path in present or os.access(str(root) + path, os.X_OK), \
                    f"{overlay}: {c['name']}: {path} is not in the image"
    init = containers(ds)["install-cni"]["command"]
    assert os.access(str(root) + init[1], os.X_OK), f"{init[1]}: the CNI plugin the init container copies"



# --- the init container's script ----------------------------------------------------

def test_install_cni_replaces_the_plugin_atomically(tmp_path):
    script = os.path.join(PKG, "container", "install-cni.sh")
    plugin = built("rocenet")
    dest = tmp_path / "cni-bin"
    dest.mkdir()
    old = dest / "rocenet"
    old.write_text("#!/bin/sh\necho old\n")
    old.chmod(0o755)
    old_inode = old.stat().st_ino
    cp = subprocess.run(["sh", script, plugin, str(dest)], capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr
    new = dest / "rocenet"
    assert new.stat().st_ino != old_inode, "replaced by rename, not rewritten in place"
    assert new.stat().st_mode & 0o777 == 0o755
    assert sorted(os.listdir(dest)) == ["rocenet"], "no temporary file left behind"
    version = subprocess.run([str(new)], env={"CNI_COMMAND": "VERSION"}, capture_output=True,
                             text=True, stdin=subprocess.DEVNULL)
    assert "1.1.0" in json.loads(version.stdout)["supportedVersions"]

    # A binary that cannot answer VERSION never replaces a working one.
    bad = tmp_path / "bad"
    bad.write_text("#!/bin/sh\nexit 1\n")
    bad.chmod(0o755)
    before = new.read_bytes()
    cp = subprocess.run(["sh", script, str(bad), str(dest)], capture_output=True, text=True)
    assert cp.returncode != 0
    assert new.read_bytes() == before
    assert sorted(os.listdir(dest)) == ["rocenet"]

