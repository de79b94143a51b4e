#!/usr/bin/env bash
# The main job: build hipObject, start the test server, PUT a file and GET it
# back over RDMA with the hipobj command, verify it, and report what moved
# the bytes and how fast.
#   scripts/demo.sh [--native [DEVICE]] [--mib N]
# Without --native it runs in a QEMU VM with Soft-RoCE (tools/rxe-vm), so it
# needs no RDMA hardware; --native uses this machine's RDMA device (the first
# active one, or DEVICE).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
native=0 dev="" mib=64
while [ $# -gt 0 ]; do
  case "$1" in
    --native) native=1; if [ $# -gt 1 ] && [[ "$2" != --* ]]; then dev=$2; shift; fi ;;
    --mib) mib=$2; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "usage: $0 [--native [DEVICE]] [--mib N]" >&2; exit 2 ;;
  esac
  shift
done
bash "$root/scripts/deps.sh"
build=$root/build/demo
echo "demo: building (release) in $build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target hipobj hipobj-test-server hipobj_cli \
  hipobj-vmtest >"$build.log" 2>&1 || { tail -n 40 "$build.log"; exit 1; }
if [ $native -eq 1 ]; then
  if [ -z "$dev" ]; then
    dev=$(for d in /sys/class/infiniband/*; do
            [ -e "$d" ] || continue
            grep -qs ACTIVE "$d"/ports/*/state && basename "$d"
          done | head -n1)
  fi
  [ -n "$dev" ] || { echo "demo: no active RDMA device here; run without --native"; exit 6; }
  PATH=$build/server:$build/tools/hipobj:$build/tests/vm:$PATH RXE_DEV=$dev DEMO_MIB=$mib \
    exec bash "$root/scripts/demo-run.sh"
fi
exec "$root/tools/rxe-vm/run.sh" --test-timeout 600 --timeout 900 \
  --env "DEMO_MIB=$mib" \
  --file "$build/src/libhipobj.so.0:lib/libhipobj.so.0" \
  --file "$build/server/hipobj-test-server:bin/hipobj-test-server" \
  --file "$build/tools/hipobj/hipobj:bin/hipobj" \
  --file "$build/tests/vm/hipobj-vmtest:bin/hipobj-vmtest" \
  "$root/scripts/demo-run.sh"
