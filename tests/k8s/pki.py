# SPDX-License-Identifier: Apache-2.0
"""The test cluster's certificates, made on the spot with openssl: one CA,
the API server's serving certificate, a client certificate per component,
the kubelet's serving certificate and the service-account key pair.

Nothing here is meant to outlive the cluster: 2048-bit RSA, valid a day."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class Pair:
    cert: str
    key: str


def _openssl(*args: str, cwd: str) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


class Pki:
    """Certificates in `directory`, signed by a CA made there first."""

    def __init__(self, directory: str):
        self.dir = directory
        os.makedirs(directory, mode=0o700, exist_ok=True)
        self.ca = Pair(os.path.join(directory, "ca.crt"), os.path.join(directory, "ca.key"))
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                 "-subj", "/CN=rocenet-e2e-ca", "-keyout", self.ca.key, "-out", self.ca.cert,
                 cwd=directory)
        self.sa_key = os.path.join(directory, "sa.key")
        self.sa_pub = os.path.join(directory, "sa.pub")
        _openssl("genrsa", "-out", self.sa_key, "2048", cwd=directory)
        _openssl("rsa", "-in", self.sa_key, "-pubout", "-out", self.sa_pub, cwd=directory)

    def issue(self, name: str, subject: str, *, ips: tuple[str, ...] = (),
              dns: tuple[str, ...] = (), server: bool = False) -> Pair:
        """A key and a certificate for `subject` ("/CN=.../O=..."), with the
        given subject alternative names; for a server when `server`."""
        pair = Pair(os.path.join(self.dir, f"{name}.crt"), os.path.join(self.dir, f"{name}.key"))
        csr = os.path.join(self.dir, f"{name}.csr")
        ext = os.path.join(self.dir, f"{name}.ext")
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", subject, "-keyout", pair.key,
                 "-out", csr, cwd=self.dir)
        usage = "serverAuth" if server else "clientAuth"
        lines = ["basicConstraints=CA:FALSE", "keyUsage=digitalSignature,keyEncipherment",
                 f"extendedKeyUsage={usage}"]
        sans = [f"IP:{ip}" for ip in ips] + [f"DNS:{d}" for d in dns]
        if sans:
            lines.append("subjectAltName=" + ",".join(sans))
        with open(ext, "w") as f:
            f.write("\n".join(lines) + "\n")
        _openssl("x509", "-req", "-in", csr, "-CA", self.ca.cert, "-CAkey", self.ca.key,
                 "-CAcreateserial", "-days", "1", "-extfile", ext, "-out", pair.cert,
                 cwd=self.dir)
        os.remove(csr)
        os.remove(ext)
        return pair
