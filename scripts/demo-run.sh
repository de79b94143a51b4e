#!/bin/sh
# The demo itself, run by scripts/demo.sh inside the Soft-RoCE VM (or on the
# host with --native; POSIX sh, as the VM has only busybox): start hipobj-test-server on the RDMA device, PUT a
# file and GET it back with the hipobj command, verify, and report what moved
# the bytes and how fast.
set -u
: "${RXE_DEV:?RDMA device}" "${DEMO_MIB:=64}"
export HIPOBJ_GPU_RUNTIME=${HIPOBJ_GPU_RUNTIME:-none}
log=/tmp/hipobj-demo.$$
mkdir -p "$log"
hipobj-test-server --listen 127.0.0.1:0 --nic "$RXE_DEV" >"$log/server.out" 2>"$log/server.err" &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null' EXIT
ep=""
for _ in $(seq 1 100); do
  ep=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$log/server.out" | head -n1)
  [ -n "$ep" ] && break
  sleep 0.1
done
[ -n "$ep" ] || { echo "demo: the server did not start"; cat "$log/server.err"; exit 1; }
echo "demo: hipobj-test-server on $ep, RDMA device $RXE_DEV"
head -c $((DEMO_MIB << 20)) /dev/urandom >"$log/original.bin"
hipobj-vmtest "$ep" mkbucket demo >/dev/null
cli() {
  cmd=$1
  shift
  hipobj "$cmd" --endpoint "$ep" --nic "$RXE_DEV" --require-rdma --no-progress -v "$@"
}
echo "demo: PUT ${DEMO_MIB} MiB"
cli put "$log/original.bin" s3://demo/object.bin || exit 1
echo "demo: GET it back"
cli get s3://demo/object.bin -o "$log/copy.bin" || exit 1
if cmp -s "$log/original.bin" "$log/copy.bin"; then
  echo "demo: the copy is identical ($(sha256sum <"$log/copy.bin" | cut -c1-16)...)"
else
  echo "demo: FAILED: the copy differs"; exit 1
fi
stats=$(hipobj-vmtest "$ep" stats)
num() { echo "$stats" | sed -n "s/.*\"$1\":{[^}]*\"$2\":\([0-9]*\).*/\1/p"; }
echo "demo: server counters: RDMA in $(num rdma bytes_in) B, RDMA out $(num rdma bytes_out) B," \
  "HTTP in $(num http bytes_in) B, HTTP out $(num http bytes_out) B"
[ "$(num rdma bytes_in)" = $((DEMO_MIB << 20)) ] && [ "$(num rdma bytes_out)" = $((DEMO_MIB << 20)) ] ||
  { echo "demo: FAILED: the payload did not move by RDMA"; exit 1; }
echo "demo: passed: ${DEMO_MIB} MiB each way by one-sided RDMA, not through HTTP"
