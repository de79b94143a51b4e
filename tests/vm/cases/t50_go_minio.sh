#!/bin/sh
# SPDX-License-Identifier: MIT
# The MinIO bridge (integrations/go/miniordma) over real verbs: the Go test
# binary built on the host with -tags hipobj_vm (run-lane.sh stages it when
# the host has Go) runs its TestVM* cases: GET, PUT, ranges and a multipart
# upload by RDMA through minio-go against hipobj-test-server on rxe0 and
# through hipobj-gateway (the counters of each say RDMA moved every byte;
# the objects read back byte-identical, from the gateway's store too), and
# the 501 fallback with --decline-rdma.
. /payload/lib.sh
command -v hipobj-go-vmtest >/dev/null ||
  { echo "skip: hipobj-go-vmtest is not in the payload (no Go on the host)"; exit 77; }
[ -e "/sys/class/infiniband/$RXE_DEV" ] ||
  { echo "skip: no RDMA device $RXE_DEV"; exit 77; }
cd /tmp || exit 1
HIPOBJ_GO_VM_NIC=$RXE_DEV exec hipobj-go-vmtest -test.v -test.run 'TestVM' -test.timeout 600s
