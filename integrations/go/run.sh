#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Go lane: go vet and go test of integrations/go against a CMake build
# directory's libhipobj, libhipobj_server and hipobj-test-server, offline
# (GOPATH mode over Debian's /usr/share/gocode: env.sh). Twice: as shipped
# (no RDMA device here: transfers go by minio-go's HTTP), and with the
# hipobj_fabric tag, which links libhipobj_gofabric (the libraries on the
# simulated fabric): tokens are sent and signed, hipobj-test-server
# declines them (501 and the fallback), and the in-process responder moves
# bytes by RDMA. Prints one summary line, "go: ...".
#   integrations/go/run.sh BUILD_DIR [GO TEST ARGS...]
set -uo pipefail
ho_root=$(cd "$(dirname "$0")/../.." && pwd)
ho_build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
shift
if ! command -v go >/dev/null; then
  echo "go: SKIP: no go command (golang-go; scripts/deps.sh installs it)"
  exit 77
fi
if [ ! -d /usr/share/gocode/src/github.com/minio/minio-go/v7 ]; then
  echo "go: SKIP: minio-go v7 is not installed (golang-github-minio-minio-go-v7-dev)"
  exit 77
fi
for f in src/libhipobj.so src/server/libhipobj_server.so server/hipobj-test-server; do
  [ -e "$ho_build/$f" ] || { echo "go: NOT RUN ($f is not built)"; exit 1; }
done
. "$ho_root/integrations/go/env.sh"
cd "$ho_gopkg" || exit 1
export HIPOBJ_TEST_SERVER="$ho_build/server/hipobj-test-server"
log="$ho_build/go/test.log"
: >"$log"
rc=0
step() { # label, then the command
  local label=$1; shift
  echo "--- $label: $*" >>"$log"
  "$@" >>"$log" 2>&1 || { echo "go: $label failed" >>"$log"; rc=1; }
}
step vet go vet ./...
step vet-vm go vet -tags hipobj_vm ./... # the VM and Ceph lanes' cases compile
step vet-ceph go vet -tags "hipobj_ceph hipobj_fabric" ./miniordma
step test go test -count=1 -v "$@" ./...
tags="default"
if [ -e "$ho_build/integrations/go/libhipobj_gofabric.so" ]; then
  step vet-fabric go vet -tags hipobj_fabric ./...
  step test-fabric go test -count=1 -v -tags hipobj_fabric "$@" ./...
  tags="default + hipobj_fabric"
else
  echo "go: no libhipobj_gofabric.so (a sanitizer build?): fabric tests not run" | tee -a "$log"
fi
grep -E -- '^(--- FAIL|FAIL|ok|panic|.*\.go:[0-9]+:)' "$log" | tail -n 40
pass=$(grep -c -- '^--- PASS' "$log")
fail=$(grep -c -- '^--- FAIL' "$log")
skip=$(grep -c -- '^--- SKIP' "$log")
[ "$fail" -eq 0 ] || rc=1
vet=ok; grep -q '^go: vet' "$log" && vet=FAILED
echo "go: $pass passed, $fail failed, $skip skipped; vet $vet ($tags; log: $log)"
exit $rc
