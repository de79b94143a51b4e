#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The examples against hipobj-test-server: put a file, get it back, and
# check that each says how the bytes moved and that the server agrees.
#   test-examples.sh SERVER GET_OBJECT PUT_OBJECT
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../integrations/curl/tests/server.sh"
server=$1 get=$2 put=$3
command -v curl >/dev/null || skip "curl (the command) is not installed"
start_server "$server"
work=$(mktemp -d)
trap 'stop_server; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

export AWS_ENDPOINT_URL=$ENDPOINT
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN
curl -sf -X PUT "$ENDPOINT/examples" >/dev/null || fail "cannot create the bucket"
head -c 123457 /dev/urandom >"$work/in"

out=$("$put" "$work/in" examples dir/object 2>"$work/err") || fail "put-object: $(cat "$work/err")"
echo "put-object: $out"
[[ $out == "123457 bytes via "* ]] || fail "put-object said: $out"
out=$("$get" examples dir/object 2>"$work/err") || fail "get-object: $(cat "$work/err")"
echo "get-object: $out"
[[ $out == "123457 bytes via "* ]] || fail "get-object said: $out"
# Without an RDMA device the examples fall back, and say so.
if [ ! -d /sys/class/infiniband ] || [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
  [[ $out == *"via HTTP fallback" ]] || fail "expected the HTTP fallback: $out"
fi
curl -sf "$ENDPOINT/examples/dir/object" | cmp - "$work/in" || fail "bytes differ"

# Failures are reported with the message and exit status 1.
"$get" examples missing >/dev/null 2>"$work/err" && fail "get of a missing key succeeded"
grep -q "does not exist" "$work/err" || fail "no message for a missing key: $(cat "$work/err")"
echo "examples: ok"
