# SPDX-License-Identifier: Apache-2.0
"""Who may use rocenetd: peer credentials on the unix socket (root changes
the node, a read group only reads, everyone else is refused), the TLS-only
TCP listener for remote admin, and the bounds on requests."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import tempfile

import pytest

from harness import HERE, Daemon, binary, wait_until

READ_GID = 4242  # a group id no account needs to exist for
NOBODY = 65534
PROBE = os.path.join(HERE, "grpc_probe.py")


@pytest.fixture(scope="module")
def fabric(fabrics):
    return fabrics("sc", ports=2)


def open_workdir() -> str:
    # Unprivileged callers must be able to reach the socket's directory.
    workdir = tempfile.mkdtemp(prefix="rocenetd-sc-")
    os.chmod(workdir, 0o755)
    return workdir


@pytest.fixture(scope="module")
def daemon(fabric):
    d = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}",
                                   f"--read-group={READ_GID}"], workdir=open_workdir())
    d.start()
    yield d
    d.cleanup()


def as_user(daemon: Daemon, *args: str, groups: str | None = None, gid: int = NOBODY):
    group_args = [f"--groups={groups}"] if groups else ["--clear-groups"]
    return subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={gid}", *group_args,
                           *daemon.rocectl_argv(*args)], capture_output=True, text=True,
                          timeout=30)


def probe(netns: str | None, target: str, method: str, *args: str) -> dict:
    prefix = ["ip", "netns", "exec", netns] if netns else []
    cp = subprocess.run([*prefix, "/usr/bin/python3", PROBE, target, method, *args],
                        capture_output=True, text=True, timeout=30)
    assert cp.returncode == 0, cp.stderr
    return json.loads(cp.stdout)


def test_socket_belongs_to_root_and_the_read_group(daemon):
    st = os.stat(daemon.socket)
    assert st.st_mode & 0o777 == 0o660
    assert (st.st_uid, st.st_gid) == (0, READ_GID)
    dst = os.stat(os.path.dirname(daemon.socket))
    assert dst.st_mode & 0o777 == 0o750
    assert dst.st_gid == READ_GID


def test_read_group_member_reads_ports(daemon, fabric):
    cp = as_user(daemon, "ports", "-o", "json", groups=str(READ_GID))
    assert cp.returncode == 0, cp.stderr
    names = {p["name"] for p in json.loads(cp.stdout)["ports"]}
    assert names == {p["host_ifname"] for p in fabric.ports}
    # The read group as the primary group works as well.
    cp = as_user(daemon, "health", gid=READ_GID)
    assert cp.returncode == 0, cp.stderr


def test_read_group_member_may_not_reconcile(daemon):
    cp = as_user(daemon, "reconcile", groups=str(READ_GID))
    assert cp.returncode != 0
    assert "rocenet.v1.Addressing/Reconcile" in cp.stderr, cp.stderr
    assert f"uid {NOBODY}" in cp.stderr, cp.stderr
    assert "root" in cp.stderr, cp.stderr


def test_root_may_reconcile(daemon):
    cp = daemon.rocectl("reconcile")
    assert cp.returncode == 0, cp.stderr


def test_user_outside_the_read_group_is_refused(daemon):
    cp = as_user(daemon, "ports")
    assert cp.returncode == 3, cp.stderr
    assert "permission denied" in cp.stderr.lower()


def test_daemon_refuses_a_user_the_socket_lets_in(fabric):
    # Without a read group the socket is root's only; a caller that gets in
    # anyway (here: the socket opened by hand) is still refused by uid.
    d = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}"], workdir=open_workdir())
    d.start()
    try:
        os.chmod(os.path.dirname(d.socket), 0o755)
        os.chmod(d.socket, 0o666)
        cp = as_user(d, "ports")
        assert cp.returncode != 0
        assert "rocenet.v1.PortDiscovery/ListPorts" in cp.stderr, cp.stderr
        assert f"uid {NOBODY}" in cp.stderr, cp.stderr
        assert "no read group" in cp.stderr, cp.stderr
    finally:
        d.cleanup()


def field(number: int, payload: bytes) -> str:
    """One length-delimited protobuf field, hex."""
    n, varint = len(payload), b""
    while True:
        byte = n & 0x7F
        n >>= 7
        varint += bytes([byte | (0x80 if n else 0)])
        if not n:
            break
    return (bytes([number << 3 | 2]) + varint + payload).hex()


def test_long_strings_and_big_requests_are_refused(daemon):
    target = f"unix:{daemon.socket}"
    # AttachRequest.container_id (field 1) of 5000 bytes.
    out = probe(None, target, "/rocenet.v1.Attachments/Attach", "--hex", field(1, b"c" * 5000))
    assert out["code"] == "INVALID_ARGUMENT", out
    assert "container_id" in out["message"], out
    # DetachRequest.ifname (field 2): checked too, although the handler never reads it first.
    out = probe(None, target, "/rocenet.v1.Attachments/Detach", "--hex", field(2, b"i" * 5000))
    assert out["code"] == "INVALID_ARGUMENT", out
    assert "ifname" in out["message"], out
    # A request over the message size limit (1 MiB) is refused by gRPC.
    out = probe(None, target, "/rocenet.v1.PortDiscovery/GetPort",
                "--string-field", f"1:{1 << 20}")
    assert out["code"] == "RESOURCE_EXHAUSTED", out


def test_changing_calls_are_rate_limited(fabric):
    workdir = open_workdir()
    config = os.path.join(workdir, "rocenetd.yaml")
    with open(config, "w") as f:
        f.write("limits:\n  mutating_rpcs_per_second: 0.01\n  mutating_rpc_burst: 2\n")
    d = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}", f"--config={config}"],
               workdir=workdir)
    d.start()
    try:
        assert d.rocectl("reconcile").returncode == 0
        assert d.rocectl("reconcile").returncode == 0
        cp = d.rocectl("reconcile")
        assert cp.returncode != 0
        assert "rocenet.v1.Addressing/Reconcile" in cp.stderr, cp.stderr
        assert "try again later" in cp.stderr, cp.stderr
        # Reads are not limited.
        for _ in range(5):
            assert d.rocectl("ports").returncode == 0
    finally:
        d.cleanup()


def test_a_flood_of_connections_leaves_descriptors_for_the_daemons_own_work(fabric):
    """Idle clients that hold connections open cannot take the descriptors an
    attach needs (the pod's namespace, netlink, the journal's new file)."""
    grpc = pytest.importorskip("grpc")
    d = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}"], workdir=open_workdir())
    unlimited = d.command
    d.command = lambda: ["prlimit", "--nofile=256:256", *unlimited()]
    pod = f"{fabric.name}-flood"
    subprocess.run(["ip", "netns", "add", pod], check=True)
    flood: list[socket.socket] = []
    channel = None
    try:
        d.start()
        wait_until(lambda: json.loads(d.rocectl("health", "-o", "json").stdout or "{}")
                   .get("ready"), 10, what="node ready")
        channel = grpc.insecure_channel(f"unix:{d.socket}")

        def call(method: str, request: bytes) -> bytes:
            return channel.unary_unary(method, request_serializer=lambda b: b,
                                       response_deserializer=lambda b: b)(request, timeout=10)

        call("/rocenet.v1.PortDiscovery/ListPorts", b"")  # connected before the flood
        for _ in range(400):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(d.socket)
            flood.append(s)
        # The daemon has taken in the whole queue once it refuses (or, if it
        # did not keep a reserve, once its descriptors run out).
        wait_until(lambda: "connection(s) refused so far" in d.run_log() or
                   len(os.listdir(f"/proc/{d.proc.pid}/fd")) >= 250, 10,
                   what="the daemon to take in the flood")
        # AttachRequest: container_id, netns, ifname, cni_version; any free
        # port (field 10, a varint: true).
        attach = bytes.fromhex(field(1, b"flood") + field(2, f"/run/netns/{pod}".encode()) +
                               field(3, b"net1") + field(5, b"1.1.0") + "5001")
        call("/rocenet.v1.Attachments/Attach", attach)
        assert "connection(s) refused so far" in d.run_log()
        links = json.loads(subprocess.run(["ip", "-n", pod, "-j", "link", "show", "net1"],
                                          capture_output=True, text=True, check=True).stdout)
        assert links and "UP" in links[0]["flags"], links
        call("/rocenet.v1.Attachments/Detach", bytes.fromhex(field(1, b"flood") +
                                                               field(2, b"net1")))
        for s in flood:
            s.close()
        flood.clear()
        # Once the flood is gone, new connections are served again.
        wait_until(lambda: d.rocectl("ports").returncode == 0, 10, what="rocectl ports")
        assert d.proc.poll() is None
    finally:
        for s in flood:
            s.close()
        if channel is not None:
            channel.close()
        d.cleanup()
        subprocess.run(["ip", "netns", "del", pod], check=False)


# --- TLS listener ---------------------------------------------------------

def openssl(*args: str, cwd: str) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def pki():
    """A throwaway CA, a server certificate for 127.0.0.1 and a client
    certificate, all signed by the CA."""
    d = tempfile.mkdtemp(prefix="rocenet-pki-")
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *key, "-keyout", "ca.key", "-out", "ca.crt", "-days", "1",
            "-subj", "/CN=rocenet test CA", cwd=d)
    for name, ext in (("server", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"),
                      ("client", "extendedKeyUsage=clientAuth\n")):
        openssl("req", *key, "-keyout", f"{name}.key", "-out", f"{name}.csr",
                "-subj", f"/CN=rocenet-{name}", cwd=d)
        with open(os.path.join(d, f"{name}.ext"), "w") as f:
            f.write(ext)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", f"{name}.crt", "-days", "1",
                "-extfile", f"{name}.ext", cwd=d)
    # A client certificate from no CA the daemon knows.
    openssl("req", "-x509", *key, "-keyout", "rogue.key", "-out", "rogue.crt", "-days", "1",
            "-subj", "/CN=rocenet-rogue", cwd=d)
    yield {n: os.path.join(d, n) for n in ("ca.crt", "server.crt", "server.key", "client.crt",
                                           "client.key", "rogue.crt", "rogue.key")}
    subprocess.run(["rm", "-rf", d], check=True)


def tls_daemon(fabric, pki, mode: str) -> tuple[Daemon, str]:
    d = Daemon(fabric.node_netns, [
        f"--sysfs-root={fabric.sysfs_root}", "--tls-address=127.0.0.1:0",
        f"--tls-cert={pki['server.crt']}", f"--tls-key={pki['server.key']}",
        f"--tls-client-ca={pki['ca.crt']}", f"--tls-client-cert={mode}"], workdir=open_workdir())
    d.start()
    m = wait_until(lambda: re.search(r"serving gRPC with TLS on (127\.0\.0\.1:\d+)", d.log()),
                   10, what="the TLS listener")
    return d, m.group(1)


LIST = "/rocenet.v1.PortDiscovery/ListPorts"
RECONCILE = "/rocenet.v1.Addressing/Reconcile"


def test_tls_listener_refuses_plaintext_and_serves_tls(fabric, pki):
    d, target = tls_daemon(fabric, pki, "optional")
    try:
        ns = fabric.node_netns
        plain = probe(ns, target, LIST)
        assert plain["code"] == "UNAVAILABLE", plain
        ok = probe(ns, target, LIST, "--ca", pki["ca.crt"])
        assert ok["code"] == "OK" and ok["bytes"] > 0, ok
        # Without a client certificate: read-only.
        denied = probe(ns, target, RECONCILE, "--ca", pki["ca.crt"])
        assert denied["code"] == "PERMISSION_DENIED", denied
        assert "client certificate" in denied["message"], denied
        # With one the CA signed: everything.
        admin = probe(ns, target, RECONCILE, "--ca", pki["ca.crt"], "--cert", pki["client.crt"],
                      "--key", pki["client.key"])
        assert admin["code"] == "OK", admin
        # A certificate the CA did not sign is not accepted at all.
        # rocectl speaks to the TLS listener too.
        def rocectl_tls(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run(["ip", "netns", "exec", ns, binary("rocectl"), "--server", target,
                                   "--tls-ca", pki["ca.crt"], *args], capture_output=True,
                                  text=True, timeout=30)
        cp = rocectl_tls("ports", "-o", "json")
        assert cp.returncode == 0, cp.stderr
        assert {p["name"] for p in json.loads(cp.stdout)["ports"]} == {"so0", "so1"}
        cp = rocectl_tls("reconcile")
        assert cp.returncode != 0 and "client certificate" in cp.stderr, cp.stderr
        cp = rocectl_tls("--tls-cert", pki["client.crt"], "--tls-key", pki["client.key"],
                         "reconcile")
        assert cp.returncode == 0, cp.stderr
        rogue = probe(ns, target, RECONCILE, "--ca", pki["ca.crt"], "--cert", pki["rogue.crt"],
                      "--key", pki["rogue.key"])
        assert rogue["code"] == "UNAVAILABLE", rogue
        assert "serving gRPC on unix:" in d.log()
    finally:
        d.cleanup()


def test_tls_listener_requiring_client_certificates(fabric, pki):
    d, target = tls_daemon(fabric, pki, "require")
    try:
        ns = fabric.node_netns
        anonymous = probe(ns, target, LIST, "--ca", pki["ca.crt"])
        assert anonymous["code"] == "UNAVAILABLE", anonymous
        admin = probe(ns, target, LIST, "--ca", pki["ca.crt"], "--cert", pki["client.crt"],
                      "--key", pki["client.key"])
        assert admin["code"] == "OK", admin
    finally:
        d.cleanup()


def test_tls_listener_without_certificate_or_key_refuses_to_start(fabric, pki):
    cases = [
        (["--tls-address=127.0.0.1:0"], "--tls-cert"),
        (["--tls-address=127.0.0.1:0", f"--tls-cert={pki['server.crt']}"], "--tls-key"),
        (["--tls-address=127.0.0.1:0", f"--tls-cert={pki['server.crt']}",
          "--tls-key=/nonexistent/server.key"], "/nonexistent/server.key"),
        (["--tls-address=127.0.0.1:0", f"--tls-cert={pki['server.crt']}",
          f"--tls-key={pki['server.key']}", "--tls-client-cert=require"], "--tls-client-ca"),
        (["--read-group=no-such-group-sc"], "no-such-group-sc"),
    ]
    for args, fragment in cases:
        d = Daemon(fabric.node_netns, [f"--sysfs-root={fabric.sysfs_root}", *args])
        try:
            d.start(wait=False)
            assert d.proc.wait(10) == 2, (args, d.log())
            assert fragment in d.log(), (args, d.log())
            assert not os.path.exists(d.socket)
        finally:
            d.cleanup()
