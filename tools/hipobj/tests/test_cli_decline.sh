#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# hipobj against a server that declines RDMA (--decline-rdma): the bytes
# move over plain HTTP, and the command says the server declined. Needs an
# RDMA device on this host (the Soft-RoCE lane); elsewhere hipObject cannot
# start, nothing is asked of the server, and the test is skipped.
. "$(dirname "$0")/lib.sh"
have_rdma || skip "no RDMA device here: the decline path needs hipObject up (Soft-RoCE lane)"
start_server "$SERVER_BIN" --decline-rdma
make_bucket d
E=(--endpoint "$ENDPOINT")
head -c 100000 /dev/urandom >"$WORK/obj"
run put "$WORK/obj" s3://d/o "${E[@]}" -v
expect_rc 0 "via HTTP fallback (the server declined RDMA: 501)" "put: declined, fell back"
run get s3://d/o -o "$WORK/back" "${E[@]}" -v
expect_rc 0 "via HTTP fallback (the server declined RDMA: 501)" "get: declined, fell back"
cmp -s "$WORK/obj" "$WORK/back" && pass "same bytes" || fail "bytes differ"
[ "$(stat_value rdma.declined)" -ge 2 ] && pass "server declined twice" || fail "rdma.declined"
run get s3://d/o -o /dev/null "${E[@]}" --require-rdma
expect_rc 6 "declined RDMA" "--require-rdma: exit 6"
finish
