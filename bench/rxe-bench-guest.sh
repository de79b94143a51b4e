#!/bin/sh
# Runs inside the Soft-RoCE VM (see bench/rxe-bench.sh): perftest and
# hipObject on the same rxe device, same sizes, one boot. Writes raw lines
# to $RESULTS/bench.txt.
. /payload/lib.sh
out=${RESULTS:-/tmp}/bench.txt
: >"$out"
gid=${RXE_GID_INDEX:-1}
sizes="65536 262144 1048576 4194304 16777216 67108864"

perf() { # perf TOOL SIZE ITERS [PERFTEST OPTION...]: a PERF line
  local tool=$1 size=$2 iters=$3 line
  shift 3
  "$tool" -d "$RXE_DEV" -x "$gid" -s "$size" -n "$iters" -F "$@" >/tmp/perf.srv 2>&1 &
  local srv=$!
  sleep 0.5
  line=$("$tool" -d "$RXE_DEV" -x "$gid" -s "$size" -n "$iters" -F "$@" 127.0.0.1 2>&1 |
    awk -v s="$size" '$1 == s {print $4}' | tail -n1)
  wait $srv 2>/dev/null
  echo "PERF tool=$tool size=$size MBps=${line:-0}"
}

# The server's pacing counters: whether its window was cut.
pace_stats() {
  curl -s "$ENDPOINT/_hipobj/stats" | tr -d ' \n' |
    sed -n 's/.*\("pace_shrinks":[0-9]*,"pace_window":[0-9]*\).*/\1/p'
}

# One server (--random-etags and ARGS), one 64 MiB stream of hipobj-vmtest
# bench (at least MIN bytes), its "BENCH MATCH" lines retagged "TAG
# MATCH", then TAG with the server's pacing counters.
#   server_bench MATCH TAG MIN [ARGS...]
server_bench() {
  match=$1 tag=$2 min=$3
  shift 3
  start_server --random-etags "$@" || exit 1
  VMTEST_BENCH_MIN=$min hipobj-vmtest "$ENDPOINT" bench 1 $((64 << 20)) |
    sed -n "s/^BENCH $match/$tag $match/p" | tee -a "$out"
  echo "$tag server $(pace_stats)" | tee -a "$out"
  stop_server
}

# BENCH_PUT_SHAPE=N: N rounds of what a PUT's shape costs. The server
# READs a PUT in chunks (--rdma-chunk-size, 1 MiB) with two READs in
# flight on a software device, where ib_read_bw at 64 MiB reads one
# 64 MiB message with every READ the device allows. Each round:
# ib_read_bw at 64 MiB as the table runs it, ib_read_bw of 1 MiB
# messages with every READ the device allows and with 2 outstanding
# (-o 2: the server's shape), and one PUT
# stream of 64 MiB with chunks of 1, 4 and 16 MiB. BENCH_SKIP_MAIN=1
# runs only this and the pacing rounds.
for round in $(seq 1 "${BENCH_PUT_SHAPE:-0}"); do
  perf ib_read_bw 67108864 5 | sed "s/^PERF /SHAPE round=$round what=perftest-64M-default /" | tee -a "$out"
  perf ib_read_bw 1048576 200 | sed "s/^PERF /SHAPE round=$round what=perftest-1M-default /" | tee -a "$out"
  perf ib_read_bw 1048576 200 -o 2 | sed "s/^PERF /SHAPE round=$round what=perftest-1M-o2 /" | tee -a "$out"
  for chunk in 1M 4M 16M; do
    server_bench "op=put " "SHAPE round=$round what=put-chunk-$chunk" 67108864 \
      --rdma-chunk-size "$chunk"
  done
done
[ "${BENCH_SKIP_MAIN:-0}" = 1 ] && main=false || main=true

if $main; then
for s in $sizes; do
  iters=$(( (256 << 20) / s )); [ $iters -gt 200 ] && iters=200; [ $iters -lt 5 ] && iters=5
  perf ib_write_bw "$s" "$iters" | tee -a "$out"
  perf ib_read_bw "$s" "$iters" | tee -a "$out"
done
ibv_rc_pingpong -d "$RXE_DEV" -g "$gid" -s 4096 -n 500 >/tmp/pp.srv 2>&1 &
srv=$!
sleep 0.5
us=$(ibv_rc_pingpong -d "$RXE_DEV" -g "$gid" -s 4096 -n 500 127.0.0.1 2>&1 |
  sed -n 's/.* = \([0-9.]*\) usec\/iter.*/\1/p' | tail -n1)
wait $srv 2>/dev/null
echo "PERF tool=ibv_rc_pingpong size=4096 usec_per_iter=${us:-0}" | tee -a "$out"

# Small objects against their floor: ib_write_lat's typical one-way latency
# plus the same client's plain-HTTP request of the same size. Rounds
# alternate the three so that a busy host slows all of them alike; the
# table takes each figure's median over the rounds.
export HIPOBJ_TRANSFER_TIMEOUT_MS=60000
start_server || exit 1
curl -sf -X PUT "$ENDPOINT/lat" >/dev/null
for round in 1 2 3 4 5; do
  for s in 4096 65536; do
    echo "PERF tool=ib_write_lat size=$s round=$round t_typical_us=$(write_lat_us "$s")" |
      tee -a "$out"
  done
  for mode in --no-rdma --require-rdma; do
    hipobj bench s3://lat/x --endpoint "$ENDPOINT" --sizes 4K,64K --concurrency 1 \
      --iterations 60 $mode --json >/tmp/lat.json 2>/tmp/lat.err || cat /tmp/lat.err
    { tr -d '\n' </tmp/lat.json | sed 's/},/}\n/g'; echo; } |
      sed -n 's/.*"op": "\([A-Z]*\)", "size": \([0-9]*\),.*"p50_ms": \([0-9.]*\),.*"p99_ms": \([0-9.]*\), "path": "\([A-Z]*\)", "reuse": \([0-9.]*\), "qp_transitions_per_transfer": \([0-9.]*\).*/LAT op=\1 size=\2 p50_ms=\3 p99_ms=\4 path=\5 reuse=\6 qpt=\7/p' |
      sed "s/\$/ round=$round/" | tee -a "$out"
  done
done
stop_server
# Throughput: the store without its MD5 ETags (--random-etags): hashing
# every byte is the store's CPU, not the transport's, and perftest hashes
# nothing. The pacing counters say whether the window was cut.
start_server --random-etags || exit 1
hipobj-vmtest "$ENDPOINT" bench 1 $((64 << 20)) | grep BENCH | tee -a "$out"
hipobj-vmtest "$ENDPOINT" bench 4 $((16 << 20)) | grep BENCH | tee -a "$out"
echo "SERVER $(pace_stats)" | tee -a "$out"
stop_server
fi
# BENCH_PACING_AB=N: N rounds of one stream at 16 and 64 MiB, alternating a
# server with pacing (the default) and one without (--rdma-no-pacing), so
# that what pacing costs a clean fabric stands next to it in this boot.
for round in $(seq 1 "${BENCH_PACING_AB:-0}"); do
  for variant in pacing no-pacing; do
    flag=; [ "$variant" = no-pacing ] && flag=--rdma-no-pacing
    server_bench "" "AB variant=$variant round=$round" 16777216 $flag
  done
done
grep -qE '^(BENCH|AB|SHAPE) ' "$out"
