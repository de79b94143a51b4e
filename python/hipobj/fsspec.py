# SPDX-License-Identifier: MIT
"""hipobj:// for fsspec, so pandas, zarr, xarray and Dask read and write
objects through hipObject.

    import pandas as pd
    df = pd.read_csv("hipobj://bucket/table.csv",
                     storage_options={"endpoint_url": "http://host:9000"})

Registered under the fsspec.specs entry point as "hipobj"; paths are
"bucket/key" (or hipobj://bucket/key). Storage options: endpoint_url, key,
secret, token, region, anon, use_env (default True: the AWS_* variables
fill what is not given, as hipobj.Client), client_kwargs (more
hipobj.Client arguments: rdma, require_rdma, part_size, concurrency, gpu,
nic...), progress (tqdm bars for get_file), default_block_size.

What moves the bytes: reads are ranged GETs by hipobj.Client.get_into
straight into the read buffer (RDMA when the client can, else plain HTTP);
files open for writing collect their blocks in a spooled temporary file
and send it on close with Client.put_from: one PUT, or above the client's
part size a multipart upload with parts in parallel. Listings, ls, info of
directories and mkdir of buckets are plain signed HTTP (_s3http).
Every process (a forked DataLoader worker too) gets its own client."""
import mmap
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor

from fsspec.spec import AbstractBufferedFile, AbstractFileSystem

from . import _procs, _progress, _s3http
from ._core import NotFound

GET_CHUNK = 64 << 20


def _split(path):
    path = path.lstrip("/")
    bucket, _, key = path.partition("/")
    return bucket, key


class HipObjFileSystem(AbstractFileSystem):
    """An fsspec filesystem over one S3 endpoint, payloads by hipObject."""

    protocol = ("hipobj",)
    root_marker = ""

    def __init__(self, endpoint_url=None, key=None, secret=None, token=None,
                 region=None, anon=False, use_env=True, client_kwargs=None,
                 progress=None, default_block_size=None, **kwargs):
        super().__init__(**kwargs)
        self.cfg = _s3http.Config(endpoint_url, key, secret, token, region,
                                  anon, use_env, client_kwargs)
        self.progress = progress
        self.blocksize = default_block_size or AbstractBufferedFile.DEFAULT_BLOCK_SIZE

    # -- plumbing --------------------------------------------------------
    @property
    def client(self):
        """This process's hipobj.Client for the filesystem's endpoint."""
        return _procs.client(self.cfg)

    @classmethod
    def _strip_protocol(cls, path):
        if isinstance(path, list):
            return [cls._strip_protocol(p) for p in path]
        path = str(path)
        for p in ("hipobj://", "hipobj::"):
            if path.startswith(p):
                path = path[len(p):]
        return path.strip("/")

    def unstrip_protocol(self, name):
        return "hipobj://" + name

    @staticmethod
    def _get_kwargs_from_urls(path):
        return {}

    # -- reading ---------------------------------------------------------
    def _range(self, path, start, end, size=None):
        """[start, end) of the object, negative and open bounds resolved
        against its size, clamped to it."""
        if start is None:
            start = 0
        if end is None or start < 0 or end < 0:
            size = self.size(path) if size is None else size
        if start < 0:
            start = max(size + start, 0)
        if end is None:
            end = size
        elif end < 0:
            end = max(size + end, 0)
        if size is not None:
            start, end = min(start, size), min(end, size)
        return start, max(end, start)

    def _get_bytes(self, path, start, n):
        buf = bytearray(n)
        if n:
            r = self.client.get_into(path, buf, offset=start, length=n)
            if r.bytes != n:  # a range past the end: the object is shorter
                del buf[r.bytes:]
        return bytes(buf)

    def cat_file(self, path, start=None, end=None, **kwargs):
        path = self._strip_protocol(path)
        if start is None and end is None:
            size = self.size(path)
            return self._get_bytes(path, 0, size)
        info_size = None
        if start is not None and start >= 0 and end is not None and end >= 0:
            # no HEAD: a range past the end comes back short (InvalidRange
            # when it starts past the end: an empty result)
            if end <= start:
                return b""
            try:
                return self._get_bytes(path, start, end - start)
            except ValueError as e:  # InvalidRange
                if type(e).__name__ != "InvalidRange":
                    raise
                info_size = self.size(path)
        start, end = self._range(path, start, end, info_size)
        return self._get_bytes(path, start, end - start)

    def cat_ranges(self, paths, starts, ends, max_gap=None, on_error="return",
                   **kwargs):
        if not (len(paths) == len(starts) == len(ends)):
            raise ValueError("paths, starts and ends must be as long")

        def one(i):
            try:
                return self.cat_file(paths[i], starts[i], ends[i])
            except Exception as e:  # noqa: BLE001 (fsspec's contract)
                if on_error == "raise":
                    raise
                return e
        n = len(paths)
        if n <= 1:
            return [one(i) for i in range(n)]
        with ThreadPoolExecutor(min(n, 8)) as pool:
            return list(pool.map(one, range(n)))

    def cat(self, path, recursive=False, on_error="raise", **kwargs):
        """fsspec's cat, with the objects of a list of paths read up to 8
        at a time on threads (zarr's and FSMap.getitems' many chunks)."""
        if not isinstance(path, list) or recursive or len(path) < 2 or \
                any(glob in p for p in path for glob in "*?["):
            return super().cat(path, recursive=recursive, on_error=on_error,
                               **kwargs)
        paths = [self._strip_protocol(p) for p in path]

        def one(p):
            try:
                return self.cat_file(p, **kwargs)
            except Exception as e:  # noqa: BLE001 (fsspec's contract)
                if on_error == "raise":
                    raise
                return e
        with ThreadPoolExecutor(min(len(paths), 8)) as pool:
            got = list(pool.map(one, paths))
        return {p: v for p, v in zip(paths, got)
                if not (on_error == "omit" and isinstance(v, Exception))}

    def _open(self, path, mode="rb", block_size=None, autocommit=True,
              cache_options=None, **kwargs):
        if mode not in ("rb", "wb"):
            raise NotImplementedError("hipobj:// files open 'rb' or 'wb' "
                                      "(objects are written whole)")
        return HipObjFile(self, path, mode, block_size or self.blocksize,
                          autocommit, cache_options=cache_options, **kwargs)

    def get_file(self, rpath, lpath, callback=None, outfile=None,
                 progress=None, **kwargs):
        """Copy an object to a local file, in 64 MiB ranged GETs into one
        reused buffer; a tqdm bar with progress=True (or the
        filesystem's progress option)."""
        rpath = self._strip_protocol(rpath)
        if os.path.isdir(lpath):
            return
        size = self.size(rpath)
        if callback is not None:
            callback.set_size(size)
        buf = bytearray(min(size, GET_CHUNK))
        view = memoryview(buf)
        f = outfile if outfile is not None else open(lpath, "wb")
        try:
            with _progress.bar(self.progress if progress is None
                               else progress, size, rpath) as b:
                done = 0
                while done < size:
                    n = min(size - done, len(buf))
                    self.client.get_into(rpath, view[:n], offset=done,
                                         length=n)
                    f.write(view[:n])
                    done += n
                    b.update(n)
                    if callback is not None:
                        callback.relative_update(n)
        finally:
            view.release()
            if outfile is None:
                f.close()

    # -- writing ---------------------------------------------------------
    def put_file(self, lpath, rpath, callback=None, **kwargs):
        """Copy a local file to an object: the file mapped into memory and
        sent with Client.put_from (a multipart upload above the part
        size)."""
        rpath = self._strip_protocol(rpath)
        if os.path.isdir(lpath):
            self.makedirs(rpath, exist_ok=True)
            return
        with open(lpath, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if callback is not None:
                callback.set_size(size)
            if size == 0:
                self.client.put_from(rpath, b"")
            else:
                with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                    self.client.put_from(rpath, m)
            if callback is not None:
                callback.relative_update(size)
        self.invalidate_cache(rpath)

    def pipe_file(self, path, value, **kwargs):
        self.client.put_from(self._strip_protocol(path), bytes(value))
        self.invalidate_cache(path)

    def rm_file(self, path):
        path = self._strip_protocol(path)
        bucket, key = _split(path)
        if key:
            self.client.delete(path)
        self.invalidate_cache(path)

    def _rm(self, path):
        self.rm_file(path)

    def rm(self, path, recursive=False, maxdepth=None):
        paths = self.expand_path(path, recursive=recursive, maxdepth=maxdepth)
        found = False
        for p in reversed(paths):
            bucket, key = _split(p)
            try:
                kind = self.info(p)["type"]
            except FileNotFoundError:
                continue
            found = True
            if key and kind == "file":
                self.client.delete(p)
        self.invalidate_cache()
        if not found:
            raise FileNotFoundError(path)

    def mkdir(self, path, create_parents=True, **kwargs):
        """A bucket path creates the bucket; a key prefix needs nothing
        (object stores have no directories)."""
        bucket, key = _split(self._strip_protocol(path))
        if not key and bucket and not self._bucket_exists(bucket):
            _s3http.create_bucket(self.cfg, bucket)

    def makedirs(self, path, exist_ok=False):
        self.mkdir(path)

    def rmdir(self, path):
        bucket, key = _split(self._strip_protocol(path))
        if not key:
            _s3http.delete_bucket(self.cfg, bucket)

    # -- listing ---------------------------------------------------------
    def _bucket_exists(self, bucket):
        try:
            for _ in _s3http.list_objects(self.cfg, bucket, max_keys=1):
                break
            return True
        except NotFound:
            return False

    def ls(self, path, detail=True, **kwargs):
        path = self._strip_protocol(path)
        bucket, key = _split(path)
        if not bucket:
            out = [{"name": b, "size": 0, "type": "directory"}
                   for b in _s3http.list_buckets(self.cfg)]
            return out if detail else [o["name"] for o in out]
        prefix = key + "/" if key else ""
        out = []
        for kind, name, size, etag, mtime in _s3http.list_objects(
                self.cfg, bucket, prefix, "/"):
            if kind == "dir":
                out.append({"name": bucket + "/" + name.rstrip("/"),
                            "size": 0, "type": "directory"})
            elif name != prefix:  # not the prefix's own marker object
                out.append({"name": bucket + "/" + name, "size": size,
                            "type": "file", "ETag": etag,
                            "LastModified": mtime})
        if not out and key:
            # a file, not a directory: ls of a file lists the file
            try:
                out = [self.info(path)]
            except FileNotFoundError:
                pass
            if not out or out[0]["type"] != "file":
                raise FileNotFoundError(path)
        out.sort(key=lambda o: o["name"])
        return out if detail else [o["name"] for o in out]

    def info(self, path, **kwargs):
        path = self._strip_protocol(path)
        bucket, key = _split(path)
        if not bucket:
            return {"name": "", "size": 0, "type": "directory"}
        if not key:
            if self._bucket_exists(bucket):
                return {"name": bucket, "size": 0, "type": "directory"}
            raise FileNotFoundError(path)
        try:
            h = self.client.head(path)
            return {"name": path, "size": h["size"], "type": "file",
                    "ETag": h["etag"].strip('"')}
        except NotFound:
            pass
        for _ in _s3http.list_objects(self.cfg, bucket, key.rstrip("/") + "/",
                                      max_keys=1):
            return {"name": path, "size": 0, "type": "directory"}
        raise FileNotFoundError(path)

    def exists(self, path, **kwargs):
        try:
            self.info(path)
            return True
        except FileNotFoundError:
            return False

    def checksum(self, path):
        return int(self.info(path).get("ETag", "0")[:16] or "0", 16)


class HipObjFile(AbstractBufferedFile):
    """A file of HipObjFileSystem: reads by ranged GETs into the read
    buffer, writes collected in a spooled temporary file and sent on close
    (put_from: a multipart upload above the client's part size)."""

    SPOOL_MEMORY = 64 << 20

    def _fetch_range(self, start, end):
        end = min(end, self.size)
        if end <= start:
            return b""
        return self.fs._get_bytes(self.path, start, end - start)

    def _initiate_upload(self):
        self._spool = tempfile.SpooledTemporaryFile(self.SPOOL_MEMORY)

    def _upload_chunk(self, final=False):
        if not hasattr(self, "_spool"):
            self._initiate_upload()
        self._spool.write(self.buffer.getvalue())
        if final and self.autocommit:
            self.commit()
        return True

    def commit(self):
        sp = self._spool
        size = sp.tell()
        if size == 0:
            self.fs.client.put_from(self.path, b"")
        elif sp._rolled:  # on disk: map it
            sp.flush()
            with mmap.mmap(sp.fileno(), size, access=mmap.ACCESS_READ) as m:
                self.fs.client.put_from(self.path, m)
        else:
            mem = sp._file.getbuffer()
            try:
                self.fs.client.put_from(self.path, mem[:size])
            finally:
                mem.release()
        sp.close()
        self.fs.invalidate_cache(self.path)

    def discard(self):
        if hasattr(self, "_spool"):
            self._spool.close()
