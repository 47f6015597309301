"""The fake sysfs tree of a simulated fabric (``<state_dir>/sysfs``).

Layout, as on a Gaudi node (relative symlinks, like real sysfs)::

    devices/<pcie_root>/<bridge>/<pci>/{vendor,device,class,numa_node,...}
    devices/.../<pci>/net/<if>/{dev_port,address,type,device,subsystem}
    devices/.../<pci>/accel/accel<n>/{dev,device}
    bus/pci/devices/<pci>, bus/pci/drivers/habanalabs/<pci>
    class/net/<if> -> ../../devices/.../<pci>/net/<if>
    class/accel/accel<n>

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
        if os.path.normpath(os.path.join(os.path.dirname(link), os.readlink(link))) == os.path.normpath(final):
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
