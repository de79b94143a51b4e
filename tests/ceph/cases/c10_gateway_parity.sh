#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# boto3 through hipobj-gateway behaves as boto3 straight against RGW:
# buckets, objects, ranges, conditions, listings, multipart, copy, errors,
# conditional writes, tagging, part numbers, object attributes
# (tests/ceph/s3_parity.py), with the gateway's own credentials.
set -uo pipefail
. "$ROOT/tests/ceph/lib.sh"
start_gateway --no-rdma || exit 1
/usr/bin/python3 "$ROOT/tests/ceph/s3_parity.py" \
  --a "$S3_ENDPOINT" --b "$GW" \
  --access-key "$AWS_ACCESS_KEY_ID" --secret-key "$AWS_SECRET_ACCESS_KEY" \
  --b-access-key "$GWKEY" --b-secret-key "$GWSECRET"
rc=$?
stop_gateway || rc=1
exit $rc
