#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""runc for the test cluster's CRI-O node on a machine whose cgroups are
hybrid with hugetlb on the v2 mount alone: CRI-O finds hugetlb in
/proc/cgroups and puts hugepage limits in every container's spec, which
runc cannot apply on v1 (containerd runs with disable_hugetlb_controller).
Drops them from the bundle's config.json, then runs Debian's runc with
the same arguments."""

import json
import os
import sys

RUNC = "/usr/sbin/runc"


def bundle(argv: list[str]) -> str | None:
    for i, arg in enumerate(argv):
        if arg in ("--bundle", "-b") and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--bundle="):
            return arg.split("=", 1)[1]
    return None


def drop_hugepage_limits(config: str) -> bool:
    """Removes the hugepage limits from a bundle's config.json (replaced
    whole, never half-written); whether it had any."""
    with open(config) as f:
        spec = json.load(f)
    resources = spec.get("linux", {}).get("resources", {})
    if resources.pop("hugepageLimits", None) is None:
        return False
    with open(config + ".tmp", "w") as f:
        json.dump(spec, f)
    os.replace(config + ".tmp", config)
    return True


def main() -> None:
    where = bundle(sys.argv[1:])
    if where:
        drop_hugepage_limits(os.path.join(where, "config.json"))
    os.execv(RUNC, [RUNC, *sys.argv[1:]])


if __name__ == "__main__":
    main()
