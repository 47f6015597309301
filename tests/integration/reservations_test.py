# SPDX-License-Identifier: Apache-2.0
"""rocenet.v1.Reservations against the real rocenetd on a simulated fabric:
ports reserved for a claim's pods (as rocenet's DRA plugin does when kubelet
prepares the claim) reach those pods through the real CNI plugin exec'd as
Multus runs it, with no device id, only the pod's uid; other pods get other
ports; a reservation survives a restart of rocenetd and, once released,
frees its port. A reserved Gaudi port's HCL files are in the claim's
directory, follow a new LLDP address and go with the release."""

from __future__ import annotations

import json
import os
import subprocess

import grpc
import pytest

from harness import binary, metric_value, ready_daemon, wait_until

# Reserve, Release and List speak protobuf; the test has no generated code
# (nor the protobuf package), so the few messages are written and read by
# hand: fields are strings, repeated strings, one bool and one message.

# Claims' UIDs, as Kubernetes makes them: they name the HCL directories.
CLAIM_A = "0a6f3c2e-5d1b-4e8a-9c47-1f2e3d4c5b6a"
CLAIM_C = "0c6f3c2e-5d1b-4e8a-9c47-1f2e3d4c5b6c"
CLAIM_H = "0d6f3c2e-5d1b-4e8a-9c47-1f2e3d4c5b6d"


def _varint(n: int) -> bytes:
    out = b""
    while True:
        out += bytes([(n & 0x7F) | (0x80 if n >> 7 else 0)])
        n >>= 7
        if not n:
            return out


def _string(number: int, value: str) -> bytes:
    data = value.encode()
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _fields(data: bytes):
    """(number, value) of each field: int for varints, bytes otherwise."""
    i = 0
    while i < len(data):
        key, shift = 0, 0
        while True:
            b = data[i]
            i += 1
            key |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, shift = 0, 0
            while True:
                b = data[i]
                i += 1
                value |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
        elif wire == 2:
            length, shift = 0, 0
            while True:
                b = data[i]
                i += 1
                length |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
            value = data[i:i + length]
            i += length
        elif wire == 1:
            value, i = data[i:i + 8], i + 8
        elif wire == 5:
            value, i = data[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {wire}")
        yield number, value


def _reservation(data: bytes) -> dict:
    out = {"owner_uid": "", "owner": "", "pod_uids": [], "port_ids": [], "created": 0,
           "hcl_dir": "", "hcl_files": []}
    for number, value in _fields(data):
        if number == 1:
            out["owner_uid"] = value.decode()
        elif number == 2:
            out["owner"] = value.decode()
        elif number == 3:
            out["pod_uids"].append(value.decode())
        elif number == 4:
            out["port_ids"].append(value.decode())
        elif number == 5:
            out["created"] = dict(_fields(value)).get(1, 0)
        elif number == 6:
            out["hcl_dir"] = value.decode()
        elif number == 7:
            out["hcl_files"].append(value.decode())
    return out


class Reservations:
    """rocenet.v1.Reservations over rocenetd's unix socket."""

    def __init__(self, socket: str):
        # A channel of its own: one kept in gRPC's shared pool would still
        # hold the connection to a rocenetd that was stopped.
        self.channel = grpc.insecure_channel(f"unix:{socket}",
                                             options=[("grpc.use_local_subchannel_pool", 1)])

    def close(self) -> None:
        self.channel.close()

    def _call(self, method: str, request: bytes) -> bytes:
        return self.channel.unary_unary(f"/rocenet.v1.Reservations/{method}")(request, timeout=10)

    def reserve(self, owner_uid: str, owner: str, pods: list[str], ports: list[str]) -> dict:
        request = _string(1, owner_uid) + _string(2, owner)
        request += b"".join(_string(3, p) for p in pods) + b"".join(_string(4, p) for p in ports)
        return _reservation(self._call("Reserve", request))

    def release(self, owner_uid: str) -> dict:
        out = {"released": False, "port_ids": []}
        for number, value in _fields(self._call("Release", _string(1, owner_uid))):
            if number == 1:
                out["released"] = bool(value)
            elif number == 2:
                out["port_ids"].append(value.decode())
        return out

    def list(self) -> list[dict]:
        return [_reservation(value) for number, value in _fields(self._call("List", b""))
                if number == 1]


def ip_json(netns: str, *args: str):
    cp = subprocess.run(["ip", "-n", netns, "-j", *args], capture_output=True, text=True,
                        check=True)
    return json.loads(cp.stdout or "[]")


def cni(daemon, command: str, pod: str, uid: str, netns: str, device_id: str = "",
        any_free_port: bool = False):
    """The rocenet plugin as Multus runs it for pod `pod` (uid `uid`); a
    device id only when one is given, as Multus has none for a DRA claim;
    `anyFreePort` only when asked, as no shipped network sets it."""
    conf = {"cniVersion": "1.1.0", "name": "ai-net", "type": "rocenet", "socket": daemon.socket}
    if device_id:
        conf["deviceID"] = device_id
    if any_free_port:
        conf["anyFreePort"] = True
    env = {
        "CNI_COMMAND": command, "CNI_CONTAINERID": f"ctr-{pod}", "CNI_IFNAME": "net1",
        "CNI_NETNS": netns, "CNI_PATH": "/usr/lib/cni",
        "CNI_ARGS": f"IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME={pod};"
                    f"K8S_POD_UID={uid}",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    }
    cp = subprocess.run([binary("rocenet")], input=json.dumps(conf), env=env,
                        capture_output=True, text=True, timeout=30)
    return cp.returncode, json.loads(cp.stdout) if cp.stdout.strip() else {}


@pytest.fixture(scope="module")
def fabric(fabrics):
    return fabrics("rs", ports=3)


@pytest.fixture(scope="module")
def daemon(fabric):
    with ready_daemon(fabric, timeout=10) as d:
        yield d


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


def test_reserved_port_reaches_its_pod_and_no_other(fabric, daemon, pod):
    ports = {p["name"]: p for p in daemon.ports()}
    mac_of = {p["host_ifname"]: p["host_mac"] for p in fabric.ports}
    # Not the first port: the one any pod would get anyway proves nothing.
    reserved = fabric.ports[1]["host_ifname"]
    reserved_id = ports[reserved]["id"]
    api = Reservations(daemon.socket)

    got = api.reserve(CLAIM_A, "default/claim-a", ["uid-a"], [reserved_id])
    assert got["owner_uid"] == CLAIM_A and got["owner"] == "default/claim-a"
    assert got["pod_uids"] == ["uid-a"] and got["port_ids"] == [reserved_id]
    assert got["created"] > 0
    assert metric_value(daemon.metrics(), "rocenet_reserved_ports") == 1
    # Kubelet prepares a claim again after its own restart: the same answer.
    assert api.reserve(CLAIM_A, "default/claim-a", ["uid-a"], [reserved_id]) == got

    # Pod A, through Multus: no device id, only its uid.
    a, b, c = pod("a"), pod("b"), pod("c")
    rc, added = cni(daemon, "ADD", "pod-a", "uid-a", a)
    assert rc == 0, added
    assert added["interfaces"][0]["mac"] == mac_of[reserved]
    links = {link["ifname"]: link for link in ip_json(os.path.basename(a), "link", "show")}
    assert links["net1"]["address"] == mac_of[reserved]

    # Pod B has neither a reservation nor a device id: under Kubernetes it
    # asked for no port, and is refused, naming the fix, with nothing taken.
    attached_before = daemon.rocectl("attachments", "-o", "json", check=True).stdout
    rc, refused_b = cni(daemon, "ADD", "pod-b", "uid-b", b)
    assert rc == 1 and refused_b["code"] == 7, refused_b
    assert refused_b["msg"].startswith("deviceID: none given and no port reserved for pod "
                                       "default/pod-b (uid uid-b): ask for the port in the pod, "
                                       "with a limit of rocenet.io/scale-out-port"), refused_b
    assert "net1" not in {link["ifname"] for link in ip_json(os.path.basename(b), "link", "show")}
    assert daemon.rocectl("attachments", "-o", "json", check=True).stdout == attached_before
    # A network that allows any free port (a runtime without kubelet): another
    # port, never the reserved one.
    rc, other = cni(daemon, "ADD", "pod-b", "uid-b", b, any_free_port=True)
    assert rc == 0, other
    other_mac = other["interfaces"][0]["mac"]
    assert other_mac != mac_of[reserved]
    other_if = next(name for name, mac in mac_of.items() if mac == other_mac)
    other_id = ports[other_if]["id"]

    # B's port is B's: another claim cannot reserve it.
    with pytest.raises(grpc.RpcError) as refused:
        api.reserve(CLAIM_C, "default/claim-c", ["uid-c"], [other_id])
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert f"port {other_id} ({other_if}) is attached to pod default/pod-b (uid uid-b" in \
        refused.value.details()
    assert [r["owner_uid"] for r in api.list()] == [CLAIM_A]

    # rocenetd restarted: the reservation is still there, and still holds.
    before = api.list()
    api.close()
    daemon.stop()
    daemon.start()
    api = Reservations(daemon.socket)
    # gaudinet.json waits for the switch's next LLDP frame: until then the
    # port's plan is not ready, and HCL gets no address it cannot count on.
    wait_until(lambda: api.list() == before, 15, interval=0.2, what="the same reservations")
    reservations = json.loads(daemon.rocectl("reservations", "-o", "json", check=True).stdout)
    assert reservations["reservations"][0]["port_ids"] == [reserved_id]

    assert cni(daemon, "DEL", "pod-a", "uid-a", a)[0] == 0
    rc, err = cni(daemon, "ADD", "pod-c", "uid-c", c, device_id=reserved_id)
    assert rc != 0
    assert (f"port {reserved_id} ({reserved}) is reserved by owner default/claim-a "
            f"(uid {CLAIM_A}), not for pod default/pod-c (uid uid-c)") in err["msg"], err
    assert "net1" not in {link["ifname"] for link in ip_json(os.path.basename(c), "link", "show")}

    assert api.release(CLAIM_A) == {"released": True, "port_ids": [reserved_id]}
    assert api.release(CLAIM_A) == {"released": False, "port_ids": []}
    assert api.list() == []
    assert metric_value(daemon.metrics(), "rocenet_reserved_ports") == 0

    # The port came home with A's DEL; once addressed again, C may have it.
    def add_c():
        rc, out = cni(daemon, "ADD", "pod-c", "uid-c", c, device_id=reserved_id)
        return out if rc == 0 else None

    taken = wait_until(add_c, 15, interval=0.2, what="pod C to take the released port")
    assert taken["interfaces"][0]["mac"] == mac_of[reserved]
    for name, netns, uid in (("pod-b", b, "uid-b"), ("pod-c", c, "uid-c")):
        assert cni(daemon, "DEL", name, uid, netns)[0] == 0


def plans_by_id(daemon) -> dict:
    out = json.loads(daemon.rocectl("addressing", "-o", "json", check=True).stdout)
    return {p["port_id"]: p for p in out["plans"]}


def gaudinet(path: str) -> list[dict]:
    with open(os.path.join(path, "gaudinet.json")) as f:
        return json.load(f)["NIC_NET_CONFIG"]


def test_a_reserved_gaudi_ports_hcl_files_follow_it(fabric, daemon):
    """The claim's directory holds gaudinet.json with exactly the reserved
    port (what the DRA plugin mounts into the claim's containers), a new
    address from the switch is rewritten into it, and Release removes it."""
    port = fabric.ports[2]
    ifname = port["host_ifname"]
    port_id = {p["name"]: p["id"] for p in daemon.ports()}[ifname]
    api = Reservations(daemon.socket)
    want_dir = os.path.join(daemon.workdir, "hcl", f"claim-{CLAIM_H}")
    daemon.wait_ready(15)
    try:
        got = api.reserve(CLAIM_H, "default/claim-h", ["uid-h"], [port_id])
        assert got["hcl_dir"] == want_dir
        assert got["hcl_files"] == ["gaudinet.json", "macAddrInfo.json"]
        assert api.list()[0]["hcl_dir"] == want_dir
        # The plan's address, or while it waits for LLDP (the port just came
        # home from pod C) the one kept on the port.
        plan = plans_by_id(daemon)[port_id]
        local = plan["local"] or plan["applied"]["local"]
        entries = gaudinet(want_dir)
        assert [(e["NIC_MAC"], e["NIC_IP"]) for e in entries] == \
            [(port["host_mac"].lower(), local.split("/")[0])]
        assert oct(os.stat(want_dir).st_mode & 0o777) == "0o755"
        assert oct(os.stat(os.path.join(want_dir, "gaudinet.json")).st_mode & 0o777) == "0o644"
        # The device plugin's name for the same file, when it has one.
        with open(os.path.join(want_dir, "macAddrInfo.json")) as f:
            assert port["host_mac"].lower() in json.load(f)["MAC_ADDR_INFO"][0]["MAC_ADDR_LIST"]

        # The switch gives the port another address: rewritten in place.
        fabric.set_description(2, "no-alert 10.200.23.2/30")
        wait_until(lambda: [e["NIC_IP"] for e in gaudinet(want_dir)] == ["10.200.23.1"], 10,
                   interval=0.1, what="gaudinet.json rewritten with the new address")
        assert gaudinet(want_dir)[0]["NIC_MAC"] == port["host_mac"].lower()

        assert api.release(CLAIM_H) == {"released": True, "port_ids": [port_id]}
        assert not os.path.exists(want_dir)
        assert api.list() == []
    finally:
        api.close()
        fabric.set_description(2, port["description"])
    wait_until(lambda: daemon.ready(), 15, what="node ready again")
