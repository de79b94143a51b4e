#!/bin/sh
# GET/PUT of 1 B .. 64 MiB at offsets, a ranged GET, UploadPart, and more
# client threads than connections; server counters prove the RDMA path.
. /payload/lib.sh
start_server || exit 1
rc=0
hipobj-vmtest "$ENDPOINT" init || rc=1
hipobj-vmtest "$ENDPOINT" sizes || rc=1
hipobj-vmtest "$ENDPOINT" upload-part || rc=1
HIPOBJ_MAX_TRANSFERS=4 hipobj-vmtest "$ENDPOINT" threads 12 || rc=1
exit $rc
