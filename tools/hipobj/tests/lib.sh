# SPDX-License-Identifier: MIT
# Shared by the hipobj command's tests: sourced, not run.
#   $1 hipobj-test-server, $2 hipobj; then the server helpers.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../../../integrations/curl/tests/server.sh"
SERVER_BIN=$1
HIPOBJ=$2
WORK=$(mktemp -d "${TMPDIR:-/tmp}/hipobj-cli.XXXXXX")
cleanup() { stop_server; rm -rf "$WORK"; }
trap cleanup EXIT
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_REGION \
      AWS_DEFAULT_REGION AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }

# Runs hipobj, keeping stdout, stderr and the exit status.
run() {
  "$HIPOBJ" "$@" >"$WORK/out" 2>"$WORK/err"
  RC=$?
}

# expect_rc CODE TEXT DESCRIPTION: the last run's status, and TEXT on stderr.
expect_rc() {
  if [ "$RC" -ne "$1" ]; then
    fail "$3: exit $RC, expected $1; stderr: $(cat "$WORK/err")"
  elif [ -n "$2" ] && ! grep -qF -- "$2" "$WORK/err"; then
    fail "$3: stderr lacks '$2': $(cat "$WORK/err")"
  else
    pass "$3"
  fi
}

# True when this host has an RDMA device (the VM lane), false in plain CI.
have_rdma() {
  [ -d /sys/class/infiniband ] && [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ]
}

make_bucket() {
  curl -sf -X PUT "$ENDPOINT/$1" >/dev/null || { echo "cannot create bucket $1"; exit 1; }
}

finish() {
  if [ "$FAILS" -ne 0 ]; then
    echo "$FAILS check(s) failed"
    exit 1
  fi
  echo "all checks passed"
  exit 0
}
