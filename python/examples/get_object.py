#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Read an S3 object into memory with hipObject, showing a progress bar,
and write it to a file (or load a .safetensors checkpoint onto a device).

    get_object.py s3://BUCKET/KEY FILE
    get_object.py --checkpoint s3://BUCKET/model.safetensors [--device cuda:0]

The endpoint and keys come from the environment (AWS_ENDPOINT_URL, ...)."""
import argparse
import sys
import threading
import time

import hipobj


class ProgressBar:
    """progress(done, total) for hipobj.Client: called from worker threads,
    so it takes a lock; it never cancels (returns False)."""

    def __init__(self, out=sys.stderr, width=30):
        self.out, self.width = out, width
        self.lock = threading.Lock()
        self.start = time.monotonic()

    def __call__(self, done, total):
        with self.lock:
            frac = done / total if total else 1.0
            fill = int(frac * self.width)
            rate = done / max(time.monotonic() - self.start, 1e-9) / 2**20
            self.out.write("\r[%s%s] %3d%% %8.1f MiB/s" % (
                "#" * fill, " " * (self.width - fill), frac * 100, rate))
            if done == total:
                self.out.write("\n")
            self.out.flush()
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("url")
    ap.add_argument("file", nargs="?")
    ap.add_argument("--checkpoint", action="store_true",
                    help="load a .safetensors object and list its tensors")
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    with hipobj.Client(progress=ProgressBar()) as s3:
        if a.checkpoint:
            state = hipobj.load_safetensors(a.url, device=a.device, client=s3)
            for name, t in sorted(state.items()):
                print("%-40s %-10s %s" % (name, t.dtype, tuple(t.shape)))
            return 0
        if not a.file:
            ap.error("FILE is needed without --checkpoint")
        size = s3.head(a.url)["size"]
        buf = bytearray(size)
        r = s3.get_into(a.url, buf)
        with open(a.file, "wb") as f:
            f.write(buf)
        print("%s -> %s: %d bytes via %s%s" % (
            a.url, a.file, r.bytes, r.path,
            " (%s)" % r.message if r.fell_back else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except hipobj.Error as e:
        print("get_object: %s" % e, file=sys.stderr)
        sys.exit(1)
