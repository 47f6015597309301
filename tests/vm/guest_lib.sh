# SPDX-License-Identifier: Apache-2.0
# Sourced by the guest scripts: the switch on the far end of a wire, and
# rocenetd on the node's side. Every line meant for the test starts "vm: ".
# One exec costs 50-150 ms under emulation: loops poll at 0.25 s.
say() { echo "vm: $*"; }
ip link set lo up

# The interface with MAC $1 (no udev here: names follow probe order).
byname() {
  for d in /sys/class/net/*; do
    if [ "$(cat "$d/address")" = "$1" ]; then basename "$d"; fi
  done
}

# switch_up NIC NS ADDRESS DESCRIPTION: moves NIC into namespace NS as swp1
# with ADDRESS, where the real lldpd announces DESCRIPTION every second.
switch_up() {
  ip netns add "$2"
  ip link set "$1" netns "$2"
  ip -n "$2" link set "$1" name swp1
  ip -n "$2" link set lo up
  ip -n "$2" addr add "$3" dev swp1
  ip -n "$2" link set swp1 up
  mkdir -p /tmp/vm
  cat > "/tmp/vm/lldpd-$2.conf" <<CONF
configure system hostname leaf-$2
configure lldp tx-interval 1
configure ports swp1 lldp portidsubtype local Ethernet1/1 description "$4"
CONF
  ip netns exec "$2" lldpd -d -u "/run/lldpd-$2.socket" -p "/run/lldpd-$2.pid" -I swp1 \
    -O "/tmp/vm/lldpd-$2.conf" > "/tmp/vm/lldpd-$2.log" 2>&1 &
}

# switch_describe NS DESCRIPTION: the switch port's new Port Description.
switch_describe() {
  lldpcli -u "/run/lldpd-$1.socket" configure ports swp1 lldp portidsubtype local Ethernet1/1 \
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
  say "gave up after $(($(now_ms) - start)) ms waiting for: $*"
  return 1
}

has_address() { ip -4 -o addr show dev "$1" | grep -q " $2 "; }

# The last lines of rocenetd's log, when something failed.
daemon_log() { sed 's/^/vm: rocenetd: /' /tmp/vm/rocenetd.log | tail -${1:-30}; }

# cni COMMAND CONTAINER NETNS IFNAME: the CNI plugin exec'd as Multus runs
# it, its result on one line after "vm: cni-COMMAND-CONTAINER ".
cni() {
  out=$(echo "{\"cniVersion\":\"1.0.0\",\"name\":\"ai-net\",\"type\":\"rocenet\",\"socket\":\"$SOCKET\"}" |
    CNI_COMMAND=$1 CNI_CONTAINERID=$2 CNI_NETNS=$3 CNI_IFNAME=$4 CNI_PATH=/usr/lib/cni \
    CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=$2" "$BUILD/plugins/cni/rocenet")
  rc=$?
  echo "vm: cni-$1-$2 rc=$rc $(echo "$out" | tr -d '\n')"
  return $rc
}
