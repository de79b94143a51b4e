#!/bin/sh
# Runs inside the Soft-RoCE VM (see bench/rxe-cpu.sh): the CPU time of a
# transfer, client and server, by RDMA and by plain HTTP, at 4 KiB, 1 MiB
# and 64 MiB (one `hipobj bench` per point, the server's /_hipobj/stats
# "cpu" read before and after it), then 8 client processes idle between
# two transfers on kept connections. Writes raw lines to $RESULTS/cpu.txt.
. /payload/lib.sh
out=${RESULTS:-/tmp}/cpu.txt
: >"$out"
export HIPOBJ_TRANSFER_TIMEOUT_MS=60000
start_server || exit 1
curl -sf -X PUT "$ENDPOINT/cpu" >/dev/null

srv_cpu() { # the server's CPU seconds so far, user + system
  curl -s "$ENDPOINT/_hipobj/stats" |
    sed -n 's/.*"cpu":{"user_s":\([0-9.]*\),"sys_s":\([0-9.]*\),.*/\1 \2/p' |
    awk '{printf "%.6f", $1 + $2}'
}
field() { tr -d '\n' </tmp/cpu.json | sed -n "s/.*\"$1\": \"*\([A-Za-z0-9.]*\)\"*.*/\1/p"; }

# point MODE OP SIZE ITERS: a GET alone PUTs its object once first (untimed,
# as hipobj bench does); its server figure includes that PUT, which the
# table takes out with the PUT point's per-transfer figure.
point() {
  c0=$(srv_cpu)
  if ! hipobj bench s3://cpu/x --endpoint "$ENDPOINT" --sizes "$3" --concurrency 1 \
      --iterations "$4" --ops "$2" "$1" --keep --json >/tmp/cpu.json 2>/tmp/cpu.err; then
    echo "FAIL mode=$1 op=$2 size=$3: $(tail -n 3 /tmp/cpu.err)" | tee -a "$out"
    return 1
  fi
  c1=$(srv_cpu)
  echo "CPU op=$(field op) size=$(field size) n=$(field iterations) path=$(field path)" \
    "mibps=$(field mib_per_s) p50_ms=$(field p50_ms) client_user_s=$(field cpu_user_s)" \
    "client_sys_s=$(field cpu_sys_s) server_s=$(awk "BEGIN {printf \"%.6f\", $c1 - $c0}")" |
    tee -a "$out"
}

rc=0
for sz in "4096 200" "1048576 50" "67108864 8"; do
  for mode in --no-rdma --require-rdma; do
    point $mode put $sz || rc=1
    point $mode get $sz || rc=1
  done
done

# 8 processes, each: a PUT and a GET, 25 s with no transfer, a GET on its
# kept connection. The server's CPU is read from 8 s to 20 s into it.
pids=
for i in 1 2 3 4 5 6 7 8; do
  hipobj-vmtest "$ENDPOINT" idle 25 >/tmp/idle.$i 2>&1 &
  pids="$pids $!"
done
sleep 8
c0=$(srv_cpu)
sleep 12
c1=$(srv_cpu)
echo "IDLESRV secs=12 clients=8 cpu_ms=$(awk "BEGIN {printf \"%.2f\", ($c1 - $c0) * 1e3}")" |
  tee -a "$out"
for p in $pids; do wait "$p" || rc=1; done
for i in 1 2 3 4 5 6 7 8; do
  grep '^IDLE ' /tmp/idle.$i | tee -a "$out" || { cat /tmp/idle.$i; rc=1; }
done
stop_server
exit $rc
