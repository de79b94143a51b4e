# SPDX-License-Identifier: MIT
"""The security findings of issue #20 against hipobj-gateway and
hipobj-test-server, each a case that failed before its fix:
  - GW-3: a header field name that is not an RFC 9110 token ("Host : x",
    an obs-fold, a control byte) gets 400 from both servers' front, and the
    connection is closed (its framing cannot be trusted);
  - GW-3: the gateway forwards only an allow-list of request headers and
    signs every one it forwards (a recording store shows what arrived);
  - GW-4: more headers than the gateway forwards is 431, never a silent
    drop; a long x-amz-meta-* name is forwarded and signed;
  - the store's own x-amz-rdma-* response headers never reach the client;
  - GW-5: /_hipobj/stats is for the gateway's own host unless
    --public-stats (from another address: 403); health is for anyone;
  - GW-6: the per-address connection limit defaults to an eighth of the
    total (two addresses cannot take every connection); a request head
    that trickles in is cut at --header-timeout, in both servers;
  - GW-2: users apart: a credentials line maps a client key pair to a
    store identity, and each user's requests reach the store signed as
    its own (a store that checks them accepts them); a file in which
    users would share one store identity is refused unless
    --shared-store-identity; hipobj-test-server refuses several users
    without --shared-buckets;
  - S-1: a token header on a route without a payload (DeleteObjects) does
    not settle a deferred signature over the empty body: the unsigned body
    is refused (403) and nothing is deleted.
The store behind the gateway is a small recording S3 stand-in here (every
request answered 200), so what the gateway sent is visible byte for byte.
Usage: test_gateway_security.py PATH-TO-hipobj-test-server
       PATH-TO-hipobj-gateway.  Exit 77 without boto3."""
import base64
import hashlib
import http.server
import os
import socket
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_harness import Checks, Failure, Server  # noqa: E402

import test_boto3 as tb  # noqa: E402  (exits 77 without boto3)
from test_gateway import sign  # noqa: E402

BK, BS = "BACKENDKEY", "backend/secret"


class Store:
    """A recording S3 stand-in: every request gets 200 and an empty body;
    extra response headers come from `answer_headers`."""

    def __init__(self):
        self.seen = []
        self.answer_headers = {}
        store = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def handle_one(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                store.seen.append((self.command, self.path,
                                   list(self.headers.items()), body))
                self.send_response(200)
                for k, v in store.answer_headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_one

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.t = threading.Thread(target=self.httpd.serve_forever,
                                  daemon=True)
        self.t.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def last_headers(self):
        return {k.lower(): v for k, v in self.seen[-1][2]}


def raw_exchange(srv, data, timeout=10):
    """Sends data on a fresh connection; returns (status, everything read
    until the server closed or went quiet, closed?)."""
    s = socket.create_connection((srv.host, srv.port), timeout)
    buf, closed = b"", False
    try:
        s.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        s.close()
        return 0, b"", True
    s.settimeout(3)
    try:
        while True:
            d = s.recv(65536)
            if not d:
                closed = True
                break
            buf += d
    except socket.timeout:
        pass
    except ConnectionResetError:
        closed = True
    s.close()
    status = int(buf.split(b" ", 2)[1]) if buf.startswith(b"HTTP/") else 0
    return status, buf, closed


def not_tokens(srv, who, c):
    """GW-3: names with a blank, a tab, an obs-fold or a control byte."""
    bad = [b"Host : x\r\n", b"Content-Length : 0\r\n",
           b"Transfer-Encoding : chunked\r\n", b"X-A\tB: 1\r\n",
           b"X-Amz-Meta-A\r\n : folded\r\n", b"X(y): 1\r\n",
           b"X-\x01: 1\r\n"]
    for line in bad:
        req = (b"GET /guard/k HTTP/1.1\r\nHost: h\r\n" + line +
               b"X-After: 1\r\n\r\n" + b"GET /guard/k HTTP/1.1\r\n"
               b"Host: h\r\n\r\n")
        status, buf, closed = raw_exchange(srv, req)
        c.eq(status, 400, "%s: field %r" % (who, line))
        c.ok(buf.count(b"HTTP/1.1 ") == 1 and closed,
             "%s: connection closed after %r (nothing pipelined behind "
             "it is read)" % (who, line))
    # a well-formed name with every tchar passes the front
    req = (b"GET /_hipobj/health HTTP/1.1\r\nHost: h\r\n"
           b"X-!#$%&'*+-.^_`|~09az: 1\r\nConnection: close\r\n\r\n")
    status, _, _ = raw_exchange(srv, req)
    c.eq(status, 200, "%s: every tchar is a name" % who)


def raw_request(gw, method, path, headers, body=b""):
    import http.client
    conn = http.client.HTTPConnection(gw.host, gw.port, timeout=30)
    conn.putrequest(method, path, skip_accept_encoding=True)
    for k, v in headers.items():
        conn.putheader(k, v)
    if body:
        conn.putheader("Content-Length", str(len(body)))
    conn.endheaders(body)
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, data


EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def allow_list(gw, store, c):
    """GW-3: the forwarded headers are the allow-list, each one signed."""
    h = {"X-Amz-Meta-Colour": "blue", "Range": "bytes=0-3",
         "If-None-Match": '"x"', "Cache-Control": "no-cache",
         "X-Evil": "1", "Cookie": "a=b", "Forwarded": "for=1.2.3.4",
         "Via": "1.1 x", "Origin": "http://o", "Authorization-Extra": "z"}
    sign("GET", gw.url, "/guard/k", tb.AK, tb.SK, h, EMPTY)
    status, _, _ = raw_request(gw, "GET", "/guard/k", h)
    c.eq(status, 200, "a signed GET with assorted headers")
    got = store.last_headers()
    for name in ("x-evil", "cookie", "forwarded", "via", "origin",
                 "authorization-extra"):
        c.ok(name not in got, "%s is not forwarded to the store" % name)
    for name in ("x-amz-meta-colour", "range", "if-none-match",
                 "cache-control"):
        c.ok(name in got, "%s is forwarded" % name)
    auth = got.get("authorization", "")
    signed = auth.split("SignedHeaders=")[1].split(",")[0].split(";")
    fwd = sorted(k for k in got if k not in ("authorization",
                                             "accept-encoding", "user-agent",
                                             "content-length", "accept",
                                             "expect"))
    for name in fwd:
        c.ok(name in signed, "forwarded %s is signed (%s)" % (name, signed))


def too_many(gw, store, c):
    """GW-4: more headers than it forwards is 431; a long name is signed."""
    long_name = "x-amz-meta-" + "n" * 70
    h = {long_name: "v"}
    sign("GET", gw.url, "/guard/k", tb.AK, tb.SK, h, EMPTY)
    status, _, _ = raw_request(gw, "GET", "/guard/k", h)
    c.eq(status, 200, "a 81-character name")
    got = store.last_headers()
    auth = got.get("authorization", "")
    c.ok(long_name in got and long_name in auth,
         "a 81-character name is forwarded and signed")
    n = len(store.seen)
    # If-* need no signature from the client, so many fit its header
    h = {"If-H%03d" % i: "v" for i in range(120)}
    sign("GET", gw.url, "/guard/k", tb.AK, tb.SK, h, EMPTY)
    status, _, body = raw_request(gw, "GET", "/guard/k", h)
    c.eq(status, 431, "120 headers to forward: 431 (%r)" % body[:200])
    c.eq(len(store.seen), n, "nothing reached the store")


def rdma_response_headers(gw, store, c):
    """The store's own x-amz-rdma-* answer headers are not passed on."""
    store.answer_headers = {"x-amz-rdma-reply": "forged",
                            "X-Amz-Rdma-Status": "ok",
                            "x-amz-meta-kept": "1"}
    try:
        h = {}
        sign("GET", gw.url, "/guard/k", tb.AK, tb.SK, h, EMPTY)
        status, got, _ = raw_request(gw, "GET", "/guard/k", h)
        c.eq(status, 200, "GET through the gateway")
        c.ok("x-amz-meta-kept" in got, "the store's other headers pass")
        c.ok(not any(k.startswith("x-amz-rdma-") for k in got),
             "no x-amz-rdma-* header from the store (%r)" % sorted(got))
    finally:
        store.answer_headers = {}


def sign_q(url, method, path, query, ak, sk, headers, payload_hash,
           send_hash=True):
    """SigV4 with a query string: test_gateway.sign() with it in the path."""
    return sign(method, url, path + "?" + query, ak, sk, headers,
                payload_hash, send_hash=send_hash)


def token_on_delete_objects(be, c):
    """S-1: DeleteObjects signed over the empty payload (no declared hash:
    deferred), with an x-amz-rdma-token header and an unsigned body."""
    s3 = tb.client(be.url, BK, BS)
    s3.create_bucket(Bucket="sone")
    s3.put_object(Bucket="sone", Key="victim", Body=b"x")
    body = (b'<Delete><Object><Key>victim</Key></Object></Delete>')
    md5 = base64.b64encode(hashlib.md5(body).digest()).decode()
    h = {"x-amz-rdma-token": "00", "Content-MD5": md5}
    sign_q(be.url, "POST", "/sone", "delete=", BK, BS, h, EMPTY,
           send_hash=False)
    status, _, data = raw_request(be, "POST", "/sone?delete", h, body)
    c.eq(status, 403, "an unsigned DeleteObjects body under a token header "
         "(%r)" % data[:200])
    c.eq(s3.get_object(Bucket="sone", Key="victim")["Body"].read(), b"x",
         "the object is still there")


def token_get_declared_hash(gw, c):
    """A token GET declares the SHA-256 of a body it does not have: 400 as
    from hipobj-test-server, before anything else (RDMA or not)."""
    h = {"x-amz-rdma-token": "00"}
    sign("GET", gw.url, "/guard/k", tb.AK, tb.SK, h,
         hashlib.sha256(b"x").hexdigest())
    status, _, data = raw_request(gw, "GET", "/guard/k", h)
    c.eq(status, 400, "a token GET with a declared non-empty SHA-256 "
         "(%r)" % data[:160])
    c.ok(b"XAmzContentSHA256Mismatch" in data, "its code")


def local_address():
    """A non-loopback address of this host, or None."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("192.0.2.1", 9))  # no packet is sent
        a = s.getsockname()[0]
        return None if a.startswith("127.") else a
    except OSError:
        return None
    finally:
        s.close()


def get_from(url_host, port, path, source=None):
    import http.client
    conn = http.client.HTTPConnection(url_host, port, timeout=10,
                                      source_address=(source, 0)
                                      if source else None)
    conn.request("GET", path)
    r = conn.getresponse()
    r.read()
    conn.close()
    return r.status


def stats_for_whom(gateway_bin, store, c):
    """GW-5: /_hipobj/stats only from the gateway's own host."""
    addr = local_address()
    for public in (False, True):
        extra = ["--public-stats"] if public else []
        with Server(gateway_bin, "--backend", store.url, "--access-key",
                    tb.AK, "--secret-key", tb.SK, "--no-rdma", "--listen",
                    "0.0.0.0:0", *extra) as g:
            c.eq(get_from("127.0.0.1", g.port, "/_hipobj/stats"), 200,
                 "stats from loopback")
            if addr is None:
                print("note: no non-loopback address on this host: the "
                      "stats refusal from another address is untested")
                continue
            c.eq(get_from(addr, g.port, "/_hipobj/stats", addr),
                 200 if public else 403,
                 "stats from %s (--public-stats %s)" % (addr, public))
            c.eq(get_from(addr, g.port, "/_hipobj/health", addr), 200,
                 "health from anywhere")


def per_address_default(gateway_bin, store, c):
    """GW-6: --max-connections 16 leaves two per address by default."""
    with Server(gateway_bin, "--backend", store.url, "--access-key", tb.AK,
                "--secret-key", tb.SK, "--no-rdma", "--max-connections",
                "16") as g:
        held = [socket.create_connection((g.host, g.port), 5)
                for _ in range(2)]
        for s in held:
            s.sendall(b"GET /_hipobj/health HTTP/1.1\r\nHost: h\r\n\r\n")
            c.ok(s.recv(4096).startswith(b"HTTP/1.1 200"), "one of two")
        status, buf, closed = raw_exchange(
            g, b"GET /_hipobj/health HTTP/1.1\r\nHost: h\r\n\r\n")
        c.ok(status == 0 and closed,
             "a third connection from one address is refused (%r)" % buf)
        for s in held:
            s.close()


def head_deadline(binary, args, who, c):
    """GW-6: a head that trickles in (a header line every 0.4 s, never
    idle) is cut at --header-timeout 2."""
    import time
    with Server(binary, *args, "--header-timeout", "2",
                "--idle-timeout", "60") as srv:
        s = socket.create_connection((srv.host, srv.port), 10)
        s.sendall(b"GET /_hipobj/health HTTP/1.1\r\nHost: h\r\n")
        t0 = time.time()
        cut = False
        try:
            for i in range(25):
                s.sendall(b"X-Slow-%d: 1\r\n" % i)
                time.sleep(0.4)
        except OSError:
            cut = True
        took = time.time() - t0
        s.close()
        c.ok(cut and took < 6, "%s: a trickled head cut after %.1f s" %
             (who, took))
        c.eq(get_from(srv.host, srv.port, "/_hipobj/health"), 200,
             "%s: still serves" % who)


def creds_file(text):
    fd, path = tempfile.mkstemp(prefix="hipobj-gw-sec-")
    os.write(fd, text.encode())
    os.close(fd)
    os.chmod(path, 0o600)
    return path


def refused(binary, args, what, c):
    s = Server(binary, *args)
    try:
        s.start(timeout=10)
        s.stop()
        c.ok(False, "%s: refused" % what)
    except Failure as e:
        c.ok(what in str(e), "refused: %s" % e)


def users_apart(server_bin, gateway_bin, store, c):
    """GW-2: each user its own store identity."""
    both = creds_file("ALICE alice-secret SA sa-secret\n"
                      "BOB bob-secret SB sb-secret\n")
    shared = creds_file("ALICE alice-secret\nBOB bob-secret\n")
    store_users = creds_file("SA sa-secret\nSB sb-secret\n")
    try:
        refused(gateway_bin, ["--backend", store.url, "--backend-access-key",
                              BK, "--backend-secret-key", BS,
                              "--credentials", shared, "--no-rdma"],
                "--shared-store-identity", c)
        with Server(gateway_bin, "--backend", store.url,
                    "--backend-access-key", BK, "--backend-secret-key", BS,
                    "--credentials", shared, "--shared-store-identity",
                    "--no-rdma"):
            c.ok(True, "sharing said explicitly: accepted")
        # which identity the store sees
        with Server(gateway_bin, "--backend", store.url, "--credentials",
                    both, "--no-rdma") as g:
            for ak, sk, want in (("ALICE", "alice-secret", "SA"),
                                 ("BOB", "bob-secret", "SB")):
                h = {}
                sign("GET", g.url, "/guard/k", ak, sk, h, EMPTY)
                status, _, _ = raw_request(g, "GET", "/guard/k", h)
                c.eq(status, 200, "%s through the gateway" % ak)
                auth = store.last_headers().get("authorization", "")
                c.ok("Credential=%s/" % want in auth,
                     "%s reaches the store as %s (%s)" % (ak, want,
                                                         auth[:60]))
        # a store that checks the signatures: each user's own secret signs
        refused(server_bin, ["--credentials", store_users, "--no-rdma"],
                "--shared-buckets", c)
        bad = creds_file("SA sa-secret SX sx\n")
        try:
            refused(server_bin, ["--credentials", bad, "--no-rdma"],
                    "hipobj-gateway", c)
        finally:
            os.unlink(bad)
        with Server(server_bin, "--credentials", store_users,
                    "--shared-buckets", "--no-rdma") as be, \
                Server(gateway_bin, "--backend", be.url, "--credentials",
                       both, "--no-rdma") as g:
            tb.client(be.url, "SA", "sa-secret").create_bucket(Bucket="apart")
            for ak, sk in (("ALICE", "alice-secret"), ("BOB", "bob-secret")):
                s3 = tb.client(g.url, ak, sk)
                s3.put_object(Bucket="apart", Key=ak, Body=ak.encode())
                c.eq(s3.get_object(Bucket="apart", Key=ak)["Body"].read(),
                     ak.encode(), "%s: stored and read back through a "
                     "store that checks its identity's signature" % ak)
            code, status, _ = tb.error_of(
                tb.client(g.url, "ALICE", "bob-secret").list_buckets)
            c.eq(status, 403, "one user's secret does not sign for another")
    finally:
        for p in (both, shared, store_users):
            os.unlink(p)


def run(server_bin, gateway_bin, c):
    store = Store()
    be = gw = None
    try:
        be = Server(server_bin, "--access-key", BK, "--secret-key", BS,
                    "--no-rdma").start()
        not_tokens(be, "hipobj-test-server", c)
        token_on_delete_objects(be, c)
        gw = Server(gateway_bin, "--backend", store.url,
                    "--backend-access-key", BK, "--backend-secret-key", BS,
                    "--access-key", tb.AK, "--secret-key", tb.SK,
                    "--no-rdma").start()
        not_tokens(gw, "hipobj-gateway", c)
        allow_list(gw, store, c)
        too_many(gw, store, c)
        rdma_response_headers(gw, store, c)
        token_get_declared_hash(gw, c)
        stats_for_whom(gateway_bin, store, c)
        users_apart(server_bin, gateway_bin, store, c)
        per_address_default(gateway_bin, store, c)
        head_deadline(server_bin, ["--no-rdma"], "hipobj-test-server", c)
        head_deadline(gateway_bin, ["--backend", store.url, "--access-key",
                                    tb.AK, "--secret-key", tb.SK,
                                    "--no-rdma"], "hipobj-gateway", c)
        c.eq(gw.stop(), 0, "gateway: clean exit")
        c.eq(be.stop(), 0, "server: clean exit")
    finally:
        for s in (gw, be):
            if s and s.proc:
                s.kill()
        store.stop()


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.stderr.write("usage: %s SERVER GATEWAY\n" % sys.argv[0])
        sys.exit(2)
    name = "gateway security"
    checks = Checks(name)
    try:
        run(sys.argv[1], sys.argv[2], checks)
    except Failure as e:
        print("FAIL %s after %d checks: %s" % (name, checks.passed, e))
        sys.exit(1)
    print("%s: %d checks passed" % (name, checks.passed))
    sys.exit(0)
