#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Forged requests through hipobj-gateway never reach RGW (GW-1): a made-up
# signature, a body and no declared payload hash, for DeleteObject,
# DeleteBucket, AbortMultipartUpload, GetObject, HeadObject and CopyObject:
# 403, every victim in place, and none of them in RGW's log
# (tests/ceph/forged.py).
set -uo pipefail
. "$ROOT/tests/ceph/lib.sh"
start_gateway --no-rdma || exit 1
log=$(ls "$CEPH_DIR"/log/*rgw*.log 2>/dev/null | head -n1)
[ -n "$log" ] || { echo "FAIL: no RGW log in $CEPH_DIR/log"; stop_gateway; exit 1; }
GWKEY=$GWKEY /usr/bin/python3 "$ROOT/tests/ceph/forged.py" \
  --gw "$GW" --rgw "$S3_ENDPOINT" --rgw-log "$log"
rc=$?
stop_gateway || rc=1
exit $rc
