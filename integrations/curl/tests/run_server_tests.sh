#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs one group of test_s3_server against a fresh hipobj-test-server.
#   run_server_tests.sh SERVER TEST_BINARY GROUP
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/server.sh"
server=$1 test=$2 group=$3
case "$group" in
  plain) opts=(--min-part-size 1K) ;;
  sigv4) opts=(--min-part-size 1K --access-key AK --secret-key SK) ;;
  decline) opts=(--decline-rdma) ;;
  *) echo "unknown group $group" >&2; exit 2 ;;
esac
start_server "$server" "${opts[@]}"
HIPOBJ_TEST_ENDPOINT=$ENDPOINT "$test" "$group"
rc=$?
stop_server
exit $rc
