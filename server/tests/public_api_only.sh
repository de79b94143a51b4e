#!/bin/sh
# The servers' RDMA path is the first user of libhipobj_server and uses
# its public header alone: SRC (front/rdma.c, server/rdma_store.c) includes
# no protocol header but hipobj_server.h (only the servers' own headers
# besides), and its object calls no internal function of the library
# (ho_*), only hipObjServer* (at least MIN of them).
set -eu
src=$1 obj=$2 min=${3:-6}
bad=$(grep -E '^#include "' "$src" | grep -vE '"(hipobj_server|rdma|rdma_store|hash|log)\.h"' || true)
if [ -n "$bad" ]; then
  echo "$src includes more than the public server API:"; echo "$bad"; exit 1
fi
internal=$(nm -u "$obj" | awk '{print $2}' | grep -E '^ho_' || true)
if [ -n "$internal" ]; then
  echo "$src calls internal functions:"; echo "$internal"; exit 1
fi
n=$(nm -u "$obj" | awk '{print $2}' | grep -c '^hipObjServer' || true)
echo "$src: $n hipObjServer* functions, no internal one"
[ "$n" -ge "$min" ]
