# SPDX-License-Identifier: MIT
"""hipobj: S3 objects by RDMA into host buffers, NumPy arrays and GPU memory.

    import hipobj, numpy as np
    with hipobj.Client() as s3:                  # AWS_* environment
        a = s3.get_array("s3://bucket/weights.bin", dtype=np.float16)
        r = s3.put_from("s3://bucket/copy.bin", a)
        print(r.bytes, r.path)                   # 'rdma' or 'http'

The transfers are libhipobj_s3's (the C library of the hipobj command):
RDMA when hipObject is usable and the server accepts it, otherwise plain
HTTP, and the result says which. See docs/reference/python.md."""

from ._core import (  # noqa: F401
    AccessDenied, BufferTooSmall, Client, ConnectFailed, DeviceError, Error,
    HttpError, InvalidArgument, InvalidRange, NoSuchBucket, NoSuchKey,
    NotFound, OutOfMemory, ProtocolError, RdmaDeclined, RdmaFailed,
    RdmaUnavailable, TransferResult, library_version)
from ._array import get_array  # noqa: F401
from ._safetensors import (  # noqa: F401
    load_safetensors, read_safetensors_metadata, save_safetensors)

__version__ = "0.1.0"

Client.get_array = get_array
