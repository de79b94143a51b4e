#!/usr/bin/env bash
# hipObject GETs next to ib_write_bw under RoCE packet loss (0%, 0.1%, 1%),
# both on the fault fabric of tests/vm/faults.sh, in one VM boot: 64 KiB
# and 4 MiB, throughput and p50/p99 latency. Prints a markdown table.
#   bench/rxe-fault-bench.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/vm
res=$(mktemp -d)
echo "host load before: $(cat /proc/loadavg)"   # the figures swing with it
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target hipobj hipobj-test-server hipobj-vmtest \
  >"$build.log" 2>&1 || { tail -n 30 "$build.log"; exit 1; }
"$root/tools/rxe-vm/run.sh" --quiet --test-timeout 900 --timeout 1000 --results "$res" \
  --file "$build/src/libhipobj.so.0:lib/libhipobj.so.0" \
  --file "$build/server/hipobj-test-server:bin/hipobj-test-server" \
  --file "$build/tests/vm/hipobj-vmtest:bin/hipobj-vmtest" \
  --file "$root/tests/vm/lib.sh:lib.sh" \
  --file "$root/tests/vm/faults.sh:faults.sh" \
  "$root/bench/rxe-fault-bench-guest.sh"
echo "host load after: $(cat /proc/loadavg)"
cat "$res/fault-bench.txt"
python3 - "$res/fault-bench.txt" <<'PY'
import re, sys
perf, get = {}, {}
for line in open(sys.argv[1]):
    kv = dict(re.findall(r"(\w+)=([\w.]+)", line))
    if line.startswith("PERF"):
        perf[(kv["loss"], int(kv["size"]))] = float(kv["MBps"])
    elif line.startswith("BENCH"):
        get[(kv["loss"], int(kv["size"]))] = kv
print("| RoCE loss | size | GET MB/s | ib_write_bw MB/s | GET/perftest | GET p50 ms | GET p99 ms | GETs ok |")
print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for loss in ("0", "0.1", "1"):
    for size in (65536, 4194304):
        g, w = get.get((loss, size)), perf.get((loss, size))
        name = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"
        if not g:
            print(f"| {loss}% | {name} | - | {w or '-'} | - | - | - | - |")
            continue
        mb = float(g["MBps"])
        ratio = f"{100 * mb / w:.0f}%" if w else "-"
        print(f"| {loss}% | {name} | {mb:.1f} | {w:.1f} | {ratio} | {g['p50_ms']} | "
              f"{g['p99_ms']} | {g['ok']}/{g['n']} |")
PY
