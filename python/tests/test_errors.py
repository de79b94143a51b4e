# SPDX-License-Identifier: MIT
"""Exceptions: each glue status as its class, with the S3 details."""
import pytest

import hipobj
from conftest import Running, make_bucket


def test_no_such_key_is_file_not_found(client):
    with pytest.raises(FileNotFoundError) as e:
        client.get_into("s3://pyt/absent", bytearray(1))
    x = e.value
    assert isinstance(x, hipobj.NoSuchKey) and isinstance(x, hipobj.NotFound)
    assert isinstance(x, hipobj.Error)
    assert x.s3_code == "NoSuchKey" and x.http_status == 404
    assert x.status_name == "no such key" or x.status_name
    assert "s3://pyt/absent" in x.message and str(x) == x.message


def test_no_such_bucket(client):
    with pytest.raises(hipobj.NoSuchBucket) as e:
        client.put_from("s3://nobucket/k", b"abc")
    assert isinstance(e.value, FileNotFoundError)
    assert e.value.s3_code == "NoSuchBucket"


def test_access_denied_is_permission_error():
    boto3 = pytest.importorskip("boto3", reason="python3-boto3 is not "
                                "installed: it creates the signed bucket")
    s = Running("--access-key", "AK", "--secret-key", "SK", bucket=False)
    try:
        boto3.client("s3", endpoint_url=s.url, aws_access_key_id="AK",
                     aws_secret_access_key="SK",
                     region_name="us-east-1").create_bucket(Bucket="pyt")
        with s.client(access_key="AK", secret_key="SK") as good:
            good.put_from("pyt/signed", b"data")
        with s.client(access_key="AK", secret_key="wrong") as bad:
            with pytest.raises(PermissionError) as e:
                bad.get_into("pyt/signed", bytearray(4))
            assert isinstance(e.value, hipobj.AccessDenied)
            assert e.value.http_status == 403
            assert "AWS_SECRET_ACCESS_KEY" in e.value.message
    finally:
        s.stop()


def test_unreachable_endpoint_is_connection_error(srv):
    s = Running()
    url = s.url
    s.stop()
    with hipobj.Client(url, use_env=False) as c:
        with pytest.raises(ConnectionError) as e:
            c.get_into("pyt/k", bytearray(1))
    assert isinstance(e.value, hipobj.ConnectFailed)


def test_rdma_required(srv):
    """Without an RDMA device, require_rdma fails at once; with one, the
    server's 501 is RdmaDeclined (the Soft-RoCE VM runs that case)."""
    probe = srv.client()
    rdma = probe.rdma
    probe.close()
    if rdma:
        s = Running("--decline-rdma")
        try:
            with s.client(require_rdma=True) as c:
                with pytest.raises(hipobj.RdmaDeclined):
                    c.put_from("pyt/k", b"abc")
        finally:
            s.stop()
        return
    with pytest.raises(hipobj.RdmaUnavailable) as e:
        srv.client(require_rdma=True)
    assert e.value.rdma_error != 0
    with pytest.raises(hipobj.InvalidArgument):
        srv.client(require_rdma=True, rdma=False)


def test_declined_falls_back_visibly():
    s = Running("--decline-rdma")
    try:
        with s.client() as c:
            before = s.stats()["rdma"]["declined"]
            r = c.put_from("pyt/d", b"abcdef")
            out = bytearray(6)
            r2 = c.get_into("pyt/d", out)
            assert out == b"abcdef"
            assert r.path == r2.path == "http" and r.fell_back
            if c.rdma:
                assert r.fallback_reason == "declined"
                assert s.stats()["rdma"]["declined"] - before == 2
                assert c.counters()["fallbacks_declined"] == 2
            else:  # no token was sent at all
                assert r.fallback_reason == "no-rdma"
                assert s.stats()["rdma"]["declined"] == before
    finally:
        s.stop()


def test_plain_http_by_choice(srv):
    with srv.client(rdma=False) as c:
        r = c.put_from("pyt/choice", b"xyz")
        assert r.path == "http" and r.fallback_reason == "disabled"
        assert not r.fell_back and not c.rdma and c.rdma_reason


@pytest.mark.parametrize("url", ["", "s3://", "s3://pyt", "s3://pyt/",
                                 "nokey"])
def test_bad_urls(client, url):
    with pytest.raises(hipobj.InvalidArgument) as e:
        client.get_into(url, bytearray(1))
    assert isinstance(e.value, ValueError)


def test_bad_targets(client):
    client.put_from("pyt/t", b"1234")
    with pytest.raises(BufferError):
        client.get_into("pyt/t", b"read-only bytes")
    with pytest.raises(TypeError):
        client.get_into("pyt/t", 12)
    with pytest.raises(TypeError):
        client.get_into(b"pyt/t", bytearray(4))
    with pytest.raises(TypeError):
        client.put_from("pyt/t", "a str")


def test_closed_client(srv):
    c = srv.client()
    with c:
        assert not c.closed
    assert c.closed
    c.close()  # again: nothing
    with pytest.raises(hipobj.InvalidArgument):
        c.put_from("pyt/k", b"x")


def test_bad_configuration():
    with pytest.raises(hipobj.InvalidArgument):
        hipobj.Client("ftp://nowhere", use_env=False)
    with pytest.raises(hipobj.InvalidArgument):
        hipobj.Client("http://127.0.0.1:1", use_env=False, concurrency=1000)
    with pytest.raises(hipobj.InvalidArgument):
        hipobj.Client("http://127.0.0.1:1", use_env=False, access_key="A")


def test_environment(srv, monkeypatch):
    """AWS_ENDPOINT_URL configures a client as it does the hipobj command."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", srv.url)
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3", raising=False)
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY", raising=False)
    with hipobj.Client() as c:
        c.put_from("pyt/env", b"from the environment")
        out = bytearray(20)
        c.get_into("pyt/env", out)
        assert out == b"from the environment"
    make_bucket(srv.url, "pyt2")


def test_docstrings():
    doc = hipobj.Client.get_into.__doc__
    assert "buffer protocol" in doc and "__dlpack__" in doc
    assert "__cuda_array_interface__" in doc
    assert "AWS_ENDPOINT_URL" in hipobj.Client.__doc__


def test_subclass(srv):
    class Mine(hipobj.Client):
        def get_text(self, url):
            b = bytearray(self.head(url)["size"])
            self.get_into(url, b)
            return b.decode()

    with Mine(srv.url, use_env=False) as c:
        c.put_from("pyt/sub", "héllo".encode())
        assert c.get_text("pyt/sub") == "héllo"
        c.tag = 1  # a subclass has a __dict__
    del c


def test_client_without_init():
    c = hipobj.Client.__new__(hipobj.Client)
    assert c.closed and not c.rdma and c._registrations() == 0
    with pytest.raises(hipobj.InvalidArgument):
        c.get_into("pyt/k", bytearray(1))
    c.close()
