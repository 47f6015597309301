# SPDX-License-Identifier: Apache-2.0
"""rocenetd on Debian's own kernel in qemu (vm.py), with real PCI NICs.

A generic RoCE NIC node on e1000e: the port is found in the real sysfs by
its driver, brought up and addressed from the real lldpd's Port
Description on the other end of the wire. SKIPPED with the reason where
qemu or the kernel package cannot be had.
"""

from __future__ import annotations

import json
import os
import tempfile

import pytest

import vm

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("ROCENET_BUILD_DIR",
                       os.path.join(os.path.dirname(os.path.dirname(HERE)), "build"))
PORT_MAC, SWITCH_MAC = "52:54:00:00:01:01", "52:54:00:00:01:02"


@pytest.fixture(scope="module")
def booted_kernel():
    lacking = vm.missing()
    if lacking:
        pytest.skip(f"no VM here: missing {', '.join(lacking)}")
    if not os.path.exists(os.path.join(BUILD, "daemon", "server", "rocenetd")):
        pytest.skip(f"no rocenetd built in {BUILD}")
    try:
        k = vm.kernel()
        return k, vm.initramfs(k)
    except Exception as e:  # no mirror, no space: the reason is the skip
        pytest.skip(f"Debian's kernel package not available: {e}")


def run_guest(booted_kernel, guest: str, wires: list[vm.Wire], **env: str) -> vm.Result:
    k, initrd = booted_kernel
    with tempfile.TemporaryDirectory(prefix="rocenet-vm-") as tmp:
        script = os.path.join(tmp, "run.sh")
        with open(script, "w") as f:
            for key, value in {"BUILD": BUILD, **env}.items():
                f.write(f"{key}='{value}'; export {key}\n")
            f.write(f". {os.path.join(HERE, guest)}\n")
        return vm.Vm(k, initrd, wires=wires, timeout=180).run(script)


def guest_lines(result: vm.Result, prefix: str) -> list[str]:
    return [line.split(prefix, 1)[1] for line in result.log.splitlines() if prefix in line]


def test_a_generic_nic_is_found_in_real_sysfs_brought_up_and_addressed(booted_kernel):
    result = run_guest(booted_kernel, "guest_generic_port.sh",
                       [vm.Wire((PORT_MAC, SWITCH_MAC), "e1000e")],
                       DRIVER="e1000e", PORT_MAC=PORT_MAC, SWITCH_MAC=SWITCH_MAC)
    assert result.status == 0, result.log
    print(f"guest ran in {result.seconds:.1f} s")
    ports = json.loads(guest_lines(result, "vm: ports ")[0])["ports"]
    assert len(ports) == 1, ports
    port = ports[0]
    # Found by its driver in the real sysfs, with the PCI function's address.
    assert port["discovery"] == "DISCOVERY_DRIVER" and port["driver"] == "e1000e", port
    assert port["mac"] == PORT_MAC and port["pci_address"].startswith("0000:"), port
    # Registered down by the driver, set up by rocenetd.
    assert "flags 0x1002" in guest_lines(result, "vm: port ")[0]
    assert port["admin_up"], port
    routes = guest_lines(result, "vm: route ")
    assert any(r.startswith("10.200.0.0/16 via 10.200.1.2") for r in routes), routes
    assert port["rail_name"] == "10.200.0.0/16", port
