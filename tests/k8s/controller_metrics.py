# SPDX-License-Identifier: Apache-2.0
"""rocenet-controller's metrics as a scraper reads them, for the
end-to-end tests: each running replica's /metrics over HTTPS through
`kubectl port-forward` (the API server's proxy would pass no token on),
with a bearer token the controller has the API server authenticate and
authorize."""

from __future__ import annotations

import os
import re
import ssl
import subprocess
import urllib.error
import urllib.request

NS = "rocenet-system"
SELECTOR = "app.kubernetes.io/name=rocenet,app.kubernetes.io/component=controller"


def scrape(env, token: str) -> list[tuple[int, str]]:
    """(HTTP status, body) of each running replica's /metrics."""
    pods = env.json("-n", NS, "get", "pods", "-l", SELECTOR)
    out = []
    for p in pods["items"]:
        if p["status"].get("phase") != "Running":
            continue
        forward = subprocess.Popen(
            [os.path.join(env.cluster.bin, "kubectl"), "--kubeconfig", env.cluster.kubeconfig,
             "-n", NS, "port-forward", f"pod/{p['metadata']['name']}", ":50155"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            line = forward.stdout.readline()
            m = re.search(r"127\.0\.0\.1:(\d+) ->", line)
            if not m:
                continue
            # The controller's certificate is its own, made at its start.
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            req = urllib.request.Request(f"https://127.0.0.1:{m.group(1)}/metrics",
                                         headers={"Authorization": f"Bearer {token}"})
            try:
                with urllib.request.urlopen(req, context=context, timeout=10) as resp:
                    out.append((resp.status, resp.read().decode()))
            except urllib.error.HTTPError as e:
                out.append((e.code, e.read().decode(errors="replace")))
        except OSError:
            continue
        finally:
            forward.terminate()
            forward.wait(timeout=10)
    return out
