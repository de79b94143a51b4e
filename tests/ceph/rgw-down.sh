#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Stops what tests/ceph/rgw-up.sh started, by the PIDs it recorded (a PID
# whose start time differs was reused: left alone), in the order that ends
# cleanly: radosgw first (TERM, KILL after 3 s), then the OSD (KILL: its
# memstore would be written out, and is thrown away), then the monitor
# (TERM, KILL after 3 s); then removes $CEPH_DIR.
#   tests/ceph/rgw-down.sh            everything
#   tests/ceph/rgw-down.sh --rgw-only radosgw alone (rgw-up.sh --rgw-only
#                                     starts it again)
set -uo pipefail
dir=${CEPH_DIR:-/tmp/hipobj-ceph}
[ -f "$dir/pids" ] || exit 0
ours() { # NAME: our PID if still the process we started
  local pid st
  read -r pid st < <(awk -v n="$1" '$1 == n { p = $2; s = $3 } END { print p, s }' "$dir/pids")
  [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
  [ "$(cut -d' ' -f22 "/proc/$pid/stat")" = "$st" ] || return 1
  [ "$(cut -d' ' -f3 "/proc/$pid/stat")" != Z ] || return 1
  echo "$pid"
}
stop() { # NAME SIGNAL GRACE_TENTHS
  local pid; pid=$(ours "$1") || return 0
  kill "-$2" "$pid" 2>/dev/null
  for _ in $(seq "$3"); do ours "$1" >/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null
  for _ in $(seq 50); do ours "$1" >/dev/null || return 0; sleep 0.1; done
  echo "rgw-down: $1 ($pid) did not exit" >&2
}
stop rgw TERM 30
if [ "${1:-}" = --rgw-only ]; then
  awk '$1 != "rgw"' "$dir/pids" >"$dir/pids.new" && mv "$dir/pids.new" "$dir/pids"
  exit 0
fi
stop osd KILL 0
stop mon TERM 30
rm -rf "$dir"
