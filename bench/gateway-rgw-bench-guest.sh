#!/bin/sh
# In the VM, for bench/gateway-rgw-bench.sh: writes $RESULTS/table.md.
set -u
[ -n "${HOST_ADDR:-}" ] || { echo "no host network"; exit 1; }
RGW=http://$HOST_ADDR:7480
. /payload/lib.sh
start_gateway GW "$RGW" --backend-access-key "$RGW_ACCESS_KEY" \
  --backend-secret-key "$RGW_SECRET_KEY" --access-key GWKEY --secret-key GWSECRET || exit 1
GW=$GW_URL
SIZES=1M,4M,16M,64M
gw() { AWS_ACCESS_KEY_ID=GWKEY AWS_SECRET_ACCESS_KEY=GWSECRET hipobj "$@" --endpoint "$GW"; }
rgw() { AWS_ACCESS_KEY_ID=$RGW_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$RGW_SECRET_KEY hipobj "$@" --endpoint "$RGW"; }
ticks() { awk '{print $14 + $15}' "/proc/$GW_PID/stat"; }
: >/tmp/rows
rows() { # TAG < bench --json
  tr ',{' '\n\n' | sed -n 's/"size":\([0-9]*\)/\1/p;s/"mib_per_s":\([0-9.]*\)/\1/p;s/"p50_ms":\([0-9.]*\)/\1/p' |
    paste -d' ' - - - | sed "s/^/$1 /" >>/tmp/rows
}
bench() { # TAG CLIENT-FN PREFIX PATH-OPTION
  t0=$(ticks)
  $2 bench "s3://gwbench/$3" --sizes $SIZES --concurrency 1 --ops get --iterations 5 \
    --json "$4" >/tmp/b.json 2>/tmp/b.err || { cat /tmp/b.err; exit 1; }
  t1=$(ticks)
  rows "$1" </tmp/b.json
  echo "cpu-$1 $((t1 - t0)) $(( $(wc -l </tmp/rows) ))" >>/tmp/cpu
}
# The fabric's own figure, same boot: perftest's RDMA WRITE bandwidth
wbw() { # SIZE ITERS -> MB/s of ib_write_bw on rxe0 over loopback
  ib_write_bw -d "$RXE_DEV" -x "${RXE_GID_INDEX:-1}" -s "$1" -n "$2" -F >/tmp/wbw.srv 2>&1 &
  local srv=$!
  sleep 0.5
  ib_write_bw -d "$RXE_DEV" -x "${RXE_GID_INDEX:-1}" -s "$1" -n "$2" -F 127.0.0.1 2>&1 |
    awk -v s="$1" '$1 == s {print $4}' | tail -n1
  wait $srv 2>/dev/null
}
: >/tmp/cpu
for mb in 1 4 16 64; do
  echo "wbw $((mb * 1048576)) $(wbw $((mb * 1048576)) $((256 / mb < 5 ? 5 : 256 / mb)))" >>/tmp/cpu
done
r=0
while [ $r -lt "$ROUNDS" ]; do
  bench gw-rdma gw rdma --require-rdma
  bench gw-http gw http --no-rdma
  bench rgw rgw direct --no-rdma
  r=$((r + 1))
done
kill "$GW_PID"; wait "$GW_PID"
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
cat /tmp/rows /tmp/cpu >"$RESULTS/rows.txt"
# bytes per round and path: 5 GETs of each size
per=$(( 5 * (1 + 4 + 16 + 64) * 1048576 ))
awk -v hz="$hz" -v per="$per" -v rounds="$ROUNDS" '
function median(a, n,   i, j, t) {
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function cell(k,   j) {
  for (j = 1; j <= n[k]; j++) { x[j] = mib[k, j]; y[j] = p50[k, j] }
  return sprintf("%.1f (%.0f)", median(x, n[k]), median(y, n[k]))
}
function med(k,   j) { for (j = 1; j <= n[k]; j++) x[j] = mib[k, j]; return median(x, n[k]) }
$1 ~ /^cpu-/ { tag = substr($1, 5); ticks[tag] += $2; next }
$1 == "wbw" { wbw[$2] = $3; next }
{ k = $1 " " $2; n[k]++; mib[k, n[k]] = $3; p50[k, n[k]] = $4; sizes[$2] = 1 }
END {
  printf "| size | RDMA GET through the gateway | plain HTTP GET through the gateway | plain HTTP GET straight from RGW | RDMA via gateway / direct | ib_write_bw MB/s |\n"
  printf "|---|---|---|---|---|---|\n"
  m = 0; for (s in sizes) order[++m] = s + 0
  for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (order[j] < order[i]) { t = order[i]; order[i] = order[j]; order[j] = t }
  for (i = 1; i <= m; i++) {
    s = order[i]
    printf "| %d MiB | %s | %s | %s | %.2fx | %s |\n", s / 1048576, cell("gw-rdma " s), cell("gw-http " s), cell("rgw " s), med("gw-rdma " s) / med("rgw " s), wbw[s]
  }
  printf "\nMiB/s (p50 ms), medians of %d rounds of 5 GETs per size, one stream.\n", rounds
  gb = rounds * per / 1e9
  printf "Gateway CPU (user + system, its whole process) per GB moved: %.1f s by RDMA, %.1f s forwarding plain HTTP.\n", ticks["gw-rdma"] / hz / gb, ticks["gw-http"] / hz / gb
}' /tmp/rows /tmp/cpu >"$RESULTS/table.md"
cat "$RESULTS/table.md"
