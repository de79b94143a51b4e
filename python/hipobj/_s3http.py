# SPDX-License-Identifier: MIT
"""The S3 requests the C client does not make (they move no payload):
ListObjectsV2, ListBuckets and CreateBucket, in plain HTTP with AWS
Signature V4, for hipobj.fsspec and hipobj.data. Payloads (GET, PUT,
ranges, multipart) always go through hipobj.Client, by RDMA when it can.

Config resolves the endpoint, region and keys the way the hipobj command
and Client do: arguments first, then (unless use_env is false)
AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, AWS_REGION / AWS_DEFAULT_REGION,
AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, HIPOBJ_NIC.
Requests are path-style (http://host/bucket?...), as the C client's."""
import datetime
import hashlib
import hmac
import http.client
import os
import urllib.parse
import xml.etree.ElementTree as ET

from ._core import (AccessDenied, Error, HttpError, InvalidArgument,
                    NoSuchBucket, NoSuchKey, NotFound, ProtocolError)

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


class Config:
    """Where and as whom: endpoint, region, keys; the Client's options."""

    def __init__(self, endpoint_url=None, key=None, secret=None, token=None,
                 region=None, anon=False, use_env=True, client_kwargs=None):
        env = os.environ if use_env else {}
        self.endpoint = (endpoint_url or env.get("AWS_ENDPOINT_URL_S3") or
                         env.get("AWS_ENDPOINT_URL") or "")
        if not self.endpoint:
            raise InvalidArgument(
                "no S3 endpoint: pass endpoint_url (a storage option) or "
                "set AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL")
        if "://" not in self.endpoint:
            self.endpoint = "http://" + self.endpoint
        self.region = (region or env.get("AWS_REGION") or
                       env.get("AWS_DEFAULT_REGION") or "us-east-1")
        self.anon = bool(anon)
        self.key = None if anon else (key or env.get("AWS_ACCESS_KEY_ID"))
        self.secret = None if anon else (secret or
                                         env.get("AWS_SECRET_ACCESS_KEY"))
        self.token = None if anon else (token or
                                        env.get("AWS_SESSION_TOKEN"))
        self.nic = env.get("HIPOBJ_NIC") or None
        self.client_kwargs = dict(client_kwargs or {})

    def client_args(self):
        """Keyword arguments for hipobj.Client (the environment already
        read here, so the client reads none)."""
        kw = dict(endpoint=self.endpoint, region=self.region, use_env=False)
        if self.key and self.secret:
            kw.update(access_key=self.key, secret_key=self.secret)
            if self.token:
                kw["session_token"] = self.token
        else:
            kw["sign"] = False
        if self.nic:
            kw["nic"] = self.nic
        kw.update(self.client_kwargs)
        return kw

    def key_tuple(self):
        return (self.endpoint, self.region, self.key, self.secret, self.token,
                self.nic, tuple(sorted(self.client_kwargs.items())))


def _quote(s, safe="-_.~"):
    return urllib.parse.quote(s, safe=safe)


def _hmac(k, msg):
    return hmac.new(k, msg.encode(), hashlib.sha256).digest()


def sign(cfg, method, path, query, headers, now=None):
    """Add Signature V4 headers (x-amz-date, x-amz-content-sha256,
    Authorization, x-amz-security-token) for an empty-body request."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    amz = now.strftime("%Y%m%dT%H%M%SZ")
    day = amz[:8]
    headers["x-amz-date"] = amz
    headers["x-amz-content-sha256"] = EMPTY_SHA256
    if cfg.token:
        headers["x-amz-security-token"] = cfg.token
    names = sorted(h.lower() for h in headers)
    lower = {h.lower(): " ".join(str(v).split()) for h, v in headers.items()}
    canon_query = "&".join("%s=%s" % (_quote(k), _quote(v))
                           for k, v in sorted(query.items()))
    canon = "\n".join([method, _quote(path, safe="-_.~/"), canon_query,
                       "".join("%s:%s\n" % (n, lower[n]) for n in names),
                       ";".join(names), EMPTY_SHA256])
    scope = "%s/%s/s3/aws4_request" % (day, cfg.region)
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz, scope,
                         hashlib.sha256(canon.encode()).hexdigest()])
    k = _hmac(("AWS4" + cfg.secret).encode(), day)
    for part in (cfg.region, "s3", "aws4_request"):
        k = _hmac(k, part)
    sig = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["Authorization"] = (
        "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s"
        % (cfg.key, scope, ";".join(names), sig))


_ERRORS = {"NoSuchKey": NoSuchKey, "NoSuchBucket": NoSuchBucket,
           "AccessDenied": AccessDenied, "SignatureDoesNotMatch": AccessDenied,
           "InvalidAccessKeyId": AccessDenied}


def _text(el, name, ns):
    x = el.find(ns + name)
    return x.text or "" if x is not None else None


def request(cfg, method, bucket="", query=None, timeout=60):
    """One request with an empty body: (status, body bytes). Raises the
    hipobj error the reply's S3 code names for any status but 2xx."""
    u = urllib.parse.urlsplit(cfg.endpoint)
    base = u.path.rstrip("/")
    path = base + "/" + bucket if bucket else (base or "/")
    query = dict(query or {})
    headers = {"Host": u.netloc}
    if cfg.key and cfg.secret:
        sign(cfg, method, path, query, headers)
    target = _quote(path, safe="-_.~/")
    if query:
        target += "?" + "&".join("%s=%s" % (_quote(k), _quote(v))
                                 for k, v in sorted(query.items()))
    conn_cls = (http.client.HTTPSConnection if u.scheme == "https"
                else http.client.HTTPConnection)
    conn = conn_cls(u.hostname, u.port, timeout=timeout)
    try:
        headers["Content-Length"] = "0"
        conn.request(method, target, body=b"", headers=headers)
        resp = conn.getresponse()
        body = resp.read()
        status = resp.status
    except OSError as e:
        raise HttpError("%s %s: %s" % (method, cfg.endpoint, e)) from e
    finally:
        conn.close()
    if 200 <= status < 300:
        return status, body
    code, msg = "", ""
    try:
        root = ET.fromstring(body)
        code = root.findtext("Code") or ""
        msg = root.findtext("Message") or ""
    except ET.ParseError:
        pass
    cls = _ERRORS.get(code)
    if cls is None:
        cls = (AccessDenied if status == 403 else
               NotFound if status == 404 else HttpError)
    raise cls("%s %s/%s: HTTP %d %s %s" % (method, cfg.endpoint, bucket,
                                           status, code, msg))


def _ns(root):
    return root.tag[:root.tag.index("}") + 1] if root.tag.startswith("{") \
        else ""


def list_objects(cfg, bucket, prefix="", delimiter="", max_keys=None):
    """Yield ('file', key, size, etag, last_modified) and ('dir', prefix,
    0, '', '') for every entry of ListObjectsV2, following continuation
    tokens."""
    token = None
    while True:
        q = {"list-type": "2", "prefix": prefix}
        if delimiter:
            q["delimiter"] = delimiter
        if max_keys:
            q["max-keys"] = str(max_keys)
        if token:
            q["continuation-token"] = token
        _, body = request(cfg, "GET", bucket, q)
        try:
            root = ET.fromstring(body)
        except ET.ParseError as e:
            raise ProtocolError("ListObjectsV2 reply is not XML: %s" % e) \
                from e
        ns = _ns(root)
        for c in root.findall(ns + "Contents"):
            try:
                size = int(_text(c, "Size", ns) or "0")
            except ValueError as e:
                raise ProtocolError("ListObjectsV2: bad Size") from e
            yield ("file", _text(c, "Key", ns) or "", size,
                   (_text(c, "ETag", ns) or "").strip('"'),
                   _text(c, "LastModified", ns) or "")
        for p in root.findall(ns + "CommonPrefixes"):
            yield ("dir", _text(p, "Prefix", ns) or "", 0, "", "")
        token = _text(root, "NextContinuationToken", ns)
        if max_keys or _text(root, "IsTruncated", ns) != "true" or not token:
            return


def list_buckets(cfg):
    _, body = request(cfg, "GET")
    root = ET.fromstring(body)
    ns = _ns(root)
    return [b.findtext(ns + "Name") or ""
            for b in root.iter(ns + "Bucket")]


def create_bucket(cfg, bucket):
    request(cfg, "PUT", bucket)


def delete_bucket(cfg, bucket):
    request(cfg, "DELETE", bucket)


__all__ = ["Config", "list_objects", "list_buckets", "create_bucket",
           "delete_bucket", "request", "sign", "Error"]
