#!/usr/bin/env bash
# The server's WRITE/READ size under RoCE faults, in one VM boot
# (bench/rxe-chunk-guest.sh). Prints one CHUNK line per (profile, chunk).
#   CHUNK_PER=40 CHUNK_CONFIGS="1M:4 64K:16" CHUNK_PROFILES="loss1jit loss5" bench/rxe-chunk.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/vm
res=$(mktemp -d)
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON >/dev/null
cmake --build "$build" -j2 --target hipobj hipobj-test-server hipobj-vmtest hipobj-soak \
  >"$build.log" 2>&1 || { tail -n 30 "$build.log"; exit 1; }
envs=()
for v in CHUNK_PER CHUNK_CONFIGS CHUNK_PROFILES HIPOBJ_TRANSFER_TIMEOUT_MS HIPOBJ_RETRIES; do
  [ -z "${!v:-}" ] || envs+=(--env "$v=${!v}")
done
"$root/tools/rxe-vm/run.sh" --quiet --test-timeout 1500 --timeout 1600 --results "$res" \
  "${envs[@]}" \
  --file "$build/src/libhipobj.so.0:lib/libhipobj.so.0" \
  --file "$build/server/hipobj-test-server:bin/hipobj-test-server" \
  --file "$build/tests/vm/hipobj-vmtest:bin/hipobj-vmtest" \
  --file "$build/tests/vm/hipobj-soak:bin/hipobj-soak" \
  --file "$root/tests/vm/lib.sh:lib.sh" \
  --file "$root/tests/vm/faults.sh:faults.sh" \
  "$root/bench/rxe-chunk-guest.sh" || true
cat "$res/chunk.txt"
