#!/bin/sh
# The test server's RDMA path is the first user of libhipobj_server and
# uses its public header alone: rdma.c includes no protocol header but
# hipobj_server.h (only the server's own headers besides), and its object
# calls no internal function of the library (ho_*), only hipObjServer*.
set -eu
src=$1 obj=$2
bad=$(grep -E '^#include "' "$src" | grep -vE '"(hipobj_server|rdma|hash)\.h"' || true)
if [ -n "$bad" ]; then
  echo "rdma.c includes more than the public server API:"; echo "$bad"; exit 1
fi
internal=$(nm -u "$obj" | awk '{print $2}' | grep -E '^ho_' || true)
if [ -n "$internal" ]; then
  echo "rdma.c calls internal functions:"; echo "$internal"; exit 1
fi
n=$(nm -u "$obj" | awk '{print $2}' | grep -c '^hipObjServer' || true)
echo "rdma.c: $n hipObjServer* functions, no internal one"
[ "$n" -ge 6 ]
