#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""rocenetd under load on one simulated node, with a peer for each figure.

  cni:    `--parallel` CNI ADDs at once (every port into a pod, two per pod),
          then as many DELs at once: wall time and errors, beside
          containernetworking's host-device + static IPAM doing the same
          moves at once on the same node (the peer).
  flood:  an LLDP flood on one port from the switch side (`--rate` frames per
          second, each from a random chassis, for `--flood-seconds`): rocenetd's
          CPU and RSS, the flooded port's neighbor count (the table's bound),
          every other port's configuration watched for flaps (`ip monitor` in
          the node namespace, WatchPorts, health), and ListPorts latency over
          gRPC under the flood beside the same calls while idle (the peer).

Needs root, a built tree, Debian's python3-grpcio and containernetworking-plugins:
  tests/bench/load_bench.py [--ports 100] [--parallel 100] [--rate 10000] [--flood-seconds 15]
tests/integration/load_test.py runs a small version of the same.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from harness import Daemon, binary, metric_value, sim, wait_until  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
HOST_DEVICE = "/usr/lib/cni/host-device"
FLOOD = os.path.join(HERE, "lldp_flood.py")


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def daemon_pid(daemon: Daemon) -> int:
    """rocenetd's own pid (the harness starts it under `ip netns exec`,
    which execs, so it is the same process)."""
    return daemon.proc.pid


def node_ready(daemon: Daemon) -> bool:
    cp = daemon.rocectl("health", "-o", "json")
    return cp.returncode == 0 and bool(json.loads(cp.stdout or "{}").get("ready"))


class ListPortsProbe:
    """Times ListPorts over the daemon's gRPC socket, as any client would."""

    def __init__(self, socket_path: str):
        import grpc  # python3-grpcio; only the benchmark and load test need it
        self.channel = grpc.insecure_channel(f"unix:{socket_path}")
        self.call = self.channel.unary_unary("/rocenet.v1.PortDiscovery/ListPorts",
                                             request_serializer=lambda b: b,
                                             response_deserializer=lambda b: b)
        self.call(b"", timeout=5)  # connect once, outside the samples

    def once(self) -> float:
        t0 = time.perf_counter()
        reply = self.call(b"", timeout=5)
        elapsed = (time.perf_counter() - t0) * 1000
        assert reply, "empty ListPorts reply"
        return elapsed

    def sample(self, seconds: float, interval: float = 0.01) -> list[float]:
        out = []
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            out.append(self.once())
            time.sleep(interval)
        return out

    def close(self):
        self.channel.close()


def cni_env(command: str, container: str, netns: str, ifname: str) -> dict:
    return {"CNI_COMMAND": command, "CNI_CONTAINERID": container, "CNI_NETNS": netns,
            "CNI_IFNAME": ifname, "CNI_PATH": "/usr/lib/cni",
            "CNI_ARGS": f"IgnoreUnknown=1;K8S_POD_NAMESPACE=load;K8S_POD_NAME={container}",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def run_cni(node: str, plugin: str, command: str, container: str, netns: str, ifname: str,
            conf: dict) -> tuple[int, str]:
    cp = subprocess.run(["ip", "netns", "exec", node, plugin], input=json.dumps(conf),
                        env=cni_env(command, container, netns, ifname), capture_output=True,
                        text=True, timeout=120)
    return cp.returncode, cp.stdout + cp.stderr


def concurrent_cni(fab, daemon: Daemon, parallel: int, pods: list[str]) -> dict:
    """`parallel` ADDs at once, then `parallel` DELs at once: two interfaces
    per pod, any free port, as Multus runs the plugin."""
    node = fab.node_netns
    conf = {"cniVersion": "1.0.0", "name": "ai", "type": "rocenet", "socket": daemon.socket,
            "anyFreePort": True}
    jobs = [(i // 2, f"net{i % 2 + 1}") for i in range(parallel)]
    needed = (parallel + 1) // 2
    for i in range(len(pods), needed):
        name = f"{fab.name}-pod{i}"
        subprocess.run(["ip", "netns", "add", name], check=True)
        pods.append(name)
    figures = {}
    for command in ("ADD", "DEL"):
        def one(job):
            pod, ifname = job
            return run_cni(node, binary("rocenet"), command, f"load{pod}",
                           f"/run/netns/{pods[pod]}", ifname, conf)

        t0 = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(parallel) as pool:
            results = list(pool.map(one, jobs))
        figures[command] = (time.perf_counter() - t0) * 1000
        errors = [out for rc, out in results if rc != 0]
        figures[f"{command} errors"] = len(errors)
        figures[f"{command} first error"] = errors[0] if errors else ""
        if command == "ADD":
            attached = [p for p in daemon.ports() if p.get("attached_to")]
            figures["attached"] = len(attached)
    def away() -> list[str]:
        return [p["name"] for p in daemon.ports() if not p["present"] or p.get("attached_to")]

    try:
        wait_until(lambda: not away(), 30, what="every port back in the host")
    except AssertionError:
        raise AssertionError(f"{figures}; not back in the host: {away()}") from None
    return figures


def concurrent_host_device(fab, parallel: int, pods: list[str]) -> dict:
    """The peer: host-device + static IPAM moves the same ports at once."""
    node = fab.node_netns
    jobs = []
    for i in range(parallel):
        port = fab.ports[i]
        local = f"10.200.{port['index'] + 1}.1/30"
        gw = f"10.200.{port['index'] + 1}.2"
        conf = {"cniVersion": "1.0.0", "name": "ai", "type": "host-device",
                "device": port["host_ifname"],
                "ipam": {"type": "static", "addresses": [{"address": local, "gateway": gw}],
                         "routes": [{"dst": "10.200.0.0/16", "gw": gw}]}}
        jobs.append((i // 2, f"net{i % 2 + 1}", conf))
    figures = {}
    for command in ("ADD", "DEL"):
        def one(job):
            pod, ifname, conf = job
            return run_cni(node, HOST_DEVICE, command, f"hd{pod}", f"/run/netns/{pods[pod]}",
                           ifname, conf)

        t0 = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(parallel) as pool:
            results = list(pool.map(one, jobs))
        figures[command] = (time.perf_counter() - t0) * 1000
        figures[f"{command} errors"] = sum(1 for rc, _ in results if rc != 0)
    # host-device leaves the ports down when it gives them back.
    subprocess.run(["ip", "-n", node, "-batch", "-"], check=True, text=True,
                   input="".join(f"link set {fab.ports[i]['host_ifname']} up\n"
                                 for i in range(parallel)))
    return figures


class FlapWatch:
    """Everything that could show a port's configuration moving, for every
    port but the flooded one: `ip monitor` lines in the node namespace,
    WatchPorts snapshots (counters aside) and health."""

    def __init__(self, fab, daemon: Daemon, flooded: str):
        self.flooded = flooded
        self.others = {p["host_ifname"] for p in fab.ports} - {flooded}
        self.monitor_lines: list[str] = []
        self.watch_changes: list[str] = []
        self.monitor = subprocess.Popen(["ip", "-n", fab.node_netns, "-o", "monitor", "link",
                                         "address", "route", "rule"],
                                        stdout=subprocess.PIPE, text=True)
        self.watch = subprocess.Popen(daemon.rocectl_argv("ports", "watch", "-o", "json"),
                                      stdout=subprocess.PIPE, text=True)
        self.daemon = daemon
        self.health_before = self.health()
        self._last: dict | None = None
        threading.Thread(target=self._read_monitor, daemon=True).start()
        threading.Thread(target=self._read_watch, daemon=True).start()
        time.sleep(0.5)

    def health(self) -> dict:
        node = json.loads(self.daemon.rocectl("health", "-o", "json", check=True).stdout)
        return {p["name"]: (p.get("healthy"), json.dumps(p.get("conditions", []), sort_keys=True))
                for p in node.get("ports", []) if p.get("name") in self.others}

    def _read_monitor(self):
        for line in self.monitor.stdout:
            words = line.replace(":", " ").replace("@", " ").split()
            if any(name in words for name in self.others):
                self.monitor_lines.append(line.strip())

    def _read_watch(self):
        for line in self.watch.stdout:
            snap = {p["name"]: {k: v for k, v in p.items() if k not in ("counters",)}
                    for p in json.loads(line)["ports"] if p["name"] in self.others}
            if self._last is not None and snap != self._last:
                changed = [n for n in snap if snap[n] != self._last.get(n)]
                self.watch_changes.append(",".join(changed))
            self._last = snap

    def close(self) -> dict:
        health_after = self.health()
        for proc in (self.monitor, self.watch):
            proc.terminate()
            proc.wait(5)
        return {"ip monitor lines": self.monitor_lines, "WatchPorts changes": self.watch_changes,
                "health changed": sorted(n for n in self.others
                                         if self.health_before.get(n) != health_after.get(n))}


# rocenetd reads its counters every 5 s; a bit more to be past one sample.
COUNTER_SAMPLE_SECONDS = 6.0

def flood(fab, daemon: Daemon, rate: float, seconds: float) -> dict:
    """Floods port 0 from the switch side; measures the daemon meanwhile."""
    pid = daemon_pid(daemon)
    flooded = fab.ports[0]
    probe = ListPortsProbe(daemon.socket)
    idle = probe.sample(min(seconds, 5.0))
    c0, t0 = cpu_seconds(pid), time.monotonic()
    # Past one counter sample of rocenetd (every 5 s): the counters read
    # next are the idle port's.
    time.sleep(COUNTER_SAMPLE_SECONDS)
    idle_cpu = (cpu_seconds(pid) - c0) / (time.monotonic() - t0) * 100
    rss_idle = rss_kib(pid)
    received0 = metric_value(daemon.metrics(), "rocenet_lldp_frames_received_total",
                             {"device": flooded["host_ifname"]}) or 0

    watch = FlapWatch(fab, daemon, flooded["host_ifname"])
    sender = subprocess.Popen(["ip", "netns", "exec", fab.switch_netns, sys.executable, FLOOD,
                               flooded["switch_ifname"], "--rate", str(rate), "--seconds",
                               str(seconds)], stdout=subprocess.PIPE, text=True)
    c0, t0 = cpu_seconds(pid), time.monotonic()
    rss_samples = []
    loaded: list[float] = []
    while sender.poll() is None:
        loaded.extend(probe.sample(1.0))
        rss_samples.append(rss_kib(pid))
    load_cpu = (cpu_seconds(pid) - c0) / (time.monotonic() - t0) * 100
    sent = json.loads(sender.stdout.read() or "{}")
    # The last frames land, and rocenetd's next counter sample takes them.
    time.sleep(COUNTER_SAMPLE_SECONDS)
    flaps = watch.close()
    received = (metric_value(daemon.metrics(), "rocenet_lldp_frames_received_total",
                             {"device": flooded["host_ifname"]}) or 0) - received0
    neighbors = json.loads(daemon.rocectl("neighbors", flooded["host_ifname"], "-o", "json",
                                          check=True).stdout)
    probe.close()
    return {
        "sent": sent, "received": received, "neighbors": neighbors,
        "idle ms": idle, "load ms": loaded,
        "cpu idle %": idle_cpu, "cpu load %": load_cpu,
        "rss idle KiB": rss_idle, "rss max KiB": max(rss_samples or [rss_idle]),
        "rss end KiB": rss_kib(pid), "flaps": flaps,
    }


def neighbor_count(listing: dict) -> int:
    """Neighbors of the port in a `rocectl neighbors PORT -o json` reply."""
    return sum(len(port.get("neighbors", [])) for port in listing.get("ports", []))


def ignored_frames(listing: dict) -> int:
    """Frames from neighbors beyond the table's bound, ignored."""
    return sum(int(port.get("ignored_frames", port.get("ignoredFrames", 0)))
               for port in listing.get("ports", []))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ports", type=int, default=100)
    ap.add_argument("--parallel", type=int, default=100)
    ap.add_argument("--rate", type=float, default=10000)
    ap.add_argument("--flood-seconds", type=float, default=15)
    args = ap.parse_args()
    if args.parallel > args.ports:
        ap.error("--parallel must not exceed --ports (every ADD gets a port of its own)")

    t0 = time.monotonic()
    fab = sim.Fabric.up(sim.unique_name("hfl"), ports=args.ports)
    print(f"fabric of {args.ports} ports up in {time.monotonic() - t0:.1f} s")
    # rocenetd limits changing calls to 20 a second after a burst of 100 (a
    # node has a few dozen ports at most); a stress test of 2 x --parallel
    # calls in a few seconds asks for more.
    config = os.path.join(fab.state_dir, "load-bench.yaml")
    with open(config, "w") as f:
        f.write(f"limits:\n  mutating_rpcs_per_second: {4 * args.parallel}\n"
                f"  mutating_rpc_burst: {4 * args.parallel}\n")
    daemon = Daemon(fab.node_netns, [f"--sysfs-root={fab.sysfs_root}", f"--config={config}"])
    pods: list[str] = []
    try:
        t0 = time.monotonic()
        daemon.start()
        wait_until(lambda: node_ready(daemon), 60, interval=0.2, what="node ready")
        print(f"rocenetd: {args.ports} ports ready {time.monotonic() - t0:.1f} s after start, "
              f"RSS {rss_kib(daemon_pid(daemon)) / 1024:.1f} MiB")

        ours = concurrent_cni(fab, daemon, args.parallel, pods)
        print(f"{args.parallel} concurrent CNI invocations, ADD then DEL, any free port, "
              f"2 per pod ({len(pods)} pods):")
        print(f"  rocenet ADD {ours['ADD']:.0f} ms ({ours['ADD errors']} errors, "
              f"{ours['attached']} attached), DEL {ours['DEL']:.0f} ms "
              f"({ours['DEL errors']} errors)")
        if ours["ADD first error"] or ours["DEL first error"]:
            print(f"  first error: {ours['ADD first error'] or ours['DEL first error']}")
        if os.access(HOST_DEVICE, os.X_OK):
            theirs = concurrent_host_device(fab, args.parallel, pods)
            print(f"  host-device + static ADD {theirs['ADD']:.0f} ms ({theirs['ADD errors']} "
                  f"errors), DEL {theirs['DEL']:.0f} ms ({theirs['DEL errors']} errors) (peer)")
            print(f"  ratio rocenet/host-device: ADD {ours['ADD'] / theirs['ADD']:.2f}, "
                  f"DEL {ours['DEL'] / theirs['DEL']:.2f}")
        for name in pods:
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
        pods.clear()
        wait_until(lambda: node_ready(daemon), 60, interval=0.2, what="node ready again")

        f = flood(fab, daemon, args.rate, args.flood_seconds)
        print(f"LLDP flood on {fab.ports[0]['host_ifname']}: {f['sent'].get('frames')} frames in "
              f"{f['sent'].get('seconds')} s ({f['sent'].get('rate')} fps), each from a random "
              f"chassis; rocenetd received {f['received']:.0f}")
        print(f"  rocenetd CPU {f['cpu load %']:.1f} % of a core under flood, "
              f"{f['cpu idle %']:.1f} % idle")
        print(f"  rocenetd RSS idle {f['rss idle KiB'] / 1024:.1f} MiB, max under flood "
              f"{f['rss max KiB'] / 1024:.1f} MiB, after {f['rss end KiB'] / 1024:.1f} MiB")
        print(f"  neighbors kept on the flooded port: {neighbor_count(f['neighbors'])} "
              f"(the bound per port), {ignored_frames(f['neighbors'])} frames of others ignored")
        flaps = f["flaps"]
        print(f"  other ports: {len(flaps['ip monitor lines'])} ip monitor events, "
              f"{len(flaps['WatchPorts changes'])} WatchPorts changes, health changed on "
              f"{len(flaps['health changed'])}")
        idle, load = f["idle ms"], f["load ms"]
        print(f"  ListPorts latency (ms): idle p50 {pct(idle, 50):.2f} p99 {pct(idle, 99):.2f} "
              f"({len(idle)} calls, peer); under flood p50 {pct(load, 50):.2f} "
              f"p99 {pct(load, 99):.2f} ({len(load)} calls)")
        print(f"  ratio p99 flood/idle: {pct(load, 99) / pct(idle, 99):.2f}")
    finally:
        for name in pods:
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
        daemon.cleanup()
        fab.down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
