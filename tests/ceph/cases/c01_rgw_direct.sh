#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The lane's RGW works, and the parity suite finds no difference between
# RGW and itself (so a difference through the gateway is the gateway's).
exec /usr/bin/python3 "$ROOT/tests/ceph/s3_parity.py" \
  --a "$S3_ENDPOINT" --b "$S3_ENDPOINT" \
  --access-key "$AWS_ACCESS_KEY_ID" --secret-key "$AWS_SECRET_ACCESS_KEY"
