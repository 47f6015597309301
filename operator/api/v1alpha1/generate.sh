#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Writes zz_generated.deepcopy.go into $1 (default: this directory), the
# CRDs into $2 (default: packaging/kubernetes/base/crds) and the same files
# into $3 (default: packaging/helm/rocenet/crds, the chart's CRDs, which
# Helm installs before the templates). Run from this directory (go generate
# does).
set -eu
out="${1:-.}"
crds="${2:-../../../packaging/kubernetes/base/crds}"
chart="${3:-../../../packaging/helm/rocenet/crds}"
go tool controller-gen object:headerFile=header.txt paths=. output:object:dir="$out"
go tool controller-gen crd:maxDescLen=400 paths=. output:crd:dir="$crds"
mkdir -p "$chart"
cp "$crds"/rocenet.io_*.yaml "$chart"/
