#!/bin/sh
# Runs inside the Soft-RoCE VM (see bench/rxe-phases.sh): where a small
# transfer's time goes. Rounds alternate the variants (the defaults; no
# memory windows; no data first; waits that poll instead of blocking) and
# ib_write_lat, so that a busy host slows all of them alike; the server's
# side has two more: its waits polling (HIPOBJ_SPIN_US=poll) and its store
# computing no MD5 ETag (--random-etags), its pacing off (--rdma-no-pacing:
# no look at rxe's retry counter), each its own server. Writes raw
# lines to $RESULTS/phases.txt.
. /payload/lib.sh
out=${RESULTS:-/tmp}/phases.txt
: >"$out"
count=${PHASES_COUNT:-30}
export HIPOBJ_TRANSFER_TIMEOUT_MS=60000
# Each server's request log (its stderr: one line per request, with the
# time it took) is renamed after the start, so the three stay apart.
keep_log() { mv "/tmp/server.$$.err" "/tmp/srv.$1.log"; }
start_server --log-requests || exit 1
keep_log default
EP_DEFAULT=$ENDPOINT PID_DEFAULT=$SERVER_PID
# the server's side: its waits polling, its store hashing no ETag
export HIPOBJ_SPIN_US=poll
start_server --log-requests || exit 1
unset HIPOBJ_SPIN_US
keep_log server-poll
EP_SPOLL=$ENDPOINT PID_SPOLL=$SERVER_PID
start_server --log-requests --random-etags || exit 1
keep_log server-no-md5
EP_NOMD5=$ENDPOINT PID_NOMD5=$SERVER_PID
start_server --log-requests --rdma-no-pacing || exit 1
keep_log server-no-pacing
EP_NOPACE=$ENDPOINT PID_NOPACE=$SERVER_PID
sizes=${PHASES_SIZES:-4096 65536}
variants=${PHASES_VARIANTS:-default no-windows answer-first poll server-poll server-no-md5 server-no-pacing}
rc=0
for round in 1 2 3; do
  for s in $sizes; do
    echo "PERF tool=ib_write_lat size=$s round=$round t_typical_us=$(write_lat_us "$s")" |
      tee -a "$out"
    [ "$s" = 4096 ] && hipobj-vmprobe window-latency 2>&1 | grep '^WINLAT' |
      sed "s/\$/ round=$round/" | tee -a "$out"
    for v in $variants; do
      env= ep=$EP_DEFAULT
      case $v in
        no-windows) env=HIPOBJ_SCOPED_TOKENS=0 ;;
        answer-first) env=HIPOBJ_DATA_FIRST=0 ;;
        poll) env=HIPOBJ_SPIN_US=poll ;;
        server-poll) ep=$EP_SPOLL ;;
        server-no-md5) ep=$EP_NOMD5 ;;
        server-no-pacing) ep=$EP_NOPACE ;;
      esac
      for op in get put; do
        line=$(env $env hipobj-vmtest "$ep" phases $op "$s" "$count" 2>&1) || {
          echo "FAIL variant=$v op=$op size=$s: $(echo "$line" | tail -n 3)" | tee -a "$out"
          rc=1
        }
        echo "$line" | grep -E '^(PHASES|SERVER_TIME)' |
          sed "s/\$/ variant=$v round=$round/" | tee -a "$out"
      done
    done
  done
done
for p in $PID_DEFAULT $PID_SPOLL $PID_NOMD5 $PID_NOPACE; do
  kill "$p" 2>/dev/null
  wait "$p" 2>/dev/null
done
# The servers' own time per request, from their logs: a PUT's body came
# by HTTP (in>0) or by RDMA (in=0), a GET's went out by HTTP (out>0) or
# by RDMA (out=0); medians over every such request of the run (of every
# size in PHASES_SIZES together).
for v in default server-poll server-no-md5 server-no-pacing; do
  cp "/tmp/srv.$v.log" "${RESULTS:-/tmp}/srv.$v.log" 2>/dev/null
  awk -v v="$v" '($3 == "PUT" || $3 == "GET") && $4 == "/vmtest/phases" {
      io = $3 == "PUT" ? $8 : $9; sub(/^(in|out)=/, "", io); ms = $10; sub(/ms$/, "", ms)
      k = $3 " " (io + 0 > 0 ? "http" : "rdma"); n[k]++; t[k, n[k]] = ms + 0 }
    END { for (k in n) { m = n[k]; for (i = 1; i <= m; i++) a[i] = t[k, i]
            for (i = 2; i <= m; i++) { x = a[i]; j = i - 1
              while (j > 0 && a[j] > x) { a[j + 1] = a[j]; j-- } a[j + 1] = x }
            split(k, f, " ")
            printf "SRV server=%s op=%s path=%s n=%d p50_ms=%.3f\n", v, f[1], f[2], m, a[int((m + 1) / 2)] } }' \
    "/tmp/srv.$v.log" | tee -a "$out"
done
exit $rc
