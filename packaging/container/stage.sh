#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Stages the image's C++ programs from a CMake build tree into OUT, as the
# runtime stage of packaging/container/Containerfile copies them: the
# install rules of the DEB (cmake/RocenetPackaging.cmake), component
# "runtime" only (the binaries, without the systemd unit and host config),
# stripped; the CNI installer of the init container; the licence.
#
#   packaging/container/stage.sh BUILD_DIR OUT
#
# The Containerfile's build stage runs it after its own build; the
# end-to-end tests run it on the host's build tree (same Debian 12, same
# libraries), so that the image is not compiled a second time
# (tests/k8s/image.sh --native).
set -euo pipefail

build="${1:?usage: stage.sh BUILD_DIR OUT}"
out="${2:?usage: stage.sh BUILD_DIR OUT}"
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DESTDIR="$out" cmake --install "$build" --prefix /usr --component runtime --strip >/dev/null
install -D -m 0755 "$src/packaging/container/install-cni.sh" "$out/usr/lib/rocenet/install-cni.sh"
install -D -m 0644 "$src/LICENSE" "$out/licenses/LICENSE"
