# SPDX-License-Identifier: Apache-2.0
"""What a device plugin allocation gives the pod, with the real rocenetd on a
simulated fabric and rocenet-kubelet-peer playing kubelet (kubelet.py): the
device-info file, the allocation's HCL files and mounts, their updates and
removal, a restarted plugin, and the allocated ports attached through the
CNI plugin as Multus does."""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from harness import binary, metric_value, ready_daemon, wait_until
from kubelet import TWO_RAILS, all_healthy, ids_by_name


@pytest.fixture(scope="module")
def fabric(fabrics):
    return fabrics("da", ports=4, descriptions=TWO_RAILS)


@pytest.fixture(scope="module")
def daemon(fabric):
    with ready_daemon(fabric, timeout=15) as d:
        yield d


def test_allocate_writes_devinfo_and_gaudinet_and_rejects_unknown(fabric, daemon, plugin_and_peers):
    plugin, (peer,) = plugin_and_peers
    peer.devices(all_healthy, 5)
    ports = {p["id"]: p for p in daemon.ports()}
    chosen = sorted(ports)[:2]
    reply = peer.call(f"allocate {','.join(chosen)}")
    assert reply["ok"], reply
    container = reply["response"]["container_responses"][0]
    envs = container["envs"]
    assert envs["ROCENET_PORT_IDS"] == ",".join(chosen)
    assert envs["ROCENET_PORT_INTERFACES"] == ",".join(ports[i]["name"] for i in chosen)
    for dev_id in chosen:
        name = f"rocenet.io-scale-out-port-{dev_id}-device.json"
        with open(os.path.join(plugin.devinfo_dir, name)) as f:
            info = json.load(f)
        assert info == {"type": "pci", "version": "1.1.0",
                        "pci": {"pci-address": ports[dev_id]["pci_address"]}}
    # HCL's files: a directory of the allocation's own, mounted read-only.
    mount = container["mounts"][0]
    assert mount["container_path"] == "/etc/habanalabs/rocenet" and mount["read_only"]
    assert envs["HCL_GAUDINET_CONFIG_FILE"] == "/etc/habanalabs/rocenet/gaudinet.json"
    assert envs["HCL_MAC_INFO_FILE"] == "/etc/habanalabs/rocenet/macAddrInfo.json"
    assert sorted(os.listdir(mount["host_path"])) == ["gaudinet.json", "macAddrInfo.json"]
    with open(os.path.join(mount["host_path"], "gaudinet.json")) as f:
        gaudinet = json.load(f)["NIC_NET_CONFIG"]
    plans = {p["port_id"]: p for p in json.loads(
        daemon.rocectl("addressing", "-o", "json", check=True).stdout)["plans"]}
    want = sorted(chosen, key=lambda i: ports[i]["name"])
    assert [e["NIC_MAC"] for e in gaudinet] == [ports[i]["mac"] for i in want]
    assert [e["NIC_IP"] for e in gaudinet] == [plans[i]["local"].split("/")[0] for i in want]
    assert all(e["SUBNET_MASK"] == "255.255.255.252" for e in gaudinet)
    assert [e["GATEWAY_MAC"] for e in gaudinet] == [plans[i]["gateway_mac"] for i in want]
    # macAddrInfo.json: every scale-out port of the functions, by NIC index.
    with open(os.path.join(mount["host_path"], "macAddrInfo.json")) as f:
        info = json.load(f)["MAC_ADDR_INFO"]
    functions = {ports[i]["pci_address"] for i in chosen}
    assert {e["PCI_ID"] for e in info} == functions
    for entry in info:
        assert len(entry["MAC_ADDR_LIST"]) == 24
        on_function = {p["port_index"]: p["mac"] for p in ports.values()
                       if p["pci_address"] == entry["PCI_ID"]}
        for index, mac in enumerate(entry["MAC_ADDR_LIST"]):
            assert mac == on_function.get(index, "ff:ff:ff:ff:ff:ff"), (index, entry)

    bad = peer.call(f"allocate {chosen[0]},no-such-port")
    assert bad["ok"] is False and bad["code"] == 3  # INVALID_ARGUMENT
    assert "no-such-port" in bad["message"]


def allocated_hcl_dir(peer, ids: list[str]) -> tuple[dict, str]:
    reply = peer.call(f"allocate {','.join(ids)}")
    assert reply["ok"], reply
    container = reply["response"]["container_responses"][0]
    return container["envs"], container["mounts"][0]["host_path"]


def test_a_refused_port_is_left_out_of_gaudinet(fabric, daemon, plugin_and_peers):
    """A port whose Port Description is refused has no address: an entry
    with an empty NIC_IP would make HCL refuse the whole file."""
    plugin, (peer,) = plugin_and_peers
    peer.devices(all_healthy, 5)
    ids = ids_by_name(daemon)
    fabric.set_description(3, "no-alert 10.201.4.2/29")
    try:
        wait_until(lambda: any(p["state"] in ("PLAN_STATE_REFUSED", "REFUSED") for p in json.loads(
            daemon.rocectl("addressing", "-o", "json", check=True).stdout)["plans"]
            if p["port_id"] == ids["so3"]), 10, what="so3 refused")
        envs, host_dir = allocated_hcl_dir(peer, [ids["so2"], ids["so3"]])
        with open(os.path.join(host_dir, "gaudinet.json")) as f:
            entries = json.load(f)["NIC_NET_CONFIG"]
        macs = {p["name"]: p["mac"] for p in daemon.ports()}
        assert [e["NIC_MAC"] for e in entries] == [macs["so2"]]
        assert all(e["NIC_IP"] and e["SUBNET_MASK"] for e in entries)
        # The refused port alone: no gaudinet.json at all, and no variable.
        envs, host_dir = allocated_hcl_dir(peer, [ids["so3"]])
        assert "HCL_GAUDINET_CONFIG_FILE" not in envs
        assert os.listdir(host_dir) == ["macAddrInfo.json"]
    finally:
        fabric.set_description(3, TWO_RAILS[3])
    wait_until(lambda: daemon.ready(), 15, what="node ready again")


def test_a_changed_address_reaches_the_container_through_its_mount(fabric, daemon, plugin_and_peers):
    """The HCL directory is bind mounted as kubelet does it; the switch gives
    the port another address while the container runs; the container reads
    the new gaudinet.json (a bind-mounted file would keep the old inode)."""
    plugin, (peer,) = plugin_and_peers
    peer.devices(all_healthy, 5)
    ids = ids_by_name(daemon)
    envs, host_dir = allocated_hcl_dir(peer, [ids["so1"]])
    seen = os.path.join(plugin.hcl_dir, "..", "container-view")
    os.makedirs(seen, exist_ok=True)
    script = (f"mount --bind -o ro {host_dir} {seen} && cat {seen}/gaudinet.json && echo --- "
              f"&& read line && cat {seen}/gaudinet.json")
    container = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                                  script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
    try:
        first = ""
        while "---" not in first:
            line = container.stdout.readline()
            if not line:
                pytest.skip(f"cannot bind mount here: {container.stderr.read()}")
            first += line
        assert "10.200.2.1" in first
        fabric.set_description(1, "no-alert 10.200.12.2/30")
        wait_until(lambda: "10.200.12.1" in open(os.path.join(host_dir, "gaudinet.json")).read(),
                   10, what="gaudinet.json rewritten")
        after, _ = container.communicate("go\n", timeout=10)
        entries = json.loads(after)["NIC_NET_CONFIG"]
        assert [e["NIC_IP"] for e in entries] == ["10.200.12.1"]
    finally:
        if container.poll() is None:
            container.kill()
        fabric.set_description(1, TWO_RAILS[1])
    wait_until(lambda: daemon.ready(), 15, what="node ready again")


def test_files_go_when_kubelet_no_longer_assigns_the_ports(fabric, daemon, plugin_and_peers):
    """The pod is deleted: kubelet's PodResources no longer lists its ports,
    and the plugin removes their device-info files and HCL directory; the
    other pod's stay."""
    plugin, (peer,) = plugin_and_peers
    peer.devices(all_healthy, 5)
    ids = ids_by_name(daemon)
    gone = peer.call(f"allocate {ids['so0']},{ids['so1']}")
    kept = peer.call(f"allocate {ids['so2']}")
    assert gone["ok"] and kept["ok"], (gone, kept)

    def files(reply) -> list[str]:
        container = reply["response"]["container_responses"][0]
        ports = container["envs"]["ROCENET_PORT_IDS"].split(",")
        out = [os.path.join(plugin.devinfo_dir, f"rocenet.io-scale-out-port-{i}-device.json")
               for i in ports]
        return out + [m["host_path"] for m in container["mounts"]]
    assert all(os.path.exists(f) for f in files(gone) + files(kept))
    assert peer.call(f"delete {gone['pod']}")["ok"]
    wait_until(lambda: not any(os.path.exists(f) for f in files(gone)), 10,
               what="the deleted pod's files removed")
    assert all(os.path.exists(f) for f in files(kept))
    assert "kubelet has not assigned its ports for" in plugin.log()


def test_a_stopped_plugin_leaves_the_live_files_and_its_successor_takes_them_over(
        fabric, daemon, plugin_and_peers):
    """The plugin stops (a crash, an OOM kill, an upgrade): the files of an
    allocation kubelet still assigns stay where they are, the very directory
    a running container has bind-mounted; those of a pod kubelet no longer
    lists go. Started again, the plugin takes the live files over in place,
    so a container restarted in that pod finds its HCL directory too."""
    plugin, (peer,) = plugin_and_peers
    peer.devices(all_healthy, 5)
    ids = ids_by_name(daemon)
    live = peer.call(f"allocate {ids['so0']},{ids['so1']}")
    dead = peer.call(f"allocate {ids['so3']}")
    assert live["ok"] and dead["ok"]
    mount = live["response"]["container_responses"][0]["mounts"][0]["host_path"]
    dead_dir = dead["response"]["container_responses"][0]["mounts"][0]["host_path"]
    before = {name: open(os.path.join(mount, name)).read() for name in os.listdir(mount)}
    inode = os.stat(mount).st_ino
    assert peer.call(f"delete {dead['pod']}")["ok"]
    assert plugin.stop() == 0
    # What the running container sees is still there, unchanged.
    assert os.stat(mount).st_ino == inode
    assert {name: open(os.path.join(mount, name)).read() for name in os.listdir(mount)} == before
    assert "stay for the next plugin" in plugin.log()
    plugin.start()
    wait_until(lambda: "kubelet still assigns it; its files are written again" in plugin.log(),
               10, what="the restarted plugin taking the live allocation over")
    assert os.stat(mount).st_ino == inode
    assert {name: open(os.path.join(mount, name)).read() for name in before} == before
    for port in ("so0", "so1"):
        assert os.path.exists(os.path.join(
            plugin.devinfo_dir, f"rocenet.io-scale-out-port-{ids[port]}-device.json"))
    wait_until(lambda: not os.path.exists(dead_dir), 10, what="the deleted pod's files removed")
    assert not os.path.exists(os.path.join(
        plugin.devinfo_dir, f"rocenet.io-scale-out-port-{ids['so3']}-device.json"))


def test_allocated_ports_attach_through_cni_as_multus_does(fabric, daemon, plugin_and_peers):
    plugin, (peer,) = plugin_and_peers
    peer.devices(all_healthy, 5)
    ids = sorted(p["id"] for p in daemon.ports())
    reply = peer.call(f"allocate {ids[0]},{ids[3]}")
    assert reply["ok"], reply
    allocated = reply["response"]["container_responses"][0]["envs"]["ROCENET_PORT_IDS"].split(",")
    macs = {p["id"]: p["mac"] for p in daemon.ports()}
    ns = f"{fabric.name}-podalloc"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    netns = f"/run/netns/{ns}"
    env = {"CNI_COMMAND": "ADD", "CNI_CONTAINERID": "dp-e2e", "CNI_NETNS": netns,
           "CNI_PATH": "/usr/lib/cni", "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "CNI_ARGS": "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=dp-e2e"}
    try:
        for i, dev_id in enumerate(allocated):
            conf = {"cniVersion": "1.0.0", "name": "ai-net", "type": "rocenet",
                    "socket": daemon.socket, "deviceID": dev_id}
            cp = subprocess.run([binary("rocenet")], input=json.dumps(conf),
                                env={**env, "CNI_IFNAME": f"net{i + 1}"}, capture_output=True,
                                text=True, timeout=30)
            assert cp.returncode == 0, cp.stdout + cp.stderr
        links = json.loads(subprocess.run(["ip", "-n", ns, "-j", "link", "show"],
                                          capture_output=True, text=True, check=True).stdout)
        pod_macs = {link["address"] for link in links if link["ifname"] != "lo"}
        assert pod_macs == {macs[i] for i in allocated}
        # The ports left the host's sysfs (where Habana's runtime would look
        # for them); the pod's macAddrInfo.json still has their MACs.
        wait_until(lambda: all(p.get("attached_to") for p in daemon.ports()
                               if p["id"] in allocated), 5, what="both attached")
        time.sleep(0.5)  # a refresh or two after the move
        host_dir = reply["response"]["container_responses"][0]["mounts"][0]["host_path"]
        with open(os.path.join(host_dir, "macAddrInfo.json")) as f:
            listed = {mac for e in json.load(f)["MAC_ADDR_INFO"] for mac in e["MAC_ADDR_LIST"]}
        assert {macs[i] for i in allocated} <= listed, listed
    finally:
        for i, dev_id in enumerate(allocated):
            conf = {"cniVersion": "1.0.0", "name": "ai-net", "type": "rocenet",
                    "socket": daemon.socket, "deviceID": dev_id}
            subprocess.run([binary("rocenet")], input=json.dumps(conf),
                           env={**env, "CNI_COMMAND": "DEL", "CNI_IFNAME": f"net{i + 1}"},
                           capture_output=True, text=True, timeout=30)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    wait_until(lambda: all(p["present"] and not p.get("attached_to") for p in daemon.ports()),
               10, what="the ports back on the host")


def test_a_port_in_a_pod_stays_listed_and_is_judged_inside_the_pod(fabric, daemon, plugin_and_peers):
    plugin, (peer,) = plugin_and_peers
    peer.devices(all_healthy, 5)
    port = next(p for p in daemon.ports() if p["name"] == "so1")
    index = next(p["index"] for p in fabric.ports if p["host_ifname"] == "so1")
    assert peer.call(f"allocate {port['id']}")["ok"]
    ns = f"{fabric.name}-podcable"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    netns = f"/run/netns/{ns}"
    env = {"CNI_CONTAINERID": "dp-cable", "CNI_NETNS": netns, "CNI_IFNAME": "net1",
           "CNI_PATH": "/usr/lib/cni", "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "CNI_ARGS": "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=dp-cable"}
    conf = json.dumps({"cniVersion": "1.0.0", "name": "ai-net", "type": "rocenet",
                       "socket": daemon.socket, "deviceID": port["id"]})

    def cni(command: str) -> subprocess.CompletedProcess:
        return subprocess.run([binary("rocenet")], input=conf, env={**env, "CNI_COMMAND": command},
                              capture_output=True, text=True, timeout=30)

    def listed() -> dict | None:
        return next((p for p in daemon.ports() if p["id"] == port["id"]), None)

    def health() -> dict:
        doc = json.loads(daemon.rocectl("health", "-o", "json", check=True).stdout)
        return next(p for p in doc["ports"] if p["port_id"] == port["id"])

    try:
        cp = cni("ADD")
        assert cp.returncode == 0, cp.stdout + cp.stderr
        # The kernel hides a net device that left the namespace from sysfs.
        wait_until(lambda: not os.path.lexists(os.path.join(fabric.sysfs_root, "class/net/so1")),
                   5, what="so1 gone from the host's sysfs")
        daemon.rocectl("reconcile", check=True)  # a rescan of sysfs
        seen = listed()
        assert seen is not None, daemon.ports()
        assert seen["attached_to"] == netns and seen["present"], seen
        assert seen["pci_address"] == port["pci_address"]
        assert health()["healthy"], health()
        devices = peer.latest_devices()
        assert devices.get(port["id"], {}).get("health") == "Healthy", devices

        # The cable pulled while the job runs: NO-CARRIER inside the pod.
        fabric.link(index, "down")
        wait_until(lambda: not health()["healthy"], 10, what="the attached port unhealthy")
        assert [c["type"] + "/" + c["reason"] for c in health()["conditions"]][0] == \
            "LinkDown/NoCarrier", health()
        peer.devices(lambda d: d.get(port["id"], {}).get("health") == "Unhealthy", 5)
        metrics = daemon.metrics()
        assert metric_value(metrics, "rocenet_port_healthy", {"device": "so1"}) == 0
        assert metric_value(metrics, "rocenet_port_condition",
                            {"device": "so1", "condition": "LinkDown"}) == 1
        assert metric_value(metrics, "rocenet_node_ready") == 0
        table = daemon.rocectl("health", check=True).stdout
        assert "LinkDown/NoCarrier" in table, table

        fabric.link(index, "up")
        wait_until(lambda: health()["healthy"], 15, what="healthy again with the cable back")
        peer.devices(lambda d: d.get(port["id"], {}).get("health") == "Healthy", 5)
    finally:
        fabric.link(index, "up")
        cni("DEL")
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    # Home again: in the host's sysfs, listed, addressed as before.
    wait_until(lambda: os.path.lexists(os.path.join(fabric.sysfs_root, "class/net/so1")), 5,
               what="so1 back in the host's sysfs")
    wait_until(lambda: (listed() or {}).get("present") and not listed().get("attached_to"), 10,
               what="so1 back on the host")
    cp = fabric.node_exec(["ip", "-j", "-4", "addr", "show", "dev", "so1"], capture_output=True,
                          text=True, check=True)
    assert [a["local"] for d in json.loads(cp.stdout) for a in d["addr_info"]] == ["10.200.2.1"]
