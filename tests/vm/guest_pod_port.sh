# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh source-path=SCRIPTDIR
# In the guest: a real PCI NIC handed to a pod by the CNI plugin, and the
# pod's namespace deleted without a CNI DEL (a node's runtime crashed, a pod
# force-deleted): the kernel hands a physical NIC back to the host, where a
# veth would die. Three rounds:
#   pod1: the NIC comes back under its pod name (net1), rocenetd renames it
#         to its host name, releases the attachment and addresses it again;
#   pod2: the host has a net1 of its own, so the kernel names the NIC
#         dev<ifindex>; the same must follow;
#   pod3: the host has a device under the NIC's host name; the NIC stays as
#         the kernel named it, and is released and addressed all the same.
# Set by the caller: BUILD, HERE, DRIVER, PORT_MAC, SWITCH_MAC.
set -u
# shellcheck source=guest_lib.sh
. "$HERE/guest_lib.sh"

step "load $DRIVER, find the NICs by MAC"
modprobe "$DRIVER" || { failed "modprobe $DRIVER"; exit 2; }
port=$(byname "$PORT_MAC"); sw=$(byname "$SWITCH_MAC")
[ -n "$port" ] && [ -n "$sw" ] || { failed "NICs not found: port=$port switch=$sw"; exit 2; }
pci=$(basename "$(readlink -f "/sys/class/net/$port/device")")
say "port $port at $pci"
step "the switch and rocenetd up: the port addressed from LLDP"
switch_up "$sw" sw 10.200.1.2/30 "no-alert 10.200.1.2/30"
start_rocenetd --drivers="$DRIVER" --gaudi=false
status=0
wait_for 60 has_address "$port" 10.200.1.1/30 || status=1

no_attachments() {
  out=$(rocectl attachments -o json) || return 1
  ! echo "$out" | grep -q container_id
}
# The NIC in the host under any name, with the address from LLDP.
home_addressed() {
  name=$(byname "$PORT_MAC")
  [ -n "$name" ] && has_address "$name" 10.200.1.1/30
}

round() {  # round POD CONTAINER [COMMAND...]: COMMAND runs while the NIC is in the pod
  pod=$1; container=$2; shift 2
  step "$pod: the NIC handed to the pod by CNI ADD"
  ip netns add "$pod"
  # A port is handed out healthy only: e1000e has no carrier for a few
  # seconds after it is brought up.
  wait_for 30 rocectl wait --ready --timeout=1s || status=1
  cni ADD "$container" "/run/netns/$pod" net1 || { failed "cni ADD $container"; return; }
  say "$pod host-class-net $(ls /sys/class/net | tr '\n' ' ')"
  say "$pod pci-net $(ls "/sys/bus/pci/devices/$pci/net" 2>&1 | tr '\n' ' ')"
  say "$pod in-pod $(ip -n "$pod" -4 -o addr show dev net1 | awk '{print $4}')"
  show "$pod-attached" ports
  if [ $# -gt 0 ]; then "$@"; fi
  step "$pod: its namespace deleted without CNI DEL, the NIC home and addressed"
  ip netns del "$pod"
  wait_for 20 no_attachments || status=1
  wait_for 30 home_addressed || status=1
  show "$pod-home" ports
}

round pod1 c1
ip link add net1 type veth peer name net1-peer
round pod2 c2
ip link del net1
round pod3 c3 ip link add "$port" type veth peer name "$port-peer"
ip link del "$port"

step "rocenetd stopped"
stop_rocenetd
say "gc errors $(grep -c 'gc of' /tmp/vm/rocenetd.log)"
grep -E 'waiting for the kernel|is back in the host as|released port' /tmp/vm/rocenetd.log | sed 's/^/vm: log /'
[ $status -eq 0 ] || daemon_log 40
exit $status
