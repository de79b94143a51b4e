# SPDX-License-Identifier: MIT
"""The store goes away under hipobj-gateway (tests/ceph/cases/c30): RGW is
stopped in the middle of an upload and of a download through the gateway.
The client sees a clean failure each time; once RGW is back, it holds no
trace of the upload, and the gateway, never restarted, serves again.
Usage: backend_stop.py GATEWAY_URL GW_KEY GW_SECRET (env: S3_ENDPOINT, RGW's
AWS_* keys, ROOT). Exit 0 if every check holds."""
import http.client
import os
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.environ["ROOT"], "tests", "interop"))
import test_gateway as tg  # noqa: E402  (sign, raw)
import boto3  # noqa: E402
import botocore  # noqa: E402
from botocore.config import Config  # noqa: E402

gw, gk, gs = sys.argv[1:4]
root = os.environ["ROOT"]
MiB = 1 << 20
cfg = Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1})
rgw = boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT"], config=cfg)
via = boto3.client("s3", endpoint_url=gw, aws_access_key_id=gk,
                   aws_secret_access_key=gs, region_name="us-east-1",
                   config=cfg)
fails = 0


def check(cond, what):
    global fails
    print("%s: %s" % ("ok" if cond else "FAIL", what))
    fails += not cond


def rgw_stop():
    subprocess.run(["bash", os.path.join(root, "tests/ceph/rgw-down.sh"),
                    "--rgw-only"], check=True)


def rgw_start():
    subprocess.run(["bash", os.path.join(root, "tests/ceph/rgw-up.sh"),
                    "--rgw-only"], check=True, stdout=subprocess.DEVNULL)


def absent(key):
    try:
        rgw.head_object(Bucket="stop", Key=key)
        return False
    except botocore.exceptions.ClientError as e:
        return e.response["ResponseMetadata"]["HTTPStatusCode"] == 404


via.create_bucket(Bucket="stop")
block = os.urandom(MiB)

# 1. an upload of 64 MiB: RGW stops after 16 MiB
path = "/stop/halfway"
h = tg.sign("PUT", gw, path, gk, gs, {"Content-Length": str(64 * MiB)},
            "UNSIGNED-PAYLOAD")
u = urllib.parse.urlparse(gw)
conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
conn.putrequest("PUT", path)
for k, v in h.items():
    conn.putheader(k, v)
conn.endheaders()
for _ in range(16):
    conn.send(block)
time.sleep(0.3)
rgw_stop()
failed = False
try:
    for _ in range(48):
        conn.send(block)
    r = conn.getresponse()
    r.read()
    failed = r.status >= 500
    why = "HTTP %d" % r.status
except (OSError, http.client.HTTPException) as e:
    failed, why = True, type(e).__name__
conn.close()
check(failed, "upload cut by RGW's stop: the client sees it (%s)" % why)

# 2. while RGW is down: 503 with a reason, quickly
t = time.time()
try:
    via.head_bucket(Bucket="stop")
    st = 200
except botocore.exceptions.ClientError as e:
    st = e.response["ResponseMetadata"]["HTTPStatusCode"]
check(st == 503 and time.time() - t < 10, "RGW down: 503 (in %.1f s)" %
      (time.time() - t))
try:
    via.get_object(Bucket="stop", Key="x")
    code = None
except botocore.exceptions.ClientError as e:
    code = e.response["Error"]["Code"]
check(code == "ServiceUnavailable", "RGW down: ServiceUnavailable")

# 3. back: nothing of the upload, and the gateway serves again
rgw_start()
check(absent("halfway"), "RGW back: no partial object")
ups = rgw.list_multipart_uploads(Bucket="stop").get("Uploads", [])
check(not ups, "RGW back: no upload left behind")
via.put_object(Bucket="stop", Key="big", Body=block * 64)
check(rgw.head_object(Bucket="stop", Key="big")["ContentLength"] == 64 * MiB,
      "the gateway serves again, not restarted")

# 4. a download of 64 MiB: RGW stops after 8 MiB have been read
r = via.get_object(Bucket="stop", Key="big")
stream = r["Body"]
got = len(stream.read(8 * MiB))
rgw_stop()
ended = "the whole body"
try:
    while True:
        b = stream.read(4 * MiB)
        if not b:
            break
        got += len(b)
except Exception as e:  # urllib3's ProtocolError, botocore's IncompleteRead
    ended = type(e).__name__
check(ended != "the whole body" or got == 64 * MiB,
      "download across RGW's stop: %d MiB, then %s: never a short body "
      "that looks whole" % (got // MiB, ended))
rgw_start()
check(rgw.get_object(Bucket="stop", Key="big")["Body"].read() == block * 64,
      "the object is intact")
for o in rgw.list_objects_v2(Bucket="stop").get("Contents", []):
    rgw.delete_object(Bucket="stop", Key=o["Key"])
rgw.delete_bucket(Bucket="stop")
print("%d failed" % fails)
sys.exit(1 if fails else 0)
