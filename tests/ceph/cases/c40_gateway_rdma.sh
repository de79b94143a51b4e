#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# hipobj-gateway's RDMA path over real verbs in front of this lane's Ceph
# RGW: the gateway and the client run in the Soft-RoCE VM (the gateway on
# rxe0), RGW on this host, reached from the VM through run.sh --host-port.
# The VM (vm/gateway-rdma.sh) puts and gets by RDMA through the gateway;
# here every object is then read straight from RGW and compared with its
# source, and the multipart one has RGW's multipart ETag.
# Env from run-lane.sh: S3_ENDPOINT AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY
# BUILD ROOT.
set -uo pipefail
[ "${HIPOBJ_NO_VM:-0}" != 1 ] || { echo "SKIP: VMs are off (scripts/test.sh --no-vm)"; exit 77; }
need=("$BUILD/gateway/hipobj-gateway" "$BUILD/tools/hipobj/hipobj"
      "$BUILD/src/libhipobj.so.0" "$BUILD/integrations/curl/libhipobj_s3.so.0")
for f in "${need[@]}"; do
  [ -e "$f" ] || { echo "SKIP: $f not built"; exit 77; }
done
command -v qemu-system-x86_64 >/dev/null ||
  { echo "SKIP: qemu-system-x86_64 is not installed"; exit 77; }
py=/usr/bin/python3
work=$(mktemp -d /tmp/hipobj-c40.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
mkdir "$work/data"
head -c 1 /dev/urandom >"$work/data/one"
head -c 4096 /dev/urandom >"$work/data/4k"
head -c $((1048576 + 1)) /dev/urandom >"$work/data/1m1"
head -c $((16 * 1048576)) /dev/urandom >"$work/data/16m"
head -c $((12 * 1048576 + 5)) /dev/urandom >"$work/data/12m"
head -c $((3 * 1048576 + 3)) /dev/urandom >"$work/data/from-host"
bucket=gwrdma-$$
"$py" - "$bucket" "$work/data/from-host" <<'PY' || exit 1
import os, sys, boto3
from botocore.config import Config
s3 = boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT"],
                  config=Config(s3={"addressing_style": "path"}))
s3.create_bucket(Bucket=sys.argv[1])
with open(sys.argv[2], "rb") as f:
    s3.put_object(Bucket=sys.argv[1], Key="from-host", Body=f.read())
PY
port=${S3_ENDPOINT##*:}
"$ROOT/tools/rxe-vm/run.sh" --quiet --test-timeout 600 --timeout 900 \
  --log "$work/vm.log" --host-port "7480:$port" \
  --env "RGW_ACCESS_KEY=$AWS_ACCESS_KEY_ID" \
  --env "RGW_SECRET_KEY=$AWS_SECRET_ACCESS_KEY" --env "BUCKET=$bucket" \
  --file "$BUILD/src/libhipobj.so.0:lib/libhipobj.so.0" \
  --file "$BUILD/integrations/curl/libhipobj_s3.so.0:lib/libhipobj_s3.so.0" \
  --file "$BUILD/src/server/libhipobj_server.so.0:lib/libhipobj_server.so.0" \
  --file "$BUILD/gateway/hipobj-gateway:bin/hipobj-gateway" \
  --file "$BUILD/tools/hipobj/hipobj:bin/hipobj" \
  --file "$(command -v curl):bin/curl" \
  --file "$ROOT/tests/vm/lib.sh:lib.sh" \
  --file "$ROOT/tools/hipobj/tests/vm/vmlib.sh:vmlib.sh" \
  --file "$work/data:data" \
  "$ROOT/tests/ceph/vm/gateway-rdma.sh"
rc=$?
grep -E '^(ok|FAIL|gateway|  \|)' "$work/vm.log" | tail -n 60
[ $rc -eq 0 ] || { echo "FAIL: the VM part (rc $rc); log tail:"; tail -n 40 "$work/vm.log"; exit 1; }
"$py" - "$bucket" "$work/data" <<'PY'
import os, sys, boto3
from botocore.config import Config
s3 = boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT"],
                  config=Config(s3={"addressing_style": "path"}))
bucket, data = sys.argv[1], sys.argv[2]
bad = 0
for name in ("one", "4k", "1m1", "16m", "12m"):
    want = open(os.path.join(data, name), "rb").read()
    got = s3.get_object(Bucket=bucket, Key="vm-" + name)["Body"].read()
    same = got == want
    bad += not same
    print("%s: RGW holds vm-%s, %d bytes, %s" % ("ok" if same else "FAIL",
          name, len(got), "byte-identical" if same else "DIFFERENT"))
etag = s3.head_object(Bucket=bucket, Key="vm-12m")["ETag"]
mp = etag.endswith('-3"')
bad += not mp
print("%s: vm-12m is RGW's 3-part multipart object (ETag %s)" %
      ("ok" if mp else "FAIL", etag))
for o in s3.list_objects_v2(Bucket=bucket).get("Contents", []):
    s3.delete_object(Bucket=bucket, Key=o["Key"])
s3.delete_bucket(Bucket=bucket)
sys.exit(1 if bad else 0)
PY
