# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# shellcheck disable=SC2034  # status, daemon, diagd: the sourcing script's
# Sourced by the guest scripts: the switch on the far end of a wire, and
# rocenetd on the node's side. Every line meant for the test starts "vm: ".
# One exec costs 50-150 ms under emulation: loops poll at 0.25 s.
say() { echo "vm: $*"; }
# step WHAT: what the script does next. A failed test names the step in
# which the first failure was said (vm.py's report), or the last one
# started when the guest never finished.
step() { say "step: $*"; }
# failed WHAT: says what failed and makes the script's exit status 1; the
# script goes on, so that what follows still shows.
failed() { say "failed: $*"; status=1; }
ip link set lo up

# The interface with MAC $1 (no udev here: names follow probe order).
byname() {
  for d in /sys/class/net/*; do
    if [ "$(cat "$d/address")" = "$1" ]; then basename "$d"; fi
  done
}

# switch_port NS NIC NAME ADDRESS DESCRIPTION: NIC into the switch's
# namespace NS (made, routing, on first use) as port NAME with ADDRESS,
# where lldpd will announce DESCRIPTION.
switch_port() {
  if [ ! -e "/run/netns/$1" ]; then
    ip netns add "$1"
    ip -n "$1" link set lo up
    ip netns exec "$1" sysctl -qw net.ipv4.ip_forward=1
    mkdir -p /tmp/vm
    printf 'configure system hostname leaf-%s\nconfigure lldp tx-interval 1\n' "$1" \
      > "/tmp/vm/lldpd-$1.conf"
  fi
  ip link set "$2" netns "$1"
  ip -n "$1" link set "$2" name "$3"
  ip -n "$1" addr add "$4" dev "$3"
  ip -n "$1" link set "$3" up
  echo "configure ports $3 lldp portidsubtype local $3 description \"$5\"" >> "/tmp/vm/lldpd-$1.conf"
}

# switch_lldpd NS: the real lldpd on every port of switch NS.
switch_lldpd() {
  ip netns exec "$1" lldpd -d -u "/run/lldpd-$1.socket" -p "/run/lldpd-$1.pid" -I 'swp*' \
    -O "/tmp/vm/lldpd-$1.conf" > "/tmp/vm/lldpd-$1.log" 2>&1 &
}

# switch_up NIC NS ADDRESS DESCRIPTION: a switch of one port, swp1.
switch_up() {
  switch_port "$2" "$1" swp1 "$3" "$4"
  switch_lldpd "$2"
}

# switch_describe NS DESCRIPTION: swp1's new Port Description.
switch_describe() {
  lldpcli -u "/run/lldpd-$1.socket" configure ports swp1 lldp portidsubtype local swp1 \
    description "$2" > /dev/null
}

SOCKET=/run/rocenet/rocenetd.sock
# start_rocenetd ARGS...: rocenetd in the background, its pid in $daemon.
start_rocenetd() {
  mkdir -p /tmp/vm
  "$BUILD/daemon/server/rocenetd" --socket=$SOCKET --state-dir=/tmp/vm/state \
    --runtime-dir=/run/rocenet-rt --metrics-address= --hcl-dir=/tmp/vm/hcl "$@" \
    > /tmp/vm/rocenetd.log 2>&1 &
  daemon=$!
}

stop_rocenetd() {
  kill "$daemon"
  wait "$daemon"
  say "rocenetd exit $?"
}

rocectl() { "$BUILD/client/rocectl" --socket=$SOCKET "$@"; }

# The JSON of `rocectl ARGS` on one line after "vm: LABEL ".
show() {
  label=$1; shift
  echo "vm: $label $(rocectl "$@" -o json | tr -d '\n')"
}

# Milliseconds of the guest's clock.
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# wait_for SECONDS COMMAND...: until COMMAND succeeds; says how long it took.
wait_for() {
  start=$(now_ms); end=$((start + $1 * 1000)); shift
  while :; do
    if "$@" > /dev/null 2>&1; then
      say "waited $(($(now_ms) - start)) ms for: $*"
      return 0
    fi
    [ "$(now_ms)" -lt $end ] || break
    sleep 0.25
  done
  say "failed: gave up after $(($(now_ms) - start)) ms waiting for: $*"
  return 1
}

has_address() { ip -4 -o addr show dev "$1" | grep -q " $2 "; }

# The last lines of rocenetd's log, when something failed.
daemon_log() { sed 's/^/vm: rocenetd: /' /tmp/vm/rocenetd.log | tail -${1:-30}; }

# cni COMMAND CONTAINER NETNS IFNAME: the CNI plugin exec'd as Multus runs
# it, its result on one line after "vm: cni-COMMAND-CONTAINER ". No kubelet
# allocates here, so the network hands out any free port (anyFreePort).
cni() {
  out=$(echo "{\"cniVersion\":\"1.0.0\",\"name\":\"ai-net\",\"type\":\"rocenet\",\"socket\":\"$SOCKET\",\"anyFreePort\":true}" |
    CNI_COMMAND=$1 CNI_CONTAINERID=$2 CNI_NETNS=$3 CNI_IFNAME=$4 CNI_PATH=/usr/lib/cni \
    CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=$2" "$BUILD/plugins/cni/rocenet")
  rc=$?
  echo "vm: cni-$1-$2 rc=$rc $(echo "$out" | tr -d '\n')"
  return $rc
}

# start_diagd NODE_NAME SECRET_FILE: rocenet-diagd beside rocenetd, its pid
# in $diagd; rocectl diag finds its socket beside rocenetd's.
start_diagd() {
  "$BUILD/daemon/diagd/rocenet-diagd" --socket=/run/rocenet/diagd.sock --node-socket=$SOCKET \
    --node-name="$1" --secret-file="$2" --metrics-address= > /tmp/vm/diagd.log 2>&1 &
  diagd=$!
}
