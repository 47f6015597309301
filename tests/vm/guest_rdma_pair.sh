# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh source-path=SCRIPTDIR
# In each of two guests: a node whose one port is a real NIC with rdma_rxe,
# running rocenetd and rocenet-diagd. The guests are joined by a cable (a
# qemu socket netdev): node a's guest also holds the switch, a namespace
# routing between swp1 (wired to a's port, 10.200.1.2/30) and swp2 (the
# cable to b's port, 10.200.2.2/30), with the real lldpd announcing each
# port's address. Node a runs the RDMA stage of diag over both nodes (a
# ring of a -> b -> a: perftest's ib_write_bw, then ib_write_lat, each
# server end started by the peer's diagd); then again with 10 % loss on the
# cable (netem on the switch's swp2), printing node a's port (RDMA state,
# hw_counters, transport events) before and after, the lossy run's result
# (with the counters that moved during it) and its health; then it tells b
# it is done.
# Set by the caller: BUILD, HERE, ROLE (a or b), PORT_MAC, SECRET, and for
# a: SWITCH_MAC (swp1's NIC), UPLINK_MAC (swp2's NIC: the cable).
set -u
# shellcheck source=guest_lib.sh
. "$HERE/guest_lib.sh"

step "load e1000e and rdma_rxe, find the NICs by MAC"
modprobe e1000e && modprobe rdma_rxe || { failed "modprobe e1000e rdma_rxe"; exit 2; }
port=$(byname "$PORT_MAC")
[ -n "$port" ] || { failed "NIC $PORT_MAC not found"; exit 2; }
if [ "$ROLE" = a ]; then
  address=10.200.1.1; peer=10.200.2.1
  switch_port sw "$(byname "$SWITCH_MAC")" swp1 10.200.1.2/30 "no-alert 10.200.1.2/30"
  switch_port sw "$(byname "$UPLINK_MAC")" swp2 10.200.2.2/30 "no-alert 10.200.2.2/30"
  switch_lldpd sw
else
  address=10.200.2.1; peer=10.200.1.1
fi
rdma link add rxe0 type rxe netdev "$port" || { failed "rdma link add"; exit 2; }
step "rocenetd and diagd up: the port addressed, its GID index 1"
# Samples every second (half --errors-interval): RetransmitsRising sees the
# lossy run while it lasts.
start_rocenetd --drivers=e1000e --gaudi=false --errors-interval=2s
start_diagd "$ROLE" "$SECRET"
status=0
wait_for 90 has_address "$port" "$address/30" || status=1
has_gid() { rocectl ports -o json | tr -d ' \n' | grep -q '"gid_index":1,'; }
wait_for 20 has_gid || status=1

if [ "$ROLE" = a ]; then
  # b is addressed, routed and its RDMA device has its GID when its port
  # answers, and its diagd listens on the address soon after: a stage that
  # finds no peer is tried again.
  step "node b's port reachable"
  wait_for 120 ping -c 1 -W 1 "$peer" || status=1
  for test in write_bw write_lat; do
    # Soft RoCE under emulation: a round trip takes 20 ms or more, so few
    # of them, and a longer bound (--duration plus 10 s) for their start.
    step "rocectl diag rdma --test $test over a -> b -> a"
    extra="--duration 2s"; [ $test = write_lat ] && extra="--iterations 50 --duration 5s"
    start=$(now_ms)
    while :; do
      out=$(rocectl diag rdma --nodes "$address,$peer" --test $test \
        --min-fraction 0 $extra --timeout 120s -o json 2>/tmp/vm/diag.err)
      rc=$?
      if [ $rc -eq 0 ] || [ $(($(now_ms) - start)) -gt 30000 ] || \
         ! grep -qi "unavailable\|refused\|no route" /tmp/vm/diag.err; then
        break
      fi
      sleep 1
    done
    say "diag-$test took $(($(now_ms) - start)) ms"
    say "diag-$test rc=$rc $(echo "$out" | tr -d '\n')"
    if [ $rc -ne 0 ]; then
      failed "rocectl diag rdma --test $test: exit status $rc"
      sed 's/^/vm: diag stderr: /' /tmp/vm/diag.err
    fi
  done
  step "10 % loss on the cable under ib_write_bw: rxe's counters move"
  say "ports-before $(rocectl ports -o json | tr -d '\n')"
  if modprobe sch_netem && ip netns exec sw tc qdisc add dev swp2 root netem loss 10%; then
    rocectl diag rdma --nodes "$address,$peer" --test write_bw --min-fraction 0 \
      --duration 3s --timeout 60s -o json > /tmp/vm/lossy.json 2> /tmp/vm/lossy.err
    say "lossy-diag rc=$?"
    # The run's result, with what the two ports' counters did meanwhile.
    say "lossy-result $(tr -d '\n' < /tmp/vm/lossy.json)"
    ip netns exec sw tc qdisc del dev swp2 root
    # The samples after the run see the loss (one a second here).
    retransmitting() { rocectl health -o json | tr -d ' \n' | grep -q '"type":"RetransmitsRising"'; }
    wait_for 30 retransmitting || say "RetransmitsRising not raised within 30 s"
    say "ports-after $(rocectl ports -o json | tr -d '\n')"
    say "health-after $(rocectl health -o json | tr -d '\n')"
  else
    failed "netem loss on swp2"
  fi
  echo "done" | busybox nc -w 5 "$peer" 5999 || say "could not tell b"
else
  step "serving node a's stage until it says it is done"
  # Until a is done with the stage (or gives up).
  timeout 400 busybox nc -l -p 5999 > /dev/null || failed "a never said it was done"
fi

step "diagd and rocenetd stopped"
kill "$diagd"; wait "$diagd"
say "diagd exit $?"
stop_rocenetd
grep -iE "rdma|perftest|ib_write" /tmp/vm/diagd.log | tail -8 | sed 's/^/vm: diagd: /'
[ $status -eq 0 ] || { daemon_log 20; sed 's/^/vm: diagd: /' /tmp/vm/diagd.log | tail -20; }
exit $status
