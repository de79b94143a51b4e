# SPDX-License-Identifier: MIT
# Shell helpers for tests that need hipobj-test-server: sourced, not run.
#
#   start_server SERVER_BINARY [OPTIONS...]   sets SERVER_PID, ENDPOINT, PORT
#   stop_server                               kills SERVER_PID (only it)
#   skip REASON                               prints the reason, exits 77
#   stat_value NAME                           a counter from /_hipobj/stats
#   closed_port                               sets CLOSED_ENDPOINT: nothing
#                                             listens there
#
# The server listens on 127.0.0.1 port 0 and prints the port it got; every
# test gets its own server, so tests run in parallel.

SERVER_PID=
ENDPOINT=
PORT=
SERVER_DIR=

skip() {
  echo "SKIP: $*"
  exit 77
}

stop_server() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null
    wait "$SERVER_PID" 2>/dev/null
    SERVER_PID=
  fi
  if [ -n "$SERVER_DIR" ]; then
    rm -rf "$SERVER_DIR"
    SERVER_DIR=
  fi
}

start_server() {
  local bin=$1
  shift
  [ -x "$bin" ] || skip "hipobj-test-server is not built ($bin)"
  SERVER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/hipobj-srv.XXXXXX")
  "$bin" --listen 127.0.0.1:0 "$@" >"$SERVER_DIR/out" 2>"$SERVER_DIR/err" &
  SERVER_PID=$!
  # Stop it at exit, unless the caller has its own exit trap (which then
  # calls stop_server).
  [ -n "$(trap -p EXIT)" ] || trap stop_server EXIT
  local i
  for i in $(seq 1 100); do
    PORT=$(sed -n 's|^listening on http://127\.0\.0\.1:\([0-9][0-9]*\).*|\1|p' \
           "$SERVER_DIR/out" | head -n1)
    [ -n "$PORT" ] && break
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      echo "hipobj-test-server did not start:" >&2
      cat "$SERVER_DIR/err" >&2
      SERVER_PID=
      exit 1
    fi
    sleep 0.05
  done
  [ -n "$PORT" ] || { echo "hipobj-test-server printed no address" >&2; exit 1; }
  ENDPOINT="http://127.0.0.1:$PORT"
  export ENDPOINT
}

# A counter of GET /_hipobj/stats, by its JSON path ("rdma.declined").
stat_value() {
  curl -sf "$ENDPOINT/_hipobj/stats" |
    python3 -c 'import json,sys
v=json.load(sys.stdin)
for k in sys.argv[1].split("."): v=v[k]
print(v)' "$1"
}

# An endpoint where nothing listens: the port of a server started and
# stopped here (port 1 and friends may be in use on a shared machine).
closed_port() {
  local bin=$1 pid port dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/hipobj-closed.XXXXXX")
  "$bin" --listen 127.0.0.1:0 >"$dir/out" 2>/dev/null &
  pid=$!
  for _ in $(seq 1 100); do
    port=$(sed -n 's|^listening on http://127\.0\.0\.1:\([0-9][0-9]*\).*|\1|p' "$dir/out")
    [ -n "$port" ] && break
    sleep 0.05
  done
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rm -rf "$dir"
  CLOSED_ENDPOINT="http://127.0.0.1:${port:-1}"
}
