# SPDX-License-Identifier: Apache-2.0
"""What the simulated fabric's self-tests (sim_*_test.py) share: the import
of tests/sim, whether this machine can build a fabric, and small probes of
links and the fake sysfs."""

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

SIM_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim")
sys.path.insert(0, os.path.abspath(SIM_DIR))

from fabric import unique_name  # noqa: E402

FABRIC_PY = os.path.join(os.path.abspath(SIM_DIR), "fabric.py")


def _netns_usable():
    if os.geteuid() != 0:
        return "needs root"
    for tool in ("ip", "lldpd", "lldpcli"):
        if shutil.which(tool) is None:
            return f"{tool} not installed"
    probe = unique_name("rnprobe")
    cp = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if cp.returncode != 0:
        return f"ip netns add fails: {cp.stderr.strip()}"
    subprocess.run(["ip", "netns", "delete", probe], capture_output=True)
    return None


_SKIP = _netns_usable()
needs_fabric = pytest.mark.skipif(_SKIP is not None, reason=f"simulated fabric unavailable: {_SKIP}")


def ip_json(*args):
    cp = subprocess.run(["ip", "-j", *args], check=True, capture_output=True, text=True)
    return json.loads(cp.stdout)


def ip(*args):
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def carrier(f, ifname):
    cp = f.node_exec(["cat", f"/sys/class/net/{ifname}/carrier"], capture_output=True, text=True)
    return cp.stdout.strip()


def cli(*args):
    return subprocess.run([sys.executable, FABRIC_PY, *args], capture_output=True, text=True, timeout=60)


def wait_until(pred, timeout=2.0, what="condition"):
    """Poll pred every 0.5 ms; returns the seconds it took."""
    t0 = time.monotonic()
    while not pred():
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.0005)
    return time.monotonic() - t0


def entries(f, index, ifname):
    """(class/net/<if> exists, <pci>/net/<if> exists) in the fake sysfs."""
    p = f.all_ports[index]
    net = os.path.join(f.sysfs_root, "bus/pci/devices", p["pci_address"], "net", ifname)
    return os.path.lexists(os.path.join(f.sysfs_root, "class/net", ifname)), os.path.exists(net)


def snapshot(f, ifname):
    """What a reader finds under class/net/<if>: file contents and link targets."""
    d = os.path.join(f.sysfs_root, "class/net", ifname)
    return {n: os.readlink(os.path.join(d, n)) if os.path.islink(os.path.join(d, n))
            else open(os.path.join(d, n)).read() for n in sorted(os.listdir(d))}
