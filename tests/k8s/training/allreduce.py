# SPDX-License-Identifier: Apache-2.0
"""An all-reduce across the job's ranks, as a training step's gradient sum:
each rank contributes a buffer of float64 filled with its rank + 1, every
rank checks that it received the sum over the ranks in each element, and
rank 0 prints one line, `ALLREDUCE {json}`: the ranks, the bytes of each
buffer, the rounds, the seconds they took, whether every rank's sums were
right, and each rank's host, its interfaces' IPv4 addresses, the HCL
configuration its pod was given (HCL_GAUDINET_CONFIG_FILE in the pod's
environment: a rank started over SSH has not the pod's environment, so it
reads the container's first process's) and the bytes each of its
interfaces sent and received over the run (from /sys/class/net)."""

from __future__ import annotations

import json
import os
import socket
import time

import numpy as np
from counters import addresses, interface_bytes
from mpi4py import MPI


def hcl_configuration() -> object:
    with open("/proc/1/environ", "rb") as f:
        environ = dict(item.split(b"=", 1) for item in f.read().split(b"\0") if b"=" in item)
    path = environ.get(b"HCL_GAUDINET_CONFIG_FILE")
    if path is None:
        return None
    with open(path.decode()) as f:
        return json.load(f)


def main() -> None:
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    size_bytes = int(os.environ.get("ALLREDUCE_BYTES", str(16 << 20)))
    rounds = int(os.environ.get("ALLREDUCE_ROUNDS", "4"))
    send = np.full(size_bytes // 8, rank + 1, dtype=np.float64)
    received = np.empty_like(send)
    want = size * (size + 1) / 2

    comm.Barrier()
    before = interface_bytes()
    started = time.monotonic()
    right = True
    for _ in range(rounds):
        comm.Allreduce(send, received, op=MPI.SUM)
        right = right and bool(np.all(received == want))
    comm.Barrier()
    took = time.monotonic() - started
    after = interface_bytes()
    moved = {name: {k: after[name][k] - before[name][k] for k in ("tx", "rx")}
             for name in after if name in before}
    ranks = comm.gather({"rank": rank, "host": socket.gethostname(), "right": right,
                         "addresses": addresses(), "hcl": hcl_configuration(),
                         "interfaces": moved}, root=0)
    if rank == 0:
        print("ALLREDUCE " + json.dumps({
            "ranks": size, "bytes": send.nbytes, "rounds": rounds, "seconds": round(took, 3),
            "right": all(r["right"] for r in ranks), "per_rank": ranks}), flush=True)


if __name__ == "__main__":
    main()
