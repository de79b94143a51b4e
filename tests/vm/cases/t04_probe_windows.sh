#!/bin/sh
# Type-2 memory windows on rxe: the NIC enforces a window's range and
# direction and closes it on LOCAL_INV and SEND_WITH_INV; the cost of a
# bind and an invalidation. Then transfers that require scoped tokens, and
# the same small-object benchmark with windows and with the MR.
. /payload/lib.sh
rc=0
hipobj-vmprobe windows || rc=1
start_server || exit 1
HIPOBJ_REQUIRE_SCOPED_TOKENS=1 hipobj-vmtest "$ENDPOINT" init || rc=1
HIPOBJ_REQUIRE_SCOPED_TOKENS=1 hipobj-vmtest "$ENDPOINT" sizes || rc=1
for scoped in 1 0 1 0; do
  echo "bench: HIPOBJ_SCOPED_TOKENS=$scoped"
  HIPOBJ_SCOPED_TOKENS=$scoped hipobj-vmtest "$ENDPOINT" bench 1 65536 || rc=1
done
exit $rc
