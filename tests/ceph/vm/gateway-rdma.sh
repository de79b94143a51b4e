#!/bin/sh
# SPDX-License-Identifier: MIT
# In the Soft-RoCE VM: hipobj-gateway on rxe0 in front of the host's Ceph
# RGW (reached through run.sh --host-port at $HOST_ADDR:7480), and the
# hipobj command moving objects through it by RDMA. The host staged the
# source files in /payload/data and checks afterwards, straight from RGW,
# that every object is byte-identical (tests/ceph/cases/c40_gateway_rdma.sh).
. /payload/lib.sh
. /payload/vmlib.sh
[ -n "$HOST_ADDR" ] || { echo "SKIP: no host network (run.sh --host-port)"; exit 77; }
D=/payload/data
start_gateway GW "http://$HOST_ADDR:7480" --backend-access-key "$RGW_ACCESS_KEY" \
  --backend-secret-key "$RGW_SECRET_KEY" --access-key GWKEY \
  --secret-key GWSECRET/secret --log-requests || exit 1
ENDPOINT=$GW_URL
echo "gateway $GW_PID at $ENDPOINT in front of http://$HOST_ADDR:7480"
export AWS_ACCESS_KEY_ID=GWKEY AWS_SECRET_ACCESS_KEY=GWSECRET/secret
B=$BUCKET

in0=$(stat rdma bytes_in); out0=$(stat rdma bytes_out); hout0=$(stat http bytes_out)
total=0
for f in one 4k 1m1 16m; do
  n=$(wc -c <"$D/$f")
  ho put "$D/$f" "s3://$B/vm-$f" -v --require-rdma
  [ $RC = 0 ] && said "via RDMA" && pass "put $f ($n B) via RDMA" || fail "put $f: rc $RC"
  ho get "s3://$B/vm-$f" -o "$W/$f" -v --require-rdma
  [ $RC = 0 ] && said "via RDMA" && pass "get $f via RDMA" || fail "get $f: rc $RC"
  cmp -s "$D/$f" "$W/$f" && pass "$f: same bytes" || fail "$f: bytes differ"
  total=$((total + n))
done
# multipart by RDMA UploadPart (ETags from ListParts), ranges by RDMA
ho put "$D/12m" "s3://$B/vm-12m" --part-size 5M -v --require-rdma
[ $RC = 0 ] && said "parts: 3 by RDMA, 0 by HTTP" && pass "multipart put: 3 RDMA parts" || fail "multipart put: rc $RC"
ho get "s3://$B/vm-12m" -o "$W/12m" --part-size 4M -v --require-rdma
[ $RC = 0 ] && said "parts: 4 by RDMA, 0 by HTTP" && pass "get in 4 RDMA ranges" || fail "ranged get: rc $RC"
cmp -s "$D/12m" "$W/12m" && pass "12m: same bytes" || fail "12m: bytes differ"
total=$((total + $(wc -c <"$D/12m")))
# an object the host put straight into RGW
ho get "s3://$B/from-host" -o "$W/from-host" -v --require-rdma
[ $RC = 0 ] && said "via RDMA" && cmp -s "$D/from-host" "$W/from-host" &&
  pass "object put in RGW directly, read by RDMA" || fail "from-host: rc $RC"
total=$((total + $(wc -c <"$D/from-host")))
# the gateway's counters: the payload moved by RDMA, not in HTTP bodies
din=$(( $(stat rdma bytes_in) - in0 )); dout=$(( $(stat rdma bytes_out) - out0 ))
dhttp=$(( $(stat http bytes_out) - hout0 ))
echo "gateway: rdma bytes_in $din, bytes_out $dout, http bytes_out $dhttp (payload $total each way, from-host once)"
[ "$din" -ge $((total - $(wc -c <"$D/from-host"))) ] && pass "gateway: RDMA READ bytes" || fail "gateway rdma.bytes_in $din"
[ "$dout" -ge "$total" ] && pass "gateway: RDMA WRITE bytes" || fail "gateway rdma.bytes_out $dout"
[ "$dhttp" -lt 65536 ] && pass "gateway: no payload in HTTP bodies" || fail "gateway http.bytes_out $dhttp"
# a missing key is RGW's 404 through the gateway, with no transfer
ho get "s3://$B/no-such-key" -o "$W/none" --require-rdma
[ $RC = 3 ] && pass "missing key: exit 3 (RGW's NoSuchKey)" || fail "missing key: rc $RC"
kill "$GW_PID"; wait "$GW_PID"
[ $? = 0 ] && pass "gateway: clean exit" || fail "gateway exit"
grep -c " rdma " /tmp/gateway.GW.err | sed 's/^/gateway log: RDMA requests: /'
[ "$FAILS" -eq 0 ] || tail -n 30 /tmp/gateway.GW.err | sed 's/^/  gw| /'
finish
