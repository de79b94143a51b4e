#!/bin/sh
# rxe0 exists, its port is ACTIVE, and the runner exported RXE_DEV.
set -e
[ "$RXE_DEV" = rxe0 ] || { echo "RXE_DEV='$RXE_DEV'"; exit 1; }
rdma link show
ibv_devices
ibv_devinfo -d rxe0 | tee /tmp/devinfo.txt
grep -q 'hca_id:[[:space:]]*rxe0' /tmp/devinfo.txt
grep -q 'state:[[:space:]]*PORT_ACTIVE' /tmp/devinfo.txt
grep -q 'link_layer:[[:space:]]*Ethernet' /tmp/devinfo.txt
