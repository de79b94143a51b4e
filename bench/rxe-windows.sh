#!/usr/bin/env bash
# What a memory window costs per transfer on Soft-RoCE (docs/performance.md,
# "What a memory window costs per transfer"): one VM boot running
# bench/rxe-windows-guest.sh. Build first (tests/vm/run-lane.sh does).
#   bench/rxe-windows.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
b=$root/build/vm
[ -x "$b/tests/vm/hipobj-vmprobe" ] || { echo "build $b first (tests/vm/run-lane.sh does)"; exit 2; }
"$root/tools/rxe-vm/run.sh" --quiet --test-timeout 900 --timeout 1200 \
  --file "$b/src/libhipobj.so.0:lib/libhipobj.so.0" \
  --file "$b/server/hipobj-test-server:bin/hipobj-test-server" \
  --file "$b/tests/vm/hipobj-vmtest:bin/hipobj-vmtest" \
  --file "$b/tests/vm/hipobj-vmprobe:bin/hipobj-vmprobe" \
  --file "$root/tests/vm/lib.sh:lib.sh" \
  "$root/bench/rxe-windows-guest.sh"
