# SPDX-License-Identifier: Apache-2.0
"""rocenetd and the real NetworkManager on the same ports (outputs.network_manager).

NetworkManager runs in the fabric's node namespace, so it sees only that
namespace's links, on a D-Bus system bus of the test's own (dbus-daemon; its
address reaches NetworkManager and rocenetd through DBUS_SYSTEM_BUS_ADDRESS)
and with directories of its own. It has a profile for so0 as a site's image
might bring: DHCP with an MTU of 1400, retried forever. No DHCP server
answers, so NetworkManager tears the connection down every couple of
seconds (removing every address of the port, rocenetd's too) and brings it
up again (MTU 1500, then 1400), and rocenetd puts its address and MTU back
each time:

* without the key the two fight: rocenetd's address is removed and its MTU
  changed again and again, and NetworkManager shows the device managed,
  connecting with the site's profile;
* with the key rocenetd writes the drop-in and tells NetworkManager over
  D-Bus: the devices turn unmanaged (Managed false, state 10), the drop-in
  names the ports, and the ports keep rocenetd's address and MTU with no
  change at all over a window longer than the fight needed for three rounds;
  a NetworkManager started afresh (its runtime state gone, as after a
  reboot) reads the drop-in and leaves them alone too, and a port that
  appears later is listed and let go of as well.

Skipped where NetworkManager, dbus-daemon or dbus-send is missing
(packaging/debian-deps.sh test installs them) or NetworkManager does not
start here."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest

from harness import Daemon, wait_until

DESCRIPTIONS = {0: "no-alert 10.200.1.2/30", 1: "no-alert 10.200.2.2/30",
                2: "no-alert 10.200.3.2/30"}
SO0_ADDRESS = "10.200.1.1/30"
ROCENET_MTU = 9000
# Rounds of the fight the test waits for; and how long a fight-free run must
# last: more than the fight took for those rounds (about 2.5 s each).
ROUNDS = 3
QUIET_WINDOW = 15.0
UNMANAGED = 10  # NM_DEVICE_STATE_UNMANAGED

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="root"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
"""

# Nothing outside its directories: no resolv.conf, no hostname, no
# connectivity checks, no "Wired connection" of its own; no polkit on this
# bus (the callers are root).
NM_CONFIG = """[main]
plugins=keyfile
auth-polkit=false
dhcp=internal
dns=none
rc-manager=unmanaged
systemd-resolved=false
hostname-mode=none
no-auto-default=*

[keyfile]
path={connections}

[connectivity]
enabled=false

[logging]
level=INFO
"""

SITE_PROFILE = """[connection]
id=site-so0
type=ethernet
interface-name=so0
autoconnect=true
autoconnect-retries=0

[ethernet]
mtu=1400

[ipv4]
method=auto
dhcp-timeout=2

[ipv6]
method=ignore
"""

# In the namespace's own mount namespace (ip netns exec makes one): /run and
# /var/lib/NetworkManager of its own, and /sys read-only, which tells
# NetworkManager that no udev will announce the devices (there is none here).
NM_START = """set -e
mount --bind "$1" /run
mount --bind "$2" /var/lib/NetworkManager
mount -o remount,bind,ro /sys
shift 2
exec NetworkManager "$@"
"""


class NetworkManagerHost:
    """dbus-daemon and NetworkManager for one node namespace."""

    def __init__(self, netns: str):
        self.netns = netns
        self.dir = tempfile.mkdtemp(prefix="rocenet-nm-")
        self.socket = os.path.join(self.dir, "system_bus_socket")
        self.address = f"unix:path={self.socket}"
        self.conf_d = os.path.join(self.dir, "conf.d")
        self.connections = os.path.join(self.dir, "system-connections")
        for sub in ("conf.d", "system-connections", "lib.d", "run", "var-lib", "state"):
            os.makedirs(os.path.join(self.dir, sub), mode=0o700)
        self.bus: subprocess.Popen | None = None
        self.nm: subprocess.Popen | None = None
        self.nm_log = os.path.join(self.dir, "NetworkManager.log")

    @property
    def env(self) -> dict[str, str]:
        return {"DBUS_SYSTEM_BUS_ADDRESS": self.address}

    def start_bus(self) -> None:
        config = os.path.join(self.dir, "bus.conf")
        with open(config, "w") as f:
            f.write(BUS_CONFIG.format(socket=self.socket))
        self.bus = subprocess.Popen(["dbus-daemon", f"--config-file={config}", "--nofork"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(lambda: os.path.exists(self.socket) or self.bus.poll() is not None, 10,
                   what="dbus-daemon to listen")
        if self.bus.poll() is not None:
            pytest.skip(f"dbus-daemon exited {self.bus.returncode}")

    def start_nm(self, timeout: float = 20) -> None:
        with open(os.path.join(self.dir, "NetworkManager.conf"), "w") as f:
            f.write(NM_CONFIG.format(connections=self.connections))
        log = open(self.nm_log, "ab")
        self.nm = subprocess.Popen(
            ["ip", "netns", "exec", self.netns, "sh", "-c", NM_START, "nm-start",
             os.path.join(self.dir, "run"), os.path.join(self.dir, "var-lib"),
             "--debug", "--log-level=INFO",
             f"--config={os.path.join(self.dir, 'NetworkManager.conf')}",
             f"--config-dir={self.conf_d}",
             f"--system-config-dir={os.path.join(self.dir, 'lib.d')}",
             f"--state-file={os.path.join(self.dir, 'state', 'NetworkManager.state')}",
             f"--intern-config={os.path.join(self.dir, 'state', 'intern.conf')}",
             f"--pid-file={os.path.join(self.dir, 'state', 'NetworkManager.pid')}"],
            stdout=log, stderr=log, env={**os.environ, **self.env})
        log.close()
        try:
            wait_until(lambda: self.nm.poll() is not None or self.running(), timeout,
                       interval=0.1, what="NetworkManager on the bus")
        except AssertionError:
            self.stop_nm()
            pytest.skip(f"NetworkManager did not start here:\n{self.log()[-2000:]}")
        if self.nm.poll() is not None:
            pytest.skip(f"NetworkManager exited {self.nm.returncode}:\n{self.log()[-2000:]}")

    def stop_nm(self) -> None:
        if self.nm is None or self.nm.poll() is not None:
            return
        self.nm.send_signal(signal.SIGTERM)
        try:
            self.nm.wait(15)
        except subprocess.TimeoutExpired:
            self.nm.kill()
            self.nm.wait()

    def forget_runtime_state(self) -> None:
        """What a reboot clears: NetworkManager's /run, where it keeps each
        device's Managed as last set over D-Bus."""
        run = os.path.join(self.dir, "run")
        shutil.rmtree(run)
        os.makedirs(run, mode=0o700)

    def cleanup(self) -> None:
        self.stop_nm()
        if self.bus is not None and self.bus.poll() is None:
            self.bus.terminate()
            self.bus.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)

    def log(self) -> str:
        with open(self.nm_log, errors="replace") as f:
            return f.read()

    def add_profile(self, name: str, content: str) -> None:
        path = os.path.join(self.connections, f"{name}.nmconnection")
        with open(path, "w") as f:
            f.write(content)
        os.chmod(path, 0o600)  # NetworkManager ignores a profile others may read

    def call(self, path: str, method: str, *args: str) -> str:
        cp = subprocess.run(["dbus-send", f"--bus={self.address}", "--print-reply",
                             "--dest=org.freedesktop.NetworkManager", path, method, *args],
                            capture_output=True, text=True, timeout=10)
        assert cp.returncode == 0, f"{method}: {cp.stderr}"
        return cp.stdout

    def running(self) -> bool:
        cp = subprocess.run(["dbus-send", f"--bus={self.address}", "--print-reply",
                             "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                             "org.freedesktop.DBus.NameHasOwner",
                             "string:org.freedesktop.NetworkManager"],
                            capture_output=True, text=True, timeout=10)
        if "boolean true" not in cp.stdout:
            return False
        # Up once it has read the links (its startup completes only when no
        # device is activating, which the fight never lets happen).
        cp = subprocess.run(["dbus-send", f"--bus={self.address}", "--print-reply",
                             "--dest=org.freedesktop.NetworkManager",
                             "/org/freedesktop/NetworkManager",
                             "org.freedesktop.NetworkManager.GetDeviceByIpIface", "string:so0"],
                            capture_output=True, text=True, timeout=10)
        return cp.returncode == 0

    def device(self, ifname: str) -> dict[str, str]:
        """Managed and State of the device, as D-Bus gives them."""
        out = self.call("/org/freedesktop/NetworkManager",
                        "org.freedesktop.NetworkManager.GetDeviceByIpIface", f"string:{ifname}")
        path = re.search(r'object path "([^"]+)"', out).group(1)
        values = {}
        for prop in ("Managed", "State"):
            got = self.call(path, "org.freedesktop.DBus.Properties.Get",
                            "string:org.freedesktop.NetworkManager.Device", f"string:{prop}")
            values[prop] = re.search(r"variant\s+\S+\s+(\S+)", got).group(1)
        return values

    def nmcli_devices(self) -> dict[str, tuple[str, str]]:
        """nmcli's table, as a user sees it: device -> (state, connection)."""
        cp = subprocess.run(["nmcli", "-t", "-f", "DEVICE,STATE,CONNECTION", "device"],
                            capture_output=True, text=True, timeout=10,
                            env={**os.environ, **self.env})
        assert cp.returncode == 0, cp.stderr
        return {dev: (state, conn) for dev, state, conn in
                (line.split(":", 2) for line in cp.stdout.splitlines() if line)}


class PortChanges:
    """The MTU changes and IPv4 address additions and removals on the ports,
    from `ip monitor` in the node namespace while it runs."""

    def __init__(self, netns: str, ports: list[str]):
        self.ports = set(ports)
        links = json.loads(subprocess.run(["ip", "-n", netns, "-j", "link", "show"],
                                          capture_output=True, text=True, check=True).stdout)
        self.mtu = {link["ifname"]: link["mtu"] for link in links if link["ifname"] in self.ports}
        self.events: list[tuple[float, str, str]] = []
        self.lock = threading.Lock()
        self.proc = subprocess.Popen(["ip", "-n", netns, "-o", "monitor", "link", "address"],
                                     stdout=subprocess.PIPE, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            link = re.match(r"^(?:Deleted )?\d+: ([^:@\s]+)(?:@\S+)?: <.*> mtu (\d+)", line)
            addr = re.match(r"^(Deleted )?\d+: (\S+)\s+inet (\S+)", line)
            with self.lock:
                if link and link.group(1) in self.ports:
                    name, mtu = link.group(1), int(link.group(2))
                    if self.mtu.get(name) != mtu:
                        self.events.append((time.monotonic(), name, f"mtu {mtu}"))
                    self.mtu[name] = mtu
                elif addr and addr.group(2) in self.ports:
                    verb = "removed" if addr.group(1) else "added"
                    self.events.append((time.monotonic(), addr.group(2),
                                        f"{verb} {addr.group(3)}"))

    def since(self, start: float) -> list[tuple[float, str, str]]:
        with self.lock:
            return [e for e in self.events if e[0] >= start]

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        self.thread.join(10)


def rounds(changes: list[tuple[float, str, str]]) -> int:
    """Rounds of the fight: rocenetd's address taken off so0 and put back."""
    removed = sum(1 for _, port, what in changes if port == "so0"
                  and what == f"removed {SO0_ADDRESS}")
    restored = sum(1 for _, port, what in changes if port == "so0"
                   and what == f"added {SO0_ADDRESS}")
    return min(removed, restored)


def port_state(netns: str, ifname: str) -> tuple[int, list[str]]:
    """The port's MTU and IPv4 addresses."""
    links = json.loads(subprocess.run(["ip", "-n", netns, "-j", "addr", "show", "dev", ifname],
                                      capture_output=True, text=True, check=True).stdout)
    return (links[0]["mtu"], sorted(f"{a['local']}/{a['prefixlen']}"
                                    for a in links[0].get("addr_info", []) if a["family"] == "inet"))


@pytest.fixture(scope="module")
def fabric(fabrics):
    return fabrics("nm", ports=2, descriptions={i: DESCRIPTIONS[i] for i in (0, 1)})


@pytest.fixture(scope="module")
def nm(fabric):
    for tool in ("NetworkManager", "nmcli", "dbus-daemon", "dbus-send"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (packaging/debian-deps.sh test installs it)")
    if not os.path.isdir("/var/lib/NetworkManager"):
        pytest.skip("no /var/lib/NetworkManager to put a directory of the test's over")
    host = NetworkManagerHost(fabric.node_netns)
    try:
        host.start_bus()
        host.add_profile("site-so0", SITE_PROFILE)
        host.start_nm()
        yield host
    finally:
        host.cleanup()


def rocenetd(fabric, nm: NetworkManagerHost, config: str = "") -> Daemon:
    d = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}", f"--mtu={ROCENET_MTU}"],
               env=nm.env)
    if config:
        path = os.path.join(d.workdir, "config.yaml")
        with open(path, "w") as f:
            f.write(config)
        d.args.append(f"--config={path}")
    return d


def test_without_the_key_networkmanager_and_rocenetd_fight(fabric, nm):
    changes = PortChanges(fabric.node_netns, ["so0", "so1"])
    d = rocenetd(fabric, nm)
    try:
        start = time.monotonic()
        d.start()
        wait_until(lambda: rounds(changes.since(start)) >= ROUNDS, 60, interval=0.1,
                   what=f"{ROUNDS} rounds of NetworkManager removing so0's address")
        took = time.monotonic() - start
        seen = changes.since(start)
        mtu_changes = sum(1 for _, port, what in seen if port == "so0" and what.startswith("mtu"))
        print(f"without outputs.network_manager: {len(seen)} changes on the ports in "
              f"{took:.1f}s: {rounds(seen)} rounds of so0's address removed and put back, "
              f"{mtu_changes} MTU changes")
        assert mtu_changes >= ROUNDS, seen
        # What a user sees: NetworkManager holds the port, with the site's profile.
        assert nm.device("so0")["Managed"] == "true"
        wait_until(lambda: nm.nmcli_devices()["so0"][1] == "site-so0", 10, interval=0.1,
                   what="nmcli to show so0 with the site's profile")
        assert not os.path.exists(os.path.join(nm.conf_d, "90-rocenet.conf"))
    finally:
        d.cleanup()
        changes.stop()


def test_with_the_key_networkmanager_leaves_the_ports_alone(fabric, nm):
    dropin = os.path.join(nm.conf_d, "90-rocenet.conf")
    d = rocenetd(fabric, nm, f"outputs:\n  network_manager: {dropin}\n")
    try:
        d.start()
        # The drop-in names the ports, and NetworkManager let go of them.
        wait_until(lambda: all(nm.device(p) == {"Managed": "false", "State": str(UNMANAGED)}
                               for p in ("so0", "so1")), 15, interval=0.1,
                   what="NetworkManager to report so0 and so1 unmanaged")
        with open(dropin) as f:
            text = f.read()
        assert "match-device=interface-name:=so0;interface-name:=so1\n" in text, text
        assert "managed=0\n" in text, text
        assert "port so0: NetworkManager managed it; set unmanaged" in d.log()
        assert nm.nmcli_devices()["so0"] == ("unmanaged", "")
        # rocenetd has its port back, and nothing changes it any more.
        wait_until(lambda: port_state(fabric.node_netns, "so0") == (ROCENET_MTU, [SO0_ADDRESS]),
                   15, what="so0 with rocenetd's address and MTU alone")
        changes = PortChanges(fabric.node_netns, ["so0", "so1"])
        try:
            start = time.monotonic()
            # Nothing to wait for: a change that does not come is seen only
            # by watching for as long as the fight needed for its rounds.
            time.sleep(QUIET_WINDOW)
            seen = changes.since(start)
        finally:
            changes.stop()
        print(f"with outputs.network_manager: {len(seen)} changes on the ports in "
              f"{QUIET_WINDOW:.0f}s")
        assert seen == []
        assert port_state(fabric.node_netns, "so0") == (ROCENET_MTU, [SO0_ADDRESS])

        # A NetworkManager that starts afresh reads the drop-in: its profile
        # for so0 is never activated.
        nm.stop_nm()
        nm.forget_runtime_state()
        nm.start_nm()
        assert all(nm.device(p) == {"Managed": "false", "State": str(UNMANAGED)}
                   for p in ("so0", "so1"))

        # A port that appears later: listed, and NetworkManager lets go of it.
        fabric.add_port(description=DESCRIPTIONS[2])
        wait_until(lambda: "interface-name:=so2" in open(dropin).read(), 15,
                   what="so2 in the drop-in")
        wait_until(lambda: port_state(fabric.node_netns, "so2")[1] == ["10.200.3.1/30"], 20,
                   what="so2 addressed by rocenetd")
        assert nm.device("so2") == {"Managed": "false", "State": str(UNMANAGED)}
    finally:
        d.cleanup()
    # Kept when rocenetd stops: the ports stay configured, and NetworkManager
    # must not take them in the gap of a restart.
    assert os.path.exists(dropin)
