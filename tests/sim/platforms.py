# SPDX-License-Identifier: Apache-2.0
"""Gaudi platforms and the fabric's layout: PCI ids, scale-out NIC indices,
PCI addresses, MACs and how ports are cabled to leaf switches.

The tables follow public sources (Habana's HCL connectivity tables, the
habanalabs driver, Intel's network operator):

* vendor 0x1da3; Gaudi 2 device 0x1020, Gaudi 3 OAM 0x1060, Gaudi 3 PCIe
  card (HL-338) 0x1063; ``device_type`` GAUDI2 / GAUDI3;
* only scale-out NICs get a netdev, and their ``dev_port`` is the ASIC NIC
  index: 8, 22, 23 on every Gaudi 2 module; on Gaudi 3 HLS-3 it depends on
  the module (below); 8, 9, 10, 11 on a Gaudi 3 PCIe card;
* the rail of a port is its order among its module's scale-out ports, not
  its dev_port: on Gaudi 3 equal dev_ports do not make a rail.  In a
  rail-optimised fabric rail k of every module is cabled to leaf k.

Pure functions of their arguments, so that a layout can be checked without
building a fabric.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from simutil import UsageError

HABANA_VENDOR = "0x1da3"
PCI_CLASS = "0x120000"  # processing accelerator
DRIVER = "habanalabs"
MAX_HOSTS = 255  # third octet of a leaf's /30s (10.<200+leaf>.<host>.2), so at most 255 ports


@dataclass(frozen=True)
class Platform:
    name: str
    pci_device: str
    device_type: str
    ports_per_module: int
    default_ports: int
    default_leaves: int
    # scale-out dev_ports of module m: by_module[m % len(by_module)]
    by_module: tuple[tuple[int, ...], ...]
    max_modules: int | None = None

    def dev_ports(self, module: int) -> tuple[int, ...]:
        return self.by_module[module % len(self.by_module)]


_HLS3 = {0: (17, 20, 21), 3: (17, 20, 21), 1: (5, 8, 9), 2: (5, 8, 9),
         4: (14, 15, 19), 7: (14, 15, 19), 5: (2, 3, 7), 6: (2, 3, 7)}

PLATFORMS: dict[str, Platform] = {
    "gaudi2": Platform("gaudi2", "0x1020", "GAUDI2", 3, 3, 1, ((8, 22, 23),)),
    # HLS-3: 8 OAM modules; the scale-out NICs differ by module position.
    "gaudi3": Platform("gaudi3", "0x1060", "GAUDI3", 3, 24, 3,
                       tuple(_HLS3[m] for m in range(8)), max_modules=8),
    # HLS-3PCIE: HL-338 cards, four scale-out NICs each; two cards by default.
    "gaudi3-pcie": Platform("gaudi3-pcie", "0x1063", "GAUDI3", 4, 8, 4, ((8, 9, 10, 11),)),
}
DEFAULT_PLATFORM = "gaudi2"


def platform(name: str) -> Platform:
    try:
        return PLATFORMS[name]
    except (KeyError, TypeError):
        raise UsageError(f"unknown platform {name!r}: choose {', '.join(PLATFORMS)}") from None


def dev_port(plat: Platform, module: int, slot: int, ports_per_module: int) -> int:
    """dev_port of a module's slot-th scale-out port.

    A Gaudi 2 fabric built with a ports-per-module other than 3 (a test
    knob, no real platform) numbers its ports 0, 1, ... instead."""
    ports = plat.dev_ports(module)
    if ports_per_module != len(ports):
        return slot
    return ports[slot]


def module_layout(m: int) -> dict:
    """PCI placement of module m: 0000:19:00.0, 0000:29:00.0, ...; past 0xff
    the buses continue in PCI domain 1, 2, ..."""
    v = 0x19 + 0x10 * m
    domain, bus = v >> 8, v & 0xFF
    root = bus - 2
    pci = f"{domain:04x}:{bus:02x}:00.0"
    pcie_root = f"pci{domain:04x}:{root:02x}"
    bridge = f"{domain:04x}:{root:02x}:01.0"
    return {
        "module_id": m,
        "pci_address": pci,
        "pcie_root": pcie_root,
        "pcie_bridge": bridge,
        "device_dir": f"devices/{pcie_root}/{bridge}/{pci}",
        "accel": f"accel{m}",
    }


def numa_for_module(m: int, initial_modules: int) -> int:
    """First half of the modules on NUMA node 0, the rest on 1; modules
    added later join the second half."""
    if m < initial_modules:
        return 0 if m < (initial_modules + 1) // 2 else 1
    return 1 if m >= 1 else 0


def mac(name: str, kind: int, index: int) -> str:
    """Locally administered MAC: kind 0 host end, 1 switch end, 2 leaf chassis."""
    h = hashlib.sha256(name.encode()).digest()[0]
    return f"02:5e:{kind:02x}:{h:02x}:{index >> 8:02x}:{index & 0xFF:02x}"


def check_leaves(plat: Platform, leaves: int | None, ports_per_module: int) -> int:
    """The number of leaf switches: 1 (every port on one switch) or one per
    rail (rail-optimised).  None: the platform's default."""
    if leaves is None:
        leaves = plat.default_leaves if ports_per_module == plat.ports_per_module else 1
    if not isinstance(leaves, int) or isinstance(leaves, bool) or leaves not in (1, ports_per_module):
        raise UsageError(f"--leaves must be 1 or {ports_per_module} (one per rail), not {leaves!r}")
    return leaves


def cabling(index: int, ports_per_module: int, leaves: int) -> dict:
    """Where port index goes: module, rail, leaf, the leaf's port number and
    the third octet of the /30 the leaf announces for it.

    One leaf: every port on it, leaf port i+1, 10.200.<i+1>.2/30.  One leaf
    per rail: rail k of module m on leaf k, leaf port m+1,
    10.<200+k>.<m+1>.2/30."""
    module, rail = divmod(index, ports_per_module)
    if leaves == 1:
        return {"module": module, "rail": rail, "leaf": 0, "number": index + 1}
    return {"module": module, "rail": rail, "leaf": rail, "number": module + 1}


def leaf_network(leaf: int) -> str:
    return f"10.{200 + leaf}.0.0/16"


def leaf_description(leaf: int, host: int) -> str:
    return f"no-alert 10.{200 + leaf}.{host}.2/30"


def leaf_netns(name: str, leaf: int) -> str:
    return f"{name}-sw" if leaf == 0 else f"{name}-sw{leaf}"


def leaf_hostname(name: str, leaf: int, leaves: int) -> str:
    return f"leaf-{name}" if leaves == 1 else f"leaf{leaf}-{name}"
