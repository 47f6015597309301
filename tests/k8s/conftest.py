# SPDX-License-Identifier: Apache-2.0
"""The end-to-end tests' shared fixtures and hooks: the figures printed in
the test log (and kept in the build tree's e2e-figures.txt, which the
Makefile shows after a passing run), the components and image, built once
per run for every cluster; what a failed test leaves for its reader (the
build tree's e2e-evidence/<module>-<test>/); and the `ordered` marker of a
module whose tests build on each other."""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import time

import pytest

import e2e_support as e2e


def _tell(config, line: str) -> None:
    """A line in the test log as it happens, not held with the test's
    captured output."""
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if terminal is None or capture is None:
        print(line)
        return
    with capture.global_and_fixture_disabled():
        terminal.write_line(line)


@pytest.fixture(scope="session")
def say(request):
    figures = os.path.join(e2e.build_dir(), e2e.FIGURES)
    os.makedirs(os.path.dirname(figures), exist_ok=True)
    open(figures, "w").close()

    def say(line: str) -> None:
        """A figure in the test log, whether or not the test passes, and in
        the build tree's figures file."""
        _tell(request.config, line)
        with open(figures, "a") as f:
            f.write(line + "\n")
    return say


class Took:
    """Prints how long each set-up step took: the time since the last step
    (or since reset())."""

    def __init__(self, say):
        self.say = say
        self.started = time.monotonic()

    def reset(self) -> None:
        self.started = time.monotonic()

    def __call__(self, step: str) -> None:
        now = time.monotonic()
        self.say(f"e2e set-up: {step}: {now - self.started:.0f} s")
        self.started = now


@pytest.fixture(scope="session")
def took(say):
    return Took(say)


# The clusters use fixed names the whole machine shares (the node's network
# namespace, the veth to it, the fabric's state directory, the image tags):
# a second run at the same time would tear down the first one's namespaces
# under it. A run waits for the one before it instead.
LOCK = "/run/lock/rocenet-e2e.lock"
LOCK_WAIT = 45 * 60


def _hold_the_machine(say):
    os.makedirs(os.path.dirname(LOCK), exist_ok=True)
    fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + LOCK_WAIT
    told = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if not told:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
                say(f"e2e set-up: waiting for the end-to-end run of pid {holder or '?'} ({LOCK})")
                told = True
            if time.monotonic() > deadline:
                os.close(fd)
                pytest.fail(f"{LOCK}: another end-to-end run held it for {LOCK_WAIT // 60} min")
            time.sleep(2)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


@pytest.fixture(scope="session")
def artifacts(took, say):
    reason = e2e.skip_reason()
    if reason:
        pytest.skip(reason)
    lock = _hold_the_machine(say)
    # This run's failures only.
    shutil.rmtree(os.path.join(e2e.build_dir(), e2e.EVIDENCE), ignore_errors=True)
    took.reset()
    # ROCENET_E2E_ARTIFACTS=DIR keeps the components and the image in DIR
    # and uses them again on the next run, for working on the tests
    # themselves (a changed program needs DIR emptied).
    kept = os.environ.get("ROCENET_E2E_ARTIFACTS")
    work = kept or tempfile.mkdtemp(prefix="rocenet-e2e-")
    try:
        yield e2e.Artifacts(work, took, reuse=bool(kept))
    finally:
        if not kept:
            shutil.rmtree(work, ignore_errors=True)
        os.close(lock)


# ---- the ordered modules, and what a failure leaves --------------------------

ORDERED = "ordered"
FIRST_FAILURE = pytest.StashKey[dict]()


def pytest_configure(config):
    config.addinivalue_line(
        "markers", f"{ORDERED}: the module's tests run in file order and build on each other "
        "(one cluster, pods made by one test and used by the next): after one fails, the "
        "later ones are reported SKIPPED, not failed on what it left behind")
    config.stash[FIRST_FAILURE] = {}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if item.get_closest_marker(ORDERED) is None:
        return
    failed = item.config.stash[FIRST_FAILURE].get(item.module.__name__)
    if failed:
        pytest.skip(f"an earlier test of this ordered module failed: {failed}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    if not report.failed:
        return
    name = item.name if report.when == "call" else f"{item.name} ({report.when})"
    if item.get_closest_marker(ORDERED) is not None:
        item.config.stash[FIRST_FAILURE].setdefault(item.module.__name__, name)
    env = getattr(item, "funcargs", {}).get("env")
    if not isinstance(env, e2e.Env):
        return
    try:
        where = e2e.evidence_dir(f"{item.module.__name__}-{item.name}"
                                 + ("" if report.when == "call" else f"-{report.when}"))
        _tell(item.config, f"e2e evidence: collecting what the cluster shows into {where}")
        e2e.collect_evidence(env, where)
        env.cluster.keep_logs_in(os.path.join(where, "components"))
        report.sections.append((
            "e2e evidence",
            f"{where}: events, pods, every container's log (and the previous one's), "
            f"rocectl's views from rocenetd, the node's addresses and routes; the "
            f"components' logs in components/ once the cluster is down"))
    except Exception as err:  # the test's own failure is the one to report
        report.sections.append(("e2e evidence", f"not collected: {type(err).__name__}: {err}"))
