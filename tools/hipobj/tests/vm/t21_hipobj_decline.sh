#!/bin/sh
# SPDX-License-Identifier: MIT
# A server that declines RDMA (--decline-rdma): hipobj falls back to plain
# HTTP and says the server declined; --require-rdma makes it exit 6.
. /payload/lib.sh
. /payload/vmlib.sh
start_server --decline-rdma --log-requests || exit 1
curl -sf -X PUT "$ENDPOINT/declined" >/dev/null || { echo "no bucket"; exit 1; }
head -c 3000000 /dev/urandom >"$W/a"
d0=$(stat rdma declined)
ho put "$W/a" s3://declined/a -v
[ $RC = 0 ] && said "via HTTP fallback (the server declined RDMA: 501)" && pass "put: declined, fell back" || fail "put: rc $RC"
ho get s3://declined/a -o "$W/a.back" -v --part-size 1M
[ $RC = 0 ] && said "via HTTP fallback (the server declined RDMA: 501)" && said "by HTTP" && pass "get: declined, fell back" || fail "get: rc $RC"
cmp -s "$W/a" "$W/a.back" && pass "same bytes" || fail "bytes differ"
[ $(( $(stat rdma declined) - d0 )) -ge 2 ] && pass "server declined" || fail "rdma.declined"
ho get s3://declined/a -o /dev/null --require-rdma
[ $RC = 6 ] && said "declined RDMA" && pass "--require-rdma: exit 6" || fail "--require-rdma: rc $RC"
finish
