#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# QEMU user networking's guestfwd runs this once per connection the guest
# opens to its forwarded address: stdin and stdout are that connection; it
# relays them to 127.0.0.1:PORT on the host (a service the tests started,
# such as the Ceph lane's RGW). Loopback only.
import os
import select
import socket
import sys

port = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", port))
fds = {0: s.fileno(), s.fileno(): 1}
open_ = {0, s.fileno()}
while open_:
    r, _, _ = select.select(list(open_), [], [])
    for fd in r:
        data = os.read(fd, 1 << 16)
        if not data:
            open_.discard(fd)
            if fd == 0:
                s.shutdown(socket.SHUT_WR)
            else:
                os.close(1)
            continue
        out = fds[fd]
        view = memoryview(data)
        while view:
            n = os.write(out, view)
            view = view[n:]
