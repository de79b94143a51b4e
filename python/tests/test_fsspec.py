# SPDX-License-Identifier: MIT
"""hipobj:// through fsspec against hipobj-test-server: every method,
ranges, missing keys, permissions, and real consumers (pandas, zarr),
byte-identical to the same bytes through plain HTTP."""
import io
import os
import urllib.request

import pytest

fsspec = pytest.importorskip("fsspec", reason="python3-fsspec is not "
                             "installed (scripts/deps.sh)")

import hipobj  # noqa: E402
from conftest import Running, pattern  # noqa: E402
from hipobj.fsspec import HipObjFileSystem  # noqa: E402


@pytest.fixture
def fs(srv):
    HipObjFileSystem.clear_instance_cache()
    return fsspec.filesystem("hipobj", endpoint_url=srv.url, use_env=False)


def http_get(srv, path, rng=None):
    """The object's bytes by a plain, unsigned HTTP GET (no hipobj)."""
    req = urllib.request.Request("%s/%s" % (srv.url, path))
    if rng:
        req.add_header("Range", "bytes=%d-%d" % rng)
    with urllib.request.urlopen(req) as r:
        return r.read()


def bytes_out(stats):
    """Payload bytes the server sent, by HTTP and by RDMA."""
    return stats["http"]["bytes_out"] + stats["rdma"]["bytes_out"]


def test_entry_point_registers_the_protocol(srv):
    from importlib.metadata import entry_points
    eps = [e for e in entry_points(group="fsspec.specs") if e.name == "hipobj"]
    assert eps and eps[0].load() is HipObjFileSystem
    assert isinstance(fsspec.filesystem("hipobj", endpoint_url=srv.url,
                                        use_env=False), HipObjFileSystem)


def test_endpoint_from_the_environment(srv, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", srv.url)
    for v in ("AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID",
              "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(v, raising=False)
    HipObjFileSystem.clear_instance_cache()
    f = fsspec.filesystem("hipobj")
    f.pipe_file("pyt/env/x", b"env")
    with fsspec.open("hipobj://pyt/env/x") as fh:
        assert fh.read() == b"env"
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    HipObjFileSystem.clear_instance_cache()
    with pytest.raises(ValueError, match="endpoint"):
        fsspec.filesystem("hipobj")


def test_open_read_is_ranged_gets(fs, srv):
    data = pattern(3 << 20, seed=3)
    fs.pipe_file("pyt/fs/big.bin", data)
    before = srv.stats()
    with fs.open("pyt/fs/big.bin", "rb", block_size=1 << 20) as f:
        assert f.size == len(data)
        f.seek(1000)
        assert f.read(10) == data[1000:1010]
        f.seek(2 << 20)
        assert f.read(100) == data[2 << 20:(2 << 20) + 100]
        f.seek(-5, os.SEEK_END)
        assert f.read() == data[-5:]
        assert f.read() == b""
    after = srv.stats()
    # buffered: three blocks of 1 MiB and a short one, not the object
    assert 0 < bytes_out(after) - bytes_out(before) <= (3 << 20) // 2 * 2
    assert after["requests"]["GET"] - before["requests"]["GET"] <= 4


def test_open_write_round_trip(fs, srv):
    data = pattern(300_000, seed=4)
    with fs.open("pyt/fs/w.bin", "wb", block_size=64 << 10) as f:
        for i in range(0, len(data), 70_000):
            f.write(data[i:i + 70_000])
    assert http_get(srv, "pyt/fs/w.bin") == data
    with fs.open("pyt/fs/empty", "wb"):
        pass
    assert http_get(srv, "pyt/fs/empty") == b""
    with pytest.raises(NotImplementedError):
        fs.open("pyt/fs/w.bin", "ab")


def test_large_write_spills_to_disk_and_goes_multipart(srv):
    """Past the spool's memory the file is mapped from disk; past the
    client's part size put_from uploads parts (the server counts them)."""
    from hipobj.fsspec import HipObjFile
    HipObjFileSystem.clear_instance_cache()
    f = fsspec.filesystem("hipobj", endpoint_url=srv.url, use_env=False,
                          client_kwargs={"part_size": 64 << 10})
    old = HipObjFile.SPOOL_MEMORY
    HipObjFile.SPOOL_MEMORY = 100_000
    try:
        data = pattern(500_000, seed=5)
        before = srv.stats()
        with f.open("pyt/fs/multi.bin", "wb") as fh:
            fh.write(data)
        after = srv.stats()
    finally:
        HipObjFile.SPOOL_MEMORY = old
    assert http_get(srv, "pyt/fs/multi.bin") == data
    # CreateMultipartUpload and CompleteMultipartUpload are POSTs
    assert after["requests"]["POST"] - before["requests"]["POST"] == 2
    assert after["requests"]["PUT"] - before["requests"]["PUT"] >= 7


def test_cat_file_and_ranges(fs, srv):
    data = pattern(10_000, seed=6)
    fs.pipe_file("pyt/fs/r.bin", data)
    assert fs.cat_file("pyt/fs/r.bin") == data
    assert fs.cat("hipobj://pyt/fs/r.bin") == data
    assert fs.cat_file("pyt/fs/r.bin", 10, 20) == data[10:20]
    assert fs.cat_file("pyt/fs/r.bin", -100) == data[-100:]
    assert fs.cat_file("pyt/fs/r.bin", 9_990, 20_000) == data[9_990:]
    assert fs.cat_file("pyt/fs/r.bin", 20_000, 30_000) == b""
    assert fs.cat_file("pyt/fs/r.bin", 5, 5) == b""
    assert fs.cat_file("pyt/fs/r.bin", 100, -100) == data[100:-100]
    assert fs.cat_file("pyt/fs/r.bin", 10, 20) == http_get(srv, "pyt/fs/r.bin",
                                                           (10, 19))
    got = fs.cat_ranges(["pyt/fs/r.bin"] * 3 + ["pyt/fs/none"],
                        [0, 500, 9_000, 0], [10, 600, 10_000, 1])
    assert got[:3] == [data[:10], data[500:600], data[9_000:]]
    assert isinstance(got[3], FileNotFoundError)
    with pytest.raises(FileNotFoundError):
        fs.cat_ranges(["pyt/fs/none"], [0], [1], on_error="raise")


def test_cat_of_many_paths(fs):
    """A list of paths is read on threads, with fsspec's on_error."""
    want = {"pyt/many2/%d" % i: pattern(1000 + i, seed=i) for i in range(20)}
    for k, v in want.items():
        fs.pipe_file(k, v)
    assert fs.cat(list(want)) == want
    got = fs.cat(list(want) + ["pyt/many2/none"], on_error="return")
    assert isinstance(got.pop("pyt/many2/none"), FileNotFoundError)
    assert got == want
    assert fs.cat(list(want) + ["pyt/many2/none"], on_error="omit") == want
    with pytest.raises(FileNotFoundError):
        fs.cat(["pyt/many2/1", "pyt/many2/none"])
    m = fs.get_mapper("pyt/many2")
    assert m.getitems(["1", "2"]) == {"1": want["pyt/many2/1"],
                                      "2": want["pyt/many2/2"]}


def test_ls_info_exists(fs):
    fs.pipe_file("pyt/tree/a.txt", b"A")
    fs.pipe_file("pyt/tree/sub/b.txt", b"BB")
    fs.pipe_file("pyt/tree/sub/deeper/c.txt", b"CCC")
    assert fs.ls("pyt/tree", detail=False) == ["pyt/tree/a.txt",
                                                "pyt/tree/sub"]
    d = {e["name"]: e for e in fs.ls("hipobj://pyt/tree/sub")}
    assert d["pyt/tree/sub/b.txt"]["size"] == 2
    assert d["pyt/tree/sub/b.txt"]["type"] == "file"
    assert d["pyt/tree/sub/deeper"]["type"] == "directory"
    assert fs.ls("pyt/tree/a.txt", detail=False) == ["pyt/tree/a.txt"]
    assert "pyt" in fs.ls("", detail=False)
    assert fs.info("pyt/tree/sub/b.txt")["size"] == 2
    assert fs.info("pyt/tree/sub")["type"] == "directory"
    assert fs.info("pyt")["type"] == "directory"
    assert fs.exists("pyt/tree/a.txt") and fs.exists("pyt/tree/sub")
    assert not fs.exists("pyt/tree/none") and not fs.exists("nobucket/x")
    assert fs.isfile("pyt/tree/a.txt") and fs.isdir("pyt/tree/sub")
    assert sorted(fs.find("pyt/tree")) == ["pyt/tree/a.txt",
                                           "pyt/tree/sub/b.txt",
                                           "pyt/tree/sub/deeper/c.txt"]
    assert fs.glob("pyt/tree/sub/*.txt") == ["pyt/tree/sub/b.txt"]
    assert fs.du("pyt/tree") == 6
    with pytest.raises(FileNotFoundError):
        fs.ls("pyt/nothing-here")
    with pytest.raises(FileNotFoundError):
        fs.info("pyt/tree/none")


def test_listing_pages(fs):
    """More keys than one ListObjectsV2 page (1000) are all listed."""
    f = fs
    c = f.client
    for i in range(1005):
        c.put_from("pyt/many/k%04d" % i, b"x")
    assert len(f.ls("pyt/many", detail=False)) == 1005


def test_put_get_rm(fs, tmp_path):
    data = pattern(200_000, seed=7)
    src = tmp_path / "src.bin"
    src.write_bytes(data)
    fs.put_file(str(src), "pyt/pg/obj.bin")
    (tmp_path / "empty").write_bytes(b"")
    fs.put_file(str(tmp_path / "empty"), "pyt/pg/empty")
    assert fs.cat_file("pyt/pg/empty") == b""
    dst = tmp_path / "dst.bin"
    fs.get_file("pyt/pg/obj.bin", str(dst))
    assert dst.read_bytes() == data
    fs.get("pyt/pg/obj.bin", str(tmp_path / "dst2.bin"))
    assert (tmp_path / "dst2.bin").read_bytes() == data
    fs.rm("pyt/pg/obj.bin")
    assert not fs.exists("pyt/pg/obj.bin")
    fs.pipe_file("pyt/pg/d/1", b"1")
    fs.pipe_file("pyt/pg/d/2", b"2")
    fs.rm("pyt/pg/d", recursive=True)
    assert not fs.exists("pyt/pg/d")
    with pytest.raises(FileNotFoundError):
        fs.rm("pyt/pg/none")
    with pytest.raises(FileNotFoundError):
        fs.get_file("pyt/pg/none", str(tmp_path / "x"))


def test_get_file_in_chunks_with_progress(fs, tmp_path, monkeypatch):
    pytest.importorskip("tqdm", reason="python3-tqdm is not installed")
    import hipobj.fsspec as hf
    monkeypatch.setattr(hf, "GET_CHUNK", 40_000)
    data = pattern(100_000, seed=8)
    fs.pipe_file("pyt/pg/chunks", data)
    out = io.StringIO()
    fs.get_file("pyt/pg/chunks", str(tmp_path / "c"),
                progress={"file": out, "mininterval": 0})
    assert (tmp_path / "c").read_bytes() == data
    text = out.getvalue()
    assert "97.7k" in text and "100%" in text, text


def test_mkdir_makes_a_bucket(fs):
    fs.mkdir("newbkt")
    fs.pipe_file("newbkt/k", b"v")
    assert fs.cat_file("newbkt/k") == b"v"
    fs.rm("newbkt/k")
    fs.rmdir("newbkt")
    assert not fs.exists("newbkt")


def test_missing_keys_and_buckets(fs):
    with pytest.raises(FileNotFoundError):
        fs.cat_file("pyt/none")
    with pytest.raises(FileNotFoundError):
        fs.open("pyt/none", "rb")
    with pytest.raises(FileNotFoundError):
        fs.cat_file("nobucket/x")
    with pytest.raises(FileNotFoundError):
        fs.ls("nobucket")
    with pytest.raises(FileNotFoundError):
        fs.pipe_file("nobucket/x", b"1")


def test_permissions():
    """Signed requests: the right keys read, list and write; wrong ones
    are PermissionError (AccessDenied) on every kind of call."""
    s = Running("--access-key", "AK", "--secret-key", "SK", bucket=False)
    try:
        HipObjFileSystem.clear_instance_cache()
        good = fsspec.filesystem("hipobj", endpoint_url=s.url, key="AK",
                                 secret="SK", use_env=False)
        good.mkdir("sec")
        good.pipe_file("sec/a", b"secret")
        assert good.cat_file("sec/a") == b"secret"
        assert good.ls("sec", detail=False) == ["sec/a"]
        bad = fsspec.filesystem("hipobj", endpoint_url=s.url, key="AK",
                                secret="wrong", use_env=False)
        anon = fsspec.filesystem("hipobj", endpoint_url=s.url, anon=True,
                                 use_env=False)
        for f in (bad, anon):
            for call in (lambda: f.cat_file("sec/a"),
                         lambda: f.ls("sec"),
                         lambda: f.pipe_file("sec/b", b"x"),
                         lambda: f.open("sec/a").read()):
                with pytest.raises(PermissionError):
                    call()
        assert not good.exists("sec/b")
    finally:
        s.stop()


def test_pandas_round_trip(srv):
    pd = pytest.importorskip("pandas", reason="python3-pandas is not "
                             "installed (scripts/deps.sh)")
    opts = {"endpoint_url": srv.url, "use_env": False}
    df = pd.DataFrame({"a": range(1000), "b": [i * 0.5 for i in range(1000)],
                       "c": ["row%d" % i for i in range(1000)]})
    df.to_csv("hipobj://pyt/pd/t.csv", index=False, storage_options=opts)
    local = df.to_csv(index=False).encode()
    assert http_get(srv, "pyt/pd/t.csv") == local  # byte-identical
    back = pd.read_csv("hipobj://pyt/pd/t.csv", storage_options=opts)
    assert back.equals(df)
    assert back.equals(pd.read_csv(io.BytesIO(http_get(srv, "pyt/pd/t.csv"))))


def test_zarr_through_a_mapper(srv):
    zarr = pytest.importorskip("zarr", reason="python3-zarr is not installed "
                               "(scripts/deps.sh)")
    np = pytest.importorskip("numpy")
    HipObjFileSystem.clear_instance_cache()
    fs = fsspec.filesystem("hipobj", endpoint_url=srv.url, use_env=False)
    store = fs.get_mapper("pyt/zarr/a")
    a = np.arange(100_000, dtype=np.float32).reshape(250, 400)
    z = zarr.open(store, mode="w", shape=a.shape, chunks=(100, 100),
                  dtype="f4")
    z[:] = a
    back = zarr.open(fs.get_mapper("pyt/zarr/a"), mode="r")
    assert (back[:] == a).all() and (back[10:20, 390:] == a[10:20, 390:]).all()
    keys = sorted(fs.find("pyt/zarr/a"))
    assert "pyt/zarr/a/.zarray" in keys and "pyt/zarr/a/2.3" in keys
    for k in keys:  # every stored byte, through plain HTTP, is the same
        assert http_get(srv, k) == store[k[len("pyt/zarr/a/"):]]
    # a local zarr of the same array holds the same bytes
    local = zarr.storage.MemoryStore()
    z2 = zarr.open(local, mode="w", shape=a.shape, chunks=(100, 100),
                   dtype="f4")
    z2[:] = a
    assert all(local[k[len("pyt/zarr/a/"):]] == http_get(srv, k)
               for k in keys)


def test_a_client_per_process(fs):
    """A forked child never uses its parent's client."""
    import multiprocessing as mp
    fs.pipe_file("pyt/fork/x", b"forked")
    parent = fs.client
    q = mp.get_context("fork").Queue()

    def child():
        c = fs.client
        q.put((c is parent, fs.cat_file("pyt/fork/x")))
    p = mp.get_context("fork").Process(target=child)
    p.start()
    p.join(60)
    assert p.exitcode == 0
    assert q.get(timeout=5) == (False, b"forked")
    assert fs.client is parent
