#!/bin/sh
# SPDX-License-Identifier: MIT
# hipobj bench over RDMA on Soft-RoCE: the table (also in $RESULTS), every
# row moved by RDMA.
. /payload/lib.sh
. /payload/vmlib.sh
# Under QEMU's software emulation a 16 MiB transfer can take seconds.
export HIPOBJ_TRANSFER_TIMEOUT_MS=60000
start_server --log-requests || exit 1
curl -sf -X PUT "$ENDPOINT/bench" >/dev/null || { echo "no bucket"; exit 1; }
ho bench s3://bench/vm --sizes 4K,64K,1M,4M --concurrency 1,4 --iterations 5 --require-rdma
cat "$W/out"
[ -n "${RESULTS:-}" ] && [ -d "$RESULTS" ] && cp "$W/out" "$RESULTS/hipobj-bench.txt"
[ $RC = 0 ] && pass "bench ran" || fail "bench: rc $RC"
[ "$(grep -c '^PUT\|^GET' "$W/out")" = 16 ] && pass "16 rows" || fail "rows"
grep '^PUT\|^GET' "$W/out" | grep -qv ' RDMA$' && fail "a row not by RDMA" || pass "every row by RDMA"
# GETs ride the connections the PUTs before them made: one stream makes no
# QP transition; four streams may need one connection the PUT row's timing
# did not make (each stream leases a connection when it needs one; a CI
# run had 1 new of 20), so there at least 80% reuse. (reuse is the only
# field ending in %, qpt/x the one after it: bench adds columns over time;
# the concurrency is field 4)
awk '$1 != "GET" {next} {q = ""; r = ""; for (i = 2; i < NF; i++) if ($i ~ /%$/) {r = $i; q = $(i + 1)}}
     $4 == 1 && q != "0.00" {bad = 1} $4 > 1 && r + 0 < 80 {bad = 1} END {exit bad}' "$W/out" &&
  pass "GETs: no QP transition for one stream, 80% reuse or more for several" ||
  fail "GETs made QP transitions"
ho bench s3://bench/vm --sizes 1M --concurrency 2 --iterations 5 --json
[ $RC = 0 ] && grep -q '"path": "RDMA"' "$W/out" && pass "bench --json" || fail "bench --json"
finish
