#!/bin/sh
# The soak of docs/protocol.md's persistent connections, on Soft-RoCE:
#  1. steady state: one process, 8 streams, one server: after a warm-up,
#     no QP state transition on the server (hipobj-soak "steady");
#  2. two servers on rxe0 and 8 client processes (1 and 8 streams) that start
#     and end during the run and alternate between the servers; server A is
#     restarted once in the middle (same port, same data directory) and the
#     clients recover by themselves.
# Every byte is verified; a failure is tolerated only for a transfer that
# started or ended while server A was down, or in flight when it stopped
# (/tmp/soak-restarting); one that starts once A listens again
# (/tmp/soak-back) must succeed. Prints both servers' connection counters.
. /payload/lib.sh
: "${SOAK_PER_PROC:=2000}"
rc=0
mkdir -p /tmp/soakA /tmp/soakB

# start_at NAME PORT DIR: a server on a fixed port (0: any), its pid in
# ${NAME}_PID and endpoint in ${NAME}_EP.
start_at() {
  out=/tmp/soak.$1.out
  hipobj-test-server --listen "127.0.0.1:$2" --nic "$RXE_DEV" --data-dir "$3" \
    --rdma-qps 64 \
    >"$out" 2>>/tmp/soak.$1.err &
  eval "$1_PID=$!"
  for _ in $(seq 1 100); do
    ep=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$out" | head -n1)
    [ -n "$ep" ] && break
    sleep 0.1
  done
  [ -n "$ep" ] || { echo "server $1 did not start"; cat "$out" /tmp/soak.$1.err; return 1; }
  eval "$1_EP=$ep"
}
conns() { curl -s "$1/_hipobj/stats" | sed -n 's/.*"connections":\({[^}]*}[^}]*}\).*/\1/p'; }
stop_all() { kill -TERM $A_PID $B_PID 2>/dev/null; wait $A_PID $B_PID 2>/dev/null; }
trap stop_all EXIT

start_at A 0 /tmp/soakA || exit 1
start_at B 0 /tmp/soakB || exit 1
PORT_A=${A_EP##*:}
hipobj-vmtest "$A_EP" mkbucket soak >/dev/null
hipobj-vmtest "$B_EP" mkbucket soak >/dev/null
t0=$(date +%s)

echo "== steady state: 8 streams x 100 transfers, one server"
hipobj-soak "$A_EP" 8 100 1 steady || rc=1

echo "== soak: 8 processes, two servers, a restart of A in the middle"
pids=""
for i in 1 2 3 4; do
  s=8; [ $((i % 2)) -eq 0 ] && s=1
  n=$((SOAK_PER_PROC / s)); [ $s -eq 1 ] && n=$((SOAK_PER_PROC / 4))
  hipobj-soak "$A_EP,$B_EP" $s $n $((10 + i)) > /tmp/soak.p$i.log 2>&1 &
  pids="$pids $!"
done
sleep 8
echo "restarting server A"
touch /tmp/soak-restarting
kill -TERM $A_PID; wait $A_PID 2>/dev/null
start_at A "$PORT_A" /tmp/soakA || rc=1
touch /tmp/soak-back # a transfer started from now on must succeed
for i in 5 6 7 8; do
  s=8; [ $((i % 2)) -eq 0 ] && s=1
  n=$((SOAK_PER_PROC / s)); [ $s -eq 1 ] && n=$((SOAK_PER_PROC / 4))
  hipobj-soak "$A_EP,$B_EP" $s $n $((10 + i)) > /tmp/soak.p$i.log 2>&1 &
  pids="$pids $!"
done
sleep 8
rm -f /tmp/soak-restarting /tmp/soak-back
for p in $pids; do wait $p || rc=1; done
cat /tmp/soak.p*.log | grep -v '^soak: steady'
total=$(cat /tmp/soak.p*.log | sed -n 's/^soak: pid [0-9]*: \([0-9]*\) transfers.*/\1/p' |
        awk '{s += $1} END {print s + 0}')
echo "soak: $total transfers in $(( $(date +%s) - t0 )) s (with the steady phase)"
echo "server A (since its restart): $(conns "$A_EP")"
echo "server B: $(conns "$B_EP")"
grep -h warning /tmp/soak.A.err /tmp/soak.B.err 2>/dev/null | sort | uniq -c | head -n 10
[ "$total" -ge 10000 ] || { echo "FAIL: only $total transfers"; rc=1; }
exit $rc
