#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# hipobj with GPU memory on a machine with a GPU (the H200 device machine:
# CUDA, no RDMA device): get and put through GPU 0 over the plain-HTTP
# fallback, where the bytes go through pinned host bounce buffers and the
# runtime's copies; bytes compared; info and a small bench recorded.
#   gpu-http.sh BINDIR [OUTDIR]
# BINDIR holds hipobj, hipobj-test-server and curl (and lib/ beside it, for
# a machine without their libraries).
set -u
bin=$(cd "$1" && pwd)
out=${2:-/tmp}
[ -d "$bin/../lib" ] && export LD_LIBRARY_PATH=$bin/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$bin:$PATH
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../../../integrations/curl/tests/server.sh"
W=$(mktemp -d)
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }

hipobj info >"$out/info.txt" 2>&1; cat "$out/info.txt"
grep -q "GPU 0:" "$out/info.txt" || skip "no GPU found by hipobj info"
start_server "$bin/hipobj-test-server" --max-object-size 2G
curl -sf -X PUT "$ENDPOINT/gpu" >/dev/null || { echo "no bucket"; exit 1; }
E=(--endpoint "$ENDPOINT" -v)
head -c $((256 << 20)) /dev/urandom >"$W/a"

hipobj put "$W/a" s3://gpu/a --gpu 0 "${E[@]}" 2>"$W/err"; rc=$?; cat "$W/err"
[ $rc = 0 ] && grep -q "memory: CUDA\|memory: HIP" "$W/err" && pass "put from GPU 0" || fail "put --gpu: $rc"
curl -sf "$ENDPOINT/gpu/a" | cmp -s - "$W/a" && pass "put: the server has the bytes" || fail "put: bytes differ"
hipobj get s3://gpu/a -o "$W/a.back" --gpu 0 "${E[@]}" 2>"$W/err"; rc=$?; cat "$W/err"
[ $rc = 0 ] && cmp -s "$W/a" "$W/a.back" && pass "get into GPU 0, same bytes" || fail "get --gpu: $rc"
hipobj put "$W/a" s3://gpu/m --gpu 0 --part-size 32M --concurrency 8 "${E[@]}" 2>"$W/err"; rc=$?; cat "$W/err"
[ $rc = 0 ] && grep -q "parts: 0 by RDMA, 8 by HTTP" "$W/err" && pass "multipart from GPU 0 (8 parts)" || fail "multipart --gpu: $rc"
hipobj get s3://gpu/m -o "$W/m.back" --gpu 0 --part-size 16M --concurrency 8 "${E[@]}" 2>"$W/err"; rc=$?; cat "$W/err"
[ $rc = 0 ] && cmp -s "$W/a" "$W/m.back" && pass "16 ranges into GPU 0, same bytes" || fail "ranges --gpu: $rc"
hipobj bench s3://gpu/bench --endpoint "$ENDPOINT" --gpu 0 --sizes 1M,64M --concurrency 1,4 \
  >"$out/bench-gpu-http.txt" 2>&1; rc=$?; cat "$out/bench-gpu-http.txt"
[ $rc = 0 ] && pass "bench --gpu 0" || fail "bench --gpu: $rc"
stop_server
rm -rf "$W"
[ $FAILS = 0 ] && { echo "all checks passed"; exit 0; }
echo "$FAILS check(s) failed"; exit 1
