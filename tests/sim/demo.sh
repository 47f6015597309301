#!/usr/bin/env bash
# The rocenet demo: builds a simulated fabric (4 Gaudi-like scale-out ports
# cabled to a switch namespace running the real lldpd), runs rocenetd on it,
# and shows what an admin sees with rocectl. Needs root and a built tree.
#
#   tests/sim/demo.sh [BUILD_DIR]       run, show, tear down
#   DEMO_KEEP=1 tests/sim/demo.sh       keep everything running until Ctrl-C
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "${1:-$here/../../build}" && pwd)"
rocenetd="$build/daemon/server/rocenetd"
rocectl="$build/client/rocectl"
name="demo$$"
work="$(mktemp -d /tmp/rocenet-demo.XXXXXX)"
socket="$work/run/rocenetd.sock"
daemon_pid=""

cleanup() {
  if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
    kill -TERM "$daemon_pid"
    wait "$daemon_pid" 2>/dev/null || true
  fi
  python3 "$here/fabric.py" down "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# Waits (up to 10 s) until rocectl health says the node is ready.
wait_ready() {
  for _ in $(seq 200); do
    "$rocectl" --socket "$socket" health -o json 2>/dev/null | grep -q '"ready": true' && return 0
    sleep 0.05
  done
  echo "(the node did not become ready in 10 s)"
}

step "Building a simulated fabric: node namespace $name-node, switch $name-sw (lldpd), 4 ports"
python3 "$here/fabric.py" up "$name" --ports 4 > "$work/fabric.json"
sysfs="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sysfs_root"])' "$work/fabric.json")"

step "The node's ports as the driver registers them: administratively down, no carrier"
ip -n "$name-node" -br link show | grep '^so'

step "Starting rocenetd in $name-node (log: $work/rocenetd.log)"
ip netns exec "$name-node" "$rocenetd" --socket="$socket" --sysfs-root="$sysfs" \
  --state-dir="$work/state" --gaudinet-path="$work/gaudinet.json" \
  --metrics-address=127.0.0.1:0 > "$work/rocenetd.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 100); do
  grep -q "serving metrics" "$work/rocenetd.log" && break
  kill -0 "$daemon_pid" 2>/dev/null || { cat "$work/rocenetd.log"; exit 1; }
  sleep 0.05
done
cat "$work/rocenetd.log"

step "Waiting for LLDP from the switch (lldpd sends every second)"
wait_ready

step "rocenetd set every port up (its log above says so), and the kernel agrees"
ip -n "$name-node" -br link show | grep '^so'

step "rocectl ports"
"$rocectl" --socket "$socket" ports

step "rocectl neighbors"
"$rocectl" --socket "$socket" neighbors

step "rocectl addressing: each port took the other host of the switch's /30"
"$rocectl" --socket "$socket" addressing

step "rocectl ports -o wide"
"$rocectl" --socket "$socket" ports -o wide

step "Switch port swp2 goes down: rocectl health"
python3 "$here/fabric.py" link "$name" 1 down >/dev/null
sleep 0.2
"$rocectl" --socket "$socket" health

step "Switch port swp2 comes back: rocectl health"
python3 "$here/fabric.py" link "$name" 1 up >/dev/null
wait_ready
"$rocectl" --socket "$socket" health

step "The switch moves swp1 to another subnet (lldpcli): so0 follows at once"
python3 "$here/fabric.py" set-description "$name" 0 "no-alert 10.200.77.2/30" >/dev/null
sleep 0.3
"$rocectl" --socket "$socket" addressing
ip netns exec "$name-node" ip -4 -br addr show so0

cni="$build/plugins/cni/rocenet"
if [ -x "$cni" ]; then
  step "A pod joins the AI network: the rocenet CNI plugin, run as Multus runs it"
  ip netns add "$name-pod1"
  echo "{\"cniVersion\":\"1.1.0\",\"name\":\"ai\",\"type\":\"rocenet\",\"socket\":\"$socket\"}" |
    CNI_COMMAND=ADD CNI_CONTAINERID=demo1 CNI_NETNS="/run/netns/$name-pod1" CNI_IFNAME=net1 \
      CNI_PATH=/opt/cni/bin "$cni"
  echo
  echo "inside the pod:"
  ip netns exec "$name-pod1" ip -4 -br addr show net1
  ip netns exec "$name-pod1" ip -4 route show table all | grep -v "^local\|^broadcast"
  ip netns exec "$name-pod1" ip -4 rule show
  "$rocectl" --socket "$socket" ports
  step "The pod goes away: CNI DEL gives the port back to the host"
  echo "{\"cniVersion\":\"1.1.0\",\"name\":\"ai\",\"type\":\"rocenet\",\"socket\":\"$socket\"}" |
    CNI_COMMAND=DEL CNI_CONTAINERID=demo1 CNI_NETNS="/run/netns/$name-pod1" CNI_IFNAME=net1 \
      CNI_PATH=/opt/cni/bin "$cni"
  wait_ready
  "$rocectl" --socket "$socket" ports
fi

if [ "${DEMO_KEEP:-0}" = 1 ]; then
  step "Running. Try: $rocectl --socket $socket ports   (Ctrl-C to stop and clean up)"
  wait "$daemon_pid"
fi
