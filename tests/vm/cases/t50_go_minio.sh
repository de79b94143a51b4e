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
# The client's wait for a transfer's final is HIPOBJ_TRANSFER_TIMEOUT_MS
# (5 s) plus 100 ms a MB, counted per transfer from its ready: it assumes
# 10 MB/s for each transfer. Under TCG the four parts of a multipart
# upload in flight at once (Options.Parallel) share far less: through the
# gateway, which stores each part in its backend over HTTP before its
# final, 16 MiB in four 5 MiB parts took 6.6 s (2.5 MB/s together) on an
# idle host and longer while another VM ran, so a part ran past its 5.5 s
# and the bridge aborted the upload (the gateway's next commit then got
# 404 NoSuchUpload from its store). This case checks what moved and how,
# not speed; t13 and t14 check the timeout itself.
export HIPOBJ_TRANSFER_TIMEOUT_MS=30000
HIPOBJ_GO_VM_NIC=$RXE_DEV exec hipobj-go-vmtest -test.v -test.run 'TestVM' -test.timeout 600s
