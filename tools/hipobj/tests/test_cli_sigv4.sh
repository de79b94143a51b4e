#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# hipobj against a server that verifies AWS Signature V4: the right keys
# work, a wrong secret, an unknown key and no keys fail with exit 4 and a
# message naming what to fix.
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || skip "curl (the command) is not installed"
start_server "$SERVER_BIN" --min-part-size 1K --access-key AKTEST --secret-key SKTEST
curl -sf -X PUT --aws-sigv4 aws:amz:us-east-1:s3 -u AKTEST:SKTEST "$ENDPOINT/signed" >/dev/null ||
  { echo "cannot create the bucket"; exit 1; }
E=(--endpoint "$ENDPOINT")
head -c 2500000 /dev/urandom >"$WORK/obj"

export AWS_ACCESS_KEY_ID=AKTEST AWS_SECRET_ACCESS_KEY=SKTEST
run put "$WORK/obj" "s3://signed/a b/c+d.bin" "${E[@]}" --part-size 1M
expect_rc 0 "" "signed multipart put (key with blank and plus)"
run get "s3://signed/a b/c+d.bin" -o "$WORK/back" "${E[@]}" --part-size 1M
expect_rc 0 "" "signed ranged get"
cmp -s "$WORK/obj" "$WORK/back" && pass "same bytes" || fail "bytes differ"
AWS_SESSION_TOKEN=session-token-value run get "s3://signed/a b/c+d.bin" -o /dev/null "${E[@]}"
expect_rc 0 "" "signed with a session token"

AWS_SECRET_ACCESS_KEY=wrong run get "s3://signed/a b/c+d.bin" -o /dev/null "${E[@]}"
expect_rc 4 "check AWS_SECRET_ACCESS_KEY" "wrong secret: exit 4"
AWS_SECRET_ACCESS_KEY=wrong run put "$WORK/obj" s3://signed/x "${E[@]}"
expect_rc 4 "SignatureDoesNotMatch" "wrong secret on put: exit 4"
AWS_ACCESS_KEY_ID=NOBODY run get "s3://signed/a b/c+d.bin" -o /dev/null "${E[@]}"
expect_rc 4 "check AWS_ACCESS_KEY_ID" "unknown key: exit 4"
(unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY; "$HIPOBJ" get "s3://signed/a b/c+d.bin" \
   -o /dev/null "${E[@]}" >/dev/null 2>"$WORK/err"); RC=$?
expect_rc 4 "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" "no keys: exit 4"
run get "s3://signed/a b/c+d.bin" -o /dev/null "${E[@]}" --unsigned
expect_rc 4 "wants signed requests" "--unsigned: exit 4"
[ "$(stat_value auth_failures)" -ge 5 ] && pass "server counted the failures" ||
  fail "server auth_failures $(stat_value auth_failures)"
finish
