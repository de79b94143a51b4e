# SPDX-License-Identifier: MIT
"""python/tests' round trips over real verbs: run by tests/vm/cases/
t30_python.sh in the Soft-RoCE VM, against hipobj-test-server on rxe0
(started with --min-part-size 1K). No pytest there: plain checks, exit 0,
1, or 77 (skip, with the reason) when the client cannot use RDMA at all.

Every transfer is checked three ways: every byte compared; the result says
path 'rdma' with no HTTP part; and the server's /_hipobj/stats moved by
exactly the transfer: "rdma" get/put requests and bytes_out/bytes_in, and
"http" bytes 0 (the HTTP counters count object payload only).

    rdma_roundtrips.py ENDPOINT [--path http]
--path http: the same checks expecting plain HTTP (a host without an RDMA
device: the payload's smoke test)."""
import json
import os
import random
import sys
import threading
import time
import urllib.request

import numpy as np

import hipobj

SKIP = 77
MiB = 1 << 20
SETTLE_S = 10


class Failure(Exception):
    pass


class Run:
    def __init__(self, url, path):
        self.url = url
        self.path = path
        self.checks = 0
        self.lagged = 0  # counter reads that had to wait for the server
        self.times = []

    def ok(self, cond, what):
        if not cond:
            raise Failure(what)
        self.checks += 1

    def eq(self, got, want, what):
        if got != want:
            raise Failure("%s: got %r, want %r" % (what, got, want))
        self.checks += 1

    def stats(self):
        with urllib.request.urlopen(self.url + "/_hipobj/stats") as r:
            return json.loads(r.read())

    def client(self, **kw):
        kw.setdefault("use_env", False)
        if self.path == "rdma":
            kw.setdefault("require_rdma", True)
            kw.setdefault("nic", os.environ.get("RXE_DEV") or None)
        else:
            kw.setdefault("rdma", False)
        return hipobj.Client(self.url, **kw)

    def timed(self, fn, *args):
        t0 = time.monotonic()
        r = fn(*args)
        self.times.append("%s %.1f s" % (fn.__name__, time.monotonic() - t0))
        return r

    def settled(self, before, done):
        """The server's counters since before, once done(deltas) holds, or
        as they are after SETTLE_S. The test server counts an RDMA transfer
        (completed, bytes) when its engine reports it done, which can be
        just after the client has the final message and returns."""
        deadline = time.monotonic() + SETTLE_S
        while True:
            after = self.stats()
            d = {sec: {k: after[sec][k] - before[sec][k] for k in after[sec]}
                 for sec in ("rdma", "http")}
            if done(d) or time.monotonic() > deadline:
                return d
            self.lagged += 1
            time.sleep(0.01)

    def moved(self, before, what, get=0, put=0, out=0, into=0):
        """The server's counters moved by exactly this: get/put RDMA
        requests, bytes out (GET) and in (PUT), by the expected path."""
        if self.path == "rdma":
            d = self.settled(before, lambda d: (
                d["rdma"]["get"], d["rdma"]["put"], d["rdma"]["bytes_out"],
                d["rdma"]["bytes_in"], d["rdma"]["completed"]) ==
                (get, put, out, into, get + put))
        else:
            d = self.settled(before, lambda d: True)
        if self.path == "rdma":
            self.eq((d["rdma"]["get"], d["rdma"]["put"],
                     d["rdma"]["bytes_out"], d["rdma"]["bytes_in"]),
                    (get, put, out, into),
                    what + ": rdma get, put, bytes_out, bytes_in")
            self.eq((d["rdma"]["completed"], d["rdma"]["declined"],
                     d["rdma"]["failures"], d["rdma"]["bad_tokens"]),
                    (get + put, 0, 0, 0),
                    what + ": rdma completed, declined, failures, bad_tokens")
            self.eq((d["http"]["bytes_out"], d["http"]["bytes_in"]), (0, 0),
                    what + ": http bytes_out, bytes_in")
        else:
            self.eq((d["rdma"]["bytes_out"], d["rdma"]["bytes_in"]), (0, 0),
                    what + ": rdma bytes")
            self.eq((d["http"]["bytes_out"], d["http"]["bytes_in"]),
                    (out, into), what + ": http bytes_out, bytes_in")

    def result(self, r, what, n, parts=1):
        self.eq(r.bytes, n, what + ": bytes")
        self.eq(r.path, self.path, what + ": path")
        if self.path == "rdma":
            self.eq((r.parts_rdma, r.parts_http, r.fell_back,
                     r.fallback_reason), (parts, 0, False, None),
                    what + ": parts_rdma, parts_http, fell_back, reason")


def pattern(n, seed):
    return random.Random(seed).randbytes(n)


def make_bucket(url, name):
    req = urllib.request.Request("%s/%s" % (url, name), data=b"",
                                 method="PUT")
    urllib.request.urlopen(req).close()


def round_trips(t, c):
    """Every host buffer kind, GET and PUT, 1 B to a few MiB (each kind
    at one of the two large sizes: under TCG the bytes cost)."""
    sizes = [1, 2, 4095, 4096, 65537, MiB, 4 * MiB + 3]
    large = {MiB: ("bytes", "bytearray"),
             4 * MiB + 3: ("memoryview", "numpy-u8")}
    for n in sizes:
        data = pattern(n, n)
        kinds = [
            ("bytes", lambda: data, lambda: bytearray(n)),
            ("bytearray", lambda: bytearray(data), lambda: bytearray(n)),
            ("memoryview", lambda: memoryview(bytearray(data)),
             lambda: memoryview(bytearray(n))),
            ("numpy-u8", lambda: np.frombuffer(data, dtype=np.uint8),
             lambda: np.zeros(n, dtype=np.uint8)),
        ]
        for kind, src, dst in kinds:
            if kind not in large.get(n, (kind,)):
                continue
            key = "pyt/%s-%d" % (kind, n)
            what = "%s %d B" % (kind, n)
            before = t.stats()
            r = c.put_from(key, src())
            t.moved(before, "PUT " + what, put=1, into=n)
            t.result(r, "PUT " + what, n)
            out = dst()
            before = t.stats()
            r = c.get_into(key, out)
            t.moved(before, "GET " + what, get=1, out=n)
            t.result(r, "GET " + what, n)
            t.eq(r.object_size, n, "GET " + what + ": object_size")
            t.ok(bytes(out) == data, "GET %s: bytes differ" % what)
    # typed, multi-dimensional and Fortran-ordered arrays move in memory order
    arrays = {
        "f32-2d": np.arange(256 * 300, dtype=np.float32).reshape(256, 300),
        "f64-fortran": np.asfortranarray(
            np.random.default_rng(5).standard_normal((123, 77))),
        "i16": (np.arange(70001, dtype=np.int64) * 37 % 65521 - 30000)
        .astype(np.int16),
    }
    for name, a in arrays.items():
        key = "pyt/np-" + name
        before = t.stats()
        t.result(c.put_from(key, a), "PUT " + name, a.nbytes)
        t.moved(before, "PUT " + name, put=1, into=a.nbytes)
        b = np.zeros_like(a)
        before = t.stats()
        t.result(c.get_into(key, b), "GET " + name, a.nbytes)
        t.moved(before, "GET " + name, get=1, out=a.nbytes)
        t.ok(np.array_equal(a, b) and a.tobytes("A") == b.tobytes("A"),
             "GET %s: arrays differ" % name)
        got = c.get_array(key, dtype=a.dtype)
        t.ok(np.array_equal(got, a.ravel(order="A")),
             "get_array %s: differs" % name)


def offsets(t, c):
    """Ranged GETs: only the range moves, by RDMA."""
    n = 3 * MiB + 777
    data = pattern(n, 99)
    c.put_from("pyt/rg", data)
    for off, ln in [(0, 1), (1, 4095), (1234, 100), (4096, 65536),
                    (MiB - 1, MiB + 2), (n - 10, 10), (n - 1, 1)]:
        out = bytearray(ln)
        before = t.stats()
        r = c.get_into("pyt/rg", out, offset=off, length=ln)
        what = "GET [%d, +%d)" % (off, ln)
        t.moved(before, what, get=1, out=ln)
        t.result(r, what, ln)
        t.ok(out == data[off:off + ln], what + ": bytes differ")
    # a length shorter than the target: the rest untouched
    out = np.full(5000, 0xA5, dtype=np.uint8)
    before = t.stats()
    r = c.get_into("pyt/rg", out, offset=2 * MiB + 1, length=3000)
    t.moved(before, "GET into a longer array", get=1, out=3000)
    t.ok(out[:3000].tobytes() == data[2 * MiB + 1:2 * MiB + 3001] and
         (out[3000:] == 0xA5).all(), "GET into a longer array: bytes")
    # the same registered array, again and again
    a = np.zeros(65536, dtype=np.uint8)
    before = t.stats()
    for i in range(8):
        c.get_into("pyt/rg", a, offset=i * 65536, length=65536)
        t.ok(a.tobytes() == data[i * 65536:(i + 1) * 65536],
             "repeated GET %d: bytes differ" % i)
    t.moved(before, "8 GETs into one array", get=8, out=8 * 65536)


def parts(t):
    """Objects above the part size: multipart PUT and parallel ranged GETs,
    every part by RDMA."""
    n = 3 * MiB + 12345
    ps = 256 * 1024
    nparts = -(-n // ps)
    data = np.frombuffer(pattern(n, 3), dtype=np.uint8)
    with t.client(part_size=ps, concurrency=4) as c:
        before = t.stats()
        r = c.put_from("pyt/parts", data)
        t.moved(before, "multipart PUT", put=nparts, into=n)
        t.result(r, "multipart PUT", n, parts=nparts)
        out = np.zeros(n, dtype=np.uint8)
        before = t.stats()
        r = c.get_into("pyt/parts", out)
        t.moved(before, "GET in parts", get=nparts, out=n)
        t.result(r, "GET in parts", n, parts=nparts)
        t.ok(np.array_equal(out, data), "GET in parts: bytes differ")


def threads(t, c):
    """Threads share one client; transfers run without the GIL."""
    errors = []
    sizes = []

    def worker(k):
        try:
            for i in range(6):
                data = pattern(3000 + 4099 * i + k, 100 * k + i)
                key = "pyt/t%d-%d" % (k, i)
                r1 = c.put_from(key, data)
                out = bytearray(len(data))
                r2 = c.get_into(key, out)
                if out != data or r1.path != t.path or r2.path != t.path:
                    raise Failure("thread %d/%d: %r %r" % (k, i, r1, r2))
                sizes.append(len(data))
        except Exception as e:  # reported in the main thread
            errors.append(e)

    before = t.stats()
    ths = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    t.ok(not errors, "threads: %r" % errors)
    t.moved(before, "4 threads", get=24, put=24, out=sum(sizes),
            into=sum(sizes))


def checkpoint(t):
    """save_safetensors + load_safetensors with NumPy: every tensor."""
    rng = np.random.default_rng(1)
    want = {
        "embed.weight": rng.standard_normal((512, 384)).astype(np.float32),
        "layer.0.bias": rng.standard_normal(1017).astype(np.float16),
        "layer.0.w64": rng.standard_normal((3, 5, 7)).astype(np.float64),
        "layer.1.w": rng.standard_normal((256, 256)).astype(np.float16),
        "steps": np.array([12345678901], dtype=np.int64),
        "mask": rng.integers(0, 2, 99).astype(bool),
        "bytes": np.frombuffer(pattern(100001, 3), dtype=np.uint8),
        "scalar": np.array(3.5, dtype=np.float32),
        "empty": np.zeros((0, 4), dtype=np.int32),
    }
    url = "s3://pyt/ckpt.safetensors"
    with t.client(part_size=256 * 1024, concurrency=4) as c:
        before = t.stats()
        r = hipobj.save_safetensors(want, url, client=c,
                                    metadata={"format": "np"})
        size = c.head(url)["size"]
        nparts = -(-size // (256 * 1024))
        t.ok(nparts > 1, "checkpoint of %d B is not multipart" % size)
        t.moved(before, "save_safetensors", put=nparts, into=size)
        t.result(r, "save_safetensors", size, parts=nparts)
        before = t.stats()
        got = hipobj.load_safetensors(url, client=c)
        # the length, the header, the data (in parts): every byte once
        other = "http" if t.path == "rdma" else "rdma"
        d = t.settled(before, lambda d: d[t.path]["bytes_out"] == size and
                      d["rdma"]["completed"] == d["rdma"]["get"])
        t.eq(d[t.path]["bytes_out"], size,
             "load_safetensors: %s bytes_out" % t.path)
        t.eq(d[other]["bytes_out"], 0,
             "load_safetensors: %s bytes_out" % other)
        if t.path == "rdma":
            t.ok(d["rdma"]["get"] >= 3, "load_safetensors: rdma GETs")
            t.eq((d["rdma"]["completed"], d["rdma"]["failures"]),
                 (d["rdma"]["get"], 0), "load_safetensors: rdma completed,"
                 " failures")
        t.eq(sorted(got), sorted(want), "load_safetensors: names")
        for k, w in want.items():
            g = got[k]
            t.eq((g.dtype, g.shape), (w.dtype, w.shape), k + ": dtype, shape")
            t.ok(g.tobytes() == w.tobytes(), k + ": bytes differ")
        t.eq(hipobj.read_safetensors_metadata(url, client=c),
             {"format": "np"}, "metadata")
        return size


def payload_libs():
    """The libraries this process mapped from the VM's payload (the VM tool
    copied them there: numpy's BLAS, LAPACK, gfortran, hipObject's...)."""
    try:
        with open("/proc/self/maps") as f:
            paths = {ln.split()[-1] for ln in f if "/payload/lib/" in ln}
    except OSError:
        return []
    return sorted(os.path.basename(p) for p in paths)


def main():
    if len(sys.argv) < 2:
        sys.stderr.write("usage: %s ENDPOINT [--path http]\n" % sys.argv[0])
        return 2
    path = "http" if sys.argv[2:] == ["--path", "http"] else "rdma"
    t = Run(sys.argv[1].rstrip("/"), path)
    print("python %s, numpy %s, hipobj %s (library %s)" % (
        sys.version.split()[0], np.__version__, hipobj.__version__,
        hipobj.library_version()))
    print("shared libraries from the payload: " + " ".join(payload_libs()))
    try:
        c = t.client()
    except hipobj.RdmaUnavailable as e:
        if os.environ.get("RXE_VM"):  # rxe0 is there: not a skip
            print("FAIL: the client cannot use RDMA on %s: %s" % (
                os.environ.get("RXE_DEV"), e))
            return 1
        print("SKIP: the client cannot use RDMA here: %s" % e)
        return SKIP
    first = t.stats()
    try:
        with c:
            t.eq(c.rdma, path == "rdma", "client.rdma (%s)" % c.rdma_reason)
            make_bucket(t.url, "pyt")
            t.timed(round_trips, t, c)
            t.timed(offsets, t, c)
            t.timed(threads, t, c)
            k = c.counters()
            if path == "rdma":
                t.eq((k["http_transfers"], k["http_bytes"],
                      k["fallbacks_declined"], k["fallbacks_no_rdma"]),
                     (0, 0, 0, 0), "client counters: no HTTP")
        t.timed(parts, t)
        ckpt = t.timed(checkpoint, t)
    except Failure as e:
        print("FAIL after %d checks: %s" % (t.checks, e))
        return 1
    print("times: " + ", ".join(t.times))
    last = t.stats()
    r, h = last["rdma"], last["http"]
    # the whole run, get_array's and the checkpoint's header reads included
    if path == "rdma":
        d = [h["bytes_out"] - first["http"]["bytes_out"],
             h["bytes_in"] - first["http"]["bytes_in"],
             r["failures"] - first["rdma"]["failures"],
             r["declined"] - first["rdma"]["declined"]]
        if d != [0, 0, 0, 0]:
            print("FAIL: the whole run: http bytes_out, bytes_in, rdma "
                  "failures, declined: %r, want all 0" % d)
            return 1
    print("python-%s: %d checks passed; checkpoint %d B; server rdma get=%d "
          "put=%d bytes_out=%d bytes_in=%d completed=%d failures=%d; "
          "http bytes_out=%d bytes_in=%d; counters read again %d times" % (
              path, t.checks, ckpt, r["get"] - first["rdma"]["get"],
              r["put"] - first["rdma"]["put"],
              r["bytes_out"] - first["rdma"]["bytes_out"],
              r["bytes_in"] - first["rdma"]["bytes_in"],
              r["completed"] - first["rdma"]["completed"],
              r["failures"] - first["rdma"]["failures"],
              h["bytes_out"] - first["http"]["bytes_out"],
              h["bytes_in"] - first["http"]["bytes_in"], t.lagged))
    return 0


if __name__ == "__main__":
    sys.exit(main())
