# SPDX-License-Identifier: MIT
"""The integrations on a real GPU (the H200 through the device tool):
a DCP load of a state dict of at least 1 GiB straight into CUDA tensors
(hipobj.dcp, torch 2.x), a dataset feeding GPU tensors (straight into a
reused GPU buffer, and through DataLoader workers into pinned memory),
and hipobj:// fsspec reads. Against hipobj-test-server when
HIPOBJ_TEST_SERVER names one (run-h200.sh carries it), else the Python
stand-in (s3stub.py). No RDMA device there: the HTTP fallback, staged
through host memory by the client. Every byte is compared on the GPU."""
import os
import sys
import time
import urllib.request

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tests", "interop"))

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import hipobj  # noqa: E402
from s3stub import Stub  # noqa: E402

GIB = 1 << 30
STUB = [True]  # the stand-in has no multipart: one PUT per object


@pytest.fixture(scope="module")
def endpoint():
    binary = os.environ.get("HIPOBJ_TEST_SERVER", "")
    if os.access(binary, os.X_OK):
        from server_harness import Server
        s = Server(binary, "--random-etags", "--max-object-size", "8G")
        s.start()
        urllib.request.urlopen(urllib.request.Request(
            s.url + "/gpu", data=b"", method="PUT")).close()
        print("\nserver: hipobj-test-server %s" % s.url)
        STUB[0] = False
        yield s.url
        assert s.stop() == 0
    else:
        with Stub() as st:
            print("\nserver: s3stub (Python) %s" % st.url)
            yield st.url


def opts(url):
    return dict(endpoint_url=url, use_env=False,
                client_kwargs={"part_size": 4 * GIB} if STUB[0] else {})


def test_dcp_load_of_1gib_into_cuda(endpoint):
    dcp = pytest.importorskip("torch.distributed.checkpoint")
    from hipobj.dcp import StorageReader, StorageWriter
    g = torch.Generator(device="cuda").manual_seed(7)
    # 16 x 64 MiB of float32/bf16 tensors on the GPU, and small values
    want = {}
    for i in range(16):
        dt = torch.float32 if i % 2 else torch.bfloat16
        n = (64 << 20) // (4 if dt == torch.float32 else 2)
        want["layer%02d.weight" % i] = torch.randn(
            n // 4096, 4096, device="cuda", generator=g).to(dt)
    want["step"] = 1234
    want["bias"] = torch.arange(10, device="cuda", dtype=torch.int64)
    total = sum(t.numel() * t.element_size() for t in want.values()
                if torch.is_tensor(t))
    assert total >= GIB
    t0 = time.perf_counter()
    dcp.save(want, storage_writer=StorageWriter("s3://gpu/dcp/1",
                                                **opts(endpoint)))
    t_save = time.perf_counter() - t0
    got = {k: (torch.empty_like(v) if torch.is_tensor(v) else 0)
           for k, v in want.items()}
    ptrs = {k: v.data_ptr() for k, v in got.items() if torch.is_tensor(v)}
    r = StorageReader("s3://gpu/dcp/1", **opts(endpoint))
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    dcp.load(got, storage_reader=r)
    torch.cuda.synchronize()
    t_load = time.perf_counter() - t0
    for k, v in want.items():
        if torch.is_tensor(v):
            assert got[k].is_cuda and got[k].data_ptr() == ptrs[k], k
            assert torch.equal(got[k], v), k
        else:
            assert got[k] == v
    print("dcp: %.2f GiB saved in %.2f s, loaded into CUDA tensors in %.2f s"
          " (%.2f GB/s); client %s"
          % (total / GIB, t_save, t_load, total / t_load / 1e9,
             r.client.counters()))


def test_dcp_resharded_read_into_cuda(endpoint):
    """A destination that is a view (part of a tensor) takes the copy path."""
    dcp = pytest.importorskip("torch.distributed.checkpoint")
    from hipobj.dcp import StorageReader, StorageWriter
    want = {"w": torch.arange(4096, dtype=torch.float32,
                              device="cuda").reshape(64, 64).t()}
    dcp.save(want, storage_writer=StorageWriter("s3://gpu/dcp/2",
                                                **opts(endpoint)))
    got = {"w": torch.zeros(64, 64, device="cuda").t()}  # not contiguous
    dcp.load(got, storage_reader=StorageReader("s3://gpu/dcp/2",
                                               **opts(endpoint)))
    assert torch.equal(got["w"], want["w"])


def test_dataset_feeds_gpu_tensors(endpoint):
    from hipobj import data as hd
    with hipobj.Client(endpoint, use_env=False, sign=False) as c:
        src = [torch.randint(0, 256, (1 << 20,), dtype=torch.uint8)
               for _ in range(8)]
        for i, t in enumerate(src):
            c.put_from("gpu/ds/s%d" % i, t.numpy())
    ds = hd.MapDataset("s3://gpu/ds/", device="cuda", **opts(endpoint))
    assert len(ds) == 8
    ptr = None
    for i in range(8):
        key, t = ds[i]
        assert t.is_cuda and torch.equal(t, src[i].cuda()), key
        ptr = ptr or t.data_ptr()
        assert t.data_ptr() == ptr  # one GPU buffer, reused
    # DataLoader workers read host tensors; the main process pins and moves
    ds2 = hd.MapDataset("s3://gpu/ds/", **opts(endpoint))
    dl = torch.utils.data.DataLoader(ds2, batch_size=2, num_workers=2,
                                     pin_memory=True)
    n = 0
    for keys, batch in dl:
        assert batch.is_pinned()
        g = batch.cuda(non_blocking=True)
        for k, row in zip(keys, g):
            assert torch.equal(row, src[int(k[-1])].cuda()), k
            n += 1
    assert n == 8
    it = hd.IterableDataset("s3://gpu/ds/", record_size=1 << 18,
                            **opts(endpoint))
    got = torch.cat([t for _, t in torch.utils.data.DataLoader(
        it, batch_size=None, num_workers=2)])
    assert got.numel() == 8 << 20


def test_fsspec_reads(endpoint):
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("hipobj", **opts(endpoint))
    data = os.urandom(3 << 20)
    fs.pipe_file("gpu/fs/x", data)
    assert fs.cat_file("gpu/fs/x", 100, 200) == data[100:200]
    with fs.open("gpu/fs/x") as f:
        f.seek(1 << 20)
        assert f.read(10) == data[1 << 20:(1 << 20) + 10]
    assert "gpu/fs/x" in fs.ls("gpu/fs", detail=False)
