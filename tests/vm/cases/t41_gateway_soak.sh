#!/bin/sh
# hipobj-gateway's RDMA path at length, on Soft-RoCE: hipobj-test-server as
# the store behind it (plain HTTP only, its own keys, a data directory) and
# the gateway on rxe0 in front of it.
#  1. steady state: 4 streams, after a warm-up no QP state transition on
#     the gateway (hipobj-soak "steady");
#  2. a second gateway in front of the same store (gateways keep no state:
#     the clients alternate between the two, transfer by transfer);
#     4 client processes (4 and 1 streams), GET and PUT of 1 B..4 MiB
#     interleaved, every byte and the guard bytes around it checked; the
#     first gateway is restarted in the middle (same port: the clients recover by
#     themselves, nothing is kept in the gateway), then the store behind it;
#     each stream goes on 30 s past the first restart (hipobj-soak after=).
# A failure is tolerated only for a transfer that started or ended during a
# restart (/tmp/soak-restarting); one that starts once the restarted
# process listens again (/tmp/soak-back) must succeed.
. /payload/lib.sh
: "${GW_SOAK_PER_PROC:=800}" "${GW_SOAK_MIN_OK:=800}"
rc=0
rm -rf /tmp/gws-be /tmp/soak-restarting /tmp/soak-back
mkdir -p /tmp/gws-be
export S3MINI_KEY=GWSOAKKEY S3MINI_SECRET=gwsoak/secret

# start_be PORT / start_gw PORT: on a fixed port (0: any)
wait_line() { # FILE -> the endpoint it prints
  for _ in $(seq 1 100); do
    ep=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$1" | head -n1)
    [ -n "$ep" ] && { echo "$ep"; return 0; }
    sleep 0.1
  done
  return 1
}
start_be() {
  hipobj-test-server --listen "127.0.0.1:$1" --no-rdma --data-dir /tmp/gws-be \
    --access-key BEKEY --secret-key be/secret --log-requests >/tmp/gws.be.out 2>>/tmp/gws.be.err &
  BE_PID=$!
  BE=$(wait_line /tmp/gws.be.out) || { echo "store did not start"; cat /tmp/gws.be.err; return 1; }
}
gw_args() {
  echo --backend-access-key BEKEY --backend-secret-key be/secret \
    --access-key "$S3MINI_KEY" --secret-key "$S3MINI_SECRET" --rdma-qps 64 --log-requests
}
start_gw() { start_gateway GW "$BE" --listen "127.0.0.1:$1" $(gw_args) && GW=$GW_URL; }
start_gw2() { start_gateway GW2 "$BE" $(gw_args) && GW2=$GW2_URL; }
stop_all() { kill -TERM $GW_PID $GW2_PID $BE_PID 2>/dev/null; wait $GW_PID $GW2_PID $BE_PID 2>/dev/null; }
trap stop_all EXIT
start_be 0 || exit 1
start_gw 0 || exit 1
echo "gateway $GW in front of $BE"
hipobj-vmtest "$GW" mkbucket soak >/dev/null || { echo "FAIL: mkbucket through the gateway"; exit 1; }
t0=$(date +%s)

echo "== steady state: 4 streams x 100 transfers through the gateway"
hipobj-soak "$GW" 4 100 1 steady || {
  rc=1
  echo "--- gateway log"; grep -v ' 200 ' /tmp/gateway.GW.err | tail -n 10
  echo "--- store log"; grep -v ' 200 ' /tmp/gws.be.err | tail -n 10
  exit 1
}

start_gw2 || exit 1
echo "== soak: 4 processes alternating between two gateways ($GW, $GW2); the first restarted, then the store"
PORT_GW=${GW##*:} PORT_BE=${BE##*:}
pids=""
for i in 1 2 3 4; do
  s=4; [ $((i % 2)) -eq 0 ] && s=1
  n=$((GW_SOAK_PER_PROC / s)); [ $s -eq 1 ] && n=$((GW_SOAK_PER_PROC / 4))
  hipobj-soak "$GW,$GW2" $s $n $((20 + i)) after=30 >/tmp/gws.p$i.log 2>&1 &
  pids="$pids $!"
done
sleep 10
echo "restarting the gateway"
touch /tmp/soak-restarting
kill -TERM $GW_PID; wait $GW_PID
[ $? -eq 0 ] || { echo "FAIL: the gateway did not exit cleanly"; rc=1; }
start_gw "$PORT_GW" || rc=1
touch /tmp/soak-back
sleep 2
rm -f /tmp/soak-restarting /tmp/soak-back
sleep 8
echo "restarting the store behind it"
touch /tmp/soak-restarting
kill -TERM $BE_PID; wait $BE_PID
start_be "$PORT_BE" || rc=1
touch /tmp/soak-back
sleep 2
rm -f /tmp/soak-restarting /tmp/soak-back
for p in $pids; do wait $p || rc=1; done
cat /tmp/gws.p*.log
total=$(cat /tmp/gws.p*.log |
        sed -n 's/^soak: pid [0-9]*: \([0-9]*\) transfers, \([0-9]*\) failed, \([0-9]*\) during restart.*/\1 \2 \3/p' |
        awk '{n += $1; ok += $1 - $2 - $3} END {print n + 0, ok + 0}')
moved=${total#* } total=${total% *}
echo "gateway soak: $total transfers, $moved of them successful (the rest failed, as they may, while a restart was under way), in $(( $(date +%s) - t0 )) s"
stats=$(curl -s "$GW/_hipobj/stats")
echo "gateway (since its restart): rdma $(echo "$stats" | sed -n 's/.*"rdma":\({[^}]*}\).*/\1/p')"
echo "gateway connections: $(echo "$stats" | sed -n 's/.*"connections":\({[^}]*}[^}]*}\).*/\1/p')"
stats2=$(curl -s "$GW2/_hipobj/stats")
echo "gateway 2: rdma $(echo "$stats2" | sed -n 's/.*"rdma":\({[^}]*}\).*/\1/p')"
grep -h warning /tmp/gateway.GW.err /tmp/gateway.GW2.err 2>/dev/null | sort | uniq -c | head -n 10
echo "gateway requests by status: $(awk '$5 ~ /^[0-9]+$/ {print $5}' /tmp/gateway.GW.err | sort | uniq -c | tr '\n' ' ')"
# The streams run for a time (30 s past the first restart), not for a
# count, so how many succeed follows the host's speed (3,449 on a quiet
# host, about half that on a loaded CI machine): the check is that every
# process went on succeeding after both restarts, and a floor that only
# a stalled run misses.
[ "$moved" -ge "$GW_SOAK_MIN_OK" ] || { echo "FAIL: only $moved successful transfers (want $GW_SOAK_MIN_OK)"; rc=1; }
for f in /tmp/gws.p*.log; do
  a=$(sed -n 's/^soak: pid [0-9]*: latency .* \([0-9]*\) after the window$/\1/p' "$f")
  [ "${a:-0}" -gt 0 ] || { echo "FAIL: $f: no successful transfer after the restarts"; rc=1; }
done
exit $rc
