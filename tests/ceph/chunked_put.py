# SPDX-License-Identifier: MIT
"""aws-chunked uploads through hipobj-gateway into RGW (tests/ceph/cases/
c20): signed chunks, and an unsigned body with a CRC32 trailer, are stored
in RGW as their payload; a chunk changed after signing stores nothing.
Usage: chunked_put.py GATEWAY_URL GW_KEY GW_SECRET (env: S3_ENDPOINT, RGW's
AWS_* keys, ROOT)."""
import base64
import os
import sys
import zlib

sys.path.insert(0, os.path.join(os.environ["ROOT"], "tests", "interop"))
import test_gateway as tg  # noqa: E402  (sign, raw, aws_chunked)
import boto3  # noqa: E402
import botocore  # noqa: E402
from botocore.config import Config  # noqa: E402

gw, gk, gs = sys.argv[1:4]
rgw = boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT"],
                   config=Config(s3={"addressing_style": "path"}))
rgw.create_bucket(Bucket="chunked")
payload = os.urandom(300001)
fails = 0


def check(cond, what):
    global fails
    print("%s: %s" % ("ok" if cond else "FAIL", what))
    fails += not cond


def stored(key):
    try:
        return rgw.get_object(Bucket="chunked", Key=key)["Body"].read()
    except botocore.exceptions.ClientError:
        return None


keep = {}
h = tg.sign("PUT", gw, "/chunked/signed", gk, gs,
            {"x-amz-decoded-content-length": str(len(payload)),
             "Content-Encoding": "aws-chunked"},
            "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", keep=keep)
st, _, _ = tg.raw(gw, "PUT", "/chunked/signed", h,
                  tg.aws_chunked(payload, 65536, keep))
check(st == 200 and stored("signed") == payload,
      "signed aws-chunked upload: RGW holds the payload (HTTP %d)" % st)
keep = {}
h = tg.sign("PUT", gw, "/chunked/tampered", gk, gs,
            {"x-amz-decoded-content-length": str(len(payload))},
            "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", keep=keep)
st, _, _ = tg.raw(gw, "PUT", "/chunked/tampered", h,
                  tg.aws_chunked(payload, 65536, keep, tamper=2))
check(st == 403 and stored("tampered") is None,
      "a chunk changed after signing: 403, RGW holds nothing")
crc = base64.b64encode(zlib.crc32(payload).to_bytes(4, "big")).decode()
h = tg.sign("PUT", gw, "/chunked/trailer", gk, gs,
            {"x-amz-decoded-content-length": str(len(payload)),
             "x-amz-trailer": "x-amz-checksum-crc32"},
            "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
st, _, _ = tg.raw(gw, "PUT", "/chunked/trailer", h,
                  tg.aws_chunked(payload, 65536,
                                 trailer="x-amz-checksum-crc32:" + crc))
check(st == 200 and stored("trailer") == payload,
      "unsigned aws-chunked with a CRC32 trailer: RGW holds the payload")
for o in rgw.list_objects_v2(Bucket="chunked").get("Contents", []):
    rgw.delete_object(Bucket="chunked", Key=o["Key"])
rgw.delete_bucket(Bucket="chunked")
sys.exit(1 if fails else 0)
