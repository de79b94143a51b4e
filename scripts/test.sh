#!/usr/bin/env bash
# The test command: builds hipObject and runs every test lane.
#   1. gcc, ASan + UBSan, warnings as errors: unit tests, fuzz replays,
#      header and install checks, the test server's tests (ctest)
#   2. clang with -Wthread-safety -Werror, warnings as errors: build + ctest
#   3. Python: the hipobj package (python/) built with pip against the
#      clang lane's libraries, pytest against hipobj-test-server
#   3b. Go: the bindings and the MinIO bridge (integrations/go) against
#      the clang lane's libraries: go vet, go test (offline, Debian's Go)
#   4. Soft-RoCE: real verbs in a QEMU VM (tools/rxe-vm), end to end
#   5. Ceph: hipobj-gateway in front of a real Ceph RGW (tests/ceph), over
#      plain HTTP on this host and by RDMA from the Soft-RoCE VM
# Usage: scripts/test.sh [--no-vm] [--no-ceph] [--no-deps]
# Each lane prints its runner's summary line; the exit status is non-zero if
# any lane failed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=$(nproc 2>/dev/null || echo 2)
vm=1 deps=1 ceph=1
for a in "$@"; do
  case "$a" in
    --no-vm) vm=0 ;;
    --no-ceph) ceph=0 ;;
    --no-deps) deps=0 ;;
    *) echo "usage: $0 [--no-vm] [--no-ceph] [--no-deps]" >&2; exit 2 ;;
  esac
done
[ $deps -eq 1 ] && { bash scripts/deps.sh || exit 1; }

status=0
summaries=()
lane() { echo; echo "=== $* ==="; }
# vm_failed_logs LOG: the console of each VM case that failed (its last
# 80 lines), since the lane prints only the @@TEST-END lines
vm_failed_logs() {
  [ -f "$1" ] || return 0
  local name
  for name in $(sed -n 's/.*@@TEST-END \([^ ]*\) rc=\([0-9]*\).*/\1 \2/p' "$1" |
                awk '$2 != 0 && $2 != 77 {print $1}'); do
    echo "--- soft-roce vm: $name failed; the end of its console"
    tr -d '\r' <"$1" | sed -n "/@@TEST-START $name\$/,/@@TEST-END $name /p" | tail -n 80
  done
}
record() { summaries+=("$1"); echo "$1"; }

run_ctest() {
  local dir=$1 name=$2 out
  out=$(cd "$dir" && ctest --output-on-failure -j"$jobs" 2>&1)
  local rc=$?
  echo "$out" | tail -n 40
  record "$name: $(echo "$out" | grep -E 'tests passed|tests failed' | tail -n1)"
  [ $rc -eq 0 ] && return
  status=1
  # what failed, in full (the tail above shows only the summary); run once
  # more alone, to tell a failure from one that needs a loaded machine
  echo "--- $name: the failed tests' logs"
  sed -n '/^[0-9]*\/[0-9]* Test *#[0-9]*: .*\*\*\*/,/^ *Start /p' <<<"$out" | tail -n 200
  echo "--- $name: the failed tests run again, alone"
  (cd "$dir" && ctest --rerun-failed --output-on-failure 2>&1 | tail -n 60)
}

lane "gcc + ASan/UBSan"
t0=$SECONDS
if cmake -S . -B build/ci-asan -DCMAKE_BUILD_TYPE=Debug -DHIPOBJ_WERROR=ON \
     -DHIPOBJ_SANITIZE=ON -DHIPOBJ_BUILD_STATIC=ON >/dev/null &&
   cmake --build build/ci-asan -j"$jobs" >build/ci-asan.log 2>&1; then
  ASAN_OPTIONS=detect_leaks=1 run_ctest build/ci-asan "gcc-asan ctest"
else
  tail -n 40 build/ci-asan.log; record "gcc-asan: BUILD FAILED"; status=1
fi
echo "lane time: $((SECONDS - t0)) s"

lane "clang + -Wthread-safety -Werror"
t0=$SECONDS
if CC=clang CXX=clang++ cmake -S . -B build/ci-clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
     -DHIPOBJ_WERROR=ON -DHIPOBJ_THREAD_SAFETY=ON >/dev/null &&
   cmake --build build/ci-clang -j"$jobs" >build/ci-clang.log 2>&1; then
  run_ctest build/ci-clang "clang-tsa ctest"
else
  tail -n 40 build/ci-clang.log; record "clang-tsa: BUILD FAILED"; status=1
fi
echo "lane time: $((SECONDS - t0)) s"

lane "Python package (pytest)"
t0=$SECONDS
if [ -f build/ci-clang/src/libhipobj.so ]; then
  out=$(bash python/tests/run.sh build/ci-clang 2>&1); rc=$?
  echo "$out" | tail -n 40
  record "$(echo "$out" | grep -E '^python: ' | tail -n1)"
  [ $rc -eq 0 ] || status=1
  # pip install ./python alone: CMake builds the libraries it ships
  out=$(bash python/tests/pip-alone.sh build/ci-clang 2>&1); rc=$?
  echo "$out" | tail -n 30
  record "$(echo "$out" | grep -E '^python-pip: ' | tail -n1)"
  [ $rc -eq 0 ] || status=1
else
  record "python: NOT RUN (the clang lane did not build)"; status=1
fi
echo "lane time: $((SECONDS - t0)) s"

lane "Go bindings and MinIO bridge (go vet, go test)"
t0=$SECONDS
if [ -f build/ci-clang/src/libhipobj.so ]; then
  out=$(bash integrations/go/run.sh build/ci-clang 2>&1); rc=$?
  echo "$out" | tail -n 40
  record "$(echo "$out" | grep -E '^go: ' | tail -n1)"
  # 77: Go or minio-go is not installed: a skip with its reason
  [ $rc -eq 0 ] || [ $rc -eq 77 ] || status=1
else
  record "go: NOT RUN (the clang lane did not build)"; status=1
fi
echo "lane time: $((SECONDS - t0)) s"

if [ $vm -eq 1 ] && [ -x tests/vm/run-lane.sh ]; then
  lane "Soft-RoCE VM (real verbs)"
  t0=$SECONDS
  out=$(bash tests/vm/run-lane.sh 2>&1); rc=$?
  echo "$out" | tail -n 60
  record "soft-roce vm: $(echo "$out" | grep -E '^vm: [0-9]+ passed' | tail -n1)"
  [ $rc -eq 0 ] || { status=1; vm_failed_logs build/vm-lane.log; }
  echo "lane time: $((SECONDS - t0)) s"
fi

if [ $ceph -eq 1 ]; then
  lane "Ceph RGW behind hipobj-gateway"
  t0=$SECONDS
  out=$(HIPOBJ_NO_VM=$((1 - vm)) bash tests/ceph/run-lane.sh 2>&1); rc=$?
  echo "$out" | tail -n 60
  record "$(echo "$out" | grep -E '^ceph: ' | tail -n1)"
  # 77: Ceph is not installed: a skip with its reason, not a pass
  [ $rc -eq 0 ] || [ $rc -eq 77 ] || status=1
  echo "lane time: $((SECONDS - t0)) s"
fi

echo
echo "=== summary ==="
printf '%s\n' "${summaries[@]}"
[ $status -eq 0 ] && echo "ALL LANES PASSED" || echo "SOME LANES FAILED"
exit $status
