#!/bin/sh
# The Python package over real verbs: python/tests/vm/rdma_roundtrips.py
# (bytes, bytearray, memoryview and NumPy sources and targets, 1 B to 4 MiB,
# ranged GETs, parts, threads, a safetensors checkpoint saved and loaded)
# with the host's python3.11 and NumPy that run-lane.sh stages into the
# payload (tests/vm/python-payload.sh). Every byte is compared; each
# transfer's result must say path 'rdma', and the server's /_hipobj/stats
# must show it: "rdma" get/put/bytes moved by exactly the transfer, "http"
# bytes 0.
. /payload/lib.sh
py=/payload/python/bin/python3
if [ ! -x "$py" ] || [ ! -f /payload/rdma_roundtrips.py ]; then
  echo "SKIP: no Python in the payload: $(cat /payload/python-skip.txt 2>/dev/null || echo 'run through tests/vm/run-lane.sh')"
  exit 77
fi
start_server --min-part-size 1K || exit 1
PYTHONPATH=/payload/python/site PYTHONNOUSERSITE=1 PYTHONDONTWRITEBYTECODE=1 \
  "$py" /payload/rdma_roundtrips.py "$ENDPOINT"
rc=$?
stop_server
exit $rc
