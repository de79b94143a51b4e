#!/bin/sh
# hipobj-gateway carries no test-server code and no second copy of the
# library: none of its symbols is the test server's store or S3 layer
# (hs_store_*, hs_s3_*, hs_op_*, hs_rdma_get/put), and the only library
# code built in (global ho_* symbols) is the shared helpers of
# hipobj_common (COMMON_OBJECTS: hex, sizes); the rest of the library is
# libhipobj_server.so.0's, hidden there.
set -eu
bin=$1
shift
defined() { nm "$@" | awk '$2 ~ /^[TDBR]$/ {print $3}' | sort -u; }
test_server=$(nm "$bin" | awk '{print $NF}' |
  grep -E '^(hs_store_|hs_s3_|hs_op_|hs_rdma_(get|put)$)' || true)
if [ -n "$test_server" ]; then
  echo "the gateway holds test-server code:"; echo "$test_server"; exit 1
fi
common=$(defined "$@")
copies=$(defined "$bin" | grep '^ho_' | while read -r s; do
  echo "$common" | grep -qx "$s" || echo "$s"; done)
if [ -n "$copies" ]; then
  echo "the gateway holds a static copy of library internals:"
  echo "$copies"; exit 1
fi
n=$(nm "$bin" | awk '{print $NF}' | grep -cE '^(hs_|ho_)' || true)
echo "hipobj-gateway: $n hs_/ho_ symbols, none of the test server's, no" \
     "library internals but hipobj_common's"
