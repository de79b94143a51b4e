#!/usr/bin/env bash
# The Soft-RoCE lane: builds the library, the test server and the VM test
# programs (release build, no sanitizers), then boots one VM with rxe0 and
# runs tests/vm/cases/*.sh in it (tools/rxe-vm/run.sh). Prints the runner's
# "vm: N passed, N failed, N skipped" line; exits non-zero on any failure.
#   tests/vm/run-lane.sh [CASE...]   (default: every case)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build/vm
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target hipobj hipobj-test-server \
  hipobj-vmtest hipobj-vmprobe >"$build.log" 2>&1 || { tail -n 30 "$build.log"; exit 1; }
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=("$root"/tests/vm/cases/*.sh)
exec "$root/tools/rxe-vm/run.sh" --quiet --test-timeout 240 --timeout 1500 \
  --log "$root/build/vm-lane.log" \
  --file "$build/src/libhipobj.so.0:lib/libhipobj.so.0" \
  --file "$build/server/hipobj-test-server:bin/hipobj-test-server" \
  --file "$build/tests/vm/hipobj-vmtest:bin/hipobj-vmtest" \
  --file "$build/tests/vm/hipobj-vmprobe:bin/hipobj-vmprobe" \
  --file "$root/tests/vm/lib.sh:lib.sh" \
  "${cases[@]}"
