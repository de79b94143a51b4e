#!/usr/bin/env bash
# Where the time of a small GET or PUT goes on Soft-RoCE (issue #23, item
# 4): hipobj-vmtest's phases case (the application-driven calls timed in
# their parts, next to the same client's plain-HTTP request and a HEAD on
# one kept TCP connection) for 4 KiB and 64 KiB, with the defaults,
# without memory windows, answer first, and with polling waits, next to
# ib_write_lat in the same boot. Prints the raw lines and a markdown
# table of the medians over the rounds.
#   bench/rxe-phases.sh   (PHASES_COUNT: calls per run, 30; PHASES_SIZES:
#                          "4096 65536"; PHASES_VARIANTS: see the guest)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/vm
res=$(mktemp -d)
echo "host load before: $(cat /proc/loadavg)"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target hipobj hipobj-test-server hipobj-vmtest hipobj-vmprobe \
  >"$build.log" 2>&1 || { tail -n 30 "$build.log"; exit 1; }
rc=0
envs=(--env "PHASES_COUNT=${PHASES_COUNT:-30}" --env "PHASES_SIZES=${PHASES_SIZES:-4096 65536}")
[ -n "${PHASES_VARIANTS:-}" ] && envs+=(--env "PHASES_VARIANTS=$PHASES_VARIANTS")
"$root/tools/rxe-vm/run.sh" --quiet "${envs[@]}" --test-timeout 900 \
  --timeout 1100 --results "$res" \
  --file "$build/src/libhipobj.so.0:lib/libhipobj.so.0" \
  --file "$build/server/hipobj-test-server:bin/hipobj-test-server" \
  --file "$build/tests/vm/hipobj-vmtest:bin/hipobj-vmtest" \
  --file "$build/tests/vm/hipobj-vmprobe:bin/hipobj-vmprobe" \
  --file "$root/tests/vm/lib.sh:lib.sh" \
  "$root/bench/rxe-phases-guest.sh" || rc=$?
echo "host load after: $(cat /proc/loadavg)"
cat "$res/phases.txt"
python3 - "$res/phases.txt" <<'PY'
import re, statistics, sys
rows, lat, srv, win, stime = {}, {}, [], {}, {}
for line in open(sys.argv[1]):
    kv = dict(re.findall(r"(\w+)=([\w.-]+)", line))
    if line.startswith("PERF "):
        lat.setdefault(int(kv["size"]), []).append(float(kv["t_typical_us"]))
    elif line.startswith("SRV "):
        srv.append(kv)
    elif line.startswith("WINLAT "):
        for k in ("read_mr", "read_mw", "write_mr", "write_mw"):
            win.setdefault(k, []).append(float(kv[k + "_us"]))
    elif line.startswith("PHASES "):
        rows.setdefault((kv["variant"], kv["op"], int(kv["size"])), []).append(kv)
    elif line.startswith("SERVER_TIME "):
        stime.setdefault((kv["variant"], kv["op"], int(kv["size"])), []).append(kv)
cols = ["http", "head", "token", "exchange", "complete", "rdma_sum", "whole"]
print("| variant | op | size | " + " | ".join(f"{c} us" for c in cols) +
      " | ib_write_lat us | whole / (http + lat) |")
print("| --- | --- | ---: |" + " ---: |" * (len(cols) + 2))
for (v, op, size), rs in sorted(rows.items(), key=lambda r: (r[0][2], r[0][1], r[0][0])):
    med = {c: statistics.median(float(r[c + "_us"]) for r in rs) for c in cols}
    l = statistics.median(lat.get(size, [0]))
    ratio = med["whole"] / (med["http"] + l) if med["http"] + l else 0
    print(f"| {v} | {op} | {size >> 10} KiB | " +
          " | ".join(f"{med[c]:.0f}" for c in cols) + f" | {l:.1f} | {ratio:.2f}x |")
if stime:
    parts = ["total", "admit", "post", "wait", "io", "commit", "other", "around"]
    print("\nThe server library's time per transfer (its time_ns sums, means over "
          "each run's transfers after the first round; medians over the rounds, us):\n")
    print("| variant | op | size | " + " | ".join(parts) + " |")
    print("| --- | --- | ---: |" + " ---: |" * len(parts))
    for (v, op, size), rs in sorted(stime.items(), key=lambda r: (r[0][2], r[0][1], r[0][0])):
        med = {c: statistics.median(float(r[c + "_us"]) for r in rs) for c in parts}
        print(f"| {v} | {op} | {size >> 10} KiB | " +
              " | ".join(f"{med[c]:.0f}" for c in parts) + " |")
if srv:
    print("\nThe servers' own time per request (their request logs, medians, ms): " +
          "; ".join(f"{r['server']} {r['op']} by {r['path']} {float(r['p50_ms']):.3f}"
                    for r in srv))
if win:
    print("\n4 KiB by raw verbs, one QP pair, post to completion (medians, us): " +
          ", ".join(f"{k} {statistics.median(win[k]):.1f}"
                    for k in ("read_mr", "read_mw", "write_mr", "write_mw")))
PY
exit $rc
