# SPDX-License-Identifier: Apache-2.0
"""The command line of the simulated fabric: ``tests/sim/fabric.py --help``.

Exit codes: 0 success, 2 bad usage (UsageError, argparse), 1 any other
failure (FabricError).  fabric.py is the entry point; the parser lives here
to keep fabric.py to the fabric itself.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import platforms
from fabric_paths import DEFAULT_BASE, STATE_FILE

import fabric
from fabric import Fabric, FabricError, UsageError

DESCRIPTION = """\
Simulated RoCE scale-out fabric for rocenet: a Gaudi node namespace (NAME-node)
cabled to leaf switch namespaces (NAME-sw, NAME-sw1, ...) running the real
lldpd, with a fake sysfs tree that follows the ports across namespaces.

The node's ports start administratively down with no carrier, as on a real
Gaudi node: bring them up (rocenetd does; 'link FABRIC I up --side node' by
hand) before expecting LLDP.  A port moved into another namespace vanishes
from the fake sysfs until it comes back."""

EPILOG = """\
FABRIC is a fabric name or a state directory (anything containing '/').

platforms (--platform):
  gaudi2       device 0x1020, 3 scale-out ports per module (dev_port 8, 22, 23),
               default 3 ports on 1 leaf: swp<i+1>, no-alert 10.200.<i+1>.2/30
  gaudi3       device 0x1060 (HLS-3), 3 per module, dev_ports by module
               (0,3: 17,20,21; 1,2: 5,8,9; 4,7: 14,15,19; 5,6: 2,3,7),
               default 24 ports (8 modules) on 3 leaves
  gaudi3-pcie  device 0x1063 (HL-338 cards), 4 per card (8, 9, 10, 11),
               default 8 ports on 4 leaves
with one leaf per rail, rail k of module m is swp<m+1> on leaf k, announcing
no-alert 10.<200+k>.<m+1>.2/30."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # exit code 2 with a clear message
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def _parse_descriptions(items: list[str] | None) -> dict[int, str]:
    out = {}
    for it in items or []:
        k, sep, v = it.partition("=")
        if not sep or not k.strip().isdigit():
            raise UsageError(f"--description wants INDEX=TEXT, got {it!r}")
        out[int(k)] = v
    return out


def _int_arg(s: str, what: str) -> int:
    try:
        return int(s, 10)
    except ValueError:
        raise UsageError(f"{what} must be an integer, not {s!r}") from None


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="fabric.py", description=DESCRIPTION, epilog=EPILOG,
                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=_Parser)

    p = sub.add_parser("up", help="create a fabric and print its fabric.json")
    p.add_argument("name", nargs="?", help="fabric name (default: rn + 6 hex digits)")
    p.add_argument("--platform", choices=sorted(platforms.PLATFORMS), default=platforms.DEFAULT_PLATFORM,
                   help=f"node platform (default {platforms.DEFAULT_PLATFORM})")
    p.add_argument("--ports", type=int, default=None,
                   help="number of scale-out ports (default: the platform's, gaudi2 3, gaudi3 24)")
    p.add_argument("--leaves", type=int, default=None,
                   help="leaf switches: 1, or one per rail (default: gaudi2 1, gaudi3 3, gaudi3-pcie 4)")
    p.add_argument("--mtu", type=int, default=None, help="MTU of both veth ends (default: kernel default)")
    p.add_argument("--tx-interval", type=float, default=1, help="lldpd tx-interval in seconds (default 1)")
    p.add_argument("--ports-per-module", type=int, default=None,
                   help="gaudi2 only: ports per module other than 3 (dev_port then counts from 0)")
    p.add_argument("--description", action="append", metavar="I=TEXT",
                   help="Port Description for port I (repeatable); default: see fabric.py --help")
    p.add_argument("--state-dir", help=f"state directory (default {DEFAULT_BASE}/NAME)")
    p.add_argument("--no-med", action="store_true", help="do not send LLDP-MED TLVs (default: class 4)")

    p = sub.add_parser("down", help="tear a fabric down (no error if already gone)")
    p.add_argument("fabric", nargs="?")
    p.add_argument("--state-dir")
    p.add_argument("--kill-processes", action="store_true",
                   help="also kill processes still running in the fabric's namespaces")

    p = sub.add_parser("show", help="print fabric.json")
    p.add_argument("fabric")

    p = sub.add_parser("set-description", help="change a port's Port Description (and switch address)")
    p.add_argument("fabric")
    p.add_argument("index")
    p.add_argument("text")

    p = sub.add_parser("link", help="set a port's switch end (or host end) up or down")
    p.add_argument("fabric")
    p.add_argument("index")
    p.add_argument("state", choices=["up", "down"])
    p.add_argument("--side", choices=["switch", "node"], default="switch")

    for cmd, what in (("stop-lldpd", "SIGTERM lldpd (sends TTL 0 frames)"),
                      ("start-lldpd", "start lldpd again")):
        p = sub.add_parser(cmd, help=f"{what} on every leaf, or on --leaf K")
        p.add_argument("fabric")
        p.add_argument("--leaf", help="only this leaf")

    p = sub.add_parser("add-port", help="add a port at run time (prints it)")
    p.add_argument("fabric")
    p.add_argument("--index", help="re-plug this removed port instead of adding the next one")
    p.add_argument("--description", help="Port Description (default as for up)")

    p = sub.add_parser("remove-port", help="delete a port's veth pair and sysfs net entries")
    p.add_argument("fabric")
    p.add_argument("index")

    p = sub.add_parser("recable", help="move a port's cable to another leaf (its home leaf: back); prints it")
    p.add_argument("fabric")
    p.add_argument("index")
    p.add_argument("leaf")
    p.add_argument("--description", help="what the leaf announces (default: its next free /30)")

    p = sub.add_parser("ensure-follower", help="restart the sysfs follower if it died; print its pid")
    p.add_argument("fabric")

    p = sub.add_parser("capture", help="print LLDP frames received on a host end, one JSON per line")
    p.add_argument("fabric")
    p.add_argument("index")
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--timeout", type=float, default=5)

    sub.add_parser("list", help="list fabrics with a state dir under " + DEFAULT_BASE)
    return ap


def _run_command(args) -> None:
    if args.cmd == "up":
        fab = Fabric.up(
            args.name,
            ports=args.ports,
            descriptions=_parse_descriptions(args.description),
            mtu=args.mtu,
            tx_interval=args.tx_interval,
            ports_per_module=args.ports_per_module,
            state_dir=args.state_dir,
            med_class=None if args.no_med else 4,
            platform=args.platform,
            leaves=args.leaves,
        )
        print(json.dumps(fab.state, indent=2))
        return
    if args.cmd == "down":
        if not args.fabric and not args.state_dir:
            raise UsageError("down needs a fabric name or --state-dir")
        if args.state_dir:
            if args.fabric is not None:
                fabric.check_name(args.fabric)
            fabric._teardown(args.fabric, os.path.abspath(args.state_dir), None, args.kill_processes)
        else:
            fabric.down(args.fabric, args.kill_processes)
        return
    if args.cmd == "list":
        for n in sorted(os.listdir(DEFAULT_BASE)) if os.path.isdir(DEFAULT_BASE) else []:
            if os.path.exists(os.path.join(DEFAULT_BASE, n, STATE_FILE)):
                print(n)
        return
    fab = Fabric.load(args.fabric)
    index = _int_arg(args.index, "index") if getattr(args, "index", None) is not None else None
    if args.cmd == "show":
        print(json.dumps(fab.state, indent=2))
    elif args.cmd == "set-description":
        fab.set_description(index, args.text)
    elif args.cmd == "link":
        fab.link(index, args.state, args.side)
    elif args.cmd in ("stop-lldpd", "start-lldpd"):
        leaf = None if args.leaf is None else _int_arg(args.leaf, "--leaf")
        (fab.stop_lldpd if args.cmd == "stop-lldpd" else fab.start_lldpd)(leaf)
    elif args.cmd == "add-port":
        print(json.dumps(fab.add_port(index, args.description), indent=2))
    elif args.cmd == "remove-port":
        fab.remove_port(index)
    elif args.cmd == "recable":
        print(json.dumps(fab.recable(index, _int_arg(args.leaf, "leaf"), args.description), indent=2))
    elif args.cmd == "ensure-follower":
        print(fab.ensure_follower())
    elif args.cmd == "capture":
        fab.port(index)
        for f in fab.capture_lldp(index, args.timeout, args.count):
            f.pop("raw", None)
            print(json.dumps(f), flush=True)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    try:
        if args.cmd not in ("list", "show") and os.geteuid() != 0:
            raise FabricError("must run as root")
        _run_command(args)
    except UsageError as e:
        print(f"fabric.py: error: {e}", file=sys.stderr)
        return 2
    except FabricError as e:
        print(f"fabric.py: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0
