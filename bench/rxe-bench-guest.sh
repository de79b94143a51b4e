#!/bin/sh
# Runs inside the Soft-RoCE VM (see bench/rxe-bench.sh): perftest and
# hipObject on the same rxe device, same sizes, one boot. Writes raw lines
# to $RESULTS/bench.txt.
. /payload/lib.sh
out=${RESULTS:-/tmp}/bench.txt
: >"$out"
gid=${RXE_GID_INDEX:-1}
sizes="65536 262144 1048576 4194304 16777216 67108864"

perf() { # perf TOOL SIZE ITERS
  local tool=$1 size=$2 iters=$3 line
  "$tool" -d "$RXE_DEV" -x "$gid" -s "$size" -n "$iters" -F >/tmp/perf.srv 2>&1 &
  local srv=$!
  sleep 0.5
  line=$("$tool" -d "$RXE_DEV" -x "$gid" -s "$size" -n "$iters" -F 127.0.0.1 2>&1 |
    awk -v s="$size" '$1 == s {print $4}' | tail -n1)
  wait $srv 2>/dev/null
  echo "PERF tool=$tool size=$size MBps=${line:-0}" | tee -a "$out"
}

for s in $sizes; do
  iters=$(( (256 << 20) / s )); [ $iters -gt 200 ] && iters=200; [ $iters -lt 5 ] && iters=5
  perf ib_write_bw "$s" "$iters"
  perf ib_read_bw "$s" "$iters"
done
ibv_rc_pingpong -d "$RXE_DEV" -g "$gid" -s 4096 -n 500 >/tmp/pp.srv 2>&1 &
srv=$!
sleep 0.5
us=$(ibv_rc_pingpong -d "$RXE_DEV" -g "$gid" -s 4096 -n 500 127.0.0.1 2>&1 |
  sed -n 's/.* = \([0-9.]*\) usec\/iter.*/\1/p' | tail -n1)
wait $srv 2>/dev/null
echo "PERF tool=ibv_rc_pingpong size=4096 usec_per_iter=${us:-0}" | tee -a "$out"

# A fresh server for each phase: after the single-stream phase, new QPs on
# this rxe failed their first SEND with IBV_WC_LOC_QP_OP_ERR (see
# docs/performance.md), which a fresh server process avoids.
start_server || exit 1
hipobj-vmtest "$ENDPOINT" bench 1 $((64 << 20)) | grep BENCH | tee -a "$out"
stop_server
start_server || exit 1
hipobj-vmtest "$ENDPOINT" bench 4 $((16 << 20)) | grep BENCH | tee -a "$out"
grep -c BENCH "$out" >/dev/null
