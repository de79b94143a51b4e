#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""S3 parity: does boto3 through endpoint B behave as boto3 against A?

Runs one scenario (buckets, objects of 0 B to 10 MiB, ranges, conditional
GETs, metadata, listings V1 and V2, multipart, copy, multi-object delete,
errors; then conditional writes, object tagging, GetObject and HeadObject
by part number, GetObjectAttributes) against endpoint A (the reference, e.g. Ceph RGW) and then against
endpoint B (the endpoint under test, e.g. hipobj-gateway in front of A),
each in buckets of its own name prefix. Every step is recorded as a
normalised transcript entry: HTTP status, S3 error code, body length and
sha256, the headers that matter (ETag, Content-Length, Content-Range,
Content-Type, user metadata) and, for listings, keys, prefixes and
truncation. Values that legitimately differ between two endpoints (bucket
names, upload IDs, continuation tokens, dates, owners, request IDs) are
replaced by the logical name or by "present"/"absent". The transcripts are
compared step by step; each difference is printed, then

    parity: N steps, M differences

(M counts the steps that differ). Exit status 0 only with no difference;
1 with differences; 2 on a usage error or when an endpoint is unreachable.

  s3_parity.py --a URL --b URL --access-key K --secret-key S
               [--b-access-key K --b-secret-key S] [--region R]
               [--transcript FILE]

A step's name may say in brackets what AWS S3 answers ("AWS: NoSuchKey");
the suite never checks that, it compares A with B.

Known Ceph pacific (16.2) quirk: CompleteMultipartUpload answers an empty
<ETag>. The transcript therefore leaves that ETag out (it says whether one
was given) and the step after it compares the ETag that HEAD reports.

What pacific's RGW lacks, measured with this suite against
hipobj-test-server as B (the gateway forwards RGW's answers as they are):
GetObject/HeadObject ?partNumber= (the whole object, 200),
GetObjectAttributes (served as a GET: boto3 cannot parse it),
If-None-Match/If-Match on CompleteMultipartUpload and If-Match on
DeleteObject (ignored), x-amz-tagging-directive REPLACE (the source's tags
are kept), and If-Match on PutObject with the quoted ETag PutObject
returned (412) or "*" on no object (412 where S3 answers 404 NoSuchKey).
"""

import argparse
import datetime
import hashlib
import json
import os
import random
import sys
import time

try:
    import boto3
    import botocore
    import botocore.parsers
    from botocore.config import Config
    from botocore.exceptions import ClientError
except ImportError:
    print("SKIP: boto3 is not installed for %s" % sys.executable)
    sys.exit(77)

MiB = 1024 * 1024
PART = 5 * MiB


def payload(size, seed):
    """Deterministic bytes: the same object has the same bytes on A and B."""
    return random.Random(seed).randbytes(size)


def slice_for(data, rng):
    """The bytes a satisfiable single range selects (None if none)."""
    first, last = rng[len("bytes="):].split("-")
    n = len(data)
    if first == "":
        start, end = max(0, n - int(last)), n - 1
    else:
        start = int(first)
        end = min(n - 1, int(last)) if last else n - 1
    if start >= n or start > end:
        return None
    return data[start:end + 1]


def digest(body):
    d = {"len": len(body), "sha256": hashlib.sha256(body).hexdigest()[:16]}
    if len(body) <= 16:
        d["hex"] = body.hex()
    return d


class Side:
    """One endpoint: a client, a bucket-name prefix and its transcript."""

    def __init__(self, label, url, key, secret, region, prefix):
        self.label = label
        self.url = url
        self.prefix = prefix
        cfg = Config(
            signature_version="s3v4",
            s3={"addressing_style": "path"},
            retries={"total_max_attempts": 1},
            connect_timeout=10,
            read_timeout=120,
        )
        self.s3 = boto3.session.Session().client(
            "s3",
            endpoint_url=url,
            aws_access_key_id=key,
            aws_secret_access_key=secret,
            region_name=region,
            config=cfg,
        )
        self.transcript = []
        self.names = {}  # real bucket name -> logical name
        self.notes = []

    def bucket(self, logical):
        real = f"{self.prefix}-{logical}"
        self.names[real] = "<" + logical + ">"
        return real

    def norm(self, value):
        """Replace real bucket names by logical ones, recursively."""
        if isinstance(value, str):
            for real, logical in self.names.items():
                value = value.replace(real, logical)
            return value
        if isinstance(value, list):
            return [self.norm(v) for v in value]
        if isinstance(value, dict):
            return {k: self.norm(v) for k, v in value.items()}
        return value

    def record(self, step, entry):
        self.transcript.append((step, self.norm(entry)))
        return entry


HEADERS = ("etag", "content-length", "content-range", "content-type",
           "x-amz-tagging-count", "x-amz-mp-parts-count")


def head_fields(resp):
    """The headers that matter, from a boto3 response."""
    h = resp.get("ResponseMetadata", {}).get("HTTPHeaders", {})
    out = {k: h[k] for k in HEADERS if k in h}
    meta = {k[len("x-amz-meta-"):]: v for k, v in h.items()
            if k.startswith("x-amz-meta-")}
    if meta:
        out["meta"] = meta
    return out


def call(side, step, fn, keep=(), drop_headers=(), expect=None, **kw):
    """Run one S3 call, record its normalised outcome, return the response
    (None on an S3 error). keep: response fields recorded as they are, or
    functions of the response that return (name, value). expect: the bytes
    a successful GET must return (recorded as body.as_sent)."""
    entry = {}
    try:
        resp = fn(**kw)
    except ClientError as e:
        md = e.response.get("ResponseMetadata", {})
        entry["status"] = md.get("HTTPStatusCode")
        entry["error"] = e.response.get("Error", {}).get("Code")
        side.record(step, entry)
        return None
    except (botocore.exceptions.BotoCoreError, OSError,
            botocore.parsers.ResponseParserError) as e:
        # (a store that does not know an operation may answer with
        # something else: RGW pacific serves GET ?attributes as a GET)
        entry["exception"] = type(e).__name__
        side.record(step, entry)
        return None
    entry["status"] = resp["ResponseMetadata"]["HTTPStatusCode"]
    hdr = head_fields(resp)
    if fn.__name__ not in ("get_object", "head_object"):
        # an XML answer's length and type say nothing about behaviour
        for k in ("content-length", "content-type", "content-range"):
            hdr.pop(k, None)
    for k in drop_headers:
        hdr.pop(k, None)
    if hdr:
        entry["headers"] = hdr
    if "Body" in resp:
        body = resp["Body"].read()
        entry["body"] = digest(body)
        if expect is not None:
            entry["body"]["as_sent"] = body == expect
    for k in keep:
        if callable(k):
            name, value = k(resp)
            entry[name] = value
        elif k in resp:
            entry[k] = resp[k]
    side.record(step, entry)
    return resp


def present(name):
    return lambda r: (name, "present" if r.get(name) else "absent")


def listing_v2(r):
    return ("list", {
        "keys": [(o["Key"], o["Size"], o.get("ETag")) for o in r.get("Contents", [])],
        "prefixes": [p["Prefix"] for p in r.get("CommonPrefixes", [])],
        "truncated": r.get("IsTruncated"),
        "key_count": r.get("KeyCount"),
        "max_keys": r.get("MaxKeys"),
        "prefix": r.get("Prefix"),
        "delimiter": r.get("Delimiter"),
        "start_after": r.get("StartAfter"),
        "next_token": "present" if r.get("NextContinuationToken") else "absent",
        "name": r.get("Name"),
    })


def listing_v1(r):
    return ("list", {
        "keys": [(o["Key"], o["Size"], o.get("ETag")) for o in r.get("Contents", [])],
        "prefixes": [p["Prefix"] for p in r.get("CommonPrefixes", [])],
        "truncated": r.get("IsTruncated"),
        "max_keys": r.get("MaxKeys"),
        "prefix": r.get("Prefix"),
        "delimiter": r.get("Delimiter"),
        "marker": r.get("Marker"),
        "next_marker": r.get("NextMarker"),
        "name": r.get("Name"),
    })


def scenario(side):
    s3 = side.s3
    b = side.bucket("main")
    b2 = side.bucket("second")
    gone = side.bucket("never-created")

    # ---- buckets
    call(side, "create_bucket main", s3.create_bucket, Bucket=b)
    call(side, "create_bucket second", s3.create_bucket, Bucket=b2)
    call(side, "head_bucket main", s3.head_bucket, Bucket=b)
    call(side, "head_bucket missing", s3.head_bucket, Bucket=gone)
    call(side, "list_buckets", s3.list_buckets,
         keep=(lambda r: ("buckets", sorted(
             x["Name"] for x in r.get("Buckets", [])
             if x["Name"].startswith(side.prefix + "-"))),))
    call(side, "create_bucket main again", s3.create_bucket, Bucket=b)

    # ---- objects of several sizes: put, head, get
    objs = {}
    for size in (0, 1, MiB, 10 * MiB):
        key = f"obj/size-{size}"
        data = payload(size, size)
        objs[size] = (key, data)
        call(side, f"put {size}", s3.put_object, Bucket=b, Key=key, Body=data)
        call(side, f"head {size}", s3.head_object, Bucket=b, Key=key)
        call(side, f"get {size}", s3.get_object, Bucket=b, Key=key,
             expect=data)

    # ---- ranges (Content-Range and the bytes)
    k1, d1 = objs[MiB]
    k10, d10 = objs[10 * MiB]
    k0, _ = objs[0]
    kone, _ = objs[1]
    ranges = [
        (k1, "bytes=0-99", "first 100"),
        (k1, "bytes=500000-500999", "middle"),
        (k1, "bytes=-500", "suffix 500"),
        (k1, f"bytes={MiB - 1000}-", "open-ended"),
        (k1, f"bytes={MiB - 10}-{2 * MiB}", "end beyond size"),
        (k1, f"bytes={MiB}-", "start at size (AWS: 416)"),
        (k1, f"bytes={2 * MiB}-{3 * MiB}", "past the end (AWS: 416)"),
        (k1, f"bytes=-{2 * MiB}", "suffix longer than object"),
        (k1, "bytes=0-0", "one byte"),
        (k10, f"bytes={4 * MiB}-{6 * MiB - 1}", "10 MiB middle 2 MiB"),
        (kone, "bytes=0-0", "1 B object, one byte"),
        (kone, "bytes=1-", "1 B object, past the end (AWS: 416)"),
        (k0, "bytes=0-0", "0 B object (AWS: 416)"),
    ]
    data_of = {key: data for key, data in objs.values()}
    for key, rng, what in ranges:
        call(side, f"range {what} {rng} of {key}", s3.get_object,
             Bucket=b, Key=key, Range=rng,
             expect=slice_for(data_of[key], rng))

    # ---- user metadata and Content-Type
    mk = "meta/object.json"
    meta = {"color": "blue", "mixed-case": "Value With Spaces", "n": "42"}
    call(side, "put with metadata", s3.put_object, Bucket=b, Key=mk,
         Body=b'{"hello": "world"}', ContentType="application/json",
         Metadata=meta)
    call(side, "head metadata", s3.head_object, Bucket=b, Key=mk,
         keep=("Metadata", "ContentType"))
    call(side, "get metadata", s3.get_object, Bucket=b, Key=mk,
         keep=("Metadata", "ContentType"))
    call(side, "put odd content-type", s3.put_object, Bucket=b,
         Key="meta/odd", Body=b"x", ContentType="text/plain; charset=utf-8")
    call(side, "head odd content-type", s3.head_object, Bucket=b,
         Key="meta/odd", keep=("ContentType",))

    # ---- conditional GETs (on the 1 MiB object)
    h = s3.head_object(Bucket=b, Key=k1)
    etag = h["ETag"]
    lm = h["LastModified"]  # whole seconds; the object's time is finer
    day = datetime.timedelta(days=1)
    sec = datetime.timedelta(seconds=1)
    while datetime.datetime.now(datetime.timezone.utc) < lm + 2 * sec:
        time.sleep(0.1)  # so that Last-Modified + 1 s lies in the past
    now = datetime.datetime.now(datetime.timezone.utc)
    conds = [
        ("If-Match right", {"IfMatch": etag}),
        ("If-Match wrong", {"IfMatch": '"0123456789abcdef0123456789abcdef"'}),
        ("If-Match *", {"IfMatch": "*"}),
        ("If-None-Match right", {"IfNoneMatch": etag}),
        ("If-None-Match wrong", {"IfNoneMatch": '"0123456789abcdef0123456789abcdef"'}),
        ("If-None-Match *", {"IfNoneMatch": "*"}),
        ("If-Modified-Since day before", {"IfModifiedSince": lm - day}),
        ("If-Modified-Since Last-Modified + 1 s", {"IfModifiedSince": lm + sec}),
        ("If-Modified-Since = Last-Modified", {"IfModifiedSince": lm}),
        ("If-Modified-Since in the future", {"IfModifiedSince": now + day}),
        ("If-Unmodified-Since day before", {"IfUnmodifiedSince": lm - day}),
        ("If-Unmodified-Since Last-Modified + 1 s", {"IfUnmodifiedSince": lm + sec}),
        ("If-Match right + If-Unmodified-Since before", {"IfMatch": etag, "IfUnmodifiedSince": lm - day}),
        ("If-None-Match wrong + If-Modified-Since Last-Modified + 1 s", {"IfNoneMatch": '"0123456789abcdef0123456789abcdef"', "IfModifiedSince": lm + sec}),
    ]
    for what, kw in conds:
        call(side, f"get {what}", s3.get_object, Bucket=b, Key=k1, **kw)
    for what, kw in conds[:9]:
        call(side, f"head {what}", s3.head_object, Bucket=b, Key=k1, **kw)
    call(side, "get range + If-Match right", s3.get_object, Bucket=b, Key=k1,
         Range="bytes=10-19", IfMatch=etag)

    # ---- listings
    keys = ["list/a.txt", "list/b/1.txt", "list/b/2.txt", "list/c/1.txt",
            "list/d.txt", "list/e/f/g.txt", "list/e.txt", "list/z", "listing"]
    for i, k in enumerate(keys):
        s3.put_object(Bucket=b, Key=k, Body=payload(i + 3, 100 + i))
    call(side, "listV2 all", s3.list_objects_v2, Bucket=b, keep=(listing_v2,))
    call(side, "listV2 prefix list/", s3.list_objects_v2, Bucket=b,
         Prefix="list/", keep=(listing_v2,))
    call(side, "listV2 prefix list/ delimiter /", s3.list_objects_v2, Bucket=b,
         Prefix="list/", Delimiter="/", keep=(listing_v2,))
    call(side, "listV2 delimiter / at root", s3.list_objects_v2, Bucket=b,
         Delimiter="/", keep=(listing_v2,))
    call(side, "listV2 prefix list/b", s3.list_objects_v2, Bucket=b,
         Prefix="list/b", keep=(listing_v2,))
    call(side, "listV2 prefix nothing", s3.list_objects_v2, Bucket=b,
         Prefix="nothing/", keep=(listing_v2,))
    call(side, "listV2 start-after list/c", s3.list_objects_v2, Bucket=b,
         Prefix="list/", StartAfter="list/c", keep=(listing_v2,))
    # paging with continuation tokens, with and without a delimiter
    for delim in ("", "/"):
        token, page = None, 0
        while page < 10:
            kw = {"Bucket": b, "Prefix": "list/", "MaxKeys": 2}
            if delim:
                kw["Delimiter"] = delim
            if token:
                kw["ContinuationToken"] = token
            r = call(side, f"listV2 max-keys 2 delimiter '{delim}' page {page}",
                     s3.list_objects_v2, keep=(listing_v2,), **kw)
            page += 1
            if not r or not r.get("IsTruncated"):
                break
            token = r.get("NextContinuationToken")
            if not token:
                break
    call(side, "listV2 max-keys 0", s3.list_objects_v2, Bucket=b, MaxKeys=0,
         keep=(listing_v2,))
    call(side, "listV1 all", s3.list_objects, Bucket=b, keep=(listing_v1,))
    call(side, "listV1 prefix list/ delimiter /", s3.list_objects, Bucket=b,
         Prefix="list/", Delimiter="/", keep=(listing_v1,))
    for delim in ("", "/"):
        marker, page = None, 0
        while page < 10:
            kw = {"Bucket": b, "Prefix": "list/", "MaxKeys": 3}
            if delim:
                kw["Delimiter"] = delim
            if marker:
                kw["Marker"] = marker
            r = call(side, f"listV1 max-keys 3 delimiter '{delim}' page {page}",
                     s3.list_objects, keep=(listing_v1,), **kw)
            page += 1
            if not r or not r.get("IsTruncated"):
                break
            # without a delimiter S3 gives no NextMarker: the last key is it
            marker = r.get("NextMarker") or (r.get("Contents") or [{}])[-1].get("Key")
            if not marker:
                break
    call(side, "listV1 marker list/c", s3.list_objects, Bucket=b,
         Prefix="list/", Marker="list/c", keep=(listing_v1,))

    # ---- multipart
    mpk = "mpu/big.bin"
    parts_data = [payload(PART, 1000 + i) for i in range(3)]
    r = call(side, "create_multipart_upload", s3.create_multipart_upload,
             Bucket=b, Key=mpk, ContentType="application/x-parity",
             Metadata={"origin": "multipart"},
             keep=("Key", "Bucket", present("UploadId")))
    uid = r["UploadId"] if r else "missing-upload-id"
    etags = []
    for i, data in enumerate(parts_data, 1):
        r = call(side, f"upload_part {i}", s3.upload_part, Bucket=b, Key=mpk,
                 UploadId=uid, PartNumber=i, Body=data)
        etags.append(r["ETag"] if r else '"missing"')
    call(side, "list_parts", s3.list_parts, Bucket=b, Key=mpk, UploadId=uid,
         keep=(lambda r: ("parts", [(p["PartNumber"], p["Size"], p["ETag"])
                                    for p in r.get("Parts", [])]),
               "IsTruncated", "Key"))
    call(side, "list_parts max-parts 2", s3.list_parts, Bucket=b, Key=mpk,
         UploadId=uid, MaxParts=2,
         keep=(lambda r: ("parts", [p["PartNumber"] for p in r.get("Parts", [])]),
               "IsTruncated", "NextPartNumberMarker"))
    parts = [{"PartNumber": i, "ETag": e} for i, e in enumerate(etags, 1)]
    whole = b"".join(parts_data)

    def complete_etag(r):
        # pacific bug (Ceph tracker #58879): <ETag></ETag>; HEAD is compared
        if not r.get("ETag"):
            side.notes.append("CompleteMultipartUpload answered an empty ETag "
                              "(Ceph pacific bug #58879); compared through HEAD")
        return ("etag", "not compared (see the HEAD after it)")
    call(side, "complete_multipart_upload", s3.complete_multipart_upload,
         Bucket=b, Key=mpk, UploadId=uid,
         MultipartUpload={"Parts": parts}, keep=("Key", "Bucket", complete_etag),
         drop_headers=("etag",))
    call(side, "head after complete", s3.head_object, Bucket=b, Key=mpk,
         keep=("Metadata", "ContentType"))
    call(side, "get multipart object", s3.get_object, Bucket=b, Key=mpk,
         expect=whole)
    for rng, what in ((f"bytes={PART - 100}-{PART + 99}", "across part boundary 1|2"),
                      (f"bytes={PART - 1}-{2 * PART}", "across both boundaries"),
                      (f"bytes={2 * PART}-", "the last part, open-ended"),
                      ("bytes=-10", "suffix of the last part")):
        call(side, f"range {what} {rng} of the multipart object",
             s3.get_object, Bucket=b, Key=mpk, Range=rng,
             expect=slice_for(whole, rng))
    call(side, "get PartNumber 2", s3.get_object, Bucket=b, Key=mpk,
         PartNumber=2)
    call(side, "complete the completed upload again",
         s3.complete_multipart_upload, Bucket=b, Key=mpk, UploadId=uid,
         MultipartUpload={"Parts": parts},
         keep=(lambda r: ("etag", "not compared"),), drop_headers=("etag",))

    # completions that must fail, on an upload of their own (5 MiB + 1 B):
    # the ones that should leave the upload open first, the order last
    ek = "mpu/errors"
    r = s3.create_multipart_upload(Bucket=b, Key=ek)
    uid_err = r["UploadId"]
    ee = [s3.upload_part(Bucket=b, Key=ek, UploadId=uid_err, PartNumber=i,
                         Body=d)["ETag"]
          for i, d in ((1, payload(PART, 3001)), (2, b"z"))]
    ep = [{"PartNumber": i, "ETag": e} for i, e in enumerate(ee, 1)]
    bad = '"0123456789abcdef0123456789abcdef"'
    call(side, "complete with a wrong part ETag (AWS: InvalidPart)",
         s3.complete_multipart_upload, Bucket=b, Key=ek, UploadId=uid_err,
         MultipartUpload={"Parts": [ep[0], {"PartNumber": 2, "ETag": bad}]},
         keep=(lambda r: ("etag", "not compared"),), drop_headers=("etag",))
    call(side, "complete with an unknown part number (AWS: InvalidPart)",
         s3.complete_multipart_upload, Bucket=b, Key=ek, UploadId=uid_err,
         MultipartUpload={"Parts": ep + [{"PartNumber": 7, "ETag": ee[0]}]},
         keep=(lambda r: ("etag", "not compared"),), drop_headers=("etag",))
    call(side, "complete with no parts (AWS: MalformedXML)",
         s3.complete_multipart_upload, Bucket=b, Key=ek, UploadId=uid_err,
         MultipartUpload={"Parts": []},
         keep=(lambda r: ("etag", "not compared"),), drop_headers=("etag",))
    call(side, "complete with parts out of order (AWS: InvalidPartOrder)",
         s3.complete_multipart_upload, Bucket=b, Key=ek, UploadId=uid_err,
         MultipartUpload={"Parts": [ep[1], ep[0]]},
         keep=(lambda r: ("etag", "not compared"),), drop_headers=("etag",))
    call(side, "get after the out-of-order complete", s3.get_object, Bucket=b,
         Key=ek, expect=payload(PART, 3001) + b"z")
    try:
        s3.abort_multipart_upload(Bucket=b, Key=ek, UploadId=uid_err)
    except ClientError:
        pass
    # a part smaller than 5 MiB that is not the last one
    r = s3.create_multipart_upload(Bucket=b, Key="mpu/small")
    uid_small = r["UploadId"]
    se = [s3.upload_part(Bucket=b, Key="mpu/small", UploadId=uid_small,
                         PartNumber=i, Body=payload(MiB, 2000 + i))["ETag"]
          for i in (1, 2)]
    call(side, "complete with a small part (AWS: EntityTooSmall)",
         s3.complete_multipart_upload, Bucket=b, Key="mpu/small",
         UploadId=uid_small,
         MultipartUpload={"Parts": [{"PartNumber": i, "ETag": e}
                                    for i, e in enumerate(se, 1)]})
    s3.abort_multipart_upload(Bucket=b, Key="mpu/small", UploadId=uid_small)
    # abort, and listing uploads in progress
    r = call(side, "create upload to abort", s3.create_multipart_upload,
             Bucket=b, Key="mpu/aborted", keep=("Key", present("UploadId")))
    uid_ab = r["UploadId"] if r else "missing-upload-id"
    call(side, "upload_part to abort", s3.upload_part, Bucket=b,
         Key="mpu/aborted", UploadId=uid_ab, PartNumber=1, Body=b"abc" * 1000)
    pend = []
    for k in ("mpu/pending-1", "mpu/pending-2", "other/pending"):
        r = s3.create_multipart_upload(Bucket=b, Key=k)
        pend.append((k, r["UploadId"]))

    def uploads(r):
        return ("uploads", sorted(u["Key"] for u in r.get("Uploads", [])))
    call(side, "list_multipart_uploads", s3.list_multipart_uploads, Bucket=b,
         keep=(uploads, "IsTruncated"))
    call(side, "list_multipart_uploads prefix mpu/p", s3.list_multipart_uploads,
         Bucket=b, Prefix="mpu/p", keep=(uploads, "IsTruncated"))
    call(side, "list_multipart_uploads delimiter /", s3.list_multipart_uploads,
         Bucket=b, Delimiter="/",
         keep=(uploads, lambda r: ("prefixes", [p["Prefix"] for p in r.get("CommonPrefixes", [])])))
    call(side, "abort_multipart_upload", s3.abort_multipart_upload, Bucket=b,
         Key="mpu/aborted", UploadId=uid_ab)
    call(side, "list_parts of aborted upload", s3.list_parts,
         Bucket=b, Key="mpu/aborted", UploadId=uid_ab)
    call(side, "upload_part to aborted (AWS: NoSuchUpload)", s3.upload_part,
         Bucket=b, Key="mpu/aborted", UploadId=uid_ab, PartNumber=2, Body=b"x")
    call(side, "head the aborted key", s3.head_object, Bucket=b,
         Key="mpu/aborted")
    for k, u in pend:
        s3.abort_multipart_upload(Bucket=b, Key=k, UploadId=u)
    call(side, "list_multipart_uploads after aborts", s3.list_multipart_uploads,
         Bucket=b, keep=(uploads, "IsTruncated"))

    # ---- copy_object
    def copy_result(r):
        c = r.get("CopyObjectResult", {})
        return ("copy", {"etag": c.get("ETag"),
                         "last_modified": "present" if c.get("LastModified") else "absent"})
    call(side, "copy (metadata COPY)", s3.copy_object, Bucket=b,
         Key="copy/same-meta", CopySource={"Bucket": b, "Key": mk},
         keep=(copy_result,))
    call(side, "head copy (COPY)", s3.head_object, Bucket=b,
         Key="copy/same-meta", keep=("Metadata", "ContentType"))
    call(side, "copy (metadata REPLACE)", s3.copy_object, Bucket=b,
         Key="copy/new-meta", CopySource={"Bucket": b, "Key": mk},
         MetadataDirective="REPLACE", Metadata={"fresh": "yes"},
         ContentType="text/x-replaced",
         keep=(copy_result,))
    call(side, "head copy (REPLACE)", s3.head_object, Bucket=b,
         Key="copy/new-meta", keep=("Metadata", "ContentType"))
    call(side, "copy 10 MiB to the second bucket", s3.copy_object, Bucket=b2,
         Key="copied-10MiB", CopySource={"Bucket": b, "Key": k10},
         keep=(copy_result,))
    call(side, "get the 10 MiB copy", s3.get_object, Bucket=b2,
         Key="copied-10MiB")
    call(side, "copy the multipart object", s3.copy_object, Bucket=b,
         Key="copy/of-mpu", CopySource={"Bucket": b, "Key": mpk},
         keep=(copy_result,))
    call(side, "head the copy of the multipart object", s3.head_object,
         Bucket=b, Key="copy/of-mpu", keep=("Metadata", "ContentType"))
    call(side, "copy from a missing key (AWS: NoSuchKey)", s3.copy_object, Bucket=b,
         Key="copy/none", CopySource={"Bucket": b, "Key": "no/such/key"})
    call(side, "copy from a missing bucket (AWS: NoSuchBucket)", s3.copy_object,
         Bucket=b, Key="copy/none", CopySource={"Bucket": gone, "Key": "x"})

    # ---- delete_objects
    def deleted(r):
        return ("result", {
            "deleted": sorted(d["Key"] for d in r.get("Deleted", [])),
            "errors": sorted((d["Key"], d.get("Code")) for d in r.get("Errors", [])),
        })
    call(side, "delete_objects", s3.delete_objects, Bucket=b,
         Delete={"Objects": [{"Key": "list/a.txt"}, {"Key": "list/b/1.txt"},
                             {"Key": "never/existed"}]},
         keep=(deleted,))
    call(side, "delete_objects quiet", s3.delete_objects, Bucket=b,
         Delete={"Objects": [{"Key": "list/b/2.txt"}, {"Key": "list/c/1.txt"}],
                 "Quiet": True},
         keep=(deleted,))
    call(side, "listV2 after delete_objects", s3.list_objects_v2, Bucket=b,
         Prefix="list/", keep=(listing_v2,))

    # ---- errors
    call(side, "get missing key (AWS: NoSuchKey)", s3.get_object, Bucket=b,
         Key="no/such/key")
    call(side, "head missing key (AWS: 404)", s3.head_object, Bucket=b,
         Key="no/such/key")
    call(side, "get from missing bucket (AWS: NoSuchBucket)", s3.get_object,
         Bucket=gone, Key="x")
    call(side, "put to missing bucket (AWS: NoSuchBucket)", s3.put_object,
         Bucket=gone, Key="x", Body=b"x")
    call(side, "listV2 missing bucket (AWS: NoSuchBucket)", s3.list_objects_v2,
         Bucket=gone)
    call(side, "delete missing key (AWS: 204)", s3.delete_object, Bucket=b,
         Key="no/such/key")
    call(side, "delete missing bucket (AWS: NoSuchBucket)", s3.delete_bucket,
         Bucket=gone)
    call(side, "delete non-empty bucket (AWS: BucketNotEmpty)", s3.delete_bucket,
         Bucket=b)
    call(side, "upload_part to unknown upload (AWS: NoSuchUpload)", s3.upload_part,
         Bucket=b, Key="x", UploadId="no-such-upload", PartNumber=1, Body=b"x")

    # ---- delete objects and buckets
    for size in (0, 1, MiB, 10 * MiB):
        call(side, f"delete {size}", s3.delete_object, Bucket=b,
             Key=objs[size][0])
        call(side, f"get deleted {size} (AWS: NoSuchKey)", s3.get_object, Bucket=b,
             Key=objs[size][0])
    empty_bucket(s3, b)
    empty_bucket(s3, b2)
    call(side, "delete_bucket main", s3.delete_bucket, Bucket=b)
    call(side, "delete_bucket second", s3.delete_bucket, Bucket=b2)
    call(side, "head deleted bucket (AWS: 404)", s3.head_bucket, Bucket=b)
    call(side, "list_buckets after delete", s3.list_buckets,
         keep=(lambda r: ("buckets", sorted(
             x["Name"] for x in r.get("Buckets", [])
             if x["Name"].startswith(side.prefix + "-"))),))


def with_headers(s3, method, headers):
    """s3.METHOD with headers added before signing (the Debian botocore
    does not model If-None-Match on PutObject, for one)."""
    op = s3.meta.method_to_api_mapping[method]
    fn = getattr(s3, method)

    def add(request, **_):
        for k, v in headers.items():
            request.headers[k] = v

    def wrapped(**kw):
        s3.meta.events.register("before-sign.s3.%s" % op, add)
        try:
            return fn(**kw)
        finally:
            s3.meta.events.unregister("before-sign.s3.%s" % op, add)
    wrapped.__name__ = method
    return wrapped


def features(side):
    """Conditional writes, tagging, object attributes, part numbers."""
    s3 = side.s3
    b = side.bucket("feat")
    call(side, "create_bucket feat", s3.create_bucket, Bucket=b)

    # ---- conditional writes
    inm = {"If-None-Match": "*"}
    r = call(side, "put If-None-Match: * (new key)",
             with_headers(s3, "put_object", inm), Bucket=b, Key="c",
             Body=b"first")
    etag = r["ETag"] if r else '"none"'
    call(side, "put If-None-Match: * again (AWS: 412)",
         with_headers(s3, "put_object", inm), Bucket=b, Key="c", Body=b"2")
    call(side, "get after the refused put", s3.get_object, Bucket=b, Key="c",
         expect=b"first")
    call(side, "put If-Match: another ETag (AWS: 412)",
         with_headers(s3, "put_object",
                      {"If-Match": '"0123456789abcdef0123456789abcdef"'}),
         Bucket=b, Key="c", Body=b"x")
    call(side, "put If-Match: its ETag",
         with_headers(s3, "put_object", {"If-Match": etag}), Bucket=b,
         Key="c", Body=b"second")
    call(side, "put If-Match: * on no object (AWS: 404 NoSuchKey)",
         with_headers(s3, "put_object", {"If-Match": "*"}), Bucket=b,
         Key="c-none", Body=b"x")
    uid = call(side, "create upload for a conditional complete",
               s3.create_multipart_upload, Bucket=b, Key="c",
               keep=(present("UploadId"),))
    uid = uid["UploadId"] if uid else "none"
    p = call(side, "upload part 1", s3.upload_part, Bucket=b, Key="c",
             UploadId=uid, PartNumber=1, Body=b"mp")
    parts = {"Parts": [{"ETag": p["ETag"] if p else '"x"', "PartNumber": 1}]}
    call(side, "complete If-None-Match: * over an object (AWS: 412)",
         with_headers(s3, "complete_multipart_upload", inm), Bucket=b,
         Key="c", UploadId=uid, MultipartUpload=parts,
         keep=(present("ETag"),))
    call(side, "abort the upload", s3.abort_multipart_upload, Bucket=b,
         Key="c", UploadId=uid)
    call(side, "delete If-Match: another ETag (AWS: 412)",
         with_headers(s3, "delete_object",
                      {"If-Match": '"0123456789abcdef0123456789abcdef"'}),
         Bucket=b, Key="c")
    call(side, "head after the conditional delete", s3.head_object,
         Bucket=b, Key="c")

    # ---- tagging
    tagset = lambda r: ("tags", r.get("TagSet"))
    call(side, "put tagged (x-amz-tagging)", s3.put_object, Bucket=b,
         Key="t", Body=b"tagged", Tagging="foo=bar&bar")
    call(side, "get_object_tagging", s3.get_object_tagging, Bucket=b,
         Key="t", keep=(tagset,))
    call(side, "head tagged (x-amz-tagging-count)", s3.head_object, Bucket=b,
         Key="t")
    call(side, "put_object_tagging", s3.put_object_tagging, Bucket=b,
         Key="t", Tagging={"TagSet": [{"Key": "b", "Value": "2"},
                                      {"Key": "a", "Value": "1 & <x>"}]})
    call(side, "get_object_tagging after put", s3.get_object_tagging,
         Bucket=b, Key="t", keep=(tagset,))
    call(side, "put_object_tagging 11 tags (AWS: InvalidTag)",
         s3.put_object_tagging, Bucket=b, Key="t", Tagging={"TagSet": [
             {"Key": "k%d" % i, "Value": ""} for i in range(11)]})
    call(side, "copy with the source's tags", s3.copy_object, Bucket=b,
         Key="t-copy", CopySource={"Bucket": b, "Key": "t"},
         keep=(present("CopyObjectResult"),))
    call(side, "get_object_tagging of the copy", s3.get_object_tagging,
         Bucket=b, Key="t-copy", keep=(tagset,))
    call(side, "copy with tagging directive REPLACE", s3.copy_object,
         Bucket=b, Key="t-copy", CopySource={"Bucket": b, "Key": "t"},
         TaggingDirective="REPLACE", Tagging="n=1",
         keep=(present("CopyObjectResult"),))
    call(side, "get_object_tagging after REPLACE", s3.get_object_tagging,
         Bucket=b, Key="t-copy", keep=(tagset,))
    call(side, "delete_object_tagging", s3.delete_object_tagging, Bucket=b,
         Key="t")
    call(side, "get_object_tagging after delete", s3.get_object_tagging,
         Bucket=b, Key="t", keep=(tagset,))
    call(side, "get_object_tagging of no object (AWS: NoSuchKey)",
         s3.get_object_tagging, Bucket=b, Key="t-none", keep=(tagset,))

    # ---- a multipart object: its parts by number, its attributes
    sizes = (PART, PART, 1000)
    data = [payload(n, 700 + i) for i, n in enumerate(sizes)]
    uid = call(side, "create upload mp", s3.create_multipart_upload,
               Bucket=b, Key="mp", keep=(present("UploadId"),))
    uid = uid["UploadId"] if uid else "none"
    parts = []
    for i, d in enumerate(data):
        r = call(side, f"upload mp part {i + 1}", s3.upload_part, Bucket=b,
                 Key="mp", UploadId=uid, PartNumber=i + 1, Body=d)
        parts.append({"ETag": r["ETag"] if r else '"x"', "PartNumber": i + 1})
    call(side, "complete mp", s3.complete_multipart_upload, Bucket=b,
         Key="mp", UploadId=uid, MultipartUpload={"Parts": parts},
         keep=(present("ETag"),), drop_headers=("etag",))
    for i, d in enumerate(data):
        call(side, f"get mp PartNumber={i + 1}", s3.get_object, Bucket=b,
             Key="mp", PartNumber=i + 1, expect=d)
        call(side, f"head mp PartNumber={i + 1}", s3.head_object, Bucket=b,
             Key="mp", PartNumber=i + 1)
    call(side, "get mp PartNumber=4 (AWS: InvalidPart)", s3.get_object,
         Bucket=b, Key="mp", PartNumber=4)
    call(side, "put one piece", s3.put_object, Bucket=b, Key="one",
         Body=b"one piece")
    call(side, "get one piece PartNumber=1", s3.get_object, Bucket=b,
         Key="one", PartNumber=1, expect=b"one piece")
    attrs = lambda r: ("attributes", {
        "etag": r.get("ETag"), "size": r.get("ObjectSize"),
        "class": r.get("StorageClass"),
        "parts": r.get("ObjectParts", {}).get("TotalPartsCount"),
        "sizes": [p.get("Size") for p in
                  r.get("ObjectParts", {}).get("Parts", [])]})
    for key in ("mp", "one"):
        call(side, f"get_object_attributes {key}", s3.get_object_attributes,
             Bucket=b, Key=key, ObjectAttributes=[
                 "ETag", "ObjectParts", "StorageClass", "ObjectSize"],
             keep=(attrs,), drop_headers=("last-modified",))


def empty_bucket(s3, bucket):
    """Delete everything (objects and uploads) in bucket; best effort."""
    try:
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            for o in page.get("Contents", []):
                s3.delete_object(Bucket=bucket, Key=o["Key"])
        r = s3.list_multipart_uploads(Bucket=bucket)
        for u in r.get("Uploads", []):
            s3.abort_multipart_upload(Bucket=bucket, Key=u["Key"],
                                      UploadId=u["UploadId"])
    except (ClientError, botocore.exceptions.BotoCoreError):
        pass


def cleanup(side):
    for logical in ("main", "second", "feat"):
        bucket = f"{side.prefix}-{logical}"
        empty_bucket(side.s3, bucket)
        try:
            side.s3.delete_bucket(Bucket=bucket)
        except (ClientError, botocore.exceptions.BotoCoreError):
            pass


def run(side):
    t0 = time.monotonic()
    try:
        scenario(side)
        features(side)
    except Exception as e:  # a broken step ends the run; the rest is missing
        side.record("scenario aborted", {"exception": f"{type(e).__name__}: {e}"})
    finally:
        cleanup(side)
    return time.monotonic() - t0


def short(v):
    s = json.dumps(v, sort_keys=True, default=str)
    return s if len(s) <= 300 else s[:297] + "..."


def compare(ta, tb):
    """Print every difference; return (steps, differing steps)."""
    diffs = 0
    n = max(len(ta), len(tb))
    for i in range(n):
        sa, ea = ta[i] if i < len(ta) else ("<missing>", None)
        sb, eb = tb[i] if i < len(tb) else ("<missing>", None)
        if sa != sb:
            diffs += 1
            print(f"DIFF #{i} steps differ: A ran '{sa}', B ran '{sb}'")
            continue
        if ea == eb:
            continue
        diffs += 1
        print(f"DIFF #{i} {sa}")
        for k in sorted(set(ea) | set(eb)):
            va, vb = ea.get(k, "<absent>"), eb.get(k, "<absent>")
            if va == vb:
                continue
            if isinstance(va, dict) and isinstance(vb, dict):
                for kk in sorted(set(va) | set(vb)):
                    if va.get(kk, "<absent>") != vb.get(kk, "<absent>"):
                        print(f"    {k}.{kk}: A={short(va.get(kk, '<absent>'))}"
                              f"  B={short(vb.get(kk, '<absent>'))}")
            else:
                print(f"    {k}: A={short(va)}  B={short(vb)}")
    return n, diffs


def reachable(side):
    try:
        side.s3.list_buckets()
        return None
    except ClientError:
        return None  # it answered; credentials are the scenario's business
    except (botocore.exceptions.BotoCoreError, OSError) as e:
        return f"{type(e).__name__}: {e}"


def main():
    ap = argparse.ArgumentParser(
        description="Compare boto3 behaviour against two S3 endpoints.")
    ap.add_argument("--a", required=True, help="reference endpoint URL")
    ap.add_argument("--b", required=True, help="endpoint under test URL")
    ap.add_argument("--access-key", default=os.environ.get("AWS_ACCESS_KEY_ID"))
    ap.add_argument("--secret-key", default=os.environ.get("AWS_SECRET_ACCESS_KEY"))
    ap.add_argument("--b-access-key", help="B's key (default: --access-key)")
    ap.add_argument("--b-secret-key", help="B's secret (default: --secret-key)")
    ap.add_argument("--region", default=os.environ.get("AWS_DEFAULT_REGION", "us-east-1"))
    ap.add_argument("--prefix", default=f"parity{os.getpid()}",
                    help="bucket-name stem; A uses STEM-a, B STEM-b")
    ap.add_argument("--transcript", help="write both transcripts (JSON) here")
    args = ap.parse_args()
    if not args.access_key or not args.secret_key:
        ap.error("--access-key and --secret-key (or AWS_ACCESS_KEY_ID and "
                 "AWS_SECRET_ACCESS_KEY) are required")
    a = Side("A", args.a, args.access_key, args.secret_key, args.region,
             args.prefix + "-a")
    b = Side("B", args.b, args.b_access_key or args.access_key,
             args.b_secret_key or args.secret_key, args.region,
             args.prefix + "-b")
    for side in (a, b):
        why = reachable(side)
        if why:
            print(f"parity: endpoint {side.label} ({side.url}) unreachable: {why}")
            return 2
    ta_s = run(a)
    tb_s = run(b)
    print(f"A {args.a}: {len(a.transcript)} steps in {ta_s:.1f} s; "
          f"B {args.b}: {len(b.transcript)} steps in {tb_s:.1f} s")
    for side in (a, b):
        for note in sorted(set(side.notes)):
            print(f"note: {side.label}: {note}")
    if args.transcript:
        with open(args.transcript, "w") as f:
            json.dump({"A": a.transcript, "B": b.transcript}, f, indent=1,
                      default=str)
    steps, diffs = compare(a.transcript, b.transcript)
    print(f"parity: {steps} steps, {diffs} differences")
    return 0 if diffs == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
