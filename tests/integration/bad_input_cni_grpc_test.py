# SPDX-License-Identifier: Apache-2.0
"""The bad-input catalogue, CNI and gRPC: bad CNI invocations and bad gRPC
requests thrown at the real rocenet (CNI) plugin and rocenetd's gRPC API on a
simulated fabric. Each case is its own test; each asserts the exact error
class the plugin or the daemon reports, that the network state of every
namespace of the fabric (links, addresses, routes, rules) is byte-for-byte
what it was before, and that the daemon's attachment journal is unchanged.

The set-up is that of bad_input_lldp_test.py (fixtures in conftest.py):
lldpd stopped, so0 and so1 addressed from a hand-written frame each, so that
every case runs against a node whose ports are configured.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import pytest

from bad_input_support import all_namespaces_state, assert_unchanged
from harness import binary

# ---------------------------------------------------------------------------
# CNI invocations (beyond cni_faults_test.py's): exec'd as Multus does.
# ---------------------------------------------------------------------------

def _conf(**extra):
    """A marker for "the good configuration, with these keys changed"
    (None removes a key); resolved against the running daemon's socket."""
    return ("conf", extra)


DROP = None
NODE_NETNS = object()  # the node's own network namespace, by its /run/netns path
DEEP = 100_000  # levels of brackets in the deeply nested value

# (id, command, configuration (a string is sent as is), environment
#  overrides (None unsets), expected CNI code, a fragment of msg)
CNI_CASES = [
    ("stdin-json-array", "ADD", "[1, 2]", {}, 6, "got array"),
    ("stdin-json-string", "ADD", '"rocenet"', {}, 6, "got string"),
    ("stdin-json-null", "ADD", "null", {}, 6, "got null"),
    ("stdin-trailing-garbage", "ADD", '{"cniVersion": "1.0.0"} x', {}, 6, "invalid JSON"),
    ("stdin-invalid-utf8", "ADD", b'{"cniVersion": "1.0.0", "name": "\xff\xfe"}', {}, 6,
     "invalid JSON"),
    ("stdin-nul-bytes", "ADD", b"\x00" * 64, {}, 6, "invalid JSON"),
    ("stdin-8mib-garbage", "ADD", "x" * (8 << 20), {}, 6, "invalid JSON"),
    ("stdin-deeply-nested-value", "ADD",
     '{"cniVersion":"1.0.0","name":"n","type":"rocenet","mtu":' + "[" * DEEP + "]" * DEEP + "}",
     {}, 6, "nested deeper than"),
    ("number-overflows-double", "ADD", '{"cniVersion":"1.0.0","name":"n","type":"rocenet",'
     '"mtu":1e400}', {}, 6, "1e400"),
    ("cniVersion-number", "ADD", _conf(cniVersion=1.0), {}, 7, "cniVersion"),
    ("cniVersion-future", "ADD", _conf(cniVersion="2.0.0"), {}, 1, "2.0.0"),
    ("cniVersion-empty", "ADD", _conf(cniVersion=""), {}, 1, "cniVersion"),
    ("name-number", "ADD", _conf(name=42), {}, 7, "name"),
    ("name-bad-characters", "ADD", _conf(name="ai net/1"), {}, 7, "name"),
    ("type-missing", "ADD", _conf(type=DROP), {}, 7, "type"),
    ("type-empty", "ADD", _conf(type=""), {}, 7, "type"),
    ("socket-relative", "ADD", _conf(socket="run/rocenetd.sock"), {}, 7, "socket"),
    ("socket-longer-than-sun-path", "ADD", _conf(socket="/" + "s" * 120), {}, 7, "socket"),
    ("timeout-negative", "ADD", _conf(timeout="-1s"), {}, 7, "timeout"),
    ("timeout-above-maximum", "ADD", _conf(timeout="11m"), {}, 7, "timeout"),
    ("timeout-number", "ADD", _conf(timeout=10), {}, 7, "timeout"),
    ("mtu-negative", "ADD", _conf(mtu=-1), {}, 7, "mtu"),
    ("mtu-above-65535", "ADD", _conf(mtu=65536), {}, 7, "mtu"),
    ("mtu-fraction", "ADD", _conf(mtu=1500.5), {}, 7, "mtu"),
    ("mtu-boolean", "ADD", _conf(mtu=True), {}, 7, "mtu"),
    ("mode-number", "ADD", _conf(mode=3), {}, 7, "mode"),
    ("deviceID-number", "ADD", _conf(deviceID=8), {}, 7, "deviceID"),
    ("deviceID-path-traversal", "ADD", _conf(deviceID="../../../sys/class/net/so0"), {}, 7,
     "../../../sys/class/net/so0"),
    ("runtimeConfig-not-object", "ADD", _conf(runtimeConfig=["deviceID"]), {}, 7,
     "runtimeConfig"),
    ("routes-requested", "ADD", _conf(routes=[{"dst": "0.0.0.0/0"}]), {}, 2, "routes"),
    ("prevResult-not-object", "ADD", _conf(prevResult="ok"), {}, 7, "prevResult"),
    ("check-without-prevResult", "CHECK", _conf(), {}, 7, "prevResult"),
    ("status-needs-1.1.0", "STATUS", _conf(cniVersion="1.0.0"), {}, 1, "STATUS"),
    ("gc-attachments-not-array", "GC", _conf(cniVersion="1.1.0",
                                             **{"cni.dev/valid-attachments": "all"}), {}, 7,
     "cni.dev/valid-attachments"),
    ("command-empty", "ADD", _conf(), {"CNI_COMMAND": ""}, 4, "CNI_COMMAND"),
    ("command-lowercase", "ADD", _conf(), {"CNI_COMMAND": "add"}, 4, "CNI_COMMAND"),
    ("command-unset", "ADD", _conf(), {"CNI_COMMAND": None}, 4, "CNI_COMMAND"),
    ("ifname-dot", "ADD", _conf(), {"CNI_IFNAME": "."}, 4, "CNI_IFNAME"),
    ("ifname-dot-dot", "ADD", _conf(), {"CNI_IFNAME": ".."}, 4, "CNI_IFNAME"),
    ("ifname-space", "ADD", _conf(), {"CNI_IFNAME": "net 1"}, 4, "CNI_IFNAME"),
    ("ifname-colon", "ADD", _conf(), {"CNI_IFNAME": "net:1"}, 4, "CNI_IFNAME"),
    ("ifname-unset", "ADD", _conf(), {"CNI_IFNAME": None}, 4, "CNI_IFNAME"),
    ("del-ifname-too-long", "DEL", _conf(), {"CNI_IFNAME": "n" * 16}, 4, "CNI_IFNAME"),
    ("containerid-unset", "ADD", _conf(), {"CNI_CONTAINERID": None}, 4, "CNI_CONTAINERID"),
    # Passed on by the plugin; rocenetd refuses it (INVALID_ARGUMENT -> 4).
    ("containerid-300-chars", "ADD", _conf(), {"CNI_CONTAINERID": "c" * 300}, 4,
     "container id"),
    ("netns-unset-for-add", "ADD", _conf(), {"CNI_NETNS": None}, 4, "CNI_NETNS"),
    ("netns-dot-dot", "ADD", _conf(), {"CNI_NETNS": "/run/netns/../../etc"}, 4, "netns"),
    ("netns-regular-file", "ADD", _conf(), {"CNI_NETNS": "/etc/hostname"}, 4, "netns"),
    ("netns-the-node-itself", "ADD", _conf(), {"CNI_NETNS": NODE_NETNS}, 4,
     "is the node's own network namespace, not a pod's"),
    ("cni-args-without-equals", "ADD", _conf(), {"CNI_ARGS": "K8S_POD_NAME"}, 4, "CNI_ARGS"),
    ("cni-args-unknown-key", "ADD", _conf(), {"CNI_ARGS": "FOO=bar"}, 4, "FOO"),
]


def resolve_conf(conf, daemon) -> str | bytes:
    if isinstance(conf, (str, bytes)):
        return conf
    good = {"cniVersion": "1.0.0", "name": "ai-net", "type": "rocenet", "socket": daemon.socket,
            "anyFreePort": True}
    for key, value in conf[1].items():
        if value is DROP:
            good.pop(key, None)
        else:
            good[key] = value
    return json.dumps(good)


@pytest.mark.parametrize("command,conf,env,code,fragment",
                         [c[1:] for c in CNI_CASES], ids=[c[0] for c in CNI_CASES])
def test_bad_cni_invocation(bad_input_fabric, bad_input_daemon, bad_input_baseline, api, command,
                            conf, env, code, fragment):
    fabric, daemon = bad_input_fabric, bad_input_daemon
    environment = {
        "CNI_COMMAND": command, "CNI_CONTAINERID": "bad-input", "CNI_IFNAME": "net1",
        "CNI_NETNS": f"/run/netns/{fabric.name}-pod", "CNI_PATH": "/usr/lib/cni",
        "CNI_ARGS": "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=bad-input",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    }
    for key, value in env.items():
        if value is None:
            environment.pop(key, None)
        elif value is NODE_NETNS:
            environment[key] = f"/run/netns/{fabric.node_netns}"
        else:
            environment[key] = value
    stdin = resolve_conf(conf, daemon)
    stdin = stdin.encode() if isinstance(stdin, str) else stdin
    before = all_namespaces_state(fabric)
    journal = list_attachments(api)
    cp = subprocess.run([binary("rocenet")], input=stdin, env=environment, capture_output=True,
                        timeout=30)
    assert cp.returncode == 1, (cp.returncode, cp.stdout, cp.stderr)
    out = json.loads(cp.stdout)
    assert out["code"] == code, out
    assert fragment in out["msg"], out
    assert_unchanged(fabric, before)
    assert list_attachments(api) == journal


# ---------------------------------------------------------------------------
# gRPC requests, straight to the daemon's socket.
# ---------------------------------------------------------------------------

PROTOS = ["rocenet/v1/ports.proto", "rocenet/v1/health.proto", "rocenet/v1/addressing.proto",
          "rocenet/v1/attach.proto"]


class Api:
    """The rocenet.v1 messages compiled for Python at test time, and a channel
    to the daemon that sends them, or raw bytes."""

    def __init__(self, socket_path: str):
        grpc = pytest.importorskip("grpc")
        self.grpc = grpc
        self.dir = tempfile.mkdtemp(prefix="rocenet-pb2-")
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "proto")
        subprocess.run(["protoc", f"-I{root}", f"--python_out={self.dir}", *PROTOS], check=True)
        sys.path.insert(0, self.dir)
        from rocenet.v1 import addressing_pb2, attach_pb2, health_pb2, ports_pb2
        self.pb = {"ports": ports_pb2, "health": health_pb2, "addressing": addressing_pb2,
                   "attach": attach_pb2}
        self.channel = grpc.insecure_channel(f"unix:{socket_path}")

    def call(self, method: str, request: bytes):
        """Sends serialized `request` to `method`; the grpc.StatusCode that came back."""
        stub = self.channel.unary_unary(method, request_serializer=lambda b: b,
                                        response_deserializer=lambda b: b)
        try:
            stub(request, timeout=10)
        except self.grpc.RpcError as error:
            return error.code()
        return self.grpc.StatusCode.OK

    def close(self):
        self.channel.close()
        sys.path.remove(self.dir)
        subprocess.run(["rm", "-rf", self.dir], check=False)


@pytest.fixture(scope="module")
def api(bad_input_daemon):
    a = Api(bad_input_daemon.socket)
    yield a
    a.close()


def msg(module: str, name: str, **fields):
    """A request, serialized when the test runs (the classes exist only then)."""
    return ("msg", module, name, fields)


def raw(data: bytes):
    return ("raw", data)


NETNS = "/run/netns/{fabric}-pod"

GRPC_CASES = [
    ("getport-empty", "/rocenet.v1.PortDiscovery/GetPort", msg("ports", "GetPortRequest"),
     "INVALID_ARGUMENT"),
    ("getport-unknown", "/rocenet.v1.PortDiscovery/GetPort",
     msg("ports", "GetPortRequest", port="so99"), "NOT_FOUND"),
    ("getport-64k-name", "/rocenet.v1.PortDiscovery/GetPort",
     msg("ports", "GetPortRequest", port="p" * 65536), "INVALID_ARGUMENT"),
    ("neighbors-unknown-port", "/rocenet.v1.PortDiscovery/ListNeighbors",
     msg("ports", "ListNeighborsRequest", port="0000:ff:00.0-p1"), "NOT_FOUND"),
    ("porthealth-empty", "/rocenet.v1.Health/GetPortHealth",
     msg("health", "GetPortHealthRequest"), "INVALID_ARGUMENT"),
    ("porthealth-unknown", "/rocenet.v1.Health/GetPortHealth",
     msg("health", "GetPortHealthRequest", port="so99"), "NOT_FOUND"),
    ("getplan-unknown", "/rocenet.v1.Addressing/GetPlan",
     msg("addressing", "GetPlanRequest", port="so99"), "NOT_FOUND"),
    ("attach-empty", "/rocenet.v1.Attachments/Attach", msg("attach", "AttachRequest"),
     "INVALID_ARGUMENT"),
    ("attach-containerid-leading-dash", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="-x", ifname="net1", netns=NETNS),
     "INVALID_ARGUMENT"),
    ("attach-containerid-300-chars", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="c" * 300, ifname="net1", netns=NETNS),
     "INVALID_ARGUMENT"),
    ("attach-containerid-nul", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="ab\0cd", ifname="net1", netns=NETNS),
     "INVALID_ARGUMENT"),
    ("attach-ifname-slash", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="c1", ifname="a/b", netns=NETNS),
     "INVALID_ARGUMENT"),
    ("attach-ifname-16-bytes", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="c1", ifname="n" * 16, netns=NETNS),
     "INVALID_ARGUMENT"),
    ("attach-netns-outside-netns-dirs", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="c1", ifname="net1", netns="/tmp/ns"),
     "INVALID_ARGUMENT"),
    ("attach-netns-dot-dot", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="c1", ifname="net1",
         netns="/run/netns/../netns/x"), "INVALID_ARGUMENT"),
    ("attach-netns-of-the-node", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="c1", ifname="net1", netns="/run/netns/{node}"),
     "INVALID_ARGUMENT"),
    ("attach-netns-missing", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="c1", ifname="net1",
         netns="/run/netns/bi-does-not-exist"), "NOT_FOUND"),
    ("attach-unknown-device", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="c1", ifname="net1", netns=NETNS,
         device_id="0000:ff:00.0-p9"), "NOT_FOUND"),
    ("attach-bad-mode", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="c1", ifname="net1", netns=NETNS, mode="L4"),
     "INVALID_ARGUMENT"),
    ("attach-mtu-10", "/rocenet.v1.Attachments/Attach",
     msg("attach", "AttachRequest", container_id="c1", ifname="net1", netns=NETNS, mtu=10),
     "INVALID_ARGUMENT"),
    ("getplan-empty", "/rocenet.v1.Addressing/GetPlan", msg("addressing", "GetPlanRequest"),
     "INVALID_ARGUMENT"),
    ("check-unknown-attachment", "/rocenet.v1.Attachments/Check",
     msg("attach", "CheckRequest", container_id="nobody", ifname="net1", netns=NETNS),
     "NOT_FOUND"),
    # Bytes that are not the message the method takes.
    ("listports-garbage-bytes", "/rocenet.v1.PortDiscovery/ListPorts", raw(b"\xff" * 32),
     "INTERNAL"),
    # A field of the wrong wire type is an unknown field: the port is empty.
    ("getport-wrong-wire-type", "/rocenet.v1.PortDiscovery/GetPort", raw(b"\x0d\x01\x02\x03\x04"),
     "INVALID_ARGUMENT"),
    ("getport-invalid-utf8-string", "/rocenet.v1.PortDiscovery/GetPort", raw(b"\x0a\x02\xc3\x28"),
     "INTERNAL"),
    ("attach-length-past-end", "/rocenet.v1.Attachments/Attach", raw(b"\x0a\x7fabc"), "INTERNAL"),
    ("unknown-method", "/rocenet.v1.PortDiscovery/DeletePorts", raw(b""), "UNIMPLEMENTED"),
    ("unknown-service", "/rocenet.v2.Ports/List", raw(b""), "UNIMPLEMENTED"),
    ("request-over-4mib", "/rocenet.v1.PortDiscovery/GetPort",
     msg("ports", "GetPortRequest", port="p" * (5 << 20)), "RESOURCE_EXHAUSTED"),
]


def list_attachments(api) -> bytes:
    stub = api.channel.unary_unary("/rocenet.v1.Attachments/List",
                                   request_serializer=lambda b: b,
                                   response_deserializer=lambda b: b)
    return stub(b"", timeout=10)


@pytest.mark.parametrize("method,request_,code", [c[1:] for c in GRPC_CASES],
                         ids=[c[0] for c in GRPC_CASES])
def test_bad_grpc_request(bad_input_fabric, bad_input_daemon, bad_input_baseline, api, method,
                          request_, code):
    fabric = bad_input_fabric
    if request_[0] == "msg":
        _, module, name, fields = request_
        fields = {k: (v.format(fabric=fabric.name, node=fabric.node_netns)
                      if isinstance(v, str) else v)
                  for k, v in fields.items()}
        data = getattr(api.pb[module], name)(**fields).SerializeToString()
    else:
        data = request_[1]
    before = all_namespaces_state(fabric)
    journal = list_attachments(api)
    assert api.call(method, data).name == code
    assert_unchanged(fabric, before)
    assert list_attachments(api) == journal
    # The daemon still answers.
    assert api.call("/rocenet.v1.PortDiscovery/ListPorts", b"").name == "OK"
