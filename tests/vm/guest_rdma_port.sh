# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh source-path=SCRIPTDIR
# In the guest: a port with a real RDMA device (rdma_rxe on an e1000e NIC).
# rocenetd must read the device, its verbs node and the RoCE v2 GID index
# of the port's address from the kernel's GID table, and follow the table
# when the switch gives the port another address (the kernel drops the old
# entry and adds the new one at another index). The device plugin, asked by
# a kubelet peer to allocate the port, must hand the container that uverbs
# node, and /dev/infiniband/rdma_cm only once rdma_ucm is loaded (a device
# node that does not exist keeps a container from starting).
# Set by the caller: BUILD, HERE, DRIVER, PORT_MAC, SWITCH_MAC.
set -u
# shellcheck source=guest_lib.sh
. "$HERE/guest_lib.sh"

step "load $DRIVER and rdma_rxe, find the NICs by MAC, rxe0 on the port"
modprobe "$DRIVER" || { failed "modprobe $DRIVER"; exit 2; }
modprobe rdma_rxe || { failed "modprobe rdma_rxe"; exit 2; }
port=$(byname "$PORT_MAC"); sw=$(byname "$SWITCH_MAC")
[ -n "$port" ] && [ -n "$sw" ] || { failed "NICs not found: port=$port switch=$sw"; exit 2; }
rdma link add rxe0 type rxe netdev "$port" || { failed "rdma link add"; exit 2; }
say "verbs $(ls /dev/infiniband | tr '\n' ' ')"

step "the switch and rocenetd up: the port addressed, its GID index 1"
switch_up "$sw" sw 10.200.1.2/30 "no-alert 10.200.1.2/30"
start_rocenetd --drivers="$DRIVER" --gaudi=false
status=0
# The first entries of the GID table (of 1024; an unused one has no type).
gid_table() {
  for i in 0 1 2 3; do
    t=$(cat "/sys/class/infiniband/rxe0/ports/1/gid_attrs/types/$i" 2>/dev/null) || continue
    echo "$i=$(cat "/sys/class/infiniband/rxe0/ports/1/gids/$i")/$t"
  done | tr '\n' ' '
}
has_gid() { rocectl ports -o json | tr -d ' \n' | grep -q "\"gid_index\":$1,"; }

wait_for 60 has_address "$port" 10.200.1.1/30 || status=1
wait_for 10 has_gid 1 || status=1
say "gids-1 $(gid_table)"
show rdma-1 ports

step "another /30 from the switch: the new address's GID index 2"
# The switch hands the port another /30.
ip -n sw addr add 10.200.1.6/30 dev swp1
switch_describe sw "no-alert 10.200.1.6/30"
wait_for 30 has_address "$port" 10.200.1.5/30 || status=1
wait_for 10 has_gid 2 || status=1
say "gids-2 $(gid_table)"
show rdma-2 ports

step "the device plugin registered with a kubelet peer"
# The device plugin and a kubelet peer: Allocate of the port.
mkdir -p /tmp/vm/kubelet/device-plugins
mkfifo /tmp/vm/peer.in
"$BUILD/tests/integration/kubelet_peer/rocenet-kubelet-peer" /tmp/vm/kubelet/device-plugins \
  < /tmp/vm/peer.in > /tmp/vm/peer.out 2>/tmp/vm/peer.err &
peer=$!
exec 3> /tmp/vm/peer.in
"$BUILD/plugins/device/rocenet-device-plugin" --daemon-socket=$SOCKET \
  --kubelet-dir=/tmp/vm/kubelet/device-plugins --devinfo-dir=/tmp/vm/devinfo \
  --pod-resources-socket= > /tmp/vm/plugin.log 2>&1 &
plugin=$!
healthy_device() { grep -q '"health":"Healthy"' /tmp/vm/peer.out; }
wait_for 30 healthy_device || status=1
id=$(rocectl ports -o json | tr -d ' \n' | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
# allocate LABEL: one Allocate of the port, its answer after "vm: LABEL ".
allocate() {
  before=$(grep -c '"event":"allocate"' /tmp/vm/peer.out)
  echo "allocate $id" >&3
  answered() { [ "$(grep -c '"event":"allocate"' /tmp/vm/peer.out)" -gt "$before" ]; }
  wait_for 15 answered || status=1
  say "$1 $(grep '"event":"allocate"' /tmp/vm/peer.out | tail -1)"
}
step "Allocate without rdma_ucm, then with it"
allocate allocate-without-ucm
say "rdma_cm-without-ucm $(ls /dev/infiniband | tr '\n' ' ')"
echo "delete pod-1" >&3
modprobe rdma_ucm || failed "modprobe rdma_ucm"
say "rdma_cm-with-ucm $(ls /dev/infiniband | tr '\n' ' ')"
allocate allocate-with-ucm
step "the device plugin, the peer and rocenetd stopped"
echo quit >&3
exec 3>&-
kill "$plugin"; wait "$plugin"
say "plugin exit $?"
wait "$peer"

stop_rocenetd
[ $status -eq 0 ] || { daemon_log; sed 's/^/vm: plugin: /' /tmp/vm/plugin.log | tail -20; }
exit $status
