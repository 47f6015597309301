#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs pytest files (one run, sharing session fixtures) for CTest with Debian's python3 (where python3-pytest
# lives, whatever python3 comes first on PATH). Exit 77 (CTest: skipped) when the test
# cannot run here (not root, no network namespaces) or every test in it
# skipped, so a skip is never reported as a pass.
set -uo pipefail
file="$1"
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIPPED: $file needs root"
  exit 77
fi
probe="rnprobe$$"
if ! ip netns add "$probe" 2>/dev/null; then
  echo "SKIPPED: $file needs network namespaces (ip netns add failed)"
  exit 77
fi
ip netns del "$probe"

out=$(mktemp)
/usr/bin/python3 -m pytest -p no:cacheprovider -rs -vv "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
summary=$(tail -n 1 "$out")
rm -f "$out"
if [ "$rc" -eq 0 ] && echo "$summary" | grep -q "skipped" && ! echo "$summary" | grep -q "passed"; then
  exit 77
fi
exit "$rc"
