#!/bin/sh
# The server never sends its final message, once per server: with
# liveness probes and retries (the defaults) a probe finds the retired
# connection and the retry succeeds long before the timeout; with neither,
# the client fails at its transfer timeout. The next transfer works.
. /payload/lib.sh
rc=0
start_server --fault-skip-final 1 || exit 1
HIPOBJ_TRANSFER_TIMEOUT_MS=1500 hipobj-vmtest "$ENDPOINT" no-final || rc=1
stop_server
start_server --fault-skip-final 1 || exit 1
HIPOBJ_PROBE_INTERVAL_MS=0 HIPOBJ_RETRIES=0 HIPOBJ_TRANSFER_TIMEOUT_MS=1500 \
  hipobj-vmtest "$ENDPOINT" no-final || rc=1
stop_server
exit $rc
