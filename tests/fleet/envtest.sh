#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The fleet's programs on a real kube-apiserver and etcd: the Envtest tests
# of operator/ (rocenet-controller's reconcilers, kubectl rocenet) and
# plugins/reporter (the node reporter's
# RBAC and admission policies; docs/fleet.md), with the two
# programs that tests/k8s/components.sh builds from their pinned Go
# modules (or takes from its cache) linked into a temporary directory that
# KUBEBUILDER_ASSETS names. CTest's fleet.envtest (label fleet).
#
#   tests/fleet/envtest.sh [go test flags...]
#
#   ROCENET_CACHE      as components.sh (default /var/cache/rocenet); the Go
#                      module and build caches default to its go/mod and go/build
#   ROCENET_GO         the go program (default: go on PATH)
#   ROCENET_BUILD_DIR  when set, the test's figures are appended to its
#                      fleet-figures.txt, which make test shows
set -euo pipefail

top="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cache="${ROCENET_CACHE:-/var/cache/rocenet}"
if [ -n "${ROCENET_GO:-}" ]; then
  PATH="$(dirname "$ROCENET_GO"):$PATH"
fi
command -v go >/dev/null || { echo "envtest.sh: go is not installed" >&2; exit 2; }
export GOMODCACHE="${GOMODCACHE:-$cache/go/mod}" GOCACHE="${GOCACHE:-$cache/go/build}"
export GOFLAGS=-mod=readonly GOTOOLCHAIN=local
if [ -n "${ROCENET_BUILD_DIR:-}" ]; then
  export ROCENET_FIGURES="$ROCENET_BUILD_DIR/fleet-figures.txt"
fi

assets="$(mktemp -d)"
trap 'rm -rf "$assets"' EXIT
bash "$top/tests/k8s/components.sh" "$assets" kubernetes etcd
cd "$top"
KUBEBUILDER_ASSETS="$assets" go test -count=1 -v -run Envtest "$@" ./operator/... ./plugins/reporter/...
