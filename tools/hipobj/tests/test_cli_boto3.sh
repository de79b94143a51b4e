#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Interop with boto3 (Debian's python3-boto3), SigV4 on: objects written by
# boto3 (single and multipart) are read back by hipobj get, and objects
# written by hipobj put (single and multipart) by boto3, byte for byte.
# Here the bytes move over plain HTTP; in the Soft-RoCE lane hipobj's side
# moves them by RDMA and the path is asserted from what hipobj says.
. "$(dirname "$0")/lib.sh"
PY=
for p in /usr/bin/python3 python3; do
  if "$p" -c 'import boto3' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || skip "no python3 with boto3 (python3-boto3)"
start_server "$SERVER_BIN" --access-key AKTEST --secret-key SKTEST
export AWS_ACCESS_KEY_ID=AKTEST AWS_SECRET_ACCESS_KEY=SKTEST
B=("$PY" "$here/boto3_client.py" "$ENDPOINT")
E=(--endpoint "$ENDPOINT")
"${B[@]}" mkbucket interop || { echo "boto3 cannot create a bucket"; exit 1; }
head -c 777777 /dev/urandom >"$WORK/small"
head -c 12582917 /dev/urandom >"$WORK/large" # 12 MiB + 5: 3 parts of 5 MiB

path_ok() { # the last hipobj run said how the bytes moved
  if have_rdma; then
    grep -q "via RDMA" "$WORK/err" && pass "$1: via RDMA" || fail "$1: not via RDMA: $(cat "$WORK/err")"
  else
    grep -q "via HTTP fallback" "$WORK/err" && pass "$1: via HTTP fallback" || fail "$1: path"
  fi
}

# boto3 -> hipobj
"${B[@]}" put "$WORK/small" interop "from boto3/small" || fail "boto3 put"
"${B[@]}" put "$WORK/large" interop "from boto3/large" 5242880 || fail "boto3 multipart put"
case "$("${B[@]}" etag interop "from boto3/large")" in
  *-3\") pass "boto3 wrote a 3-part object" ;;
  *) fail "boto3 object is not multipart" ;;
esac
run get "s3://interop/from boto3/small" -o "$WORK/small.1" "${E[@]}"
expect_rc 0 "" "hipobj get of boto3's object"
path_ok "get small"
cmp -s "$WORK/small" "$WORK/small.1" && pass "boto3 -> hipobj: same bytes" || fail "boto3 -> hipobj: bytes differ"
run get "s3://interop/from boto3/large" -o "$WORK/large.1" "${E[@]}" --part-size 4M
expect_rc 0 "" "hipobj get of boto3's multipart object, in 4 MiB ranges"
path_ok "get large"
cmp -s "$WORK/large" "$WORK/large.1" && pass "boto3 multipart -> hipobj: same bytes" || fail "boto3 multipart -> hipobj"

# hipobj -> boto3
run put "$WORK/small" "s3://interop/from hipobj/small" "${E[@]}"
expect_rc 0 "" "hipobj put"
path_ok "put small"
"${B[@]}" get interop "from hipobj/small" "$WORK/small.2" || fail "boto3 get"
cmp -s "$WORK/small" "$WORK/small.2" && pass "hipobj -> boto3: same bytes" || fail "hipobj -> boto3: bytes differ"
run put "$WORK/large" "s3://interop/from hipobj/large" "${E[@]}" --part-size 5M
expect_rc 0 "" "hipobj multipart put"
path_ok "put large"
case "$("${B[@]}" etag interop "from hipobj/large")" in
  *-3\") pass "hipobj wrote a 3-part object" ;;
  *) fail "hipobj object is not multipart" ;;
esac
"${B[@]}" get interop "from hipobj/large" "$WORK/large.2" || fail "boto3 get large"
cmp -s "$WORK/large" "$WORK/large.2" && pass "hipobj multipart -> boto3: same bytes" || fail "hipobj multipart -> boto3"
finish
