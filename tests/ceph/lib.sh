# SPDX-License-Identifier: MIT
# Sourced by the Ceph lane's cases (tests/ceph/lib.sh): start_gateway [ARGS...] starts
# hipobj-gateway on 127.0.0.1 (port 0) in front of the lane's RGW with the
# keys GWKEY/GWSECRET and sets GW (its URL) and GW_PID; stop_gateway stops
# it by that PID and checks it exits 0.
GWKEY=GATEWAYLANEKEY GWSECRET=gateway/lane+secret
start_gateway() {
  local out=$(mktemp) err=${GW_ERR:-$(mktemp)}
  GW_ERR=$err
  "$BUILD/gateway/hipobj-gateway" --listen 127.0.0.1:0 --backend "$S3_ENDPOINT" \
    --backend-access-key "$AWS_ACCESS_KEY_ID" --backend-secret-key "$AWS_SECRET_ACCESS_KEY" \
    --access-key "$GWKEY" --secret-key "$GWSECRET" "$@" >"$out" 2>"$err" &
  GW_PID=$!
  GW=
  for _ in $(seq 100); do
    GW=$(sed -n 's/^listening on //p' "$out")
    [ -n "$GW" ] && break
    sleep 0.1
  done
  rm -f "$out"
  [ -n "$GW" ] || { echo "FAIL: the gateway did not start:"; cat "$err"; return 1; }
  echo "gateway $GW_PID at $GW in front of $S3_ENDPOINT"
}
stop_gateway() {
  kill "$GW_PID"; wait "$GW_PID"; local rc=$?
  [ $rc -eq 0 ] || { echo "FAIL: the gateway exited $rc"; tail -n 20 "$GW_ERR"; return 1; }
}
