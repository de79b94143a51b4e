#!/bin/sh
# In the VM (bench/rxe-user-faults.sh): the issue's user benchmark under
# faults: three `hipobj bench` processes at once on the fault fabric
# (tests/vm/faults.sh) under USER_NETEM (default "loss 1% delay 2ms 1ms"),
# --sizes 4K,256K,4M --concurrency 1,2 --iterations 15 --ops put,get
# --require-rdma, HIPOBJ_TRANSFER_TIMEOUT_MS=30000 (USER_TIMEOUT_MS: another
# value; "default": the library's own, with its deadline that follows
# progress). Prints each process's
# table and exit status, the server's failure counters and netem's drops.
. /payload/lib.sh
. /payload/faults.sh
: "${USER_NETEM:=loss 1% delay 2ms 1ms}"
: "${USER_TIMEOUT_MS:=30000}"
out=${RESULTS:-/tmp}/user-faults.txt
: >"$out"
fault_fabric_up || exit 1
RXE_DEV=$FAULT_SERVER_DEV start_server --rdma-qps 32 >/dev/null || exit 1
curl -sf -X PUT "$ENDPOINT/bench" >/dev/null || { echo "no bucket"; exit 1; }
export RXE_DEV=$FAULT_CLIENT_DEV HIPOBJ_NIC=$FAULT_CLIENT_DEV
[ "$USER_TIMEOUT_MS" = default ] || export HIPOBJ_TRANSFER_TIMEOUT_MS=$USER_TIMEOUT_MS
echo "timeout: ${HIPOBJ_TRANSFER_TIMEOUT_MS:-the library's default}" | tee -a "$out"
fault_roce $USER_NETEM
pids=""
for i in 1 2 3; do
  hipobj bench "s3://bench/p$i" --endpoint "$ENDPOINT" --sizes 4K,256K,4M \
    --concurrency 1,2 --iterations 15 --ops put,get --require-rdma \
    >/tmp/ub.$i.out 2>/tmp/ub.$i.err &
  pids="$pids $!"
done
i=1
for p in $pids; do
  wait $p; rc=$?
  { echo "== process $i: exit $rc"; cat /tmp/ub.$i.out; sed 's/^/  err| /' /tmp/ub.$i.err | sort | uniq -c | sort -rn | head -8; } | tee -a "$out"
  i=$((i + 1))
done
echo "netem: $USER_NETEM; dropped $(( $(fault_dropped hof0) + $(fault_dropped hof1) )) RoCE packets; rxe retries exhausted $(fault_rxe_counter retry_exceeded_err)" | tee -a "$out"
echo "server: $(curl -s "$ENDPOINT/_hipobj/stats" | tr -d ' \n' | sed -n 's/.*"connections":\({[^}]*}[^}]*}\).*/\1/p')" | tee -a "$out"
fault_clear
stop_server
exit 0
