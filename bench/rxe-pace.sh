#!/usr/bin/env bash
# Pacing on Soft-RoCE (the server engine's window follows rxe's retry
# counter; docs/architecture.md, "Pacing"), against the unpaced pipeline
# and a fixed two-MTU window, next to perftest, under PACE_NETEM (default
# "loss 1% delay 2ms 1ms") and on a clean fabric, in one VM boot
# (bench/rxe-pace-guest.sh). Prints the raw lines.
#   bench/rxe-pace.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/vm
res=$(mktemp -d)
echo "host load before: $(cat /proc/loadavg)"   # the figures swing with it
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target hipobj hipobj_s3 hipobj_cli hipobj-test-server \
  >"$build.log" 2>&1 || { tail -n 30 "$build.log"; exit 1; }
envs=()
[ -z "${PACE_NETEM:-}" ] || envs+=(--env "PACE_NETEM=$PACE_NETEM")
"$root/tools/rxe-vm/run.sh" --quiet --test-timeout 1500 --timeout 1600 --results "$res" \
  "${envs[@]}" \
  --file "$build/src/libhipobj.so.0:lib/libhipobj.so.0" \
  --file "$build/integrations/curl/libhipobj_s3.so.0:lib/libhipobj_s3.so.0" \
  --file "$build/server/hipobj-test-server:bin/hipobj-test-server" \
  --file "$build/tools/hipobj/hipobj:bin/hipobj" \
  --file "$(command -v curl):bin/curl" \
  --file "$root/tests/vm/lib.sh:lib.sh" \
  --file "$root/tests/vm/faults.sh:faults.sh" \
  "$root/bench/rxe-pace-guest.sh"
echo "host load after: $(cat /proc/loadavg)"
cat "$res/pace.txt"
