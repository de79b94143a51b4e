#!/bin/sh
# Runs inside the Soft-RoCE VM (bench/rxe-windows.sh): the cost of a type-2
# memory window per transfer. hipobj-vmprobe windows times 2000 bind +
# local-invalidation pairs; then hipobj-vmtest bench (GET/PUT 64 KiB, one
# stream, and the 4 KiB latency) with windows and with the MR, alternating,
# twice each, against one server.
. /payload/lib.sh
hipobj-vmprobe windows | grep -E 'window cost|windows:'
start_server || exit 1
for scoped in 1 0 1 0; do
  echo "bench: HIPOBJ_SCOPED_TOKENS=$scoped"
  HIPOBJ_SCOPED_TOKENS=$scoped hipobj-vmtest "$ENDPOINT" bench 1 65536 | grep BENCH
done
stop_server
