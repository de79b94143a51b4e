#!/bin/sh
# Runs inside the Soft-RoCE VM (bench/rxe-counters.sh): the bench of issue
# 10 on a fresh server, rxe's hw_counters and dynamic debug around it.
. /payload/lib.sh
ctr() { for f in /sys/class/infiniband/$RXE_DEV/ports/1/hw_counters/*; do v=$(cat $f); [ "$v" != 0 ] && printf '%s=%s ' "$(basename $f)" "$v"; done; echo; }
mkdir -p /sys/kernel/debug; mount -t debugfs none /sys/kernel/debug 2>/dev/null
echo 'module rdma_rxe +p' > /sys/kernel/debug/dynamic_debug/control 2>/dev/null && echo "rxe dynamic debug on"
dmesg -c >/dev/null 2>&1
echo "before: $(ctr)"
start_server || exit 1
curl -sf -X PUT "$ENDPOINT/floor" >/dev/null
for i in 1 2 3; do
  hipobj bench s3://floor/f --endpoint "$ENDPOINT" --sizes 4K,64K --concurrency 1 --iterations 100 --ops put,get --require-rdma > /tmp/b.out 2>&1
  echo "run $i rc=$?"; grep -E '^(PUT|GET)|warning|error' /tmp/b.out | head -12
  echo "after run $i: $(ctr)"
  dmesg -c 2>/dev/null | grep -c 'retransmit_timer\|cut here' | sed 's/^/  kernel lines (retransmit timer, warnings): /'
done
stop_server
exit 0
