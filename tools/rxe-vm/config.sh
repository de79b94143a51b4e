# tools/rxe-vm/config.sh - what goes into the guest image.
#
# Sourced by build-image.sh and run.sh. The image cache key is a hash of this
# file, build-image.sh and guest/*, so editing any of them rebuilds the image
# on the next run (the downloaded .debs are reused).

# Guest kernel: the package that bookworm's linux-image-amd64 metapackage
# points at, resolved when the image is built. Pin it with
# RXE_VM_KPKG=linux-image-6.1.0-57-amd64 (the pin is part of the cache key).
RXE_VM_KPKG=${RXE_VM_KPKG:-}

# Guest userland. Extracted with dpkg -x into the image, never installed on
# the host. The list is closed under shared-library dependencies: the build
# fails if an ELF file in the image needs a library that is not here.
GUEST_PKGS=(
  busybox-static           # /init, shell, coreutils, timeout, cpio
  iproute2                 # rdma (rdma link add), ip
  libibverbs1 ibverbs-providers ibverbs-utils   # verbs + rxe provider + ibv_devinfo, ibv_rc_pingpong
  librdmacm1 libibumad3 perftest                # ib_write_bw, ib_read_bw, ...
  libxtables12                                  # tc (fault injection: netem)
  libnl-3-200 libnl-route-3-200 libpci3 libudev1
  libc6 libgcc-s1 libmnl0 libelf1 libbpf1 libcap2 libbsd0 libmd0 zlib1g
)

# Paths (relative to the image root) dropped after extraction: docs, and tools
# a test VM never runs that would need more libraries (ss, arpd, tc's
# iptables and ATM plugins). tc stays, with netem's distribution tables.
GUEST_PRUNE=(
  bin/ss usr/sbin/arpd usr/lib/x86_64-linux-gnu/tc/m_ipt.so
  usr/lib/x86_64-linux-gnu/tc/m_xt.so usr/lib/x86_64-linux-gnu/tc/q_atm.so
  usr/share/doc usr/share/man usr/share/locale usr/share/lintian usr/share/info
  usr/share/bash-completion usr/share/initramfs-tools usr/share/zoneinfo
  usr/lib/x86_64-linux-gnu/gconv etc/init.d
)

# Kernel modules copied into the image with their modules.dep closure.
# GUEST_MODS are loaded at every boot (in dependency order, by insmod);
# GUEST_MODS_RESULTS only when run.sh has --results; GUEST_MODS_EXTRA are
# only in the image: load them with run.sh --modprobe NAME (or modprobe in a
# test). Each module costs boot time under TCG (9p ~0.5 s, drm ~0.3 s).
GUEST_MODS=(
  rdma_rxe ib_uverbs ib_core udp_tunnel ip6_udp_tunnel  # Soft-RoCE + verbs
  crc32_generic crc32-pclmul                            # rxe's ICRC (crypto API)
)
GUEST_MODS_RESULTS=(
  virtio_pci 9pnet_virtio 9p                            # the --results share (virtfs)
)
GUEST_MODS_EXTRA=(
  rdma_ucm                                              # librdmacm / rdma_cm (perftest -R)
  dummy veth                                            # --netdev dummy|veth
  vgem                                                  # a dma-buf exporter (DRM PRIME)
  sch_netem sch_prio cls_u32                            # fault injection (tests/vm/faults.sh)
  virtio_net                                            # --host-port (a host service, through QEMU user networking)
)

# Host packages (Debian names) that build-image.sh / run.sh need; installed
# with apt-get install --no-install-recommends when a command is missing.
HOST_PKGS=(
  qemu-system-x86:qemu-system-x86_64
  kmod:depmod
  binutils:readelf
  libc-bin:ldconfig
  util-linux:flock
  xz-utils:xz
)
