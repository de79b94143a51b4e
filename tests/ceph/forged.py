# SPDX-License-Identifier: MIT
"""GW-1 against a real store: forged requests through hipobj-gateway never
reach RGW. Each is header-signed with a made-up signature (64 zeros) and a
known access key only, carries a 1 MiB body and no x-amz-content-sha256
(a deferred signature, which only the body can settle): DeleteObject,
DeleteBucket, AbortMultipartUpload, GetObject, HeadObject, CopyObject. Each
must get 403, leave its victim in place, and appear nowhere in RGW's own
log (its access lines name the method and path of every request it
serves). Usage: forged.py --gw URL --rgw URL --rgw-log FILE; RGW's keys in
AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, the gateway's in GWKEY."""
import argparse
import hashlib
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "interop"))
import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402
from test_gateway import raw, sign  # noqa: E402


def log_lines(path, needle):
    with open(path, errors="replace") as f:
        return sum(1 for line in f if needle in line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gw", required=True)
    ap.add_argument("--rgw", required=True)
    ap.add_argument("--rgw-log", required=True)
    a = ap.parse_args()
    rgw = boto3.client("s3", endpoint_url=a.rgw,
                       config=Config(s3={"addressing_style": "path"}))
    bucket = "gw1-%d" % os.getpid()
    rgw.create_bucket(Bucket=bucket)
    rgw.put_object(Bucket=bucket, Key="victim", Body=b"keep me")
    up = rgw.create_multipart_upload(Bucket=bucket, Key="mp")["UploadId"]
    body = os.urandom(1 << 20)
    cases = (("DELETE", "/%s/victim" % bucket, {}),
             ("DELETE", "/%s" % bucket, {}),
             ("DELETE", "/%s/mp?uploadId=%s" % (bucket, up), {}),
             ("GET", "/%s/victim" % bucket, {}),
             ("HEAD", "/%s/victim" % bucket, {}),
             ("PUT", "/%s/copy" % bucket,
              {"x-amz-copy-source": "/%s/victim" % bucket}))
    fails = 0
    for method, target, extra in cases:
        path = target.split("?")[0]
        h = sign(method, a.gw, path, os.environ["GWKEY"], "unknown",
                 dict(extra), hashlib.sha256(body).hexdigest(),
                 send_hash=False)
        auth = h["Authorization"]
        h["Authorization"] = auth[:auth.rindex("=") + 1] + "0" * 64
        st, _, _ = raw(a.gw, method, target, h, body)
        ok = st == 403
        print("%s: forged %s %s: %d" % ("ok" if ok else "FAIL", method,
                                         target, st))
        fails += not ok
    time.sleep(1)  # RGW writes its access lines as requests end
    for method, target, _ in cases:
        n = log_lines(a.rgw_log, '"%s %s ' % (method, target))
        print("%s: RGW's log has %d lines of %s %s" % (
            "ok" if n == 0 else "FAIL", n, method, target))
        fails += n != 0
    got = rgw.get_object(Bucket=bucket, Key="victim")["Body"].read()
    parts = rgw.list_parts(Bucket=bucket, Key="mp", UploadId=up)
    keys = [o["Key"] for o in rgw.list_objects_v2(Bucket=bucket)
            .get("Contents", [])]
    ok = got == b"keep me" and parts["UploadId"] == up and "copy" not in keys
    print("%s: the object, the upload and the bucket are as they were, "
          "nothing copied" % ("ok" if ok else "FAIL"))
    fails += not ok
    # the log really names requests: the honest ones just made are there
    n = log_lines(a.rgw_log, '"GET /%s/victim ' % bucket)
    print("%s: RGW's log names the honest GET (%d line)" % (
        "ok" if n >= 1 else "FAIL", n))
    fails += n < 1
    rgw.abort_multipart_upload(Bucket=bucket, Key="mp", UploadId=up)
    rgw.delete_object(Bucket=bucket, Key="victim")
    rgw.delete_bucket(Bucket=bucket)
    print("forged: %d failed" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
