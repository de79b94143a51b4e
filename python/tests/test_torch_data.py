# SPDX-License-Identifier: MIT
"""hipobj.data datasets in a DataLoader with 2 workers (a client per
worker after fork), hipobj.dcp with the torch that is installed, and
tqdm progress for load_safetensors."""
import io
import os

import pytest

from conftest import pattern

torch = pytest.importorskip("torch", reason="python3-torch is not installed")
from hipobj import data as hd  # noqa: E402


@pytest.fixture(scope="module")
def shards(srv):
    """12 objects of 4096 bytes under pyt/ds/ (and one outside it)."""
    with srv.client() as c:
        objs = {}
        for i in range(12):
            b = pattern(4096, seed=100 + i)
            c.put_from("pyt/ds/s%02d" % i, b)
            objs["ds/s%02d" % i] = b
        c.put_from("pyt/other", b"not in the prefix")
    return objs


def opts(srv):
    return dict(endpoint_url=srv.url, use_env=False)


def test_map_dataset(srv, shards):
    ds = hd.MapDataset("s3://pyt/ds/", **opts(srv))
    assert len(ds) == 12
    key, t = ds[3]
    assert key == "ds/s03" and t.dtype == torch.uint8
    assert bytes(t.numpy()) == shards["ds/s03"]
    np_ds = hd.MapDataset("s3://pyt/ds/", framework="numpy", **opts(srv))
    assert bytes(np_ds[0][1]) == shards["ds/s00"]


def test_map_dataset_in_two_workers(srv, shards):
    ds = hd.MapDataset("s3://pyt/ds", **opts(srv),
                       transform=lambda s: (s[0], s[1].clone(), os.getpid()))
    dl = torch.utils.data.DataLoader(ds, batch_size=3, num_workers=2)
    seen, pids = {}, set()
    for keys, ts, ps in dl:
        for k, t in zip(keys, ts):
            seen[k] = bytes(t.numpy())
        pids.update(int(p) for p in ps)
    assert seen == shards
    assert len(pids) == 2 and os.getpid() not in pids


def test_reused_buffer(srv, shards):
    """reuse=True: every sample of the process lands in one buffer."""
    ds = hd.MapDataset("s3://pyt/ds/", reuse=True, **opts(srv))
    a = ds[0][1]
    ptr = a.data_ptr()
    b = ds[1][1]
    assert b.data_ptr() == ptr and bytes(b.numpy()) == shards["ds/s01"]
    assert bytes(a.numpy()) == shards["ds/s01"]  # a view, overwritten


def test_iterable_dataset_in_two_workers(srv, shards):
    ds = hd.IterableDataset("s3://pyt/ds/", **opts(srv),
                            transform=lambda s: (s[0], s[1].clone()))
    got = {}
    for k, t in torch.utils.data.DataLoader(ds, batch_size=None,
                                            num_workers=2):
        assert k not in got
        got[k] = bytes(t.numpy())
    assert got == shards


def test_iterable_records_by_range(srv, shards):
    """Shards of 512-byte records, read 1536 bytes at a time."""
    ds = hd.IterableDataset("s3://pyt/ds/", record_size=512, read_size=1536,
                            **opts(srv))
    dl = torch.utils.data.DataLoader(ds, batch_size=4, num_workers=2)
    records = []
    for keys, batch in dl:
        assert batch.shape[1:] == (512,)
        records.extend(zip(keys, (bytes(r.numpy()) for r in batch)))
    assert len(records) == 12 * 8
    want = {(k, v[i:i + 512]) for k, v in shards.items()
            for i in range(0, 4096, 512)}
    assert set(records) == want
    with pytest.raises(ValueError):
        list(hd.IterableDataset("s3://pyt/ds/", record_size=1000,
                                **opts(srv)))


def test_dataset_errors(srv):
    with pytest.raises(FileNotFoundError):
        hd.MapDataset("s3://nobucket/x", **opts(srv))
    with pytest.raises(ValueError):
        hd.MapDataset("s3://", **opts(srv))
    ds = hd.MapDataset("s3://pyt/ds/", keys=["ds/none"], **opts(srv))
    with pytest.raises(FileNotFoundError):
        ds[0]


def test_safetensors_progress(srv):
    pytest.importorskip("tqdm", reason="python3-tqdm is not installed")
    import numpy as np
    import hipobj
    from hipobj import _progress
    with srv.client() as c:
        t = {"w": np.arange(300_000, dtype=np.float32)}
        hipobj.save_safetensors(t, "pyt/st/p.safetensors", client=c)
        old = _progress.CHUNK
        _progress.CHUNK = 256 << 10
        out = io.StringIO()
        try:
            back = hipobj.load_safetensors(
                "pyt/st/p.safetensors", client=c,
                progress={"file": out, "mininterval": 0})
        finally:
            _progress.CHUNK = old
        assert (back["w"] == t["w"]).all()
        assert "1.14M" in out.getvalue() and "100%" in out.getvalue()
        assert hipobj.load_safetensors("pyt/st/p.safetensors", client=c,
                                       progress=False)["w"][7] == 7


def test_dcp_round_trip(srv):
    try:
        import torch.distributed.checkpoint as dcp
    except ImportError:
        pytest.skip("torch %s has no torch.distributed.checkpoint (Debian "
                    "12's 1.13 predates DCP's StorageReader API); the H200 "
                    "run (python/tests/gpu) covers it" % torch.__version__)
    from hipobj.dcp import StorageReader, StorageWriter
    sd = {"a": torch.arange(1000, dtype=torch.float32).reshape(10, 100),
          "b": torch.ones(3, dtype=torch.int64), "step": 7,
          "nested": {"c": torch.zeros(5, dtype=torch.bfloat16) + 2}}
    dcp.save(sd, storage_writer=StorageWriter("s3://pyt/ckpt/1", **opts(srv)))
    out = {"a": torch.zeros(10, 100), "b": torch.zeros(3, dtype=torch.int64),
           "step": 0, "nested": {"c": torch.zeros(5, dtype=torch.bfloat16)}}
    dcp.load(out, storage_reader=StorageReader("s3://pyt/ckpt/1",
                                               **opts(srv)))
    assert torch.equal(out["a"], sd["a"]) and torch.equal(out["b"], sd["b"])
    assert torch.equal(out["nested"]["c"], sd["nested"]["c"])
    assert out["step"] == 7
