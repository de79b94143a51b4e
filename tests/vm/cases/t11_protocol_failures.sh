#!/bin/sh
# A wrong cookie, and a client that vanishes after the reply (the server
# reclaims its QP at its ready timeout and serves the next request).
. /payload/lib.sh
start_server --rdma-timeout-ms 2000 || exit 1
rc=0
hipobj-vmtest "$ENDPOINT" wrong-cookie || rc=1
hipobj-vmtest "$ENDPOINT" vanish || rc=1
exit $rc
