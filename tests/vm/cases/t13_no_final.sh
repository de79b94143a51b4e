#!/bin/sh
# The server never sends its final message once: the client fails at its
# transfer timeout, and the next transfer works.
. /payload/lib.sh
start_server --fault-skip-final 1 || exit 1
HIPOBJ_TRANSFER_TIMEOUT_MS=1500 hipobj-vmtest "$ENDPOINT" no-final
