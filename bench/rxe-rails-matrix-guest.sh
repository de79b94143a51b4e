#!/bin/sh
# Runs inside the Soft-RoCE VM (see bench/rxe-rails-matrix.sh): on the
# two-rail fabric of tests/vm/rails.sh, ib_write_bw on rail 0 alone and on
# both rails at once (initiated on the server's devices, as a GET's
# WRITEs are), then for 1 and 2 rails x 1, 2, 4, 8 processes x 1, 4, 8
# streams, one `hipobj bench --ops get --require-rdma` per process at
# once. Writes raw lines to $RESULTS/matrix.txt.
. /payload/lib.sh
. /payload/rails.sh
out=${RESULTS:-/tmp}/matrix.txt
: >"$out"
SIZE=${MATRIX_SIZE:-16777216}
PROCS=${MATRIX_PROCS:-"1 2 4 8"} STREAMS=${MATRIX_STREAMS:-"1 4 8"}
on_exit() { stop_server; rails_down; }
trap on_exit EXIT
rails_fabric_up || exit 1

perf() { # perf RAIL PORT: ib_write_bw rxsN -> rxcN, 40 x 4 MiB
  timeout 120 ib_write_bw -d rxc$1 -x 1 -s 4194304 -n 40 -F -p "$2" >/tmp/perf.$1.srv 2>&1 &
  sleep 1
  timeout 120 ib_write_bw -d rxs$1 -x 1 -s 4194304 -n 40 -F -p "$2" 127.0.0.1 2>&1 |
    awk '$1 == 4194304 {print $4}' | tail -n1 >/tmp/perf.$1
  wait
}
perf 0 18515
echo "PERF rails=1 MBps=$(cat /tmp/perf.0)" | tee -a "$out"
perf 0 18515 & perf 1 18516 & wait
echo "PERF rails=2 MBps=$(awk '{s += $1} END {print s}' /tmp/perf.0 /tmp/perf.1)" \
  "rail0=$(cat /tmp/perf.0) rail1=$(cat /tmp/perf.1)" | tee -a "$out"

# 64 transfers of 16 MiB at once on two vCPUs take longer than the
# defaults allow (5 s + 100 ms/MB at the client, 10 s at the server, and
# 10 s in the server's queue): the matrix measures throughput, so all
# are raised.
export HIPOBJ_TRANSFER_TIMEOUT_MS=120000
# MATRIX_SERVER_ARGS: more server options (e.g. --rdma-no-pacing)
# shellcheck disable=SC2086
RXE_DEV=rxs0,rxs1 start_server --rdma-qps 64 --rdma-timeout-ms 120000 \
  --rdma-queue-wait-ms 120000 ${MATRIX_SERVER_ARGS:-} || exit 1
hipobj-vmtest "$ENDPOINT" mkbucket matrix >/dev/null
# the transfers the server lets move at once (docs/architecture.md,
# "Admission"); the rest wait in its queue
echo "SERVER moving_max=$(curl -s "$ENDPOINT/_hipobj/stats" |
  sed -n 's/.*"moving_max":\([0-9]*\).*/\1/p') args=${MATRIX_SERVER_ARGS:-none}" | tee -a "$out"

# The host's own losses, next to ours: packets the kernel dropped because
# a CPU's input backlog (net.core.netdev_max_backlog) was full (column 2
# of /proc/net/softnet_stat, hex, one line per CPU), and rxe's counters
# summed over the four devices: requester retries (completer_retry_err)
# and requests that arrived out of sequence (out_of_seq_request).
softnet_drops() {
  local s=0 h
  for h in $(awk '{print $2}' /proc/net/softnet_stat); do s=$((s + 0x$h)); done
  echo $s
}
rxe_sum() { echo $(( $(pkts rxc0 $1) + $(pkts rxc1 $1) + $(pkts rxs0 $1) + $(pkts rxs1 $1) )); }
# MATRIX_BACKLOG: net.core.netdev_max_backlog for the run (the kernel's
# default is 1000 packets per CPU)
[ -n "${MATRIX_BACKLOG:-}" ] && echo "$MATRIX_BACKLOG" >/proc/sys/net/core/netdev_max_backlog
echo "BACKLOG $(cat /proc/sys/net/core/netdev_max_backlog)" | tee -a "$out"

field() { tr -d '\n' <"$1" | sed -n "s/.*\"$2\": \"*\([A-Za-z0-9.]*\)\"*.*/\1/p"; }
stat() { curl -s -m 10 "$ENDPOINT/_hipobj/stats" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
max() { awk "BEGIN {a = $1 + 0; b = $2 + 0; print (a > b ? a : b)}"; }
rdma_puts() { curl -s -m 10 "$ENDPOINT/_hipobj/stats" | sed -n 's/.*"rdma":{[^}]*"put":\([0-9]*\).*/\1/p'; }
WARM=${MATRIX_WARM_S:-1} WIN=${MATRIX_WINDOW_S:-6}
# seeded PUTS0 N: wait (at most 300 s) until the server has answered N
# more RDMA PUTs than PUTS0: every stream's untimed seeding PUT is done
seeded() {
  local k=0
  while [ $(( $(rdma_puts) - $1 )) -lt "$2" ] && [ $k -lt 600 ]; do
    sleep 0.5
    k=$((k + 1))
  done
}
# point RAILS PROCS STREAMS: every process's streams GET (each PUTs its
# object once first); steady is the bytes through the rails' veth pairs
# (RoCE headers and ACKs included) over WIN s from WARM s after every
# seeding PUT was answered (so the window holds GETs only), with every
# process still running at its end (else "window_full=0"); wall is the
# GET bytes from the launch to the last exit, seeding included.
point() {
  local nic=rxc0 iters i q t0 t1 w0 w1 b0 b1 d0 d1 ok=0 full=1 pids=""
  [ "$1" = 2 ] && nic=rxc0,rxc1
  iters=$(( ((600 << 20) + $2 * $3 * SIZE - 1) / ($2 * $3 * SIZE) ))
  [ $iters -lt 2 ] && iters=2
  local ps0 rf0 qd0 sd0 rr0 oo0
  ps0=$(stat pace_shrinks) rf0=$(stat rdma_failed) qd0=$(stat queued)
  sd0=$(softnet_drops) rr0=$(rxe_sum completer_retry_err) oo0=$(rxe_sum out_of_seq_request)
  local pt0
  pt0=$(rdma_puts)
  t0=$(uptime_s)
  i=1
  while [ $i -le "$2" ]; do
    HIPOBJ_NIC=$nic RXE_DEV=$nic hipobj bench "s3://matrix/p$i" --endpoint "$ENDPOINT" \
      --nic "$nic" --sizes "$SIZE" --concurrency "$3" --iterations $iters --ops get \
      --require-rdma --json >/tmp/m.$i.json 2>/tmp/m.$i.err &
    pids="$pids $!"
    i=$((i + 1))
  done
  seeded "$pt0" $(( $2 * $3 ))
  local ts
  ts=$(uptime_s)
  sleep "$WARM"
  b0=$(pair 0) b1=$(pair 1) w0=$(uptime_s)
  sleep "$WIN"
  d0=$(( $(pair 0) - b0 )) d1=$(( $(pair 1) - b1 )) w1=$(uptime_s)
  for q in $pids; do kill -0 "$q" 2>/dev/null || full=0; done
  for q in $pids; do wait "$q" && ok=$((ok + 1)); done
  t1=$(uptime_s)
  local p50=0 p99=0
  i=1
  while [ $i -le "$2" ]; do
    if [ -n "$(field /tmp/m.$i.json mib_per_s)" ]; then
      p50=$(max "$(field /tmp/m.$i.json p50_ms)" "$p50")
      p99=$(max "$(field /tmp/m.$i.json p99_ms)" "$p99")
    else
      echo "FAILED rails=$1 procs=$2 streams=$3 proc=$i: $(tail -n 2 /tmp/m.$i.err)" | tee -a "$out"
    fi
    i=$((i + 1))
  done
  echo "POINT rails=$1 procs=$2 streams=$3 size=$SIZE iters=$iters ok=$ok window_full=$full" \
    "steady_mibps=$(awk "BEGIN {printf \"%.1f\", ($d0 + $d1) / ($w1 - $w0) / 1048576}")" \
    "wall_mibps=$(awk "BEGIN {printf \"%.1f\", $2 * $3 * $iters * $SIZE / ($t1 - $t0) / 1048576}")" \
    "wall_s=$(awk "BEGIN {print $t1 - $t0}") seeded_s=$(awk "BEGIN {print $ts - $t0}")" \
    "p50_ms=$p50 p99_ms=$p99" \
    "rail0_bytes=$d0 rail1_bytes=$d1 pace_shrinks=$(( $(stat pace_shrinks) - ps0 ))" \
    "rdma_failed=$(( $(stat rdma_failed) - rf0 )) queued=$(( $(stat queued) - qd0 ))" \
    "softnet_drops=$(( $(softnet_drops) - sd0 )) rxe_retries=$(( $(rxe_sum completer_retry_err) - rr0 ))" \
    "rxe_out_of_seq=$(( $(rxe_sum out_of_seq_request) - oo0 ))" | tee -a "$out"
}

for rails in ${MATRIX_RAILS:-1 2}; do
  for p in $PROCS; do
    for s in $STREAMS; do
      point $rails $p $s
    done
  done
done
grep -q '^POINT' "$out" && ! grep -q '^FAILED' "$out"
