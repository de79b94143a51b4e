# SPDX-License-Identifier: MIT
"""DLPack, __cuda_array_interface__ and torch targets; no leaks."""
import gc
import sys
import tracemalloc

import pytest

import hipobj
import dlpack_fake as dl
from conftest import pattern

np = pytest.importorskip("numpy", reason="python3-numpy is not installed")


def addr(a):
    return a.__array_interface__["data"][0]


def test_dlpack_cpu_round_trip(client):
    data = pattern(3000, 5)
    src = np.frombuffer(data, dtype=np.uint8).copy()
    t = dl.FakeTensor(addr(src), (1000, 3), keep=src)
    r = client.put_from("pyt/dl", t)
    assert r.target == "dlpack" and r.bytes == 3000
    dst = np.zeros(3000, dtype=np.uint8)
    u = dl.FakeTensor(addr(dst), (3000,), keep=dst)
    assert client.get_into("pyt/dl", u).bytes == 3000
    assert dst.tobytes() == data
    # each exported twice: for the transfer, and after it to check that
    # its memory did not move meanwhile (test_callbacks.py)
    assert (t.exported, t.deleted, u.exported, u.deleted) == (2, 2, 2, 2)


def test_dlpack_offset_items_and_host_types(client):
    data = pattern(4096, 9)
    client.put_from("pyt/dl2", data)
    dst = np.zeros(4096 + 64, dtype=np.uint8)
    for kind in (dl.CPU, dl.CUDA_HOST, dl.ROCM_HOST):
        dst[:] = 0
        t = dl.FakeTensor(addr(dst), (1024,), itemsize=4, byte_offset=64,
                          device=kind, keep=dst)
        client.get_into("pyt/dl2", t)
        assert dst[64:].tobytes() == data and not dst[:64].any()
        assert t.deleted == t.exported == 2  # the transfer, the check


def test_numpy_dlpack(client):
    """numpy's own __dlpack__, behind an object without the buffer
    protocol."""
    a = np.arange(500, dtype=np.int32)
    client.put_from("pyt/npdl", a)
    b = np.zeros_like(a)

    class OnlyDlpack:
        def __dlpack__(self, stream=None):
            return b.__dlpack__()

    r = client.get_into("pyt/npdl", OnlyDlpack())
    assert r.target == "dlpack" and np.array_equal(a, b)


@pytest.mark.parametrize("kw", [
    dict(shape=(4, 4), strides=(1, 4)),           # column-major
    dict(shape=(4, 4), strides=(8, 1)),           # gaps
    dict(shape=(16,), device=dl.CUDA_MANAGED),
    dict(shape=(16,), device=dl.VULKAN),
])
def test_dlpack_refused(client, kw):
    buf = np.zeros(64, dtype=np.uint8)
    t = dl.FakeTensor(addr(buf), keep=buf, **kw)
    with pytest.raises(hipobj.InvalidArgument):
        client.get_into("pyt/dl", t)
    assert t.deleted == t.exported == 1
    assert not buf.any()


def test_device_memory_never_touched_by_the_cpu(client):
    """Device memory over plain HTTP goes through the GPU runtime's copies;
    without a runtime (or with a pointer it does not know) that is a
    DeviceError, and the memory is left alone. The 'device' pointers here
    are host memory, so a CPU write would show."""
    if client.rdma:
        pytest.skip("this client has RDMA: device memory would be "
                    "registered, which needs a real GPU")
    client.put_from("pyt/dev", pattern(256, 2))
    host = np.zeros(256, dtype=np.uint8)
    for target in (dl.FakeTensor(addr(host), (256,), device=dl.CUDA,
                                 keep=host),
                   dl.FakeTensor(addr(host), (256,), device=dl.ROCM,
                                 keep=host),
                   dl.FakeCudaArray(addr(host), 256)):
        with pytest.raises(hipobj.DeviceError) as e:
            client.get_into("pyt/dev", target)
        assert e.value.status_name
        with pytest.raises(hipobj.DeviceError):
            client.put_from("pyt/dev2", target)
        assert not host.any()


def test_cuda_array_interface_checks(client):
    host = np.zeros(64, dtype=np.uint8)
    with pytest.raises(hipobj.InvalidArgument):
        client.get_into("pyt/dev", dl.FakeCudaArray(addr(host), 64,
                                                    readonly=True))
    with pytest.raises(hipobj.InvalidArgument):
        client.get_into("pyt/dev", dl.FakeCudaArray(
            addr(host), 64, shape=(8, 8), strides=(1, 8)))


def test_torch_cpu_tensors(client):
    torch = pytest.importorskip("torch", reason="torch is not installed "
                                "(python3-torch): torch targets untested")
    t = torch.arange(10000, dtype=torch.float32)
    r = client.put_from("pyt/torch", t)
    assert r.target == "dlpack"
    out = torch.empty_like(t)
    client.get_into("pyt/torch", out)
    assert torch.equal(t, out)
    back = client.get_array("pyt/torch", dtype=np.float32)
    assert np.array_equal(back, t.numpy())


def test_no_leaks(client):
    """Repeated calls keep no memory and no references: tracemalloc and the
    targets' reference counts say so; registrations stay bounded."""
    data = pattern(4096, 11)
    client.put_from("pyt/leak", data)
    ba = bytearray(4096)
    arr = np.zeros(4096, dtype=np.uint8)
    fake = dl.FakeTensor(addr(arr), (4096,), keep=arr)

    def round_():
        client.get_into("pyt/leak", ba)
        client.get_into("pyt/leak", arr)
        client.get_into("pyt/leak", fake)
        client.put_from("pyt/leak", arr)
        try:
            client.get_into("pyt/absent", ba)
        except hipobj.NoSuchKey:
            pass

    for _ in range(50):
        round_()
    refs = (sys.getrefcount(ba), sys.getrefcount(arr), sys.getrefcount(fake))
    gc.collect()
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    for _ in range(500):
        round_()
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - start
    tracemalloc.stop()
    assert grown < 64 * 1024, grown
    assert (sys.getrefcount(ba), sys.getrefcount(arr),
            sys.getrefcount(fake)) == refs
    assert fake.exported == fake.deleted
    assert client._registrations() <= (2 if client.rdma else 0)
    assert bytes(ba) == data and arr.tobytes() == data


def test_registrations_released_with_the_buffer(srv):
    """With RDMA, a target is registered once and released when it dies;
    without, nothing is registered."""
    with srv.client() as c:
        c.put_from("pyt/reg", pattern(8192, 4))
        arrays = [np.zeros(8192, dtype=np.uint8) for _ in range(10)]
        for a in arrays:
            c.get_into("pyt/reg", a)
            c.get_into("pyt/reg", a)
        assert c._registrations() == (10 if c.rdma else 0)
        del arrays, a
        gc.collect()
        assert c._registrations() == 0
