#!/bin/sh
# Every dynamic symbol libhipobj_server.so.0 defines is a hipObjServer*
# function, and every function its header declares is exported.
set -eu
lib=$1 header=$2
syms=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRW]$/ {print $3}' | sed 's/@.*//')
bad=$(echo "$syms" | grep -v '^hipObjServer' || true)
if [ -n "$bad" ]; then
  echo "non-public symbols exported:"; echo "$bad"; exit 1
fi
soname=$(objdump -p "$lib" | awk '/SONAME/ {print $2}')
[ "$soname" = "libhipobj_server.so.0" ] || { echo "soname is $soname"; exit 1; }
declared=$(grep -oE '^(hipObjServer[A-Za-z]+)\(|[ *](hipObjServer[A-Za-z]+)\(' "$header" |
           grep -oE 'hipObjServer[A-Za-z]+' | sort -u)
missing=""
for f in $declared; do
  echo "$syms" | grep -qx "$f" || missing="$missing $f"
done
if [ -n "$missing" ]; then
  echo "declared but not exported:$missing"; exit 1
fi
count=$(echo "$declared" | wc -w)
echo "exports: $count public functions, soname $soname, nothing else"
[ "$count" -ge 19 ]
