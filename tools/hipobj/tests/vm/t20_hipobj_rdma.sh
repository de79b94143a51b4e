#!/bin/sh
# SPDX-License-Identifier: MIT
# hipobj get and put over RDMA on Soft-RoCE: the command says "via RDMA",
# the server's counters agree, the bytes are equal. Single objects,
# multipart (RDMA UploadPart, ETags from ListParts) and ranges; interop with
# curl (a plain-HTTP client) both ways; the examples.
. /payload/lib.sh
. /payload/vmlib.sh
start_server --log-requests || exit 1
curl -sf -X PUT "$ENDPOINT/vmbucket" >/dev/null || { echo "no bucket"; exit 1; }
head -c 20000003 /dev/urandom >"$W/a"
head -c 12582917 /dev/urandom >"$W/m"

in0=$(stat rdma bytes_in); out0=$(stat rdma bytes_out)
ho put "$W/a" s3://vmbucket/a -v --require-rdma
[ $RC = 0 ] && said "via RDMA" && pass "put via RDMA" || fail "put: rc $RC"
ho get s3://vmbucket/a -o "$W/a.back" -v --require-rdma
[ $RC = 0 ] && said "via RDMA" && said "parts: 1 by RDMA, 0 by HTTP" && pass "get via RDMA" || fail "get: rc $RC"
cmp -s "$W/a" "$W/a.back" && pass "same bytes" || fail "bytes differ"
[ $(( $(stat rdma bytes_in) - in0 )) -ge 20000003 ] && pass "server: RDMA READ bytes" || fail "server rdma.bytes_in"
[ $(( $(stat rdma bytes_out) - out0 )) -ge 20000003 ] && pass "server: RDMA WRITE bytes" || fail "server rdma.bytes_out"

hin0=$(stat http bytes_in)
ho put "$W/m" s3://vmbucket/m --part-size 5M -v
[ $RC = 0 ] && said "parts: 3 by RDMA, 0 by HTTP" && pass "multipart put: 3 RDMA parts" || fail "multipart put: rc $RC"
grep -q 'etag: ".*-3"' "$W/err" && pass "multipart ETag" || fail "multipart ETag"
[ "$(stat http bytes_in)" = "$hin0" ] && pass "server: no HTTP body bytes" || fail "server counted HTTP bytes"
ho get s3://vmbucket/m -o "$W/m.back" --part-size 4M -v
[ $RC = 0 ] && said "parts: 4 by RDMA, 0 by HTTP" && pass "get in 4 RDMA ranges" || fail "ranged get: rc $RC"
cmp -s "$W/m" "$W/m.back" && pass "ranges: same bytes" || fail "ranges: bytes differ"

# Interop: curl writes and reads over plain HTTP, hipobj over RDMA.
curl -sf -T "$W/a" "$ENDPOINT/vmbucket/by-curl" >/dev/null || fail "curl put"
ho get s3://vmbucket/by-curl -o "$W/c.back" -v --require-rdma
[ $RC = 0 ] && cmp -s "$W/a" "$W/c.back" && pass "curl -> hipobj (RDMA)" || fail "curl -> hipobj"
ho put "$W/m" s3://vmbucket/by-hipobj --require-rdma
curl -sf "$ENDPOINT/vmbucket/by-hipobj" -o "$W/h.back" && cmp -s "$W/m" "$W/h.back" &&
  pass "hipobj (RDMA) -> curl" || fail "hipobj -> curl"

# The examples, with the NIC named by HIPOBJ_NIC (no GPU here).
export AWS_ENDPOINT_URL=$ENDPOINT HIPOBJ_NIC=$RXE_DEV
out=$(put-object "$W/m" vmbucket ex 2>&1); echo "  | $out"
[ "$out" = "12582917 bytes via RDMA" ] && pass "put-object via RDMA" || fail "put-object: $out"
out=$(get-object vmbucket ex 2>&1); echo "  | $out"
[ "$out" = "12582917 bytes via RDMA" ] && pass "get-object via RDMA" || fail "get-object: $out"
finish
