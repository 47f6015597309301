# SPDX-License-Identifier: Apache-2.0
"""The rocenet CNI plugin exec'd exactly as Multus runs it (CNI_* environment,
network configuration on stdin) against the real rocenetd on a simulated
fabric, with real pod network namespaces."""

from __future__ import annotations

import concurrent.futures
import json
import os
import shutil
import subprocess

import pytest

from harness import Daemon, binary, network_state, ready_daemon, sim, wait_until

VERSIONS = ["0.4.0", "1.0.0", "1.1.0"]


def ip_json(netns: str, *args: str):
    cp = subprocess.run(["ip", "-n", netns, "-j", *args], capture_output=True, text=True,
                        check=True)
    return json.loads(cp.stdout or "[]")


def all_namespaces_state(fabric) -> dict[str, str]:
    """Every namespace of this fabric: links, addresses, routes, rules."""
    names = [n for n in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                                       check=True).stdout.split() if n.startswith(fabric.name)]
    return {n: network_state(n) for n in names}


class Cni:
    def __init__(self, daemon: Daemon):
        self.daemon = daemon

    def conf(self, version: str = "1.0.0", **extra) -> dict:
        """A network for a runtime without kubelet (podman's CNI backend, say):
        a pod without a device id takes any free port."""
        return {"cniVersion": version, "name": "ai-net", "type": "rocenet",
                "socket": self.daemon.socket, "anyFreePort": True, **extra}

    def run(self, command: str, container: str, netns: str | None, ifname: str = "net1",
            conf: dict | str | None = None, env: dict | None = None):
        environment = {
            "CNI_COMMAND": command, "CNI_CONTAINERID": container, "CNI_IFNAME": ifname,
            "CNI_PATH": "/usr/lib/cni",
            "CNI_ARGS": f"IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME={container}",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        }
        if netns is not None:
            environment["CNI_NETNS"] = netns
        environment.update(env or {})
        stdin = conf if isinstance(conf, str) else json.dumps(conf or self.conf())
        cp = subprocess.run([binary("rocenet")], input=stdin, env=environment,
                            capture_output=True, text=True, timeout=30)
        out = json.loads(cp.stdout) if cp.stdout.strip() else {}
        return cp.returncode, out


@pytest.fixture(scope="module")
def fabric(fabrics):
    return fabrics("cn", ports=6)


@pytest.fixture(scope="module")
def daemon(fabric):
    with ready_daemon(fabric, timeout=10) as d:
        yield d


@pytest.fixture
def cni(daemon):
    return Cni(daemon)


@pytest.fixture
def pod(fabric):
    made = []

    def make(tag: str) -> str:
        name = f"{fabric.name}-pod{tag}"
        subprocess.run(["ip", "netns", "add", name], check=True)
        made.append(name)
        return f"/run/netns/{name}"

    yield make
    for name in made:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


def pod_sysctl(ns: str, key: str) -> str:
    return subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-n", key], capture_output=True,
                          text=True, check=True).stdout.strip()


def host_addresses(fabric, ifname: str) -> list[str]:
    data = ip_json(fabric.node_netns, "-4", "addr", "show", "dev", ifname)
    return [f"{a['local']}/{a['prefixlen']}" for d in data for a in d.get("addr_info", [])]


@pytest.mark.parametrize("version", VERSIONS)
def test_add_check_del_for_every_version(fabric, daemon, cni, pod, version):
    port = fabric.ports[1]
    ports = {p["name"]: p for p in daemon.ports()}
    device_id = ports[port["host_ifname"]]["id"]
    netns = pod(version.replace(".", ""))
    ns = os.path.basename(netns)
    conf = cni.conf(version, deviceID=device_id)

    rc, result = cni.run("ADD", f"c{version}", netns, "net1", conf)
    assert rc == 0, result
    assert result["cniVersion"] == version
    iface = result["interfaces"][0]
    assert iface["name"] == "net1" and iface["sandbox"] == netns
    assert iface["mac"] == port["host_mac"]
    ip = result["ips"][0]
    assert ip["address"] == "10.200.2.1/30" and ip["gateway"] == "10.200.2.2"
    if version == "0.4.0":
        assert ip["version"] == "4"
    if version == "1.1.0":
        assert iface["pciID"] == port["pci_address"]
        assert iface["mtu"] == 1500
    assert {"dst": "10.200.0.0/16", "gw": "10.200.2.2"} in result["routes"]

    # Inside the pod, as the training job sees it.
    links = {link["ifname"]: link for link in ip_json(ns, "link", "show")}
    assert links["net1"]["address"] == port["host_mac"]
    assert links["net1"]["mtu"] == 1500
    assert "UP" in links["net1"]["flags"]
    addrs = ip_json(ns, "-4", "addr", "show", "dev", "net1")
    assert [f"{a['local']}/{a['prefixlen']}" for a in addrs[0]["addr_info"]] == ["10.200.2.1/30"]
    routes = ip_json(ns, "-4", "route", "show", "table", "all")
    assert any(r.get("dst") == "10.200.0.0/16" and r.get("gateway") == "10.200.2.2"
               for r in routes)
    rules = ip_json(ns, "-4", "rule", "show")
    assert any(r.get("src") == "10.200.2.1" for r in rules), rules
    assert pod_sysctl(ns, "net.ipv4.conf.net1.arp_ignore") == "1"
    assert pod_sysctl(ns, "net.ipv4.conf.net1.arp_announce") == "2"
    ping = subprocess.run(["ip", "netns", "exec", ns, "ping", "-c", "1", "-W", "2", "10.200.2.2"],
                          capture_output=True, text=True)
    assert ping.returncode == 0, ping.stdout
    assert port["host_ifname"] not in {link["ifname"] for link in ip_json(fabric.node_netns,
                                                                         "link", "show")}

    rc, out = cni.run("CHECK", f"c{version}", netns, "net1", {**conf, "prevResult": result})
    assert rc == 0, out

    rc, out = cni.run("DEL", f"c{version}", netns, "net1", conf)
    assert rc == 0, out
    wait_until(lambda: host_addresses(fabric, port["host_ifname"]) == ["10.200.2.1/30"], 5,
               what="the port back in the host, addressed")
    assert "net1" not in {link["ifname"] for link in ip_json(ns, "link", "show")}


def test_add_twice_del_twice_and_del_of_unknown(fabric, daemon, cni, pod):
    netns = pod("twice")
    rc, first = cni.run("ADD", "twice", netns)
    assert rc == 0, first
    rc, second = cni.run("ADD", "twice", netns)
    assert rc == 0, second
    assert second["interfaces"][0]["mac"] == first["interfaces"][0]["mac"]
    assert cni.run("DEL", "twice", netns)[0] == 0
    assert cni.run("DEL", "twice", netns)[0] == 0
    assert cni.run("DEL", "never-added", netns)[0] == 0
    assert json.loads(daemon.rocectl("ports", "-o", "json").stdout)["ports"]


def test_two_pods_take_three_ports_each_in_parallel(fabric, daemon, cni, pod):
    pods = [pod("a"), pod("b")]

    def add(args):
        p, i = args
        return cni.run("ADD", f"par{p[-1]}", p, f"net{i}")

    jobs = [(p, i) for p in pods for i in range(3)]
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        results = list(pool.map(add, jobs))
    if not all(rc == 0 for rc, _ in results):
        open("/tmp/cni_debug.log", "w").write(daemon.log())
    assert all(rc == 0 for rc, _ in results), results
    macs = [out["interfaces"][0]["mac"] for _, out in results]
    assert len(set(macs)) == 6  # never the same port twice
    for (_p, i), (_, out) in zip(jobs, results, strict=True):
        assert out["interfaces"][0]["name"] == f"net{i}"
    for p, i in jobs:
        assert cni.run("DEL", f"par{p[-1]}", p, f"net{i}")[0] == 0
    wait_until(lambda: len([x for x in daemon.ports() if x["present"]]) == 6, 5,
               what="all six ports back")


def test_pod_netns_deleted_without_del_is_released(fabric, daemon, cni, pod):
    netns = pod("gone")
    rc, out = cni.run("ADD", "gone", netns)
    assert rc == 0, out
    attached = [p for p in daemon.ports() if p.get("attached_to") == netns]
    assert len(attached) == 1
    subprocess.run(["ip", "netns", "del", os.path.basename(netns)], check=True)

    def released():
        listing = json.loads(daemon.rocectl("ports", "-o", "json").stdout)["ports"]
        return not any(p.get("attached_to") == netns for p in listing)

    wait_until(released, 10, what="the attachment released")
    # A veth dies with its namespace (a physical port would come home): it is
    # gone from the host's sysfs and netlink, so no longer listed, and not
    # leaked as attached.
    assert not any(p["id"] == attached[0]["id"] for p in daemon.ports())
    listing = json.loads(daemon.rocectl("attachments", "-o", "json").stdout)
    assert not any(a["port_id"] == attached[0]["id"] for a in listing.get("attachments", []))


def test_gc_of_one_network_releases_only_its_own_stale_attachments(fabric, daemon, cni, pod):
    a, b = pod("gca"), pod("gcb")
    ai_net, rail_b = cni.conf("1.1.0"), cni.conf("1.1.0", name="rail-b")
    assert cni.run("ADD", "gc-keep", a, "net1", ai_net)[0] == 0
    rc, stale = cni.run("ADD", "gc-stale", b, "net1", ai_net)
    assert rc == 0, stale
    assert cni.run("ADD", "gc-other", b, "net2", rail_b)[0] == 0

    def attachments():
        listing = json.loads(daemon.rocectl("attachments", "-o", "json").stdout)
        return {(x["container_id"], x["ifname"]): x for x in listing.get("attachments", [])}

    assert {k: v["network"] for k, v in attachments().items()} == {
        ("gc-keep", "net1"): "ai-net", ("gc-stale", "net1"): "ai-net",
        ("gc-other", "net2"): "rail-b"}
    stale_port = attachments()[("gc-stale", "net1")]["host_ifname"]

    # ai-net's runtime knows only gc-keep; gc-other belongs to rail-b.
    gc = dict(ai_net, **{"cni.dev/valid-attachments": [{"containerID": "gc-keep",
                                                        "ifname": "net1"}]})
    rc, out = cni.run("GC", "gc", None, conf=gc)
    assert rc == 0, out
    assert set(attachments()) == {("gc-keep", "net1"), ("gc-other", "net2")}
    pod_b = ip_json(os.path.basename(b), "link", "show")
    assert [link["ifname"] for link in pod_b if link["ifname"] != "lo"] == ["net2"]
    host = {link["ifname"]: link for link in ip_json(fabric.node_netns, "link", "show")}
    assert stale_port in host and "UP" in host[stale_port]["flags"]

    assert cni.run("DEL", "gc-keep", a, "net1", ai_net)[0] == 0
    assert cni.run("DEL", "gc-other", b, "net2", rail_b)[0] == 0
    assert attachments() == {}


def test_journal_left_in_the_state_dir_by_an_older_daemon_is_taken_over(fabric, daemon, cni, pod):
    netns = pod("older")
    rc, added = cni.run("ADD", "older", netns)
    assert rc == 0, added
    port = added["interfaces"][0]["mac"]
    daemon.stop()
    # Older daemons kept the journal in the state directory.
    old_path = os.path.join(daemon.workdir, "state", "attachments.json")
    shutil.move(daemon.journal_path, old_path)
    daemon.start()
    assert cni.run("CHECK", "older", netns, conf=cni.conf(prevResult=added))[0] == 0
    assert not os.path.exists(old_path)
    assert json.load(open(daemon.journal_path))["attachments"][0]["mac"] == port
    assert cni.run("DEL", "older", netns)[0] == 0
    home = {link["address"]: link["ifname"] for link in ip_json(fabric.node_netns, "link", "show")}
    assert home[port].startswith("so"), home


def test_the_mtu_a_pod_asked_for_goes_with_the_pod(fabric, daemon, cni, pod):
    netns = pod("mtu")
    before = {link["address"]: link["mtu"] for link in ip_json(fabric.node_netns, "link", "show")}
    rc, added = cni.run("ADD", "mtu", netns, conf=cni.conf(mtu=4000))
    assert rc == 0, added
    mac = added["interfaces"][0]["mac"]
    host_mtu = before[mac]
    assert host_mtu != 4000
    inside = ip_json(os.path.basename(netns), "link", "show", "net1")[0]
    assert inside["mtu"] == 4000
    assert cni.run("DEL", "mtu", netns)[0] == 0
    home = {link["address"]: link for link in ip_json(fabric.node_netns, "link", "show")}
    assert home[mac]["mtu"] == host_mtu


class ReadOnlyProcSysDaemon(Daemon):
    """rocenetd as a container runtime starts it without `privileged`: with
    /proc/sys mounted read-only, and host mounts (pod netns) seen as they come."""

    def command(self) -> list[str]:
        inner = " ".join(super().command())
        return ["unshare", "--mount", "--propagation", "slave", "sh", "-c",
                "mount --bind /proc/sys /proc/sys && "
                f"mount -o remount,bind,ro /proc/sys && exec {inner}"]


def test_a_daemon_with_a_read_only_proc_sys_still_attaches(pod):
    fab = sim.Fabric.up(sim.unique_name("cr"), ports=1)
    d = ReadOnlyProcSysDaemon(fab.node_netns, [f"--sysfs-root={fab.sysfs_root}"])
    try:
        d.start()
        wait_until(lambda: json.loads(d.rocectl("health", "-o", "json").stdout or "{}")
                   .get("ready"), 10, what="node ready")
        netns = f"/run/netns/{fab.name}-podro"
        subprocess.run(["ip", "netns", "add", os.path.basename(netns)], check=True)
        rc, added = Cni(d).run("ADD", "ro", netns)
        assert rc == 0, added
        assert pod_sysctl(os.path.basename(netns), "net.ipv4.conf.net1.arp_ignore") == "1"
        assert Cni(d).run("DEL", "ro", netns)[0] == 0
    finally:
        d.cleanup()
        fab.down()
