# SPDX-License-Identifier: MIT
"""The client against its targets' own Python code (issue #20, PY-1..3):
  - a __dlpack__ or __cuda_array_interface__ that closes the client gets
    RuntimeError, and the transfer never runs on a closed client;
  - read-only and copied DLPack 1.x capsules are refused as GET targets
    (nothing written), and accepted as PUT sources;
  - a target whose memory moved during the transfer (a resize) raises.
No numpy needed: the memory is ctypes buffers."""
import ctypes

import pytest

import hipobj
import dlpack_fake as dl
from conftest import pattern


def buffer(data):
    b = ctypes.create_string_buffer(bytes(data), len(data))
    return b, ctypes.addressof(b)


@pytest.mark.parametrize("versioned", [False, True])
def test_dlpack_that_closes_the_client(srv, versioned):
    c = srv.client()
    c.put_from("pyt/cb", pattern(256, 3))
    b, a = buffer(bytes(256))
    seen = []

    def close_it(t):
        try:
            c.close()
        except RuntimeError as e:
            seen.append(str(e))
            raise

    t = dl.FakeTensor(a, (256,), keep=b, versioned=versioned,
                      on_export=close_it)
    with pytest.raises(RuntimeError, match="transfers running"):
        c.get_into("pyt/cb", t)
    assert seen and not c.closed
    assert t.exported == t.deleted
    # the client is intact and still serves
    u = dl.FakeTensor(a, (256,), keep=b, versioned=versioned)
    assert c.get_into("pyt/cb", u).bytes == 256
    assert b.raw == pattern(256, 3)
    c.close()
    assert c.closed


def test_cuda_array_interface_that_closes_the_client(srv):
    c = srv.client()

    class Closing:
        @property
        def __cuda_array_interface__(self):
            c.close()
            return {}

    with pytest.raises(RuntimeError, match="transfers running"):
        c.put_from("pyt/cb2", Closing())
    assert not c.closed
    c.close()


@pytest.mark.parametrize("flags", [dl.READ_ONLY, dl.IS_COPIED,
                                   dl.READ_ONLY | dl.IS_COPIED])
def test_read_only_or_copied_capsule_is_no_get_target(client, flags):
    client.put_from("pyt/ro", pattern(128, 7))
    b, a = buffer(bytes(128))
    t = dl.FakeTensor(a, (128,), keep=b, versioned=True, flags=flags)
    with pytest.raises(hipobj.InvalidArgument):
        client.get_into("pyt/ro", t)
    assert b.raw == bytes(128), "nothing written into read-only memory"
    assert t.exported == t.deleted == 1
    if flags == dl.READ_ONLY:  # a read-only source uploads
        src, sa = buffer(pattern(128, 8))
        s = dl.FakeTensor(sa, (128,), keep=src, versioned=True, flags=flags)
        assert client.put_from("pyt/ro", s).bytes == 128


def test_unknown_dlpack_major_refused(client):
    b, a = buffer(bytes(16))
    t = dl.FakeTensor(a, (16,), keep=b, versioned=True, major=2)
    with pytest.raises(hipobj.InvalidArgument, match="DLPack 2"):
        client.get_into("pyt/ro", t)
    assert t.deleted == 1


@pytest.mark.parametrize("op", ["get", "put"])
def test_target_that_moved_raises(client, op):
    """Exported again after the transfer, the target is elsewhere: its
    owner resized it meanwhile (torch's resize_() frees the old storage)."""
    client.put_from("pyt/mv", pattern(64, 1))
    b1, a1 = buffer(bytes(64))
    b2, a2 = buffer(bytes(64))

    def move(t):
        if t.exported == 1:  # the second export sees the new storage
            t.address = a2

    t = dl.FakeTensor(a1, (64,), keep=(b1, b2), on_export=move)
    with pytest.raises(RuntimeError, match="moved during the transfer"):
        if op == "get":
            client.get_into("pyt/mv", t)
        else:
            client.put_from("pyt/mv", t)
    assert t.exported == t.deleted == 2


def test_torch_resized_during_transfer_raises(srv):
    """PY-2 with torch itself: the progress callback (run during the
    transfer, from the client's worker thread) resizes the target, which
    frees its storage; the call raises instead of returning success."""
    torch = pytest.importorskip("torch", reason="torch is not installed "
                                "(python3-torch): the resize case untested")
    t = torch.zeros(4096, dtype=torch.uint8)
    armed = []

    def progress(done, total):
        if armed and done == total:
            t.resize_(1 << 20)  # a new, larger storage: the old one is freed

    c = srv.client(progress=progress)
    try:
        c.put_from("pyt/resize", pattern(4096, 2))
        armed.append(1)
        with pytest.raises(RuntimeError, match="moved during the transfer"):
            c.get_into("pyt/resize", t)
        assert t.numel() == 1 << 20
    finally:
        c.close()
