#!/bin/sh
# SPDX-License-Identifier: MIT
# hipobj-gateway on Soft-RoCE: hipobj-test-server is the backend (plain HTTP
# only, --no-rdma, its own keys), the gateway is in front of it on rxe0 with
# other keys. hipobj put/get --require-rdma through the gateway, 1 B to
# 16 MiB, ranges, a multipart upload by RDMA UploadPart; for each:
#  (a) the gateway's counters: the RDMA transfer and its bytes, no HTTP body;
#  (b) the object read back straight from the backend is the same bytes;
#  (c) the backend's counters: the bytes arrived over its plain HTTP.
# Then: a request with a wrong gateway signature gets 403, and a PUT whose
# client abandons it (no ready) or is killed in the middle of its transfer
# leaves no object in the backend.
. /payload/lib.sh
. /payload/vmlib.sh
command -v hipobj-gateway >/dev/null ||
  { echo "skip: hipobj-gateway is not in the payload"; exit 77; }
[ -e "/sys/class/infiniband/$RXE_DEV" ] ||
  { echo "skip: no RDMA device $RXE_DEV"; exit 77; }

start_server --no-rdma --access-key BK --secret-key BS || exit 1
BACKEND=$ENDPOINT

GW_PID=""
gw_up() {
  hipobj-gateway --listen 127.0.0.1:0 --backend "$BACKEND" \
    --backend-access-key BK --backend-secret-key BS \
    --access-key GK --secret-key GS --nic "$RXE_DEV" "$@" \
    >/tmp/gw.$$.out 2>/tmp/gw.$$.err &
  GW_PID=$!
  GW=""
  for _ in $(seq 1 100); do
    GW=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' /tmp/gw.$$.out | head -n1)
    [ -n "$GW" ] && break
    kill -0 "$GW_PID" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$GW" ] || { echo "gateway did not start:"; cat /tmp/gw.$$.out /tmp/gw.$$.err; return 1; }
  sed 's/^/  gateway| /' /tmp/gw.$$.err
  echo "gateway $GW_PID at $GW, backend $BACKEND"
}
gw_down() {
  [ -n "$GW_PID" ] || return 0
  kill -TERM "$GW_PID" 2>/dev/null; wait "$GW_PID" 2>/dev/null; GW_PID=""
  grep -h "warning" /tmp/gw.$$.err 2>/dev/null | sort | uniq -c | head -n 10 |
    sed 's/^/  gateway stderr: /'
}
trap 'gw_down; stop_server' EXIT
gw_up || exit 1
grep -q "RDMA on $RXE_DEV" /tmp/gw.$$.err ||
  { echo "FAIL: the gateway has no RDMA on $RXE_DEV"; exit 1; }

# Counters: gstat (the gateway) and bstat (the backend) SECTION NAME.
js() { curl -s "$1/_hipobj/stats" | tr -d ' \n' | sed -n "s/.*\"$2\":{[^}]*\"$3\":\([0-9]*\).*/\1/p"; }
gstat() { js "$GW" "$@"; }
bstat() { js "$BACKEND" "$@"; }
# hg: hipobj through the gateway (its keys); hb: straight from the backend,
# plain HTTP, the backend's keys. Both leave RC, $W/out and $W/err.
hg() {
  AWS_ACCESS_KEY_ID=GK AWS_SECRET_ACCESS_KEY=GS hipobj "$@" --endpoint "$GW" --nic "$RXE_DEV" \
    >"$W/out" 2>"$W/err"
  RC=$?; sed 's/^/  | /' "$W/err"
}
hb() {
  AWS_ACCESS_KEY_ID=BK AWS_SECRET_ACCESS_KEY=BS hipobj "$@" --endpoint "$BACKEND" --no-rdma \
    >"$W/out" 2>"$W/err"
  RC=$?; [ $RC = 0 ] || sed 's/^/  | /' "$W/err"
}
# s3 KEYPAIR ARGS...: curl signing with KEYPAIR (BK:BS, GK:GS); prints the status.
s3() { k=$1; shift; curl -s -o /dev/null -w '%{http_code}' --aws-sigv4 "aws:amz:us-east-1:s3" --user "$k" "$@"; }
# The counters of both sides, remembered as g_* and b_*.
snap() {
  g_get=$(gstat rdma get); g_put=$(gstat rdma put); g_in=$(gstat rdma bytes_in)
  g_out=$(gstat rdma bytes_out); g_hout=$(gstat http bytes_out); g_hin=$(gstat http bytes_in)
  g_fail=$(gstat rdma failures); b_hin=$(bstat http bytes_in); b_hout=$(bstat http bytes_out)
}
# d NAME STAT SECTION NAME: the change of a counter since snap.
dg() { echo $(( $(gstat "$2" "$3") - $1 )); }
db() { echo $(( $(bstat "$2" "$3") - $1 )); }
SMALL=65536 # stats JSON and S3 XML answers: the gateway's own HTTP bodies

[ "$(s3 GK:GS -X PUT "$GW/gwb")" = 200 ] && pass "CreateBucket through the gateway" ||
  { fail "CreateBucket through the gateway"; finish; }
[ "$(s3 BK:BS -I "$BACKEND/gwb")" = 200 ] && pass "the bucket is in the backend" ||
  fail "no bucket in the backend"

# roundtrip NAME SIZE [PUT options]: put and get by RDMA through the
# gateway, every check (a), (b), (c).
roundtrip() {
  name=$1 size=$2; shift 2
  head -c "$size" /dev/urandom >"$W/$name"
  snap
  hg put "$W/$name" "s3://gwb/$name" -v --require-rdma "$@"
  [ $RC = 0 ] && said "via RDMA" || { fail "$name: put rc $RC"; return; }
  pin=$(dg "$g_in" rdma bytes_in); bhin=$(db "$b_hin" http bytes_in); ghin=$(dg "$g_hin" http bytes_in)
  [ "$pin" = "$size" ] && pass "$name: gateway rdma.bytes_in +$pin" ||
    fail "$name: gateway rdma.bytes_in +$pin, not $size"
  [ "$ghin" -lt "$SMALL" ] && pass "$name: gateway http.bytes_in +$ghin" ||
    fail "$name: gateway http.bytes_in +$ghin"
  [ "$bhin" = "$size" ] && pass "$name: backend http.bytes_in +$bhin (streamed by the gateway)" ||
    fail "$name: backend http.bytes_in +$bhin, not $size"
  hb get "s3://gwb/$name" -o "$W/$name.direct"
  [ $RC = 0 ] && cmp -s "$W/$name" "$W/$name.direct" && pass "$name: same bytes in the backend" ||
    fail "$name: the backend's object differs (rc $RC)"
  snap
  hg get "s3://gwb/$name" -o "$W/$name.back" -v --require-rdma
  [ $RC = 0 ] && said "via RDMA" || { fail "$name: get rc $RC"; return; }
  gout=$(dg "$g_out" rdma bytes_out); ghout=$(dg "$g_hout" http bytes_out)
  bhout=$(db "$b_hout" http bytes_out)
  [ "$gout" = "$size" ] && pass "$name: gateway rdma.bytes_out +$gout" ||
    fail "$name: gateway rdma.bytes_out +$gout, not $size"
  [ "$ghout" -lt "$SMALL" ] && pass "$name: gateway http.bytes_out +$ghout" ||
    fail "$name: gateway http.bytes_out +$ghout"
  [ "$bhout" -ge "$size" ] && pass "$name: backend http.bytes_out +$bhout" ||
    fail "$name: backend http.bytes_out +$bhout < $size"
  cmp -s "$W/$name" "$W/$name.back" && pass "$name: same bytes back" || fail "$name: bytes differ"
  [ "$(dg "$g_fail" rdma failures)" = 0 ] || fail "$name: gateway rdma.failures grew"
}

roundtrip one 1
roundtrip four-k 4096
roundtrip mib-plus-1 1048577
roundtrip sixteen-m 16777216

# GET in ranges (Range forwarded, 206 from the backend, each by RDMA).
snap
hg get s3://gwb/sixteen-m -o "$W/r.back" --part-size 3M -v --require-rdma
[ $RC = 0 ] && said "parts: 6 by RDMA, 0 by HTTP" && pass "ranged get: 6 RDMA ranges" ||
  fail "ranged get: rc $RC"
cmp -s "$W/sixteen-m" "$W/r.back" && pass "ranges: same bytes" || fail "ranges: bytes differ"
[ "$(dg "$g_get" rdma get)" = 6 ] && [ "$(dg "$g_out" rdma bytes_out)" = 16777216 ] &&
  pass "ranges: gateway rdma.get +6, bytes_out +16777216" || fail "ranges: gateway counters"
# One range alone, off the start and the end.
snap
hg get s3://gwb/mib-plus-1 -o "$W/r2.back" --part-size 300K -v --require-rdma
[ $RC = 0 ] && said "parts: 4 by RDMA, 0 by HTTP" && cmp -s "$W/mib-plus-1" "$W/r2.back" &&
  pass "ranges of 1 MiB + 1 (300K, the last 126977 B)" || fail "ranges of 1 MiB + 1: rc $RC"

# Multipart: CreateMultipartUpload and Complete forwarded, each UploadPart
# by RDMA with its token.
head -c 12582917 /dev/urandom >"$W/mp"
snap
hg put "$W/mp" s3://gwb/mp --part-size 5M -v --require-rdma
[ $RC = 0 ] && said "parts: 3 by RDMA, 0 by HTTP" && pass "multipart put: 3 RDMA parts" ||
  fail "multipart put: rc $RC"
grep -q 'etag: ".*-3"' "$W/err" && pass "multipart ETag" || fail "multipart ETag"
[ "$(dg "$g_put" rdma put)" = 3 ] && [ "$(dg "$g_in" rdma bytes_in)" = 12582917 ] &&
  pass "multipart: gateway rdma.put +3, bytes_in +12582917" || fail "multipart: gateway counters"
[ "$(db "$b_hin" http bytes_in)" -ge 12582917 ] && pass "multipart: backend got the parts over HTTP" ||
  fail "multipart: backend http.bytes_in"
hb get s3://gwb/mp -o "$W/mp.direct"
[ $RC = 0 ] && cmp -s "$W/mp" "$W/mp.direct" && pass "multipart: same bytes in the backend" ||
  fail "multipart: the backend's object differs"

# A wrong gateway signature: 403, nothing reaches the backend (plain PUT,
# and an RDMA PUT by hipobj).
snap
st=$(s3 GK:wrong -X PUT --data-binary @"$W/four-k" "$GW/gwb/forged")
[ "$st" = 403 ] && pass "forged PUT: 403" || fail "forged PUT: $st"
AWS_ACCESS_KEY_ID=GK AWS_SECRET_ACCESS_KEY=wrong hipobj put "$W/mib-plus-1" s3://gwb/forged2 \
  --endpoint "$GW" --nic "$RXE_DEV" --require-rdma >/dev/null 2>"$W/err"; RC=$?
[ $RC = 4 ] && pass "forged RDMA PUT: access denied (exit 4)" || { fail "forged RDMA PUT: rc $RC"; cat "$W/err"; }
st=$(s3 GK:wrong "$GW/gwb/one")
[ "$st" = 403 ] && pass "forged GET: 403" || fail "forged GET: $st"
for k in forged forged2; do
  st=$(s3 BK:BS -I "$BACKEND/gwb/$k")
  [ "$st" = 404 ] && pass "$k: not in the backend (404)" || fail "$k: backend HEAD $st"
done
[ "$(db "$b_hin" http bytes_in)" = 0 ] && pass "forged: no byte reached the backend" ||
  fail "forged: the backend got bytes"
[ "$(dg "$g_put" rdma put)" = 0 ] || fail "forged: the gateway started an RDMA PUT"

# A PUT abandoned after the gateway's reply: the client never sends ready,
# the gateway gives the transfer up and cuts the backend's request, which
# had its 100 Continue and no byte.
snap
S3MINI_KEY=GK S3MINI_SECRET=GS hipobj-vmtest "$GW" vanish-put abandoned >"$W/v" 2>&1
RC=$?; sed 's/^/  /' "$W/v"
[ $RC = 0 ] && pass "abandoned PUT: the gateway gave it up" || fail "abandoned PUT: rc $RC"
[ "$(dg "$g_put" rdma put)" = 1 ] && pass "abandoned PUT: the gateway had started it" ||
  fail "abandoned PUT: gateway rdma.put +$(dg "$g_put" rdma put)"
st=$(s3 BK:BS -I "$BACKEND/vmtest/abandoned")
[ "$st" = 404 ] && pass "abandoned PUT: no object in the backend (404)" ||
  fail "abandoned PUT: backend HEAD $st"
[ "$(db "$b_hin" http bytes_in)" = 0 ] && pass "abandoned PUT: no byte reached the backend" ||
  fail "abandoned PUT: the backend got $(db "$b_hin" http bytes_in) bytes"

# A client killed in the middle of an RDMA PUT: the backend's request is cut
# before its last byte, so no object.
head -c $((128 << 20)) /dev/urandom >"$W/big"
snap
g_done=$(gstat rdma completed)
AWS_ACCESS_KEY_ID=GK AWS_SECRET_ACCESS_KEY=GS hipobj put "$W/big" s3://gwb/killed \
  --endpoint "$GW" --nic "$RXE_DEV" --require-rdma --no-progress >/dev/null 2>"$W/kerr" &
client=$!
started=0
for _ in $(seq 1 600); do
  [ "$(gstat rdma put)" -gt "$g_put" ] && { started=1; break; }
  kill -0 $client 2>/dev/null || break
  sleep 0.05
done
sleep 0.3
kill -KILL $client 2>/dev/null; wait $client; krc=$?
echo "  client killed (rc $krc) $( [ $started = 1 ] && echo 'after the gateway started its transfer')"
for _ in $(seq 1 300); do
  [ "$(gstat rdma failures)" -gt "$g_fail" ] && break
  [ "$(gstat rdma completed)" -gt "$g_done" ] && break
  sleep 0.1
done
if [ "$(gstat rdma completed)" -gt "$g_done" ]; then
  echo "  note: the transfer completed before the kill; the killed-client check is inconclusive"
  fail "killed: could not kill the client in the middle of its transfer"
elif [ $started = 1 ] && [ "$(gstat rdma failures)" -gt "$g_fail" ]; then
  pass "killed: the gateway's transfer failed"
  moved=$(db "$b_hin" http bytes_in)
  echo "  backend got $moved of $((128 << 20)) bytes before the cut"
  st=$(s3 BK:BS -I "$BACKEND/gwb/killed")
  [ "$st" = 404 ] && pass "killed: no object in the backend (404)" || fail "killed: backend HEAD $st"
  ab=$(bstat http aborted_bodies); echo "  backend http.aborted_bodies: $ab"
else
  fail "killed: started=$started, no failure counted by the gateway"
fi
# The gateway goes on serving.
hg get s3://gwb/mib-plus-1 -o "$W/after" --require-rdma
[ $RC = 0 ] && cmp -s "$W/mib-plus-1" "$W/after" && pass "after the kill: RDMA GET works" ||
  fail "after the kill: get rc $RC"
echo "gateway: $(curl -s "$GW/_hipobj/stats")"
echo "backend: $(curl -s "$BACKEND/_hipobj/stats")"
finish
