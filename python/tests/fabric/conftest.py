# SPDX-License-Identifier: MIT
"""The fabric: hipobj._core built with the fakes (ctest python_fabric);
the S3 responder listens on 127.0.0.1 and moves payloads by RDMA over the
simulated fabric. Modes: 0 normal, 1 decline (501), 2 ignore the token,
3 a wrong byte count, 4 a reply without a peer."""
import pytest

import hipobj
from hipobj import _core

NORMAL, DECLINE, IGNORE, BAD_COUNT, PLAIN_REPLY = range(5)

if not hasattr(_core, "_fabric_start"):
    pytest.skip("hipobj._core is not the fabric build", allow_module_level=True)


@pytest.fixture(scope="session")
def endpoint():
    url = _core._fabric_start()
    yield url
    _core._fabric_stop()


@pytest.fixture
def client(endpoint):
    _core._fabric_set_mode(NORMAL)
    with hipobj.Client(endpoint, use_env=False) as c:
        assert c.rdma, c.rdma_reason
        yield c
    _core._fabric_set_mode(NORMAL)


def counts():
    return _core._fabric_counts()


def stored(bucket, key):
    return _core._fabric_object("/%s/%s" % (bucket, key))
