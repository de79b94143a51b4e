# SPDX-License-Identifier: MIT
"""hipobj-gateway in front of hipobj-test-server (as its S3 backend), driven
by boto3 and by hand-signed raw requests:
  - every S3 operation of test_boto3.py through the gateway behaves as it
    does against the server itself, and the SigV4 rejections hold;
  - the bytes really pass through: the backend's counters grow;
  - a forged body (deferred signature) and a body that does not match its
    declared SHA-256 are refused and leave nothing in the backend;
  - a forged request of any method (DELETE, GET, HEAD, a copy) with a body
    and a deferred signature never reaches the backend; a body on GET,
    HEAD or DELETE is refused;
  - aws-chunked bodies are decoded on the way: signed chunks and an
    unsigned body with a CRC32 trailer are stored as their payload; a chunk
    changed after signing or a wrong trailer leaves nothing;
  - malformed tokens get clear errors;
  - a backend that is down gives 503 ServiceUnavailable, and the gateway
    serves again once it is back (nothing restarted);
  - a backend killed in the middle of an upload leaves no object;
  - bodies stream: a 192 MiB object goes through a gateway whose memory
    stays far below its size.
Usage: test_gateway.py PATH-TO-hipobj-test-server PATH-TO-hipobj-gateway.
Exit 77 without boto3."""
import base64
import datetime
import hashlib
import hmac
import http.client
import os
import shutil
import signal
import sys
import tempfile
import time
import urllib.parse
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_harness import SKIP, Checks, Failure, Server  # noqa: E402

try:
    import test_boto3 as tb
    import test_s3_semantics as ts
except SystemExit:
    raise
MiB = 1024 * 1024
BK, BS = "BACKENDKEY", "backend/secret"  # the gateway's keys at the backend


def sign(method, url, path, ak, sk, headers, payload_hash, send_hash=True,
         keep=None):
    """A SigV4 Authorization header for a raw request; adds x-amz-date (and
    x-amz-content-sha256 unless send_hash is False) to headers. keep, a
    dict, gets what aws-chunked signing needs (key, seed, date, scope)."""
    now = datetime.datetime.utcnow()
    amz = now.strftime("%Y%m%dT%H%M%SZ")
    host = urllib.parse.urlparse(url).netloc
    headers["x-amz-date"] = amz
    if send_hash:
        headers["x-amz-content-sha256"] = payload_hash
    h = {k.lower(): v.strip() for k, v in headers.items()}
    h["host"] = host
    names = sorted(h)
    path, _, query = path.partition("?")
    q = sorted(urllib.parse.parse_qsl(query, keep_blank_values=True))
    cq = "&".join("%s=%s" % (urllib.parse.quote(k, safe="-_.~"),
                             urllib.parse.quote(v, safe="-_.~"))
                  for k, v in q)
    canon = "\n".join([
        method, urllib.parse.quote(path, safe="/~"), cq,
        "".join("%s:%s\n" % (n, h[n]) for n in names), ";".join(names),
        payload_hash])
    scope = "%s/us-east-1/s3/aws4_request" % amz[:8]
    sts = "\n".join(["AWS4-HMAC-SHA256", amz, scope,
                     hashlib.sha256(canon.encode()).hexdigest()])
    k = ("AWS4" + sk).encode()
    for part in (amz[:8], "us-east-1", "s3", "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    headers["Authorization"] = (
        "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s"
        % (ak, scope, ";".join(names), sig))
    if keep is not None:
        keep.update(key=k, seed=sig, date=amz, scope=scope)
    return headers


def aws_chunked(data, size, keep=None, trailer=None, tamper=None):
    """data in aws-chunked framing, size bytes a chunk: signed (keep from
    sign()) or unsigned with a trailer line; tamper=i flips a byte of chunk
    i after it is signed."""
    out, prev = [], keep["seed"] if keep else None
    empty = hashlib.sha256(b"").hexdigest()
    pieces = [data[i:i + size] for i in range(0, len(data), size)] + [b""]
    for i, p in enumerate(pieces):
        head = "%x" % len(p)
        if keep:
            sts = "\n".join(["AWS4-HMAC-SHA256-PAYLOAD", keep["date"],
                             keep["scope"], prev, empty,
                             hashlib.sha256(p).hexdigest()])
            prev = hmac.new(keep["key"], sts.encode(),
                            hashlib.sha256).hexdigest()
            head += ";chunk-signature=" + prev
        if tamper == i and p:
            p = bytes([p[0] ^ 1]) + p[1:]
        out.append(head.encode() + b"\r\n" + p + (b"\r\n" if p else b""))
    body = b"".join(out)
    if trailer:
        body += trailer.encode() + b"\r\n"
    return body + b"\r\n"


def raw(url, method, path, headers, body=b""):
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    conn.request(method, path, body=body, headers=headers)
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, dict(r.getheaders()), data


def absent(be_s3, bucket, key):
    try:
        be_s3.head_object(Bucket=bucket, Key=key)
        return False
    except tb.botocore.exceptions.ClientError as e:
        return e.response["ResponseMetadata"]["HTTPStatusCode"] == 404


def forged_bodies(gw, be_s3, c):
    be_s3.create_bucket(Bucket="guard")
    path = "/guard/forged"
    body, other = b"A" * 4096, b"B" * 4096
    # signed over body A without declaring its hash: the signature is
    # checked at the end, and body B never reaches the backend whole
    h = sign("PUT", gw.url, path, tb.AK, tb.SK, {},
             hashlib.sha256(body).hexdigest(), send_hash=False)
    st, _, data = raw(gw.url, "PUT", path, h, other)
    c.eq(st, 403, "forged body (deferred signature): 403")
    c.ok(b"SignatureDoesNotMatch" in data, "forged body: the S3 code")
    c.ok(absent(be_s3, "guard", "forged"), "forged body: nothing stored")
    # a declared SHA-256 the body does not match: the backend refuses it
    h = sign("PUT", gw.url, path, tb.AK, tb.SK, {},
             hashlib.sha256(body).hexdigest())
    st, _, data = raw(gw.url, "PUT", path, h, other)
    c.eq(st, 400, "SHA-256 mismatch: 400")
    c.ok(b"XAmzContentSHA256Mismatch" in data, "SHA-256 mismatch: the code")
    c.ok(absent(be_s3, "guard", "forged"), "SHA-256 mismatch: nothing stored")
    # the same request, honest, goes through
    h = sign("PUT", gw.url, path, tb.AK, tb.SK, {},
             hashlib.sha256(body).hexdigest(), send_hash=False)
    st, _, _ = raw(gw.url, "PUT", path, h, body)
    c.eq(st, 200, "honest deferred signature: 200")
    c.eq(be_s3.get_object(Bucket="guard", Key="forged")["Body"].read(), body,
         "honest body stored as sent")
    # aws-chunked bodies are decoded on the way, every chunk checked
    payload = os.urandom(200000)
    keep = {}
    h = sign("PUT", gw.url, "/guard/chunked", tb.AK, tb.SK,
             {"x-amz-decoded-content-length": str(len(payload)),
              "Content-Encoding": "aws-chunked"},
             "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", keep=keep)
    st, _, data = raw(gw.url, "PUT", "/guard/chunked", h,
                      aws_chunked(payload, 65536, keep))
    c.eq(st, 200, "aws-chunked (signed chunks): 200")
    g = be_s3.get_object(Bucket="guard", Key="chunked")
    c.eq(g["Body"].read(), payload, "aws-chunked: the store got the payload")
    c.ok("ContentEncoding" not in g, "aws-chunked: not in the stored "
         "Content-Encoding")
    keep = {}
    h = sign("PUT", gw.url, "/guard/chunked-bad", tb.AK, tb.SK,
             {"x-amz-decoded-content-length": str(len(payload))},
             "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", keep=keep)
    st, _, data = raw(gw.url, "PUT", "/guard/chunked-bad", h,
                      aws_chunked(payload, 65536, keep, tamper=1))
    c.eq(st, 403, "aws-chunked, a chunk changed after signing: 403")
    c.ok(absent(be_s3, "guard", "chunked-bad"),
         "aws-chunked, a chunk changed: nothing stored")
    crc = base64.b64encode(zlib.crc32(payload).to_bytes(4, "big")).decode()
    for value, status, what in ((crc, 200, "right"), ("AAAAAA==", 400,
                                                      "wrong")):
        h = sign("PUT", gw.url, "/guard/trailer-" + what, tb.AK, tb.SK,
                 {"x-amz-decoded-content-length": str(len(payload)),
                  "x-amz-trailer": "x-amz-checksum-crc32"},
                 "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
        st, _, data = raw(gw.url, "PUT", "/guard/trailer-" + what, h,
                          aws_chunked(payload, 65536,
                                      trailer="x-amz-checksum-crc32:" + value))
        c.eq(st, status, "unsigned aws-chunked, %s CRC32 trailer" % what)
    c.ok(not absent(be_s3, "guard", "trailer-right") and
         absent(be_s3, "guard", "trailer-wrong"),
         "unsigned aws-chunked: stored only with the right checksum")
    # malformed token: 400 without a reply header
    h = sign("GET", gw.url, path, tb.AK, tb.SK, {"x-amz-rdma-token": "zz"},
             hashlib.sha256(b"").hexdigest())
    st, hdrs, data = raw(gw.url, "GET", path, h)
    c.eq(st, 400, "malformed token: 400")
    c.ok(not any(k.lower() == "x-amz-rdma-reply" for k in hdrs),
         "malformed token: no reply header")
    # a well-formed token without an RDMA device: 501, reply 501
    h = sign("GET", gw.url, path, tb.AK, tb.SK, {"x-amz-rdma-token": tb.TOKEN},
             hashlib.sha256(b"").hexdigest())
    st, hdrs, _ = raw(gw.url, "GET", path, h)
    c.eq((st, {k.lower(): v for k, v in hdrs.items()}.get("x-amz-rdma-reply")),
         (501, "501"), "token without RDMA: 501 and reply 501")
    # a token names a payload: GetObject (by part number too), PutObject,
    # UploadPart. On another operation it is no RDMA request: forwarded as
    # HTTP, as the test server ignores it there.
    for query, status in (("?partNumber=1", 501), ("?attributes", 200),
                          ("?tagging", 200)):
        extra = {"x-amz-rdma-token": tb.TOKEN}
        if query == "?attributes":
            extra["x-amz-object-attributes"] = "ETag"
        h = sign("GET", gw.url, path + query, tb.AK, tb.SK, extra,
                 hashlib.sha256(b"").hexdigest())
        st, hdrs, _ = raw(gw.url, "GET", path + query, h)
        c.eq(st, status, "a token on GET %s" % query)
    # NVIDIA cuObject's descriptor, bare or with ":addr:size": 501 and reply
    # 501 as from the test server, so that its client falls back (the
    # library's hipObjServerParseToken declines it; it once was 400 here)
    cuobj = "00007f7c2a" + "0" * 40 + "2c9d8a7fe80" + "0" * 14 + "a1b2c3"
    for t in (cuobj, cuobj + ":00007f7c2a000000:0000000000001000"):
        for method in ("GET", "PUT"):
            h = sign(method, gw.url, path, tb.AK, tb.SK,
                     {"x-amz-rdma-token": t}, hashlib.sha256(b"").hexdigest())
            st, hdrs, _ = raw(gw.url, method, path, h)
            reply = {k.lower(): v for k, v in hdrs.items()}.get(
                "x-amz-rdma-reply")
            c.eq((st, reply), (501, "501"),
                 "%s cuObject descriptor (%d chars): 501, reply 501"
                 % (method, len(t)))
    # the admin resources answer as the test server's (front/admin.c)
    c.eq(raw(gw.url, "GET", "/_hipobj/health", {})[::2], (200, b"ok\n"),
         "health: ok")
    st, _, data = raw(gw.url, "GET", "/_hipobj/nothing", {})
    c.eq((st, b"<Code>NoSuchKey</Code>" in data), (404, True),
         "an unknown admin resource: 404 NoSuchKey")
    c.eq(raw(gw.url, "PUT", "/_hipobj/stats", {})[0], 405,
         "an admin resource for PUT: 405")


def backend_requests(be):
    return sum(v for k, v in be.stats()["requests"].items() if k != "total")


def forged_requests(gw, be, be_s3, c):
    """GW-1: a header-signed request with a body and no declared hash is
    checked only over its body; the backend must hear nothing of it before
    that check, whatever its method (libcurl sends no body with GET, HEAD or
    DELETE, so an early call would run complete at the store)."""
    be_s3.create_bucket(Bucket="victims")
    be_s3.put_object(Bucket="victims", Key="v", Body=b"keep me")
    up = be_s3.create_multipart_upload(Bucket="victims", Key="m")["UploadId"]
    body = os.urandom(1 << 20)  # arrives in many pieces
    cases = (("DELETE", "/victims/v", {}), ("DELETE", "/victims", {}),
             ("DELETE", "/victims/m?uploadId=" + up, {}),
             ("GET", "/victims/v", {}), ("HEAD", "/victims/v", {}),
             ("PUT", "/victims/copy", {"x-amz-copy-source": "/victims/v"}))
    base = backend_requests(be)
    calib = backend_requests(be) - base  # the stats request itself
    for method, target, extra in cases:
        path = target.split("?")[0]
        h = sign(method, gw.url, path, tb.AK, "not-the-secret", dict(extra),
                 hashlib.sha256(body).hexdigest(), send_hash=False)
        auth = h["Authorization"]
        h["Authorization"] = auth[:auth.rindex("=") + 1] + "0" * 64
        before = backend_requests(be)
        st, _, _ = raw(gw.url, method, target, h, body)
        seen = backend_requests(be) - before - calib
        c.eq((st, seen), (403, 0), "forged %s %s with a 1 MiB body: 403, "
             "the store heard nothing" % (method, target))
    c.eq(be_s3.get_object(Bucket="victims", Key="v")["Body"].read(),
         b"keep me", "forged requests: the object is still there")
    parts = be_s3.list_parts(Bucket="victims", Key="m", UploadId=up)
    c.eq(parts["UploadId"], up, "forged abort: the upload is still there")
    c.ok(absent(be_s3, "victims", "copy"), "forged copy: nothing copied")
    # honest GET and DELETE with a body: refused, with or without a hash
    for send_hash in (False, True):
        for method in ("GET", "DELETE"):
            h = sign(method, gw.url, "/victims/v", tb.AK, tb.SK, {},
                     hashlib.sha256(body).hexdigest(), send_hash=send_hash)
            before = backend_requests(be)
            st, _, data = raw(gw.url, method, "/victims/v", h, body)
            seen = backend_requests(be) - before - calib
            c.eq((st, seen), (400, 0), "%s with a body (hash %s): 400, "
                 "nothing forwarded" % (method, "declared" if send_hash
                                        else "deferred"))
    # a deferred signature over more than the gateway reads whole: refused
    big = b"x" * (8 * MiB + 1)
    h = sign("PUT", gw.url, "/victims/big", tb.AK, tb.SK, {},
             hashlib.sha256(big).hexdigest(), send_hash=False)
    st, _, data = raw(gw.url, "PUT", "/victims/big", h, big)
    c.ok(st == 400 and b"x-amz-content-sha256" in data,
         "deferred signature over 8 MiB: 400, asks for the hash")
    c.ok(absent(be_s3, "victims", "big"), "deferred over 8 MiB: not stored")
    be_s3.abort_multipart_upload(Bucket="victims", Key="m", UploadId=up)


def vm_kib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def reset_peak(pid):
    """Resets VmHWM to the current RSS (Linux: clear_refs 5)."""
    with open("/proc/%d/clear_refs" % pid, "w") as f:
        f.write("5")


def streaming(gw, s3, c):
    size = 192 * MiB
    s3.create_bucket(Bucket="stream")
    block = os.urandom(MiB)
    want = hashlib.sha256()
    path = "/stream/big"
    rss0 = vm_kib(gw.proc.pid, "VmRSS")
    reset_peak(gw.proc.pid)
    h = sign("PUT", gw.url, path, tb.AK, tb.SK,
             {"Content-Length": str(size)}, "UNSIGNED-PAYLOAD")
    u = urllib.parse.urlparse(gw.url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    conn.putrequest("PUT", path)
    for k, v in h.items():
        conn.putheader(k, v)
    conn.endheaders()
    for _ in range(size // MiB):
        conn.send(block)
        want.update(block)
    r = conn.getresponse()
    r.read()
    conn.close()
    c.eq(r.status, 200, "192 MiB streamed up through the gateway")
    r = s3.get_object(Bucket="stream", Key="big")
    got, hh = 0, hashlib.sha256()
    for chunk in r["Body"].iter_chunks(4 * MiB):
        got += len(chunk)
        hh.update(chunk)
    c.eq(got, size, "192 MiB back through the gateway")
    c.eq(hh.hexdigest(), want.hexdigest(), "192 MiB: the same bytes")
    grew = vm_kib(gw.proc.pid, "VmHWM") - rss0
    c.ok(grew < 64 * 1024,
         "the gateway streams: its memory grew by at most %d KiB for a "
         "192 MiB object up and down" % grew)
    s3.delete_object(Bucket="stream", Key="big")


def several_users(gateway_bin, be, c):
    """--credentials: each user of the file signs with its own secret."""
    fd, path = tempfile.mkstemp(prefix="hipobj-gw-users-")
    os.write(fd, b"# users\nALICE alice/secret\nBOB bob+secret\n")
    os.close(fd)
    os.chmod(path, 0o600)
    try:
        with Server(gateway_bin, "--backend", be.url, "--backend-access-key",
                    BK, "--backend-secret-key", BS, "--credentials", path,
                    "--shared-store-identity", "--no-rdma") as gw2:
            for ak, sk in (("ALICE", "alice/secret"), ("BOB", "bob+secret")):
                names = [b["Name"] for b in
                         tb.client(gw2.url, ak, sk).list_buckets()["Buckets"]]
                c.ok("guard" in names, "user %s through --credentials" % ak)
            code, status, _ = tb.error_of(
                tb.client(gw2.url, "ALICE", "bob+secret").list_buckets)
            c.eq((code, status), ("SignatureDoesNotMatch", 403),
                 "one user's secret does not sign for another")
            code, status, _ = tb.error_of(
                tb.client(gw2.url, "CAROL", "x").list_buckets)
            c.eq((code, status), ("InvalidAccessKeyId", 403), "unknown user")
        os.chmod(path, 0o644)
        gw3 = Server(gateway_bin, "--backend", be.url, "--credentials", path)
        try:
            gw3.start(timeout=10)
            c.ok(False, "a credentials file others can read is refused")
        except Failure as e:
            c.ok("chmod 600" in str(e), "readable credentials file: %s" % e)
    finally:
        os.unlink(path)


def backend_down(binary, d, be, gw, s3, c):
    port = be.port
    rc = be.stop()
    c.eq(rc, 0, "backend stopped")
    code, status, _ = tb.error_of(s3.get_object, Bucket="guard", Key="forged")
    c.eq((code, status), ("ServiceUnavailable", 503), "backend down: 503")
    st = gw.stats()
    c.ok(st["gateway"]["backend_failures"] >= 1, "stats: backend failures")
    be2 = Server(binary, "--listen", "127.0.0.1:%d" % port, "--data-dir", d,
                 "--access-key", BK, "--secret-key", BS, "--no-rdma")
    be2.start()
    c.eq(s3.get_object(Bucket="guard", Key="forged")["Body"].read(),
         b"A" * 4096, "backend back: served again, nothing restarted")
    return be2


def killed_mid_upload(binary, d, be, gw, c):
    """The backend dies with 8 of 32 MiB received: no object, ever."""
    port = be.port
    path = "/guard/halfway"
    size = 32 * MiB
    h = sign("PUT", gw.url, path, tb.AK, tb.SK,
             {"Content-Length": str(size)}, "UNSIGNED-PAYLOAD")
    u = urllib.parse.urlparse(gw.url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    conn.putrequest("PUT", path)
    for k, v in h.items():
        conn.putheader(k, v)
    conn.endheaders()
    conn.send(b"x" * (8 * MiB))
    time.sleep(0.5)
    be.proc.send_signal(signal.SIGKILL)
    be.proc.wait()
    be.proc.stdout.close()
    be.proc = None
    failed = False
    try:
        conn.send(b"x" * (24 * MiB))
        r = conn.getresponse()
        r.read()
        failed = r.status >= 500
    except (OSError, http.client.HTTPException):
        failed = True
    conn.close()
    c.ok(failed, "upload cut by the backend's death: the client sees it")
    be2 = Server(binary, "--listen", "127.0.0.1:%d" % port, "--data-dir", d,
                 "--access-key", BK, "--secret-key", BS, "--no-rdma")
    be2.start()
    be_s3 = tb.client(be2.url, BK, BS)
    c.ok(absent(be_s3, "guard", "halfway"),
         "backend restarted: no half-written object")
    return be2


def run(server_bin, gateway_bin, c):
    d = tempfile.mkdtemp(prefix="hipobj-gw-")
    be = gw = None
    try:
        be = Server(server_bin, "--data-dir", d, "--access-key", BK,
                    "--secret-key", BS, "--no-rdma").start()
        gw = Server(gateway_bin, "--backend", be.url, "--backend-access-key",
                    BK, "--backend-secret-key", BS, "--access-key", tb.AK,
                    "--secret-key", tb.SK, "--no-rdma",
                    "--log-requests").start()
        s3 = tb.client(gw.url)
        be_s3 = tb.client(be.url, BK, BS)
        tb.all_operations(s3, c)
        st = be.stats()
        c.ok(st["http"]["bytes_in"] > 15 * MiB and
             st["http"]["bytes_out"] > 15 * MiB,
             "the backend moved the bytes (in %d, out %d)" %
             (st["http"]["bytes_in"], st["http"]["bytes_out"]))
        tb.sigv4_rejections(gw.url, c)
        # conditional writes, tagging, attributes, part numbers, the claimed
        # fixes: through the gateway as against the server
        for name, fn in (("gwcond", ts.conditional_writes),
                         ("gwfixes", ts.claimed_fixes),
                         ("gwtags", ts.tagging),
                         ("gwattrs", ts.attributes_and_parts)):
            s3.create_bucket(Bucket=name)
            fn(s3, c, name)
        gst = gw.stats()
        c.ok(gst["auth_failures"] >= 6, "gateway stats: auth failures")
        c.ok(gst["requests"]["GET"] > 10 and gst["requests"]["PUT"] > 10 and
             gst["requests"]["total"] >= sum(gst["status"].values()) - 1,
             "gateway stats: requests by method (%r)" % gst["requests"])
        forged_bodies(gw, be_s3, c)
        forged_requests(gw, be, be_s3, c)
        streaming(gw, s3, c)
        several_users(gateway_bin, be, c)
        be = backend_down(server_bin, d, be, gw, s3, c)
        be = killed_mid_upload(server_bin, d, be, gw, c)
        log = gw.stderr()
        c.ok("X-Amz-Signature" not in log and "Credential" not in log,
             "no signature in the gateway's log")
        c.eq(gw.stop(), 0, "gateway: clean exit on SIGTERM")
    finally:
        for s in (gw, be):
            if s and s.proc:
                s.kill()
        shutil.rmtree(d)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.stderr.write("usage: %s SERVER GATEWAY\n" % sys.argv[0])
        sys.exit(2)
    name = "gateway interop (boto3 %s)" % tb.boto3.__version__
    checks = Checks(name)
    try:
        run(sys.argv[1], sys.argv[2], checks)
    except Failure as e:
        print("FAIL %s after %d checks: %s" % (name, checks.passed, e))
        sys.exit(1)
    print("%s: %d checks passed" % (name, checks.passed))
    sys.exit(0)
