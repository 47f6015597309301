# SPDX-License-Identifier: Apache-2.0
"""rocenetd on Debian's own kernel in qemu (vm.py), with real PCI NICs.

A generic RoCE NIC node on e1000e: the port is found in the real sysfs by
its driver, brought up and addressed from the real lldpd's Port
Description on the other end of the wire, and its driver's ethtool
statistics feed the MAC counters and ErrorsRising. The same NIC handed to
a pod by the CNI plugin is hidden by the host's sysfs, and comes home when
the pod's namespace is deleted without a CNI DEL. An rdma_rxe device on the
NIC gives the inventory its RDMA device and the GID index of its address
from the kernel's GID table, and the device plugin's Allocate its verbs
nodes. Two VMs joined by a cable are two nodes whose diagd run the RDMA
stage with perftest over real verbs. SKIPPED with the reason
where qemu or the kernel package cannot be had.

Each guest's console is kept in the build tree (vm-consoles/, conftest.py);
a failure shows its file, the step that failed and its last lines.
"""

from __future__ import annotations

import json
import os
import re
import tempfile

import pytest

import vm

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = vm.BUILD
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PORT_MAC, SWITCH_MAC = "52:54:00:00:01:01", "52:54:00:00:01:02"


@pytest.fixture(scope="module")
def booted_kernel():
    lacking = vm.missing()
    if lacking:
        pytest.skip(f"no VM here: missing {', '.join(lacking)}")
    if not os.path.exists(os.path.join(BUILD, "daemon", "server", "rocenetd")):
        pytest.skip(f"no rocenetd built in {BUILD}")
    try:
        k = vm.kernel()
        return k, vm.initramfs(k)
    except Exception as e:  # no mirror, no space: the reason is the skip
        pytest.skip(f"Debian's kernel package not available: {e}")


def write_script(tmp: str, name: str, guest: str, **env: str) -> str:
    """A script in `tmp` that sets `env` and runs the guest script `guest`."""
    script = os.path.join(tmp, name)
    with open(script, "w") as f:
        for key, value in {"BUILD": BUILD, "HERE": HERE, **env}.items():
            f.write(f"{key}='{value}'; export {key}\n")
        f.write(f". {os.path.join(HERE, guest)}\n")
    return script


def run_guest(booted_kernel, guest_runs, guest: str, wires: list[vm.Wire],
              **env: str) -> vm.Result:
    k, initrd = booted_kernel
    with tempfile.TemporaryDirectory(prefix="rocenet-vm-") as tmp:
        script = write_script(tmp, "run.sh", guest, **env)
        return guest_runs.keep(vm.Vm(k, initrd, wires=wires, timeout=180).run(script), guest)


def run_port_node(booted_kernel, guest_runs, guest: str) -> vm.Result:
    """`guest` on a node whose one port is an e1000e NIC wired to the
    switch's; asserts it ended well."""
    result = run_guest(booted_kernel, guest_runs, guest,
                       [vm.Wire((PORT_MAC, SWITCH_MAC), "e1000e")],
                       DRIVER="e1000e", PORT_MAC=PORT_MAC, SWITCH_MAC=SWITCH_MAC)
    assert result.status == 0, f"{guest}: {vm.ended(result)}"
    return result


def guest_lines(result: vm.Result, prefix: str) -> list[str]:
    return [line.split(prefix, 1)[1] for line in result.log.splitlines() if prefix in line]


def guest_json(result: vm.Result, label: str):
    """The JSON the guest printed after "vm: LABEL " (its last such line)."""
    lines = guest_lines(result, f"vm: {label} ")
    assert lines, f"the guest printed no {label}"
    return json.loads(lines[-1])


def metrics(lines: list[str]) -> dict[str, float]:
    """rocenet_port_mac_* samples by name, from "vm: metric NAME{...} VALUE"."""
    out = {}
    for line in lines:
        name_labels, value = line.rsplit(" ", 1)
        out[name_labels.split("{", 1)[0]] = float(value)
    return out


def test_a_generic_nic_is_found_in_real_sysfs_brought_up_and_addressed(booted_kernel,
                                                                      guest_runs):
    result = run_port_node(booted_kernel, guest_runs, "guest_generic_port.sh")
    ports = json.loads(guest_lines(result, "vm: ports ")[0])["ports"]
    assert len(ports) == 1, ports
    port = ports[0]
    # Found by its driver in the real sysfs, with the PCI function's address.
    assert port["discovery"] == "DISCOVERY_DRIVER" and port["driver"] == "e1000e", port
    assert port["mac"] == PORT_MAC and port["pci_address"].startswith("0000:"), port
    # Registered down by the driver, set up by rocenetd.
    assert "flags 0x1002" in guest_lines(result, "vm: port ")[0]
    assert port["admin_up"], port
    routes = guest_lines(result, "vm: route ")
    assert any(r.startswith("10.200.0.0/16 via 10.200.1.2") for r in routes), routes
    assert port["rail_name"] == "10.200.0.0/16", port

    # The MAC counters come from e1000e's own ethtool statistics (its
    # rx_bytes, rx_errors, rx_crc_errors names): before the oversized frames
    # and after them.
    samples = guest_lines(result, "vm: metric ")
    before, after = metrics(samples[:len(samples) // 2]), metrics(samples[len(samples) // 2:])
    assert before.get("rocenet_port_mac_receive_bytes_total", 0) > 0, samples
    assert after["rocenet_port_mac_receive_errors_total"] >= \
        before["rocenet_port_mac_receive_errors_total"] + 10, samples
    # Too long is not a bad CRC.
    assert after["rocenet_port_mac_receive_fcs_errors_total"] == 0, samples
    assert guest_json(result, "health-before")["ports"][0]["healthy"]
    health = guest_json(result, "health")["ports"][0]
    assert not health["healthy"], health
    assert [(c["type"], c["reason"]) for c in health["conditions"]] == \
        [("ErrorsRising", "ReceiveErrors")], health


def test_timers_keep_time_when_the_wall_clock_is_set(booted_kernel, guest_runs):
    """The guest's wall clock set back 10 minutes, then forwards 20: a
    switch gone silent ages out at its TTL (4 s) and the counters go on
    being sampled every second, and a switch that is there is never aged
    out. Timers on the wall clock would wait the 10 minutes, and then
    fire at once."""
    result = run_port_node(booted_kernel, guest_runs, "guest_clock_step.sh")

    def figure(name: str) -> int:
        lines = guest_lines(result, f"vm: {name} ")
        assert lines, f"the guest printed no {name}"
        return int(lines[-1])

    aged_out, sampled = figure("aged-out-ms"), figure("sampled-ms")
    assert 0 <= aged_out <= 10_000, f"the silent switch aged out after {aged_out} ms"
    assert 0 <= sampled <= 5_000, f"the counters were sampled after {sampled} ms"
    assert figure("ageouts-after-backward-step") == 1
    # Looked at every quarter second for 8 s after the forward step: the
    # neighbor stayed and nothing aged out.
    assert figure("kept-looks") > 0
    assert figure("ageouts-after-forward-step") == figure("ageouts-before-forward-step")


def test_a_nic_in_a_pod_is_hidden_by_sysfs_and_comes_home_when_the_pod_dies(booted_kernel,
                                                                           guest_runs):
    result = run_port_node(booted_kernel, guest_runs, "guest_pod_port.sh")
    host_name = guest_json(result, "pod1-attached")["ports"][0]["name"]
    # After each round: the pod's name for it; what the host had under it.
    rounds = {"pod1": host_name, "pod2": host_name, "pod3": "net1"}
    for pod, home_name in rounds.items():
        added = guest_json(result, f"cni-ADD-c{pod[-1]} rc=0")
        assert added["interfaces"][0]["sandbox"] == f"/run/netns/{pod}", added
        assert added["ips"][0]["address"] == "10.200.1.1/30", added
        # The host's sysfs no longer shows the NIC, under the class or under
        # its PCI function, and the pod has it with the address from LLDP.
        host_links = guest_lines(result, f"vm: {pod} host-class-net ")[0].split()
        assert host_name not in host_links, host_links
        assert guest_lines(result, f"vm: {pod} pci-net ")[0].strip() == ""
        assert guest_lines(result, f"vm: {pod} in-pod ")[0].strip() == "10.200.1.1/30"
        # rocenet keeps listing it, attached.
        attached = guest_json(result, f"{pod}-attached")["ports"]
        assert [(p["present"], p["attached_to"]) for p in attached] == \
            [(True, f"/run/netns/{pod}")], attached
        # Home after the namespace died: released, under its host name (or
        # the kernel's where that is taken), found by its driver again.
        home = guest_json(result, f"{pod}-home")["ports"]
        assert [(p["name"], p["attached_to"], p["discovery"]) for p in home] == \
            [(home_name, "", "DISCOVERY_DRIVER")], home
    # Nothing logged as an error while the kernel was handing the NIC back.
    assert guest_lines(result, "vm: gc errors ")[0].strip() == "0"
    log = guest_lines(result, "vm: log ")
    assert sum("waiting for the kernel to hand it back" in line for line in log) == 3, log
    assert sum("is back in the host as net1: its name" in line for line in log) == 1, log


def test_an_rxe_port_has_its_gid_index_from_the_real_table_and_allocate_its_nodes(booted_kernel,
                                                                                 guest_runs):
    result = run_port_node(booted_kernel, guest_runs, "guest_rdma_port.sh")
    # The kernel's table: index 0 the link-local GID, then one per IPv4
    # address; after the address moved, the new one at the next free index.
    gids = {label: dict(re.findall(r"(\d+)=([0-9a-f:]+)/RoCE v2",
                                   guest_lines(result, f"vm: {label} ")[0]))
            for label in ("gids-1", "gids-2")}
    assert gids["gids-1"].get("1") == "0000:0000:0000:0000:0000:ffff:0ac8:0101", gids
    assert gids["gids-2"].get("2") == "0000:0000:0000:0000:0000:ffff:0ac8:0105", gids
    for label, index, address in (("rdma-1", 1, "10.200.1.1"), ("rdma-2", 2, "10.200.1.5")):
        rdma = guest_json(result, label)["ports"][0]["rdma"]
        assert rdma == {"device": "rxe0", "port": 1, "uverbs": "uverbs0", "gid_index": index,
                        "gid_address": address, "state": "ACTIVE",
                        "physical_state": "LinkUp"}, (label, rdma)
    # Allocate: the port's verbs node, and rdma_cm only where it exists.
    for label, nodes in (("allocate-without-ucm", ["/dev/infiniband/uverbs0"]),
                         ("allocate-with-ucm", ["/dev/infiniband/uverbs0",
                                                "/dev/infiniband/rdma_cm"])):
        reply = guest_json(result, label)
        assert reply["ok"], reply
        container = reply["response"]["container_responses"][0]
        assert [d["host_path"] for d in container["devices"]] == nodes, (label, container)
        assert container["envs"]["ROCENET_RDMA_DEVICES"] == "rxe0", container
        assert container["envs"]["ROCENET_GID_INDEX"] == "2", container
    assert "rdma_cm" not in guest_lines(result, "vm: rdma_cm-without-ucm ")[0].split()
    assert "rdma_cm" in guest_lines(result, "vm: rdma_cm-with-ucm ")[0].split()


def test_the_rdma_stage_runs_perftest_over_real_verbs_between_two_nodes(booted_kernel,
                                                                       guest_runs):
    if not os.path.exists(os.path.join(BUILD, "daemon", "diagd", "rocenet-diagd")):
        pytest.skip(f"no rocenet-diagd built in {BUILD}")
    k, initrd = booted_kernel
    a_port, a_switch, a_uplink, b_port = ("52:54:00:00:0a:01", "52:54:00:00:0a:02",
                                          "52:54:00:00:0a:03", "52:54:00:00:0b:01")
    cable = vm.free_port()
    with tempfile.TemporaryDirectory(prefix="rocenet-vm-") as tmp:
        secret = os.path.join(tmp, "secret")
        with open(secret, "w") as f:
            f.write(os.urandom(24).hex() + "\n")
        a = vm.Vm(k, initrd, wires=[vm.Wire((a_port, a_switch), "e1000e")],
                  cables=[vm.Cable(a_uplink, cable, listen=True)], timeout=300)
        b = vm.Vm(k, initrd, cables=[vm.Cable(b_port, cable, listen=False)], timeout=300)
        ra, rb = vm.run_pair(
            (a, write_script(tmp, "a.sh", "guest_rdma_pair.sh", ROLE="a", PORT_MAC=a_port,
                             SWITCH_MAC=a_switch, UPLINK_MAC=a_uplink, SECRET=secret)),
            (b, write_script(tmp, "b.sh", "guest_rdma_pair.sh", ROLE="b", PORT_MAC=b_port,
                             SECRET=secret)))
    guest_runs.keep(ra, "guest_rdma_pair.sh node a")
    guest_runs.keep(rb, "guest_rdma_pair.sh node b")
    assert ra.status == 0, f"node a: {vm.ended(ra)}"
    assert rb.status == 0, f"node b: {vm.ended(rb)}"
    for test, tool in (("write_bw", "ib_write_bw"), ("write_lat", "ib_write_lat")):
        report = guest_json(ra, f"diag-{test} rc=0")
        assert report["ok"] and report["problems"] == [], report
        # The ring a -> b -> a on the one rail, both links measured by the
        # real tool on each end's rxe device and the GID of its address.
        links = report["links"]
        assert [(link["from_node"], link["to_node"]) for link in links] == \
            [("a", "b"), ("b", "a")], links
        for link in links:
            assert link["rail"] == "10.200.0.0/16" and link["tool"] == tool, link
            assert (link["from_device"], link["to_device"]) == ("rxe0", "rxe0"), link
            assert (link["from_gid_index"], link["to_gid_index"]) == (1, 1), link
            assert link["skipped"] == "" and link["error"] == "", link
            # Figures under emulation are no rates: only that the tool's
            # output was read.
            if test == "write_bw":
                assert link["bits_per_second"] > 0, link
            else:
                assert 0 < link["latency_p50_seconds"] <= link["latency_p99_seconds"], link
    # Node a's port as rocenetd reads rxe: ACTIVE and LinkUp, the GID of its
    # address, and every hw_counters entry under rxe's own names (the
    # fixture's list: the same names the unit tests map).
    def rxe_port(label: str) -> dict:
        ports = [p for p in guest_json(ra, label)["ports"] if p.get("rdma")]
        assert len(ports) == 1, ports
        return ports[0]

    # The lossy run itself first: a run that never moved traffic explains
    # counters that did not move.
    lossy_rc = guest_lines(ra, "vm: lossy-diag rc=")
    lossy = guest_json(ra, "lossy-result")
    assert lossy.get("links"), (lossy_rc, lossy)
    port = rxe_port("ports-before")
    assert (port["rdma"]["state"], port["rdma"]["physical_state"]) == ("ACTIVE", "LinkUp"), port
    assert port["rdma"]["gid_index"] == 1, port
    with open(os.path.join(ROOT, "tests", "fixtures", "rdma", "hw_counters", "rxe.txt")) as f:
        rxe_names = {line.split()[0] for line in f if line.strip()}
    before = port["counters"]
    assert set(before["rdma"]) == rxe_names, sorted(before["rdma"])
    # Under 10 % loss the loss events move, and RetransmitsRising holds
    # (advisory: the port stays healthy).
    after = rxe_port("ports-after")["counters"]
    moved = {name: int(after["rdma"][name]) - int(before["rdma"].get(name, 0))
             for name in after["rdma"] if after["rdma"][name] != before["rdma"].get(name)}
    events = {name: int(after["transport_events"][name]) -
              int(before["transport_events"].get(name, 0))
              for name in after["transport_events"]}
    print(f"rxe counters moved under 10 % loss on node a: {moved}; events: {events}")
    loss = ("out_of_sequence", "duplicate_request", "sequence_error_nak", "retry")
    assert sum(events.get(e, 0) for e in loss) > 0, (moved, events)
    # The lossy run's own result lists the counters that moved while it
    # ran, read from both nodes' rocenetd at its start and end: the loss
    # events among them.
    counters = lossy["counters"]
    print(f"counters that moved during the lossy run: {counters.get('changes')}")
    assert counters["nodes_read"] == 2 and not counters.get("unread"), counters
    during = {(c["node"], c["counter"]): int(c["increase"]) for c in counters["changes"]}
    assert any(counter == f"transport.{e}" and n > 0 for (_, counter), n in during.items()
               for e in loss), during
    health = guest_json(ra, "health-after")
    conditions = [c for p in health["ports"] for c in p.get("conditions", [])]
    rising = [c for c in conditions if c["type"] == "RetransmitsRising"]
    assert rising and rising[0]["advisory"], conditions
