# SPDX-License-Identifier: MIT
"""Registration never crosses a fork: a child of a process with a live
RDMA client (made by the application, not by the integrations) gets
HTTP-only clients from hipobj._procs, and they work."""
import os

from hipobj import _procs, _s3http


def test_child_of_an_rdma_parent_is_http_only(client, endpoint):
    data = bytes(range(256)) * 16
    r = client.put_from("fab/fork", data)
    assert r.path == "rdma"
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, then leave without cleanup
        code = 1
        try:
            cfg = _s3http.Config(endpoint, use_env=False)
            c = _procs.client(cfg)
            buf = bytearray(len(data))
            res = c.get_into("fab/fork", buf)
            ok = (_procs.forked_after_rdma() and not c.rdma and
                  res.path == "http" and bytes(buf) == data)
            os.write(wfd, b"ok" if ok else repr(
                (_procs.forked_after_rdma(), c.rdma, res.path)).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(wfd)
    msg = os.read(rfd, 200)
    os.close(rfd)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0 and msg == b"ok", msg
    assert not _procs.forked_after_rdma()  # the parent is unchanged
