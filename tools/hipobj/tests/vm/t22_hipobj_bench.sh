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
# GETs ride the connections the PUTs before them made: no QP transition.
# (qpt/x is the field after reuse, the only one ending in %: bench adds
# columns over time)
awk '$1 != "GET" {next} {q = ""; for (i = 2; i < NF; i++) if ($i ~ /%$/) q = $(i + 1)}
     q != "0.00" {bad = 1} END {exit bad}' "$W/out" &&
  pass "GETs: 0 QP transitions per transfer" || fail "GETs made QP transitions"
ho bench s3://bench/vm --sizes 1M --concurrency 2 --iterations 5 --json
[ $RC = 0 ] && grep -q '"path": "RDMA"' "$W/out" && pass "bench --json" || fail "bench --json"
finish
