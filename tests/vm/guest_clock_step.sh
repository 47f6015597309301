# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh source-path=SCRIPTDIR
# In the guest: rocenetd's timers across a wall clock that is set, on the
# real kernel. The guest's own clock is set (date -s), which a test on the
# host must never do: the host's CLOCK_REALTIME is every process's, and a
# time namespace offsets only CLOCK_MONOTONIC and CLOCK_BOOTTIME, not the
# wall clock. Intervals here are taken from /proc/uptime (the boot clock),
# never from date.
#
# The node's port hears the real lldpd (TTL 4 s: tx-interval 1, hold 4).
#  1. The wall clock set back 10 minutes, then the switch silenced (its
#     frames dropped on the way out, so no shutdown LLDPDU either): the
#     neighbor must age out at its TTL, and the counters must go on being
#     sampled (rocenetd's timers on the wall clock would wait the 10
#     minutes).
#  2. The switch back, then the wall clock set forwards 10 minutes: no
#     neighbor that is there may age out (timers on the wall clock would
#     fire at once).
# Set by the caller: BUILD, HERE, DRIVER, PORT_MAC, SWITCH_MAC.
set -u
# shellcheck source=guest_lib.sh
. "$HERE/guest_lib.sh"

# Milliseconds of the boot clock.
boot_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }
# until_boot SECONDS COMMAND...: as wait_for, timed on the boot clock;
# prints how long it took, in ms, or fails after SECONDS.
until_boot() {
  start=$(boot_ms); end=$((start + $1 * 1000)); shift
  while :; do
    if "$@" > /dev/null 2>&1; then
      echo $(($(boot_ms) - start))
      return 0
    fi
    [ "$(boot_ms)" -lt $end ] || break
    sleep 0.25
  done
  echo -1
  return 1
}
# holds SECONDS COMMAND...: COMMAND succeeds at every look for SECONDS of
# the boot clock; prints how many looks, or -1 at the first that failed.
holds() {
  looks=0; end=$(($(boot_ms) + $1 * 1000)); shift
  while [ "$(boot_ms)" -lt $end ]; do
    "$@" > /dev/null 2>&1 || { echo -1; return 1; }
    looks=$((looks + 1))
    sleep 0.25
  done
  echo $looks
}
metric() {
  curl -s http://127.0.0.1:50152/metrics | grep "^$1{device=\"$port\"" | awk '{ print $2 }'
}
neighbors() { rocectl neighbors -o json | grep -c '"chassis_id"'; }
has_neighbor() { [ "$(neighbors)" -ge 1 ]; }
no_neighbor() { [ "$(neighbors)" -eq 0 ]; }

step "load $DRIVER, find the NICs by MAC"
modprobe "$DRIVER" || { failed "modprobe $DRIVER"; exit 2; }
port=$(byname "$PORT_MAC"); sw=$(byname "$SWITCH_MAC")
[ -n "$port" ] && [ -n "$sw" ] || { failed "NICs not found: port=$port switch=$sw"; exit 2; }

step "the switch and rocenetd up: the port addressed, its neighbor heard"
switch_up "$sw" sw 10.200.1.2/30 "no-alert 10.200.1.2/30"
start_rocenetd --drivers="$DRIVER" --gaudi=false --errors-interval=2s \
  --metrics-address=127.0.0.1:50152
status=0
wait_for 60 has_address "$port" 10.200.1.1/30 || status=1
wait_for 20 has_neighbor || status=1

step "the wall clock set back 10 minutes, the switch silenced"
say "wall before: $(date -u +%FT%TZ)"
date -s "@$(($(date +%s) - 600))" > /dev/null || failed "date -s"
say "wall after: $(date -u +%FT%TZ)"
# Every frame the switch port sends is dropped: lldpd goes on, unheard.
ip netns exec sw tc qdisc add dev swp1 root netem loss 100% ||
  failed "tc netem on the switch port"
say "aged-out-ms $(until_boot 30 no_neighbor)"
# The counters: a sample reads the link's packets, which a ping sends.
before=$(metric rocenet_port_transmit_packets_total)
ping -q -c 3 -i 0.2 10.200.1.2 > /dev/null 2>&1
moved() { [ "$(metric rocenet_port_transmit_packets_total)" != "$before" ]; }
say "sampled-ms $(until_boot 30 moved)"
say "ageouts-after-backward-step $(metric rocenet_lldp_ageouts_total)"

step "the switch back, the wall clock set forwards 10 minutes"
ip netns exec sw tc qdisc del dev swp1 root
wait_for 20 has_neighbor || status=1
ageouts=$(metric rocenet_lldp_ageouts_total)
date -s "@$(($(date +%s) + 1200))" > /dev/null || failed "date -s"
say "wall after: $(date -u +%FT%TZ)"
same_ageouts() { [ "$(metric rocenet_lldp_ageouts_total)" = "$ageouts" ] && has_neighbor; }
say "kept-looks $(holds 8 same_ageouts)"
say "ageouts-before-forward-step $ageouts"
say "ageouts-after-forward-step $(metric rocenet_lldp_ageouts_total)"

step "rocenetd stopped"
stop_rocenetd
[ $status -eq 0 ] || daemon_log
exit $status
