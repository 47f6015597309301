#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Writes the Go code of rocenetd's API into $1 (default: this directory).
# Run from this directory (go generate does).
set -eu
out="${1:-.}"
protos="ports health addressing attach reservations uninstall"
root=../../../proto
gen_go="$(go tool -n protoc-gen-go)"
gen_grpc="$(go tool -n protoc-gen-go-grpc)"
pkg=rocenet.io/plugins/internal/rocenetpb
maps=""
for p in $protos; do maps="$maps,Mrocenet/v1/$p.proto=$pkg"; done
maps="${maps#,}"
files=""
for p in $protos; do files="$files $root/rocenet/v1/$p.proto"; done
# shellcheck disable=SC2086  # word splitting of the file list is wanted
protoc --proto_path="$root" \
  --plugin=protoc-gen-go="$gen_go" --plugin=protoc-gen-go-grpc="$gen_grpc" \
  --go_out="$out" --go_opt=paths=source_relative,"$maps" \
  --go-grpc_out="$out" --go-grpc_opt=paths=source_relative,"$maps" \
  $files
# paths=source_relative keeps rocenet/v1/; the package is this directory.
mv "$out"/rocenet/v1/*.go "$out"/
rm -r "$out/rocenet"
