# SPDX-License-Identifier: Apache-2.0
"""What the VM tests leave in the build tree. Every guest's console is kept
in vm-consoles/<test>-<guest>.log; a failed test shows, for each guest it
ran, that file, the step that failed and the console's last lines
(vm.report), not the whole console. The time each guest ran is a figure:
in the test log and in vm-figures.txt, which the Makefile shows after a
passing run (CTest hides a passing test's output)."""

from __future__ import annotations

import os
import shutil

import pytest

import vm

CONSOLES = "vm-consoles"
FIGURES = "vm-figures.txt"
RUNS = pytest.StashKey[list]()


@pytest.fixture(scope="session")
def figure(request):
    path = os.path.join(vm.BUILD, FIGURES)
    os.makedirs(vm.BUILD, exist_ok=True)
    open(path, "w").close()
    shutil.rmtree(os.path.join(vm.BUILD, CONSOLES), ignore_errors=True)
    terminal = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")

    def figure(line: str) -> None:
        """A figure in the test log, whether or not the test passes, and in
        the build tree's figures file."""
        if terminal is not None and capture is not None:
            with capture.global_and_fixture_disabled():
                terminal.write_line(line)
        else:
            print(line)
        with open(path, "a") as f:
            f.write(line + "\n")
    return figure


class GuestRuns:
    """The guests one test ran: each one's console kept in a file, its time
    said as a figure, and all of them remembered for the test's report."""

    def __init__(self, test: str, figure):
        self.test, self.figure = test, figure
        self.kept: list[tuple[vm.Result, str]] = []

    def keep(self, result: vm.Result, guest: str) -> vm.Result:
        name = "".join(c if c.isalnum() or c in "._-" else "-" for c in f"{self.test}-{guest}")
        path = os.path.join(vm.BUILD, CONSOLES, f"{name}.log")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(result.log)
        self.kept.append((result, path))
        self.figure(f"vm: {guest}: {vm.ended(result)}")
        return result


@pytest.fixture
def guest_runs(request, figure):
    runs = GuestRuns(request.node.name, figure)
    request.node.stash[RUNS] = runs.kept
    return runs


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    if report.failed and report.when == "call":
        for result, path in item.stash.get(RUNS, []):
            report.sections.append(("guest", vm.report(result, path)))
