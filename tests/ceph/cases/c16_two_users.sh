#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Users apart through hipobj-gateway (GW-2): two RGW users, and a
# credentials file mapping each gateway user to one of them. RGW keeps them
# apart (tests/ceph/two_users.py); a file in which the two would share
# one store identity is refused unless --shared-store-identity.
set -uo pipefail
. "$ROOT/tests/ceph/lib.sh"
conf=$CEPH_DIR/ceph.conf
for u in a b; do
  radosgw-admin -c "$conf" user create --uid "c16$u" --display-name "c16 $u" \
    --access-key "C16USER${u^^}KEY" --secret-key "c16-$u-store-secret" >/dev/null ||
    { echo "FAIL: radosgw-admin user create c16$u"; exit 1; }
done
export ALICE_KEY=C16ALICE ALICE_SECRET=alice-gw-secret
export BOB_KEY=C16BOB BOB_SECRET=bob-gw-secret
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '%s %s C16USERAKEY c16-a-store-secret\n%s %s C16USERBKEY c16-b-store-secret\n' \
  "$ALICE_KEY" "$ALICE_SECRET" "$BOB_KEY" "$BOB_SECRET" >"$dir/users"
printf '%s %s\n%s %s\n' "$ALICE_KEY" "$ALICE_SECRET" "$BOB_KEY" "$BOB_SECRET" >"$dir/shared"
chmod 600 "$dir/users" "$dir/shared"
gw=$BUILD/gateway/hipobj-gateway
# sharing one identity: refused, unless said
if timeout 10 "$gw" --listen 127.0.0.1:0 --backend "$S3_ENDPOINT" \
     --backend-access-key "$AWS_ACCESS_KEY_ID" --backend-secret-key "$AWS_SECRET_ACCESS_KEY" \
     --credentials "$dir/shared" --no-rdma >"$dir/out" 2>"$dir/err"; then
  echo "FAIL: a shared-identity file was accepted"; exit 1
fi
grep -q -- --shared-store-identity "$dir/err" ||
  { echo "FAIL: no reason given:"; cat "$dir/err"; exit 1; }
echo "ok   a file whose users share one store identity is refused"
out=$dir/gw.out
"$gw" --listen 127.0.0.1:0 --backend "$S3_ENDPOINT" --credentials "$dir/users" \
  --no-rdma >"$out" 2>"$dir/gw.err" &
pid=$!
GW=
for _ in $(seq 100); do
  GW=$(sed -n 's/^listening on //p' "$out")
  [ -n "$GW" ] && break
  sleep 0.1
done
[ -n "$GW" ] || { echo "FAIL: the gateway did not start:"; cat "$dir/gw.err"; kill $pid; exit 1; }
/usr/bin/python3 "$ROOT/tests/ceph/two_users.py" --gw "$GW"
rc=$?
kill $pid; wait $pid || { echo "FAIL: the gateway exited $?"; rc=1; }
exit $rc
