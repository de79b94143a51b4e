#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The project's own S3 tools through hipobj-gateway in front of RGW, on this
# host (no RDMA device: plain HTTP): the hipobj command (single objects,
# multipart, ranged parts), the examples, and aws-chunked uploads
# (tests/ceph/chunked_put.py); every object read back
# straight from RGW with its own keys, byte-identical. RDMA through the
# gateway is c40 (in the Soft-RoCE VM).
set -uo pipefail
. "$ROOT/tests/ceph/lib.sh"
start_gateway --no-rdma || exit 1
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
export LD_LIBRARY_PATH=$BUILD/src:$BUILD/integrations/curl
ho() { AWS_ACCESS_KEY_ID=$GWKEY AWS_SECRET_ACCESS_KEY=$GWSECRET \
         "$BUILD/tools/hipobj/hipobj" "$@" --endpoint "$GW" 2>"$w/err"; }
rgw_key=$AWS_ACCESS_KEY_ID rgw_secret=$AWS_SECRET_ACCESS_KEY
direct() { AWS_ACCESS_KEY_ID=$rgw_key AWS_SECRET_ACCESS_KEY=$rgw_secret \
             "$BUILD/tools/hipobj/hipobj" "$@" --endpoint "$S3_ENDPOINT" --no-rdma 2>"$w/err"; }
/usr/bin/python3 - <<'PY' || exit 1
import os, boto3
from botocore.config import Config
boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT"],
             config=Config(s3={"addressing_style": "path"})).create_bucket(Bucket="tools")
PY
head -c 3000001 /dev/urandom >"$w/a"
head -c $((17 * 1048576 + 3)) /dev/urandom >"$w/m"
ho put "$w/a" s3://tools/a -v && ok "hipobj put through the gateway" || { cat "$w/err"; fail "put a"; }
direct get s3://tools/a -o "$w/a.rgw" && cmp -s "$w/a" "$w/a.rgw" &&
  ok "RGW holds it, byte-identical" || fail "a in RGW"
ho put "$w/m" s3://tools/m --part-size 5M -v && grep -q "parts: 0 by RDMA, 4 by HTTP" "$w/err" &&
  ok "multipart put: 4 parts through the gateway" || { cat "$w/err"; fail "multipart put"; }
direct get s3://tools/m -o "$w/m.rgw" && cmp -s "$w/m" "$w/m.rgw" &&
  ok "RGW holds the multipart object, byte-identical" || fail "m in RGW"
ho get s3://tools/m -o "$w/m.gw" --part-size 4M -v && grep -q "parts: 0 by RDMA, 5 by HTTP" "$w/err" &&
  cmp -s "$w/m" "$w/m.gw" && ok "get in 5 ranges through the gateway" || { cat "$w/err"; fail "ranged get"; }
ho get s3://tools/missing -o "$w/none"; rc=$?
[ $rc -eq 3 ] && ok "missing key: exit 3" || fail "missing key: rc $rc"
AWS_ACCESS_KEY_ID=$GWKEY AWS_SECRET_ACCESS_KEY=wrong "$BUILD/tools/hipobj/hipobj" \
  get s3://tools/a -o "$w/x" --endpoint "$GW" 2>/dev/null; rc=$?
[ $rc -eq 4 ] && ok "wrong secret: exit 4 (access denied)" || fail "wrong secret: rc $rc"
export AWS_ENDPOINT_URL=$GW AWS_ACCESS_KEY_ID=$GWKEY AWS_SECRET_ACCESS_KEY=$GWSECRET
out=$("$BUILD/examples/put-object" "$w/a" tools ex 2>&1) && echo "  | $out" &&
  ok "put-object example" || fail "put-object: $out"
out=$("$BUILD/examples/get-object" tools ex 2>&1) && echo "  | $out" &&
  ok "get-object example" || fail "get-object: $out"
direct get s3://tools/ex -o "$w/ex.rgw" && cmp -s "$w/a" "$w/ex.rgw" &&
  ok "the example's object in RGW, byte-identical" || fail "ex in RGW"
AWS_ACCESS_KEY_ID=$rgw_key AWS_SECRET_ACCESS_KEY=$rgw_secret /usr/bin/python3 \
  "$ROOT/tests/ceph/chunked_put.py" "$GW" "$GWKEY" "$GWSECRET" || fails=$((fails + 1))
stop_gateway || fails=$((fails + 1))
echo "$fails failed"
[ $fails -eq 0 ]
