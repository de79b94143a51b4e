# SPDX-License-Identifier: MIT
# Sourced by the hipobj VM cases, inside the Soft-RoCE VM, after
# /payload/lib.sh (tests/vm/lib.sh: start_server, stop_server). The VM has
# busybox, not bash: POSIX sh only.
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }
W=$(mktemp -d)

# hipobj ARGS: runs it with the endpoint; stdout, stderr, status kept.
ho() {
  hipobj "$@" --endpoint "$ENDPOINT" >"$W/out" 2>"$W/err"
  RC=$?
  sed 's/^/  | /' "$W/err"
}

said() { grep -qF -- "$1" "$W/err"; }

# A counter of the server's stats: stat SECTION NAME.
stat() {
  curl -s "$ENDPOINT/_hipobj/stats" | tr -d ' \n' |
    sed -n "s/.*\"$1\":{[^}]*\"$2\":\([0-9]*\).*/\1/p"
}

finish() {
  rm -rf "$W"
  [ "$FAILS" -eq 0 ] && { echo "all checks passed"; exit 0; }
  echo "$FAILS check(s) failed; the server said:"
  tail -n 40 /tmp/server.$$.err 2>/dev/null | sed 's/^/  server| /'
  exit 1
}
