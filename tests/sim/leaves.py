# SPDX-License-Identifier: Apache-2.0
"""The leaf switches of a simulated fabric: one network namespace and one
real lldpd each.

Leaf k lives in ``NAME-sw`` (k = 0) or ``NAME-sw<k>``.  Its lldpd has its own
control socket, pid file, configuration and log in the state dir
(``lldpd.*`` for leaf 0, as a one-switch fabric always had, ``lldpd-leaf<k>.*``
for the others), its own system name and its own chassis: lldpd takes the
chassis ID from the MAC of the leaf's ``mgmt0`` (``-C mgmt0``), a veth that
stays down and stays put, so the chassis does not depend on which switch
ports happen to be cabled when lldpd starts.

A leaf whose ``mgmt_ifname`` is None has no management port: its lldpd
takes the chassis ID from its ``swp*`` ports, as lldpd does by default.  Its
``description`` (lldpd's system description) defaults to "rocenet simulated
leaf switch NAME" (with " leaf K" in a fabric of several leaves).

``Leaf`` is a view on ``state["leaves"][k]`` of fabric.json; the ports cabled
to a leaf are the present ports whose ``leaf`` is k.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from collections.abc import Callable, Sequence

from lldp import lldpcli_quote, tx_interval_arg
from platforms import leaf_hostname, leaf_netns, leaf_network, mac
from simutil import FabricError, log, pid_alive, pids_in_netns, proc_comm, proc_stat, run, terminate

LLDPD_CHROOT = "/run/lldpd"  # compiled into Debian's lldpd; shared by all instances
LLDPD_READY_TIMEOUT = 15.0
LLDPD_STOP_TIMEOUT = 5.0
MGMT_IFNAME = "mgmt0"


def new_leaf(name: str, state_dir: str, k: int, leaves: int) -> dict:
    """The fabric.json entry of leaf k."""
    base = os.path.join(state_dir, "lldpd" if k == 0 else f"lldpd-leaf{k}")
    return {
        "index": k,
        "netns": leaf_netns(name, k),
        "hostname": leaf_hostname(name, leaves=leaves, leaf=k),
        "network": leaf_network(k),
        "chassis_id": mac(name, 2, k),
        "mgmt_ifname": MGMT_IFNAME,
        "lldpd": {
            "pid": None,
            "starttime": None,
            "running": False,
            "socket": base + ".sock",
            "pidfile": base + ".pid",
            "config": base + ".conf",
            "log": base + ".log",
        },
    }


def mgmt_cmds(leaf: dict) -> list[str]:
    """ip -batch lines (in the leaf's namespace) for its chassis interface."""
    if not leaf.get("mgmt_ifname"):
        return []
    return [f"link add {leaf['mgmt_ifname']} address {leaf['chassis_id']} type veth peer name "
            f"{leaf['mgmt_ifname']}p"]


# IEEE 802.1Qaz PFC Configuration TLV: an organizationally specific TLV of
# the IEEE 802.1 OUI, subtype 0x0b. lldpd sends it as a custom TLV.
PFC_TLV_OUI = "00,80,c2"
PFC_TLV_SUBTYPE = "11"


def pfc_tlv_args(pfc: dict) -> str:
    """lldpcli's custom-tlv arguments for {"priorities": [...], "willing":
    bool, "capability": int}: willing (bit 7), MBC 0, PFC capability (bits
    3..0), then the enable bitmap."""
    flags = (0x80 if pfc.get("willing") else 0) | (pfc.get("capability", 8) & 0x0F)
    bitmap = 0
    for priority in pfc["priorities"]:
        bitmap |= 1 << priority
    return (f"custom-tlv replace oui {PFC_TLV_OUI} subtype {PFC_TLV_SUBTYPE} "
            f"oui-info {flags:02x},{bitmap:02x}")


class Leaf:
    def __init__(self, state: dict, k: int):
        self.state = state
        self.index = k
        self.d = state["leaves"][k]

    @property
    def netns(self) -> str:
        return self.d["netns"]

    @property
    def lldpd(self) -> dict:
        return self.d["lldpd"]

    def ports(self) -> list[dict]:
        return [p for p in self.state["ports"] if p["present"] and p["leaf"] == self.index]

    def set_pfc(self, p: dict) -> None:
        """Advertise the port's PFC (p["pfc"]) now; None: no PFC TLV."""
        sw = p["switch_ifname"]
        if p.get("pfc") is None:
            self.lldpcli("unconfigure", "ports", sw, "lldp", "custom-tlv", "oui",
                         PFC_TLV_OUI, "subtype", PFC_TLV_SUBTYPE)
        else:
            self.lldpcli("configure", "ports", sw, "lldp", *pfc_tlv_args(p["pfc"]).split())

    def description(self) -> str:
        """lldpd's system description."""
        if self.d.get("description"):
            return self.d["description"]
        descr = f"rocenet simulated leaf switch {self.state['name']}"
        if len(self.state["leaves"]) > 1:
            descr += f" leaf {self.index}"
        return descr

    def lldpcli(self, *args: str, input: str | None = None,
                check: bool = True) -> subprocess.CompletedProcess:
        return run(["ip", "netns", "exec", self.netns, "lldpcli", "-u", self.lldpd["socket"], *args],
                   input=input, check=check, timeout=30)

    def interfaces(self) -> dict[str, dict]:
        """What lldpd says it advertises: {switch_ifname: {port_id, port_id_type, description}}."""
        data = json.loads(self.lldpcli("-f", "json0", "show", "interfaces").stdout or "{}")
        out = {}
        for block in data.get("lldp", []):
            for itf in block.get("interface", []):
                port = (itf.get("port") or [{}])[0]
                pid = (port.get("id") or [{}])[0]
                descr = (port.get("descr") or [{}])[0]
                out[itf.get("name")] = {
                    "port_id": pid.get("value"),
                    "port_id_type": pid.get("type"),
                    "description": descr.get("value"),
                }
        return out

    def write_conf(self) -> None:
        """lldpd's start-up configuration: what a restarted lldpd advertises."""
        lines = [
            "# generated by tests/sim/leaves.py; rewritten on every change",
            f"configure system hostname {lldpcli_quote(self.d['hostname'])}",
            f"configure lldp tx-interval {tx_interval_arg(self.state['tx_interval'])}",
        ]
        for p in self.ports():
            lines.append(
                f"configure ports {p['switch_ifname']} lldp portidsubtype local "
                f"{p['switch_port_id']} description {lldpcli_quote(p['description'])}"
            )
            if p.get("pfc") is not None:
                lines.append(f"configure ports {p['switch_ifname']} lldp {pfc_tlv_args(p['pfc'])}")
        with open(self.lldpd["config"], "w") as f:
            f.write("\n".join(lines) + "\n")

    def running(self) -> bool:
        # pid + start time identify our instance (comm is "ip" until it execs lldpd)
        return pid_alive(self.lldpd.get("pid"), self.lldpd.get("starttime"))

    def start(self) -> subprocess.Popen:
        """Start lldpd with the configuration written before; returns at
        once (wait_ready waits until it advertises)."""
        ld = self.lldpd
        if self.running():
            raise FabricError(f"lldpd of {self.d['hostname']} already runs (pid {ld['pid']})")
        # leftovers of a killed instance would make lldpd believe another one runs
        stale = [p for p in pids_in_netns(self.netns) if proc_comm(p) == "lldpd"]
        if stale:
            terminate(stale, LLDPD_STOP_TIMEOUT)
        for f in (ld["socket"], ld["socket"] + ".lock", ld["pidfile"]):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f)
        os.makedirs(LLDPD_CHROOT, mode=0o755, exist_ok=True)
        mgmt = self.d.get("mgmt_ifname")
        argv = [
            "ip", "netns", "exec", self.netns,
            "lldpd",
            "-ddd",  # foreground, log to stderr only (no syslog), info level
            "-u", ld["socket"],
            "-p", ld["pidfile"],
            "-I", f"swp*,{mgmt}" if mgmt else "swp*",
            *(["-C", mgmt] if mgmt else []),
            "-O", ld["config"],
            "-S", self.description(),
        ]
        if self.state.get("med_class"):
            argv += ["-M", str(self.state["med_class"])]
        with open(ld["log"], "ab") as logf:
            logf.write(f"--- {time.strftime('%Y-%m-%dT%H:%M:%S')} starting: {' '.join(argv)}\n".encode())
            logf.flush()
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                                    start_new_session=True, close_fds=True)
        ld["pid"] = proc.pid  # ip netns exec execs lldpd: same pid
        st = proc_stat(proc.pid)
        ld["starttime"] = st[1] if st else None
        ld["running"] = True
        deadline = time.monotonic() + 5
        while proc_comm(proc.pid) != "lldpd" and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        return proc

    def wait_ready(self, ports: Sequence[dict] | None = None, reap: Callable[[], None] | None = None) -> None:
        """Wait until lldpd advertises the Port ID and Description of ports
        (default: every port cabled here whose switch end is up)."""
        ld = self.lldpd
        want = {p["switch_ifname"]: p for p in (ports if ports is not None else self.ports())
                if p["present"] and p["link"] == "up"}
        deadline = time.monotonic() + LLDPD_READY_TIMEOUT
        last = None
        while True:
            if reap:
                reap()
            if not self.running():
                raise FabricError(f"lldpd exited during start-up; see {ld['log']}:\n{self.log_tail()}")
            if os.path.exists(ld["socket"]):
                try:
                    have = self.interfaces()
                except (FabricError, ValueError) as e:
                    have, last = {}, str(e)
                missing = [n for n, p in want.items()
                           if have.get(n, {}).get("description") != p["description"]
                           or have.get(n, {}).get("port_id") != p["switch_port_id"]]
                if not missing:
                    return
                last = f"not configured yet: {', '.join(missing[:8])}"
            if time.monotonic() > deadline:
                raise FabricError(f"lldpd not ready after {LLDPD_READY_TIMEOUT}s ({last}); see {ld['log']}")
            time.sleep(0.1)

    def configure_port(self, p: dict) -> None:
        """Make a running lldpd advertise a port that just appeared on this
        leaf (lldpd applies its start-up configuration only at start)."""
        sw = p["switch_ifname"]
        cmd = ["configure", "ports", sw, "lldp", "portidsubtype", "local", p["switch_port_id"],
               "description", p["description"]]
        deadline = time.monotonic() + LLDPD_READY_TIMEOUT
        while True:
            have = self.interfaces().get(sw)
            if have is not None:
                if have["description"] == p["description"] and have["port_id"] == p["switch_port_id"]:
                    return
                self.lldpcli(*cmd)
            if time.monotonic() > deadline:
                raise FabricError(f"lldpd did not pick up new port {sw} (has {have}); "
                                  f"see {self.lldpd['log']}")
            time.sleep(0.05)

    def log_tail(self, n: int = 15) -> str:
        try:
            with open(self.lldpd["log"], errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def stop(self, reap: Callable[[], None] | None = None, timeout: float = LLDPD_STOP_TIMEOUT) -> None:
        """SIGTERM lldpd (it sends TTL-0 shutdown LLDPDUs), SIGKILL after timeout."""
        ld = self.lldpd
        if self.running():
            killed = terminate([ld["pid"]], timeout, reap)
            if killed:
                log(f"lldpd pid {killed[0]} ignored SIGTERM; killed")
        # privsep child (and anything named lldpd left in the leaf's netns)
        rest = [p for p in pids_in_netns(self.netns) if proc_comm(p) == "lldpd"]
        if rest:
            terminate(rest, 2, reap)
        if reap:
            reap()
        ld["running"] = False
        for f in (ld["socket"], ld["socket"] + ".lock"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f)
