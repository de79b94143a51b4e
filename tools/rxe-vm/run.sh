#!/bin/bash
# tools/rxe-vm/run.sh - run tests inside a throw-away QEMU (TCG) VM that has a
# real Soft-RoCE device (rdma_rxe "rxe0" on lo) and Debian bookworm's
# rdma-core, ibverbs-utils and perftest. Needs no RDMA hardware, no KVM.
#
# usage: tools/rxe-vm/run.sh [options] [--] TEST...
#   TEST   a host executable or script, copied to /payload/bin/<basename> and
#          run in the VM in the order given, from /payload, stdin /dev/null.
#          rc 0 = passed, 77 = skipped, anything else = failed. The shared
#          libraries it needs (ldd on the host) that the image lacks are
#          copied to /payload/lib, which is on LD_LIBRARY_PATH.
# options:
#   --file SRC[:DST]   copy a host file or directory into the VM: DST is
#                      relative to /payload (default: basename of SRC), or an
#                      absolute guest path. ELF files get their libraries too.
#   --env NAME=VALUE   export NAME=VALUE to every test (repeatable)
#   --results DIR      host directory shared (9p) as $RESULTS=/results in the
#                      VM: what tests write there is on the host right away
#   --timeout S        hard wall-clock limit for the whole VM (default 900)
#   --test-timeout S   per-test limit in the VM (default 300; TERM, KILL 10 s later)
#   --log FILE         console log (default: a new file in tools/rxe-vm/cache/logs/,
#                      the newest linked as cache/logs/last.log; 20 are kept)
#   --quiet            don't echo the console; print only @@TEST-END lines
#                      and the summary
#   --netdev NAME      netdev under rxe0: lo (default), dummy or veth
#   --modprobe MOD     load an extra module at boot (repeatable): rdma_ucm
#                      (for librdmacm), vgem (a dma-buf exporter), ...
#   --mem MB, --smp N, --cpu MODEL   guest size (defaults 2048, 2, max)
#   --host-port G:H    let the guest reach a service the host runs on
#                      127.0.0.1:H at 10.0.2.100:G (QEMU user networking,
#                      restrict=on: nothing else; repeatable): the guest gets
#                      eth0 10.0.2.15/24 and HOST_ADDR=10.0.2.100
#   --qemu-arg ARG     extra QEMU argument (repeatable)
#   --keep-work        keep the temporary payload directory (prints its path)
# The test environment in the VM:
#   RXE_DEV=rxe0  RXE_GID_INDEX=<index of the RoCE v2 GID ::ffff:127.0.0.1>
#   RXE_GID=<that GID>  RXE_NETDEV=lo  RESULTS=/results  RXE_VM=1
#   TEST_NAME=<basename>  TEST_TIMEOUT=<s>  LD_LIBRARY_PATH=/payload/lib
#   PATH=/payload/bin:...  plus every --env.
# Output: the console (with "@@TEST-START name", "@@TEST-END name rc=N secs=S")
#   then, always, one line "vm: N passed, N failed, N skipped".
# Exit status: 0 if every test passed or was skipped; 1 if any failed;
#   124 the VM hit --timeout; 125 the VM gave no result (see the log);
#   2 usage or payload error. The image is built first if not cached
#   (build-image.sh; needs root and network the first time).
set -euo pipefail
RXE_VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$RXE_VM_DIR/lib.sh"

TIMEOUT=900 TEST_TIMEOUT=300 MEM=2048 SMP=2 CPU=max NETDEV=lo
RESULTS= LOG= QUIET=0 KEEP_WORK=0
FILES=() ENVS=() TESTS=() QEXTRA=() MODS=() HOSTPORTS=()
need_arg() { [ $# -ge 2 ] || rxe_vm_die "$1 needs an argument"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --file) need_arg "$@"; FILES+=("$2"); shift 2 ;;
    --env) need_arg "$@"; [[ $2 =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || rxe_vm_die "--env wants NAME=VALUE, got: $2"
           ENVS+=("$2"); shift 2 ;;
    --results) need_arg "$@"; RESULTS=$2; shift 2 ;;
    --timeout) need_arg "$@"; TIMEOUT=$2; shift 2 ;;
    --test-timeout) need_arg "$@"; TEST_TIMEOUT=$2; shift 2 ;;
    --log) need_arg "$@"; LOG=$2; shift 2 ;;
    --quiet|-q) QUIET=1; shift ;;
    --netdev) need_arg "$@"; NETDEV=$2; shift 2 ;;
    --modprobe) need_arg "$@"; MODS+=("$2"); shift 2 ;;
    --mem) need_arg "$@"; MEM=$2; shift 2 ;;
    --smp) need_arg "$@"; SMP=$2; shift 2 ;;
    --cpu) need_arg "$@"; CPU=$2; shift 2 ;;
    --qemu-arg) need_arg "$@"; QEXTRA+=("$2"); shift 2 ;;
    --host-port) need_arg "$@"; [[ $2 =~ ^[0-9]+:[0-9]+$ ]] || rxe_vm_die "--host-port wants GUEST:HOST, got: $2"
                 HOSTPORTS+=("$2"); shift 2 ;;
    --keep-work) KEEP_WORK=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/{/^#/{s/^# \{0,1\}//;p}}' "$0"; exit 0 ;;
    --) shift; TESTS+=("$@"); break ;;
    -*) rxe_vm_die "unknown option $1 (see --help)" ;;
    *) TESTS+=("$1"); shift ;;
  esac
done
for n in "$TIMEOUT" "$TEST_TIMEOUT" "$MEM" "$SMP"; do
  [[ $n =~ ^[0-9]+$ ]] || rxe_vm_die "not a number: $n"
done
case "$NETDEV" in lo|dummy|veth) ;; *) rxe_vm_die "--netdev must be lo, dummy or veth" ;; esac
[ ${#TESTS[@]} -gt 0 ] || rxe_vm_log "no tests given: the VM only boots and sets up rxe0"

# ---- base image (cached) -------------------------------------------------------
bflags=(--print-dir); [ "$QUIET" = 1 ] && bflags+=(--quiet)
IMG=$("$RXE_VM_DIR/build-image.sh" "${bflags[@]}")
[ -f "$IMG/.complete" ] || rxe_vm_die "no image in $IMG"
touch "$IMG" 2>/dev/null || true          # most recently used: kept by build-image.sh

# ---- payload -------------------------------------------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rxe-vm.XXXXXX")
if [ "$KEEP_WORK" = 1 ]; then rxe_vm_log "work dir: $WORK"; else trap 'rm -rf "$WORK"' EXIT; fi
ROOT=$WORK/root P=$WORK/root/payload
mkdir -p "$P/bin" "$P/lib"

: > "$P/tests.list"
for t in "${TESTS[@]}"; do
  [ -f "$t" ] || rxe_vm_die "no such test file: $t"
  name=$(basename "$t")
  [[ $name =~ ^[A-Za-z0-9._+-]+$ ]] || rxe_vm_die "test name '$name' must match [A-Za-z0-9._+-]+"
  [ ! -e "$P/bin/$name" ] || rxe_vm_die "two tests named $name"
  install -m 755 "$t" "$P/bin/$name"
  echo "$name" >> "$P/tests.list"
done
for f in "${FILES[@]}"; do
  src=${f%%:*} dst=${f#*:}
  [ "$dst" != "$f" ] && [ -n "$dst" ] || dst=$(basename "$src")
  [ -e "$src" ] || rxe_vm_die "--file: no such file or directory: $src"
  case "$dst" in /*) dst=$ROOT$dst ;; *) dst=$P/$dst ;; esac
  mkdir -p "$(dirname "$dst")"
  cp -a --dereference "$src" "$dst"   # a directory is copied whole
done

# shared libraries: ldd closure of every ELF file in the payload, minus what
# the base image has (the guest's own glibc, libibverbs, ... must win)
declare -A have=()
while read -r l; do have[$l]=1; done < "$IMG/base-libs.txt"
mapfile -d '' ELFS < <(find "$ROOT" -type f -print0)
for f in "${ELFS[@]}"; do
  rxe_vm_is_elf "$f" || continue
  while read -r so path; do
    [ -n "${have[$so]:-}" ] && continue
    [ -e "$P/lib/$so" ] || cp -L "$path" "$P/lib/$so"
  done < <(ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')
done
# every NEEDED library of every payload ELF must now be in the image, in
# /payload/lib, or in a library directory that a --file wrote to
libdirs=()
for d in "$P/lib" "$ROOT/lib" "$ROOT/lib64" "$ROOT/usr/lib"; do [ -d "$d" ] && libdirs+=("$d"); done
while IFS= read -r -d '' f; do have[${f##*/}]=1; done < <(find "${libdirs[@]}" \( -type f -o -type l \) -print0)
missing=()
while IFS= read -r -d '' f; do
  rxe_vm_is_elf "$f" || continue
  for so in $(readelf -d "$f" 2>/dev/null | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
    [ -n "${have[$so]:-}" ] || missing+=("$so (needed by ${f#$ROOT})")
  done
done < <(find "$ROOT" -type f -print0)
if [ ${#missing[@]} -gt 0 ]; then
  printf 'rxe-vm: error: shared library not found on the host nor in the payload: %s\n' "${missing[@]}" >&2
  rxe_vm_die "pass the library with --file SRC:lib/NAME or fix the binary's RUNPATH"
fi

q() { printf "'%s'" "${1//\'/\'\\\'\'}"; }     # single-quote for sh
{
  echo "# generated by run.sh"
  echo "export TEST_TIMEOUT=$TEST_TIMEOUT RXE_VM=1 RESULTS=/results"
  echo "export LD_LIBRARY_PATH=/payload/lib PATH=/payload/bin:/usr/local/bin:/usr/bin:/usr/sbin:/bin:/sbin"
  echo "export TMPDIR=/tmp HOME=/root"
  for e in "${ENVS[@]}"; do
    echo "export ${e%%=*}=$(q "${e#*=}")"
  done
} > "$P/env.sh"

# the kernel unpacks concatenated cpio archives in order: base, then payload
# (uncompressed: gunzip under TCG is slower than copying the bytes)
cp "$IMG/base.cpio" "$WORK/initrd"
(cd "$ROOT" && find . -mindepth 1 | LC_ALL=C sort | "$IMG/busybox" cpio -o -H newc 2>/dev/null) >> "$WORK/initrd"
[ "$QUIET" = 1 ] || rxe_vm_log "payload: ${#TESTS[@]} tests, $(find "$P/lib" -type f | wc -l) host libraries, $(du -sh "$P" | cut -f1)"

# ---- boot ------------------------------------------------------------------------
QARGS=(-nodefaults -display none -serial stdio -monitor none -no-reboot
       -accel tcg -cpu "$CPU" -smp "$SMP" -m "$MEM" -nic none
       -kernel "$IMG/kernel" -initrd "$WORK/initrd")
KAPPEND="console=ttyS0 panic=-1 quiet cryptomgr.notests rxe.netdev=$NETDEV"
if [ ${#MODS[@]} -gt 0 ]; then
  for m in "${MODS[@]}"; do [[ $m =~ ^[A-Za-z0-9_-]+$ ]] || rxe_vm_die "bad module name: $m"; done
  KAPPEND+=" rxe.modprobe=$(IFS=,; echo "${MODS[*]}")"
fi
if [ -n "$RESULTS" ]; then
  mkdir -p "$RESULTS"
  RESULTS=$(cd "$RESULTS" && pwd)
  QARGS+=(-virtfs "local,path=${RESULTS//,/,,},mount_tag=results,security_model=none,id=results")
  KAPPEND+=" rxe.results=1"
fi
if [ ${#HOSTPORTS[@]} -gt 0 ]; then
  # one user-mode NIC, restricted to the forwards asked for; each guest
  # connection runs host-relay.py to the host's loopback port
  relay=$(cd "$(dirname "$0")" && pwd)/host-relay.py
  [[ $relay != *,* ]] || rxe_vm_die "the path of host-relay.py has a comma"
  net=user,id=hostnet,restrict=on
  for hp in "${HOSTPORTS[@]}"; do
    net+=",guestfwd=tcp:10.0.2.100:${hp%%:*}-cmd:$relay ${hp#*:}"
  done
  QARGS+=(-netdev "$net" -device virtio-net-pci,netdev=hostnet)
  KAPPEND+=" rxe.hostnet=1"
fi
QARGS+=("${QEXTRA[@]}" -append "$KAPPEND")
if [ -z "$LOG" ]; then
  mkdir -p "$RXE_VM_CACHE/logs"
  LOG=$RXE_VM_CACHE/logs/run-$(date +%Y%m%d-%H%M%S)-$$.log
  : > "$LOG"
  ln -sfn "$(basename "$LOG")" "$RXE_VM_CACHE/logs/last.log"
  ls -1t "$RXE_VM_CACHE"/logs/run-*.log | tail -n +21 | while read -r old; do rm -f "$old"; done
fi
mkdir -p "$(dirname "$LOG")"
: > "$LOG"
# console: drop CRs and the firmware's terminal escapes; keep the log; show
# all of it, or in --quiet mode only the test results
clean() { sed -u -e 's/\r//g' -e 's/\x1bc//g' -e 's/\x1b\[[0-9;?]*[A-Za-z]//g'; }
show() { if [ "$QUIET" = 1 ]; then grep --line-buffered -a -E '@@(TEST-END|TEST-TIMEOUT|ERROR)' || true; else cat; fi; }
t0=$(date +%s.%N)
set +e
timeout -k 10 "$TIMEOUT" qemu-system-x86_64 "${QARGS[@]}" </dev/null 2>&1 | clean | tee -a "$LOG" | show
qrc=${PIPESTATUS[0]}
set -e
secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')

# ---- verdict --------------------------------------------------------------------
# count from the @@TEST-END lines (unanchored: a test's last output line may
# lack a newline); a test that never ended, or never started, counts as failed
declare -A rcs=()
while read -r n r; do rcs[$n]=$r; done < <(sed -n 's/.*@@TEST-END \([^ ]*\) rc=\([0-9]*\).*/\1 \2/p' "$LOG")
pass=0 fail=0 skip=0 unfinished=()
for t in "${TESTS[@]}"; do
  n=$(basename "$t")
  case "${rcs[$n]:-none}" in
    0) pass=$((pass+1)) ;;
    77) skip=$((skip+1)) ;;
    none) fail=$((fail+1)); unfinished+=("$n") ;;
    *) fail=$((fail+1)) ;;
  esac
done
grc=$(sed -n 's/.*@@RC \([0-9]*\).*/\1/p' "$LOG" | tail -1)
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
  rxe_vm_log "VM killed by --timeout ${TIMEOUT}s; see $LOG"; rc=124
elif [ -z "$grc" ]; then
  rxe_vm_log "VM gave no result (qemu rc=$qrc); see $LOG"; rc=125
elif [ "$grc" != 0 ] || [ "$fail" != 0 ]; then
  rc=1
elif grep -a -q '@@ERROR' "$LOG"; then
  rxe_vm_log "the VM reported an error:"; grep -a '@@ERROR' "$LOG" >&2; rc=1
else
  rc=0
fi
[ ${#unfinished[@]} = 0 ] || rxe_vm_log "did not finish: ${unfinished[*]}"
[ "$QUIET" = 1 ] || rxe_vm_log "VM ran ${secs}s (qemu rc=$qrc, guest rc=${grc:-none}); log: $LOG${RESULTS:+; results: $RESULTS}"
echo "vm: $pass passed, $fail failed, $skip skipped"
exit "$rc"
