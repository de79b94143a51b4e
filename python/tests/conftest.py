# SPDX-License-Identifier: MIT
"""Fixtures: a hipobj-test-server on 127.0.0.1 port 0 (its binary from
HIPOBJ_TEST_SERVER), a bucket on it, and clients configured for it only
(use_env=False, so the machine's AWS_* variables play no part)."""
import os
import sys
import urllib.request

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "interop"))
from server_harness import Server  # noqa: E402

import hipobj  # noqa: E402


def server_binary():
    path = os.environ.get("HIPOBJ_TEST_SERVER", "")
    if not os.access(path, os.X_OK):
        pytest.skip("hipobj-test-server not built (set HIPOBJ_TEST_SERVER)")
    return path


def make_bucket(url, name, headers=None):
    req = urllib.request.Request("%s/%s" % (url, name), data=b"",
                                 method="PUT", headers=headers or {})
    urllib.request.urlopen(req).close()


class Running:
    """A started server with a bucket 'pyt'."""

    def __init__(self, *args, bucket=True):
        self.server = Server(server_binary(), *args)
        self.server.start()
        self.url = self.server.url
        if bucket:
            make_bucket(self.url, "pyt")

    def stats(self):
        return self.server.stats()

    def client(self, **kw):
        kw.setdefault("use_env", False)
        return hipobj.Client(self.url, **kw)

    def stop(self):
        rc = self.server.stop()
        assert rc == 0, self.server.stderr()


@pytest.fixture(scope="module")
def srv():
    s = Running("--min-part-size", "1K")
    yield s
    s.stop()


@pytest.fixture
def client(srv):
    with srv.client() as c:
        yield c


def pattern(n, seed=1):
    """n bytes that differ at every offset and between seeds."""
    import random
    return random.Random(seed).randbytes(n)


def expected_path(c):
    """What moved the bytes, given whether the client can use RDMA."""
    return "rdma" if c.rdma else "http"

# python/tests/fabric needs the fabric build of hipobj._core (ctest
# python_fabric), not the package pip builds; python/tests/gpu a GPU
# (run-h200.sh).
collect_ignore = ["fabric", "gpu"]
