/* SPDX-License-Identifier: MIT */
/* The NIC topology seam: what /sys/class/infiniband says about each RDMA
 * device. The sysfs implementation reads below a root directory, "/" in
 * production and a directory of files in tests. */
#ifndef HO_PLATFORM_TOPOLOGY_H
#define HO_PLATFORM_TOPOLOGY_H

#include <limits.h>
#include <stddef.h>

#include "hipobj.h"

#define HO_NIC_NAME_MAX 64
#define HO_BUS_ID_MAX 32
#define HO_MAX_NICS 64

struct ho_nic_info {
  char name[HO_NIC_NAME_MAX];
  char bus_id[HO_BUS_ID_MAX]; /* "" when unknown */
  int numa_node;              /* -1 when unknown */
  int active_port;            /* first ACTIVE port, 0 when none */
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
};

struct ho_topology {
  const struct ho_topology_ops *ops;
  char root[PATH_MAX]; /* "" means "/" */
};

extern const struct ho_topology_ops ho_topology_sysfs_ops;
/* The null table (null_ops.c): list_nics hipObjNotSupported, gid_type
 * HO_GID_UNKNOWN. */
extern const struct ho_topology_ops ho_topology_null_ops;

/* Fills t for sysfs below root (NULL: the real /sys). */
hipObjOpError_t ho_topology_sysfs_init(struct ho_topology *t,
                                       const char *root);

#endif
