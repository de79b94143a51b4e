#!/bin/sh
# Runs inside the Soft-RoCE VM (see bench/rxe-fault-bench.sh): on the fault
# fabric of tests/vm/faults.sh (rxef0 <-> rxef1 over a veth pair), for each
# RoCE netem profile, ib_write_bw and ib_read_bw (initiated on the server's
# device, as the server's WRITEs of a GET and READs of a PUT are), then
# hipObject GETs and PUTs (one stream, timed one by one) of 64 KiB and
# 4 MiB, in this order, in one boot. Writes raw lines to
# $RESULTS/fault-bench.txt; a profile's name has "_" for its spaces.
. /payload/lib.sh
. /payload/faults.sh
out=${RESULTS:-/tmp}/fault-bench.txt
: >"$out"
fault_fabric_up || exit 1
RXE_DEV=$FAULT_SERVER_DEV start_server || exit 1

perf() { # perf TOOL SIZE SECS PROFILE: MB/s over SECS seconds (perftest's
  # -D: a slow profile still gives a figure), initiated on the server's NIC
  timeout 120 "$1" -d $FAULT_CLIENT_DEV -x 1 -s "$2" -D "$3" -F >/tmp/perf.srv 2>&1 &
  local srv=$! line
  sleep 0.5
  line=$(timeout 120 "$1" -d $FAULT_SERVER_DEV -x 1 -s "$2" -D "$3" -F 127.0.0.1 2>&1 |
    awk -v s="$2" '$1 == s {print $4}' | tail -n1)
  wait $srv 2>/dev/null
  echo "PERF netem=$4 tool=$1 size=$2 secs=$3 MBps=${line:-0}" | tee -a "$out"
}

lat() { # lat OP SIZE COUNT PROFILE [DEADLINE_MS]: hipobj-vmtest's timed calls
  env ${5:+HIPOBJ_TRANSFER_TIMEOUT_MS=$5} RXE_DEV=$FAULT_CLIENT_DEV \
    hipobj-vmtest "$ENDPOINT" "$1" "$2" "$3" >/tmp/lat.out 2>&1
  sed -n "s/^\(BENCH\|FAILED\) /\1 netem=$4 timeout_ms=${5:-default} /p" /tmp/lat.out |
    tee -a "$out"
  grep -q '^BENCH' /tmp/lat.out || { echo "hipobj-vmtest $1 $2 $3:"; tail -n 5 /tmp/lat.out; }
}

PROFILES=${FAULT_BENCH_PROFILES:-"none|loss 0.1%|loss 1%|delay 2ms 1ms|loss 1% delay 2ms 1ms"}
IFS='|'
set -f
for prof in $PROFILES; do
  unset IFS
  name=$(echo "$prof" | tr ' ' _)
  if [ "$prof" = none ]; then fault_clear roce; else fault_roce $prof; fi
  for tool in ib_write_bw ib_read_bw; do
    perf $tool 65536 8 "$name"
    perf $tool 4194304 8 "$name"
  done
  for op in getlat putlat; do
    for sz in "65536 100" "4194304 20"; do
      lat $op $sz "$name"
      # calls that outlived the default deadline (5 s + 100 ms/MB): the
      # same size again, 5 calls, with the deadline a user of such a
      # link would set
      [ "$(sed -n 's/.* ok=\([0-9]*\) .*/\1/p' /tmp/lat.out)" = "${sz#* }" ] ||
        lat $op "${sz% *}" 5 "$name" 30000
    done
  done
  echo "DROPPED netem=$name packets=$(( $(fault_dropped hof0) + $(fault_dropped hof1) ))" |
    tee -a "$out"
  IFS='|'
done
unset IFS
fault_clear
kill -0 "$SERVER_PID" 2>/dev/null || echo "SERVER exited before the end" | tee -a "$out"
stats=$(curl -s -m 10 "$ENDPOINT/_hipobj/stats")
for k in rdma_failed no_ready final_failed ready_reclaimed data_first pace_shrinks; do
  printf '%s=%s ' $k "$(echo "$stats" | sed -n "s/.*\"$k\":\([0-9]*\).*/\1/p")"
done | sed 's/^/SERVER /' | tee -a "$out"
echo | tee -a "$out"
# what the server could only say on stderr, once per kind
sed 's/0x[0-9a-f]*/Q/g; s/[0-9][0-9]* bytes/N bytes/g' /tmp/server.*.err 2>/dev/null |
  sort | uniq -c | sort -rn | head -n 12 | sed 's/^/SERVERLOG /' | tee -a "$out"
grep -q BENCH "$out"
