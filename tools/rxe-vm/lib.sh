# tools/rxe-vm/lib.sh - host-side helpers shared by build-image.sh and run.sh.
# Sourced, not executed. Expects RXE_VM_DIR (the directory of this file).

RXE_VM_CACHE=${RXE_VM_CACHE:-$RXE_VM_DIR/cache}
. "$RXE_VM_DIR/config.sh"

rxe_vm_log() { echo "rxe-vm: $*" >&2; }
rxe_vm_die() { echo "rxe-vm: error: $*" >&2; exit 2; }

# Cache key of the base image: everything that decides its contents.
rxe_vm_key() {
  {
    cat "$RXE_VM_DIR/config.sh" "$RXE_VM_DIR/build-image.sh"
    for f in "$RXE_VM_DIR"/guest/*; do echo "== ${f##*/}"; cat "$f"; done
    echo "kpkg=${RXE_VM_KPKG}"
  } | sha256sum | cut -c1-16
}

rxe_vm_image_dir() { echo "$RXE_VM_CACHE/image-$(rxe_vm_key)"; }

# apt-get with one retry after 'apt-get update' (a fresh machine has no lists).
rxe_vm_apt() {
  if ! DEBIAN_FRONTEND=noninteractive apt-get "$@"; then
    rxe_vm_log "apt-get $1 failed; running apt-get update and retrying"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get "$@"
  fi
}

# Install the host packages whose command is missing (HOST_PKGS is pkg:cmd).
rxe_vm_host_deps() {
  local e pkg cmd need=()
  for e in "${HOST_PKGS[@]}"; do
    pkg=${e%%:*} cmd=${e#*:}
    command -v "$cmd" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin command -v "$cmd" >/dev/null 2>&1 ||
      need+=("$pkg")
  done
  [ ${#need[@]} -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] || rxe_vm_die "missing host packages: ${need[*]} (run as root or install them)"
  rxe_vm_log "installing host packages: ${need[*]}"
  rxe_vm_apt install -y -qq --no-install-recommends "${need[@]}" >&2
}

# True if file $1 is an ELF object.
rxe_vm_is_elf() {
  local m=
  [ -f "$1" ] && [ -r "$1" ] || return 1
  IFS= LC_ALL=C read -r -n 4 m < "$1" 2>/dev/null || true
  [ "$m" = $'\x7fELF' ]
}
