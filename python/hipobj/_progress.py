# SPDX-License-Identifier: MIT
"""Progress bars for long work (load_safetensors, the DCP reader, the
fsspec filesystem's get_file): a tqdm bar in bytes, with the rate, when
tqdm is installed and the caller asks (progress=True, or a dict of tqdm
options), or when HIPOBJ_PROGRESS=1 and the caller left progress=None.
Without tqdm, asking is not an error: the work runs without a bar."""
import os


class _NoBar:
    def update(self, n):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def wanted(progress):
    if progress is None:
        return os.environ.get("HIPOBJ_PROGRESS") == "1"
    return bool(progress)


def bar(progress, total, desc):
    """A context manager with update(bytes): tqdm's, or one that does
    nothing."""
    if not wanted(progress):
        return _NoBar()
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _NoBar()
    opts = dict(total=total, desc=desc, unit="B", unit_scale=True,
                unit_divisor=1024, dynamic_ncols=True)
    if isinstance(progress, dict):
        opts.update(progress)
    return tqdm(**opts)


CHUNK = 64 << 20


def chunked_get(client, url, buf, offset, n, update, chunk=None, threads=4):
    """Read bytes [offset, offset+n) of url into buf[0:n] as ranges of
    `chunk` bytes, `threads` at a time, calling update(bytes) after each
    (from this thread)."""
    from concurrent.futures import ThreadPoolExecutor
    chunk = chunk or CHUNK

    def one(pos):
        k = min(chunk, n - pos)
        client.get_into(url, buf[pos:pos + k], offset=offset + pos, length=k)
        return k
    with ThreadPoolExecutor(threads) as pool:
        for k in pool.map(one, range(0, n, chunk)):
            update(k)
