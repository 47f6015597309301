# SPDX-License-Identifier: Apache-2.0
"""Container images for the test cluster, written as OCI image archives
(the image layout of the OCI image spec, in a tar) that `ctr images import`
takes: there is no registry to pull from.

An image here is one uncompressed layer of the files it is given, a config
with its entrypoint, and an index naming it (`io.containerd.image.name`)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import tarfile
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))


@dataclass
class Image:
    name: str  # e.g. "registry.k8s.io/pause:3.10.1"
    entrypoint: list[str]
    files: dict[str, tuple[bytes, int]] = field(default_factory=dict)  # path -> (data, mode)
    symlinks: dict[str, str] = field(default_factory=dict)  # path -> target
    env: list[str] = field(default_factory=lambda: ["PATH=/bin:/usr/bin:/sbin:/usr/sbin"])


def _blob(out: tarfile.TarFile, data: bytes) -> str:
    digest = hashlib.sha256(data).hexdigest()
    info = tarfile.TarInfo(f"blobs/sha256/{digest}")
    info.size = len(data)
    out.addfile(info, io.BytesIO(data))
    return f"sha256:{digest}"


def _layer(image: Image) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as layer:
        dirs = set()
        for path in list(image.files) + list(image.symlinks):
            parts = path.strip("/").split("/")[:-1]
            for i in range(1, len(parts) + 1):
                dirs.add("/".join(parts[:i]))
        for d in sorted(dirs):
            info = tarfile.TarInfo(d)
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
            layer.addfile(info)
        for path, (data, mode) in sorted(image.files.items()):
            info = tarfile.TarInfo(path.strip("/"))
            info.size = len(data)
            info.mode = mode
            layer.addfile(info, io.BytesIO(data))
        for path, target in sorted(image.symlinks.items()):
            info = tarfile.TarInfo(path.strip("/"))
            info.type = tarfile.SYMTYPE
            info.linkname = target
            layer.addfile(info)
    return buf.getvalue()


def write_archive(image: Image, path: str) -> None:
    """Writes `image` as an OCI image archive at `path`."""
    layer = _layer(image)
    with tarfile.open(path, "w") as out:
        layer_digest = _blob(out, layer)
        config = json.dumps({
            "architecture": "amd64", "os": "linux",
            "config": {"Entrypoint": image.entrypoint, "Env": image.env},
            "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
        }).encode()
        config_digest = _blob(out, config)
        manifest = json.dumps({
            "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                       "digest": config_digest, "size": len(config)},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                        "digest": layer_digest, "size": len(layer)}],
        }).encode()
        manifest_digest = _blob(out, manifest)
        tag = image.name.rsplit(":", 1)[1]
        index = json.dumps({
            "schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
                           "digest": manifest_digest, "size": len(manifest),
                           "annotations": {"io.containerd.image.name": image.name,
                                           "org.opencontainers.image.ref.name": tag}}],
        }).encode()
        for name, data in (("oci-layout", b'{"imageLayoutVersion":"1.0.0"}'), ("index.json", index)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            out.addfile(info, io.BytesIO(data))


def pause_image(name: str, workdir: str) -> Image:
    """The sandbox image: a static program that waits for a signal and
    reaps what it adopts (tests/k8s/pause.c)."""
    binary = os.path.join(workdir, "pause")
    subprocess.run(["gcc", "-static", "-O2", "-o", binary, os.path.join(HERE, "pause.c")],
                   check=True, capture_output=True)
    with open(binary, "rb") as f:
        return Image(name, ["/pause"], {"/pause": (f.read(), 0o755)})


BUSYBOX_APPLETS = ("sh", "ip", "cat", "ls", "env", "sleep", "grep", "ping", "ifconfig", "ps",
                   "test", "true", "wc", "find")


def busybox_image(name: str) -> Image:
    """A test workload: Debian's static busybox, with the applets the tests
    run in a pod (`kubectl exec ... ip -4 addr`)."""
    with open("/bin/busybox", "rb") as f:
        data = f.read()
    return Image(name, ["/bin/sh"], {"/bin/busybox": (data, 0o755)},
                 {f"/bin/{a}": "busybox" for a in BUSYBOX_APPLETS})
