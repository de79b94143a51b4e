#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Python layer's cost: Client.get_into a NumPy array against the C
command (`hipobj bench`, the same libhipobj_s3 calls) for the same
objects, against one hipobj-test-server, in one run.

    compare.py BUILD_DIR [--iterations N] [--sizes 4K,1M,16M]

BUILD_DIR has hipobj-test-server and the hipobj command; the package must
be importable (python/tests/run.sh leaves it in BUILD_DIR/python-site).
Prints one line per size: C and Python time per GET (mean over the
iterations, both whole-object GETs: HEAD then GET), and the difference."""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "interop"))
from server_harness import Server  # noqa: E402

import numpy as np  # noqa: E402
import hipobj  # noqa: E402


def size_of(s):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * units[s[-1]] if s[-1] in units else int(s)


def c_bench(tool, url, sizes, iters):
    out = subprocess.run(
        [tool, "bench", "s3://pyt/c", "--endpoint", url, "--sizes", sizes,
         "--concurrency", "1", "--ops", "get", "--iterations", str(iters),
         "--json", "-q"], check=True, capture_output=True, text=True).stdout
    return {r["size"]: r["seconds"] / r["iterations"]
            for r in json.loads(out)["results"]}


def py_bench(c, size, iters):
    key = "pyt/py%d" % size
    c.put_from(key, np.full(size, 7, dtype=np.uint8))
    a = np.zeros(size, dtype=np.uint8)
    c.get_into(key, a)  # warm: connections, registration
    t0 = time.perf_counter()
    for _ in range(iters):
        c.get_into(key, a)
    return (time.perf_counter() - t0) / iters, c.rdma


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--sizes", default="4K,1M,16M")
    a = ap.parse_args()
    server = os.path.join(a.build, "server", "hipobj-test-server")
    tool = os.path.join(a.build, "tools", "hipobj", "hipobj")
    env = dict(os.environ, AWS_ACCESS_KEY_ID="", AWS_SECRET_ACCESS_KEY="")
    with Server(server) as srv:
        subprocess.run(["curl", "-sf", "-X", "PUT", srv.url + "/pyt"],
                       check=True)
        os.environ.update(env)
        with hipobj.Client(srv.url, sign=False) as c:
            for s in a.sizes.split(","):
                n = size_of(s)
                cs = c_bench(tool, srv.url, s, a.iterations)[n]
                ps, rdma = py_bench(c, n, a.iterations)
                print("%-5s C %9.1f us  Python %9.1f us  +%6.1f us (%+5.1f%%)"
                      "  %s" % (s, cs * 1e6, ps * 1e6, (ps - cs) * 1e6,
                                100 * (ps - cs) / cs,
                                "rdma" if rdma else "http"))


if __name__ == "__main__":
    main()
