#!/bin/sh
# Transfers under faults on the fabric (tests/vm/faults.sh: a veth pair with
# rxef0 for the clients and rxef1 for the server; netem on RoCE only).
# Each profile runs FAULT_PROCS hipobj-soak processes of FAULT_STREAMS
# streams x FAULT_PER transfers, GET and PUT, 1 B..4 MiB, every byte
# verified and the guard bytes around each range checked after every
# transfer, failed ones included:
#   none, loss 0.1%, loss 1%, delay 10ms, duplicate 5%: zero failed
#     transfers; each profile proven applied (netem's drops, latency up by
#     the delay, duplicate requests counted by the rxe responders);
#   loss 5%: beyond what retry_cnt 6 absorbs for a 1 MiB chunk (256
#     packets: about 13 losses a pass): failures allowed, but clean
#     (hipObjRdmaError within the bound; no wrong byte);
#   delay 10ms 5ms (jitter, which reorders): KNOWN BUG, transfers stall
#     until the transfer timeout (both sides wait for the other's
#     message); failures allowed but must be clean, and are counted;
#   blackout: 100% loss for FAULT_BLACKOUT s in the middle of a run: what
#     it hits fails cleanly within its bound (hipObjRdmaError, or 503
#     while the server's slots wait out the readies that died, at most
#     its --rdma-timeout-ms), later transfers succeed, nothing restarted.
# Also checks that a RoCE profile leaves HTTP alone and that an HTTP
# profile applies. Prints each profile's transfer count and result.
. /payload/lib.sh
. /payload/faults.sh
: "${FAULT_PROCS:=2}" "${FAULT_STREAMS:=2}" "${FAULT_PER:=60}" "${FAULT_BLACKOUT:=4}"
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
profile() {
  local name=$1 per=$2 win=${3:-} more=${4:-} i pids="" t0
  t0=$(date +%s)
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
  P50=$(sed -n 's/.*latency p50 \([0-9.]*\) ms.*/\1/p' /tmp/fault.all.log | sort -n | tail -n1)
  local worst
  worst=$(sed -n 's/.*longest failure \([0-9.]*\) ms (bound \([0-9.]*\) ms).*/\1 of \2/p' /tmp/fault.all.log |
    sort -n | tail -n1)
  R=$(sum 's/.*, \([0-9]*\) refused (503).*/\1/p')
  echo "profile $name: $T transfers, $F failed, $W failed in the window ($R of them 503)," \
    "$X wrong or unclean,"\
    "p50 ${P50} ms, $SECS s${win:+, longest failure ${worst} ms allowed, $A succeeded after it}"
  # what went wrong, once per kind (QP numbers and sizes folded)
  grep -v '^soak: pid' /tmp/fault.all.log |
    sed 's/QP 0x[0-9a-f]*/QP _/; s/of [0-9]* bytes/of N bytes/; s/after [0-9]* ms/after T ms/' |
    sort | uniq -c | sort -rn | head -n 12
  [ "$T" -ge $((FAULT_PROCS * FAULT_STREAMS * per)) ] || fail "$name: only $T transfers"
  [ -z "$win" ] || no_failure "$name, outside the window"
  [ "$X" -eq 0 ] || fail "$name: $X wrong bytes or unclean failures"
}
drops() { echo $(( $(fault_dropped hof0) + $(fault_dropped hof1) )); }
# KNOWN BUG (docs/performance.md, "A kept connection broken between
# transfers"): under loss or delay, a stray retransmitted request from the
# server can reach a kept client QP after its window was invalidated; rxe
# then moves that QP to error without the client seeing it, and its next
# transfer fails cleanly at the window bind ("window bind completion failed:
# work request flushed"). Seen in about 1 run in 3. Tolerated once per
# profile and only with that signature, reported as XFAIL; any other
# failure, a second one, or a wrong byte still fails.
no_failure() { # NAME: F must be 0, or 1 with the known signature
  [ "$F" -eq 0 ] && return 0
  local k
  k=$(grep -c "window bind completion failed: work request flushed" /tmp/fault.all.log)
  if [ "$F" -eq 1 ] && [ "$k" -ge 1 ] && [ "$X" -eq 0 ]; then
    echo "XFAIL: $1: 1 transfer failed at the window bind of a kept connection (known bug)"
    return 0
  fi
  fail "$1: $F failed"
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
  d=$(drops); echo "netem dropped $d RoCE packets; rxe retries: $(( $(fault_rxe_counter completer_retry_err) - r0 ))"
  [ "$d" -gt 0 ] || fail "loss $loss: netem dropped nothing"
  no_failure "loss $loss"
done

echo "== delay 10ms"
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

echo "== loss 5%: beyond the retry budget of a 1 MiB chunk; failures must be clean"
rex0=$(fault_rxe_counter retry_exceeded_err)
touch /tmp/fault-window
fault_roce loss 5%
profile "loss 5%" "$FAULT_PER" window=/tmp/fault-window
rm -f /tmp/fault-window
d=$(drops)
echo "netem dropped $d RoCE packets; rxe retries exhausted: $(( $(fault_rxe_counter retry_exceeded_err) - rex0 ))"
[ "$d" -gt 0 ] || fail "loss 5%: netem dropped nothing"
fault_clear

echo "== delay 10ms 5ms: jitter reorders; KNOWN BUG: transfers stall to the timeout"
ooo0=$(fault_rxe_counter out_of_seq_request)
touch /tmp/fault-window
fault_roce delay 10ms 5ms
procs=$FAULT_PROCS; FAULT_PROCS=1   # each stall costs the transfer timeout
profile "delay 10ms 5ms" 15 window=/tmp/fault-window
FAULT_PROCS=$procs
rm -f /tmp/fault-window
ooo=$(( $(fault_rxe_counter out_of_seq_request) - ooo0 ))
echo "out-of-sequence requests at the rxe responders: $ooo; XFAIL: $W transfers stalled"
[ "$ooo" -gt 0 ] || fail "jitter: nothing arrived out of sequence"
fault_clear

# The blackout starts 3 s into the run; the window lasts until the server's
# ready timeout has expired the readies it killed; the run goes on after.
win=$((FAULT_BLACKOUT + READY_TIMEOUT_S + 2))
echo "== blackout: 100% loss for $FAULT_BLACKOUT s after 3 s; window $win s; the run goes on 8 s after it"
( sleep 3; fault_blackout "$FAULT_BLACKOUT" /tmp/fault-blackout $((READY_TIMEOUT_S + 2))
  wait $FAULT_BLACKOUT_PID ) &
bo=$!
profile "blackout ${FAULT_BLACKOUT}s" 10 window=/tmp/fault-blackout after=8
wait $bo
[ "$F" -eq 0 ] || [ "$F" -eq 1 ] || fail "blackout: $F failed outside it" # 1: no_failure judged it
[ "$W" -gt 0 ] || fail "blackout: it hit no transfer"
[ "$A" -gt 0 ] || fail "blackout: no transfer succeeded after it"
echo "server connections: $(curl -s "$ENDPOINT/_hipobj/stats" | sed -n 's/.*"connections":\({[^}]*}[^}]*}\).*/\1/p')"
stop_server
exit $rc
