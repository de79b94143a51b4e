#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# RGW stopped in the middle of an upload and of a download through
# hipobj-gateway: clean failures, no partial object, 503 while it is down,
# and the gateway serves again once it is back (tests/ceph/backend_stop.py).
set -uo pipefail
. "$ROOT/tests/ceph/lib.sh"
start_gateway --no-rdma --backend-timeout 5 || exit 1
/usr/bin/python3 "$ROOT/tests/ceph/backend_stop.py" "$GW" "$GWKEY" "$GWSECRET"
rc=$?
stop_gateway || rc=1
exit $rc
