#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The two lint tools Debian 12 does not package, each built or installed
# once into the cache at a pinned version and reused after that:
#   ruff         from PyPI, in a virtual environment of its own
#   staticcheck  from the Go module proxy (honnef.co/go/tools)
#
#   tests/lint/tools.sh ruff|staticcheck
#
# Prints the program's path on stdout, or nothing (and why, on stderr) when
# it cannot be had here: no python3 venv module, no go. An install that
# fails or is interrupted leaves nothing behind, so the next run tries again.
#
#   ROCENET_CACHE  the cache (default /var/cache/rocenet): tools/<name>-<version>/
set -euo pipefail

RUFF_VERSION=0.17.5
STATICCHECK_VERSION=v0.8.2

cache="${ROCENET_CACHE:-/var/cache/rocenet}/tools"
mkdir -p "$cache"

# install NAME DIR COMMAND...: runs COMMAND with $work as the directory to
# fill, then moves it to DIR; a failure leaves no DIR.
# $work is global: the EXIT trap runs after the function has returned.
work=""
trap '[ -z "$work" ] || rm -rf "$work"' EXIT
install() {
  local name=$1 dir=$2
  shift 2
  work="$(mktemp -d "$cache/.$name.XXXXXX")"
  if ! "$@" "$work" >&2; then
    echo "tools.sh: installing $name failed" >&2
    return 1
  fi
  mv "$work" "$dir"
  work=""
}

install_ruff() {
  python3 -m venv "$1" && "$1/bin/pip" install --quiet --disable-pip-version-check \
    "ruff==$RUFF_VERSION"
}

install_staticcheck() {
  GOBIN="$1/bin" GOFLAGS='' CGO_ENABLED=0 GOTOOLCHAIN=local \
    go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
}

case "${1:-}" in
  ruff)
    dir="$cache/ruff-$RUFF_VERSION"
    if [ ! -x "$dir/bin/ruff" ]; then
      python3 -c 'import venv, ensurepip' 2>/dev/null ||
        { echo "tools.sh: python3 has no venv/ensurepip (Debian: python3-venv)" >&2; exit 0; }
      rm -rf "$dir"
      install ruff "$dir" install_ruff
    fi
    echo "$dir/bin/ruff"
    ;;
  staticcheck)
    dir="$cache/staticcheck-$STATICCHECK_VERSION"
    if [ ! -x "$dir/bin/staticcheck" ]; then
      command -v go >/dev/null || { echo "tools.sh: go is not installed" >&2; exit 0; }
      rm -rf "$dir"
      install staticcheck "$dir" install_staticcheck
    fi
    echo "$dir/bin/staticcheck"
    ;;
  *)
    echo "usage: $0 ruff|staticcheck" >&2
    exit 2
    ;;
esac
