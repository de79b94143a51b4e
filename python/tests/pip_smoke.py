# SPDX-License-Identifier: MIT
"""Run by pip-alone.sh in a venv: the installed package loads its own
libhipobj and libhipobj_s3 (shipped beside the extension) and moves an
object through hipobj-test-server (when HIPOBJ_TEST_SERVER names one)."""
import os
import sys

import hipobj

pkg = os.path.dirname(os.path.abspath(hipobj.__file__))
assert "site-packages" in pkg, pkg
libs = {}
with open("/proc/self/maps") as f:
    for line in f:
        path = line.split()[-1]
        for name in ("libhipobj.so", "libhipobj_s3.so"):
            if os.path.basename(path).startswith(name + "."):
                libs[name] = path
for name in ("libhipobj.so", "libhipobj_s3.so"):
    assert os.path.dirname(libs.get(name, "")) == pkg, (name, libs, pkg)

server = os.environ.get("HIPOBJ_TEST_SERVER", "")
if os.access(server, os.X_OK):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                    "tests", "interop"))
    import urllib.request
    from server_harness import Server
    s = Server(server)
    s.start()
    try:
        urllib.request.urlopen(urllib.request.Request(
            s.url + "/smoke", data=b"", method="PUT")).close()
        with hipobj.Client(s.url, use_env=False) as c:
            data = bytes(range(256)) * 64
            c.put_from("smoke/x", data)
            back = bytearray(len(data))
            r = c.get_into("smoke/x", back)
            assert bytes(back) == data and r.bytes == len(data), r
    finally:
        assert s.stop() == 0
    print("hipobj %s from %s, a PUT and GET through the test server"
          % (hipobj.library_version(), pkg))
else:
    print("hipobj %s from %s (no test server)" % (hipobj.library_version(), pkg))
