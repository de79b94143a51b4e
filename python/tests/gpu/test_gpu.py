# SPDX-License-Identifier: MIT
"""Device memory on a real GPU (the H200 through the device tool): torch
CUDA tensors by DLPack and __cuda_array_interface__, raw CUDA driver
allocations, get_array and checkpoints on the GPU. The machine has no RDMA
device, so the bytes take the HTTP fallback through host bounce buffers
and the driver's copies: the CPU never touches device memory (it would
fault). Every byte is checked after a device-to-host copy."""
import ctypes
import inspect
import random
import sys

try:
    import pytest
except ImportError:  # run as a script: see the end of the file
    pytest = None

import hipobj
from s3stub import Stub


def skip(reason):
    if pytest and __name__ != "__main__":
        pytest.skip(reason, allow_module_level=True)
    print("SKIP: " + reason)
    sys.exit(77)


try:
    import numpy as np
    import torch
except ImportError as e:
    skip("%s is not installed" % e.name)
if not torch.cuda.is_available():
    skip("no CUDA device")

if pytest:
    @pytest.fixture(scope="module")
    def stub():
        with Stub() as s:
            yield s

    @pytest.fixture
    def client(stub):
        with hipobj.Client(stub.url, use_env=False, sign=False) as c:
            yield c


def data(n, seed=1):
    return random.Random(seed).randbytes(n)


def test_put_from_a_cuda_tensor(client, stub):
    t = torch.arange(1 << 20, dtype=torch.float32, device="cuda")
    r = client.put_from("gpu/t", t)
    assert r.target == "dlpack" and r.bytes == 4 << 20
    assert r.path == ("rdma" if client.rdma else "http")
    assert stub.store.objects["/gpu/t"] == t.cpu().numpy().tobytes()


def test_get_into_a_cuda_tensor(client):
    src = data(3 << 20, 2)
    client.put_from("gpu/g", src)
    t = torch.zeros(3 << 20, dtype=torch.uint8, device="cuda")
    r = client.get_into("gpu/g", t)
    torch.cuda.synchronize()
    assert r.bytes == 3 << 20 and t.cpu().numpy().tobytes() == src
    part = torch.zeros(1000, dtype=torch.uint8, device="cuda:0")
    client.get_into("gpu/g", part, offset=12345)
    assert part.cpu().numpy().tobytes() == src[12345:13345]


def test_cuda_array_interface(client):
    src = data(65536, 3)
    client.put_from("gpu/cai", src)
    t = torch.zeros(65536, dtype=torch.uint8, device="cuda")

    class Cai:
        __cuda_array_interface__ = t.__cuda_array_interface__

    r = client.get_into("gpu/cai", Cai())
    assert r.target == "cuda_array_interface"
    assert t.cpu().numpy().tobytes() == src


def test_raw_driver_allocation(client):
    """cuMemAlloc through the driver, checked with cuMemcpyDtoH."""
    cu = ctypes.CDLL("libcuda.so.1")
    torch.zeros(1, device="cuda")  # the primary context, current
    ptr = ctypes.c_uint64()
    n = 1 << 20
    assert cu.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(n)) == 0
    try:
        src = data(n, 4)
        client.put_from("gpu/raw", src)

        class Raw:
            __cuda_array_interface__ = {"shape": (n,), "typestr": "|u1",
                                        "data": (ptr.value, False),
                                        "version": 3, "strides": None}

        client.get_into("gpu/raw", Raw())
        back = ctypes.create_string_buffer(n)
        assert cu.cuMemcpyDtoH_v2(back, ptr, ctypes.c_size_t(n)) == 0
        assert back.raw == src
        r = client.put_from("gpu/raw2", Raw())
        assert r.bytes == n
        out = bytearray(n)
        client.get_into("gpu/raw2", out)
        assert out == src
    finally:
        cu.cuMemFree_v2(ptr)


def test_get_array_on_the_gpu(client):
    a = np.arange(100000, dtype=np.float32)
    client.put_from("gpu/arr", a)
    t = client.get_array("gpu/arr", dtype="float32", device="cuda")
    assert t.is_cuda and torch.equal(t.cpu(), torch.from_numpy(a))


def test_checkpoint_into_gpu_memory(client):
    want = {"w": torch.randn(256, 128), "b": torch.randn(128).half(),
            "bf": torch.randn(64).to(torch.bfloat16),
            "n": torch.arange(10, dtype=torch.int64)}
    hipobj.save_safetensors(want, "gpu/ckpt.safetensors", client=client)
    got = hipobj.load_safetensors("gpu/ckpt.safetensors", device="cuda:0",
                                  client=client)
    for k in want:
        assert got[k].is_cuda and got[k].dtype == want[k].dtype
        assert torch.equal(got[k].cpu(), want[k]), k
    # and back out of GPU memory
    hipobj.save_safetensors(got, "gpu/ckpt2.safetensors", client=client)
    again = hipobj.load_safetensors("gpu/ckpt2.safetensors", client=client,
                                    framework="torch")
    for k in want:
        assert torch.equal(again[k], want[k]), k


def main():
    """Without pytest: every test_* function in order, one line each."""
    failed = 0
    tests = [(n, f) for n, f in globals().items() if n.startswith("test_")]
    with Stub() as stub:
        for name, f in tests:
            with hipobj.Client(stub.url, use_env=False, sign=False) as c:
                args = {"client": c, "stub": stub}
                try:
                    f(*[args[p] for p in inspect.signature(f).parameters])
                    print("PASS %s" % name)
                except Exception as e:  # reported, then counted
                    failed += 1
                    print("FAIL %s: %r" % (name, e))
    print("gpu: %d passed, %d failed" % (len(tests) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
