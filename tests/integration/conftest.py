"""Fixture factories shared by the integration tests.

``fabrics`` makes simulated fabrics that are torn down when the test module
ends, also after a failure; a module's own ``fabric`` fixture says only what
its fabric looks like:

    @pytest.fixture(scope="module")
    def fabric(fabrics):
        return fabrics("cn", ports=6)
"""

from __future__ import annotations

import pytest

from harness import sim


@pytest.fixture(scope="module")
def fabrics():
    made: list = []

    def make(prefix: str, **kwargs):
        fab = sim.Fabric.up(sim.unique_name(prefix), **kwargs)
        made.append(fab)
        return fab

    yield make
    for fab in reversed(made):
        fab.down()
