#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The MinIO bridge (integrations/go/miniordma) through hipobj-gateway in
# front of RGW, on this host: the Go test binary built with -tags
# "hipobj_ceph hipobj_fabric" sends each request with a signed token (its
# hipObject instance is on the simulated fabric), the gateway (no RDMA
# here) declines it, and the bytes go by minio-go's HTTP through the
# gateway: single and multipart PUTs, whole and ranged GETs, a missing key;
# every object read back straight from RGW, byte-identical.
set -uo pipefail
. "$ROOT/tests/ceph/lib.sh"
command -v go >/dev/null ||
  { echo "SKIP: no go command (golang-go)"; exit 77; }
[ -d /usr/share/gocode/src/github.com/minio/minio-go/v7 ] ||
  { echo "SKIP: minio-go v7 is not installed"; exit 77; }
cmake --build "$BUILD" --target hipobj hipobj_gofabric >"$BUILD/go-ceph.log" 2>&1 ||
  { tail -n 20 "$BUILD/go-ceph.log"; echo "FAIL: the fabric library did not build"; exit 1; }
bin=$BUILD/hipobj-go-cephtest
(ho_root=$ROOT ho_build=$BUILD; . "$ROOT/integrations/go/env.sh" && cd "$ho_gopkg" &&
  go test -c -tags 'hipobj_ceph hipobj_fabric' -o "$bin" ./miniordma) >>"$BUILD/go-ceph.log" 2>&1 ||
  { tail -n 20 "$BUILD/go-ceph.log"; echo "FAIL: the Go test binary did not build"; exit 1; }
start_gateway --no-rdma || exit 1
HIPOBJ_GO_GW=$GW HIPOBJ_GO_GWKEY=$GWKEY HIPOBJ_GO_GWSECRET=$GWSECRET \
  "$bin" -test.v -test.run '^TestCeph' -test.timeout 600s; rc=$?
stop_gateway || rc=1
exit $rc
