#!/bin/sh
# run.sh --modprobe vgem --modprobe rdma_ucm loaded the extra modules.
set -e
ls -l /dev/infiniband/
[ -c /dev/infiniband/rdma_cm ]
ls -l /dev/dri/
[ -c /dev/dri/card0 ]
