# SPDX-License-Identifier: Apache-2.0
"""Overlapping restarts: an old rocenetd stopping while a new one starts on
the same socket (a DaemonSet's maxSurge, a force-deleted pod, systemd and a
pod on one host). The new one waits for the old one to let go of the
socket's lock, and the old one removes only a socket that is still its own,
so after every round the new one serves the socket. When the new one was
already waiting, the old one hands the socket's path over to it: a call
made during the change waits for the new one and is never refused."""

from __future__ import annotations

import contextlib
import errno
import os
import random
import signal
import socket
import subprocess
import tempfile
import threading
import time

from harness import Daemon, sim, threads_of, wait_until

ROUNDS = 100


@contextlib.contextmanager
def daemons_on_one_socket(name: str):
    """A fabric, then a factory of rocenetds that share one socket; the first
    is started and serving. Yields (new_daemon, started); everything is
    stopped and removed after."""
    fab = sim.Fabric.up(sim.unique_name(name), ports=1)
    workdir = tempfile.mkdtemp(prefix="rocenetd-overlap-")
    runtime = tempfile.mkdtemp(prefix="rocenetd-overlap-run-", dir="/dev/shm")
    started: list[Daemon] = []

    def new_daemon() -> Daemon:
        # Without the metrics listener, whose HTTP server takes a second to
        # stop: the rounds are about the API socket, and many of them fit.
        d = Daemon(fab.node_netns, [f"--sysfs-root={fab.sysfs_root}", "--metrics-address="],
                   workdir=workdir, runtime_dir=runtime)
        started.append(d)
        return d
    try:
        first = new_daemon().start(wait=False)
        wait_until(lambda: f"serving gRPC on unix:{first.socket}" in first.run_log(), 15,
                   what="the first rocenetd serving")
        yield new_daemon, started
    finally:
        for d in started:
            d.stop()
        if started:
            started[-1].cleanup()
        fab.down()


def test_an_old_daemon_stopping_while_a_new_one_starts_leaves_the_new_one_serving():
    rng = random.Random(20261201)
    waited = 0
    with daemons_on_one_socket("ro") as (new_daemon, daemons):
        old = daemons[0]
        for i in range(ROUNDS):
            # Negative: the new one starts first and the old one is told to
            # stop a moment later; positive: SIGTERM, then the new one.
            overlap = rng.uniform(-0.3, 0.4)
            new = new_daemon()
            if overlap < 0:
                new.start(wait=False)
                time.sleep(-overlap)
                old.proc.send_signal(signal.SIGTERM)
            else:
                old.proc.send_signal(signal.SIGTERM)
                time.sleep(overlap)
                new.start(wait=False)
            assert old.proc.wait(15) == 0, f"round {i}: the old rocenetd:\n{old.run_log()}"
            wait_until(lambda: new.proc.poll() is not None or
                       f"serving gRPC on unix:{new.socket}" in new.run_log(), 15,
                       what=f"round {i}: the new rocenetd serving")
            assert new.proc.poll() is None, f"round {i}: the new rocenetd exited:\n{new.run_log()}"
            # Served by the new one, and only by it.
            cp = new.rocectl("ports")
            assert cp.returncode == 0, f"round {i} (overlap {overlap:+.2f} s): {cp.stderr}"
            assert os.path.exists(new.socket)
            if "still holds it; waiting up to" in new.run_log():
                waited += 1
            old = new
        # The overlap was real often enough for the wait to matter.
        assert waited >= ROUNDS // 4, waited


HANDOVERS = 5


def test_a_waiting_daemon_is_handed_the_socket_and_no_connection_is_refused():
    # Each round's times (printed: docs/deploying.md, "Rollouts at fleet
    # size", takes rocenetd's part of a node's rollout from them): the new
    # rocenetd's start to its listening beside the socket, and from the old
    # one's SIGTERM to a call made then answered (by the new one) and to
    # the old one gone.
    beside, answered, gone = [], [], []
    with daemons_on_one_socket("rh") as (new_daemon, daemons):
        old = daemons[0]
        for i in range(HANDOVERS):
            new = new_daemon()
            started = time.monotonic()
            new.start(wait=False)
            wait_until(lambda: "for the hand-over" in new.run_log(), 15,
                       what=f"round {i}: the new rocenetd listening beside the socket")
            beside.append(time.monotonic() - started)
            refused: list[str] = []
            connected = 0
            done = threading.Event()

            def dial() -> None:
                nonlocal connected
                while not done.is_set():
                    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                        try:
                            s.connect(old.socket)
                            connected += 1
                        except OSError as e:
                            refused.append(errno.errorcode.get(e.errno, str(e.errno)))
                    time.sleep(0.001)
            dialer = threading.Thread(target=dial)
            dialer.start()
            try:
                time.sleep(0.05)
                stopping = time.monotonic()
                old.proc.send_signal(signal.SIGTERM)
                # A call made during the change: queued at the new one's
                # listener until it serves.
                cp = new.rocectl("ports")
                answered.append(time.monotonic() - stopping)
                try:
                    code = old.proc.wait(15)
                except subprocess.TimeoutExpired:
                    raise AssertionError(f"round {i}: the old rocenetd did not stop in 15 s:\n"
                                         f"{threads_of(old.proc.pid)}\n{old.run_log()}") from None
                gone.append(time.monotonic() - stopping)
                assert code == 0, f"round {i}: the old rocenetd:\n{old.run_log()}"
                wait_until(lambda: f"serving gRPC on unix:{new.socket}" in new.run_log(), 15,
                           what=f"round {i}: the new rocenetd serving")
                time.sleep(0.05)
            finally:
                done.set()
                dialer.join()
            assert "handed over to the waiting rocenetd" in old.run_log(), old.run_log()
            assert cp.returncode == 0, f"round {i}: a call during the hand-over: {cp.stderr}"
            assert not refused, f"round {i}: {len(refused)} of {len(refused) + connected} " \
                                f"connections failed ({sorted(set(refused))})"
            assert connected > 20, connected
            assert not os.path.exists(old.socket + ".next")
            old = new

    def spread(times: list[float]) -> str:
        return f"{min(times) * 1000:.0f}-{max(times) * 1000:.0f} ms"
    print(f"hand-over, {HANDOVERS} rounds: the new rocenetd listening beside the socket "
          f"{spread(beside)} after its start; a call made at the old one's SIGTERM answered "
          f"after {spread(answered)}, the old one gone after {spread(gone)}")
