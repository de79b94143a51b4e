#!/bin/sh
# Transfers under faults on the fabric (tests/vm/faults.sh: a veth pair with
# rxef0 for the clients and rxef1 for the server; netem on RoCE only).
# Each profile runs FAULT_PROCS hipobj-soak processes of FAULT_STREAMS
# streams x FAULT_PER transfers, GET and PUT, 1 B..4 MiB, every byte
# verified and the guard bytes around each range checked after every
# transfer, failed ones included. Zero failed transfers at the
# application in every profile, no exception: none, loss 0.1%, 1%, 5%,
# delay 10ms, jitter (delay 10ms 5ms), loss 1% with delay 2ms 1ms (the
# jitter reorders), duplicate 5%. Under reordering and heavy loss
# Soft-RoCE, which has no out-of-order placement, answers each packet out
# of sequence with a NAK and go-back-N, which spends the sender's retry
# count; the server engine on a software device paces (two MTUs in
# flight while rxe's retry counter moves; 16 KiB work requests and 2
# READs in flight; docs/architecture.md, "Pacing") to keep its QPs within
# it, and where rxe still runs out (its counter is printed) the library's
# retry absorbs it. On kept
# connections the server moves the payload before it answers (data
# first, docs/protocol.md section 5), so a transfer whose RDMA the server
# gave up is answered rdma-failed at once, and an attempt that failed
# for a fabric reason is retried on a new connection (HIPOBJ_RETRIES,
# section 7). Each profile prints its retries by cause
# and the server's data-first count, so the faults are seen absorbed, not
# avoided, and each is proven applied (netem's drops, latency up by the
# delay, out-of-sequence and duplicate requests counted by rxe).
#   blackout: 100% loss for FAULT_BLACKOUT s in the middle of a run: what
#     it hits fails cleanly within its bound (hipObjRdmaError, or 503
#     while the server's slots wait out the readies that died, at most
#     its --rdma-timeout-ms), later transfers succeed, nothing restarted.
# Also checks that a RoCE profile leaves HTTP alone and that an HTTP
# profile applies. Prints each profile's transfer count and result.
. /payload/lib.sh
. /payload/faults.sh
: "${FAULT_PROCS:=2}" "${FAULT_STREAMS:=2}" "${FAULT_PER:=60}" "${FAULT_BLACKOUT:=4}"
# The client's deadlines are the defaults: a transfer still moving at its
# deadline gets more time (docs/protocol.md, section 7), so a slow fabric
# needs no longer timeout.
READY_TIMEOUT_S=10   # the server's --rdma-timeout-ms default
rc=0
fail() { echo "FAIL: $*"; rc=1; }
ms_now() { awk '{printf "%d", $1 * 1000}' /proc/uptime; }

fault_fabric_up || exit 1
RXE_DEV=$FAULT_SERVER_DEV start_server --rdma-qps 32 || exit 1
hipobj-vmtest "$ENDPOINT" mkbucket soak >/dev/null
PORT=${ENDPOINT##*:}
export RXE_DEV=$FAULT_CLIENT_DEV

# profile NAME PER [window=FILE [after=S]]: FAULT_PROCS soaks of FAULT_STREAMS streams
# x PER transfers; sets T (transfers), F (failed outside a window),
# W (failed inside it), X (wrong or unclean), A (successes after the
# window), P50 (ms, the worst process's), SECS; prints one line.
seed=100
data_first() { # the server's transfers run before their answer, so far
  curl -s "$ENDPOINT/_hipobj/stats" | sed -n 's/.*"data_first":\([0-9]*\).*/\1/p'
}
pace_shrinks() { # the server's pacing cuts so far (docs/architecture.md)
  curl -s "$ENDPOINT/_hipobj/stats" | sed -n 's/.*"pace_shrinks":\([0-9]*\).*/\1/p'
}
profile() {
  local name=$1 per=$2 win=${3:-} more=${4:-} i pids="" t0
  t0=$(date +%s)
  DF0=$(data_first)
  i=0
  while [ $i -lt "$FAULT_PROCS" ]; do
    seed=$((seed + 1))
    hipobj-soak "$ENDPOINT" "$FAULT_STREAMS" "$per" $seed $win $more >/tmp/fault.p$i.log 2>&1 &
    pids="$pids $!"
    i=$((i + 1))
  done
  for p in $pids; do wait $p; done
  SECS=$(( $(date +%s) - t0 ))
  cat /tmp/fault.p*.log > /tmp/fault.all.log; rm -f /tmp/fault.p*.log
  sum() { sed -n "$1" /tmp/fault.all.log | awk '{s += $1} END {print s + 0}'; }
  T=$(sum 's/^soak: pid [0-9]*: \([0-9]*\) transfers.*/\1/p')
  F=$(sum 's/.* transfers, \([0-9]*\) failed.*/\1/p')
  W=$(sum 's/.* failed, \([0-9]*\) during restart.*/\1/p')
  X=$(( $(sum 's/.* restart, \([0-9]*\) wrong.*/\1/p') + $(sum 's/.*, \([0-9]*\) unclean.*/\1/p') ))
  A=$(sum 's/.*; \([0-9]*\) after the window.*/\1/p')
  MAX=$(sed -n 's/.*latency p50 .*, max \([0-9]*\)\.[0-9]* ms.*/\1/p' /tmp/fault.all.log | sort -n | tail -n1)
  P50=$(sed -n 's/.*latency p50 \([0-9.]*\) ms.*/\1/p' /tmp/fault.all.log | sort -n | tail -n1)
  local worst
  worst=$(sed -n 's/.*longest failure \([0-9.]*\) ms (bound \([0-9.]*\) ms).*/\1 of \2/p' /tmp/fault.all.log |
    sort -n | tail -n1)
  R=$(sum 's/.*, \([0-9]*\) refused (503).*/\1/p')
  local rf rs rt rk kb ps pf
  rf=$(sum 's/.*retries: \([0-9]*\) fabric.*/\1/p')
  rs=$(sum 's/.* \([0-9]*\) server rdma.*/\1/p')
  rt=$(sum 's/.* \([0-9]*\) stalled.*/\1/p')
  rk=$(sum 's/.* \([0-9]*\) kept broken.*/\1/p')
  kb=$(sum 's/.*; \([0-9]*\) kept connections replaced.*/\1/p')
  ps=$(sum 's/.*probes: \([0-9]*\) sent.*/\1/p')
  pf=$(sum 's/.*probes: [0-9]* sent, \([0-9]*\) failed.*/\1/p')
  RTOT=$((rf + rs + rt + rk))
  RETRIES="retries: $rf fabric, $rs server rdma, $rt stalled, $rk kept broken; $kb kept connections replaced before use; probes: $ps sent, $pf failed"
  echo "profile $name: $T transfers, $F failed, $W failed in the window ($R of them 503)," \
    "$X wrong or unclean,"\
    "p50 ${P50} ms, $SECS s${win:+, longest failure ${worst} ms allowed, $A succeeded after it}"
  echo "profile $name: $RETRIES; server: $(( $(data_first) - DF0 )) data first"
  # what went wrong, once per kind (QP numbers and sizes folded)
  grep -v '^soak: pid' /tmp/fault.all.log |
    sed 's/QP 0x[0-9a-f]*/QP _/; s/of [0-9]* bytes/of N bytes/; s/after [0-9]* ms/after T ms/' |
    sort | uniq -c | sort -rn | head -n 12
  [ "$T" -ge $((FAULT_PROCS * FAULT_STREAMS * per)) ] || fail "$name: only $T transfers"
  [ -z "$win" ] || no_failure "$name, outside the window"
  [ "$X" -eq 0 ] || fail "$name: $X wrong bytes or unclean failures"
}
drops() { echo $(( $(fault_dropped hof0) + $(fault_dropped hof1) )); }
no_failure() { # NAME: zero failed transfers at the application
  [ "$F" -eq 0 ] || fail "$1: $F failed"
}
# p50 of one stream's small transfers (latency, not load): LAT
probe() {
  LAT=$(hipobj-soak "$ENDPOINT" 1 30 $((seed + 50)) 2>&1 |
    sed -n 's/.*latency p50 \([0-9.]*\) ms.*/\1/p')
  echo "latency probe (1 stream, 30 transfers): p50 $LAT ms"
}

echo "== HTTP is untouched by a RoCE profile, and an HTTP profile applies"
fault_roce loss 100%
t0=$(ms_now)
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$ENDPOINT/_hipobj/stats")
ms=$(( $(ms_now) - t0 ))
echo "curl under 100% RoCE loss: HTTP $code in $ms ms"
# (lost HTTP packets would cost TCP's 1 s retransmission timeout or more;
# a loaded VM needs a few hundred ms for curl itself)
[ "$code" = 200 ] && [ $ms -lt 3000 ] || fail "HTTP slowed or broken by a RoCE profile"
fault_clear roce
fault_http "$PORT" delay 200ms
t0=$(ms_now)
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$ENDPOINT/_hipobj/stats")
ms=$(( $(ms_now) - t0 ))
echo "curl under a 200 ms HTTP delay: HTTP $code in $ms ms; lo netem: $(fault_netem_stat lo)"
[ "$code" = 200 ] && [ $ms -ge 400 ] || fail "the HTTP profile did not apply"
fault_clear http

echo "== none (the reference)"
fault_clear
probe
LAT_NONE=$LAT
profile none "$FAULT_PER"
[ "$F" -eq 0 ] || fail "none: $F failed"

for loss in 0.1% 1%; do
  echo "== loss $loss"
  r0=$(fault_rxe_counter completer_retry_err)
  fault_roce loss $loss
  profile "loss $loss" "$FAULT_PER"
  d=$(drops); n=$(( $(fault_sent hof0) + $(fault_sent hof1) ))
  echo "netem dropped $d of $n RoCE packets; rxe retries: $(( $(fault_rxe_counter completer_retry_err) - r0 ))"
  # applied: drops seen, or (too few packets to expect one: under 20
  # expected, P(none) above e^-20) the netem carries the loss
  if awk -v n="$n" -v l="${loss%\%}" 'BEGIN {exit !(n * l / 100 >= 20)}'; then
    [ "$d" -gt 0 ] || fail "loss $loss: netem dropped nothing of $n packets"
  else
    $TC qdisc show dev hof0 | grep -q "loss $loss" || fail "loss $loss: no netem with the loss"
  fi
  no_failure "loss $loss"
done

echo "== delay 10ms"
probe   # the reference again, right before: the VM's load moves it
LAT_NONE=$LAT
fault_roce delay 10ms
probe
profile "delay 10ms" "$FAULT_PER"
echo "p50 of the probe $LAT ms against $LAT_NONE ms without"
no_failure delay
awk -v a="$LAT" -v b="$LAT_NONE" 'BEGIN {exit !(a >= b + 10)}' ||
  fail "delay: p50 $LAT ms is not 10 ms above $LAT_NONE ms"

echo "== duplicate 5%"
dup0=$(fault_rxe_counter duplicate_request)
fault_roce duplicate 5%
profile "duplicate 5%" "$FAULT_PER"
dup=$(( $(fault_rxe_counter duplicate_request) - dup0 ))
echo "duplicate requests seen by the rxe responders: $dup"
[ "$dup" -gt 0 ] || fail "duplicate: no duplicate reached a responder"
no_failure duplicate

# hard_profile NAME PER REORDERS NETEM...: loss or reordering that makes
# rxe's go-back-N spend retries: zero failed at the application, and the
# profile proven applied (drops; REORDERS 1: out-of-sequence requests).
# Prints rxe's retries and retries exhausted, which the library absorbed.
hard_profile() {
  local name=$1 per=$2 reorders=$3 rex0 ooo0 ret0 rex ooo ps0
  shift 3
  ps0=$(pace_shrinks)
  rex0=$(fault_rxe_counter retry_exceeded_err)
  ooo0=$(fault_rxe_counter out_of_seq_request)
  ret0=$(fault_rxe_counter completer_retry_err)
  fault_roce "$@"
  profile "$name" "$per"
  rex=$(( $(fault_rxe_counter retry_exceeded_err) - rex0 ))
  ooo=$(( $(fault_rxe_counter out_of_seq_request) - ooo0 ))
  echo "netem dropped $(drops) RoCE packets; out-of-sequence requests at the rxe responders: $ooo; rxe retries $(( $(fault_rxe_counter completer_retry_err) - ret0 )), retries exhausted $rex (absorbed by the library's retries); server pacing cuts $(( $(pace_shrinks) - ps0 ))"
  [ "$(drops)" -gt 0 ] || [ "$reorders" = 1 ] || fail "$name: netem dropped nothing"
  [ "$ooo" -gt 0 ] || [ "$reorders" = 0 ] || fail "$name: nothing arrived out of sequence"
  no_failure "$name"
  fault_clear
}
# loss 5%: go-back-N resends from each lost packet.
echo "== loss 5%"
hard_profile "loss 5%" "$FAULT_PER" 0 loss 5%

echo "== loss 1% delay 2ms 1ms: mild loss with jitter (reorders)"
hard_profile "loss 1% delay 2ms 1ms" 30 1 loss 1% delay 2ms 1ms
echo "== delay 10ms 5ms: jitter reorders"
hard_profile "delay 10ms 5ms" 30 1 delay 10ms 5ms

# The blackout starts 3 s into the run; the window lasts until the server's
# ready timeout has expired the readies it killed; the run goes on after.
win=$((FAULT_BLACKOUT + READY_TIMEOUT_S + 2))
echo "== blackout: 100% loss for $FAULT_BLACKOUT s after 3 s; window $win s; the run goes on 8 s after it"
( sleep 3; fault_blackout "$FAULT_BLACKOUT" /tmp/fault-blackout $((READY_TIMEOUT_S + 2))
  wait $FAULT_BLACKOUT_PID ) &
bo=$!
profile "blackout ${FAULT_BLACKOUT}s" 10 window=/tmp/fault-blackout after=8
wait $bo
[ "$F" -eq 0 ] || fail "blackout: $F failed outside it"
# what it hit failed cleanly in the window, was retried to success, or
# outlasted it (the server's QPs retry through it, section 7)
echo "blackout: longest transfer ${MAX:-0} ms"
[ "$W" -gt 0 ] || [ "$RTOT" -gt 0 ] || [ "${MAX:-0}" -ge $((FAULT_BLACKOUT * 500)) ] ||
  fail "blackout: it hit no transfer"
[ "$A" -gt 0 ] || fail "blackout: no transfer succeeded after it"
echo "server connections: $(curl -s "$ENDPOINT/_hipobj/stats" | sed -n 's/.*"connections":\({[^}]*}[^}]*}\).*/\1/p')"
stop_server
exit $rc
