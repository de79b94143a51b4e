#!/bin/sh
# hipobj-gateway carries no test-server code and no second copy of the
# library: no symbol it defines is one of the test server's S3 layer and
# store (HS_CORE, the hs_core archive: hs_store_*, the S3 handlers...),
# and the only library code built in (global ho_* symbols) is the shared
# helpers of hipobj_common (COMMON_OBJECTS: hex, sizes); the rest of the
# library is libhipobj_server.so.0's, hidden there.
# Usage: symbols.sh GATEWAY HS_CORE COMMON_OBJECTS...
set -eu
bin=$1 core=$2
shift 2
defined() { nm "$@" 2>/dev/null | awk '$2 ~ /^[TDBR]$/ {print $3}' | sort -u; }
mine=$(defined "$bin")
core_syms=$(defined "$core")
[ -n "$core_syms" ] || { echo "no symbols in $core"; exit 1; }
test_server=$(echo "$mine" | grep -Fx "$core_syms" || true)
if [ -n "$test_server" ]; then
  echo "the gateway holds test-server code:"; echo "$test_server"; exit 1
fi
stores=$(echo "$mine" | grep '^hs_store_' || true)
if [ -n "$stores" ]; then
  echo "the gateway holds a store:"; echo "$stores"; exit 1
fi
common=$(defined "$@")
[ -n "$common" ] || { echo "no symbols in the hipobj_common objects"; exit 1; }
copies=$(echo "$mine" | grep '^ho_' | grep -Fxv "$common" || true)
if [ -n "$copies" ]; then
  echo "the gateway holds a static copy of library internals:"
  echo "$copies"; exit 1
fi
n=$(nm "$bin" | awk '{print $NF}' | grep -cE '^(hs_|ho_)' || true)
echo "hipobj-gateway: $n hs_/ho_ symbols, none of the test server's" \
     "($(echo "$core_syms" | wc -l) in hs_core), no library internals but" \
     "hipobj_common's"
