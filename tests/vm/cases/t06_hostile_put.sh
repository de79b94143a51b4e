#!/bin/sh
# The hostile server against PUTs on rxe, with memory windows and in
# the fallback without them: a write into a PUT's buffer, a read during a
# GET and any access after the transfer returned are refused by the NIC.
exec hipobj-vmprobe hostile-put
