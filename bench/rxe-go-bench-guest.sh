#!/bin/sh
# SPDX-License-Identifier: MIT
# In the VM (bench/rxe-go-bench.sh): the MinIO bridge's GET benchmark
# (integrations/go/miniordma, BenchmarkVMGet: GetObject by RDMA through
# minio-go into host memory, 1 to 64 MiB, against hipobj-test-server on
# rxe0, next to the same client's plain-HTTP GET of the same object).
. /payload/lib.sh
command -v hipobj-go-vmtest >/dev/null ||
  { echo "skip: hipobj-go-vmtest is not in the payload (no Go on the host)"; exit 77; }
cd /tmp || exit 1
export HIPOBJ_TRANSFER_TIMEOUT_MS=30000
HIPOBJ_GO_VM_NIC=$RXE_DEV hipobj-go-vmtest -test.run '^$' -test.bench 'VMGet' \
  -test.benchtime 5x -test.timeout 900s
