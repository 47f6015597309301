# SPDX-License-Identifier: Apache-2.0
"""Where simulated fabrics keep their state, and the checks of their indices."""

from __future__ import annotations

import os

import platforms
from simutil import UsageError, check_name

STATE_VERSION = 2
DEFAULT_BASE = os.environ.get("ROCENET_SIM_ROOT", "/tmp/rocenet-sim")
MARKER = ".rocenet-sim"
STATE_FILE = "fabric.json"
MAX_PORTS = platforms.MAX_HOSTS  # one leaf: port i announces 10.200.<i+1>.2
SYSFS_TIMEOUT = 10.0  # how long add_port/remove_port wait for the follower


def default_state_dir(name: str) -> str:
    return os.path.join(DEFAULT_BASE, name)


def _resolve_state_dir(name_or_state_dir: str) -> str:
    if os.sep in name_or_state_dir:
        return os.path.abspath(name_or_state_dir)
    check_name(name_or_state_dir)
    return default_state_dir(name_or_state_dir)


def _check_index(index, what: str = "port index") -> int:
    if not isinstance(index, int) or isinstance(index, bool):
        raise UsageError(f"{what} must be an integer, not {index!r}")
    return index
