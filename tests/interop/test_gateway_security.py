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
  - the store's own x-amz-rdma-* response headers never reach the client.
The store behind the gateway is a small recording S3 stand-in here (every
request answered 200), so what the gateway sent is visible byte for byte.
Usage: test_gateway_security.py PATH-TO-hipobj-test-server
       PATH-TO-hipobj-gateway.  Exit 77 without boto3."""
import http.server
import os
import socket
import sys
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
    s.sendall(data)
    s.settimeout(3)
    buf, closed = b"", False
    try:
        while True:
            d = s.recv(65536)
            if not d:
                closed = True
                break
            buf += d
    except socket.timeout:
        pass
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


def run(server_bin, gateway_bin, c):
    store = Store()
    be = gw = None
    try:
        be = Server(server_bin, "--access-key", BK, "--secret-key", BS,
                    "--no-rdma").start()
        not_tokens(be, "hipobj-test-server", c)
        gw = Server(gateway_bin, "--backend", store.url,
                    "--backend-access-key", BK, "--backend-secret-key", BS,
                    "--access-key", tb.AK, "--secret-key", tb.SK,
                    "--no-rdma").start()
        not_tokens(gw, "hipobj-gateway", c)
        allow_list(gw, store, c)
        too_many(gw, store, c)
        rdma_response_headers(gw, store, c)
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
