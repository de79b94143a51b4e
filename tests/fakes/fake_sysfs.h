/* SPDX-License-Identifier: MIT */
/* A fake sysfs tree in a temporary directory, laid out as the kernel lays
 * out /sys/class/infiniband, for the sysfs topology (point
 * ho_topology_sysfs_init() at fs.root):
 *
 *   sys/devices/pci0000:00/<bus>/infiniband/<nic>/     a PCI NIC
 *   sys/devices/pci0000:00/<bus>/{numa_node,uevent}
 *   sys/devices/virtual/infiniband/<nic>/              a NIC without PCI
 *   sys/class/infiniband/<nic> -> ../../devices/.../<nic>
 *   <nic>/device -> ../../../<bus>
 *   <nic>/ports/<n>/{state,link_layer,gid_attrs/types/<i>}
 *
 * Functions return 0, or -1 with errno set. Paths named "rel" are relative
 * to the root; "nic_rel" ones to the NIC's directory. */
#ifndef HO_TESTS_FAKE_SYSFS_H
#define HO_TESTS_FAKE_SYSFS_H

#include <limits.h>
#include <stddef.h>

#define HO_FAKE_NO_NUMA (-2) /* add_nic: no numa_node file */

struct ho_fake_sysfs {
  char root[PATH_MAX]; /* "" until created */
};

/* A new empty tree (with sys/class/infiniband) under $TMPDIR or /tmp. */
int ho_fake_sysfs_create(struct ho_fake_sysfs *fs);

/* Removes the whole tree; safe on a tree never created or already gone. */
void ho_fake_sysfs_destroy(struct ho_fake_sysfs *fs);

/* A NIC. bus_id NULL: a virtual device (no device link, like rxe). With a
 * bus id, device/uevent carries PCI_SLOT_NAME and device/numa_node the
 * node (unless HO_FAKE_NO_NUMA). */
int ho_fake_sysfs_add_nic(struct ho_fake_sysfs *fs, const char *nic,
                          const char *bus_id, int numa_node);

/* A PCI device at `path` below sys/devices ("pci0000:00/0000:00:01.0/
 * 0000:01:00.0": a host bridge, then bus ids; bridges on the way are made
 * as plain directories), with its vendor and class files ("0x10de",
 * "0x030200"), numa_node (unless HO_FAKE_NO_NUMA) and the link
 * sys/bus/pci/devices/<bus id>. */
int ho_fake_sysfs_add_pci(struct ho_fake_sysfs *fs, const char *path,
                          unsigned vendor, unsigned pci_class, int numa_node);

/* A PCI NIC at `path` as ho_fake_sysfs_add_pci() makes it (a Mellanox
 * Ethernet controller), with port 1 ACTIVE and its rate, e.g. "400 Gb/sec
 * (4X NDR)" (NULL: no rate file). */
int ho_fake_sysfs_add_nic_at(struct ho_fake_sysfs *fs, const char *nic,
                             const char *path, int numa_node,
                             const char *rate);

/* sys/devices/system/node/node<node>/cpulist. */
int ho_fake_sysfs_set_node_cpus(struct ho_fake_sysfs *fs, int node,
                                const char *cpulist);

/* ports/<port>/state, e.g. "4: ACTIVE" or "1: DOWN" (a newline is added). */
int ho_fake_sysfs_set_port_state(struct ho_fake_sysfs *fs, const char *nic,
                                 int port, const char *state);

/* ports/<port>/gid_attrs/types/<index>, e.g. "RoCE v2", "IB/RoCE v1". */
int ho_fake_sysfs_set_gid_type(struct ho_fake_sysfs *fs, const char *nic,
                               int port, int index, const char *type);

/* ports/<port>/link_layer, "Ethernet" or "InfiniBand". */
int ho_fake_sysfs_set_link_layer(struct ho_fake_sysfs *fs, const char *nic,
                                 int port, const char *layer);

/* Raw bytes to a file below the root (parents created, file replaced). */
int ho_fake_sysfs_write(struct ho_fake_sysfs *fs, const char *rel,
                        const void *data, size_t len);

/* Raw bytes to a file below the NIC's directory. */
int ho_fake_sysfs_write_nic(struct ho_fake_sysfs *fs, const char *nic,
                            const char *nic_rel, const void *data, size_t len);

/* A symbolic link below the root (parents created, old entry replaced). */
int ho_fake_sysfs_symlink(struct ho_fake_sysfs *fs, const char *rel,
                          const char *target);

/* A directory below the root (parents created). */
int ho_fake_sysfs_mkdir(struct ho_fake_sysfs *fs, const char *rel);

/* Removes a file, link or whole directory below the root. */
int ho_fake_sysfs_remove(struct ho_fake_sysfs *fs, const char *rel);

#endif
