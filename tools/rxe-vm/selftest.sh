#!/bin/bash
# tools/rxe-vm/selftest.sh - end-to-end check of the rxe VM runner.
#
# usage: tools/rxe-vm/selftest.sh [--quick] [--keep]
#   --quick  only boot 1 (skip the timeout boots 2 and 3)
#   --keep   keep the work directory (logs, results) even on success
#
# Builds the image (or takes it from the cache), compiles selftest/t_hostlibs.c
# on the host (libcurl + libmicrohttpd + libssl, libibverbs by dlopen), then:
#   boot 1: selftest/t_devinfo.sh (rxe0 PORT_ACTIVE), t_gid.sh (the exported
#           GID index is RoCE v2 ::ffff:127.0.0.1), t_pingpong.sh
#           (ibv_rc_pingpong, two processes), t_perftest.sh (ib_write_bw,
#           ib_read_bw; a table comes back through --results), t_hostlibs
#           (host libraries via the ldd closure, loopback HTTP), t_runpath (a
#           library found through RUNPATH in a build dir), t_env_files.sh
#           (--env, --file file/dir/absolute), t_modules.sh (--modprobe),
#           t_fail.sh (must be reported failed), t_skip.sh (exit 77: skipped)
#           -> expects "vm: 8 passed, 1 failed, 1 skipped" and exit status 1
#   boot 2: --test-timeout 3 with t_hang.sh, t_leftover.sh, t_after.sh
#           -> the hung test fails by timeout, leftovers are reaped,
#              "vm: 2 passed, 1 failed, 0 skipped"
#   boot 3: --timeout 15 --results with t_hang.sh -> exit status 124,
#           "vm: 0 passed, 1 failed", and the file it wrote first is on the host
# Needs root the first time (apt-get install of gcc and the -dev headers if
# they are missing; build-image.sh installs QEMU & co.). Prints timings.
set -euo pipefail
RXE_VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$RXE_VM_DIR/lib.sh"
S=$RXE_VM_DIR/selftest

QUICK=0 KEEP=0
for a in "$@"; do
  case "$a" in
    --quick) QUICK=1 ;;
    --keep) KEEP=1 ;;
    -h|--help) sed -n '2,/^set -euo/{/^#/{s/^# \{0,1\}//;p}}' "$0"; exit 0 ;;
    *) rxe_vm_die "unknown option $a" ;;
  esac
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rxe-vm-selftest.XXXXXX")
trap '[ "$KEEP" = 1 ] && echo "selftest: work dir kept: $WORK" || rm -rf "$WORK"' EXIT
fail() { echo "selftest: FAIL: $*" >&2; KEEP=1; exit 1; }
now() { date +%s.%N; }
dt() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", b-a}'; }
T0=$(now)

# ---- host: compiler and headers for t_hostlibs.c ------------------------------
hdr_ok() { printf '#include <curl/curl.h>\n#include <microhttpd.h>\n#include <openssl/ssl.h>\n' |
           gcc -E -x c - >/dev/null 2>&1; }
if ! command -v gcc >/dev/null || ! hdr_ok; then
  [ "$(id -u)" = 0 ] || fail "need gcc and libcurl/libmicrohttpd/libssl headers"
  echo "selftest: installing gcc and headers" >&2
  rxe_vm_apt install -y -qq --no-install-recommends gcc libc6-dev libcurl4-openssl-dev \
    libmicrohttpd-dev libssl-dev >&2
fi

# ---- image -----------------------------------------------------------------------
t=$(now)
if [ -f "$(rxe_vm_image_dir)/.complete" ]; then IMGSTATE=cached; else IMGSTATE=built; fi
"$RXE_VM_DIR/build-image.sh"
T_IMG=$(dt "$t" "$(now)")

gcc -O2 -Wall -o "$WORK/t_hostlibs" "$S/t_hostlibs.c" -lcurl -lmicrohttpd -lssl -lcrypto -ldl
mkdir -p "$WORK/build/lib"
gcc -O2 -Wall -shared -fPIC -Wl,-soname,libselftest.so.0 -o "$WORK/build/lib/libselftest.so.0.1" "$S/libselftest.c"
ln -sf libselftest.so.0.1 "$WORK/build/lib/libselftest.so.0"
ln -sf libselftest.so.0 "$WORK/build/lib/libselftest.so"
gcc -O2 -Wall -o "$WORK/t_runpath" "$S/t_runpath.c" -L"$WORK/build/lib" -lselftest -Wl,-rpath,"$WORK/build/lib"
mkdir -p "$WORK/files/tree/sub"
echo one > "$WORK/files/one.txt"
echo two > "$WORK/files/tree/sub/two.txt"
echo absolute > "$WORK/files/abs.txt"

# run_vm LOGNAME EXPECTED_RC EXPECTED_SUMMARY ARGS...  (records T_<LOGNAME>)
run_vm() {
  local name=$1 want_rc=$2 want_sum=$3 rc t; shift 3
  t=$(now)
  set +e
  "$@" > "$WORK/$name.out" 2>&1
  rc=$?
  set -e
  printf -v "T_$name" %s "$(dt "$t" "$(now)")"
  cat "$WORK/$name.out"
  [ "$rc" = "$want_rc" ] || fail "$name: exit status $rc, expected $want_rc (log: $WORK/$name.log)"
  grep -qxF "$want_sum" "$WORK/$name.out" || fail "$name: summary is not '$want_sum'"
}
# expect_end LOG TEST RC: the log has "@@TEST-END TEST rc=RC"
expect_end() {
  grep -a -q "@@TEST-END $2 rc=$3 " "$1" || fail "$(basename "$1"): no '@@TEST-END $2 rc=$3'"
}

# ---- boot 1: functional checks, from / as the working directory -------------------
echo "selftest: boot 1 (functional checks)"
cd /
run_vm boot1 1 "vm: 8 passed, 1 failed, 1 skipped" \
  "$RXE_VM_DIR/run.sh" --quiet --log "$WORK/boot1.log" --results "$WORK/results" \
  --env "SELFTEST_VALUE=a b'c \$d" --modprobe vgem --modprobe rdma_ucm \
  --file "$WORK/files/one.txt:data/one.txt" --file "$WORK/files/tree:data/tree" \
  --file "$WORK/files/abs.txt:/opt/selftest/abs.txt" \
  "$S/t_devinfo.sh" "$S/t_gid.sh" "$S/t_pingpong.sh" "$S/t_perftest.sh" "$WORK/t_hostlibs" "$WORK/t_runpath" \
  "$S/t_env_files.sh" "$S/t_modules.sh" "$S/t_fail.sh" "$S/t_skip.sh"
for t in t_devinfo.sh t_gid.sh t_pingpong.sh t_perftest.sh t_hostlibs t_runpath t_env_files.sh t_modules.sh; do
  expect_end "$WORK/boot1.log" "$t" 0
done
expect_end "$WORK/boot1.log" t_fail.sh 3
expect_end "$WORK/boot1.log" t_skip.sh 77
grep -q '^ib_write_bw	65536	100	' "$WORK/results/perftest.tsv" &&
  grep -q '^ib_read_bw	65536	100	' "$WORK/results/perftest.tsv" ||
  fail "results: perftest.tsv did not come back"
echo "selftest: results came back:"; sed 's/^/  /' "$WORK/results/perftest.tsv"

if [ "$QUICK" = 0 ]; then
  # ---- boot 2: per-test timeout and leftover processes; relative invocation ----
  echo "selftest: boot 2 (per-test timeout, leftovers)"
  cd "$RXE_VM_DIR"
  run_vm boot2 1 "vm: 2 passed, 1 failed, 0 skipped" \
    ./run.sh --quiet --test-timeout 3 --log "$WORK/boot2.log" \
    selftest/t_hang.sh selftest/t_leftover.sh selftest/t_after.sh
  expect_end "$WORK/boot2.log" t_hang.sh 143
  expect_end "$WORK/boot2.log" t_leftover.sh 0
  expect_end "$WORK/boot2.log" t_after.sh 0
  grep -a -q '@@TEST-TIMEOUT t_hang.sh' "$WORK/boot2.log" || fail "boot2: no @@TEST-TIMEOUT"
  grep -a -q '@@REAPED t_hang.sh .*comm=sleep' "$WORK/boot2.log" || fail "boot2: t_hang's sleep not reaped"
  grep -a -q '@@REAPED t_leftover.sh .*comm=sleep' "$WORK/boot2.log" || fail "boot2: t_leftover's sleep not reaped"

  # ---- boot 3: the hard VM timeout ---------------------------------------------------
  echo "selftest: boot 3 (hard VM timeout)"
  run_vm boot3 124 "vm: 0 passed, 1 failed, 0 skipped" \
    "$RXE_VM_DIR/run.sh" --quiet --timeout 15 --log "$WORK/boot3.log" --results "$WORK/results3" \
    "$S/t_hang.sh"
  grep -q "written before hanging" "$WORK/results3/hang.txt" ||
    fail "boot3: what the test wrote to \$RESULTS before the timeout did not come back"
fi

echo "selftest: PASS"
printf 'selftest: timings: image %ss (%s), boot 1 %ss' "$T_IMG" "$IMGSTATE" "$T_boot1"
[ "$QUICK" = 1 ] || printf ', boot 2 %ss, boot 3 %ss' "$T_boot2" "${T_boot3}"
printf ', total %ss\n' "$(dt "$T0" "$(now)")"
