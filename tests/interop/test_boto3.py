# SPDX-License-Identifier: MIT
"""boto3 (a real S3 client no one here wrote) against hipobj-test-server.

Runs the S3 operations twice: anonymously against the memory store, and with
SigV4 against the directory store (then restarts the server on the same
directory and checks that every object survived). The operations include
what S3 clients and suites expect beyond the basics: a retried
CompleteMultipartUpload, the standard headers and response-* overrides,
copy conditions and UploadPartCopy, ListObjectVersions, checksums kept and
returned, and, where the aws command is installed, its S3-to-S3 copy. Then the SigV4 negative
cases: a wrong secret, an unknown key, a header or a body changed after
signing, an unsigned request, presigned URLs (good, tampered, expired), and
the x-amz-rdma-token header (signed: accepted and answered 501 without an
RDMA device; added after signing: rejected).

Usage: test_boto3.py PATH-TO-hipobj-test-server. Exit 77 without boto3."""

import base64
import datetime
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_harness import SKIP, Failure, Server, main  # noqa: E402

try:
    import boto3
    import botocore
    from boto3.s3.transfer import TransferConfig
    from botocore.config import Config
except ImportError:
    print("SKIP: boto3 is not installed for %s" % sys.executable)
    sys.exit(SKIP)

MiB = 1024 * 1024
AK, SK = "HIPOBJTESTKEY", "hipobj/test+secret"
TOKEN = ("01ab12000000000000000000000000ffffc0a8012aefbeadde0010000000"
         "7f00000010000000000000010000")


def client(url, ak=AK, sk=SK, unsigned=False, **cfg):
    conf = {"s3": {"addressing_style": "path"},
            "retries": {"max_attempts": 1}}
    if unsigned:
        conf["signature_version"] = botocore.UNSIGNED
    conf.update(cfg)
    return boto3.client("s3", endpoint_url=url, aws_access_key_id=ak,
                        aws_secret_access_key=sk, region_name="us-east-1",
                        config=Config(**conf))


def error_of(fn, *a, **kw):
    """Calls fn; returns (code, http status, headers) of the ClientError."""
    try:
        fn(*a, **kw)
    except botocore.exceptions.ClientError as e:
        md = e.response["ResponseMetadata"]
        return (e.response["Error"]["Code"], md["HTTPStatusCode"],
                md.get("HTTPHeaders", {}))
    raise Failure("%s succeeded, an error was expected" % fn.__name__)


def md5hex(b):
    return hashlib.md5(b).hexdigest()


# ---- the operations --------------------------------------------------------

def bucket_ops(s3, c):
    s3.create_bucket(Bucket="alpha")
    s3.head_bucket(Bucket="alpha")
    c.ok(True, "head_bucket")
    r = s3.create_bucket(Bucket="alpha")  # us-east-1: your own bucket again
    c.eq(r["ResponseMetadata"]["HTTPStatusCode"], 200, "create twice")
    names = [b["Name"] for b in s3.list_buckets()["Buckets"]]
    c.ok("alpha" in names, "list_buckets has alpha")
    code, status, _ = error_of(s3.create_bucket, Bucket="Bad_Name")
    c.eq((code, status), ("InvalidBucketName", 400), "invalid bucket name")
    code, status, _ = error_of(s3.head_bucket, Bucket="nonesuch")
    c.eq(status, 404, "head missing bucket")
    code, status, _ = error_of(s3.list_objects_v2, Bucket="nonesuch")
    c.eq((code, status), ("NoSuchBucket", 404), "list missing bucket")
    loc = s3.get_bucket_location(Bucket="alpha")
    c.ok(loc.get("LocationConstraint") in (None, ""), "location us-east-1")
    s3.put_object(Bucket="alpha", Key="x", Body=b"1")
    code, status, _ = error_of(s3.delete_bucket, Bucket="alpha")
    c.eq((code, status), ("BucketNotEmpty", 409), "delete non-empty")
    s3.delete_object(Bucket="alpha", Key="x")
    s3.delete_bucket(Bucket="alpha")
    code, status, _ = error_of(s3.head_bucket, Bucket="alpha")
    c.eq(status, 404, "bucket gone")
    code, status, _ = error_of(s3.delete_bucket, Bucket="alpha")
    c.eq((code, status), ("NoSuchBucket", 404), "delete missing bucket")


def objects(s3, c, bucket):
    rnd = random.Random(7)
    for size in (0, 1, 1000, MiB + 7):
        data = bytes(rnd.getrandbits(8) for _ in range(size)) if size < 5000 \
            else os.urandom(size)
        key = "obj-%d" % size
        r = s3.put_object(Bucket=bucket, Key=key, Body=data,
                          ContentType="application/x-test",
                          Metadata={"Origin": "boto3", "n": str(size)})
        c.eq(r["ETag"], '"%s"' % md5hex(data), "PUT ETag of %d bytes" % size)
        if "ChecksumCRC32" in r:  # current SDKs send one; it was verified
            c.eq(r["ChecksumCRC32"], base64.b64encode(
                zlib.crc32(data).to_bytes(4, "big")).decode(), "CRC32 echo")
        g = s3.get_object(Bucket=bucket, Key=key)
        c.eq(g["Body"].read(), data, "GET bytes of %d" % size)
        c.eq(g["ETag"], '"%s"' % md5hex(data), "GET ETag of %d" % size)
        c.eq(g["ContentLength"], size, "GET length of %d" % size)
        c.eq(g["ContentType"], "application/x-test", "content type")
        c.eq(g["Metadata"], {"origin": "boto3", "n": str(size)}, "metadata")
        h = s3.head_object(Bucket=bucket, Key=key)
        c.eq(h["ContentLength"], size, "HEAD length of %d" % size)
        c.eq(h["ETag"], '"%s"' % md5hex(data), "HEAD ETag of %d" % size)
    # odd keys, through the URL and back through the listing
    odd = ["sp ace", "plus+sign", "pct%41", "uni\u00e9\u4e2d", "a/b/../c",
           "q?x=1&y", "hash#frag", "semi;colon", "trailing/"]
    for k in odd:
        s3.put_object(Bucket=bucket, Key=k, Body=k.encode())
        c.eq(s3.get_object(Bucket=bucket, Key=k)["Body"].read(), k.encode(),
             "odd key %r" % k)
    listed = {o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]}
    c.ok(set(odd) <= listed, "odd keys listed back exactly")
    code, status, _ = error_of(s3.get_object, Bucket=bucket, Key="missing")
    c.eq((code, status), ("NoSuchKey", 404), "GET missing key")
    code, status, _ = error_of(s3.head_object, Bucket=bucket, Key="missing")
    c.eq(status, 404, "HEAD missing key")
    code, status, _ = error_of(s3.get_object, Bucket="nonesuch", Key="k")
    c.eq((code, status), ("NoSuchBucket", 404), "GET in missing bucket")
    code, status, _ = error_of(s3.get_object, Bucket=bucket, Key="k" * 1025)
    c.eq(status, 400, "key too long")
    # overwrite
    s3.put_object(Bucket=bucket, Key="obj-1", Body=b"new")
    c.eq(s3.get_object(Bucket=bucket, Key="obj-1")["Body"].read(), b"new",
         "overwrite")
    # conditions
    etag = s3.head_object(Bucket=bucket, Key="obj-1")["ETag"]
    code, status, _ = error_of(s3.get_object, Bucket=bucket, Key="obj-1",
                               IfNoneMatch=etag)
    c.eq(status, 304, "If-None-Match")
    code, status, _ = error_of(s3.get_object, Bucket=bucket, Key="obj-1",
                               IfMatch='"0123456789abcdef0123456789abcdef"')
    c.eq((code, status), ("PreconditionFailed", 412), "If-Match")
    c.eq(s3.get_object(Bucket=bucket, Key="obj-1", IfMatch=etag)["Body"]
         .read(), b"new", "If-Match matching")
    # copy
    r = s3.copy_object(Bucket=bucket, Key="copy", CopySource={
        "Bucket": bucket, "Key": "obj-1000"})
    src = s3.get_object(Bucket=bucket, Key="obj-1000")
    c.eq(r["CopyObjectResult"]["ETag"], src["ETag"], "copy ETag")
    cp = s3.get_object(Bucket=bucket, Key="copy")
    c.eq(cp["Body"].read(), src["Body"].read(), "copy bytes")
    c.eq(cp["Metadata"], src["Metadata"], "copy keeps metadata")
    s3.copy_object(Bucket=bucket, Key="copy", MetadataDirective="REPLACE",
                   Metadata={"k": "v"}, CopySource={"Bucket": bucket,
                                                   "Key": "obj-1000"})
    c.eq(s3.head_object(Bucket=bucket, Key="copy")["Metadata"], {"k": "v"},
         "copy replaces metadata")


EXPIRES = "Wed, 21 Oct 2037 07:28:00 GMT"
KEPT = {"CacheControl": "max-age=60", "ContentDisposition":
        'attachment; filename="a b.txt"', "ContentEncoding": "gzip",
        "ContentLanguage": "fr-CA"}


def standard_headers(s3, c, bucket):
    """Cache-Control, Content-Disposition, Content-Encoding,
    Content-Language and Expires stored and returned; an empty x-amz-meta-*
    kept; GetObject's response-* overrides."""
    s3.put_object(Bucket=bucket, Key="hdr", Body=b"h", Expires=EXPIRES,
                  Metadata={"empty": "", "full": "v"}, **KEPT)
    for what, r in (("GET", s3.get_object(Bucket=bucket, Key="hdr")),
                    ("HEAD", s3.head_object(Bucket=bucket, Key="hdr"))):
        for k, v in KEPT.items():
            c.eq(r.get(k), v, "%s %s" % (what, k))
        h = r["ResponseMetadata"]["HTTPHeaders"]
        c.eq(h.get("expires"), EXPIRES, what + " Expires")
        c.eq(r["Metadata"], {"empty": "", "full": "v"},
             what + " keeps an empty x-amz-meta-*")
    over = {"ResponseCacheControl": "no-store",
            "ResponseContentDisposition": "inline",
            "ResponseContentEncoding": "identity",
            "ResponseContentLanguage": "de",
            "ResponseContentType": "text/x-over",
            "ResponseExpires": "Thu, 01 Jan 2037 00:00:00 GMT"}
    r = s3.get_object(Bucket=bucket, Key="hdr", **over)
    h = r["ResponseMetadata"]["HTTPHeaders"]
    c.eq((h.get("cache-control"), h.get("content-disposition"),
          h.get("content-encoding"), h.get("content-language"),
          h.get("content-type"), h.get("expires")),
         ("no-store", "inline", "identity", "de", "text/x-over",
          "Thu, 01 Jan 2037 00:00:00 GMT"), "response-* overrides")
    c.eq(r["Body"].read(), b"h", "bytes with overrides")
    r = s3.get_object(Bucket=bucket, Key="hdr")
    c.eq(r["CacheControl"], "max-age=60", "overrides are not stored")
    # a copy keeps them; REPLACE takes the request's
    s3.copy_object(Bucket=bucket, Key="hdr-copy", CopySource={
        "Bucket": bucket, "Key": "hdr"})
    c.eq(s3.head_object(Bucket=bucket, Key="hdr-copy")["ContentLanguage"],
         "fr-CA", "copy keeps the headers")
    s3.copy_object(Bucket=bucket, Key="hdr-copy", CopySource={
        "Bucket": bucket, "Key": "hdr"}, MetadataDirective="REPLACE",
        CacheControl="no-cache")
    r = s3.head_object(Bucket=bucket, Key="hdr-copy")
    c.eq((r.get("CacheControl"), r.get("ContentLanguage")),
         ("no-cache", None), "copy with REPLACE takes the request's")


def copies(s3, c, bucket):
    """Self-copy, x-amz-copy-source-if-*, UploadPartCopy with ranges, the
    managed (multipart) copy, GetObjectTagging."""
    src = {"Bucket": bucket, "Key": "csrc"}
    data = os.urandom(12 * MiB + 3)
    etag = s3.put_object(Bucket=bucket, Key="csrc", Body=data)["ETag"]
    code, status, _ = error_of(s3.copy_object, Bucket=bucket, Key="csrc",
                               CopySource=src)
    c.eq((code, status), ("InvalidRequest", 400), "self-copy changing nothing")
    s3.copy_object(Bucket=bucket, Key="csrc", CopySource=src,
                   MetadataDirective="REPLACE", Metadata={"x": "y"})
    c.eq(s3.head_object(Bucket=bucket, Key="csrc")["Metadata"], {"x": "y"},
         "self-copy replacing the metadata")
    mtime = s3.head_object(Bucket=bucket, Key="csrc")["LastModified"]
    past = mtime - datetime.timedelta(days=1)
    future = mtime + datetime.timedelta(days=1)
    for kw, ok in (({"CopySourceIfMatch": etag}, True),
                   ({"CopySourceIfMatch": '"%s"' % ("0" * 32)}, False),
                   ({"CopySourceIfNoneMatch": etag}, False),
                   ({"CopySourceIfNoneMatch": '"%s"' % ("0" * 32)}, True),
                   ({"CopySourceIfModifiedSince": past}, True),
                   ({"CopySourceIfModifiedSince": future}, False),
                   ({"CopySourceIfUnmodifiedSince": future}, True),
                   ({"CopySourceIfUnmodifiedSince": past}, False),
                   ({"CopySourceIfMatch": etag,
                     "CopySourceIfUnmodifiedSince": past}, True),
                   ({"CopySourceIfNoneMatch": etag,
                     "CopySourceIfModifiedSince": past}, False)):
        what = "copy condition %s" % sorted(kw)
        if ok:
            s3.copy_object(Bucket=bucket, Key="cdst", CopySource=src, **kw)
            c.ok(True, what)
        else:
            code, status, _ = error_of(s3.copy_object, Bucket=bucket,
                                       Key="cdst", CopySource=src, **kw)
            c.eq((code, status), ("PreconditionFailed", 412), what)
    # UploadPartCopy by hand, with ranges
    up = s3.create_multipart_upload(Bucket=bucket, Key="pc")["UploadId"]
    cut = 5 * MiB + 1
    r1 = s3.upload_part_copy(Bucket=bucket, Key="pc", UploadId=up,
                             PartNumber=1, CopySource=src,
                             CopySourceRange="bytes=0-%d" % (cut - 1))
    c.eq(r1["CopyPartResult"]["ETag"], '"%s"' % md5hex(data[:cut]),
         "UploadPartCopy ETag")
    r2 = s3.upload_part_copy(Bucket=bucket, Key="pc", UploadId=up,
                             PartNumber=2, CopySource=src,
                             CopySourceRange="bytes=%d-%d" % (
                                 cut, len(data) - 1))
    for rng in ("bytes=0-%d" % len(data), "bytes=5-4", "items=0-1"):
        code, status, _ = error_of(s3.upload_part_copy, Bucket=bucket,
                                   Key="pc", UploadId=up, PartNumber=3,
                                   CopySource=src, CopySourceRange=rng)
        c.eq((code, status), ("InvalidArgument", 400), "copy range " + rng)
    code, status, _ = error_of(s3.upload_part_copy, Bucket=bucket, Key="pc",
                               UploadId=up, PartNumber=3, CopySource=src,
                               CopySourceIfMatch='"%s"' % ("0" * 32))
    c.eq((code, status), ("PreconditionFailed", 412), "part copy condition")
    s3.complete_multipart_upload(
        Bucket=bucket, Key="pc", UploadId=up, MultipartUpload={"Parts": [
            {"PartNumber": 1, "ETag": r1["CopyPartResult"]["ETag"]},
            {"PartNumber": 2, "ETag": r2["CopyPartResult"]["ETag"]}]})
    c.ok(s3.get_object(Bucket=bucket, Key="pc")["Body"].read() == data,
         "UploadPartCopy: the bytes")
    # the managed copy goes in parts above its threshold
    tc = TransferConfig(multipart_threshold=5 * MiB,
                        multipart_chunksize=5 * MiB, max_concurrency=3)
    s3.copy(src, bucket, "managed", Config=tc)
    h = s3.head_object(Bucket=bucket, Key="managed")
    c.ok(h["ETag"].endswith('-3"'), "managed copy went in parts")
    c.ok(s3.get_object(Bucket=bucket, Key="managed")["Body"].read() == data,
         "managed copy: the bytes")
    c.eq(s3.get_object_tagging(Bucket=bucket, Key="managed")["TagSet"], [],
         "GetObjectTagging: none")
    code, status, _ = error_of(s3.get_object_tagging, Bucket=bucket,
                               Key="nonesuch")
    c.eq((code, status), ("NoSuchKey", 404), "GetObjectTagging: no key")
    for k in ("csrc", "cdst", "pc", "managed"):
        s3.delete_object(Bucket=bucket, Key=k)


def aws_cli_copy(url, c):
    """The AWS CLI's S3-to-S3 copy of 64 MiB (HeadObject, GetObjectTagging,
    UploadPartCopy), where the CLI is installed."""
    aws = shutil.which("aws")
    if not aws:
        print("note: no aws command; the CLI copy is not tried")
        return
    s3 = client(url)
    for b in ("cli-a", "cli-b"):
        s3.create_bucket(Bucket=b)
    data = os.urandom(64 * MiB)
    s3.put_object(Bucket="cli-a", Key="x", Body=data)
    env = dict(os.environ, AWS_ACCESS_KEY_ID=AK, AWS_SECRET_ACCESS_KEY=SK,
               AWS_DEFAULT_REGION="us-east-1", AWS_CONFIG_FILE="/nonexistent",
               AWS_SHARED_CREDENTIALS_FILE="/nonexistent")
    p = subprocess.run([aws, "--endpoint-url", url, "s3", "cp",
                        "s3://cli-a/x", "s3://cli-b/x"], env=env,
                       capture_output=True, text=True, timeout=300)
    c.eq(p.returncode, 0, "aws s3 cp s3://a/x s3://b/x: %s" % p.stderr[-500:])
    c.ok(s3.get_object(Bucket="cli-b", Key="x")["Body"].read() == data,
         "the CLI's copy: the bytes")


def checksums(s3, c, bucket):
    """Checksums kept with objects and returned with x-amz-checksum-mode:
    ENABLED; CreateMultipartUpload's algorithm."""
    data = os.urandom(100000)
    sha256 = base64.b64encode(hashlib.sha256(data).digest()).decode()
    sha1 = base64.b64encode(hashlib.sha1(data).digest()).decode()
    s3.put_object(Bucket=bucket, Key="ck", Body=data,
                  ChecksumAlgorithm="SHA256")
    for what, r in (
            ("HEAD", s3.head_object(Bucket=bucket, Key="ck",
                                    ChecksumMode="ENABLED")),
            ("GET", s3.get_object(Bucket=bucket, Key="ck",
                                  ChecksumMode="ENABLED"))):
        h = r["ResponseMetadata"]["HTTPHeaders"]
        c.eq((r.get("ChecksumSHA256"), h.get("x-amz-checksum-type")),
             (sha256, "FULL_OBJECT"), what + " returns the checksum")
    r = s3.head_object(Bucket=bucket, Key="ck")
    c.ok("ChecksumSHA256" not in r, "no checksum unless asked for")
    r = s3.get_object(Bucket=bucket, Key="ck", Range="bytes=0-9",
                      ChecksumMode="ENABLED")
    c.ok("ChecksumSHA256" not in r, "no checksum for a range")
    s3.copy_object(Bucket=bucket, Key="ck2", MetadataDirective="REPLACE",
                   CopySource={"Bucket": bucket, "Key": "ck"})
    c.eq(s3.head_object(Bucket=bucket, Key="ck2", ChecksumMode="ENABLED")
         .get("ChecksumSHA256"), sha256, "a copy keeps the checksum")
    s3.put_object(Bucket=bucket, Key="ck", Body=data,
                  ChecksumAlgorithm="SHA1")
    r = s3.head_object(Bucket=bucket, Key="ck", ChecksumMode="ENABLED")
    c.eq((r.get("ChecksumSHA1"), r.get("ChecksumSHA256")), (sha1, None),
         "an overwrite's checksum")
    r = s3.create_multipart_upload(Bucket=bucket, Key="ckmp",
                                   ChecksumAlgorithm="SHA256")
    c.eq(r.get("ChecksumAlgorithm"), "SHA256",
         "CreateMultipartUpload returns the algorithm")
    c.eq(r["ResponseMetadata"]["HTTPHeaders"].get("x-amz-checksum-type"),
         "COMPOSITE", "and its type")
    up = r["UploadId"]
    p1, p2 = os.urandom(5 * MiB), os.urandom(1000)
    parts = []
    for i, p in enumerate((p1, p2)):
        pr = s3.upload_part(Bucket=bucket, Key="ckmp", UploadId=up,
                            PartNumber=i + 1, Body=p,
                            ChecksumAlgorithm="SHA256")
        c.eq(pr.get("ChecksumSHA256"), base64.b64encode(
            hashlib.sha256(p).digest()).decode(), "part checksum")
        parts.append({"PartNumber": i + 1, "ETag": pr["ETag"],
                      "ChecksumSHA256": pr["ChecksumSHA256"]})
    listed = s3.list_parts(Bucket=bucket, Key="ckmp", UploadId=up)["Parts"]
    c.eq([p.get("ChecksumSHA256") for p in listed],
         [p["ChecksumSHA256"] for p in parts], "ListParts: the checksums")
    want = base64.b64encode(hashlib.sha256(
        hashlib.sha256(p1).digest() + hashlib.sha256(p2).digest())
        .digest()).decode() + "-2"
    r = s3.complete_multipart_upload(Bucket=bucket, Key="ckmp", UploadId=up,
                                     MultipartUpload={"Parts": parts})
    c.eq(r.get("ChecksumSHA256"), want, "composite checksum at Complete")
    h = s3.head_object(Bucket=bucket, Key="ckmp", ChecksumMode="ENABLED")
    c.eq((h.get("ChecksumSHA256"),
          h["ResponseMetadata"]["HTTPHeaders"].get("x-amz-checksum-type")),
         (want, "COMPOSITE"), "a multipart object's composite checksum")
    s3.copy_object(Bucket=bucket, Key="ckmp2", CopySource={
        "Bucket": bucket, "Key": "ckmp"})
    c.ok("ChecksumSHA256" not in s3.head_object(
        Bucket=bucket, Key="ckmp2", ChecksumMode="ENABLED"),
        "a copy in one piece drops a COMPOSITE checksum")
    for k in ("ckmp", "ckmp2"):
        s3.delete_object(Bucket=bucket, Key=k)
    if "ChecksumType" in s3.meta.service_model.operation_model(
            "CreateMultipartUpload").input_shape.members:
        up = s3.create_multipart_upload(
            Bucket=bucket, Key="ckfull", ChecksumAlgorithm="CRC32",
            ChecksumType="FULL_OBJECT")["UploadId"]
        parts = []
        for i, p in enumerate((p1, p2)):
            pr = s3.upload_part(Bucket=bucket, Key="ckfull", UploadId=up,
                                PartNumber=i + 1, Body=p,
                                ChecksumAlgorithm="CRC32")
            parts.append({"PartNumber": i + 1, "ETag": pr["ETag"],
                          "ChecksumCRC32": pr["ChecksumCRC32"]})
        s3.complete_multipart_upload(Bucket=bucket, Key="ckfull",
                                     UploadId=up,
                                     MultipartUpload={"Parts": parts})
        h = s3.head_object(Bucket=bucket, Key="ckfull",
                           ChecksumMode="ENABLED")
        c.eq(h.get("ChecksumCRC32"), base64.b64encode(zlib.crc32(
            p1 + p2).to_bytes(4, "big")).decode(),
            "a multipart object's full-object CRC32")
        s3.delete_object(Bucket=bucket, Key="ckfull")
    code, status, _ = error_of(
        s3.create_multipart_upload, Bucket=bucket, Key="ckmp",
        ChecksumAlgorithm="SHA256", ChecksumType="FULL_OBJECT") \
        if "ChecksumType" in s3.meta.service_model.operation_model(
            "CreateMultipartUpload").input_shape.members \
        else ("InvalidRequest", 400, {})
    c.eq((code, status), ("InvalidRequest", 400), "SHA256 is never FULL_OBJECT")


def ranges(s3, c, bucket):
    data = bytes(range(256)) * 40  # 10240 bytes
    s3.put_object(Bucket=bucket, Key="r", Body=data)
    cases = [("bytes=0-0", data[0:1]), ("bytes=10-19", data[10:20]),
             ("bytes=-5", data[-5:]), ("bytes=10230-", data[10230:]),
             ("bytes=10000-99999999", data[10000:]),
             ("bytes=-99999", data), ("bytes=0-", data)]
    for rng, want in cases:
        g = s3.get_object(Bucket=bucket, Key="r", Range=rng)
        c.eq(g["Body"].read(), want, "range %s" % rng)
        c.eq(g["ResponseMetadata"]["HTTPStatusCode"], 206, "206 for " + rng)
        first = len(data) - len(want)
        if not rng.startswith("bytes=-") and rng != "bytes=0-":
            first = int(rng[6:].split("-")[0])
        c.eq(g["ContentRange"], "bytes %d-%d/%d" % (
            first, first + len(want) - 1, len(data)), "Content-Range " + rng)
    for rng in ("bytes=10240-", "bytes=99999-100000", "bytes=-0"):
        code, status, h = error_of(s3.get_object, Bucket=bucket, Key="r",
                                   Range=rng)
        c.eq((code, status), ("InvalidRange", 416), "unsatisfiable " + rng)
        c.eq(h.get("content-range"), "bytes */10240", "416 Content-Range")
    for rng in ("bytes=5-3", "bytes=0-1,4-5", "items=0-1", "bytes=x-"):
        g = s3.get_object(Bucket=bucket, Key="r", Range=rng)
        c.eq((g["ResponseMetadata"]["HTTPStatusCode"], g["Body"].read()),
             (200, data), "ignored range " + rng)
    s3.put_object(Bucket=bucket, Key="empty", Body=b"")
    code, status, _ = error_of(s3.get_object, Bucket=bucket, Key="empty",
                               Range="bytes=0-")
    c.eq(status, 416, "range of an empty object")


def listing(s3, c, bucket):
    keys = sorted(["dir%d/file%02d" % (d, f) for d in range(3)
                   for f in range(7)] + ["top%d" % i for i in range(4)])
    for k in keys:
        s3.put_object(Bucket=bucket, Key=k, Body=b"x")
    got = []
    pages = 0
    for page in s3.get_paginator("list_objects_v2").paginate(
            Bucket=bucket, PaginationConfig={"PageSize": 4}):
        pages += 1
        c.eq(page["KeyCount"], len(page.get("Contents", [])) +
             len(page.get("CommonPrefixes", [])), "KeyCount")
        c.ok(page["KeyCount"] <= 4, "page within max-keys")
        got += [o["Key"] for o in page.get("Contents", [])]
    c.eq(got, keys, "v2 pagination returns every key once, in order")
    c.eq(pages, (len(keys) + 3) // 4, "v2 page count")
    r = s3.list_objects_v2(Bucket=bucket, Delimiter="/")
    c.eq([p["Prefix"] for p in r["CommonPrefixes"]],
         ["dir0/", "dir1/", "dir2/"], "common prefixes")
    c.eq([o["Key"] for o in r["Contents"]], ["top%d" % i for i in range(4)],
         "keys beside the prefixes")
    c.eq(r["KeyCount"], 7, "KeyCount with prefixes")
    # prefixes and keys interleaved across pages
    got, prefixes = [], []
    for page in s3.get_paginator("list_objects_v2").paginate(
            Bucket=bucket, Delimiter="/", PaginationConfig={"PageSize": 2}):
        got += [o["Key"] for o in page.get("Contents", [])]
        prefixes += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
    c.eq((prefixes, got), (["dir0/", "dir1/", "dir2/"],
                           ["top%d" % i for i in range(4)]),
         "paginated delimiter listing")
    r = s3.list_objects_v2(Bucket=bucket, Prefix="dir1/", MaxKeys=3)
    c.eq([o["Key"] for o in r["Contents"]],
         ["dir1/file00", "dir1/file01", "dir1/file02"], "prefix + max-keys")
    c.ok(r["IsTruncated"], "truncated")
    r = s3.list_objects_v2(Bucket=bucket, StartAfter="dir2/file05")
    c.eq([o["Key"] for o in r["Contents"]],
         ["dir2/file06"] + ["top%d" % i for i in range(4)], "start-after")
    r = s3.list_objects_v2(Bucket=bucket, MaxKeys=0)
    c.eq((r["KeyCount"], r["IsTruncated"]), (0, False), "max-keys 0")
    code, status, _ = error_of(s3.list_objects_v2, Bucket=bucket,
                               ContinuationToken="not-a-token")
    c.eq((code, status), ("InvalidArgument", 400), "bad continuation token")
    got = []
    for page in s3.get_paginator("list_objects").paginate(
            Bucket=bucket, PaginationConfig={"PageSize": 5}):
        got += [o["Key"] for o in page.get("Contents", [])]
    c.eq(got, keys, "v1 pagination (marker)")
    # botocore asks encoding-type=url; v1 does not encode Prefix
    s3.put_object(Bucket=bucket, Key="sp ace/k", Body=b"x")
    r = s3.list_objects(Bucket=bucket, Prefix="sp ace/")
    c.eq((r["Prefix"], [o["Key"] for o in r["Contents"]]),
         ("sp ace/", ["sp ace/k"]), "v1 Prefix with encoding-type=url")
    r = s3.list_objects_v2(Bucket=bucket, Prefix="sp ace/")
    c.eq(r["Prefix"], "sp ace/", "v2 Prefix with encoding-type=url")
    s3.delete_object(Bucket=bucket, Key="sp ace/k")
    r = s3.list_objects_v2(Bucket=bucket, ContinuationToken="", Delimiter="")
    c.eq([o["Key"] for o in r["Contents"]], keys,
         "an empty continuation token lists from the start")
    c.ok("Delimiter" not in r, "an empty delimiter is not echoed")
    # versions of an unversioned bucket: every object, version null
    got = []
    for page in s3.get_paginator("list_object_versions").paginate(
            Bucket=bucket, PaginationConfig={"PageSize": 6}):
        got += [(v["Key"], v["VersionId"], v["IsLatest"])
                for v in page.get("Versions", [])]
        c.eq(page.get("DeleteMarkers", []), [], "no delete markers")
    c.eq(got, [(k, "null", True) for k in keys], "list_object_versions")
    r = s3.list_object_versions(Bucket=bucket, Delimiter="/")
    c.eq([p["Prefix"] for p in r["CommonPrefixes"]],
         ["dir0/", "dir1/", "dir2/"], "versions: common prefixes")
    c.eq(s3.get_object(Bucket=bucket, Key="top0", VersionId="null")["Body"]
         .read(), b"x", "GET of version null")
    s3.delete_object(Bucket=bucket, Key="top3", VersionId="null")
    keys.remove("top3")
    r = s3.delete_objects(Bucket=bucket, Delete={"Objects": [
        {"Key": "top2", "VersionId": "null"},
        {"Key": "top1", "VersionId": "3HL4kqtJlcpXroDTDmJ"}]})
    keys.remove("top2")
    c.eq(([(d["Key"], d.get("VersionId")) for d in r["Deleted"]],
          [(e["Key"], e["Code"]) for e in r["Errors"]]),
         ([("top2", "null")], [("top1", "NoSuchVersion")]),
         "DeleteObjects: version null deleted, another is no such version")
    c.eq([o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]],
         keys, "deletes of version null")
    r = s3.delete_objects(Bucket=bucket, Delete={
        "Objects": [{"Key": k} for k in keys] + [{"Key": "never-was"}]})
    c.eq(sorted(d["Key"] for d in r["Deleted"]), sorted(keys + ["never-was"]),
         "DeleteObjects")
    r = s3.delete_objects(Bucket=bucket, Delete={
        "Objects": [{"Key": "top0"}], "Quiet": True})
    c.eq(r.get("Deleted", []), [], "quiet DeleteObjects")
    c.eq(s3.list_objects_v2(Bucket=bucket, Prefix="dir")["KeyCount"], 0,
         "all deleted")


def multipart(s3, c, bucket):
    # the transfer manager, several parts each way
    data = os.urandom(3 * 5 * MiB + 12345)
    path = tempfile.mktemp()
    back = tempfile.mktemp()
    try:
        with open(path, "wb") as f:
            f.write(data)
        tc = TransferConfig(multipart_threshold=5 * MiB,
                            multipart_chunksize=5 * MiB, max_concurrency=4)
        s3.upload_file(path, bucket, "big", Config=tc)
        s3.download_file(bucket, "big", back, Config=tc)
        with open(back, "rb") as f:
            c.ok(f.read() == data, "multipart upload, ranged download: bytes")
    finally:
        for p in (path, back):
            if os.path.exists(p):
                os.unlink(p)
    parts = [data[i:i + 5 * MiB] for i in range(0, len(data), 5 * MiB)]
    want = hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts))
    etag = '"%s-%d"' % (want.hexdigest(), len(parts))
    c.eq(s3.head_object(Bucket=bucket, Key="big")["ETag"], etag,
         "multipart ETag = md5 of part md5s + -N")

    # by hand: parts out of order, a re-uploaded part, validation
    up = s3.create_multipart_upload(Bucket=bucket, Key="manual",
                                    Metadata={"m": "1"})["UploadId"]
    p1, p2 = os.urandom(5 * MiB), os.urandom(1000)
    e2 = s3.upload_part(Bucket=bucket, Key="manual", UploadId=up,
                        PartNumber=2, Body=p2)["ETag"]
    s3.upload_part(Bucket=bucket, Key="manual", UploadId=up, PartNumber=1,
                   Body=b"to be replaced")
    e1 = s3.upload_part(Bucket=bucket, Key="manual", UploadId=up,
                        PartNumber=1, Body=p1)["ETag"]
    c.eq(e1, '"%s"' % md5hex(p1), "part ETag")
    listed = s3.list_parts(Bucket=bucket, Key="manual", UploadId=up)["Parts"]
    c.eq([(p["PartNumber"], p["Size"]) for p in listed],
         [(1, len(p1)), (2, len(p2))], "list_parts")
    ups = s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])
    c.ok(any(u["UploadId"] == up for u in ups), "list_multipart_uploads")
    code, status, _ = error_of(
        s3.complete_multipart_upload, Bucket=bucket, Key="manual",
        UploadId=up, MultipartUpload={"Parts": [
            {"PartNumber": 2, "ETag": e2}, {"PartNumber": 1, "ETag": e1}]})
    c.eq((code, status), ("InvalidPartOrder", 400), "parts out of order")
    code, status, _ = error_of(
        s3.complete_multipart_upload, Bucket=bucket, Key="manual",
        UploadId=up, MultipartUpload={"Parts": [
            {"PartNumber": 1, "ETag": e2}, {"PartNumber": 2, "ETag": e2}]})
    c.eq((code, status), ("InvalidPart", 400), "wrong part ETag")
    code, status, _ = error_of(
        s3.complete_multipart_upload, Bucket=bucket, Key="manual",
        UploadId=up, MultipartUpload={"Parts": [
            {"PartNumber": 1, "ETag": e1}, {"PartNumber": 3, "ETag": e2}]})
    c.eq((code, status), ("InvalidPart", 400), "missing part")
    code, status, _ = error_of(
        s3.complete_multipart_upload, Bucket=bucket, Key="manual",
        UploadId=up, MultipartUpload={"Parts": [
            {"PartNumber": 2, "ETag": e2}, {"PartNumber": 3, "ETag": e2}]})
    c.ok(code in ("InvalidPart", "EntityTooSmall"), "small non-last part")
    r = s3.complete_multipart_upload(
        Bucket=bucket, Key="manual", UploadId=up, MultipartUpload={"Parts": [
            {"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]})
    want = hashlib.md5(hashlib.md5(p1).digest() + hashlib.md5(p2).digest())
    c.eq(r["ETag"], '"%s-2"' % want.hexdigest(), "complete ETag")
    again = s3.complete_multipart_upload(
        Bucket=bucket, Key="manual", UploadId=up, MultipartUpload={"Parts": [
            {"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]})
    c.eq((again["ETag"], again["Key"], again["Bucket"]),
         (r["ETag"], "manual", bucket), "a retried complete: the same result")
    g = s3.get_object(Bucket=bucket, Key="manual")
    c.eq(g["Body"].read(), p1 + p2, "completed bytes")
    c.eq(g["Metadata"], {"m": "1"}, "metadata from create")
    code, status, _ = error_of(s3.upload_part, Bucket=bucket, Key="manual",
                               UploadId=up, PartNumber=1, Body=b"late")
    c.eq((code, status), ("NoSuchUpload", 404), "upload gone after complete")

    up = s3.create_multipart_upload(Bucket=bucket, Key="aborted")["UploadId"]
    s3.upload_part(Bucket=bucket, Key="aborted", UploadId=up, PartNumber=1,
                   Body=b"x" * 100)
    s3.abort_multipart_upload(Bucket=bucket, Key="aborted", UploadId=up)
    code, status, _ = error_of(s3.abort_multipart_upload, Bucket=bucket,
                               Key="aborted", UploadId=up)
    c.eq((code, status), ("NoSuchUpload", 404), "abort twice")
    code, status, _ = error_of(s3.head_object, Bucket=bucket, Key="aborted")
    c.eq(status, 404, "aborted upload left no object")
    code, status, _ = error_of(s3.upload_part, Bucket=bucket, Key="x",
                               UploadId=up, PartNumber=10001, Body=b"x")
    c.eq(status, 400, "part number out of range")


def deletes(s3, c, bucket):
    s3.put_object(Bucket=bucket, Key="gone", Body=b"x")
    r = s3.delete_object(Bucket=bucket, Key="gone")
    c.eq(r["ResponseMetadata"]["HTTPStatusCode"], 204, "delete 204")
    r = s3.delete_object(Bucket=bucket, Key="gone")
    c.eq(r["ResponseMetadata"]["HTTPStatusCode"], 204, "delete missing 204")
    code, status, _ = error_of(s3.get_object, Bucket=bucket, Key="gone")
    c.eq(status, 404, "deleted")


def all_operations(s3, c):
    bucket_ops(s3, c)
    s3.create_bucket(Bucket="data")
    objects(s3, c, "data")
    standard_headers(s3, c, "data")
    copies(s3, c, "data")
    checksums(s3, c, "data")
    ranges(s3, c, "data")
    s3.create_bucket(Bucket="listing")
    listing(s3, c, "listing")
    multipart(s3, c, "data")
    deletes(s3, c, "data")


def snapshot(s3, bucket):
    out = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for o in page.get("Contents", []):
            out[o["Key"]] = (o["ETag"], o["Size"])
    return out


# ---- SigV4 -----------------------------------------------------------------

def sigv4_rejections(url, c):
    good = client(url)
    good.create_bucket(Bucket="sig")
    good.put_object(Bucket="sig", Key="k", Body=b"payload")
    c.eq(good.get_object(Bucket="sig", Key="k")["Body"].read(), b"payload",
         "good signature accepted")
    code, status, _ = error_of(client(url, sk="wrong").get_object,
                               Bucket="sig", Key="k")
    c.eq((code, status), ("SignatureDoesNotMatch", 403), "wrong secret")
    code, status, _ = error_of(client(url, ak="NOBODY").get_object,
                               Bucket="sig", Key="k")
    c.eq((code, status), ("InvalidAccessKeyId", 403), "unknown key")
    code, status, _ = error_of(client(url, unsigned=True).get_object,
                               Bucket="sig", Key="k")
    c.eq((code, status), ("AccessDenied", 403), "unsigned request")

    def tamper_header(request, **kw):
        request.headers["x-amz-meta-note"] = "changed after signing"
    t = client(url)
    t.meta.events.register("before-send.s3.PutObject", tamper_header)
    code, status, _ = error_of(t.put_object, Bucket="sig", Key="k",
                               Body=b"x", Metadata={"note": "signed"})
    c.eq((code, status), ("SignatureDoesNotMatch", 403), "tampered header")

    def tamper_body(request, **kw):
        b = request.body
        if hasattr(b, "read"):
            b = b.read()
        request.body = bytes([b[0] ^ 1]) + b[1:]
    t = client(url)
    t.meta.events.register("before-send.s3.PutObject", tamper_body)
    code, status, _ = error_of(t.put_object, Bucket="sig", Key="k",
                               Body=b"original body")
    c.eq((code, status), ("XAmzContentSHA256Mismatch", 400), "tampered body")
    c.eq(good.get_object(Bucket="sig", Key="k")["Body"].read(), b"payload",
         "rejected PUTs left the object alone")

    def tamper_date(request, **kw):
        request.headers["x-amz-date"] = "20200101T000000Z"
    t = client(url)
    t.meta.events.register("before-send.s3.GetObject", tamper_date)
    code, status, _ = error_of(t.get_object, Bucket="sig", Key="k")
    c.eq(status, 403, "tampered date")

    # presigned URLs (SigV4 query form)
    p = client(url, signature_version="s3v4")
    u = p.generate_presigned_url("get_object", Params={
        "Bucket": "sig", "Key": "k"}, ExpiresIn=60)
    with urllib.request.urlopen(u) as r:
        c.eq(r.read(), b"payload", "presigned GET")
    # its user may add a Range, which the URL cannot sign
    with urllib.request.urlopen(urllib.request.Request(
            u, headers={"Range": "bytes=0-2"})) as r:
        c.eq(r.read(), b"pay", "presigned GET with a Range")
    try:
        urllib.request.urlopen(u.replace("Key", "Kex").replace("/k?", "/j?"))
        raise Failure("tampered presigned URL accepted")
    except urllib.error.HTTPError as e:
        c.eq(e.code, 403, "tampered presigned URL")
    # X-Amz-Expires of 0, negative or over seven days: S3's own error
    for exp in (0, -5, 604801):
        u = p.generate_presigned_url("get_object", Params={
            "Bucket": "sig", "Key": "k"}, ExpiresIn=exp)
        try:
            urllib.request.urlopen(u)
            raise Failure("X-Amz-Expires=%d accepted" % exp)
        except urllib.error.HTTPError as e:
            c.eq((e.code, b"<Code>AuthorizationQueryParametersError</Code>"
                  in e.read()), (400, True), "X-Amz-Expires=%d" % exp)
    u = p.generate_presigned_url("get_object", Params={
        "Bucket": "sig", "Key": "k"}, ExpiresIn=1)
    time.sleep(2.2)
    try:
        urllib.request.urlopen(u)
        raise Failure("expired presigned URL accepted")
    except urllib.error.HTTPError as e:
        c.eq(e.code, 403, "expired presigned URL")

    # the RDMA token header: signed, it passes authentication (and gets 501
    # here: no RDMA device); added after signing, it is rejected.
    def add_token(request, **kw):
        request.headers["x-amz-rdma-token"] = TOKEN
    t = client(url)
    t.meta.events.register("before-sign.s3.GetObject", add_token)
    code, status, h = error_of(t.get_object, Bucket="sig", Key="k")
    c.eq((status, h.get("x-amz-rdma-reply")), (501, "501"),
         "signed token: authenticated, declined")
    t = client(url)
    t.meta.events.register("before-send.s3.GetObject", add_token)
    code, status, h = error_of(t.get_object, Bucket="sig", Key="k")
    c.eq((code, status), ("AccessDenied", 403), "unsigned token header")
    c.ok("x-amz-rdma-reply" not in h, "no reply header on a 403")


def observability(srv, c, stats_path):
    """The stats file, the request log, a clean stop on SIGINT."""
    time.sleep(0.3)  # one --stats-interval-ms at least
    with open(stats_path) as f:
        st = json.load(f)
    c.ok(st["requests"]["total"] > 100, "stats file written while running")
    rc = srv.stop(sig=signal.SIGINT)
    c.eq(rc, 0, "clean exit on SIGINT")
    with open(stats_path) as f:
        final = json.load(f)
    c.ok(final["requests"]["total"] >= st["requests"]["total"],
         "stats file written at exit")
    c.eq(final["http"]["bytes_in"], srv.last_stats["http"]["bytes_in"],
         "stats file = /_hipobj/stats")
    log = srv.stderr().splitlines()
    lines = [l for l in log if " PutObject " in l or " GetObject " in l]
    c.ok(len(lines) > 20, "one log line per request")
    f = lines[0].split()
    c.ok(len(f) >= 10 and f[2] in ("PUT", "GET") and f[3].startswith("/") and
         f[4].isdigit() and f[6] == "http", "log line fields: %r" % lines[0])
    c.ok(all("X-Amz-Signature" not in l and "Authorization" not in l
             for l in log), "no signature in the log")


def run(binary, c):
    stats_path = tempfile.mktemp(prefix="hipobj-stats-")
    try:
        with Server(binary, "--stats-file", stats_path, "--stats-interval-ms",
                    "100", "--log-requests") as srv:
            all_operations(client(srv.url, unsigned=True), c)
            st = srv.last_stats = srv.stats()
            c.ok(st["http"]["bytes_in"] > 15 * MiB, "stats: bytes in over HTTP")
            c.ok(st["http"]["bytes_out"] > 15 * MiB,
                 "stats: bytes out over HTTP")
            c.eq(st["rdma"]["bytes_in"] + st["rdma"]["bytes_out"], 0,
                 "stats: nothing moved by RDMA")
            observability(srv, c, stats_path)
    finally:
        if os.path.exists(stats_path):
            os.unlink(stats_path)
    d = tempfile.mkdtemp(prefix="hipobj-srv-")
    try:
        args = ("--data-dir", d, "--access-key", AK, "--secret-key", SK,
                "--log-requests")
        with Server(binary, *args) as srv:
            s3 = client(srv.url)
            all_operations(s3, c)
            before = snapshot(s3, "data")
            s3.create_multipart_upload(Bucket="data", Key="unfinished")
        # a stray temporary file, as a crash would leave
        with open(os.path.join(d, "data", ".tmp-crash1"), "wb") as f:
            f.write(b"half an object")
        with Server(binary, *args) as srv:
            s3 = client(srv.url)
            c.eq(snapshot(s3, "data"), before, "objects survive a restart")
            c.eq(s3.get_object(Bucket="data", Key="manual")["Metadata"],
                 {"m": "1"}, "metadata survives a restart")
            r = s3.head_object(Bucket="data", Key="hdr")
            c.eq((r.get("CacheControl"), r["Metadata"]),
                 ("max-age=60", {"empty": "", "full": "v"}),
                 "headers survive a restart")
            c.ok("ChecksumSHA1" in s3.head_object(
                Bucket="data", Key="ck", ChecksumMode="ENABLED"),
                "checksums survive a restart")
            c.ok(not os.path.exists(os.path.join(d, "data", ".tmp-crash1")),
                 "temporary files removed at start")
            c.eq(s3.list_multipart_uploads(Bucket="data").get("Uploads", []),
                 [], "uploads do not survive a restart")
            sigv4_rejections(srv.url, c)
            aws_cli_copy(srv.url, c)
            c.ok(srv.stats()["auth_failures"] >= 6, "stats: auth failures")
            rc = srv.stop()
            c.eq(rc, 0, "clean exit on SIGTERM")
            log = srv.stderr()
            c.ok(" GetObject " in log and "X-Amz-Signature" not in log and
                 "Credential" not in log, "presigned URLs logged without "
                 "their signature")
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    main(run, "boto3 interop (boto3 %s, botocore %s)" % (
        boto3.__version__, botocore.__version__))
