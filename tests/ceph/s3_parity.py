# SPDX-License-Identifier: MIT
"""boto3 through an endpoint behaves as boto3 straight against the store:
runs one S3 scenario against endpoint A (the store) and endpoint B (e.g.
hipobj-gateway in front of it), each in its own buckets, records what every
step gave (HTTP status, S3 error code, the body's SHA-256, the headers that
matter, listings) with the bucket names taken out, and compares the two
transcripts step by step.
Usage: s3_parity.py --a URL --a-key K --a-secret S --b URL --b-key K
       --b-secret S [--region R]
Prints each difference and "parity: N steps, M differences"; exit 0 only if
there are none, 77 without boto3."""
import argparse
import hashlib
import os
import random
import sys

try:
    import boto3
    import botocore
    from botocore.config import Config
except ImportError:
    print("SKIP: boto3 is not installed for %s" % sys.executable)
    sys.exit(77)

MiB = 1 << 20


class Transcript:
    def __init__(self, s3, bucket):
        self.s3, self.bucket, self.steps = s3, bucket, []

    def norm(self, v):
        if isinstance(v, str):
            return v.replace(self.bucket, "<B>")
        if isinstance(v, dict):
            return {k: self.norm(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [self.norm(x) for x in v]
        return v

    def step(self, name, fn, *keep, **kw):
        """Calls the client's fn(**kw); records the status, the error code
        or the fields named in keep (a callable gets the response)."""
        try:
            r = getattr(self.s3, fn)(**kw)
            out = {"status": r["ResponseMetadata"]["HTTPStatusCode"]}
            for k in keep:
                if callable(k):
                    out.update(k(r))
                elif k in r:
                    out[k] = r[k]
        except botocore.exceptions.ClientError as e:
            out = {"status": e.response["ResponseMetadata"]["HTTPStatusCode"],
                   "code": e.response["Error"].get("Code")}
        self.steps.append((name, self.norm(out)))
        return out


def body(r):
    data = r["Body"].read()
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def keys(field):
    return lambda r: {field: [o.get("Key") or o.get("Prefix")
                              for o in r.get(field, [])]}


def scenario(t, blobs):
    b = t.bucket
    t.step("create bucket", "create_bucket", Bucket=b)
    t.step("head bucket", "head_bucket", Bucket=b)
    t.step("create it again", "create_bucket", Bucket=b)
    t.step("list buckets", "list_buckets",
           lambda r: {"has": any(x["Name"] == b for x in r["Buckets"])})
    for name, data in blobs.items():
        t.step("put " + name, "put_object", "ETag", Bucket=b, Key=name,
               Body=data, ContentType="application/x-parity",
               Metadata={"origin": "parity", "size": str(len(data))})
        t.step("get " + name, "get_object", body, "ETag", "ContentLength",
               "ContentType", "Metadata", Bucket=b, Key=name)
        t.step("head " + name, "head_object", "ETag", "ContentLength",
               "Metadata", Bucket=b, Key=name)
    for rng in ("bytes=0-9", "bytes=100-199", "bytes=-10", "bytes=5-",
                "bytes=1048570-1048579", "bytes=20000000-20000010"):
        t.step("range " + rng, "get_object", body, "ContentRange",
               "ContentLength", Bucket=b, Key="ten", Range=rng)
    etag = t.s3.head_object(Bucket=b, Key="ten")["ETag"]
    t.step("if-match", "get_object", body, Bucket=b, Key="ten", IfMatch=etag)
    t.step("if-match wrong", "get_object", Bucket=b, Key="ten",
           IfMatch='"0123"')
    t.step("if-none-match", "get_object", Bucket=b, Key="ten",
           IfNoneMatch=etag)
    t.step("head if-none-match", "head_object", Bucket=b, Key="ten",
           IfNoneMatch=etag)
    for k in ("dir/a", "dir/b", "dir/sub/c", "other/d", "top"):
        t.s3.put_object(Bucket=b, Key=k, Body=k.encode())
    t.step("list v2", "list_objects_v2", keys("Contents"), "KeyCount",
           Bucket=b)
    t.step("list v2 prefix+delimiter", "list_objects_v2", keys("Contents"),
           keys("CommonPrefixes"), Bucket=b, Prefix="dir/", Delimiter="/")
    r = t.step("list v2 page 1", "list_objects_v2", keys("Contents"),
               "IsTruncated", Bucket=b, MaxKeys=3)
    tok = t.s3.list_objects_v2(Bucket=b, MaxKeys=3).get(
        "NextContinuationToken")
    t.step("list v2 page 2", "list_objects_v2", keys("Contents"),
           "IsTruncated", Bucket=b, MaxKeys=3, ContinuationToken=tok)
    t.step("list v1 marker", "list_objects", keys("Contents"), "IsTruncated",
           Bucket=b, Marker="dir/b", MaxKeys=2)
    t.step("list v1 delimiter", "list_objects", keys("CommonPrefixes"),
           Bucket=b, Delimiter="/")
    # multipart
    part = blobs["ten"][:5 * MiB]
    up = t.s3.create_multipart_upload(Bucket=b, Key="mp")["UploadId"]
    parts = []
    for n in (1, 2, 3):
        e = t.step("upload part %d" % n, "upload_part", "ETag", Bucket=b,
                   Key="mp", UploadId=up, PartNumber=n,
                   Body=part[:(4 * MiB if n == 3 else 5 * MiB)])
        parts.append({"PartNumber": n, "ETag": e.get("ETag")})
    t.step("list parts", "list_parts",
           lambda r: {"parts": [(p["PartNumber"], p["Size"], p["ETag"])
                                for p in r.get("Parts", [])]},
           Bucket=b, Key="mp", UploadId=up)
    t.step("list uploads", "list_multipart_uploads", keys("Uploads"),
           Bucket=b)
    t.step("complete out of order", "complete_multipart_upload", Bucket=b,
           Key="mp", UploadId=up,
           MultipartUpload={"Parts": [parts[1], parts[0], parts[2]]})
    # pacific answers CompleteMultipartUpload with an empty ETag (Ceph
    # tracker #58879): the object's ETag is compared through HEAD instead
    t.step("complete", "complete_multipart_upload", Bucket=b, Key="mp",
           UploadId=up, MultipartUpload={"Parts": parts})
    t.step("head multipart", "head_object", "ETag", "ContentLength",
           Bucket=b, Key="mp")
    t.step("range across parts", "get_object", body, "ContentRange", Bucket=b,
           Key="mp", Range="bytes=%d-%d" % (5 * MiB - 100, 5 * MiB + 99))
    up2 = t.s3.create_multipart_upload(Bucket=b, Key="aborted")["UploadId"]
    t.step("abort", "abort_multipart_upload", Bucket=b, Key="aborted",
           UploadId=up2)
    t.step("upload to aborted", "upload_part", Bucket=b, Key="aborted",
           UploadId=up2, PartNumber=1, Body=b"x")
    t.step("complete unknown part", "complete_multipart_upload", Bucket=b,
           Key="mp2", UploadId="no-such-upload",
           MultipartUpload={"Parts": parts[:1]})
    t.step("copy", "copy_object", Bucket=b, Key="copied",
           CopySource={"Bucket": b, "Key": "one-mib"})
    t.step("get copy", "get_object", body, "ETag", Bucket=b, Key="copied")
    t.step("missing key", "get_object", Bucket=b, Key="nope")
    t.step("head missing key", "head_object", Bucket=b, Key="nope")
    t.step("missing bucket", "get_object", Bucket=b + "-none", Key="k")
    t.step("delete non-empty bucket", "delete_bucket", Bucket=b)
    t.step("delete objects", "delete_objects",
           lambda r: {"deleted": sorted(d["Key"] for d in r.get("Deleted", []))},
           Bucket=b, Delete={"Objects": [{"Key": k} for k in
                                         ("dir/a", "dir/b", "nope")]})
    left = [o["Key"] for o in
            t.s3.list_objects_v2(Bucket=b).get("Contents", [])]
    for k in left:
        t.s3.delete_object(Bucket=b, Key=k)
    t.step("delete object", "delete_object", Bucket=b, Key="already-gone")
    t.step("delete bucket", "delete_bucket", Bucket=b)
    t.step("bucket gone", "head_bucket", Bucket=b)


def client(url, key, secret, region):
    return boto3.client("s3", endpoint_url=url, aws_access_key_id=key,
                        aws_secret_access_key=secret, region_name=region,
                        config=Config(s3={"addressing_style": "path"},
                                      retries={"max_attempts": 1}))


def main():
    ap = argparse.ArgumentParser()
    for side in ("a", "b"):
        ap.add_argument("--" + side, required=True)
        ap.add_argument("--%s-key" % side, required=True)
        ap.add_argument("--%s-secret" % side, required=True)
    ap.add_argument("--region", default="us-east-1")
    o = ap.parse_args()
    rnd = random.Random(11)
    blobs = {"empty": b"", "one": b"x", "one-mib": os.urandom(MiB),
             "ten": os.urandom(10 * MiB),
             "odd key +&=": bytes(rnd.getrandbits(8) for _ in range(999))}
    tag = "%d" % os.getpid()
    ta = Transcript(client(o.a, o.a_key, o.a_secret, o.region),
                    "parity-a-" + tag)
    tb = Transcript(client(o.b, o.b_key, o.b_secret, o.region),
                    "parity-b-" + tag)
    scenario(ta, blobs)
    scenario(tb, blobs)
    diffs = 0
    for (na, ra), (nb, rb) in zip(ta.steps, tb.steps):
        if na != nb or ra != rb:
            diffs += 1
            print("DIFF %s:\n  A: %r\n  B: %r" % (na, ra, rb))
    if len(ta.steps) != len(tb.steps):
        diffs += 1
        print("DIFF: %d steps against %d" % (len(ta.steps), len(tb.steps)))
    print("parity: %d steps, %d differences" % (len(ta.steps), diffs))
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
