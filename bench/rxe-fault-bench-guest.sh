#!/bin/sh
# Runs inside the Soft-RoCE VM (see bench/rxe-fault-bench.sh): on the fault
# fabric of tests/vm/faults.sh (rxef0 <-> rxef1 over a veth pair), for each
# RoCE loss profile, ib_write_bw and hipObject GETs (one stream, timed
# one by one) of 64 KiB and 4 MiB, in this order, in one boot. Writes raw
# lines to $RESULTS/fault-bench.txt.
. /payload/lib.sh
. /payload/faults.sh
out=${RESULTS:-/tmp}/fault-bench.txt
: >"$out"
fault_fabric_up || exit 1
RXE_DEV=$FAULT_SERVER_DEV start_server || exit 1

perf() { # perf SIZE ITERS LOSS: ib_write_bw from rxef0 to rxef1, MB/s
  timeout 120 ib_write_bw -d $FAULT_SERVER_DEV -x 1 -s "$1" -n "$2" -F >/tmp/perf.srv 2>&1 &
  local srv=$! line
  sleep 0.5
  line=$(timeout 120 ib_write_bw -d $FAULT_CLIENT_DEV -x 1 -s "$1" -n "$2" -F 127.0.0.1 2>&1 |
    awk -v s="$1" '$1 == s {print $4}' | tail -n1)
  wait $srv 2>/dev/null
  echo "PERF loss=$3 tool=ib_write_bw size=$1 iters=$2 MBps=${line:-0}" | tee -a "$out"
}

for loss in 0 0.1 1; do
  if [ "$loss" = 0 ]; then fault_clear roce; else fault_roce loss "$loss%"; fi
  perf 65536 200 $loss
  perf 4194304 40 $loss
  RXE_DEV=$FAULT_CLIENT_DEV hipobj-vmtest "$ENDPOINT" getlat 65536 100 |
    sed -n "s/^BENCH /BENCH loss=$loss /p" | tee -a "$out"
  RXE_DEV=$FAULT_CLIENT_DEV hipobj-vmtest "$ENDPOINT" getlat 4194304 20 |
    sed -n "s/^BENCH /BENCH loss=$loss /p" | tee -a "$out"
  echo "netem dropped $(( $(fault_dropped hof0) + $(fault_dropped hof1) )) packets at loss $loss%"
done
fault_clear
grep -c BENCH "$out" >/dev/null
