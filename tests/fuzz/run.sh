#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds a fuzz target with clang (libFuzzer + ASan + UBSan), through CMake
# (tests/fuzz/CMakeLists.txt), and fuzzes it.
#
#   tests/fuzz/run.sh [TARGET] [SECONDS] [LIBFUZZER_FLAG...]
#
#   TARGET    lldp_decode (the default): the LLDP decoder, seeded with the
#             frames of tests/fixtures/lldp/*.pcap
#             port_description: the LLDP Port Description parser, seeded with
#             a few descriptions written below
#             cni_request, config_yaml, health_state: the CNI plugin's
#             request parser, rocenetd's configuration loader and its health
#             memory reader, seeded from tests/fuzz/seeds/
#   SECONDS   how long to fuzz (default 20; 0 = until another limit, e.g.
#             `run.sh 0 -runs=10000000`)
#   BUILD_DIR where the binary, seeds, corpus and crash artifacts go
#             (default <repo>/build-fuzz)
#   CXX       a clang++ with libFuzzer (default clang++)
#   ROCENET_FUZZ_BINARY  a binary already built (make test's ASan tree
#             builds all five); without it run.sh builds one in BUILD_DIR/tree
#
# Exits non-zero if the fuzzer finds a crash, a leak, undefined behaviour or a
# broken contract; the input that did it is left in BUILD_DIR as crash-*
# (<target>-crash-* for the other targets).
set -euo pipefail

target=lldp_decode
case "${1:-}" in
  lldp_decode | port_description | cni_request | config_yaml | health_state)
    target="$1"
    shift
    ;;
esac
seconds="${1:-20}"
shift || true
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BUILD_DIR:-$root/build-fuzz}"
cxx="${CXX:-clang++}"

case "$target" in
  lldp_decode)
    corpus="$build/corpus"
    seeds="$build/seeds"
    dict="$root/tests/fuzz/lldp.dict"
    artifacts="$build/"
    ;;
  *)
    corpus="$build/$target/corpus"
    seeds="$build/$target/seeds"
    dict="$build/$target/$target.dict"
    artifacts="$build/$target-"
    ;;
esac
mkdir -p "$corpus" "$seeds"

# The binary: the one CMake built (make test passes it), or one built here
# by CMake in a clang ASan+UBSan tree of its own, from the sources
# tests/fuzz/CMakeLists.txt names (rebuilt only when they changed).
binary="${ROCENET_FUZZ_BINARY:-}"
if [[ -z "$binary" ]]; then
  tree="$build/tree"
  if [[ ! -f "$tree/build.ninja" ]]; then
    cmake -S "$root" -B "$tree" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
      -DROCENET_SANITIZE=address,undefined -DROCENET_UNIT_TESTS=OFF >/dev/null
  fi
  cmake --build "$tree" --target "${target}_fuzz"
  binary="$tree/tests/fuzz/${target}_fuzz"
fi

case "$target" in
  lldp_decode)
    python3 "$root/tests/fuzz/extract_seeds.py" "$root/tests/fixtures/lldp" "$seeds"
    ;;
  port_description)
    # What switches send, and the near misses the parser must name.
    i=0
    for seed in 'no-alert 10.200.10.2/30' '10.200.1.3/31' 'rail 3 to leaf-07 no-alert 10.200.3.6/30' \
      $'no-alert\t10.200.1.2/30 \r\n' 'no-alert 10.200.1.02/30' 'no-alert fd00::1/64' \
      'no-alert 10.200.1.2/33' 'no-alert 10.200.1.2' 'uplink to spine'; do
      printf '%s' "$seed" >"$seeds/seed-$i"
      i=$((i + 1))
    done
    printf '%s\n' '"/30"' '"/31"' '"/3"' '"."' '"::"' '"0x"' '"255"' '"256"' '"no-alert "' \
      '"\x09"' '"\x00"' >"$dict"
    ;;
  cni_request)
    cp "$root"/tests/fuzz/seeds/cni_request/* "$seeds/"
    printf '%s\n' '"CNI_COMMAND="' '"CNI_CONTAINERID="' '"CNI_NETNS="' '"CNI_IFNAME="' \
      '"CNI_ARGS="' '"ADD"' '"DEL"' '"CHECK"' '"GC"' '"STATUS"' '"VERSION"' '"\x0a\x0a"' \
      '"\"cniVersion\""' '"\"1.1.0\""' '"\"0.4.0\""' '"\"name\""' '"\"type\""' '"\"mtu\""' \
      '"\"timeout\""' '"\"socket\""' '"\"deviceID\""' '"\"runtimeConfig\""' '"\"prevResult\""' \
      '"\"routes\""' '"\"mode\""' '"\"cni.dev/valid-attachments\""' '"\"containerID\""' \
      '"\"ifname\""' '"\"interfaces\""' '"\"ips\""' '"K8S_POD_NAME="' '"IgnoreUnknown=1"' \
      '"\\u0000"' '"1e400"' '"-1"' '"null"' >"$dict"
    ;;
  config_yaml)
    cp "$root"/tests/fuzz/seeds/config_yaml/* "$seeds/"
    cp "$root"/packaging/systemd/config.yaml "$seeds/packaged-config.yaml"
    printf '%s\n' '"socket:"' '"interfaces:"' '"drivers:"' '"gaudi:"' '"enabled:"' \
      '"scale_out_ports:"' '"sysfs_root:"' '"metrics_address:"' '"state_dir:"' '"mode:"' \
      '"addressing:"' '"mtu:"' '"routed_prefix_length:"' '"static_routes:"' '"outputs:"' \
      '"gaudinet:"' '"networkd_dir:"' '"nfd_features:"' '"nfd_label:"' '"network_manager:"' \
      '"log_format:"' '"log_level:"' '"L3"' '"L2"' '"&a"' '"*a"' '"!!str"' '"<<:"' '"---"' \
      '"- "' '"{"' '"["' '"10.210.0.0/16"' '"true"' '"~"' >"$dict"
    ;;
  health_state)
    cp "$root"/tests/fuzz/seeds/health_state/* "$seeds/"
    printf '%s\n' '"\"version\""' '"\"boot_id\""' '"\"ports\""' '"\"health\""' '"\"flaps\""' \
      '"\"downs\""' '"\"errors\""' '"\"fec\""' '"\"lossless\""' '"\"retransmits\""' \
      '"\"rdma\""' '"\"held\""' '"\"condition\""' '"\"since\""' '"null"' '"true"' \
      '"18446744073709551616"' '"-9223372036854775809"' '"1e400"' >"$dict"
    ;;
esac

# New inputs go to the first directory; the seeds stay as they are.
exec "$binary" -max_total_time="$seconds" -dict="$dict" \
  -artifact_prefix="$artifacts" -print_final_stats=1 "$@" "$corpus" "$seeds"
