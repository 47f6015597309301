#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The dependency direction, checked on every #include: the rule table of
docs/architecture.md#the-dependency-direction, as code.

Dependencies point one way: common <- os <- domain <- node <- {api,
config} <- server (daemon/node is the node's state on its loop, built from
the domain rooms; the API edge and the configuration are side by side:
neither includes the other). The
Linux implementations (daemon/os/linux) are wired in by the composition
roots only (daemon/server for rocenetd, daemon/diagd for rocenet-diagd).
The plugins and rocectl depend on the API (proto) and common only, never on
daemon internals. Domain rooms may use each other, except that the two
programs stay apart: nothing of rocenetd includes the diagnostics
(daemon/diag, daemon/diagd), and the diagnostics include no room that
configures the node (they learn the ports over rocenetd's API).

daemon/diag/linux is the Linux side of the diagnostics (the data port, the
probes, the streams behind diag's PeerChannel and LocalTests): like
os/linux it is wired in by a composition root only (daemon/diagd).
daemon/diag works on types of its own (messages.h, peer_messages.h);
daemon/diag/wire alone turns them into the generated messages and back, for
the data port's frames (diag/linux) and the gRPC service (diagd). No room above os/linux makes a system
call: the domain rooms, the node and diag/linux include no system socket,
poll or file-descriptor header; their effects go through daemon/os.

    check_includes.py ROOT        exit 0 when every include follows the rules,
                                  1 listing each one that does not
    check_includes.py --self-test plants an upward include in a copy of the
                                  rules' own examples and checks it is caught
"""

from __future__ import annotations

import os
import re
import sys
import tempfile

DOMAIN = ["lldp", "inventory", "addressing", "attach", "health", "outputs", "qos", "diag"]

# Room -> level; a room may include rooms of a lower level, its own, and
# (domain) other domain rooms.
LEVELS = {"daemon/common": 0, "daemon/os": 1, "daemon/os/linux": 2,
          **{f"daemon/{d}": 3 for d in DOMAIN}, "daemon/diag/wire": 4, "daemon/diag/linux": 5,
          "daemon/node": 4,
          "daemon/api": 5,
          "daemon/config": 5, "daemon/server": 6, "daemon/diagd": 6, "daemon/node_client": 5}
# rocenet-diagd's rooms; everything else of the daemon is rocenetd's, and the
# two share only common, os, os/linux and the API edge's helpers.
DIAGD = {"daemon/diag", "daemon/diag/wire", "daemon/diag/linux", "daemon/diagd"}
NODE_ROOMS = {f"daemon/{d}" for d in DOMAIN if d != "diag"} | {"daemon/node"}
LEVEL_NAMES = {0: "common", 1: "os", 2: "os/linux", 3: "domain", 4: "node", 5: "api/config",
               6: "server"}
# Outside the daemon: what each may include of it.
# daemon/node_client is rocenetd's node stream as its clients see it (API and
# common only): the device plugin's and rocenet-diagd's.
OUTSIDE = {"plugins/cni": {"daemon/common"},
           "plugins/device": {"daemon/common", "daemon/node_client"},
           "client": {"daemon/common"}}
# Generated API messages: the API edge and outward only.
PROTO_PREFIXES = ("rocenet/", "k8s/", "google/protobuf/")
PROTO_ALLOWED = {"daemon/api", "daemon/server", "daemon/diagd", "daemon/node_client", "plugins/cni",
                 "plugins/device", "client",
                 # The diagnostics' proto edge, for diag/linux and diagd.
                 "daemon/diag/wire"}
# Rooms that make no system call of their own: no system socket, poll or
# descriptor header.
NO_SYSCALLS = {f"daemon/{d}" for d in DOMAIN} | {"daemon/node", "daemon/diag/linux"}
SYSTEM_HEADER = re.compile(
    r'^\s*#\s*include\s+<((?:sys|netinet|arpa|linux|net|netpacket)/[^>]+|poll\.h|unistd\.h|fcntl\.h)>',
    re.MULTILINE)
RULE = ("docs/architecture.md#the-dependency-direction: "
        "common <- os <- domain <- node <- {api, config} <- server; "
        "plugins and rocectl: proto and common")

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def room_of(path: str) -> str | None:
    """The room a repository path belongs to: the longest known prefix."""
    best = None
    for room in [*LEVELS, *OUTSIDE]:
        if path == room or path.startswith(room + "/"):
            if best is None or len(room) > len(best):
                best = room
    return best


def violation(source_room: str, header: str) -> str | None:
    """Why `source_room` may not include `header`, or None."""
    if header.startswith(PROTO_PREFIXES):
        return None if source_room in PROTO_ALLOWED else "generated API messages belong to the API edge"
    target = room_of(header)
    if target is None or target == source_room:
        return None
    if source_room in OUTSIDE:
        if target in OUTSIDE[source_room]:
            return None
        return f"{source_room} depends on the API and daemon/common only"
    if target in OUTSIDE:
        return f"the daemon never depends on {target}"
    if target == "daemon/os/linux" and source_room not in ("daemon/server", "daemon/diagd",
                                                           "daemon/os/linux", "daemon/diag/linux"):
        return "the Linux implementations are wired in by the composition roots only"
    if target == "daemon/diag/linux" and source_room != "daemon/diagd":
        return "the diagnostics' Linux side is wired in by rocenet-diagd only"
    if target == "daemon/diag/wire" and source_room not in ("daemon/diag/linux", "daemon/diagd"):
        return "only the diagnostics' edges (diag/linux, diagd) convert to and from protos"
    if target in DIAGD and source_room not in DIAGD:
        return "rocenetd does not carry the diagnostics (rocenet-diagd does)"
    if source_room in DIAGD and (target in NODE_ROOMS or target == "daemon/server"):
        return "the diagnostics learn the node over rocenetd's API and never configure it"
    s, t = LEVELS[source_room], LEVELS[target]
    if t < s or (s == t == 3):
        return None
    return (f"{source_room} ({LEVEL_NAMES[s]}) must not depend on {target} "
            f"({LEVEL_NAMES[t]}, above it)")


def check(root: str) -> list[str]:
    problems = []
    for top in ("daemon", "plugins", "client"):
        for directory, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.join(directory, name)
                rel = os.path.relpath(path, root)
                source_room = room_of(rel)
                if source_room is None:
                    continue
                with open(path, errors="replace") as f:
                    text = f.read()
                for match in INCLUDE.finditer(text):
                    why = violation(source_room, match.group(1))
                    if why:
                        line = text.count("\n", 0, match.start()) + 1
                        problems.append(f"{rel}:{line}: includes \"{match.group(1)}\": {why}")
                if source_room in NO_SYSCALLS:
                    for match in SYSTEM_HEADER.finditer(text):
                        line = text.count("\n", 0, match.start()) + 1
                        problems.append(f"{rel}:{line}: includes <{match.group(1)}>: system calls "
                                        "go through daemon/os (os/linux implements them)")
    return problems


def self_test() -> int:
    """A tree that follows the rules passes; each planted break is caught."""
    planted = {
        "daemon/health/x.cc": '#include "daemon/api/metrics.h"\n',
        "daemon/os/x.h": '#include "daemon/inventory/port.h"\n',
        "daemon/lldp/x.cc": '#include "daemon/os/linux/netlink_linux.h"\n',
        "daemon/inventory/x.cc": '#include "rocenet/v1/ports.pb.h"\n',
        "plugins/cni/x.cc": '#include "daemon/config/options.h"\n',
        "daemon/config/x.cc": '#include "daemon/server/daemon.h"\n',
        "daemon/node/x.cc": '#include "daemon/api/metrics.h"\n',
        "daemon/health/y.cc": '#include "daemon/node/snapshot.h"\n',
        "daemon/api/x.cc": '#include "daemon/config/options.h"\n',
        "client/x.cc": '#include "plugins/device/port_info.h"\n',
        "daemon/server/y.cc": '#include "daemon/diag/coordinator.h"\n',
        "daemon/diag/y.cc": '#include "daemon/addressing/planner.h"\n',
        "daemon/diagd/y.cc": '#include "daemon/node/node.h"\n',
        "daemon/diag/z.cc": '#include "daemon/diag/linux/engine.h"\n',
        "daemon/diag/linux/y.cc": '#include <sys/socket.h>\n',
        "daemon/health/z.cc": '#include <poll.h>\n',
        "daemon/diag/w.cc": '#include "rocenet/v1/diagnostics.pb.h"\n',
        "daemon/diag/linux/w.cc": '#include "google/protobuf/message_lite.h"\n',
        "daemon/diag/v.cc": '#include "daemon/diag/wire/convert.h"\n',
    }
    fine = {
        "daemon/server/ok.cc": '#include "daemon/os/linux/netlink_linux.h"\n'
                               '#include "daemon/api/metrics.h"\n',
        "daemon/config/ok.cc": '#include "daemon/qos/pfc.h"\n#include "daemon/os/filesystem.h"\n',
        "daemon/health/ok.cc": '#include "daemon/inventory/port.h"\n#include "daemon/os/clock.h"\n',
        "client/ok.cc": '#include "daemon/common/status_macros.h"\n#include "rocenet/v1/ports.pb.h"\n',
        "daemon/diagd/ok.cc": '#include "daemon/diag/coordinator.h"\n'
                              '#include "daemon/os/linux/netlink_linux.h"\n',
        "daemon/diag/linux/ok.cc": '#include "daemon/os/linux/tcp_socket.h"\n'
                                   '#include "daemon/diag/peers.h"\n',
        "daemon/os/linux/ok.cc": '#include <sys/socket.h>\n',
        "daemon/diag/wire/ok.cc": '#include "rocenet/peer/v1/peer.pb.h"\n#include "daemon/diag/messages.h"\n',
        "daemon/diag/linux/ok2.cc": '#include "daemon/diag/wire/convert.h"\n',
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, text in {**planted, **fine}.items():
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        caught = {p.split(":")[0] for p in check(root)}
    missed = set(planted) - caught
    wrong = caught - set(planted)
    if missed or wrong:
        print(f"self-test: missed {sorted(missed)}, wrongly flagged {sorted(wrong)}")
        return 1
    print(f"self-test: {len(planted)} planted upward includes caught, {len(fine)} allowed ones passed")
    return 0


def main(argv: list[str]) -> int:
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    problems = check(argv[1])
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) against the dependency direction ({RULE})")
        return 1
    print(f"every include follows the dependency direction ({RULE})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
