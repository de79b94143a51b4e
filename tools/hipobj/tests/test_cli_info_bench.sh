#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# hipobj info on this host, and hipobj bench (table and JSON) against
# hipobj-test-server.
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

# The choice comes from hipObjGetInfo(): test_info_print compares the
# printed lines with the query on the fake world. Here, on this host: when
# hipObjInit works (an RDMA device with an active port), the NIC, the
# reason, the port and the GID; when it does not, why, and the fallback.
if grep -q "hipObjInit failed: " "$WORK/out"; then
  pass "info: says why hipObject cannot start here"
else
  grep -q "^  NIC: .*, PCI .*, NUMA " "$WORK/out" && pass "info: the NIC" || fail "info: NIC: $(cat "$WORK/out")"
  grep -q "^  why: " "$WORK/out" && pass "info: why" || fail "info: why"
  grep -q "^  port [0-9]*, GID [0-9]* " "$WORK/out" && pass "info: port and GID" || fail "info: port and GID"
fi
have_rdma || grep -q "hipObjInit failed: .*plain HTTP" "$WORK/out" || fail "info: no device, yet init worked: $(cat "$WORK/out")"
# The version line is the query's, before hipObjInit.
grep -q "^hipObject [0-9]*\.[0-9]*\.[0-9]* (hipobj " "$WORK/out" && pass "info: version" || fail "info: version"

command -v curl >/dev/null || skip "curl (the command) is not installed"
start_server "$SERVER_BIN"
make_bucket bench
run bench s3://bench/run1 --endpoint "$ENDPOINT" --sizes 4K,256K --concurrency 1,3 --iterations 4
expect_rc 0 "" "bench (table)"
[ "$(grep -c '^PUT\|^GET' "$WORK/out")" = 8 ] && pass "bench: 8 rows" || fail "bench rows: $(cat "$WORK/out")"
grep -q "p99 ms" "$WORK/out" && pass "bench: percentiles" || fail "bench: header"
grep -q "cpu ms/x *cpu s/GB" "$WORK/out" && pass "bench: CPU columns" || fail "bench: no CPU columns"
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
assert r[0]["cpu_user_s"] + r[0]["cpu_sys_s"] > 0, r
assert r[0]["cpu_ms_per_transfer"] > 0 and r[0]["cpu_s_per_gb"] > 0, r
PYEOF
# --vs-http: each point again through a plain-HTTP client, with its CPU.
run bench s3://bench --endpoint "$ENDPOINT" --sizes 64K --concurrency 1 --iterations 3 --json --vs-http
expect_rc 0 "" "bench --vs-http"
"$PY" - "$WORK/out" <<'PYEOF' && pass "bench --vs-http: JSON" || fail "bench --vs-http: $(cat "$WORK/out")"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"]
assert d["ok"] is True and len(r) == 4, d
assert [x["op"] for x in r] == ["PUT", "PUT", "GET", "GET"], r
assert r[1]["path"] == "HTTP" and r[3]["path"] == "HTTP", r
assert all(x["cpu_ms_per_transfer"] > 0 for x in r), r
PYEOF
# The server's CPU in its stats.
curl -s "$ENDPOINT/_hipobj/stats" | "$PY" -c 'import json,sys; c=json.load(sys.stdin)["cpu"]; assert c["transfers"] > 0 and c["user_s"] + c["sys_s"] > 0 and c["ms_per_transfer"] > 0, c' \
  && pass "stats: the server's CPU" || fail "stats: cpu: $(curl -s "$ENDPOINT/_hipobj/stats")"

# The bench's objects are deleted afterwards (unless --keep).
curl -s "$ENDPOINT/bench?list-type=2" | grep -q "hipobj-bench" && fail "bench left objects" || pass "bench cleaned up"
finish
