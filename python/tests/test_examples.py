# SPDX-License-Identifier: MIT
"""python/examples run against the test server."""
import os
import subprocess
import sys

import pytest

import hipobj
from conftest import pattern

np = pytest.importorskip("numpy", reason="python3-numpy is not installed")
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "examples")


def run(srv, *args):
    env = dict(os.environ, AWS_ENDPOINT_URL=srv.url, AWS_ACCESS_KEY_ID="",
               AWS_SECRET_ACCESS_KEY="", PYTHONPATH=os.pathsep.join(sys.path))
    env.pop("AWS_ENDPOINT_URL_S3", None)
    return subprocess.run([sys.executable, os.path.join(EXAMPLES,
                                                        "get_object.py")]
                          + list(args), env=env, capture_output=True,
                          text=True, timeout=120)


def test_get_object_with_a_progress_bar(srv, client, tmp_path):
    data = pattern(5 << 20, 12)
    client.put_from("pyt/ex", data)
    out = tmp_path / "ex.bin"
    p = run(srv, "s3://pyt/ex", str(out))
    assert p.returncode == 0, p.stderr
    assert out.read_bytes() == data
    assert "100%" in p.stderr and "5242880 bytes via" in p.stderr


def test_list_a_checkpoint(srv, client):
    hipobj.save_safetensors({"w": np.zeros((2, 3), np.float32)},
                            "pyt/ex.safetensors", client=client)
    p = run(srv, "--checkpoint", "s3://pyt/ex.safetensors")
    assert p.returncode == 0, p.stderr
    assert "w" in p.stdout and "(2, 3)" in p.stdout


def test_errors_are_one_line(srv):
    p = run(srv, "s3://pyt/absent", "/dev/null")
    assert p.returncode == 1
    assert p.stderr.strip() == ("get_object: s3://pyt/absent does not exist "
                                "(NoSuchKey): check the key")
