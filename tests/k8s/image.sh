#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds rocenet's container image the way it ships: podman, from
# packaging/container/Containerfile and this source tree, and writes it as an
# OCI archive for the test cluster's containerd to import.
#
#   tests/k8s/image.sh [--native BUILD_DIR] ARCHIVE [TAG]   (TAG default: e2e)
#
# --native takes the C++ programs from a CMake build tree of this source
# (packaging/container/stage.sh, the build stage's own install step) in
# place of the Containerfile's build stage, which would compile them again:
# the host is Debian 12 as that stage is, with the same libraries, and the
# runtime stage, the Go stage and everything after are the Containerfile's.
# Without it, the image is built wholly from source, as it ships.
#
# There is no registry here: the Containerfile's Debian 12 base images
# (debian:12, debian:12-slim) are made with debootstrap from the Debian
# mirror apt uses, once, and kept in $ROCENET_CACHE (default
# /var/cache/rocenet) as base/debian-12.tar; podman's own layer cache keeps
# the build stage's packages between runs on one machine.
#
# The DRA plugin's Go stage needs a Go 1.26 image (the Containerfile's
# GO_IMAGE): here it is made from that Debian base and this machine's Go
# toolchain, as localhost/golang:<go version>-bookworm; the build mounts
# $GOMODCACHE and $GOCACHE (default under $ROCENET_CACHE/go), so modules come
# from the cache or the Go module proxy as on the host.
#
# podman runs its build containers with Debian's runc and host networking
# (the CNI backend's bridge is not needed to reach the mirror), and with
# limits below this machine's hard ones, which runc cannot raise.
set -euo pipefail

native=""
if [ "${1:-}" = "--native" ]; then
  native="${2:?usage: image.sh [--native BUILD_DIR] ARCHIVE [TAG]}"
  shift 2
fi
archive="${1:?usage: image.sh [--native BUILD_DIR] ARCHIVE [TAG]}"
tag="${2:-e2e}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cache="${ROCENET_CACHE:-/var/cache/rocenet}"
base="$cache/base/debian-12.tar"

# Scratch directories, gone on any exit.
work="" staged=""
trap 'rm -rf ${work:+"$work"} ${staged:+"$staged"}' EXIT
started=$SECONDS
if [ ! -f "$base" ]; then
  # The Debian archive apt is configured with (deb822 "URIs:" or "deb" lines).
  mirror="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources \
    2>/dev/null | awk '/^URIs:/ {print $2} /^deb / {print $2}' | grep -E '/debian/?$' | head -n 1 || true)"
  mirror="${mirror:-http://deb.debian.org/debian}"
  work="$(mktemp -d)"
  debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -n 20 "$work/debootstrap.log" >&2; exit 1; }
  mkdir -p "$(dirname "$base")"
  tar -C "$work/rootfs" -cf "$base.tmp" .
  mv "$base.tmp" "$base"
  echo "image: Debian 12 base made with debootstrap in $((SECONDS - started)) s" >&2
fi
for name in docker.io/library/debian:12 docker.io/library/debian:12-slim; do
  if ! podman image exists "$name"; then
    podman import "$base" "$name" >/dev/null
  fi
done

command -v go >/dev/null || { echo "image.sh: go is not installed" >&2; exit 2; }
# The Go stage reaches the module proxy with the certificates this machine
# trusts (debootstrap's minbase has none): the image is made again when they
# change.
cacerts=/etc/ssl/certs/ca-certificates.crt
[ -f "$cacerts" ] || { echo "image.sh: $cacerts is missing (Debian: ca-certificates)" >&2; exit 2; }
ca_sum="$(sha256sum "$cacerts" | cut -c1-16)"
goroot="$(go env GOROOT)"
go_image="localhost/golang:$(go env GOVERSION | sed 's/^go//')-bookworm"
if [ "$(podman image inspect --format '{{index .Labels "rocenet.cacerts"}}' "$go_image" 2>/dev/null)" != "$ca_sum" ]; then
  work_go="$(mktemp -d)"
  cp -a "$goroot" "$work_go/go"
  cp "$cacerts" "$work_go/ca-certificates.crt"
  printf '%s\n' 'FROM docker.io/library/debian:12' 'COPY go /usr/local/go' \
    'COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt' \
    'ENV PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin GOPATH=/go' \
    >"$work_go/Containerfile"
  podman build --runtime runc --network host --label "rocenet.cacerts=$ca_sum" -t "$go_image" "$work_go" >&2
  rm -rf "$work_go"
fi
gomodcache="${GOMODCACHE:-$cache/go/mod}"
gocache="${GOCACHE:-$cache/go/build}"
mkdir -p "$gomodcache" "$gocache"

start=$SECONDS
hard_nofile="$(ulimit -Hn)"
go_args=(--build-arg "GO_IMAGE=$go_image" --build-arg "GOPROXY=$(go env GOPROXY)"
  -v "$gomodcache:/go/pkg/mod" -v "$gocache:/root/.cache/go-build")
native_args=()
if [ -n "$native" ]; then
  # A build context named as the stage takes its place; podman then skips
  # the stage, its packages and its compile.
  staged="$(mktemp -d)"
  bash "$root/packaging/container/stage.sh" "$native" "$staged/out"
  native_args=(--build-context "build=$staged")
fi
podman build --runtime runc --network host \
  --ulimit "nofile=$hard_nofile:$hard_nofile" --ulimit nproc=4096:4096 \
  "${go_args[@]}" "${native_args[@]}" \
  -f "$root/packaging/container/Containerfile" \
  --ignorefile "$root/packaging/container/Containerfile.dockerignore" \
  -t "localhost/rocenet:$tag" "$root" >&2
if [ -z "$native" ]; then
  # The build stage keeps a name of its own, so that its layers (the
  # build's Debian packages) stay cached; the build stages of earlier
  # source trees, 1.6 GB each, are removed.
  podman build --runtime runc --network host \
    --ulimit "nofile=$hard_nofile:$hard_nofile" --ulimit nproc=4096:4096 \
    "${go_args[@]}" \
    -f "$root/packaging/container/Containerfile" \
    --ignorefile "$root/packaging/container/Containerfile.dockerignore" \
    --target build -t localhost/rocenet-build:cache "$root" >/dev/null
fi
# Housekeeping only: the dangling images of earlier builds. One that a
# leftover build container still uses (an interrupted build leaves its
# buildah working containers behind) cannot go, and that is no reason to
# fail the build that just succeeded.
if ! pruned="$(podman image prune -f 2>&1 >/dev/null)"; then
  echo "image: earlier builds' images not pruned: ${pruned##*$'\n'}" >&2
fi
rm -f "$archive"
podman save --format oci-archive -o "$archive" "localhost/rocenet:$tag" >&2
echo "image: localhost/rocenet:$tag built in $((SECONDS - start)) s${native:+ (C++ programs from $native)}" >&2
