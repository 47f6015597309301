#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Debian's own kernel under qemu, for what the host kernel cannot show.

The tests' host kernel has no loadable modules, no physical NICs and no RDMA.
Debian 12's kernel package has all three (virtio-net and e1000e PCI NICs,
rdma_rxe), and under qemu it boots in seconds with the host's root
filesystem shared in, read-only, under a writable tmpfs overlay: the guest
runs the host's installed programs and the project's build unchanged, and
the host is never written.

    kernel(cache)            fetches linux-image-<version>-amd64 (the one
                             linux-image-amd64 depends on) into `cache` once,
                             unpacks it, runs depmod and extracts the
                             uncompressed vmlinux (booting it skips the XZ
                             decompression, 4-6 s under emulation)
    initramfs(cache, k)      busybox and the modules to mount the share
    Vm(...).run(script)      boots, runs `script` (a shell script, as root in
                             the guest) and returns its exit status and the
                             console log; bounded in time and memory
    report(result, path)     a failed guest in a few lines: its console's
                             file, the step that failed (guest_lib.sh's step
                             and failed lines), the console's last lines

Each NIC pair given to Vm is a wire: two PCI NICs on one qemu hub, found in
the guest by their MAC addresses (there is no udev; names follow probe
order). A cable is one NIC whose far end is a NIC of another VM: a qemu
socket netdev over the host's loopback, one VM listening, the other
connecting (start_pair starts them in that order). Nothing else leaves qemu.

Used as a module by the VM tests, and from the command line:

    vm.py check              what is missing to boot (exit 0: nothing)
    vm.py run SCRIPT         boots and runs SCRIPT, printing the console
"""

from __future__ import annotations

import dataclasses
import glob
import hashlib
import lzma
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

CACHE = os.environ.get("ROCENET_VM_CACHE", "/var/cache/rocenet/vm")
QBOOT = "/usr/share/qemu/qboot.rom"
BUSYBOX = "/bin/busybox"
# What booting needs on the host: qemu, depmod (kmod), busybox, cpio.
PACKAGES = {"qemu-system-x86_64": "qemu-system-x86", "depmod": "kmod", "cpio": "cpio"}
# The modules the initramfs loads to reach the share and build the root.
BOOT_MODULES = ["virtio_pci", "9pnet_virtio", "9p", "overlay"]
EXIT_MARK = "ROCENET-VM-EXIT"
# What guest_lib.sh's step() and failed() print.
STEP_MARK = "vm: step: "
FAILED_MARK = "vm: failed: "
# The console lines a failed test shows (the whole console is in its file).
TAIL = 40
# The build tree: its programs run in the guest, and the tests leave their
# consoles and figures there.
BUILD = os.environ.get("ROCENET_BUILD_DIR") or os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build"))


def missing() -> list[str]:
    """The packages (or files) booting needs that this machine lacks."""
    out = [pkg for tool, pkg in PACKAGES.items() if shutil.which(tool) is None]
    if not os.path.exists(BUSYBOX) or "static" not in _file_type(BUSYBOX):
        out.append("busybox-static")
    if not os.path.exists(QBOOT):
        out.append("qemu-system-data (qboot.rom)")
    return out


def _file_type(path: str) -> str:
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return ""
    # An ELF without a PT_INTERP segment's path string is static.
    return "static" if head.startswith(b"\x7fELF") and b"ld-linux" not in head else "dynamic"


@dataclasses.dataclass
class Kernel:
    version: str  # "6.1.0-31-amd64"
    root: str  # the unpacked package: lib/modules/<version>/...
    vmlinux: str

    @property
    def modules(self) -> str:
        return os.path.join(self.root, "lib", "modules", self.version)


def _run(argv: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kw)


def kernel_package() -> str:
    """The kernel package linux-image-amd64 depends on, e.g.
    linux-image-6.1.0-31-amd64. A machine whose package lists were never
    fetched knows none: they are fetched once, then asked again."""
    try:
        out = _run(["apt-cache", "depends", "linux-image-amd64"]).stdout
    except subprocess.CalledProcessError:
        _run(["apt-get", "update", "-qq"])
        out = _run(["apt-cache", "depends", "linux-image-amd64"]).stdout
    for line in out.splitlines():
        m = re.match(r"\s*Depends:\s*(linux-image-[0-9][^\s]*-amd64)$", line)
        if m:
            return m.group(1)
    raise RuntimeError(f"apt-cache depends linux-image-amd64 names no kernel:\n{out}")


def _extract_vmlinux(vmlinuz: str, out: str) -> None:
    """The uncompressed kernel ELF inside a bzImage (XZ-compressed on
    Debian)."""
    with open(vmlinuz, "rb") as f:
        data = f.read()
    start = data.find(b"\xfd7zXZ\x00")
    if start < 0:
        raise RuntimeError(f"{vmlinuz}: no XZ stream")
    decompressor = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
    elf = decompressor.decompress(data[start:])
    if not elf.startswith(b"\x7fELF"):
        raise RuntimeError(f"{vmlinuz}: the XZ stream is not an ELF kernel")
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(elf)
    os.replace(tmp, out)


def _unpacked(package: str, cache: str) -> Kernel:
    version = package.removeprefix("linux-image-")
    root = os.path.join(cache, package)
    return Kernel(version=version, root=root, vmlinux=os.path.join(root, "vmlinux"))


def _ready(k: Kernel) -> bool:
    return os.path.exists(k.vmlinux) and os.path.exists(os.path.join(k.modules, "modules.dep"))


def _fetch(k: Kernel, cache: str) -> None:
    """Downloads and unpacks the package of `k` into its place in `cache`."""
    package = f"linux-image-{k.version}"
    os.makedirs(cache, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        _run(["apt-get", "download", package], cwd=tmp)
        debs = glob.glob(os.path.join(tmp, f"{package}_*.deb"))
        if len(debs) != 1:
            raise RuntimeError(f"apt-get download {package} gave {debs}")
        unpacked = os.path.join(tmp, "root")
        _run(["dpkg-deb", "-x", debs[0], unpacked])
        _run(["depmod", "-b", unpacked, k.version])
        _extract_vmlinux(os.path.join(unpacked, "boot", f"vmlinuz-{k.version}"),
                         os.path.join(unpacked, "vmlinux"))
        shutil.rmtree(k.root, ignore_errors=True)
        os.rename(unpacked, k.root)


def kernel(cache: str = CACHE) -> Kernel:
    """Debian's kernel, fetched and unpacked into `cache` on first use."""
    k = _unpacked(kernel_package(), cache)
    if _ready(k):
        return k
    try:
        _fetch(k, cache)
    except subprocess.CalledProcessError:
        # Lists older than the mirror name a package it no longer has: the
        # current lists may name another.
        _run(["apt-get", "update", "-qq"])
        k = _unpacked(kernel_package(), cache)
        if not _ready(k):
            _fetch(k, cache)
    return k


def _module_paths(k: Kernel, names: list[str]) -> list[str]:
    """The .ko files of `names` and what they depend on, in load order."""
    deps: dict[str, list[str]] = {}
    with open(os.path.join(k.modules, "modules.dep")) as f:
        for line in f:
            path, _, rest = line.partition(":")
            deps[path] = rest.split()
    by_name = {re.sub(r"\.ko(\.[a-z]+)?$", "", os.path.basename(p)).replace("-", "_"): p
               for p in deps}
    order: list[str] = []

    def add(path: str) -> None:
        if path in order:
            return
        for dep in deps.get(path, []):
            add(dep)
        order.append(path)

    for name in names:
        if name not in by_name:
            raise RuntimeError(f"{k.version}: no module {name}")
        add(by_name[name])
    return order


INIT = r"""#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs dev /dev
for m in /modules/*; do insmod "$m" || echo "init: insmod $m failed"; done
mkdir -p /lower /rw /new
mount -t 9p -o trans=virtio,version=9p2000.L,cache=loose,msize=262144,ro hostroot /lower || {
  echo "init: cannot mount the host root"; echo o > /proc/sysrq-trigger; }
mount -t tmpfs -o size=256m tmpfs /rw
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /new || {
  echo "init: cannot build the overlay"; echo o > /proc/sysrq-trigger; }
script=$(sed -n 's/.*rocenet.script=\([^ ]*\).*/\1/p' /proc/cmdline)
modules=$(sed -n 's/.*rocenet.modules=\([^ ]*\).*/\1/p' /proc/cmdline)
version=$(uname -r)
mkdir -p /new/lib/modules/$version
mount --bind /new$modules /new/lib/modules/$version
mount --move /proc /new/proc
mount --move /sys /new/sys
mount --move /dev /new/dev
exec switch_root /new /bin/sh -c "mount -t tmpfs tmpfs /run; mkdir -p /dev/pts; \
  mount -t devpts devpts /dev/pts; sh $script; \
  echo {mark} \$?; echo o > /proc/sysrq-trigger; while :; do :; done"
""".replace("{mark}", EXIT_MARK)


def initramfs(k: Kernel, cache: str = CACHE) -> str:
    """A small initramfs: busybox, the boot modules and an init that mounts
    the host root read-only under a tmpfs overlay and runs the script named
    on the command line. Cached next to the kernel, by content."""
    # Named by what goes in: a changed init or module list builds anew.
    digest = hashlib.sha256((INIT + " ".join(BOOT_MODULES)).encode()).hexdigest()[:12]
    out = os.path.join(k.root, f"rocenet-initramfs-{digest}.cpio")
    if os.path.exists(out):
        return out
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        for d in ("bin", "proc", "sys", "dev", "modules"):
            os.makedirs(os.path.join(tmp, d))
        shutil.copy(BUSYBOX, os.path.join(tmp, "bin", "busybox"))
        for i, rel in enumerate(_module_paths(k, BOOT_MODULES)):
            src = os.path.join(k.modules, rel)
            dst = os.path.join(tmp, "modules", f"{i:02d}-{os.path.basename(src)}")
            if src.endswith(".xz"):
                with lzma.open(src) as fin, open(dst.removesuffix(".xz"), "wb") as fout:
                    fout.write(fin.read())
            else:
                shutil.copy(src, dst)
        with open(os.path.join(tmp, "init"), "w") as f:
            f.write(INIT)
        os.chmod(os.path.join(tmp, "init"), 0o755)
        files = subprocess.run(["find", ".", "-mindepth", "1"], cwd=tmp, check=True,
                               capture_output=True).stdout
        with open(out + ".tmp", "wb") as f:
            subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=tmp, input=files,
                           stdout=f, check=True)
        os.replace(out + ".tmp", out)
    return out


@dataclasses.dataclass
class Wire:
    """Two NICs of one model joined back to back (a qemu hub)."""
    macs: tuple[str, str]
    model: str = "virtio-net-pci"  # or "e1000e"


@dataclasses.dataclass
class Cable:
    """One NIC of a cable between two VMs: the same TCP port on 127.0.0.1 on
    both ends, `listen` on one of them."""
    mac: str
    port: int
    listen: bool
    model: str = "e1000e"


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    """Whether something listens on 127.0.0.1:`port` (read from
    /proc/net/tcp: connecting to find out would take qemu's one peer)."""
    want = f"0100007F:{port:04X}"
    with open("/proc/net/tcp") as f:
        return any(line.split()[1] == want and line.split()[3] == "0A"
                   for line in f.readlines()[1:])


@dataclasses.dataclass
class Result:
    status: int | None  # the script's exit status; None: it never finished
    # The whole console: kept out of the repr, which an assertion on the
    # status would print (a failed test shows report()'s few lines instead).
    log: str = dataclasses.field(repr=False)
    seconds: float = 0.0


class Vm:
    def __init__(self, k: Kernel, initrd: str, wires: list[Wire] | None = None,
                 memory_mb: int = 512, timeout: float = 120, cables: list[Cable] | None = None):
        self.k, self.initrd, self.wires, self.cables = k, initrd, wires or [], cables or []
        self.memory_mb, self.timeout = memory_mb, timeout
        self.proc: subprocess.Popen | None = None

    def argv(self, script: str) -> list[str]:
        argv = ["qemu-system-x86_64", "-machine", "pc", "-cpu", "max", "-smp", "1",
                "-m", str(self.memory_mb), "-accel", "tcg,tb-size=128", "-nographic",
                "-no-reboot", "-bios", QBOOT, "-kernel", self.k.vmlinux, "-initrd", self.initrd,
                "-append", " ".join(["console=ttyS0", "cryptomgr.notests", "no_timer_check",
                                     "panic=-1", "quiet", f"rocenet.script={script}",
                                     f"rocenet.modules={self.k.modules}"]),
                "-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,"
                           "multidevs=remap",
                "-nic", "none"]
        for hub, wire in enumerate(self.wires):
            for end, mac in enumerate(wire.macs):
                argv += ["-netdev", f"hubport,id=w{hub}e{end},hubid={hub}",
                         "-device", f"{wire.model},netdev=w{hub}e{end},mac={mac},romfile="]
        for i, cable in enumerate(self.cables):
            role = "listen" if cable.listen else "connect"
            argv += ["-netdev", f"socket,id=c{i},{role}=127.0.0.1:{cable.port}",
                     "-device", f"{cable.model},netdev=c{i},mac={cable.mac},romfile="]
        return argv

    def start(self, script: str) -> None:
        """Boots and starts `script` (a path on the host) in the guest."""
        self.started = time.monotonic()
        self.proc = subprocess.Popen(self.argv(os.path.abspath(script)),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)

    def wait(self) -> Result:
        """Waits for the guest to power off, `timeout` after start at most
        (then qemu is killed). The status is None when the guest never got
        to the end of its script."""
        assert self.proc is not None
        left = max(1.0, self.timeout - (time.monotonic() - self.started))
        try:
            out, _ = self.proc.communicate(timeout=left)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            out, _ = self.proc.communicate()
        log = out.decode(errors="replace")
        status = None
        for line in log.splitlines():
            m = re.match(rf"{EXIT_MARK} (\d+)\s*$", line.strip())
            if m:
                status = int(m.group(1))
        return Result(status=status, log=log, seconds=time.monotonic() - self.started)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.communicate()

    def run(self, script: str) -> Result:
        """Boots, runs `script` in the guest, powers off."""
        self.start(script)
        return self.wait()


def ended(result: Result) -> str:
    """How the guest's script ended, in words."""
    if result.status is None:
        return (f"the guest did not finish its script: killed at its bound, or it never "
                f"booted ({result.seconds:.0f} s)")
    return f"exit status {result.status} after {result.seconds:.1f} s"


def report(result: Result, console: str, tail: int = TAIL) -> str:
    """A failed guest in a few lines: where its whole console is (`console`),
    how the script ended, the step in which the first failure was said (or,
    with none said, the last step started: where a guest that never
    finished was) and the console's last `tail` lines."""
    lines = result.log.replace("\r", "").splitlines()
    step = first_failure = failing_step = None
    for line in lines:
        line = line.strip()
        if line.startswith(STEP_MARK):
            step = line.removeprefix(STEP_MARK)
        elif line.startswith(FAILED_MARK) and first_failure is None:
            first_failure, failing_step = line.removeprefix(FAILED_MARK), step
    out = [f"guest console: {console} ({ended(result)})"]
    if first_failure is not None:
        out.append(f"failing step: {failing_step or '(before the first step)'}")
        out.append(f"  first failure: {first_failure}")
    if step != failing_step or first_failure is None:
        out.append(f"last step started: {step or '(none: the script never started one)'}")
    shown = lines[-tail:]
    out.append(f"the console's last {len(shown)} of {len(lines)} lines:")
    out.extend(f"  {line}" for line in shown)
    return "\n".join(out)


def run_pair(first: tuple[Vm, str], second: tuple[Vm, str]) -> tuple[Result, Result]:
    """Two VMs at once, each with its script; `first` holds the listening
    ends of their cables and is started first (qemu's connecting end gives
    up at once when nothing listens). Both are stopped on the way out."""
    (a, script_a), (b, script_b) = first, second
    a.start(script_a)
    try:
        deadline = time.monotonic() + 30
        for cable in a.cables:
            while not _listening(cable.port):
                if a.proc.poll() is not None or time.monotonic() > deadline:
                    if a.proc.poll() is None:
                        os.killpg(a.proc.pid, signal.SIGKILL)
                    return a.wait(), Result(status=None, log="never started: the first VM "
                                            f"did not listen on {cable.port}", seconds=0)
                time.sleep(0.05)
        b.start(script_b)
        return a.wait(), b.wait()
    finally:
        a.kill()
        b.kill()


def main(argv: list[str]) -> int:
    if argv[1:2] == ["check"]:
        lacking = missing()
        print("ready" if not lacking else "missing: " + ", ".join(lacking))
        return 1 if lacking else 0
    if len(argv) == 3 and argv[1] == "run":
        lacking = missing()
        if lacking:
            print("missing: " + ", ".join(lacking), file=sys.stderr)
            return 2
        k = kernel()
        result = Vm(k, initramfs(k)).run(argv[2])
        print(result.log)
        print(f"status {result.status} after {result.seconds:.1f} s")
        return 0 if result.status == 0 else 1
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
