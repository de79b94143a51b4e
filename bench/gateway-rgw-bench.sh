#!/usr/bin/env bash
# hipobj-gateway in front of a real Ceph RGW, in one run: the same client
# (the hipobj command in the Soft-RoCE VM) GETs 1, 4, 16 and 64 MiB objects
#   - by RDMA through the gateway (on rxe0 in the VM), and
#   - by plain HTTP straight from RGW (no gateway),
# in alternating rounds, and the gateway's CPU time per GB it moved. RGW
# runs on this host (tests/ceph/rgw-up.sh), reached from the VM through
# run.sh --host-port: both paths read the object from RGW over that same
# link, so the difference is the gateway's. Under TCG every guest cycle is
# emulated, so first, on this host's own CPU, the gateway's forwarding cost
# (bench/gateway-host-bench.py: plain HTTP through the gateway vs straight
# from RGW, the gateway's CPU per GB). Prints two markdown tables.
#   bench/gateway-rgw-bench.sh [ROUNDS]   (default 5)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-5}
build=$root/build/vm
res=$(mktemp -d)
export CEPH_DIR=${CEPH_DIR:-/tmp/hipobj-ceph-bench} RGW_PORT=${RGW_PORT:-17680}
export MON_PORT=${MON_PORT:-13600} OSD_PORT_MIN=${OSD_PORT_MIN:-17100} OSD_PORT_MAX=${OSD_PORT_MAX:-17199}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" --target hipobj hipobj_s3 hipobj_cli hipobj-gateway \
  >"$build.log" 2>&1 || { tail -n 30 "$build.log"; exit 1; }
bash "$root/tests/ceph/rgw-up.sh" >"$res/rgw-up.log" 2>&1 || { cat "$res/rgw-up.log"; exit 1; }
trap 'bash "$root/tests/ceph/rgw-down.sh" >/dev/null 2>&1; rm -rf "$res"' EXIT
. "$CEPH_DIR/s3.env"
/usr/bin/python3 - <<'PY'
import os, boto3
from botocore.config import Config
s3 = boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT"],
                  config=Config(s3={"addressing_style": "path"}))
s3.create_bucket(Bucket="gwbench")
PY
echo "## On this host (native CPU): forwarding"
"$build/gateway/hipobj-gateway" --listen 127.0.0.1:0 --backend "$S3_ENDPOINT" \
  --backend-access-key "$AWS_ACCESS_KEY_ID" --backend-secret-key "$AWS_SECRET_ACCESS_KEY" \
  --access-key GWKEY --secret-key GWSECRET --no-rdma >"$res/gw.out" 2>"$res/gw.err" &
gw_pid=$!
for _ in $(seq 50); do grep -q listening "$res/gw.out" && break; sleep 0.1; done
gw_url=$(sed -n 's/^listening on //p' "$res/gw.out")
/usr/bin/python3 "$root/bench/gateway-host-bench.py" "$S3_ENDPOINT" "$AWS_ACCESS_KEY_ID" \
  "$AWS_SECRET_ACCESS_KEY" "$gw_url" GWKEY GWSECRET "$gw_pid" "$rounds"
kill "$gw_pid"; wait "$gw_pid" || true
echo
echo "## In the Soft-RoCE VM (TCG): RDMA through the gateway"
"$root/tools/rxe-vm/run.sh" --quiet --test-timeout 1500 --timeout 1800 --results "$res" \
  --host-port "7480:$RGW_PORT" --env "ROUNDS=$rounds" \
  --env "RGW_ACCESS_KEY=$AWS_ACCESS_KEY_ID" --env "RGW_SECRET_KEY=$AWS_SECRET_ACCESS_KEY" \
  --file "$build/src/libhipobj.so.0:lib/libhipobj.so.0" \
  --file "$build/integrations/curl/libhipobj_s3.so.0:lib/libhipobj_s3.so.0" \
  --file "$build/gateway/hipobj-gateway:bin/hipobj-gateway" \
  --file "$build/tools/hipobj/hipobj:bin/hipobj" \
  --file "$(command -v curl):bin/curl" \
  --file "$root/tests/vm/lib.sh:lib.sh" \
  "$root/bench/gateway-rgw-bench-guest.sh"
cat "$res/table.md"
