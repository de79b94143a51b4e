# SPDX-License-Identifier: MIT
"""Checkpoints: save, load, compare every tensor; malformed headers."""
import json
import struct

import pytest

import hipobj
from conftest import pattern

np = pytest.importorskip("numpy", reason="python3-numpy is not installed")


def tensors():
    rng = np.random.default_rng(1)
    return {
        "embed.weight": rng.standard_normal((64, 33)).astype(np.float32),
        "layer.0.bias": rng.standard_normal(17).astype(np.float16),
        "layer.0.w64": rng.standard_normal((3, 5, 7)).astype(np.float64),
        "steps": np.array([12345678901], dtype=np.int64),
        "mask": rng.integers(0, 2, 99).astype(bool),
        "bytes": np.frombuffer(pattern(1001, 3), dtype=np.uint8),
        "scalar": np.array(3.5, dtype=np.float32),
        "empty": np.zeros((0, 4), dtype=np.int32),
    }


def test_round_trip(srv):
    with srv.client(part_size=4096) as c:
        want = tensors()
        r = hipobj.save_safetensors(want, "s3://pyt/ckpt.safetensors",
                                    client=c, metadata={"format": "pt"})
        assert r.parts_http + r.parts_rdma > 1  # multipart above a part
        got = hipobj.load_safetensors("pyt/ckpt.safetensors", client=c)
        assert sorted(got) == sorted(want)
        for k in want:
            assert got[k].dtype == want[k].dtype and got[k].shape == want[k].shape
            assert np.array_equal(got[k], want[k]), k
        assert hipobj.read_safetensors_metadata(
            "pyt/ckpt.safetensors", client=c) == {"format": "pt"}


def test_format_is_the_documented_one(client):
    """Header length, JSON, padding to 8, tensors in name order."""
    hipobj.save_safetensors({"b": np.arange(3, dtype=np.int16),
                             "a": np.ones(2, dtype=np.float32)},
                            "pyt/fmt", client=client)
    h = client.head("pyt/fmt")
    raw = bytearray(h["size"])
    client.get_into("pyt/fmt", raw)
    (n,) = struct.unpack("<Q", raw[:8])
    assert n % 8 == 0
    header = json.loads(raw[8:8 + n])
    assert header["a"] == {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
    assert header["b"] == {"dtype": "I16", "shape": [3], "data_offsets": [8, 14]}
    assert raw[8 + n:] == np.ones(2, np.float32).tobytes() + \
        np.arange(3, dtype=np.int16).tobytes()


def put_raw(client, key, header, data=b""):
    blob = header if isinstance(header, bytes) else json.dumps(header).encode()
    client.put_from(key, struct.pack("<Q", len(blob)) + blob + data)


@pytest.mark.parametrize("header,data", [
    (b"not json", b""),
    (b"[1, 2]", b""),
    ({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, b"\0" * 8),
    ({"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 8]}}, b"\0" * 4),
    ({"x": {"dtype": "Q7", "shape": [1], "data_offsets": [0, 1]}}, b"\0"),
    ({"x": {"dtype": "U8", "shape": [-1], "data_offsets": [0, 1]}}, b"\0"),
    ({"x": {"dtype": "U8", "shape": [1]}}, b"\0"),
])
def test_malformed_headers(client, header, data):
    put_raw(client, "pyt/bad", header, data)
    with pytest.raises(hipobj.ProtocolError):
        hipobj.load_safetensors("pyt/bad", client=client)


def test_impossible_lengths(client):
    client.put_from("pyt/short", b"1234")
    with pytest.raises(hipobj.ProtocolError):
        hipobj.load_safetensors("pyt/short", client=client)
    client.put_from("pyt/long", struct.pack("<Q", 1 << 40) + b"{}")
    with pytest.raises(hipobj.ProtocolError):
        hipobj.load_safetensors("pyt/long", client=client)
    with pytest.raises(hipobj.NoSuchKey):
        hipobj.load_safetensors("pyt/absent", client=client)


def test_torch_round_trip(client):
    torch = pytest.importorskip("torch", reason="torch is not installed "
                                "(python3-torch): torch checkpoints untested")
    want = {"w": torch.randn(10, 3), "h": torch.arange(7, dtype=torch.int32),
            "bf": torch.randn(4, 4).to(torch.bfloat16)}
    hipobj.save_safetensors(want, "pyt/torch.safetensors", client=client)
    got = hipobj.load_safetensors("pyt/torch.safetensors", client=client,
                                  framework="torch")
    for k in want:
        assert got[k].dtype == want[k].dtype and torch.equal(got[k], want[k])
