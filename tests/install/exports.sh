#!/bin/sh
# Every dynamic symbol libhipobj.so.0 defines is a public hipObj* function.
set -eu
lib=$1
bad=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRW]$/ {print $3}' | grep -v '^hipObj' || true)
count=$(nm -D --defined-only "$lib" | awk '$2 == "T"' | grep -c '^.* hipObj' || true)
if [ -n "$bad" ]; then
  echo "non-public symbols exported:"; echo "$bad"; exit 1
fi
soname=$(objdump -p "$lib" | awk '/SONAME/ {print $2}')
[ "$soname" = "libhipobj.so.0" ] || { echo "soname is $soname"; exit 1; }
echo "exports: $count public functions, soname $soname, nothing else"
[ "$count" -ge 16 ]
