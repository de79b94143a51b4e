#!/bin/sh
# Rail failover on real verbs (issue #22, "Rail health"): t23's two-rail
# fabric (tests/vm/rails.sh), hipobj-test-server --nic rxs0,rxs1, the
# clients HIPOBJ_NIC=rxc0,rxc1. Two phases, each FO_PROCS hipobj-soak
# processes of FO_STREAMS streams (GET and PUT, 1 B..4 MiB, every byte
# verified), with rail-watch (each rail's state changes as the client saw
# them, with the time since boot); FAIL_AT s in, rail 1 fails, HOLD s
# later it returns, and the soaks go on AFTER_S s once every process saw
# it back:
#   link:      ip link set hr10 down (the client's end: both rxe ports go
#              DOWN), then up (and its routes again: the kernel flushed
#              them);
#   blackhole: netem loss 100% on RoCE (UDP 4791) leaving hr10 and hr11,
#              the ports still ACTIVE, then the netem removed.
# Checked in each phase, for every process:
#  - zero failed transfers (during the fault or not), no wrong byte (the
#    soak's own counts);
#  - rail 1 carried bytes before the fault (ip -s link);
#  - the client marked rail 1 down, not before the fault and within
#    MARK_BOUND_S of its command's return: the transfer deadline (HIPOBJ_TRANSFER_TIMEOUT_MS'
#    default), as a transfer caught on the rail is retried elsewhere only
#    once its attempt failed;
#  - rail 1 came back up after the fault ended, within FAILBACK_S
#    (HIPOBJ_FAILBACK_MS) + BACK_SLACK_S (a failed probe restarts the
#    delay at its failure, which may come up to a deadline after the
#    fault ends, and the probe itself is a transfer), and is up at the end;
#  - rail 0 was never marked;
#  - after the last process saw rail 1 back, rail 1 carried at least 25%
#    of the bytes both pairs carried (ip -s link, sampled every second),
#    over at least 2 s;
#  - blackhole: the netems dropped packets.
# A phase that failed while the guest kernel reported a soft lockup (a
# vCPU frozen under TCG, below) runs once more, and that run must pass.
# Prints the mark and return delays, the flaps (rail 1 seen up again while
# the fault was on: a transfer placed before the mark succeeding), the
# library's mark reasons, each rail's railStats and the server's per-NIC
# counters.
. /payload/lib.sh
. /payload/rails.sh
: "${FO_PROCS:=2}" "${FO_STREAMS:=4}" "${AFTER_S:=8}"
FAIL_AT=3 HOLD=8
FAILBACK_S=$(( ${HIPOBJ_FAILBACK_MS:-5000} / 1000 ))
MARK_BOUND_S=5            # HIPOBJ_TRANSFER_TIMEOUT_MS' default, in s
BACK_SLACK_S=10           # a probe failing at its deadline, then the probe
RAILS_MODULES="sch_prio sch_netem cls_u32"
WINDOW=/tmp/soak-restarting  # hipobj-soak's default window file
rc=0
fail() { echo "FAIL: $*"; rc=1; }
on_exit() { stop_server; rail_clear 1; rails_down; rm -f "$WINDOW"; }
trap on_exit EXIT

rails_fabric_up || exit 1
RXE_DEV=rxs0,rxs1 start_server --rdma-qps 32 || exit 1
grep -q 'RDMA on rxs0,rxs1' /tmp/server.$$.err || fail "the server did not open both NICs"
hipobj-vmtest "$ENDPOINT" mkbucket soak >/dev/null
export RXE_DEV=rxc0,rxc1 HIPOBJ_NIC=rxc0,rxc1

fcalc() { awk "BEGIN { printf \"%.2f\", $1 }"; }   # float arithmetic
fle() { awk "BEGIN { exit !($1 <= $2) }"; }         # $1 <= $2, floats

link_on() { rail_link 1 down; }
link_off() { rail_link 1 up; }
bh_on() { rail_blackhole 1 loss 100%; }
bh_off() { DROPPED=$(rail_dropped 1); rail_clear 1; }

# phase NAME SEED ON OFF: the soaks; ON at FAIL_AT s, OFF HOLD s later;
# they go on AFTER_S s past the moment every one of them saw rail 1 back
# (the soak's after=: its window file, /tmp/soak-restarting, exists from
# the fault until then; failures inside are counted apart and must be
# zero too), or FAILBACK_S + BACK_SLACK_S after OFF at most. Sets T_ON
# and T_ON_END (uptime, s: before and after ON), T_OFF (before OFF) and
# T_BACK (when every process had seen rail 1 back); /tmp/fo.NAME.p*.log,
# the soaks' output; /tmp/fo.NAME.samples, "uptime bytes-rail-0
# bytes-rail-1" a second.
phase() {
  local name=$1 seed=$2 on=$3 off=$4 pids="" i=0 p sampler f n
  echo "== $name: $FO_PROCS processes x $FO_STREAMS streams; rail 1 fails at $FAIL_AT s for $HOLD s; $AFTER_S s more once back"
  rm -f /tmp/fo.$name.* "$WINDOW"
  while [ $i -lt "$FO_PROCS" ]; do
    hipobj-soak "$ENDPOINT" "$FO_STREAMS" 1 $((seed + i)) after=$AFTER_S rail-watch \
      >/tmp/fo.$name.p$i.log 2>&1 &
    pids="$pids $!"
    i=$((i + 1))
  done
  (while :; do echo "$(uptime_s) $(pair 0) $(pair 1)"; sleep 1; done) >/tmp/fo.$name.samples &
  sampler=$!
  sleep $FAIL_AT
  touch "$WINDOW"
  T_ON=$(uptime_s)
  $on || fail "$name: $on failed"
  T_ON_END=$(uptime_s)
  echo "$name: rail 1 fails at $T_ON s (the command done at $T_ON_END s)"
  sleep $HOLD
  T_OFF=$(uptime_s)
  $off || fail "$name: $off failed"
  echo "$name: rail 1 restored at $T_OFF s (the command done at $(uptime_s) s)"
  i=0
  while [ $i -lt $(( (FAILBACK_S + BACK_SLACK_S) * 5 )) ]; do
    n=0
    for f in /tmp/fo.$name.p*.log; do
      [ "$(watch_summary "$f" | cut -d' ' -f2)" = - ] || n=$((n + 1))
    done
    [ $n -ge "$FO_PROCS" ] && break
    i=$((i + 1)); usleep 200000
  done
  rm -f "$WINDOW"
  T_BACK=$(uptime_s)
  echo "$name: $n of $FO_PROCS processes saw rail 1 back by $T_BACK s"
  for p in $pids; do wait $p || fail "$name: a soak process failed (exit $?)"; done
  kill $sampler; wait $sampler 2>/dev/null
  echo "$(uptime_s) $(pair 0) $(pair 1)" >>/tmp/fo.$name.samples
  cat /tmp/fo.$name.p*.log | grep -v '^hipobj: '
  echo "$name: the library's warnings:"
  grep -h '^hipobj: ' /tmp/fo.$name.p*.log | sed 's/0x[0-9a-f]*/0x_/g; s/[0-9][0-9]* bytes/N bytes/g' |
    sort | uniq -c | sort -rn | head -n 12
}

# rail 1's line of the watch and the end, per process: first mark at or
# after T_ON, first up at or after T_OFF, marks before T_ON, ups between,
# then rail 1's and rail 0's final state and marks.
watch_summary() {
  awk -v on="$T_ON" -v off="$T_OFF" '
    $4 == "rail" && $5 == 1 && $8 == "at" {
      t = $9 + 0
      if ($7 == "down") { if (t < on - 0.05) early++; else if (d == "") d = $9 }
      else if ($7 == "up") { if (t >= off) { if (u == "") u = $9 } else if (t >= on) flap++ }
    }
    $4 == "rail" && $7 == "state" { s = $8; sub(",", "", s); st[$5] = s; mk[$5] = $10 + 0 }
    END {
      printf "%s %s %d %d %s %d %s %d\n", d == "" ? "-" : d, u == "" ? "-" : u,
        early, flap, st[1] == "" ? "-" : st[1], mk[1], st[0] == "" ? "-" : st[0], mk[0]
    }' "$1"
}

# bytes of rails 0 and 1 between the first samples at or after $2 and $3
# (the last sample when none): "seconds d0 d1"
bytes_between() {
  awk -v a="$2" -v b="$3" '
    $1 + 0 >= a + 0 && t0 == "" { t0 = $1; x0 = $2; y0 = $3 }
    $1 + 0 >= b + 0 && t1 == "" { t1 = $1; x1 = $2; y1 = $3 }
    { lt = $1; lx = $2; ly = $3 }
    END {
      if (t0 == "") { t0 = lt; x0 = lx; y0 = ly }
      if (t1 == "") { t1 = lt; x1 = lx; y1 = ly }
      printf "%.1f %d %d\n", t1 - t0, x1 - x0, y1 - y0
    }' "$1"
}

check() {
  local name=$1 T F W X f d u early flap s1 m1 s0 m0 last_up=0 secs d0 d1 pct
  sum() { sed -n "$1" /tmp/fo.$name.p*.log | awk '{s += $1} END {print s + 0}'; }
  T=$(sum 's/^soak: pid [0-9]*: \([0-9]*\) transfers.*/\1/p')
  F=$(sum 's/.* transfers, \([0-9]*\) failed.*/\1/p')
  W=$(sum 's/.* failed, \([0-9]*\) during restart.*/\1/p')
  X=$(sum 's/.* restart, \([0-9]*\) wrong.*/\1/p')
  echo "$name: $T transfers, $F failed, $W failed during the fault, $X wrong; the clients retried" \
    "$(sum 's/.*retries: \([0-9]*\) fabric.*/\1/p') after an error completion or a failed connect," \
    "$(sum 's/.* \([0-9]*\) server rdma.*/\1/p') after the server's RDMA failed," \
    "$(sum 's/.* \([0-9]*\) stalled.*/\1/p') after a stall"
  [ "$T" -gt 0 ] || fail "$name: no transfer"
  [ "$F" -eq 0 ] || fail "$name: $F failed transfers"
  [ "$W" -eq 0 ] || fail "$name: $W transfers failed during the fault"
  [ "$X" -eq 0 ] || fail "$name: $X wrong"
  set -- $(bytes_between /tmp/fo.$name.samples 0 "$T_ON")
  echo "$name: before the fault: rail 0 $2 bytes, rail 1 $3 bytes in $1 s"
  [ "$3" -gt 0 ] || fail "$name: rail 1 carried nothing before the fault"
  set -- $(bytes_between /tmp/fo.$name.samples "$(fcalc "$T_ON + 1")" "$T_OFF")
  echo "$name: during the fault: rail 0 $2 bytes, rail 1 $3 bytes in $1 s"
  for f in /tmp/fo.$name.p*.log; do
    set -- $(watch_summary "$f")
    d=$1 u=$2 early=$3 flap=$4 s1=$5 m1=$6 s0=$7 m0=$8
    echo "$name: $(basename "$f"): rail 1 marked down at $d s ($( [ "$d" = - ] || fcalc "$d - $T_ON") s after the fault began," \
      "$( [ "$d" = - ] || fcalc "$d - $T_ON_END") s after its command returned)," \
      "back up at $u s ($( [ "$u" = - ] || fcalc "$u - $T_OFF") s after it ended), $flap flaps," \
      "$early marks before it; at the end rail 1 $s1 ($m1 marks), rail 0 $s0 ($m0 marks)"
    [ "$early" -eq 0 ] || fail "$name: $f: rail 1 marked down before the fault"
    if [ "$d" = - ]; then
      fail "$name: $f: the client never marked rail 1 down"
    else
      fle "$d - $T_ON_END" "$MARK_BOUND_S" || fail "$name: $f: rail 1 marked down $(fcalc "$d - $T_ON_END") s after the fault's command returned, above $MARK_BOUND_S s"
    fi
    if [ "$u" = - ]; then
      fail "$name: $f: rail 1 never came back up after the fault"
    else
      fle "$u - $T_OFF" "$((FAILBACK_S + BACK_SLACK_S))" ||
        fail "$name: $f: rail 1 back $(fcalc "$u - $T_OFF") s after the fault, above $((FAILBACK_S + BACK_SLACK_S)) s"
      fle "$u" "$last_up" || last_up=$u
    fi
    [ "$s1" = up ] || fail "$name: $f: rail 1 is $s1 at the end"
    [ "$m1" -ge 1 ] || fail "$name: $f: railStats counts no mark of rail 1"
    [ "$s0" = up ] && [ "$m0" -eq 0 ] || fail "$name: $f: rail 0 was marked ($s0, $m0 marks)"
  done
  if [ "$last_up" != 0 ]; then
    fle "$last_up" "$T_BACK" || last_up=$T_BACK
    set -- $(bytes_between /tmp/fo.$name.samples "$last_up" 999999)
    secs=$1 d0=$2 d1=$3
    pct=0
    [ $((d0 + d1)) -gt 0 ] && pct=$((d1 * 1000 / (d0 + d1)))
    echo "$name: after rail 1 came back ($last_up s): rail 0 $d0 bytes, rail 1 $d1 bytes" \
      "($((pct / 10)).$((pct % 10))%) in $secs s"
    fle 2 "$secs" || fail "$name: rail 1 came back $secs s before the end: too late to measure"
    [ "$pct" -ge 250 ] || fail "$name: rail 1 carried $((pct / 10)).$((pct % 10))% after it came back, below 25%"
  fi
}

# The guest kernel's soft-lockup reports so far. Under TCG, about one
# full-lane boot in three on this 2-core host froze a vCPU for 23 s
# inside `ip link set down` (the command took 44-49 s, against 0.3 s
# otherwise), and everything in the guest stalled past its deadlines;
# the case alone passed every time. That is the emulated host's, not the
# library's: a phase whose failures came with a new soft lockup is run
# once more, and the second run must pass; a failure without one fails.
lockups() { dmesg 2>/dev/null | grep -c 'soft lockup'; }
# run_phase NAME SEED ON OFF: phase, then check
run_phase() {
  local rc0=$rc l0
  l0=$(lockups)
  phase "$@"
  [ "$1" != blackhole ] || bh_report
  check "$1"
  if [ "$rc" -ne "$rc0" ] && [ "$(lockups)" -gt "$l0" ]; then
    echo "$1: the guest kernel reported a soft lockup during the phase:"
    dmesg | grep 'soft lockup' | tail -n $(( $(lockups) - l0 ))
    echo "$1: its failures above are the frozen vCPU's; the phase runs once more"
    rc=$rc0
    phase "$1" $(($2 + 1000)) "$3" "$4"
    [ "$1" != blackhole ] || bh_report
    check "$1"
  fi
}
bh_report() {
  echo "blackhole: the netems on hr10 and hr11 dropped $DROPPED packets"
  [ "$DROPPED" -gt 0 ] || fail "blackhole: the netem dropped nothing"
}

B0=$(pair 0) B1=$(pair 1)
run_phase link 240 link_on link_off
DROPPED=0
run_phase blackhole 250 bh_on bh_off

echo "== totals"
echo "rails: rail 0 $(( $(pair 0) - B0 )) bytes, rail 1 $(( $(pair 1) - B1 )) bytes (ip -s link, both phases)"
echo "server nics: $(curl -s "$ENDPOINT/_hipobj/stats" | sed -n 's/.*"nics":\(\[[^]]*\]\).*/\1/p')"
exit $rc
