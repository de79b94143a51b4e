#!/bin/sh
# The gateway's files are layers, lowest first: head.c, config.c,
# backend.c, op.c, rdma_path.c, proxy.c. Each object calls only the
# objects before it (nm), so that no two call each other.
# Usage: layers.sh OBJECTS... (the gw_core objects, in any order)
set -eu
order="head config backend op rdma_path proxy"
objects="$*"
obj() { for o in $objects; do case $o in */$1.c.o) echo "$o" ;; esac; done; }
defines() { nm "$1" | awk '$2 ~ /^[TDBR]$/ {print $3}'; }
bad=0 below=""
for name in $order; do
  o=$(obj "$name")
  [ -n "$o" ] || { echo "no object for $name.c"; exit 1; }
  for low in $below; do
    calls=$(nm -u "$(obj "$low")" | awk '{print $2}' | grep -Fx "$(defines "$o")" || true)
    if [ -n "$calls" ]; then
      echo "$low.c calls $name.c, above it:"; echo "$calls"; bad=1
    fi
  done
  below="$below $name"
done
[ "$bad" -ne 0 ] || echo "gateway layers, each calling only those before: $order"
exit "$bad"
