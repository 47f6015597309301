#!/usr/bin/env bash
# Builds the LLDP decoder fuzz target with clang (libFuzzer + ASan + UBSan)
# and fuzzes it, seeded with the frames of tests/fixtures/lldp/*.pcap.
#
#   tests/fuzz/run.sh [SECONDS] [LIBFUZZER_FLAG...]
#
#   SECONDS   how long to fuzz (default 20; 0 = until another limit, e.g.
#             `run.sh 0 -runs=10000000`)
#   BUILD_DIR where the binary, seeds, corpus and crash artifacts go
#             (default <repo>/build-fuzz)
#   CXX       a clang++ with libFuzzer (default clang++)
#
# Exits non-zero if the fuzzer finds a crash, a leak, undefined behaviour or a
# broken round trip; the input that did it is left in BUILD_DIR as crash-*.
set -euo pipefail

seconds="${1:-20}"
shift || true
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BUILD_DIR:-$root/build-fuzz}"
cxx="${CXX:-clang++}"
binary="$build/lldp_decode_fuzz"

sources=(
  tests/fuzz/lldp_decode_fuzz.cc
  daemon/lldp/codec.cc
  daemon/lldp/decode_error.cc
  daemon/lldp/encode.cc
  daemon/lldp/lldpdu.cc
  daemon/lldp/optional_tlvs.cc
  daemon/common/mac_address.cc
)

mkdir -p "$build/corpus" "$build/seeds"

# Rebuild only when a source or header of the codec changed.
stale=1
if [[ -x "$binary" ]]; then
  newer="$(find "$root/tests/fuzz" "$root/daemon/lldp" "$root/daemon/common" \
    -newer "$binary" \( -name '*.cc' -o -name '*.h' \) -print -quit)"
  [[ -z "$newer" ]] && stale=0
fi
if (( stale )); then
  echo "building $binary"
  # shellcheck disable=SC2046  # pkg-config prints one flag per word
  "$cxx" -std=c++20 -O1 -g -fno-omit-frame-pointer \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -Wall -Wextra -Werror -Wno-unused-parameter \
    -I"$root" "${sources[@]/#/$root/}" \
    $(pkg-config --libs absl_status absl_statusor absl_strings absl_str_format) \
    -o "$binary"
fi

python3 "$root/tests/fuzz/extract_seeds.py" "$root/tests/fixtures/lldp" "$build/seeds"

# New inputs go to the first directory; the seeds stay as they are.
exec "$binary" -max_total_time="$seconds" -dict="$root/tests/fuzz/lldp.dict" \
  -artifact_prefix="$build/" -print_final_stats=1 "$@" "$build/corpus" "$build/seeds"
