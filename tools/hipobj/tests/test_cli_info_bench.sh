#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# hipobj info (on this host, and on a fake sysfs tree with an RDMA device)
# and hipobj bench (table and JSON) against hipobj-test-server.
. "$(dirname "$0")/lib.sh"
# libamdhip64, when installed, allocates at load and never frees.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
PY=$(command -v python3) || skip "python3 is needed to check the JSON"

run info
expect_rc 0 "" "info runs"
for section in "GPU runtimes" "RDMA:" "Selection (hipObjInit" "GPU-direct RDMA" "Options in effect:"; do
  grep -qF "$section" "$WORK/out" && pass "info: $section" || fail "info lacks $section"
done
AWS_SECRET_ACCESS_KEY=do-not-print run info
grep -q "do-not-print" "$WORK/out" && fail "info printed a secret" || pass "info hides secrets"

# A fake sysfs tree: one RoCE device with an IPv4-mapped RoCE v2 GID.
root=$WORK/sys
dev=$root/sys/class/infiniband/fake_mlx0
mkdir -p "$dev/ports/1/gids" "$dev/ports/1/gid_attrs/types" "$dev/ports/1/gid_attrs/ndevs" \
         "$root/sys/devices/pci0000:00/0000:41:00.0"
ln -s "$root/sys/devices/pci0000:00/0000:41:00.0" "$dev/device"
echo 1 >"$root/sys/devices/pci0000:00/0000:41:00.0/numa_node"
echo "4: ACTIVE" >"$dev/ports/1/state"
echo "Ethernet" >"$dev/ports/1/link_layer"
echo "fe80:0000:0000:0000:0000:0000:0000:0001" >"$dev/ports/1/gids/0"
echo "IB/RoCE v1" >"$dev/ports/1/gid_attrs/types/0"
echo "0000:0000:0000:0000:0000:ffff:0a01:0203" >"$dev/ports/1/gids/1"
echo "RoCE v2" >"$dev/ports/1/gid_attrs/types/1"
echo "eth7" >"$dev/ports/1/gid_attrs/ndevs/1"
echo "0000:0000:0000:0000:0000:0000:0000:0000" >"$dev/ports/1/gids/2"
HIPOBJ_SYSFS_ROOT=$root run info
expect_rc 0 "" "info on a fake sysfs tree"
grep -q "fake_mlx0  PCI 0000:41:00.0  NUMA 1" "$WORK/out" && pass "info: the device" || fail "info: device: $(cat "$WORK/out")"
grep -q "port 1: 4: ACTIVE, Ethernet" "$WORK/out" && pass "info: the port" || fail "info: port"
grep -q "GID 1 *::ffff:10.1.2.3 *RoCE v2 *eth7" "$WORK/out" && pass "info: the GID" || fail "info: GID"
grep -q "GID 2 " "$WORK/out" && fail "info: lists a zero GID" || pass "info: no zero GID"

command -v curl >/dev/null || skip "curl (the command) is not installed"
start_server "$SERVER_BIN"
make_bucket bench
run bench s3://bench/run1 --endpoint "$ENDPOINT" --sizes 4K,256K --concurrency 1,3 --iterations 4
expect_rc 0 "" "bench (table)"
[ "$(grep -c '^PUT\|^GET' "$WORK/out")" = 8 ] && pass "bench: 8 rows" || fail "bench rows: $(cat "$WORK/out")"
grep -q "p99 ms" "$WORK/out" && pass "bench: percentiles" || fail "bench: header"
run bench s3://bench --endpoint "$ENDPOINT" --sizes 64K --concurrency 2 --iterations 3 --json --ops get
expect_rc 0 "" "bench --json --ops get"
"$PY" - "$WORK/out" <<'PYEOF' && pass "bench: JSON" || fail "bench: JSON: $(cat "$WORK/out")"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"]
assert d["ok"] is True and len(r) == 1, d
assert r[0]["op"] == "GET" and r[0]["size"] == 65536 and r[0]["concurrency"] == 2, r
assert r[0]["p50_ms"] <= r[0]["p90_ms"] <= r[0]["p99_ms"], r
assert r[0]["path"] in ("HTTP", "RDMA"), r
PYEOF
# The bench's objects are deleted afterwards (unless --keep).
curl -s "$ENDPOINT/bench?list-type=2" | grep -q "hipobj-bench" && fail "bench left objects" || pass "bench cleaned up"
finish
