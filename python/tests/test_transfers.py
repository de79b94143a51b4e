# SPDX-License-Identifier: MIT
"""Round trips through every kind of target, against hipobj-test-server:
every byte checked, and the server's counters say which path moved them."""
import threading

import pytest

import hipobj
from conftest import expected_path, pattern

np = pytest.importorskip("numpy", reason="python3-numpy is not installed")


def moved(before, after):
    """(http bytes out, http bytes in, rdma bytes out, rdma bytes in)."""
    h0, h1 = before["http"], after["http"]
    r0, r1 = before["rdma"], after["rdma"]
    return (h1["bytes_out"] - h0["bytes_out"], h1["bytes_in"] - h0["bytes_in"],
            r1["bytes_out"] - r0["bytes_out"], r1["bytes_in"] - r0["bytes_in"])


def check_path(c, srv, before, n_out, n_in, result):
    """The client's result and the server's counters agree on the path."""
    got = moved(before, srv.stats())
    if c.rdma:
        assert got == (0, 0, n_out, n_in)
        assert result.path == "rdma" and not result.fell_back
    else:
        assert got == (n_out, n_in, 0, 0)
        assert result.path == "http" and result.fell_back
        assert result.fallback_reason == "no-rdma"
        assert result.parts_rdma == 0 and result.message == c.rdma_reason


SIZES = [1, 4096, 65537, 1 << 20]


@pytest.mark.parametrize("n", SIZES)
def test_bytearray_round_trip(client, srv, n):
    data = pattern(n, n)
    before = srv.stats()
    r = client.put_from("s3://pyt/ba%d" % n, data)
    check_path(client, srv, before, 0, n, r)
    assert r.bytes == n and r.target == "buffer"
    out = bytearray(n)
    before = srv.stats()
    r = client.get_into("s3://pyt/ba%d" % n, out)
    check_path(client, srv, before, n, 0, r)
    assert r.bytes == n and r.object_size == n
    assert out == data


def test_memoryview_and_numpy(client, srv):
    a = np.arange(100000, dtype=np.float32)
    client.put_from("pyt/np", a)
    b = np.zeros_like(a)
    client.get_into("pyt/np", b)
    assert np.array_equal(a, b)
    m = memoryview(bytearray(a.nbytes))
    client.get_into("pyt/np", m)
    assert m.tobytes() == a.tobytes()
    # A read-only array is a fine source, and a 2-D one moves in memory order.
    a2 = np.arange(12, dtype=np.int64).reshape(3, 4)
    a2.setflags(write=False)
    client.put_from("pyt/np2", a2)
    out = np.empty((3, 4), dtype=np.int64)
    client.get_into("pyt/np2", out)
    assert np.array_equal(out, a2)


def test_get_array(client):
    a = (np.arange(4096, dtype=np.uint16) * 7).astype(np.uint16)
    client.put_from("pyt/arr", a)
    b = client.get_array("s3://pyt/arr", dtype=np.uint16)
    assert b.dtype == np.uint16 and np.array_equal(a, b)
    c = client.get_array("pyt/arr", dtype="uint16", shape=(64, 64))
    assert c.shape == (64, 64) and np.array_equal(c.ravel(), a)
    with pytest.raises(hipobj.InvalidArgument):
        client.get_array("pyt/arr", dtype=np.float64, shape=(7,))
    client.put_from("pyt/odd", b"12345")
    with pytest.raises(hipobj.InvalidArgument):
        client.get_array("pyt/odd", dtype=np.uint32)
    client.put_from("pyt/empty", b"")
    assert client.get_array("pyt/empty").size == 0


def test_offsets_and_ranges(client, srv):
    data = pattern(10000, 7)
    client.put_from("pyt/rg", data)
    out = bytearray(100)
    before = srv.stats()
    r = client.get_into("pyt/rg", out, offset=1234)
    check_path(client, srv, before, 100, 0, r)
    assert out == data[1234:1334]
    out = bytearray(100)
    client.get_into("pyt/rg", out, offset=9990, length=10)
    assert out[:10] == data[9990:] and out[10:] == bytes(90)
    big = bytearray(20000)
    r = client.get_into("pyt/rg", big)  # the whole object, the rest untouched
    assert r.bytes == 10000 and big[:10000] == data and big[10000:] == bytes(10000)
    with pytest.raises(hipobj.InvalidRange):
        client.get_into("pyt/rg", bytearray(100), offset=9950)
    with pytest.raises(hipobj.BufferTooSmall):
        client.get_into("pyt/rg", bytearray(100), length=101)
    with pytest.raises(hipobj.BufferTooSmall):
        client.get_into("pyt/rg", bytearray(9999))
    with pytest.raises(hipobj.InvalidArgument):
        client.get_into("pyt/rg", bytearray(10), length=0)


def test_large_object_in_parts(srv):
    n = (1 << 20) * 3 + 12345
    data = np.frombuffer(pattern(n, 3), dtype=np.uint8)
    with srv.client(part_size=256 * 1024, concurrency=4) as c:
        before = srv.stats()
        r = c.put_from("pyt/parts", data)
        parts = -(-n // (256 * 1024))
        assert r.parts_http + r.parts_rdma == parts
        assert moved(before, srv.stats())[1] + moved(before, srv.stats())[3] == n
        out = np.zeros(n, dtype=np.uint8)
        r = c.get_into("pyt/parts", out)
        assert r.parts_http + r.parts_rdma == parts
        assert np.array_equal(out, data)
        assert c.counters()["requests"] > 2 * parts


def test_threads_share_a_client(client, srv):
    errors = []

    def worker(t):
        try:
            for i in range(10):
                data = pattern(5000 + 17 * i, 100 * t + i)
                key = "pyt/t%d-%d" % (t, i)
                client.put_from(key, data)
                out = bytearray(len(data))
                r = client.get_into(key, out)
                assert out == data and r.path == expected_path(client)
        except Exception as e:  # reported below, in the test's thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    k = client.counters()
    assert k["rdma_transfers"] + k["http_transfers"] >= 160


def test_head_and_delete(client):
    client.put_from("pyt/hd", b"x" * 33)
    h = client.head("s3://pyt/hd")
    assert h["size"] == 33 and h["etag"].startswith('"')
    client.delete("pyt/hd")
    with pytest.raises(hipobj.NoSuchKey):
        client.head("pyt/hd")
    client.delete("pyt/hd")  # S3: no error for an absent key


def test_counters_and_result_agree(client):
    k0 = client.counters()
    client.put_from("pyt/ct", b"a" * 1000)
    client.get_into("pyt/ct", bytearray(1000))
    k1 = client.counters()
    if client.rdma:
        assert k1["rdma_bytes"] - k0["rdma_bytes"] == 2000
    else:
        assert k1["http_bytes"] - k0["http_bytes"] == 2000
        assert k1["fallbacks_no_rdma"] - k0["fallbacks_no_rdma"] == 2


def test_progress_and_cancel(srv):
    calls = []
    with srv.client(progress=lambda d, t: calls.append((d, t))) as c:
        c.put_from("pyt/prog", pattern(300000, 1))
        assert calls and calls[-1] == (300000, 300000)
        assert all(d <= t == 300000 for d, t in calls)
    with srv.client(progress=lambda d, t: True) as c:
        with pytest.raises(hipobj.HttpError) as e:
            c.get_into("pyt/prog", bytearray(300000))
        assert "cancel" in e.value.message
    with pytest.raises(TypeError):
        srv.client(progress=5)


def test_clients_close_in_any_order(srv):
    """The first client may own hipObject; it is shut down only when every
    client is closed."""
    a, b, c = srv.client(), srv.client(), srv.client()
    a.close()
    c.put_from("pyt/order", b"still works")
    b.close()
    out = bytearray(11)
    c.get_into("pyt/order", out)
    assert out == b"still works"
    c.close()
    with srv.client() as d:
        d.get_into("pyt/order", out)


def test_gil_released_during_transfers(client):
    """Another Python thread runs while a transfer does. The switch
    interval is long, so a transfer holding the GIL would keep it, and the
    other thread could not count in between."""
    import sys
    import time
    n = 32 << 20
    client.put_from("pyt/gil", np.zeros(n, dtype=np.uint8))
    stop = threading.Event()
    ticks = [0]

    def spin():
        while not stop.is_set():
            ticks[0] += 1

    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.2)
    try:
        t = threading.Thread(target=spin)
        t.start()
        time.sleep(0.02)
        out = np.empty(n, dtype=np.uint8)
        before = ticks[0]
        client.get_into("pyt/gil", out)
        during = ticks[0] - before
        stop.set()
        t.join()
    finally:
        sys.setswitchinterval(interval)
    assert during > 1000, during
