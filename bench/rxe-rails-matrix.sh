#!/usr/bin/env bash
# The scaling matrix on Soft-RoCE (issue #22): 1 and 2 rails x 1, 2, 4, 8
# client processes x 1, 4, 8 streams of 16 MiB GETs, each process one
# `hipobj bench`, all at once, against hipobj-test-server on both server
# NICs of tests/vm/rails.sh's fabric, next to ib_write_bw on one rail and
# on both at once in the same boot. Steady MiB/s is what crossed the
# rails' veth pairs in a window of GETs only while every process ran
# (from 1 s after the server answered every stream's untimed seeding PUT,
# for 6 s; before 2026-12-07 it began 4 s after the launch, inside the
# seeding at 32 streams and more); wall MiB/s is the GET bytes over the time from the
# first launch to the last exit (start-up, registration, connections and
# each stream's untimed seeding PUT included). Prints the raw lines and a
# markdown table. MATRIX_SIZE, MATRIX_PROCS, MATRIX_STREAMS, MATRIX_RAILS,
# MATRIX_WARM_S and MATRIX_WINDOW_S pick other points; MATRIX_SERVER_ARGS
# adds server options (e.g. --rdma-no-pacing); MATRIX_BACKLOG sets the
# guest's net.core.netdev_max_backlog. Each point also prints the
# kernel's backlog drops and rxe's retries and out-of-sequence requests.
#   bench/rxe-rails-matrix.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/vm
res=$(mktemp -d)
echo "host load before: $(cat /proc/loadavg)"   # the figures swing with it
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target hipobj hipobj_s3 hipobj_cli hipobj-test-server hipobj-vmtest \
  >"$build.log" 2>&1 || { tail -n 30 "$build.log"; exit 1; }
envs=()
for v in MATRIX_SIZE MATRIX_PROCS MATRIX_STREAMS MATRIX_WARM_S MATRIX_WINDOW_S MATRIX_RAILS MATRIX_SERVER_ARGS MATRIX_BACKLOG; do
  [ -n "${!v:-}" ] && envs+=(--env "$v=${!v}")
done
rc=0
"$root/tools/rxe-vm/run.sh" --quiet --mem 6144 --test-timeout 2400 --timeout 2500 --results "$res" \
  "${envs[@]}" \
  --file "$build/src/libhipobj.so.0:lib/libhipobj.so.0" \
  --file "$build/integrations/curl/libhipobj_s3.so.0:lib/libhipobj_s3.so.0" \
  --file "$build/tools/hipobj/hipobj:bin/hipobj" \
  --file "$(command -v curl):bin/curl" \
  --file "$build/server/hipobj-test-server:bin/hipobj-test-server" \
  --file "$build/tests/vm/hipobj-vmtest:bin/hipobj-vmtest" \
  --file "$root/tests/vm/lib.sh:lib.sh" \
  --file "$root/tests/vm/rails.sh:rails.sh" \
  "$root/bench/rxe-rails-matrix-guest.sh" || rc=$?
echo "host load after: $(cat /proc/loadavg)"
cat "$res/matrix.txt"
python3 - "$res/matrix.txt" <<'PY'
import re, sys
perf, pts = {}, []
for line in open(sys.argv[1]):
    kv = dict(re.findall(r"(\w+)=([\w.]+)", line))
    if line.startswith("PERF"):
        perf[int(kv["rails"])] = float(kv["MBps"] or 0)
    elif line.startswith("POINT"):
        pts.append(kv)
print("| rails | processes | streams each | steady MiB/s | wall MiB/s | steady / ib_write_bw | p50 ms | p99 ms | rail 1 share | ok |")
# ib_write_bw's MB/s are 10^6 bytes
print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for p in pts:
    r = int(p["rails"])
    w = perf.get(r, 0) / 1.048576  # MB/s to MiB/s
    b0, b1 = int(p["rail0_bytes"]), int(p["rail1_bytes"])
    share = f"{100 * b1 / (b0 + b1):.0f}%" if b0 + b1 else "-"
    ratio = f"{100 * float(p['steady_mibps']) / w:.0f}%" if w else "-"
    print(f"| {r} | {p['procs']} | {p['streams']} | {float(p['steady_mibps']):.1f} "
          f"| {p['wall_mibps']} | {ratio} | {p['p50_ms']} | {p['p99_ms']} | {share} "
          f"| {p['ok']}/{p['procs']}{'' if p['window_full'] == '1' else ' (a process ended inside the window)'} |")
print(f"\nib_write_bw (one QP, 40 x 4 MiB): rail 0 alone {perf.get(1, 0)} MB/s, both rails at once "
      f"{perf.get(2, 0)} MB/s")
PY
exit $rc
