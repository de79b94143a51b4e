# SPDX-License-Identifier: MIT
"""PyTorch distributed checkpoint (torch.distributed.checkpoint, DCP)
storage on S3 through hipObject:

    import torch.distributed.checkpoint as dcp
    from hipobj.dcp import StorageWriter, StorageReader
    dcp.save(model.state_dict(), storage_writer=StorageWriter(
        "s3://bucket/ckpt/step100", endpoint_url="http://host:9000"))
    sd = model.state_dict()        # tensors on the GPU, say
    dcp.load(sd, storage_reader=StorageReader("s3://bucket/ckpt/step100"))

Layout under the prefix: one object per rank, "__R_0.distcp", holding
that rank's items back to back (tensors as their raw bytes in memory
order, other values as torch.save bytes), and ".metadata", the pickled
DCP Metadata whose storage_data maps each item to (object, offset,
length), written by the coordinator.

read_data makes one ranged GET per item straight into the destination
tensor that the planner resolves, on the GPU or the host, when the item
covers the whole stored tensor and the destination is contiguous (RDMA
into GPU memory where the client can; the client stages the HTTP
fallback). A request for part of a stored tensor (resharding) reads the
stored tensor into a temporary on the destination's device and copies
the part. The reader runs `concurrency` (default 4) GETs at a time.
progress=True shows a tqdm bar over the bytes read or written.

Needs torch.distributed.checkpoint (PyTorch 2.x; Debian 12's torch 1.13
has none): importing this module without it raises ImportError."""
import dataclasses
import io
import pickle

import torch
from torch.distributed.checkpoint import (Metadata, StorageReader as _Reader,
                                          StorageWriter as _Writer)
from torch.distributed.checkpoint.planner import (LoadItemType,
                                                  WriteItemType)
from torch.distributed.checkpoint.storage import WriteResult
from torch.futures import Future

from . import _procs, _progress, _s3http
from ._core import InvalidArgument

METADATA = ".metadata"


@dataclasses.dataclass(frozen=True)
class Where:
    """Where an item's bytes are: the object (relative to the
    checkpoint's prefix), the offset in it and the length."""
    name: str
    offset: int
    length: int


def _prefix(url):
    s = str(url)
    for p in ("s3://", "hipobj://"):
        if s.startswith(p):
            s = s[len(p):]
    s = s.strip("/")
    if "/" not in s:
        raise InvalidArgument("a checkpoint needs a prefix inside a bucket: "
                              "'s3://BUCKET/PREFIX', not %r" % (url,))
    return s


class _Base:
    def __init__(self, url=None, *, endpoint_url=None, key=None, secret=None,
                 token=None, region=None, anon=False, use_env=True,
                 client_kwargs=None, progress=None):
        self.cfg = _s3http.Config(endpoint_url, key, secret, token, region,
                                  anon, use_env, client_kwargs)
        self.progress = progress
        self.prefix = _prefix(url) if url is not None else None

    @property
    def client(self):
        return _procs.client(self.cfg)

    def reset(self, checkpoint_id=None):
        if checkpoint_id is not None:
            self.prefix = _prefix(checkpoint_id)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id):
        s = str(checkpoint_id)
        return s.startswith("s3://") or s.startswith("hipobj://")

    def _url(self, name):
        if self.prefix is None:
            raise InvalidArgument("no checkpoint prefix: pass the URL or a "
                                  "checkpoint_id")
        return "%s/%s" % (self.prefix, name)


def _raw(t):
    """A contiguous host uint8 view of a tensor's bytes."""
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    t = t.contiguous()
    return t.reshape(-1).view(torch.uint8) if t.numel() else \
        torch.empty(0, dtype=torch.uint8)


class StorageWriter(_Base, _Writer):
    """DCP storage writer: each rank's items into one object by put_from
    (a multipart upload with parts in parallel above the part size)."""

    def set_up_storage_writer(self, is_coordinator, *args, **kw):
        self.is_coordinator = is_coordinator

    def prepare_local_plan(self, plan):
        return plan

    def prepare_global_plan(self, plans):
        return [dataclasses.replace(p, storage_data="__%d_" % i)
                for i, p in enumerate(plans)]

    def write_data(self, plan, planner):
        name = "%s0.distcp" % (plan.storage_data or "__0_")
        chunks, results, off = [], [], 0
        for item in plan.items:
            data = planner.resolve_data(item)
            if item.type == WriteItemType.BYTE_IO:
                b = data.getvalue() if isinstance(data, io.BytesIO) else \
                    bytes(data)
                raw = torch.frombuffer(bytearray(b), dtype=torch.uint8) \
                    if b else torch.empty(0, dtype=torch.uint8)
            else:
                raw = _raw(data)
            n = raw.numel()
            chunks.append(raw)
            results.append(WriteResult(index=item.index, size_in_bytes=n,
                                       storage_data=Where(name, off, n)))
            off += n
        blob = torch.cat(chunks) if chunks else torch.empty(0, dtype=torch.uint8)
        with _progress.bar(self.progress, off, "dcp save") as b:
            self.client.put_from(self._url(name), blob.numpy())
            b.update(off)
        fut = Future()
        fut.set_result(results)
        return fut

    def finish(self, metadata, results):
        storage = {}
        for rank in results:
            for r in rank:
                storage[r.index] = r.storage_data
        metadata.storage_data = storage
        blob = pickle.dumps(metadata)
        self.client.put_from(self._url(METADATA), blob)

    def storage_meta(self):
        return None


class StorageReader(_Base, _Reader):
    """DCP storage reader: one ranged GET per item, straight into the
    destination tensor when it can (see the module's doc), `concurrency`
    (default 4) at a time."""

    def __init__(self, url=None, *, concurrency=4, **kw):
        super().__init__(url, **kw)
        if concurrency < 1:
            raise InvalidArgument("concurrency must be >= 1")
        self.concurrency = concurrency

    def read_metadata(self):
        c = self.client
        url = self._url(METADATA)
        size = c.head(url)["size"]
        buf = bytearray(size)
        c.get_into(url, buf)
        return pickle.loads(bytes(buf))  # noqa: S301 (our own metadata)

    def set_up_storage_reader(self, metadata, is_coordinator, *args, **kw):
        self.storage_data = metadata.storage_data
        self.metadata = metadata

    def prepare_local_plan(self, plan):
        return plan

    def prepare_global_plan(self, plans):
        return plans

    def _get(self, where, target, offset=0, length=None):
        n = where.length if length is None else length
        if n:
            self.client.get_into(self._url(where.name), target,
                                 offset=where.offset + offset, length=n)

    def read_data(self, plan, planner):
        """Every item's bytes by one ranged GET, `concurrency` GETs at a
        time (threads; the transfers run without the GIL). The planner is
        called from this thread only: resolve_tensor for all items first,
        load_bytes and commit_tensor as their GETs finish."""
        from concurrent.futures import ThreadPoolExecutor
        total = sum(self.storage_data[r.storage_index].length
                    for r in plan.items)
        jobs = []
        for req in plan.items:
            where = self.storage_data[req.storage_index]
            if req.type == LoadItemType.BYTE_IO:
                jobs.append((req, where, None, bytearray(where.length)))
            else:
                jobs.append((req, where) + self._tensor_job(req, where,
                                                            planner))
        with _progress.bar(self.progress, total, "dcp load") as b, \
                ThreadPoolExecutor(self.concurrency) as pool:
            futs = [pool.submit(self._get, where, dst)
                    for _, where, _, dst in jobs]
            for (req, where, finish, dst), f in zip(jobs, futs):
                f.result()
                if finish is None:
                    planner.load_bytes(req, io.BytesIO(bytes(dst)))
                else:
                    finish()
                b.update(where.length)
        fut = Future()
        fut.set_result(None)
        return fut

    def _tensor_job(self, req, where, planner):
        """(finish, what to read into): the destination itself when the
        item is the whole stored tensor and the destination is contiguous,
        else a temporary on its device whose part finish() copies."""
        # the planner's destination: already narrowed to dest_offsets and
        # lengths, so its shape is req.lengths
        target = planner.resolve_tensor(req).detach()
        shape = self._stored_shape(req, target)
        whole = (all(o == 0 for o in req.storage_offsets) and
                 tuple(req.lengths) == shape and
                 target.numel() * target.element_size() == where.length)
        if whole and target.is_contiguous():
            return (lambda: planner.commit_tensor(req, target)), target
        tmp = torch.empty(where.length, dtype=torch.uint8,
                          device=target.device)

        def finish():
            src = tmp.view(target.dtype).reshape(shape)
            for dim, (o, n) in enumerate(zip(req.storage_offsets,
                                             req.lengths)):
                src = src.narrow(dim, o, n)
            target.copy_(src)
            planner.commit_tensor(req, target)
        return finish, tmp

    def _stored_shape(self, req, target):
        """The shape of the stored tensor or chunk the item reads from."""
        md = self.metadata.state_dict_metadata.get(req.storage_index.fqn)
        for c in getattr(md, "chunks", None) or ():
            if tuple(c.offsets) == tuple(req.storage_index.offset or ()):
                return tuple(c.sizes)
        size = getattr(md, "size", None)
        return tuple(size) if size is not None else tuple(target.shape)


__all__ = ["StorageWriter", "StorageReader", "Where"]
