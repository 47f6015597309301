# SPDX-License-Identifier: Apache-2.0
"""The end-to-end tests' shared fixtures: the figures printed in the test
log, and the components and image, built once per run for every cluster."""

from __future__ import annotations

import os
import shutil
import tempfile
import time

import pytest

import e2e_support as e2e


@pytest.fixture(scope="session")
def say(request):
    terminal = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")

    def say(line: str) -> None:
        """A figure in the test log, whether or not the test passes."""
        if terminal is None or capture is None:
            print(line)
            return
        with capture.global_and_fixture_disabled():
            terminal.write_line(line)
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


@pytest.fixture(scope="session")
def artifacts(took):
    reason = e2e.skip_reason()
    if reason:
        pytest.skip(reason)
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
