#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds a fuzz target with clang (libFuzzer + ASan + UBSan) and fuzzes it.
#
#   tests/fuzz/run.sh [TARGET] [SECONDS] [LIBFUZZER_FLAG...]
#
#   TARGET    lldp_decode (the default): the LLDP decoder, seeded with the
#             frames of tests/fixtures/lldp/*.pcap
#             port_description: the LLDP Port Description parser, seeded with
#             a few descriptions written below
#   SECONDS   how long to fuzz (default 20; 0 = until another limit, e.g.
#             `run.sh 0 -runs=10000000`)
#   BUILD_DIR where the binary, seeds, corpus and crash artifacts go
#             (default <repo>/build-fuzz)
#   CXX       a clang++ with libFuzzer (default clang++)
#
# Exits non-zero if the fuzzer finds a crash, a leak, undefined behaviour or a
# broken contract; the input that did it is left in BUILD_DIR as crash-*
# (<target>-crash-* for the other targets).
set -euo pipefail

target=lldp_decode
case "${1:-}" in
  lldp_decode | port_description | cni_request | config_yaml)
    target="$1"
    shift
    ;;
esac
seconds="${1:-20}"
shift || true
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BUILD_DIR:-$root/build-fuzz}"
cxx="${CXX:-clang++}"
binary="$build/${target}_fuzz"
libs=()

case "$target" in
  lldp_decode)
    sources=(
      tests/fuzz/lldp_decode_fuzz.cc
      daemon/lldp/codec.cc
      daemon/lldp/decode_error.cc
      daemon/lldp/encode.cc
      daemon/lldp/lldpdu.cc
      daemon/lldp/optional_tlvs.cc
      daemon/common/mac_address.cc
    )
    watched=("$root/tests/fuzz" "$root/daemon/lldp" "$root/daemon/common")
    corpus="$build/corpus"
    seeds="$build/seeds"
    dict="$root/tests/fuzz/lldp.dict"
    artifacts="$build/"
    ;;
  port_description)
    sources=(
      tests/fuzz/port_description_fuzz.cc
      daemon/addressing/port_description.cc
      daemon/common/ipv4.cc
    )
    watched=("$root/tests/fuzz" "$root/daemon/addressing" "$root/daemon/common")
    corpus="$build/port_description/corpus"
    seeds="$build/port_description/seeds"
    dict="$build/port_description/port_description.dict"
    artifacts="$build/port_description-"
    ;;
  cni_request)
    sources=(
      tests/fuzz/cni_request_fuzz.cc
      plugins/cni/netconf.cc
      plugins/cni/invocation.cc
      plugins/cni/errors.cc
    )
    libs=(absl_time absl_cord)
    watched=("$root/tests/fuzz" "$root/plugins/cni" "$root/daemon/common")
    ;;
  config_yaml)
    sources=(
      tests/fuzz/config_yaml_fuzz.cc
      daemon/config/options.cc
      daemon/config/qos_options.cc
      daemon/config/config_yaml.cc
      daemon/config/security_options.cc
      daemon/common/logging.cc
      daemon/common/ipv4.cc
      daemon/common/suggest.cc
      daemon/addressing/planner.cc
      daemon/addressing/port_description.cc
      daemon/inventory/port_selection.cc
      daemon/qos/pfc.cc
    )
    libs=(yaml-cpp spdlog fmt absl_time absl_cord)
    watched=("$root/tests/fuzz" "$root/daemon/config" "$root/daemon/common"
      "$root/daemon/addressing" "$root/daemon/inventory" "$root/daemon/qos")
    ;;
esac
case "$target" in
  cni_request | config_yaml)
    corpus="$build/$target/corpus"
    seeds="$build/$target/seeds"
    dict="$build/$target/$target.dict"
    artifacts="$build/$target-"
    ;;
esac

mkdir -p "$corpus" "$seeds"

# Rebuild only when a source or header the target uses changed.
stale=1
if [[ -x "$binary" ]]; then
  newer="$(find "${watched[@]}" -newer "$binary" \( -name '*.cc' -o -name '*.h' \) -print -quit)"
  [[ -z "$newer" ]] && stale=0
fi
if (( stale )); then
  echo "building $binary"
  # One compiler per core, then one link: the sources are independent.
  # Line tables are all the sanitizers' reports need.
  # shellcheck disable=SC2054  # -fsanitize= takes a comma-separated list
  flags=(-std=c++20 -O1 -gline-tables-only -fno-omit-frame-pointer
    -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
    -Wall -Wextra -Werror -Wno-unused-parameter -I"$root")
  objects="$build/objects/$target"
  rm -rf "$objects"
  mkdir -p "$objects"
  jobs_max="$(nproc)"
  pids=()
  for source in "${sources[@]}"; do
    while (( $(jobs -rp | wc -l) >= jobs_max )); do wait -n; done
    "$cxx" "${flags[@]}" -c "$root/$source" -o "$objects/${source//\//_}.o" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  # shellcheck disable=SC2046  # pkg-config prints one flag per word
  "$cxx" -fsanitize=fuzzer,address,undefined "$objects"/*.o \
    $(pkg-config --libs absl_status absl_statusor absl_strings absl_str_format "${libs[@]}") \
    -o "$binary"
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
      printf '%s' "$seed" >"$seeds/seed-$((i++))"
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
      '"gaudinet:"' '"networkd_dir:"' '"nfd_features:"' '"nfd_label:"' '"log_format:"' \
      '"log_level:"' '"L3"' '"L2"' '"&a"' '"*a"' '"!!str"' '"<<:"' '"---"' '"- "' '"{"' '"["' \
      '"10.210.0.0/16"' '"true"' '"~"' >"$dict"
    ;;
esac

# New inputs go to the first directory; the seeds stay as they are.
exec "$binary" -max_total_time="$seconds" -dict="$dict" \
  -artifact_prefix="$artifacts" -print_final_stats=1 "$@" "$corpus" "$seeds"
