#!/usr/bin/env bash
# hipObject GETs and PUTs next to ib_write_bw and ib_read_bw under RoCE
# netem profiles (none, loss 0.1%, loss 1%, delay 2ms 1ms, and loss 1%
# with delay 2ms 1ms; FAULT_BENCH_PROFILES, "|"-separated, picks others),
# all on the fault fabric of tests/vm/faults.sh, in one VM boot: 64 KiB
# and 4 MiB, throughput, p50/p99 latency and the client's retries by
# cause. Prints the raw lines, then a markdown table.
#   bench/rxe-fault-bench.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/vm
res=$(mktemp -d)
echo "host load before: $(cat /proc/loadavg)"   # the figures swing with it
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target hipobj hipobj-test-server hipobj-vmtest \
  >"$build.log" 2>&1 || { tail -n 30 "$build.log"; exit 1; }
"$root/tools/rxe-vm/run.sh" --quiet ${FAULT_BENCH_PROFILES:+--env "FAULT_BENCH_PROFILES=$FAULT_BENCH_PROFILES"} --test-timeout 1800 --timeout 1900 --results "$res" \
  --file "$build/src/libhipobj.so.0:lib/libhipobj.so.0" \
  --file "$(command -v curl):bin/curl" \
  --file "$build/server/hipobj-test-server:bin/hipobj-test-server" \
  --file "$build/tests/vm/hipobj-vmtest:bin/hipobj-vmtest" \
  --file "$root/tests/vm/lib.sh:lib.sh" \
  --file "$root/tests/vm/faults.sh:faults.sh" \
  "$root/bench/rxe-fault-bench-guest.sh"
echo "host load after: $(cat /proc/loadavg)"
cat "$res/fault-bench.txt"
python3 - "$res/fault-bench.txt" <<'PY'
import re, sys
perf, lat, drop, order = {}, {}, {}, []
for line in open(sys.argv[1]):
    kv = dict(re.findall(r"(\w+)=([\w.%]+)", line))
    if "netem" not in kv:
        continue
    n = kv["netem"]
    if n not in order:
        order.append(n)
    if line.startswith("PERF"):
        perf[(n, kv["tool"], int(kv["size"]))] = float(kv["MBps"])
    elif line.startswith("BENCH"):
        lat[(n, kv["op"], int(kv["size"]), kv["timeout_ms"])] = kv
    elif line.startswith("DROPPED"):
        drop[n] = kv["packets"]
print("| RoCE netem | op | size | hipObject MB/s | perftest MB/s | hipObject/perftest "
      "| p50 ms | p99 ms | ok | retries (fabric, server rdma, stalled, kept broken) |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
for n in order:
    for op, tool in (("getlat", "ib_write_bw"), ("putlat", "ib_read_bw")):
        for size in (65536, 4194304):
            w = perf.get((n, tool, size))
            name = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"
            what = f"{op[:3].upper()} / {tool}"
            label = n.replace("_", " ") + (f" ({drop[n]} dropped)" if n in drop else "")
            for tmo in ("default", "30000"):
                g = lat.get((n, op, size, tmo))
                if not g:
                    if tmo == "default":
                        print(f"| {label} | {what} | {name} | - | {'-' if w is None else w} | - | - | - | - | - |")
                    continue
                mb = float(g["MBps"])
                ratio = f"{100 * mb / w:.0f}%" if w and int(g["ok"]) else "-"
                w = "-" if w is None else w
                r = ", ".join(g.get(k, "?") for k in ("retries_fabric", "retries_server_rdma",
                                                      "retries_stalled", "retries_kept_broken"))
                ok = g["ok"] + "/" + g["n"] + (" (deadline 30 s)" if tmo != "default" else "")
                print(f"| {label} | {what} | {name} | {mb:.1f} | {w} | {ratio} "
                      f"| {g['p50_ms']} | {g['p99_ms']} | {ok} | {r} |")
PY
