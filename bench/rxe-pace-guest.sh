#!/bin/sh
# In the VM (bench/rxe-pace.sh): pacing against fixed windows, under
# PACE_NETEM (default "loss 1% delay 2ms 1ms") and on the clean fault
# fabric (tests/vm/faults.sh). perftest at 4 KiB with 1-2 messages in
# flight, then one `hipobj bench` stream (PUT and GET) per server setting:
# the default (paced), the default with --rdma-no-pacing (1 MiB x 4 in
# flight), and a fixed window of two 4 KiB chunks. Raw lines to
# $RESULTS/pace.txt.
. /payload/lib.sh
. /payload/faults.sh
: "${PACE_NETEM:=loss 1% delay 2ms 1ms}"
out=${RESULTS:-/tmp}/pace.txt
: >"$out"
fault_fabric_up || exit 1
perf() { # TOOL SIZE ITERS OPTS PROFILE
  timeout 40 $1 -d $FAULT_SERVER_DEV -x 1 -s "$2" -n "$3" $4 -F >/tmp/perf.srv 2>&1 &
  local srv=$! line
  sleep 0.5
  line=$(timeout 40 $1 -d $FAULT_CLIENT_DEV -x 1 -s "$2" -n "$3" $4 -F 127.0.0.1 2>&1 |
    awk -v s="$2" '$1 == s {print $4}' | tail -n1)
  wait $srv 2>/dev/null
  echo "PERF prof=$5 tool=$1 size=$2 opt=$4 MBps=${line:-0}" | tee -a "$out"
}
run_prof() { # PROFILE SIZES ITERS
  perf ib_write_bw 4096 100 "-t 2" $1
  perf ib_read_bw 4096 100 "-o 2" $1
  perf ib_write_bw 65536 100 "-t 4" $1
  for cfg in "paced" "unpaced --rdma-no-pacing" "fixed-4Kx2 --rdma-no-pacing --rdma-chunk-size 4K --rdma-depth 2"; do
    set -- $cfg
    name=$1
    shift
    RXE_DEV=$FAULT_SERVER_DEV start_server "$@" >/dev/null || exit 1
    curl -sf -X PUT "$ENDPOINT/bench" >/dev/null
    RXE_DEV=$FAULT_CLIENT_DEV HIPOBJ_NIC=$FAULT_CLIENT_DEV HIPOBJ_TRANSFER_TIMEOUT_MS=30000 timeout 150 \
      hipobj bench s3://bench/w --endpoint "$ENDPOINT" --sizes $SIZES --concurrency 1 --iterations $N --ops put,get --require-rdma 2>&1 |
      grep -E '^(PUT|GET)' | sed "s/^/BENCH prof=$P server=$name /" | tee -a "$out"
    echo "SERVER prof=$P server=$name $(curl -s "$ENDPOINT/_hipobj/stats" | tr -d ' \n' | sed -n 's/.*\("pace_shrinks":[0-9]*,"pace_window":[0-9]*\).*/\1/p')" | tee -a "$out"
    stop_server
  done
}
fault_roce $PACE_NETEM
P=netem SIZES=256K,1M N=3 run_prof netem
echo "netem: $PACE_NETEM; dropped $(( $(fault_dropped hof0) + $(fault_dropped hof1) ))" | tee -a "$out"
fault_clear
P=clean SIZES=4K,1M,16M N=6 run_prof clean
