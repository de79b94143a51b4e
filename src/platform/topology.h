/* SPDX-License-Identifier: MIT */
/* The topology seam: what /sys/class/infiniband says about each RDMA
 * device, where the GPUs and NICs sit on the PCI tree, the NUMA node of the
 * calling CPU, and what the process may pin (/proc/self). The sysfs
 * implementation reads below a root directory, "/" in production and a
 * directory of files in tests. */
#ifndef HO_PLATFORM_TOPOLOGY_H
#define HO_PLATFORM_TOPOLOGY_H

#include <limits.h>
#include <stddef.h>

#include "hipobj.h"

#define HO_NIC_NAME_MAX 64
#define HO_BUS_ID_MAX 32
#define HO_MAX_NICS 64
#define HO_MAX_GPUS 64
/* A PCI device's place in the tree: its path below /sys/devices, from the
 * host bridge down ("pci0000:00/0000:00:01.0/0000:01:00.0"). */
#define HO_PCI_PATH_MAX 256

struct ho_nic_info {
  char name[HO_NIC_NAME_MAX];
  char bus_id[HO_BUS_ID_MAX]; /* "" when unknown */
  int numa_node;              /* -1 when unknown */
  int active_port;            /* first ACTIVE port, 0 when none */
  char pci_path[HO_PCI_PATH_MAX]; /* "" when unknown (rxe, no PCI device) */
  unsigned rate_mbps;         /* the active port's link rate, 0 unknown */
};

/* A PCI device other than a NIC: a GPU. */
struct ho_pci_info {
  char bus_id[HO_BUS_ID_MAX];     /* "0000:c1:00.0" */
  char pci_path[HO_PCI_PATH_MAX]; /* "" when unknown */
  int numa_node;                  /* -1 when unknown */
};

/* What the kernel lets this process pin for RDMA (ib_umem_get() charges
 * mm->pinned_vm against RLIMIT_MEMLOCK unless the process has
 * CAP_IPC_LOCK). */
struct ho_pin_limits {
  unsigned long long limit;  /* RLIMIT_MEMLOCK's soft limit in bytes;
                                ULLONG_MAX: unlimited */
  unsigned long long pinned; /* pinned now (VmPin), whole process */
  int ipc_lock;              /* 1: CAP_IPC_LOCK is effective (no limit) */
};

/* The kernel's gid_attrs/types: "RoCE v2", or "IB/RoCE v1", which is IB on
 * a port whose link_layer is InfiniBand and RoCE v1 otherwise. */
enum ho_gid_type {
  HO_GID_UNKNOWN = 0,
  HO_GID_IB = 1,
  HO_GID_ROCE_V1 = 2,
  HO_GID_ROCE_V2 = 3
};

struct ho_topology;

struct ho_topology_ops {
  /* Every RDMA device, in name order (strcmp), the first cap of them.
   * *count <= cap. No device directory at all: success, *count 0. */
  hipObjOpError_t (*list_nics)(const struct ho_topology *t,
                               struct ho_nic_info *out, size_t cap,
                               size_t *count);
  enum ho_gid_type (*gid_type)(const struct ho_topology *t, const char *nic,
                               int port, int index);
  /* Where the PCI device bus_id ("0000:c1:00.0") is: its path and NUMA
   * node. hipObjNicNotFound when no such device is listed. */
  hipObjOpError_t (*pci_device)(const struct ho_topology *t,
                                const char *bus_id, struct ho_pci_info *out);
  /* The GPUs on the PCI bus (AMD and NVIDIA display controllers and
   * processing accelerators), whichever the process may use, in bus id
   * order, the first cap of them. None: success, *count 0. */
  hipObjOpError_t (*list_gpus)(const struct ho_topology *t,
                               struct ho_pci_info *out, size_t cap,
                               size_t *count);
  /* The NUMA node of the CPU the calling thread runs on, -1 unknown. */
  int (*cpu_numa_node)(const struct ho_topology *t);
  /* RLIMIT_MEMLOCK, what is pinned now and CAP_IPC_LOCK, from
   * /proc/self/{limits,status}. hipObjNotSupported when unknown. */
  hipObjOpError_t (*pin_limits)(const struct ho_topology *t,
                                struct ho_pin_limits *out);
  /* A port's hardware counter (ports/PORT/hw_counters/NAME, e.g. rxe's
   * "completer_retry_err"). hipObjNotSupported when the device has no
   * such counter. */
  hipObjOpError_t (*hw_counter)(const struct ho_topology *t, const char *nic,
                                int port, const char *name,
                                unsigned long long *out);
};

struct ho_topology {
  const struct ho_topology_ops *ops;
  char root[PATH_MAX]; /* "" means "/" */
};

extern const struct ho_topology_ops ho_topology_sysfs_ops;
/* The null table (null_ops.c): list_nics, pci_device, list_gpus and
 * pin_limits and hw_counter hipObjNotSupported, gid_type HO_GID_UNKNOWN, cpu_numa_node -1. */
extern const struct ho_topology_ops ho_topology_null_ops;

/* Fills t for sysfs below root (NULL: the real /sys). */
hipObjOpError_t ho_topology_sysfs_init(struct ho_topology *t,
                                       const char *root);

#endif
