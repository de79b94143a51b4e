#!/usr/bin/env bash
# The issue's user benchmark under faults, in one VM boot
# (bench/rxe-user-faults-guest.sh): three `hipobj bench` processes under
# USER_NETEM (default "loss 1% delay 2ms 1ms"), at the issue's
# HIPOBJ_TRANSFER_TIMEOUT_MS=30000 or USER_TIMEOUT_MS ("default": the
# library's).
#   bench/rxe-user-faults.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/vm
res=$(mktemp -d)
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON >/dev/null
cmake --build "$build" -j2 --target hipobj hipobj_s3 hipobj_cli hipobj-test-server \
  >"$build.log" 2>&1 || { tail -n 30 "$build.log"; exit 1; }
envs=()
[ -z "${USER_NETEM:-}" ] || envs+=(--env "USER_NETEM=$USER_NETEM")
[ -z "${USER_TIMEOUT_MS:-}" ] || envs+=(--env "USER_TIMEOUT_MS=$USER_TIMEOUT_MS")
"$root/tools/rxe-vm/run.sh" --quiet --test-timeout 1500 --timeout 1600 --results "$res" \
  "${envs[@]}" \
  --file "$build/src/libhipobj.so.0:lib/libhipobj.so.0" \
  --file "$build/integrations/curl/libhipobj_s3.so.0:lib/libhipobj_s3.so.0" \
  --file "$build/server/hipobj-test-server:bin/hipobj-test-server" \
  --file "$build/tools/hipobj/hipobj:bin/hipobj" \
  --file "$(command -v curl):bin/curl" \
  --file "$root/tests/vm/lib.sh:lib.sh" \
  --file "$root/tests/vm/faults.sh:faults.sh" \
  "$root/bench/rxe-user-faults-guest.sh" || true
cat "$res/user-faults.txt"
