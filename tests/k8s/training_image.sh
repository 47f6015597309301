#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the training job's image (tests/k8s/training/Containerfile) with
# podman and writes it as an OCI archive for the test cluster's containerd
# to import. Its Debian 12 base is the one tests/k8s/image.sh imports into
# podman (made with debootstrap, cached); podman's layer cache keeps the
# packages between runs on one machine.
#
#   tests/k8s/training_image.sh ARCHIVE [NAME]   (NAME default: localhost/rocenet-training:e2e)
set -euo pipefail

archive="${1:?usage: training_image.sh ARCHIVE [NAME]}"
name="${2:-localhost/rocenet-training:e2e}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
podman image exists docker.io/library/debian:12 ||
  { echo "training_image.sh: no docker.io/library/debian:12 in podman (tests/k8s/image.sh makes it)" >&2; exit 2; }
start=$SECONDS
podman build --runtime runc --network host --ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" \
  -t "$name" "$here/training" >&2
rm -f "$archive"
podman save --format oci-archive -o "$archive" "$name" >&2
echo "training image: $name built in $((SECONDS - start)) s" >&2
