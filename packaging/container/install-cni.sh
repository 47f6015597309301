#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs the rocenet CNI plugin into the host's CNI binary directory, as the
# DaemonSet's init container: install-cni.sh [SOURCE] DEST_DIR
#
# The copy is atomic: the binary is written to a temporary file in DEST_DIR
# and renamed over the old one, so a runtime calling the plugin at the same
# moment runs either the old or the new binary, never a half-written one
# (rename(2) within one file system; a running old binary keeps its inode).
# The new binary must answer CNI VERSION before it replaces the old one.
set -eu

if [ "$#" -eq 1 ]; then
  src=/usr/lib/cni/rocenet
  dest_dir="$1"
elif [ "$#" -eq 2 ]; then
  src="$1"
  dest_dir="$2"
else
  echo "usage: install-cni.sh [SOURCE] DEST_DIR" >&2
  exit 2
fi

if [ ! -d "$dest_dir" ]; then
  echo "install-cni: $dest_dir: not a directory (is the host's CNI binary directory mounted?)" >&2
  exit 1
fi
if [ ! -x "$src" ]; then
  echo "install-cni: $src: no executable plugin to install" >&2
  exit 1
fi

tmp="$dest_dir/.rocenet.tmp.$$"
trap 'rm -f "$tmp"' EXIT
cp "$src" "$tmp"
chmod 0755 "$tmp"
if ! version=$(CNI_COMMAND=VERSION "$tmp" </dev/null); then
  echo "install-cni: $src does not answer CNI VERSION; $dest_dir/rocenet left as it was" >&2
  exit 1
fi
mv -f "$tmp" "$dest_dir/rocenet"
trap - EXIT
echo "install-cni: installed $dest_dir/rocenet ($version)"
