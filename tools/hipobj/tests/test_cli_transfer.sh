#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# hipobj get and put against hipobj-test-server over plain HTTP: small and
# multipart objects, stdout, what the command says about the path, the
# server's counters, and exit codes with messages that say what to do.
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || skip "curl (the command) is not installed"
start_server "$SERVER_BIN" --min-part-size 1K
make_bucket data
E=(--endpoint "$ENDPOINT")

head -c 200000 /dev/urandom >"$WORK/small"
head -c 3000001 /dev/urandom >"$WORK/large"

run put "$WORK/small" s3://data/small "${E[@]}"
expect_rc 0 "-> s3://data/small" "put a small object"
if have_rdma; then
  grep -q "via RDMA\|via HTTP fallback" "$WORK/err" || fail "put: no path named"
else
  expect_rc 0 "note: no usable RDMA device" "put without RDMA device: the note"
  expect_rc 0 "via HTTP fallback (no usable RDMA device)" "put: the path"
fi
run get s3://data/small -o "$WORK/small.out" "${E[@]}" -v
expect_rc 0 "parts: " "get --verbose"
cmp -s "$WORK/small" "$WORK/small.out" && pass "get: same bytes" || fail "get: bytes differ"
have_rdma || expect_rc 0 "counters: rdma 0 transfers" "get --verbose: the counters"

# Multipart and ranges: 3 MB in parts of 1 MiB over 3 connections.
run put "$WORK/large" s3://data/dir/large.bin "${E[@]}" --part-size 1M --concurrency 3 -v
expect_rc 0 "parts: 0 by RDMA, 3 by HTTP" "put in 3 parts"
grep -q 'etag: ".*-3"' "$WORK/err" && pass "multipart ETag" || fail "no multipart ETag: $(cat "$WORK/err")"
run get s3://data/dir/large.bin -o - "${E[@]}" --part-size 512K -q
expect_rc 0 "" "get in 6 ranges to stdout"
cmp -s "$WORK/large" "$WORK/out" && pass "ranges: same bytes" || fail "ranges: bytes differ"
[ ! -s "$WORK/err" ] && pass "--quiet says nothing" || fail "--quiet said: $(cat "$WORK/err")"

# The default output file is the key's last part, in the current directory.
(cd "$WORK" && "$HIPOBJ" get s3://data/dir/large.bin "${E[@]}" -q) &&
  cmp -s "$WORK/large" "$WORK/large.bin" && pass "default output name" ||
  fail "default output name"

# stdin to put.
cat "$WORK/small" | "$HIPOBJ" put - s3://data/from-stdin "${E[@]}" -q &&
  curl -sf "$ENDPOINT/data/from-stdin" | cmp -s - "$WORK/small" &&
  pass "put from stdin" || fail "put from stdin"

# --no-rdma: plain HTTP by choice, said so.
run get s3://data/small -o /dev/null "${E[@]}" --no-rdma
expect_rc 0 "via HTTP (--no-rdma)" "--no-rdma"

# The server moved everything over HTTP and nothing by RDMA.
[ "$(stat_value rdma.bytes_in)" = 0 ] && [ "$(stat_value rdma.bytes_out)" = 0 ] &&
  pass "server: no RDMA bytes" || fail "server counted RDMA bytes"
[ "$(stat_value http.bytes_in)" -ge 3200001 ] && pass "server: HTTP bytes in" ||
  fail "server: http.bytes_in $(stat_value http.bytes_in)"

# Errors: what happened and what to do, and the exit status.
run get s3://data/missing -o "$WORK/x" "${E[@]}"
expect_rc 3 "does not exist (NoSuchKey)" "missing key: exit 3"
[ ! -e "$WORK/x" ] && pass "no file for a missing key" || fail "a file was created"
run get s3://nobucket/k "${E[@]}"
expect_rc 3 "bucket 'nobucket' does not exist" "missing bucket: exit 3"
run put "$WORK/small" s3://nobucket/k "${E[@]}"
expect_rc 3 "NoSuchBucket" "put to a missing bucket: exit 3"
closed_port "$SERVER_BIN"
run get s3://data/small --endpoint "$CLOSED_ENDPOINT" -o /dev/null
expect_rc 5 "is the server running" "unreachable endpoint: exit 5"
run put "$WORK/no-such-file" s3://data/k "${E[@]}"
expect_rc 9 "cannot open" "missing local file: exit 9"
run get data/small "${E[@]}"
expect_rc 2 "expected s3://BUCKET/KEY" "not an s3:// URL: exit 2"
run get s3://data/small --part-size 5G "${E[@]}"
expect_rc 2 "invalid value" "part size above 4 GiB: exit 2"
run frobnicate
expect_rc 2 "unknown command" "unknown command: exit 2"
if have_rdma; then
  echo "skip: --require-rdma without RDMA (this host has an RDMA device)"
else
  run get s3://data/small -o /dev/null "${E[@]}" --require-rdma
  expect_rc 6 "RDMA is required but unavailable" "--require-rdma without RDMA: exit 6"
fi
if HIPOBJ_GPU_RUNTIME=none "$HIPOBJ" get s3://data/small --gpu 0 "${E[@]}" \
     >/dev/null 2>"$WORK/err"; then
  fail "--gpu with HIPOBJ_GPU_RUNTIME=none succeeded"
else
  RC=$?
  expect_rc 8 "use --host" "--gpu without a GPU runtime: exit 8"
fi
finish
