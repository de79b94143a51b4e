#!/bin/sh
# Type-2 memory windows on rxe: the NIC enforces a window's direction and
# lifetime (rxe does not check its range: reported, not failed) and closes it
# on LOCAL_INV and SEND_WITH_INV; the cost of a
# bind and an invalidation. Then transfers that require scoped tokens. (The
# per-transfer comparison with the MR is a benchmark: bench/rxe-windows.sh.)
. /payload/lib.sh
rc=0
hipobj-vmprobe windows || rc=1
start_server || exit 1
HIPOBJ_REQUIRE_SCOPED_TOKENS=1 hipobj-vmtest "$ENDPOINT" init || rc=1
HIPOBJ_REQUIRE_SCOPED_TOKENS=1 hipobj-vmtest "$ENDPOINT" sizes || rc=1
exit $rc
