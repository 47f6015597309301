# SPDX-License-Identifier: Apache-2.0
"""The fake sysfs tree of a simulated fabric (``<state_dir>/sysfs``).

Layout, as on a Gaudi node (relative symlinks, like real sysfs)::

    devices/<pcie_root>/<bridge>/<pci>/{vendor,device,class,numa_node,...}
    devices/.../<pci>/net/<if>/{dev_port,address,type,device,subsystem}
    devices/.../<pci>/accel/accel<n>/{dev,device}
    bus/pci/devices/<pci>, bus/pci/drivers/habanalabs/<pci>
    class/net/<if> -> ../../devices/.../<pci>/net/<if>
    class/accel/accel<n>
    devices/.../<pci>/infiniband/hbl_<module>/ports/<dev_port+1>/{gids,gid_attrs}
    class/infiniband/hbl_<module>, class/infiniband_verbs/uverbs<module>/ibdev
    class/misc/rdma_cm (rdma_ucm loaded, with the first RDMA device)

The RDMA device's GID table follows the ports' addresses as the kernel's
RDMA core keeps it (the follower writes it): a link-local GID of each type,
then for each IPv4 address of the port an ``IB/RoCE v1`` and a ``RoCE v2``
entry (``::ffff:a.b.c.d``), each slot's gid_attrs/ndevs naming the port.

A reader (rocenetd scanning the tree) must never see a half-made entry:
files are written next door and renamed into place, and a port's net/<if>
directory is assembled in a staging directory (``<root>.staging``, same
filesystem, outside the tree so that nobody listing net/ sees it) and moved
in whole.  Only the sysfs follower publishes and withdraws ports (a rename
is both).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile

from platforms import DRIVER, HABANA_VENDOR, PCI_CLASS, Platform


def _staging(root: str) -> str:
    path = root.rstrip("/") + ".staging"
    os.makedirs(path, exist_ok=True)
    return path


def _write(path: str, content: str, staging: str) -> None:
    """Replace path atomically with content (newline-terminated, like sysfs)."""
    fd, tmp = tempfile.mkstemp(dir=staging)
    with os.fdopen(fd, "w") as f:
        f.write(content if content.endswith("\n") else content + "\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def _rel(target: str, link: str) -> str:
    return os.path.relpath(target, os.path.dirname(link))


def _symlink(text: str, link: str, staging: str) -> None:
    """Make link -> text, atomically replacing whatever link was."""
    tmp = os.path.join(tempfile.mkdtemp(dir=staging), "l")
    os.symlink(text, tmp)
    os.replace(tmp, link)
    os.rmdir(os.path.dirname(tmp))


def make_skeleton(root: str) -> None:
    _staging(root)
    for d in ("bus/pci/drivers/" + DRIVER, "bus/pci/devices", "class/net", "class/accel"):
        os.makedirs(os.path.join(root, d), exist_ok=True)


def add_module(root: str, mod: dict, plat: Platform) -> None:
    """The PCI function of a module, bound to habanalabs, with its accel device."""
    st = _staging(root)
    dev = os.path.join(root, mod["device_dir"])
    pci = mod["pci_address"]
    os.makedirs(os.path.join(dev, "net"), exist_ok=True)
    for fname, val in (
        ("vendor", HABANA_VENDOR),
        ("device", plat.pci_device),
        ("class", PCI_CLASS),
        ("numa_node", str(mod["numa_node"])),
        ("module_id", str(mod["module_id"])),
        ("pci_addr", pci),
        ("device_type", plat.device_type),
    ):
        _write(os.path.join(dev, fname), val, st)
    drv = os.path.join(root, "bus/pci/drivers", DRIVER)
    _symlink(_rel(drv, os.path.join(dev, "driver")), os.path.join(dev, "driver"), st)
    bus = os.path.join(root, "bus/pci")
    _symlink(_rel(bus, os.path.join(dev, "subsystem")), os.path.join(dev, "subsystem"), st)
    for link in (os.path.join(drv, pci), os.path.join(root, "bus/pci/devices", pci)):
        _symlink(_rel(dev, link), link, st)
    accel_dir = os.path.join(dev, "accel", mod["accel"])
    os.makedirs(accel_dir, exist_ok=True)
    _write(os.path.join(accel_dir, "dev"), f"511:{mod['module_id']}", st)
    # the kernel spells this one with a detour through the class directory
    _symlink(f"../../../{pci}", os.path.join(accel_dir, "device"), st)
    link = os.path.join(root, "class/accel", mod["accel"])
    _symlink(_rel(accel_dir, link), link, st)


def rdma_name(mod: dict) -> str:
    return f"hbl_{mod['module_id']}"


def add_rdma(root: str, mod: dict) -> None:
    """The module's RDMA device, with an empty GID table, and its verbs node."""
    st = _staging(root)
    dev = os.path.join(root, mod["device_dir"])
    name = rdma_name(mod)
    ib = os.path.join(dev, "infiniband", name)
    os.makedirs(os.path.join(ib, "ports"), exist_ok=True)
    verbs = os.path.join(dev, "infiniband_verbs", f"uverbs{mod['module_id']}")
    os.makedirs(verbs, exist_ok=True)
    _write(os.path.join(verbs, "ibdev"), name, st)
    for cls, target in (("infiniband", ib), ("infiniband_verbs", verbs)):
        os.makedirs(os.path.join(root, "class", cls), exist_ok=True)
        link = os.path.join(root, "class", cls, os.path.basename(target))
        _symlink(_rel(target, link), link, st)
    # rdma_ucm's /dev/infiniband/rdma_cm, which rdma-core loads with the
    # first RDMA device.
    cm = os.path.join(root, "devices", "virtual", "misc", "rdma_cm")
    if not os.path.exists(cm):
        os.makedirs(cm, exist_ok=True)
        _write(os.path.join(cm, "dev"), "10:58", st)
        os.makedirs(os.path.join(root, "class", "misc"), exist_ok=True)
        link = os.path.join(root, "class", "misc", "rdma_cm")
        _symlink(_rel(cm, link), link, st)


def _link_local_gid(mac: str) -> str:
    b = [int(x, 16) for x in mac.split(":")]
    eui = [b[0] ^ 2, b[1], b[2], 0xFF, 0xFE, b[3], b[4], b[5]]
    return "fe80:0000:0000:0000:" + ":".join(f"{eui[i]:02x}{eui[i + 1]:02x}" for i in range(0, 8, 2))


def _ipv4_gid(address: str) -> str:
    a, b, c, d = (int(x) for x in address.split("."))
    return f"0000:0000:0000:0000:0000:ffff:{a:02x}{b:02x}:{c:02x}{d:02x}"


def gid_table(mac: str, ipv4s: list[str]) -> list[tuple[str, str]]:
    """(gid, type) by index for a port with `mac` and `ipv4s`."""
    table = []
    for gid in [_link_local_gid(mac)] + [_ipv4_gid(a) for a in sorted(ipv4s)]:
        table += [(gid, "IB/RoCE v1"), (gid, "RoCE v2")]
    return table


def write_gid_table(root: str, mod: dict, dev_port: int, netdev: str,
                    table: list[tuple[str, str]]) -> None:
    """Make the port's GID table `table`, every slot naming `netdev`; a slot
    appears (its ndevs entry, which readers list) only once it is whole, and
    goes first when it is withdrawn."""
    st = _staging(root)
    port = os.path.join(root, mod["device_dir"], "infiniband", rdma_name(mod), "ports",
                        str(dev_port + 1))
    dirs = {k: os.path.join(port, k) for k in ("gids", "gid_attrs/types", "gid_attrs/ndevs")}
    for d in dirs.values():
        os.makedirs(d, exist_ok=True)
    for index, (gid, kind) in enumerate(table):
        _write(os.path.join(dirs["gids"], str(index)), gid, st)
        _write(os.path.join(dirs["gid_attrs/types"], str(index)), kind, st)
        _write(os.path.join(dirs["gid_attrs/ndevs"], str(index)), netdev, st)
    for name in os.listdir(dirs["gid_attrs/ndevs"]):
        if int(name) >= len(table):
            for key in ("gid_attrs/ndevs", "gid_attrs/types", "gids"):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(os.path.join(dirs[key], name))


def net_dir(root: str, device_dir: str, ifname: str) -> str:
    return os.path.join(root, device_dir, "net", ifname)


def _parked(root: str, mac: str) -> str:
    return os.path.join(root.rstrip("/") + ".staging", "port-" + mac.replace(":", ""))


def stage_port(root: str, device_dir: str, pci: str, dev_port: int, mac: str) -> None:
    """Assemble a port's net/<if> directory, parked outside the tree.

    Its contents do not depend on the interface name, so publishing it later
    is a single rename: the follower stages every port it knows ahead of
    time and keeps a withdrawn port's directory parked for its return."""
    parked = _parked(root, mac)
    if os.path.isdir(parked):
        return
    tmp = tempfile.mkdtemp(dir=_staging(root))
    for fname, val in (("dev_port", str(dev_port)), ("address", mac), ("type", "1")):
        with open(os.path.join(tmp, fname), "w") as f:
            f.write(val + "\n")
        os.chmod(os.path.join(tmp, fname), 0o644)
    os.chmod(tmp, 0o755)
    # relative links, right once the directory sits at <pci>/net/<if>
    os.symlink(f"../../../{pci}", os.path.join(tmp, "device"))
    subsystem = os.path.join(net_dir(root, device_dir, "if"), "subsystem")
    os.symlink(_rel(os.path.join(root, "class/net"), subsystem), os.path.join(tmp, "subsystem"))
    os.rename(tmp, parked)


def publish_port(root: str, device_dir: str, mac: str, ifname: str) -> None:
    """Make a staged port appear as ifname: its net/<if> directory in one
    rename, then class/net/<if> (what scanners list) in one symlink."""
    final = net_dir(root, device_dir, ifname)
    try:
        os.rename(_parked(root, mac), final)
    except OSError as e:  # a leftover in the way (a follower killed mid-way)
        if e.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
            raise
        _discard(final, _staging(root))
        os.rename(_parked(root, mac), final)
    link = os.path.join(root, "class/net", ifname)
    text = _rel(final, link)
    try:
        os.symlink(text, link)
    except FileExistsError:
        _symlink(text, link, _staging(root))


def withdraw_port(root: str, device_dir: str, mac: str, ifname: str) -> None:
    """Make a port vanish: class/net/<if> first (one unlink), then its
    directory (one rename), parked for its return."""
    final = net_dir(root, device_dir, ifname)
    link = os.path.join(root, "class/net", ifname)
    with contextlib.suppress(OSError):
        if os.path.normpath(os.path.join(os.path.dirname(link),
                                         os.readlink(link))) == os.path.normpath(final):
            os.unlink(link)
    parked = _parked(root, mac)
    if os.path.lexists(parked):
        _discard(final, _staging(root))
    else:
        with contextlib.suppress(FileNotFoundError):
            os.rename(final, parked)


def _discard(path: str, staging: str) -> None:
    """Take a directory out of the tree in one rename, then delete it."""
    if not os.path.lexists(path):
        return
    gone = os.path.join(tempfile.mkdtemp(dir=staging), "x")
    os.rename(path, gone)
    shutil.rmtree(os.path.dirname(gone), ignore_errors=True)


def published(root: str, device_dirs: list[str]) -> dict[str, tuple[str, str]]:
    """Port entries in the tree: {mac: (device_dir, ifname)} from each
    net/<if>/address (what a restarted follower starts from)."""
    out = {}
    for dd in device_dirs:
        base = os.path.join(root, dd, "net")
        for ifname in sorted(os.listdir(base)) if os.path.isdir(base) else []:
            with contextlib.suppress(OSError):
                with open(os.path.join(base, ifname, "address")) as f:
                    out[f.read().strip()] = (dd, ifname)
    return out
