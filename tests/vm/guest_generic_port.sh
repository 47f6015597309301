# SPDX-License-Identifier: Apache-2.0
# In the guest: a generic RoCE NIC node on a real PCI NIC (no fake sysfs).
# The first NIC of the wire is the node's port; the second is the switch
# port, moved into the namespace "sw" where the real lldpd announces
# "no-alert 10.200.1.2/30". rocenetd, selecting ports by the ethtool driver
# name, must find the port in the real sysfs, bring it up (drivers
# register their netdevs down) and give it 10.200.1.1/30 from LLDP.
# Set by the caller: BUILD (the build tree), DRIVER, PORT_MAC, SWITCH_MAC.
set -u
say() { echo "vm: $*"; }
byname() { for d in /sys/class/net/*; do if [ "$(cat "$d/address")" = "$1" ]; then basename "$d"; fi; done; }

modprobe "$DRIVER" || { say "modprobe $DRIVER failed"; exit 2; }
port=$(byname "$PORT_MAC"); sw=$(byname "$SWITCH_MAC")
[ -n "$port" ] && [ -n "$sw" ] || { say "NICs not found: port=$port switch=$sw"; exit 2; }
say "port $port ($(basename "$(readlink -f /sys/class/net/$port/device/driver)")), flags $(cat /sys/class/net/$port/flags)"

ip netns add sw
ip link set "$sw" netns sw
ip -n sw link set "$sw" name swp1
ip -n sw link set lo up
ip -n sw addr add 10.200.1.2/30 dev swp1
ip -n sw link set swp1 up
mkdir -p /run/lldpd /tmp/vm
cat > /tmp/vm/lldpd.conf <<CONF
configure system hostname leaf-vm
configure lldp tx-interval 1
configure ports swp1 lldp portidsubtype local Ethernet1/1 description "no-alert 10.200.1.2/30"
CONF
ip netns exec sw lldpd -d -u /run/lldpd-sw.socket -p /run/lldpd-sw.pid -I swp1 \
  -O /tmp/vm/lldpd.conf > /tmp/vm/lldpd.log 2>&1 &

"$BUILD/daemon/server/rocenetd" --drivers="$DRIVER" --gaudi=false --socket=/run/rocenet/rocenetd.sock \
  --state-dir=/tmp/vm/state --runtime-dir=/run/rocenet-rt --metrics-address= \
  --hcl-dir=/tmp/vm/hcl > /tmp/vm/rocenetd.log 2>&1 &
daemon=$!

i=0
while [ $i -lt 240 ]; do
  if ip -4 -o addr show dev "$port" | grep -q "10.200.1.1/30"; then break; fi
  sleep 0.25; i=$((i + 1))
done
say "after $((i / 4)) s: $(ip -4 -o addr show dev "$port" | awk '{print $4}')"
say "link: $(ip -o link show dev "$port" | sed 's/.*<\([^>]*\)>.*/\1/')"
ip route show | sed 's/^/vm: route /'
"$BUILD/client/rocectl" --socket=/run/rocenet/rocenetd.sock ports -o json | tr -d '\n ' | sed 's/^/vm: ports /'
echo
status=0
ip -4 -o addr show dev "$port" | grep -q "10.200.1.1/30" || status=1
ping -c 1 -W 3 10.200.1.2 > /dev/null || { say "no ping to the switch"; status=1; }
kill "$daemon"; wait "$daemon"
say "rocenetd exit $?"
[ $status -eq 0 ] || sed 's/^/vm: rocenetd: /' /tmp/vm/rocenetd.log | tail -30
exit $status
