# SPDX-License-Identifier: Apache-2.0
"""The PyTorchJob's program in the tests, one a pod: what
torch.distributed does first, from the variables Kubeflow's training
operator gives every pod, then a sum over the pods' scale-out ports.

The rendezvous, as c10d's TCPStore: node rank 0 (PET_NODE_RANK) serves a
store on PET_MASTER_PORT; every node, node 0 too, reaches it at
PET_MASTER_ADDR over the pod network, says its node rank and its
scale-out ports' addresses (net1... in the pod, as many as
ROCENET_PORT_INTERFACES names), and hears every
node's once PET_NNODES have come. WORLD_SIZE must be PET_NNODES x
PET_NPROC_PER_NODE and RANK the node rank.

The sum: each node's buffer of float64 holds its node rank + 1; each node
sends it to every other node, cut in one piece a port, piece k from its
port k to the peer's port k (one rail each), ALLREDUCE_ROUNDS times, and
adds what it receives. Node 0 prints one line, `ALLREDUCE {json}`, in
allreduce.py's form: the nodes, the bytes, whether every node's sums were
right, and each node's addresses and the bytes its interfaces moved."""

from __future__ import annotations

import json
import os
import socket
import threading
import time

import numpy as np
from counters import addresses, interface_bytes

DATA_PORT = 29500


def lines(conn: socket.socket):
    return conn.makefile("r", encoding="utf-8")


def serve_store(listener: socket.socket, nodes: int) -> None:
    """Node 0's store: every node's hello, then the table to all; every
    node's result, then node 0 prints them."""
    conns = [listener.accept()[0] for _ in range(nodes)]
    hellos = [json.loads(lines(c).readline()) for c in conns]
    table = json.dumps({str(h["node"]): h["ports"] for h in hellos}) + "\n"
    for c in conns:
        c.sendall(table.encode())
    results = sorted((json.loads(lines(c).readline()) for c in conns), key=lambda r: r["rank"])
    first = results[0]
    print("ALLREDUCE " + json.dumps({
        "ranks": nodes, "bytes": first["bytes"], "rounds": first["rounds"],
        "seconds": max(r["seconds"] for r in results), "right": all(r["right"] for r in results),
        "per_rank": results}), flush=True)
    for c in conns:
        c.sendall(b"done\n")
        c.close()


def connect(host: str, port: int, deadline: float) -> socket.socket:
    while True:
        try:
            return socket.create_connection((host, port), timeout=5)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def receive_exactly(conn: socket.socket, size: int) -> bytes:
    buf = bytearray(size)
    view, got = memoryview(buf), 0
    while got < size:
        n = conn.recv_into(view[got:])
        if n == 0:
            raise ConnectionError(f"closed after {got} of {size} bytes")
        got += n
    return bytes(buf)


def main() -> None:
    nodes = int(os.environ["PET_NNODES"])
    node = int(os.environ["PET_NODE_RANK"])
    per_node = int(os.environ["PET_NPROC_PER_NODE"])
    assert int(os.environ["WORLD_SIZE"]) == nodes * per_node, os.environ["WORLD_SIZE"]
    assert int(os.environ["RANK"]) == node, os.environ["RANK"]
    master, master_port = os.environ["PET_MASTER_ADDR"], int(os.environ["PET_MASTER_PORT"])
    size_bytes = int(os.environ.get("ALLREDUCE_BYTES", str(16 << 20)))
    rounds = int(os.environ.get("ALLREDUCE_ROUNDS", "4"))
    # The device plugin names the host's ports it gave; Multus names them
    # net1, net2... in the pod, in the annotation's order.
    ports = [f"net{i + 1}" for i in range(len(os.environ["ROCENET_PORT_INTERFACES"].split(",")))]
    mine = {p: addresses()[p].split("/")[0] for p in ports}

    # Listen on each port before saying hello: a peer sends once it has
    # the table, which comes after every hello.
    listeners = []
    for p in ports:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((mine[p], DATA_PORT))
        s.listen(nodes)
        listeners.append(s)
    if node == 0:
        store = socket.socket()
        store.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        store.bind(("0.0.0.0", master_port))
        store.listen(nodes)
        threading.Thread(target=serve_store, args=(store, nodes), daemon=True).start()
    conn = connect(master, master_port, time.monotonic() + 300)
    # The table comes once every node has come: give the others time.
    conn.settimeout(300)
    conn.sendall((json.dumps({"node": node, "ports": mine}) + "\n").encode())
    reader = lines(conn)
    table = json.loads(reader.readline())

    send = np.full(size_bytes // 8, node + 1, dtype=np.float64)
    pieces = np.array_split(send, len(ports))
    total = [piece.copy() for piece in pieces]
    lock, right = threading.Lock(), [True]

    def receive(k: int) -> None:
        for _ in range(nodes - 1):
            c, _ = listeners[k].accept()
            with c:
                first = None
                for _ in range(rounds):
                    got = np.frombuffer(receive_exactly(c, pieces[k].nbytes), dtype=np.float64)
                    if first is None:
                        first = got
                    elif not np.array_equal(got, first):
                        right[0] = False
                with lock:
                    total[k] += first

    def send_to(peer: str, k: int) -> None:
        with socket.socket() as s:
            s.bind((mine[ports[k]], 0))
            s.connect((table[peer][ports[k]], DATA_PORT))
            for _ in range(rounds):
                s.sendall(pieces[k].tobytes())
            # Done when the peer has it all (it closes after the last
            # piece), not when it is in the socket's buffer: the counters
            # read next must hold every byte sent.
            s.shutdown(socket.SHUT_WR)
            s.recv(1)

    before = interface_bytes()
    started = time.monotonic()
    threads = [threading.Thread(target=receive, args=(k,)) for k in range(len(ports))]
    threads += [threading.Thread(target=send_to, args=(peer, k))
                for peer in table if peer != str(node) for k in range(len(ports))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.monotonic() - started
    after = interface_bytes()
    want = nodes * (nodes + 1) / 2
    right[0] = right[0] and all(bool(np.all(t == want)) for t in total)
    moved = {name: {k: after[name][k] - before[name][k] for k in ("tx", "rx")}
             for name in after if name in before}
    conn.sendall((json.dumps({"rank": node, "host": socket.gethostname(), "right": right[0],
                              "addresses": addresses(), "interfaces": moved, "bytes": send.nbytes,
                              "rounds": rounds, "seconds": round(took, 3)}) + "\n").encode())
    reader.readline()
    conn.close()


if __name__ == "__main__":
    main()
