# SPDX-License-Identifier: Apache-2.0
"""RDMA on the simulated fabric: each Gaudi module has an RDMA device
(hbl_<module>) whose GID table the sim keeps in step with the ports'
addresses, as the kernel's RDMA core does. rocenetd shows each port's RDMA
device, verbs node and the RoCE v2 GID index of its address, following an
address that moves; the device plugin gives a container the verbs nodes and
the GID indices of its ports.

This kernel has no RDMA device (no rxe or siw), so the GID table is the
sim's, kept as the kernel's RDMA core keeps it
(docs/development.md#simulated-fabric); the kernel's own table is read in
tests/vm, of an rdma_rxe device."""

from __future__ import annotations

import tempfile

import pytest

from harness import ready_daemon, wait_until
from kubelet import KubeletPeer, Plugin, all_healthy


@pytest.fixture(scope="module")
def fabric(fabrics):
    return fabrics("rd", ports=2)


@pytest.fixture(scope="module")
def daemon(fabric):
    with ready_daemon(fabric, timeout=15) as d:
        yield d


def rdma_of(daemon, name: str) -> dict:
    port = next(p for p in daemon.ports() if p["name"] == name)
    return port.get("rdma", {})


def gid_follows(daemon, name: str, address: str) -> bool:
    rdma = rdma_of(daemon, name)
    return rdma.get("gid_address") == address and rdma.get("gid_index", -1) >= 0


def test_each_port_shows_its_rdma_device_and_gid_index(fabric, daemon):
    wait_until(lambda: gid_follows(daemon, "so0", "10.200.1.1"), 10, what="so0's GID index")
    rdma = rdma_of(daemon, "so0")
    assert rdma["device"] == "hbl_0" and rdma["uverbs"] == "uverbs0", rdma
    # A link-local GID of each type comes first: the IPv4 RoCE v2 one is 3.
    assert rdma["gid_index"] == 3, rdma
    wide = daemon.rocectl("ports", "-o", "wide", check=True).stdout
    header, row = wide.splitlines()[0].split(), wide.splitlines()[1].split()
    assert "GID" in header and "hbl_0/9" in row, wide


def test_the_gid_index_follows_an_address_that_moves(fabric, daemon):
    fabric.set_description(1, "no-alert 10.200.9.2/30")
    try:
        wait_until(lambda: gid_follows(daemon, "so1", "10.200.9.1"), 10,
                   what="so1's GID on its new address")
    finally:
        fabric.set_description(1, "no-alert 10.200.2.2/30")
    wait_until(lambda: gid_follows(daemon, "so1", "10.200.2.1"), 10, what="so1's GID back")


@pytest.mark.parametrize("specs,nodes", [("all", ["/dev/infiniband/uverbs0",
                                                   "/dev/infiniband/rdma_cm"]),
                                          ("non-gaudi", [])])
def test_allocate_gives_the_verbs_nodes_and_gid_indices(fabric, daemon, specs, nodes):
    wait_until(lambda: all(gid_follows(daemon, n, a) for n, a in
                           (("so0", "10.200.1.1"), ("so1", "10.200.2.1"))), 10,
               what="both GID indices")
    workdir = tempfile.mkdtemp(prefix="rocenet-rdma-")
    plugin = Plugin(daemon, workdir, f"--rdma-device-specs={specs}")
    peer = KubeletPeer(plugin.kubelet_dir)
    plugin.start()
    try:
        peer.devices(all_healthy, 10)
        ids = {p["name"]: p["id"] for p in daemon.ports()}
        reply = peer.call(f"allocate {ids['so1']},{ids['so0']}")
        assert reply["ok"], reply
        container = reply["response"]["container_responses"][0]
        assert container["envs"]["ROCENET_RDMA_DEVICES"] == "hbl_0,hbl_0"
        assert container["envs"]["ROCENET_GID_INDEX"] == "3,3"
        devices = [d["host_path"] for d in container.get("devices", [])]
        assert devices == nodes, container
        for d in container.get("devices", []):
            assert d["container_path"] == d["host_path"] and d["permissions"] == "rw"
    finally:
        peer.stop()
        assert plugin.stop() == 0, plugin.log()
