#!/usr/bin/env bash
# The CPU cost of a transfer on Soft-RoCE, client and server, by RDMA next
# to plain HTTP in the same boot (issue #23): 4 KiB, 1 MiB and 64 MiB PUTs
# and GETs, one stream, CPU ms per transfer and s per GB (getrusage of each
# process, user + system, every thread), then the CPU that 8 client
# processes and the server spend while those clients sit idle on kept
# connections. Prints the raw lines and a markdown table.
#   bench/rxe-cpu.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/vm
res=$(mktemp -d)
echo "host load before: $(cat /proc/loadavg)"   # the figures swing with it
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target hipobj hipobj_s3 hipobj_cli hipobj-test-server hipobj-vmtest \
  >"$build.log" 2>&1 || { tail -n 30 "$build.log"; exit 1; }
rc=0
"$root/tools/rxe-vm/run.sh" --quiet --test-timeout 1200 --timeout 1500 --results "$res" \
  --file "$build/src/libhipobj.so.0:lib/libhipobj.so.0" \
  --file "$build/integrations/curl/libhipobj_s3.so.0:lib/libhipobj_s3.so.0" \
  --file "$build/tools/hipobj/hipobj:bin/hipobj" \
  --file "$(command -v curl):bin/curl" \
  --file "$build/server/hipobj-test-server:bin/hipobj-test-server" \
  --file "$build/tests/vm/hipobj-vmtest:bin/hipobj-vmtest" \
  --file "$root/tests/vm/lib.sh:lib.sh" \
  "$root/bench/rxe-cpu-guest.sh" || rc=$?
echo "host load after: $(cat /proc/loadavg)"
cat "$res/cpu.txt"
python3 - "$res/cpu.txt" <<'PY'
import re, sys
pts, idle, srv = {}, [], None
for line in open(sys.argv[1]):
    kv = dict(re.findall(r"(\w+)=([\w.]+)", line))
    if line.startswith("CPU "):
        pts[(kv["op"], int(kv["size"]), kv["path"])] = kv
    elif line.startswith("IDLE "):
        idle.append(float(kv["cpu_pct"]))
    elif line.startswith("IDLESRV"):
        srv = kv
def name(s):
    return f"{s >> 20} MiB" if s >= 1 << 20 else f"{s >> 10} KiB"
print("| size | op | path | MiB/s | client CPU ms/transfer | client CPU s/GB "
      "| server CPU ms/transfer | server CPU s/GB |")
print("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |")
for size in sorted({k[1] for k in pts}):
    for op in ("PUT", "GET"):
        for path in ("HTTP", "RDMA"):
            p = pts.get((op, size, path))
            if not p:
                continue
            n = int(p["n"])
            client = float(p["client_user_s"]) + float(p["client_sys_s"])
            server = float(p["server_s"])
            if op == "GET":   # take out the untimed PUT that seeded the object
                put = pts.get(("PUT", size, path))
                if put:
                    server -= float(put["server_s"]) / int(put["n"])
            gb = size * n / 1e9
            print(f"| {name(size)} | {op} | {path} | {float(p['mibps']):.1f} "
                  f"| {client * 1e3 / n:.3f} | {client / gb:.2f} "
                  f"| {server * 1e3 / n:.3f} | {server / gb:.2f} |")
if idle:
    print(f"\nIdle: {len(idle)} client processes on kept connections, CPU "
          f"{min(idle):.3f}% to {max(idle):.3f}% of one core each over 25 s; "
          f"the server {float(srv['cpu_ms']) / 12e3 * 100:.3f}% over 12 s of it"
          if srv else "")
PY
exit $rc
