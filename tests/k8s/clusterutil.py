# SPDX-License-Identifier: Apache-2.0
"""What the test cluster's parts share: its error, waiting for a condition,
a free port, a command that must succeed."""

from __future__ import annotations

import os
import socket
import subprocess
import time


class ClusterError(RuntimeError):
    pass


def first_missing(path: str) -> str | None:
    """The topmost directory of `path` that does not exist yet, if any."""
    missing = None
    while not os.path.exists(path):
        missing, path = path, os.path.dirname(path)
    return missing


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what: str, pred, timeout: float, interval: float = 0.2, log: str | None = None,
             proc: subprocess.Popen | None = None):
    """Polls `pred` until it is true; fails after `timeout`, or at once when
    `proc` (the program that should make it true) has exited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            timeout = 0
            what = f"{what}: exited with {proc.returncode}"
            break
        time.sleep(interval)
    tail = ""
    if log and os.path.exists(log):
        with open(log, errors="replace") as f:
            tail = "\n" + "".join(f.readlines()[-30:])
    raise ClusterError(f"{what}{f': not within {timeout:.0f} s' if timeout else ''}{tail}")


def run(argv: list[str]) -> None:
    cp = subprocess.run(argv, capture_output=True, text=True)
    if cp.returncode != 0:
        raise ClusterError(f"{' '.join(argv)}: {cp.stderr.strip()}")


def http_ok(host: str, port: int, path: str) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1) as s:
            s.sendall(f"GET {path} HTTP/1.0\r\n\r\n".encode())
            return b" 200 " in s.recv(256)
    except OSError:
        return False
