#!/bin/sh
# The server never sends its final message, once per run: with liveness
# probes and retries (the defaults) a probe finds the retired connection
# and the retry succeeds long before the timeout; with neither, the client
# fails at its transfer timeout. The next transfer works.
. /payload/lib.sh
start_server --fault-skip-final 2 || exit 1
rc=0
HIPOBJ_TRANSFER_TIMEOUT_MS=1500 hipobj-vmtest "$ENDPOINT" no-final || rc=1
HIPOBJ_PROBE_INTERVAL_MS=0 HIPOBJ_RETRIES=0 HIPOBJ_TRANSFER_TIMEOUT_MS=1500 \
  hipobj-vmtest "$ENDPOINT" no-final || rc=1
exit $rc
