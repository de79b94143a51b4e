#!/bin/sh
# The server is killed in the middle of large GETs: the client's transfer
# fails within a bounded time instead of hanging.
. /payload/lib.sh
start_server || exit 1
hipobj-vmtest "$ENDPOINT" seed big $((64 << 20)) || exit 1
HIPOBJ_TRANSFER_TIMEOUT_MS=3000 hipobj-vmtest "$ENDPOINT" killed &
client=$!
sleep 3
kill -KILL "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""
wait $client
