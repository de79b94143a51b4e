# SPDX-License-Identifier: MIT
"""Start hipobj-test-server on 127.0.0.1 port 0 for a test, and stop it.

The server prints "listening on http://ADDR:PORT" as its first line on
stdout; the harness reads it, and at the end sends SIGTERM to that PID only
and checks that the server exits 0 (a clean shutdown)."""

import json
import os
import select
import signal
import subprocess
import sys
import time
import urllib.request

SKIP = 77


class Failure(Exception):
    pass


class Checks:
    """Counts checks; a failed one raises Failure with its message."""

    def __init__(self, name):
        self.name = name
        self.passed = 0

    def ok(self, cond, what):
        if not cond:
            raise Failure(what)
        self.passed += 1

    def eq(self, got, want, what):
        if got != want:
            raise Failure("%s: got %r, want %r" % (what, got, want))
        self.passed += 1


class Server:
    def __init__(self, binary, *args, env=None):
        self.binary = binary
        self.args = list(args)
        self.env = env
        self.proc = None
        self.url = None
        self.stderr_path = None

    def start(self, timeout=30):
        cmd = [self.binary, "--listen", "127.0.0.1:0"] + self.args
        self.stderr_path = "/tmp/hipobj-test-server.%d.%d.err" % (
            os.getpid(), int(time.time() * 1e6))
        err = open(self.stderr_path, "wb")
        env = dict(os.environ)
        if self.env:
            env.update(self.env)
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err,
                                     env=env)
        err.close()
        deadline = time.time() + timeout
        line = b""
        while not line.endswith(b"\n"):
            left = deadline - time.time()
            if left <= 0 or self.proc.poll() is not None:
                self.kill()
                raise Failure("server did not start: %s" % self.stderr())
            r, _, _ = select.select([self.proc.stdout], [], [], left)
            if r:
                c = os.read(self.proc.stdout.fileno(), 1)
                if not c:
                    continue
                line += c
        text = line.decode().strip()
        if not text.startswith("listening on http://"):
            self.kill()
            raise Failure("unexpected first line: %r" % text)
        self.url = text[len("listening on "):]
        host_port = self.url[len("http://"):]
        self.host, port = host_port.rsplit(":", 1)
        self.port = int(port)
        return self

    def stderr(self):
        try:
            with open(self.stderr_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def stats(self):
        with urllib.request.urlopen(self.url + "/_hipobj/stats") as r:
            return json.loads(r.read())

    def stop(self, timeout=30, sig=signal.SIGTERM):
        """Sends sig (SIGTERM) to the server's PID; returns its exit
        status."""
        if not self.proc:
            return None
        self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise Failure("server did not stop on signal %d" % sig)
        self.proc.stdout.close()
        self.proc = None
        return rc

    def kill(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc.stdout.close()
            self.proc = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        if self.proc:
            rc = self.stop()
            if exc[0] is None and rc != 0:
                raise Failure("server exited %r: %s" % (rc, self.stderr()))
        if self.stderr_path and os.path.exists(self.stderr_path):
            if exc[0] is not None:
                sys.stderr.write("--- server stderr ---\n" + self.stderr())
            os.unlink(self.stderr_path)
        return False


def main(run, name):
    """Runs run(binary, checks) and exits 0, 1 or 77."""
    if len(sys.argv) < 2:
        sys.stderr.write("usage: %s PATH-TO-hipobj-test-server\n" % sys.argv[0])
        sys.exit(2)
    checks = Checks(name)
    try:
        run(sys.argv[1], checks)
    except Failure as e:
        print("FAIL %s after %d checks: %s" % (name, checks.passed, e))
        sys.exit(1)
    print("%s: %d checks passed" % (name, checks.passed))
    sys.exit(0)
