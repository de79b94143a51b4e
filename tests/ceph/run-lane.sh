#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Ceph lane: hipobj-gateway in front of a real Ceph RGW. Builds what the
# cases need (build/vm, as the Soft-RoCE lane), brings RGW up
# (tests/ceph/rgw-up.sh), runs tests/ceph/cases/*.sh (or the cases given)
# one at a time, and tears RGW down whatever happens. Each case gets
# S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (RGW's), BUILD, ROOT
# and CEPH_DIR; exit 0 passes, 77 skips (with a printed reason), anything
# else fails. Prints "ceph: N passed, N failed, N skipped" last; exits 77 if
# Ceph is not installed, non-zero if a case failed.
#   tests/ceph/run-lane.sh [CASE...]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build/vm
export CEPH_DIR=${CEPH_DIR:-/tmp/hipobj-ceph-lane.$$}
t0=$SECONDS
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON >/dev/null &&
  cmake --build "$build" -j"$(nproc)" --target hipobj hipobj_s3 hipobj_cli hipobj-gateway \
    get-object put-object >"$build.ceph.log" 2>&1 ||
  { tail -n 30 "$build.ceph.log"; echo "ceph: BUILD FAILED"; exit 1; }
up=$(bash "$root/tests/ceph/rgw-up.sh" 2>&1); rc=$?
echo "$up"
if [ $rc -eq 77 ]; then
  echo "ceph: 0 passed, 0 failed, 1 skipped ($(echo "$up" | tail -n1))"
  exit 77
fi
trap 'bash "$root/tests/ceph/rgw-down.sh"' EXIT
[ $rc -eq 0 ] || { echo "ceph: RGW did not start"; exit 1; }
. "$CEPH_DIR/s3.env"
export BUILD=$build ROOT=$root
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=("$root"/tests/ceph/cases/*.sh)
pass=0 fail=0 skip=0
for c in "${cases[@]}"; do
  name=$(basename "$c" .sh)
  echo "--- $name"
  s=$SECONDS
  timeout -k 10 900 bash "$c"; rc=$?
  case $rc in
    0) pass=$((pass + 1)); r=passed ;;
    77) skip=$((skip + 1)); r=skipped ;;
    *) fail=$((fail + 1)); r="FAILED (rc $rc)" ;;
  esac
  echo "--- $name: $r in $((SECONDS - s)) s"
  # RGW must have survived the case (c30 stops it and starts it again)
  curl -s -o /dev/null "$S3_ENDPOINT" ||
    { echo "RGW is down after $name: starting it again"; bash "$root/tests/ceph/rgw-up.sh" --rgw-only; }
done
echo "lane time: $((SECONDS - t0)) s"
echo "ceph: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
