# Sourced by the Soft-RoCE cases (tests/vm/cases/*.sh), inside the VM.
# start_server ARGS...: starts hipobj-test-server on 127.0.0.1 port 0 on the
# rxe device, waits for its address, sets ENDPOINT and SERVER_PID.
# stop_server: SIGTERM to that PID, and wait.
# start_gateway NAME BACKEND ARGS...: hipobj-gateway on the rxe device in
# front of BACKEND (127.0.0.1 port 0 unless ARGS has a --listen), its
# stderr appended to /tmp/gateway.NAME.err; sets NAME_URL and NAME_PID.
# write_lat_us SIZE: ib_write_lat's typical latency (us) for SIZE bytes
# over the rxe device to itself (200 iterations), 0 if it gave none.
set -u
: "${RXE_DEV:=rxe0}"
export HIPOBJ_GPU_RUNTIME=none

start_server() {
  local out=/tmp/server.$$.out
  hipobj-test-server --listen 127.0.0.1:0 --nic "$RXE_DEV" "$@" >"$out" 2>/tmp/server.$$.err &
  SERVER_PID=$!
  ENDPOINT=""
  for _ in $(seq 1 100); do
    ENDPOINT=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$out" | head -n1)
    [ -n "$ENDPOINT" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$ENDPOINT" ]; then
    echo "server did not start:"; cat "$out" /tmp/server.$$.err
    return 1
  fi
  grep -i rdma /tmp/server.$$.err | head -n 3
  echo "server $SERVER_PID at $ENDPOINT $*"
}

start_gateway() {
  local name=$1 backend=$2 url="" pid
  shift 2
  local out=/tmp/gateway.$name.out
  : >"$out"
  hipobj-gateway --listen 127.0.0.1:0 --nic "$RXE_DEV" --backend "$backend" "$@" \
    >"$out" 2>>"/tmp/gateway.$name.err" &
  pid=$!
  eval "${name}_PID=$pid"
  local i
  for i in $(seq 1 300); do
    url=$(sed -n 's/^listening on \(http:[^ ]*\)$/\1/p' "$out")
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$url" ]; then
    echo "gateway $name did not start in $((i / 10)) s" \
      "($(kill -0 "$pid" 2>/dev/null && echo "running, in $(cat /proc/$pid/wchan 2>/dev/null)" || echo exited));" \
      "the end of its log:"
    tail -n 20 "/tmp/gateway.$name.err"
    return 1
  fi
  # a slow start is a finding: say it (the VM's date has no %N: 0.1 s steps)
  [ "$i" -le 20 ] || echo "gateway $name took about $((i / 10)) s to start"
  eval "${name}_URL=$url"
}

stop_server() {
  [ -n "${SERVER_PID:-}" ] || return 0
  kill -TERM "$SERVER_PID" 2>/dev/null
  wait "$SERVER_PID" 2>/dev/null
  SERVER_PID=""
  # What the server could only say on stderr (failed completions, timeouts).
  grep -h "warning" /tmp/server.$$.err 2>/dev/null | sort | uniq -c | head -n 10 |
    sed 's/^/  server stderr: /'
}
trap stop_server EXIT

write_lat_us() {
  local srv t
  ib_write_lat -d "$RXE_DEV" -x "${RXE_GID_INDEX:-1}" -s "$1" -n 200 -F >/tmp/lat.srv 2>&1 &
  srv=$!
  sleep 0.5
  t=$(ib_write_lat -d "$RXE_DEV" -x "${RXE_GID_INDEX:-1}" -s "$1" -n 200 -F 127.0.0.1 2>&1 |
    awk -v s="$1" '$1 == s {print $5}' | tail -n1)
  wait $srv 2>/dev/null
  echo "${t:-0}"
}
