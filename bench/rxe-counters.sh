#!/usr/bin/env bash
# The issue-10 reproduction on Soft-RoCE with the kernel's view: a fresh
# hipobj-test-server, `hipobj bench` 4K/64K PUT+GET three times, rxe's
# hw_counters after each run and rdma_rxe's dynamic debug lines counted
# (bench/rxe-counters-guest.sh). Give it any built tree, to compare builds:
#   bench/rxe-counters.sh [TREE [LOG]]    (TREE: default this checkout;
#   built with tests/vm/run-lane.sh or cmake -B TREE/build/vm)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tree=$(cd "${1:-$root}" && pwd)
b=$tree/build/vm
[ -x "$b/tools/hipobj/hipobj" ] || { echo "build $b first (tests/vm/run-lane.sh does)"; exit 2; }
"$root/tools/rxe-vm/run.sh" --quiet --test-timeout 900 --timeout 1200 \
  ${2:+--log "$2"} \
  --file "$b/src/libhipobj.so.0:lib/libhipobj.so.0" \
  --file "$b/integrations/curl/libhipobj_s3.so.0:lib/libhipobj_s3.so.0" \
  --file "$b/server/hipobj-test-server:bin/hipobj-test-server" \
  --file "$b/tools/hipobj/hipobj:bin/hipobj" \
  --file "$(command -v curl):bin/curl" \
  --file "$root/tests/vm/lib.sh:lib.sh" \
  "$root/bench/rxe-counters-guest.sh"
