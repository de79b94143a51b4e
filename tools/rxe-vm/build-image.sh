#!/bin/bash
# tools/rxe-vm/build-image.sh - build (or find in the cache) the base image of
# the rxe test VM: a Debian bookworm kernel and a busybox initramfs with the
# Soft-RoCE modules, rdma-core, ibverbs-utils, perftest and iproute2.
#
# usage: tools/rxe-vm/build-image.sh [--force] [--print-dir] [--quiet]
#   --force      rebuild even if the cache has an image for this config
#   --print-dir  print only the image directory on stdout
#   --quiet      no progress output
# environment:
#   RXE_VM_CACHE  cache directory (default tools/rxe-vm/cache)
#   RXE_VM_KPKG   pin the kernel package, e.g. linux-image-6.1.0-57-amd64
#   KEEP_STAGE=1  keep the ~400 MB extracted kernel under cache/stage (also
#                 CLEAN_STAGE=0); a failed build keeps it for the next try
#                 (by default it is deleted once the image is packed)
#
# Steps (all as root on Debian 12; nothing is installed into the host's /boot):
#   1. apt-get install --no-install-recommends the host tools that are missing
#      (qemu-system-x86, kmod, binutils, ...; see HOST_PKGS in config.sh)
#   2. apt-get download the kernel and GUEST_PKGS into cache/debs/ (kept)
#   3. dpkg -x the kernel into cache/stage/, depmod it, and copy GUEST_MODS
#      plus their modules.dep closure into the image, in load order
#   4. dpkg -x GUEST_PKGS into the image root, prune, add /init, the runner,
#      busybox applet symlinks, run ldconfig -r
#   5. check that every NEEDED library of every ELF file in the image is in
#      the image (fails loudly otherwise)
#   6. write cache/image-<key>/: kernel (the vmlinux extracted from the
#      bzImage, for a fast PVH boot), base.cpio (packed with the guest's
#      busybox), base-libs.txt (library names in the image), manifest.txt
# <key> hashes config.sh, this script and guest/*, so a second call with the
# same config does nothing but print where the image is.
set -euo pipefail
RXE_VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$RXE_VM_DIR/lib.sh"

FORCE=0 PRINT_DIR=0 QUIET=0
while [ $# -gt 0 ]; do
  case "$1" in
    --force) FORCE=1 ;;
    --print-dir) PRINT_DIR=1 ;;
    --quiet|-q) QUIET=1 ;;
    -h|--help) sed -n '2,/^set -euo/{/^#/{s/^# \{0,1\}//;p}}' "$0"; exit 0 ;;
    *) rxe_vm_die "unknown option $1 (see --help)" ;;
  esac
  shift
done
say() { [ "$QUIET" = 1 ] || echo "build-image: $*" >&2; }
now() { date +%s.%N; }
dt() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", b-a}'; }

IMG=$(rxe_vm_image_dir)
done_msg() { if [ "$PRINT_DIR" = 1 ]; then echo "$IMG"; else say "image: $IMG"; fi; }

rxe_vm_host_deps
export PATH=$PATH:/usr/sbin:/sbin
if [ "$FORCE" = 0 ] && [ -f "$IMG/.complete" ]; then
  say "cached ($(cat "$IMG/kver"))"; done_msg; exit 0
fi

mkdir -p "$RXE_VM_CACHE"
exec 9>"$RXE_VM_CACHE/.build.lock"
flock 9                                   # one build at a time per cache
if [ "$FORCE" = 0 ] && [ -f "$IMG/.complete" ]; then done_msg; exit 0; fi

T0=$(now)
# ---- 2. download ---------------------------------------------------------
DEBS=$RXE_VM_CACHE/debs
mkdir -p "$DEBS"
chown _apt "$DEBS" 2>/dev/null || true    # apt's download sandbox user
KPKG=$RXE_VM_KPKG
if [ -z "$KPKG" ]; then
  resolve() { apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}'; }
  KPKG=$(resolve)
  if [ -z "$KPKG" ]; then apt-get update -qq >&2; KPKG=$(resolve); fi
  [ -n "$KPKG" ] || rxe_vm_die "cannot resolve the kernel package behind linux-image-amd64"
fi
KVER=${KPKG#linux-image-}
deb_of() { ls "$DEBS/${1}"_*.deb 2>/dev/null | sort -V | tail -1; }
need=()
for p in "$KPKG" "${GUEST_PKGS[@]}"; do
  [ -n "$(deb_of "$p")" ] || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  say "apt-get download ${#need[@]} packages"
  if ! (cd "$DEBS" && rxe_vm_apt download -q "${need[@]}") > "$RXE_VM_CACHE/apt-download.log" 2>&1; then
    cat "$RXE_VM_CACHE/apt-download.log" >&2
    rxe_vm_die "apt-get download failed (log: $RXE_VM_CACHE/apt-download.log)"
  fi
fi
for p in "$KPKG" "${GUEST_PKGS[@]}"; do
  [ -n "$(deb_of "$p")" ] || rxe_vm_die "package $p was not downloaded"
done
T1=$(now)

# ---- 3. kernel -------------------------------------------------------------
STAGE=$RXE_VM_CACHE/stage
KDIR=$STAGE/kernel-$KVER
if [ ! -f "$KDIR/.done" ]; then
  rm -rf "$KDIR"; mkdir -p "$KDIR"
  say "extracting $KPKG"
  dpkg -x "$(deb_of "$KPKG")" "$KDIR"
  depmod -b "$KDIR" "$KVER"
  touch "$KDIR/.done"
fi
MODDIR=$KDIR/lib/modules/$KVER
[ -f "$KDIR/boot/vmlinuz-$KVER" ] || rxe_vm_die "no boot/vmlinuz-$KVER in $KPKG"
T2=$(now)

# ---- 4. root filesystem ------------------------------------------------------
TMPIMG=$RXE_VM_CACHE/.image-tmp.$$
ROOT=$STAGE/root.$$
trap 'rm -rf "$TMPIMG" "$ROOT"' EXIT
rm -rf "$TMPIMG" "$ROOT"; mkdir -p "$TMPIMG" "$ROOT"
: > "$TMPIMG/manifest.txt"
for p in "$KPKG" "${GUEST_PKGS[@]}"; do
  f=$(deb_of "$p")
  printf '%s %s\n' "$p" "$(dpkg-deb -f "$f" Version)" >> "$TMPIMG/manifest.txt"
  [ "$p" = "$KPKG" ] || dpkg -x "$f" "$ROOT"
done
for x in "${GUEST_PRUNE[@]}"; do rm -rf "${ROOT:?}/$x"; done
mkdir -p "$ROOT"/{proc,sys,dev,tmp,run,root,results,payload,sbin,usr/sbin,usr/bin,etc/rxe-vm,usr/lib/rxe-vm}
BB=$ROOT/bin/busybox
[ -x "$BB" ] || rxe_vm_die "busybox-static did not provide /bin/busybox"
for a in $("$BB" --list-full); do     # applets, without shadowing real tools
  [ -e "$ROOT/$a" ] || [ -L "$ROOT/$a" ] || ln -s /bin/busybox "$ROOT/$a"
done

# modules: each listed one after its modules.dep dependencies, in load order
mod_path() {  # module name -> path relative to MODDIR ('-' == '_')
  awk -F: -v n="${1//-/_}" '{b=$1; sub(/.*\//,"",b); sub(/\.ko(\.[a-z]+)?$/,"",b); gsub(/-/,"_",b);
                             if (b==n) {print $1; exit}}' "$MODDIR/modules.dep"
}
declare -A seen=()
add_mods() {  # add_mods LISTFILE NAME... : copy modules + deps, append new ones to LISTFILE
  local list=$1 m p q deps; shift
  : > "$list"
  for m in "$@"; do
    p=$(mod_path "$m")
    if [ -z "$p" ]; then
      grep -q "/${m//[-_]/[-_]}\.ko" "$MODDIR/modules.builtin" && continue   # built in
      rxe_vm_die "module $m not found in $KVER"
    fi
    deps=$(awk -F': *' -v p="$p" '$1==p {print $2}' "$MODDIR/modules.dep")
    # modules.dep lists the direct dependencies first: load in reverse order
    for q in $(printf '%s\n' $deps | tac) "$p"; do
      [ -n "$q" ] && [ -z "${seen[$q]:-}" ] || continue
      seen[$q]=1
      echo "$q" >> "$list"
      install -D -m 644 "$MODDIR/$q" "$ROOT/lib/modules/$KVER/$q"
    done
  done
}
add_mods "$ROOT/etc/rxe-vm/modules.boot" "${GUEST_MODS[@]}"
add_mods "$ROOT/etc/rxe-vm/modules.results" "${GUEST_MODS_RESULTS[@]}"
add_mods "$ROOT/etc/rxe-vm/modules.extra" "${GUEST_MODS_EXTRA[@]}"
cp "$MODDIR"/modules.{order,builtin,builtin.modinfo} "$ROOT/lib/modules/$KVER/"
depmod -b "$ROOT" "$KVER"      # for busybox modprobe (--modprobe, request_module)

install -m 755 "$RXE_VM_DIR/guest/init" "$ROOT/init"
install -m 644 "$RXE_VM_DIR/guest/rxe-setup.sh" "$ROOT/usr/lib/rxe-vm/rxe-setup.sh"
install -m 755 "$RXE_VM_DIR/guest/runner.sh" "$ROOT/usr/lib/rxe-vm/runner.sh"
echo "root:x:0:0:root:/root:/bin/sh" > "$ROOT/etc/passwd"
echo "root:x:0:" > "$ROOT/etc/group"
printf '127.0.0.1 localhost\n::1 localhost\n' > "$ROOT/etc/hosts"
echo "hosts: files dns" > "$ROOT/etc/nsswitch.conf"
echo rxe-vm > "$ROOT/etc/hostname"
ldconfig -r "$ROOT"

# ---- 5. ELF closure check ----------------------------------------------------
(cd "$ROOT" && find lib lib64 usr/lib -name '*.so*' 2>/dev/null | sed 's#.*/##' | sort -u) > "$TMPIMG/base-libs.txt"
# (/dev/null as an extra argument makes readelf print "File:" headers even
# when xargs passes a single file; readelf's errors for non-ELF files are noise)
missing=$(find "$ROOT" -type f \( -perm -u+x -o -name '*.so*' \) -print0 |
  { xargs -0 readelf -d /dev/null 2>/dev/null || true; } |
  awk -v root="$ROOT" '/^File: /{f=substr($0,7); sub(root,"",f); next}
       /Shared library:/{n=$0; sub(/.*\[/,"",n); sub(/\].*/,"",n); print n, f}' |
  while read -r lib file; do
    grep -qxF "$lib" "$TMPIMG/base-libs.txt" || echo "  $lib (needed by $file)"
  done; true)
if [ -n "$missing" ]; then
  echo "build-image: ERROR: the image lacks these shared libraries:" >&2
  echo "$missing" >&2
  echo "build-image: add the packages that provide them to GUEST_PKGS (or prune the file) in config.sh" >&2
  exit 1
fi
T3=$(now)

# ---- 6. pack -----------------------------------------------------------------
# The bzImage's decompressor alone takes ~5 s under TCG. Boot the uncompressed
# ELF vmlinux instead (QEMU uses the kernel's PVH entry point); like the
# kernel's scripts/extract-vmlinux, try each compression magic in the file.
extract_vmlinux() {  # bzImage out
  local magic cmd off
  for magic in '\xfd7zXZ\x00:xz -dc' '\x28\xb5\x2f\xfd:zstd -dc' '\x1f\x8b\x08:gzip -dc'; do
    cmd=${magic#*:}
    command -v "${cmd%% *}" >/dev/null || continue
    for off in $(LC_ALL=C grep -obUaP "${magic%%:*}" "$1" | cut -d: -f1); do
      tail -c +$((off + 1)) "$1" | $cmd > "$2" 2>/dev/null || true
      rxe_vm_is_elf "$2" && readelf -n "$2" 2>/dev/null | grep -q 'Xen.*0x00000012\|Unknown note type: (0x00000012)' &&
        return 0
    done
  done
  return 1
}
if extract_vmlinux "$KDIR/boot/vmlinuz-$KVER" "$TMPIMG/kernel"; then
  say "kernel: uncompressed vmlinux (PVH boot)"
else
  say "warning: no PVH vmlinux in the bzImage; booting the bzImage (about 5 s slower)"
  cp "$KDIR/boot/vmlinuz-$KVER" "$TMPIMG/kernel"
fi
echo "$KVER" > "$TMPIMG/kver"
cp "$BB" "$TMPIMG/busybox"             # packs the per-run payload (no host cpio needed)
# uncompressed: gunzip of the initrd costs ~1 s under TCG, a copy costs nothing
(cd "$ROOT" && find . | LC_ALL=C sort | "$BB" cpio -o -H newc 2>/dev/null) > "$TMPIMG/base.cpio"
touch "$TMPIMG/.complete"
rm -rf "$IMG"
mv "$TMPIMG" "$IMG"
# keep the three most recently used images (run.sh touches the one it uses)
ls -1dt "$RXE_VM_CACHE"/image-* | tail -n +4 | while read -r old; do rm -rf "$old"; done
T4=$(now)
say "download $(dt "$T0" "$T1")s, kernel extract+depmod $(dt "$T1" "$T2")s, rootfs+check $(dt "$T2" "$T3")s, pack $(dt "$T3" "$T4")s, total $(dt "$T0" "$T4")s"
say "kernel $KVER, $(cat "$ROOT"/etc/rxe-vm/modules.* | wc -l) modules, initrd $(du -h "$IMG/base.cpio" | cut -f1)"
if [ "${KEEP_STAGE:-0}" != 1 ] && [ "${CLEAN_STAGE:-1}" != 0 ]; then
  rm -rf "$STAGE"                        # ~400 MB; a rebuild re-extracts the kernel
fi
done_msg
