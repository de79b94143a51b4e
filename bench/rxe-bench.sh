#!/usr/bin/env bash
# hipObject against perftest on the same Soft-RoCE device, in one VM boot:
# GET/PUT throughput (1 and 4 streams) next to ib_read_bw/ib_write_bw, a
# 4 KiB GET's latency next to ibv_rc_pingpong's round trip, and the p50 of
# 4 KiB and 64 KiB GETs and PUTs next to their floor: the same client's
# plain-HTTP request plus ib_write_lat's typical latency. Prints a
# markdown table with the ratios; --write puts it in docs/performance.md.
#   bench/rxe-bench.sh [--write]
# BENCH_PACING_AB=N adds N alternating rounds of one stream at 16 and 64
# MiB with and without the server's pacing (AB lines in the raw results).
# BENCH_PUT_SHAPE=N adds N rounds of what a PUT's shape costs (SHAPE
# lines: perftest READs of 64 MiB and of 1 MiB with 2 outstanding, PUTs
# of 64 MiB with chunks of 1, 4 and 16 MiB); BENCH_SKIP_MAIN=1 runs only
# those rounds and prints their lines instead of the table.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/vm
res=$(mktemp -d)
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target hipobj hipobj_s3 hipobj_cli hipobj-test-server hipobj-vmtest \
  >"$build.log" 2>&1 || { tail -n 30 "$build.log"; exit 1; }
envs=()
for v in BENCH_PACING_AB BENCH_PUT_SHAPE BENCH_SKIP_MAIN; do
  [ -n "${!v:-}" ] && envs+=(--env "$v=${!v}")
done
"$root/tools/rxe-vm/run.sh" --quiet "${envs[@]}" --test-timeout 1200 --timeout 1500 --results "$res" \
  --file "$build/src/libhipobj.so.0:lib/libhipobj.so.0" \
  --file "$build/integrations/curl/libhipobj_s3.so.0:lib/libhipobj_s3.so.0" \
  --file "$build/tools/hipobj/hipobj:bin/hipobj" \
  --file "$(command -v curl):bin/curl" \
  --file "$build/server/hipobj-test-server:bin/hipobj-test-server" \
  --file "$build/tests/vm/hipobj-vmtest:bin/hipobj-vmtest" \
  --file "$root/tests/vm/lib.sh:lib.sh" \
  "$root/bench/rxe-bench-guest.sh"
echo "raw results: $res/bench.txt"
[ "${BENCH_SKIP_MAIN:-0}" = 1 ] && { grep -E '^(AB|SHAPE) ' "$res/bench.txt"; exit 0; }
python3 "$root/bench/rxe-table.py" "$res/bench.txt" ${1:+"$1"} "$root/docs/performance.md"
