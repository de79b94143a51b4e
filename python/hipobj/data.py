# SPDX-License-Identifier: MIT
"""PyTorch datasets over the objects under an S3 prefix, for DataLoader.

    from hipobj.data import MapDataset, IterableDataset
    ds = MapDataset("s3://bucket/train/", endpoint_url="http://host:9000")
    for key, data in torch.utils.data.DataLoader(ds, num_workers=2): ...

MapDataset: one object per sample, in key order; ds[i] reads object i.
IterableDataset: the objects in key order, each either one sample or, with
record_size, a shard of fixed-size records read by ranged GETs of
read_size bytes; DataLoader workers take every num_workers-th object.

A sample is transform((key, data)); data is a torch.uint8 tensor (a NumPy
array with framework='numpy'). Buffers: by default each sample gets a new
host tensor. reuse=True reads every sample of a process into one buffer
(grown when a larger object comes, pinned with pin_memory=True), so data
is a view that the next sample overwrites: the transform must consume it
(decode, copy) before returning. device='cuda' reads straight into one
reused GPU buffer (RDMA into GPU memory where the client can), for use
in the main process (num_workers=0): CUDA does not survive fork.

The listing is made once, in the process that builds the dataset, over
plain signed HTTP: no hipobj.Client there. Each process (each DataLoader
worker after fork) opens its own client on its first sample (hipobj
._procs), so registrations never cross a fork."""
from . import _procs, _s3http
from ._core import InvalidArgument

try:
    import torch
    from torch.utils.data import Dataset as _MapBase
    from torch.utils.data import IterableDataset as _IterBase
except ImportError:  # pragma: no cover: the datasets need torch
    torch = None
    _MapBase = _IterBase = object


def _split_url(url):
    s = str(url)
    for p in ("s3://", "hipobj://"):
        if s.startswith(p):
            s = s[len(p):]
    bucket, _, prefix = s.lstrip("/").partition("/")
    if not bucket:
        raise InvalidArgument("not a prefix: %r (expected "
                              "'s3://BUCKET/PREFIX')" % (url,))
    return bucket, prefix


class _Reader:
    """What both datasets share: the listing, the storage options, the
    per-process client and the buffers."""

    def __init__(self, url, transform=None, *, endpoint_url=None, key=None,
                 secret=None, token=None, region=None, anon=False,
                 use_env=True, client_kwargs=None, framework="torch",
                 device="cpu", reuse=False, pin_memory=False, keys=None):
        if framework not in ("torch", "numpy"):
            raise InvalidArgument("framework must be 'torch' or 'numpy'")
        if framework == "torch" and torch is None:
            raise InvalidArgument("the datasets need torch (python3-torch)")
        if framework == "numpy" and str(device) != "cpu":
            raise InvalidArgument("NumPy arrays live on the CPU: device='cpu'")
        self.cfg = _s3http.Config(endpoint_url, key, secret, token, region,
                                  anon, use_env, client_kwargs)
        self.bucket, self.prefix = _split_url(url)
        self.transform = transform
        self.framework = framework
        self.device = str(device)
        self.reuse = bool(reuse) or self.device != "cpu"
        self.pin_memory = bool(pin_memory)
        if keys is None:
            self.objects = [(k, size) for kind, k, size, _, _ in
                            _s3http.list_objects(self.cfg, self.bucket,
                                                 self.prefix)
                            if kind == "file"]
        else:
            self.objects = [(k, None) for k in keys]
        self._buf = None
        self._buf_pid = None

    def __getstate__(self):
        d = dict(self.__dict__)
        d["_buf"] = None  # buffers are per process
        return d

    @property
    def client(self):
        return _procs.client(self.cfg)

    def _alloc(self, n):
        if self.framework == "numpy":
            import numpy as np
            return np.empty(n, dtype=np.uint8)
        return torch.empty(n, dtype=torch.uint8, device=self.device,
                           pin_memory=self.pin_memory and self.device == "cpu")

    def _buffer(self, n):
        """n bytes to read into: a new allocation, or the process's reused
        buffer (grown to fit), as a view of n bytes."""
        import os
        if not self.reuse:
            return self._alloc(n)
        if self._buf is None or self._buf_pid != os.getpid() or \
                len(self._buf) < n:
            self._buf = self._alloc(max(n, 1))
            self._buf_pid = os.getpid()
        return self._buf[:n]

    def _read(self, key, size=None, offset=0, length=None):
        url = "%s/%s" % (self.bucket, key)
        c = self.client
        if length is None:
            if size is None:
                size = c.head(url)["size"]
            length, offset = size - offset, offset
        out = self._buffer(length)
        if length:
            c.get_into(url, out, offset=offset, length=length)
        return out

    def _sample(self, key, data):
        s = (key, data)
        return self.transform(s) if self.transform else s


class MapDataset(_Reader, _MapBase):
    """One object per sample; ds[i] is transform((key, data))."""

    def __len__(self):
        return len(self.objects)

    def __getitem__(self, i):
        key, size = self.objects[i]
        return self._sample(key, self._read(key, size))


class IterableDataset(_Reader, _IterBase):
    """The objects under a prefix, split between DataLoader workers; each
    object one sample, or with record_size a shard of records."""

    def __init__(self, url, transform=None, *, record_size=None,
                 read_size=8 << 20, shuffle_seed=None, **kw):
        super().__init__(url, transform, **kw)
        if record_size is not None and record_size <= 0:
            raise InvalidArgument("record_size must be > 0")
        self.record_size = record_size
        self.read_size = max(read_size, record_size or 1)
        self.shuffle_seed = shuffle_seed

    def _mine(self):
        objs = list(self.objects)
        if self.shuffle_seed is not None:
            import random
            random.Random(self.shuffle_seed).shuffle(objs)
        info = torch.utils.data.get_worker_info() if torch else None
        if info is None:
            return objs
        return objs[info.id::info.num_workers]

    def __iter__(self):
        for key, size in self._mine():
            if self.record_size is None:
                yield self._sample(key, self._read(key, size))
                continue
            if size is None:
                size = self.client.head("%s/%s" % (self.bucket, key))["size"]
            rs = self.record_size
            if size % rs:
                raise InvalidArgument("%s has %d bytes: not a whole number "
                                      "of %d-byte records" % (key, size, rs))
            step = self.read_size // rs * rs
            for off in range(0, size, step):
                n = min(step, size - off)
                chunk = self._read(key, offset=off, length=n)
                for r in range(0, n, rs):
                    yield self._sample(key, chunk[r:r + rs])
