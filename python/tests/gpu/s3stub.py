# SPDX-License-Identifier: MIT
"""A plain-HTTP S3 stand-in for machines without hipobj-test-server (the
H200 has no libmicrohttpd): path-style PUT, GET (with Range), HEAD and
DELETE of objects in memory, ListObjectsV2 (prefix only, one page),
NoSuchKey errors. No RDMA, no multipart, no signatures. It counts the
payload bytes it sent and received."""
import hashlib
import http.server
import threading
import urllib.parse
from xml.sax.saxutils import escape


class Store:
    def __init__(self):
        self.objects = {}
        self.bytes_in = 0
        self.bytes_out = 0
        self.lock = threading.Lock()


def handler(store):
    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def _path(self):
            return self.path.split("?", 1)[0]

        def _send(self, code, body=b"", headers=()):
            self.send_response(code)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _missing(self):
            body = (b"<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code>"
                    b"<Message>The specified key does not exist.</Message>"
                    b"</Error>")
            self._send(404, body, [("Content-Type", "application/xml")])

        def do_PUT(self):
            n = int(self.headers.get("Content-Length", "0"))
            data = self.rfile.read(n)
            with store.lock:
                store.objects[self._path()] = data
                store.bytes_in += len(data)
            etag = '"%s"' % hashlib.md5(data).hexdigest()
            self._send(200, b"", [("ETag", etag)])

        def do_DELETE(self):
            with store.lock:
                store.objects.pop(self._path(), None)
            self._send(204)

        def do_HEAD(self):
            self.do_GET()

        def _list(self):
            bucket = self._path().strip("/")
            q = urllib.parse.parse_qs(self.path.split("?", 1)[1])
            prefix = "/%s/%s" % (bucket, q.get("prefix", [""])[0])
            with store.lock:
                keys = sorted((k, len(v)) for k, v in store.objects.items()
                              if k.startswith(prefix))
            body = "".join("<Contents><Key>%s</Key><Size>%d</Size></Contents>"
                           % (escape(k[len(bucket) + 2:]), n)
                           for k, n in keys)
            body = ("<?xml version=\"1.0\"?><ListBucketResult><IsTruncated>"
                    "false</IsTruncated>%s</ListBucketResult>" % body)
            self._send(200, body.encode(), [("Content-Type",
                                             "application/xml")])

        def do_GET(self):
            if "list-type=2" in self.path:
                return self._list()
            with store.lock:
                data = store.objects.get(self._path())
            if data is None:
                return self._missing()
            etag = '"%s"' % hashlib.md5(data).hexdigest()
            rng = self.headers.get("Range")
            if rng and rng.startswith("bytes="):
                first, last = rng[6:].split("-")
                first, last = int(first), min(int(last), len(data) - 1)
                part = data[first:last + 1]
                hdr = [("ETag", etag), ("Content-Range", "bytes %d-%d/%d" %
                                       (first, last, len(data)))]
                code = 206
            else:
                part, hdr, code = data, [("ETag", etag)], 200
            if self.command == "GET":
                with store.lock:
                    store.bytes_out += len(part)
            self._send(code, part, hdr)

    return H


class Stub:
    def __enter__(self):
        self.store = Store()
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                     handler(self.store))
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        return False
