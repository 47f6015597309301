# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh source-path=SCRIPTDIR
# In the guest: a generic RoCE NIC node on a real PCI NIC (no fake sysfs).
# The first NIC of the wire is the node's port; the second is the switch
# port, moved into the namespace "sw" where the real lldpd announces
# "no-alert 10.200.1.2/30". rocenetd, selecting ports by the ethtool driver
# name, must find the port in the real sysfs, bring it up (drivers register
# their netdevs down) and give it 10.200.1.1/30 from LLDP. Then the switch
# sends frames longer than the port's MTU: the NIC drops and counts them,
# and rocenetd must see them in the driver's ethtool statistics (the MAC
# counters) and raise ErrorsRising.
# Set by the caller: BUILD, HERE, DRIVER, PORT_MAC, SWITCH_MAC.
set -u
# shellcheck source=guest_lib.sh
. "$HERE/guest_lib.sh"

step "load $DRIVER, find the NICs by MAC"
modprobe "$DRIVER" || { failed "modprobe $DRIVER"; exit 2; }
port=$(byname "$PORT_MAC"); sw=$(byname "$SWITCH_MAC")
[ -n "$port" ] && [ -n "$sw" ] || { failed "NICs not found: port=$port switch=$sw"; exit 2; }
say "port $port ($(basename "$(readlink -f /sys/class/net/$port/device/driver)")), flags $(cat /sys/class/net/$port/flags)"

step "the switch and rocenetd up: the port addressed from LLDP"
switch_up "$sw" sw 10.200.1.2/30 "no-alert 10.200.1.2/30"
start_rocenetd --drivers="$DRIVER" --gaudi=false --errors-interval=1s \
  --metrics-address=127.0.0.1:50152
status=0
wait_for 60 has_address "$port" 10.200.1.1/30 || status=1
say "link: $(ip -o link show dev "$port" | sed 's/.*<\([^>]*\)>.*/\1/')"
ip route show | sed 's/^/vm: route /'
show ports ports
step "the switch reached, the MAC counters and health read"
ping -c 1 -W 3 10.200.1.2 > /dev/null || failed "no ping to the switch"
metrics() { curl -s http://127.0.0.1:50152/metrics | grep "^rocenet_port_mac_.*device=\"$port\"" | sed 's/^/vm: metric /'; }
# e1000e refreshes its statistics from its watchdog (every 2 s, once the
# link is up), and rocenetd reads them at its next sample: wait for the
# bytes the LLDP frames and the ping brought.
counted() { curl -s http://127.0.0.1:50152/metrics | grep "^rocenet_port_mac_receive_bytes_total{device=\"$port\"}" | grep -qv ' 0$'; }
wait_for 20 counted || say "no MAC bytes counted within 20 s"
metrics; show health-before health

step "4 kB frames to the port's 1500 MTU: ErrorsRising"
# Frames of 4 kB where the port's MTU is 1500: the NIC drops every one and
# counts it (e1000e: rx_long_length_errors, within rx_errors).
ip -n sw link set swp1 mtu 9000
ip -n sw neigh replace 10.200.1.1 lladdr "$PORT_MAC" dev swp1
ip netns exec sw ping -q -i 0.2 -s 4000 -w 8 10.200.1.1 > /dev/null 2>&1 &
flood=$!
rising() { rocectl health -o json | grep -q ErrorsRising; }
wait_for 20 rising || status=1
wait "$flood"
show health health
metrics

step "rocenetd stopped"
stop_rocenetd
[ $status -eq 0 ] || daemon_log
exit $status
