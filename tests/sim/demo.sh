#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
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
plugin_pid=""
peer_pid=""

cleanup() {
  for pid in "$plugin_pid" "$peer_pid"; do
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid"
      wait "$pid" 2>/dev/null || true
    fi
  done
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
plugin="$build/plugins/device/rocenet-device-plugin"
peer="$build/tests/integration/kubelet_peer/rocenet-kubelet-peer"
# The first line from the kubelet peer whose event is $1.
peer_wait() {
  local line
  while read -r -t 15 line <&"${PEER[0]}"; do
    case "$line" in *"\"event\":\"$1\""*) echo "$line"; return 0 ;; esac
  done
  return 1
}
if [ -x "$cni" ] && [ -x "$plugin" ] && [ -x "$peer" ]; then
  step "kubelet gives a pod one port: the device plugin answers a kubelet peer speaking the real API"
  mkdir -p "$work/kubelet/device-plugins"
  coproc PEER { exec "$peer" "$work/kubelet/device-plugins"; }
  peer_pid=$PEER_PID
  peer_wait listening >/dev/null
  "$plugin" --daemon-socket="$socket" --kubelet-dir="$work/kubelet/device-plugins/" \
    --devinfo-dir="$work/devinfo" --hcl-dir="$work/hcl" --pod-resources-interval=1s \
    --pod-resources-socket="$work/kubelet/pod-resources/kubelet.sock" > "$work/plugin.log" 2>&1 &
  plugin_pid=$!
  peer_wait devices >/dev/null
  port_id="$("$rocectl" --socket "$socket" ports -o json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["ports"][1]["id"])')"
  echo "allocate $port_id" >&"${PEER[1]}"
  allocation="$(peer_wait allocate)"
  echo "kubelet's Allocate answer for the container:"
  echo "$allocation" | python3 -c '
import json, sys
reply = json.load(sys.stdin)
c = reply["response"]["container_responses"][0]
for k, v in sorted(c["envs"].items()):
    print(f"  env   {k}={v}")
for m in c["mounts"]:
    print("  mount", m["host_path"], "->", m["container_path"], "(read-only)" if m["read_only"] else "")'
  hcl_dir="$(echo "$allocation" | python3 -c 'import json,sys; print(json.load(sys.stdin)["response"]["container_responses"][0]["mounts"][0]["host_path"])')"
  echo
  echo "the pod's gaudinet.json (HCL_GAUDINET_CONFIG_FILE): its port and address"
  cat "$hcl_dir/gaudinet.json"
  echo "the pod's macAddrInfo.json (HCL_MAC_INFO_FILE): its accelerator's MACs by NIC index"
  python3 -c '
import json, sys
for e in json.load(open(sys.argv[1]))["MAC_ADDR_INFO"]:
    print("  " + e["PCI_ID"] + ":")
    for i, mac in enumerate(e["MAC_ADDR_LIST"]):
        if mac != "ff:ff:ff:ff:ff:ff":
            print(f"    NIC {i:2}: {mac}")
    print("    other NICs (internal): ff:ff:ff:ff:ff:ff")' "$hcl_dir/macAddrInfo.json"
  echo "the Multus device-info file:"
  cat "$work/devinfo/"*-device.json

  step "The pod joins the AI network: the rocenet CNI plugin, run as Multus runs it, with that port"
  ip netns add "$name-pod1"
  conf="{\"cniVersion\":\"1.1.0\",\"name\":\"ai\",\"type\":\"rocenet\",\"socket\":\"$socket\""
  echo "$conf,\"deviceID\":\"$port_id\"}" |
    CNI_COMMAND=ADD CNI_CONTAINERID=demo1 CNI_NETNS="/run/netns/$name-pod1" CNI_IFNAME=net1 \
      CNI_PATH=/opt/cni/bin "$cni"
  echo
  echo "inside the pod:"
  ip netns exec "$name-pod1" ip -4 -br addr show net1
  ip netns exec "$name-pod1" ip -4 route show table all | grep -v "^local\|^broadcast"
  ip netns exec "$name-pod1" ip -4 rule show
  "$rocectl" --socket "$socket" ports

  step "The pod goes away: CNI DEL gives the port back, and its files go once kubelet frees it"
  echo "$conf}" |
    CNI_COMMAND=DEL CNI_CONTAINERID=demo1 CNI_NETNS="/run/netns/$name-pod1" CNI_IFNAME=net1 \
      CNI_PATH=/opt/cni/bin "$cni"
  ip netns del "$name-pod1"
  pod="$(echo "$allocation" | python3 -c 'import json,sys; print(json.load(sys.stdin)["pod"])')"
  echo "delete $pod" >&"${PEER[1]}"
  peer_wait delete >/dev/null
  for _ in $(seq 100); do
    [ -e "$hcl_dir" ] || break
    sleep 0.1
  done
  wait_ready
  "$rocectl" --socket "$socket" ports
  echo "files left for the pod: $(find "$work/hcl" "$work/devinfo" -mindepth 1 | wc -l)"
fi

if [ "${DEMO_KEEP:-0}" = 1 ]; then
  step "Running. Try: $rocectl --socket $socket ports   (Ctrl-C to stop and clean up)"
  wait "$daemon_pid"
fi
