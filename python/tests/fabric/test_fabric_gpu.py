# SPDX-License-Identifier: MIT
"""Device memory by RDMA on the simulated fabric, with the fake GPU
runtime: DLPack (CUDA and ROCm device types) and __cuda_array_interface__
targets registered as hipObjBufRegister() does (GPU-direct by dma-buf, or
staged), every byte read back from the fake's memory."""
import gc
import os
import random
import sys

import pytest

import hipobj
from hipobj import _core
from conftest import DECLINE, counts, stored

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import dlpack_fake as dl  # noqa: E402


def data(n, seed=1):
    return random.Random(seed).randbytes(n)


class DeviceMemory:
    def __init__(self, n):
        self.n = n
        self.address = _core._fabric_gpu_malloc(n)

    def read(self):
        return _core._fabric_gpu_read(self.address, self.n)

    def free(self):
        _core._fabric_gpu_free(self.address)


@pytest.fixture
def dev():
    allocs = []

    def alloc(n):
        m = DeviceMemory(n)
        allocs.append(m)
        return m

    yield alloc
    gc.collect()
    for m in allocs:
        m.free()
    _core._fabric_gpu_set_dmabuf(True)


@pytest.mark.parametrize("dmabuf", [True, False])
@pytest.mark.parametrize("kind", [dl.CUDA, dl.ROCM])
def test_dlpack_device_round_trip(client, dev, kind, dmabuf):
    _core._fabric_gpu_set_dmabuf(dmabuf)  # False: the staged registration
    src = data(200000, kind)
    m = dev(200000)
    t = dl.FakeTensor(m.address, (50000,), itemsize=4, device=kind)
    before = counts()
    client.put_from("fab/dev-src", src)
    r = client.get_into("fab/dev-src", t)
    assert r.path == "rdma" and r.target == "dlpack"
    assert m.read() == src
    r = client.put_from("fab/dev-out", t)
    assert r.path == "rdma" and stored("fab", "dev-out") == src
    after = counts()
    assert after["rdma_get"] - before["rdma_get"] == 1
    assert after["http_get"] == before["http_get"]
    assert client._registrations() == 1
    del t
    gc.collect()
    assert client._registrations() == 0


def test_cuda_array_interface_device(client, dev):
    src = data(4096, 7)
    client.put_from("fab/cai", src)
    m = dev(4096)
    target = dl.FakeCudaArray(m.address, 4096)
    r = client.get_into("fab/cai", target)
    assert r.path == "rdma" and r.target == "cuda_array_interface"
    assert m.read() == src


def test_device_ranges_in_parts(endpoint, dev):
    n = 300000
    src = data(n, 9)
    m = dev(n)
    t = dl.FakeTensor(m.address, (n,), device=dl.CUDA)
    with hipobj.Client(endpoint, use_env=False, part_size=64 * 1024,
                       concurrency=3) as c:
        c.put_from("fab/devparts", src)
        r = c.get_into("fab/devparts", t)
        assert r.parts_rdma == 5 and m.read() == src
        r = c.get_into("fab/devparts", t, offset=1000, length=5000)
        assert m.read()[:5000] == src[1000:6000]


def test_declined_device_memory_never_touched(endpoint, dev):
    """A 501 sends device memory through the application's copies; no GPU
    runtime loads here, so that is a DeviceError and the memory stays as
    it was (the fake's memory is host memory: a CPU write would show)."""
    m = dev(1000)
    t = dl.FakeTensor(m.address, (1000,), device=dl.CUDA)
    _core._fabric_set_mode(DECLINE)
    try:
        with hipobj.Client(endpoint, use_env=False) as c:
            c.put_from("fab/decdev", data(1000, 5))
            with pytest.raises(hipobj.DeviceError):
                c.get_into("fab/decdev", t)
    finally:
        _core._fabric_set_mode(0)
    assert m.read() == bytes(1000)
