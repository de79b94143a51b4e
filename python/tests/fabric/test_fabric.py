# SPDX-License-Identifier: MIT
"""The package's RDMA path on the simulated fabric: the responder's
counters say RDMA moved the bytes, and every byte is checked."""
import gc
import os
import sys
import random
import threading
import tracemalloc

import numpy as np
import pytest

import hipobj
from hipobj import _core

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import dlpack_fake as dl  # noqa: E402
from conftest import DECLINE, IGNORE, BAD_COUNT, PLAIN_REPLY, counts, stored


def data(n, seed=1):
    return random.Random(seed).randbytes(n)


def delta(before):
    after = counts()
    return {k: after[k] - before[k] for k in after}


@pytest.mark.parametrize("n", [1, 4096, (1 << 20) + 5])
def test_rdma_round_trip(client, n):
    src = data(n, n)
    before = counts()
    r = client.put_from("s3://fab/k%d" % n, src)
    assert r.path == "rdma" and r.parts_rdma == 1 and not r.fell_back
    assert stored("fab", "k%d" % n) == src
    out = bytearray(n)
    r = client.get_into("fab/k%d" % n, out)
    assert r.path == "rdma" and out == src
    d = delta(before)
    assert (d["rdma_put"], d["rdma_get"], d["http_put"], d["http_get"]) == (1, 1, 0, 0)
    assert d["rdma_bytes"] == 2 * n and d["http_bytes"] == 0
    k = client.counters()
    assert k["rdma_bytes"] == 2 * n and k["http_transfers"] == 0


def test_numpy_ranges_and_parts(endpoint):
    with hipobj.Client(endpoint, use_env=False, part_size=64 * 1024,
                       concurrency=3) as c:
        a = np.frombuffer(data(300000, 2), dtype=np.uint8).copy()
        before = counts()
        r = c.put_from("fab/parts", a)
        assert r.parts_rdma == 5 and r.parts_http == 0
        b = np.zeros_like(a)
        r = c.get_into("fab/parts", b)
        assert r.parts_rdma == 5 and np.array_equal(a, b)
        part = np.zeros(1000, dtype=np.uint8)
        c.get_into("fab/parts", part, offset=123456)
        assert part.tobytes() == a[123456:124456].tobytes()
        d = delta(before)
        assert d["http_put"] == d["http_get"] == 0


def test_registration_cached_and_released(client):
    client.put_from("fab/reg", data(65536, 3))
    a = np.zeros(65536, dtype=np.uint8)
    for _ in range(5):
        client.get_into("fab/reg", a)
    assert client._registrations() == 1
    assert a.tobytes() == data(65536, 3)
    # Another object at the same address (a view) takes the address over.
    v = a[:]
    v[:] = 0
    client.get_into("fab/reg", v)
    assert client._registrations() == 1 and a.tobytes() == data(65536, 3)
    del a, v
    gc.collect()
    assert client._registrations() == 0
    # No weak references: the glue registers per call, nothing is kept.
    ba = bytearray(65536)
    client.get_into("fab/reg", ba)
    assert client._registrations() == 0 and ba == data(65536, 3)


def test_registration_follows_a_moved_buffer(client):
    """A registered NumPy array cannot be resized (numpy refuses while a
    weak reference exists); a producer whose memory moves or grows gets a
    new registration, and the old one is released."""
    client.put_from("fab/mv", data(8192, 4))
    a = np.zeros(4096, dtype=np.uint8)
    client.get_into("fab/mv", a, offset=0, length=4096)
    with pytest.raises(ValueError):
        a.resize(8192, refcheck=False)
    b1 = np.zeros(8192, dtype=np.uint8)
    b2 = np.zeros(8192, dtype=np.uint8)
    t = dl.FakeTensor(b1.ctypes.data, (4096,), keep=b1)
    client.get_into("fab/mv", t, offset=0, length=4096)
    assert client._registrations() == 2
    t.address = b2.ctypes.data            # moved
    client.get_into("fab/mv", t, offset=0, length=4096)
    assert client._registrations() == 2
    assert b2[:4096].tobytes() == data(8192, 4)[:4096]
    t.shape = [8192]                      # grown in place
    client.get_into("fab/mv", t)
    assert client._registrations() == 2
    assert b2.tobytes() == data(8192, 4)
    del t
    gc.collect()
    assert client._registrations() == 1


def test_declined_falls_back_and_require_rdma(endpoint):
    _core._fabric_set_mode(DECLINE)
    try:
        with hipobj.Client(endpoint, use_env=False) as c:
            before = counts()
            r = c.put_from("fab/dec", b"declined bytes")
            assert r.path == "http" and r.fallback_reason == "declined"
            out = bytearray(14)
            r = c.get_into("fab/dec", out)
            assert out == b"declined bytes" and r.fallback_reason == "declined"
            d = delta(before)
            assert d["declined"] == 2 and d["rdma_get"] == d["rdma_put"] == 0
            assert c.counters()["fallbacks_declined"] == 2
        with hipobj.Client(endpoint, use_env=False, require_rdma=True) as c:
            with pytest.raises(hipobj.RdmaDeclined):
                c.put_from("fab/dec2", b"x")
            with pytest.raises(hipobj.RdmaUnavailable):
                c.get_into("fab/dec", bytearray(14))
    finally:
        _core._fabric_set_mode(0)


@pytest.mark.parametrize("mode", [IGNORE, BAD_COUNT, PLAIN_REPLY])
def test_broken_servers_are_errors(client, mode):
    client.put_from("fab/brk", b"0123456789")
    _core._fabric_set_mode(mode)
    with pytest.raises(hipobj.ProtocolError):
        client.get_into("fab/brk", bytearray(10))


def test_threads_over_rdma(client):
    errors = []

    def worker(t):
        try:
            for i in range(8):
                src = data(20000 + i, 50 * t + i)
                client.put_from("fab/t%d-%d" % (t, i), src)
                out = np.zeros(len(src), dtype=np.uint8)
                r = client.get_into("fab/t%d-%d" % (t, i), out)
                assert r.path == "rdma" and out.tobytes() == src
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    gc.collect()
    assert client._registrations() == 0


def test_safetensors_over_rdma(client):
    want = {"a": np.arange(1000, dtype=np.float32),
            "b": np.ones((3, 3), dtype=np.int64)}
    before = counts()
    hipobj.save_safetensors(want, "fab/m.safetensors", client=client)
    got = hipobj.load_safetensors("fab/m.safetensors", client=client)
    for k in want:
        assert np.array_equal(got[k], want[k])
    d = delta(before)
    assert d["rdma_put"] == 1 and d["rdma_get"] == 3 and d["http_get"] == 0


def test_no_leaks_over_rdma(client):
    client.put_from("fab/leak", data(4096, 8))
    a = np.zeros(4096, dtype=np.uint8)
    for _ in range(20):
        client.get_into("fab/leak", a)
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    for _ in range(300):
        client.get_into("fab/leak", a)
        client.get_into("fab/leak", np.zeros(4096, dtype=np.uint8))
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - start
    tracemalloc.stop()
    assert grown < 64 * 1024, grown
    assert client._registrations() == 1
