#!/bin/sh
# /usr/lib/rxe-vm/runner.sh - the guest-side test runner (busybox ash).
#
# Runs the tests named in /payload/tests.list (files in /payload/bin) in
# order, each under `timeout $TEST_TIMEOUT`, with stdin from /dev/null and
# the environment from /payload/env.sh. Prints for the host:
#   @@TEST-START <name>
#   @@TEST-TIMEOUT <name> after <secs>s     (only when the timeout fired)
#   @@REAPED <name> pid=<pid> comm=<comm>    (processes a test left behind)
#   @@TEST-END <name> rc=<rc> secs=<secs>
#   @@SUMMARY passed=<n> failed=<n> skipped=<n>
# rc 0 = passed, rc 77 = skipped, anything else = failed.
# Exit status: 0 if nothing failed, else 1.

. /payload/env.sh
TEST_TIMEOUT=${TEST_TIMEOUT:-300}

uptime_s() { read -r u _ < /proc/uptime; echo "$u"; }

# Userland processes alive before the first test (init, this runner, ...)
# are kept; anything else alive after a test is its leftover and is killed,
# so a stuck server cannot disturb the next test.
KEEP=" "
for d in /proc/[0-9]*; do
  [ -e "$d/exe" ] && KEEP="$KEEP${d#/proc/} "
done
reap() {
  local d p c
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [ -e "$d/exe" ] || continue            # kernel thread (or already gone)
    case "$KEEP" in *" $p "*) continue ;; esac
    [ "$p" = "$$" ] && continue
    read -r c < "$d/comm" 2>/dev/null || c=?
    kill -9 "$p" 2>/dev/null || continue
    # busybox timeout's watchdog child lingers up to 1 s after its program
    [ "$c" = timeout ] || echo "@@REAPED $1 pid=$p comm=$c"
  done
}

pass=0 fail=0 skip=0
while read -r name; do
  [ -n "$name" ] || continue
  echo "@@TEST-START $name"
  s=$(uptime_s)
  if [ "${RXE_SETUP_RC:-0}" != 0 ]; then
    echo "rxe setup failed (rc=$RXE_SETUP_RC): test not run"
    rc=125
  else
    TEST_NAME=$name timeout -s TERM "$TEST_TIMEOUT" "/payload/bin/$name" </dev/null
    rc=$?
  fi
  e=$(uptime_s)
  secs=$(echo "$e $s" | awk '{printf "%.2f", $1-$2}')
  if [ "$rc" != 0 ] && [ "$rc" != 77 ] &&
     awk -v d="$secs" -v t="$TEST_TIMEOUT" 'BEGIN{exit !(d >= t - 0.05)}'; then
    echo "@@TEST-TIMEOUT $name after ${TEST_TIMEOUT}s"
  fi
  reap "$name"
  echo "@@TEST-END $name rc=$rc secs=$secs"
  case "$rc" in
    0) pass=$((pass+1)) ;;
    77) skip=$((skip+1)) ;;
    *) fail=$((fail+1)) ;;
  esac
done < /payload/tests.list
echo "@@SUMMARY passed=$pass failed=$fail skipped=$skip"
[ "$fail" = 0 ]
