# SPDX-License-Identifier: MIT
"""load_safetensors / save_safetensors: the .safetensors format, parsed
here. An object is an 8-byte little-endian header length N, N bytes of
JSON ({"name": {"dtype", "shape", "data_offsets": [begin, end]}, ...,
optionally "__metadata__": {str: str}}), then the tensors' raw bytes; the
offsets count from the end of the header.

Loading reads the header with two ranged GETs and then every tensor's
bytes with one GET of the data region into one allocation (the client
splits it into parallel ranges above its part size); the tensors are views
of that allocation."""
import json
import struct
import threading

from . import _progress
from ._core import Client, InvalidArgument, ProtocolError

MAX_HEADER = 100 << 20

# safetensors dtype -> (numpy name, torch name, item size)
DTYPES = {
    "F64": ("float64", "float64", 8), "F32": ("float32", "float32", 4),
    "F16": ("float16", "float16", 2), "BF16": (None, "bfloat16", 2),
    "I64": ("int64", "int64", 8), "I32": ("int32", "int32", 4),
    "I16": ("int16", "int16", 2), "I8": ("int8", "int8", 1),
    "U8": ("uint8", "uint8", 1), "BOOL": ("bool", "bool", 1),
    "U16": ("uint16", None, 2), "U32": ("uint32", None, 4),
    "U64": ("uint64", None, 8),
}

_default = None
_default_lock = threading.Lock()


def _client(client):
    global _default
    if client is not None:
        return client
    with _default_lock:
        if _default is None or _default.closed:
            _default = Client()
        return _default


def parse_header(blob, data_size):
    """{name: (dtype, shape, begin, end)} and the metadata, checked: known
    dtypes, sizes that match the shapes, offsets inside the data."""
    try:
        header = json.loads(blob.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ProtocolError("safetensors header is not JSON: %s" % e) from e
    if not isinstance(header, dict):
        raise ProtocolError("safetensors header is not a JSON object")
    meta = header.pop("__metadata__", None)
    out = {}
    for name, d in header.items():
        try:
            dtype, shape, (begin, end) = d["dtype"], d["shape"], d["data_offsets"]
            item = DTYPES[dtype][2]
            count = 1
            for n in shape:
                if not isinstance(n, int) or n < 0:
                    raise ValueError("shape")
                count *= n
        except (KeyError, TypeError, ValueError) as e:
            raise ProtocolError("safetensors entry %r is malformed or has an "
                                "unknown dtype (%s)" % (name, e)) from e
        if not (isinstance(begin, int) and isinstance(end, int) and
                0 <= begin <= end <= data_size and end - begin == count * item):
            raise ProtocolError("safetensors entry %r: offsets [%r, %r] do not "
                                "fit its shape or the data (%d bytes)"
                                % (name, begin, end, data_size))
        out[name] = (dtype, tuple(shape), begin, end)
    return out, meta


def _read_header(c, url):
    size = c.head(url)["size"]
    if size < 8:
        raise ProtocolError("%s has %d bytes: not a safetensors object" % (url, size))
    head = bytearray(8)
    c.get_into(url, head, offset=0, length=8)
    (n,) = struct.unpack("<Q", head)
    if n > MAX_HEADER or n > size - 8:
        raise ProtocolError("%s: safetensors header length %d is impossible "
                            "(object of %d bytes)" % (url, n, size))
    blob = bytearray(n)
    if n:
        c.get_into(url, blob, offset=8, length=n)
    entries, meta = parse_header(bytes(blob), size - 8 - n)
    return size, 8 + n, entries, meta


def _framework(device, framework):
    if framework is None:
        framework = "numpy" if str(device) == "cpu" else "torch"
    if framework not in ("numpy", "torch"):
        raise InvalidArgument("framework must be 'numpy' or 'torch'")
    if framework == "numpy" and str(device) != "cpu":
        raise InvalidArgument("NumPy arrays live on the CPU: device='cpu'")
    return framework


def load_safetensors(url, device="cpu", client=None, framework=None,
                     progress=None):
    """load_safetensors(url, device='cpu', client=None, framework=None,
                        progress=None) -> dict

    Read a .safetensors object into one allocation and return
    {name: tensor}, each a view of it. device 'cpu' gives NumPy arrays
    (framework='torch' gives torch tensors); 'cuda', 'cuda:N' or a
    torch.device give torch tensors in that GPU's memory, read straight
    into it by RDMA (staged through host memory on the HTTP fallback).
    client: a hipobj.Client, else a shared one from the environment. The
    header's __metadata__: read_safetensors_metadata(url).
    progress: True (or a dict of tqdm options) shows a tqdm bar of the
    bytes and the rate when tqdm is installed; the data is then read as
    64 MiB ranges, four at a time, so the bar moves. None: as the
    HIPOBJ_PROGRESS variable says ('1': a bar). Raises ProtocolError for
    a malformed header, and as Client.get_into."""
    c = _client(client)
    fw = _framework(device, framework)
    size, start, entries, _ = _read_header(c, url)
    n = size - start
    if fw == "numpy":
        import numpy as np
        buf = np.empty(n, dtype=np.uint8)
    else:
        import torch
        buf = torch.empty(n, dtype=torch.uint8, device=device)
    if n and _progress.wanted(progress):
        with _progress.bar(progress, n, url.rsplit("/", 1)[-1]) as b:
            _progress.chunked_get(c, url, buf, start, n, b.update)
    elif n:
        c.get_into(url, buf, offset=start, length=n)
    return {name: _view(fw, buf, *e) for name, e in entries.items()}


def read_safetensors_metadata(url, client=None):
    """The header's __metadata__ (a dict of str, or None): two small GETs."""
    return _read_header(_client(client), url)[3]


def _view(fw, buf, dtype, shape, begin, end):
    np_name, torch_name, _ = DTYPES[dtype]
    if fw == "numpy":
        if np_name is None:
            raise InvalidArgument("%s has no NumPy type: use framework='torch'"
                                  % dtype)
        return buf[begin:end].view(np_name).reshape(shape)
    import torch
    if torch_name is None:
        raise InvalidArgument("%s has no torch type" % dtype)
    return buf[begin:end].view(getattr(torch, torch_name)).reshape(shape)


def _as_bytes(t):
    """(safetensors dtype, shape, a uint8 NumPy view of a host copy)."""
    import numpy as np
    if hasattr(t, "detach") and hasattr(t, "element_size"):  # torch
        name = str(t.dtype).replace("torch.", "")
        dtype = {v[1]: k for k, v in DTYPES.items() if v[1]}.get(name)
        if dtype is None:
            raise InvalidArgument("torch dtype %s has no safetensors type" % name)
        host = t.detach().to("cpu").contiguous()
        raw = host.view(-1).view(__import__("torch").uint8).numpy()
        return dtype, tuple(t.shape), raw
    a = np.asarray(t)  # not ascontiguousarray: it makes scalars 1-D
    if not a.flags.c_contiguous:
        a = a.copy(order="C")
    dtype = {v[0]: k for k, v in DTYPES.items() if v[0]}.get(a.dtype.name)
    if dtype is None:
        raise InvalidArgument("NumPy dtype %s has no safetensors type" % a.dtype)
    return dtype, a.shape, a.reshape(-1).view(np.uint8)


def save_safetensors(tensors, url, client=None, metadata=None):
    """save_safetensors(tensors, url, client=None, metadata=None) -> TransferResult

    Write {name: NumPy array or torch tensor} as a .safetensors object:
    tensors in name order, the header padded to 8 bytes. The bytes are
    gathered into one host buffer and written with put_from (a multipart
    upload, parts in parallel, above the client's part size)."""
    import numpy as np
    parts, header, off = [], {}, 0
    for name in sorted(tensors):
        dtype, shape, raw = _as_bytes(tensors[name])
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [off, off + raw.size]}
        parts.append(raw)
        off += raw.size
    if metadata is not None:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)
    out = np.empty(8 + len(blob) + off, dtype=np.uint8)
    out[:8] = np.frombuffer(struct.pack("<Q", len(blob)), dtype=np.uint8)
    out[8:8 + len(blob)] = np.frombuffer(blob, dtype=np.uint8)
    pos = 8 + len(blob)
    for raw in parts:
        out[pos:pos + raw.size] = raw
        pos += raw.size
    return _client(client).put_from(url, out)
