#!/bin/sh
# The server declines RDMA: 501, hipObjS3Error, nothing moved.
. /payload/lib.sh
start_server --decline-rdma || exit 1
exec hipobj-vmtest "$ENDPOINT" decline
