/* SPDX-License-Identifier: MIT */
/* The rails: the NICs an instance may move bytes over, and why each
 * (docs/architecture.md, "Rails"). A pure policy over what the topology
 * reports, so that tests can feed it any PCI tree:
 *
 *   nicHint given   the listed active NICs, the one ho_choose_nic() picks
 *                   first (a name not listed is taken as given, alone).
 *   a GPU           every active NIC at the smallest PCIe path class from
 *                   the GPU, then the fastest link (the near set, L NICs);
 *                   with G GPUs of the host sharing that near set,
 *                   ceil(L/G) rails from index i * ceil(L/G) (mod L), i the
 *                   GPU's index among them by bus id (NCCL's rule). Without
 *                   the GPU's or any NIC's place in the PCI tree: the NIC
 *                   whose bus id is closest to the GPU's, alone.
 *   host memory     with HIPOBJ_INIT_FIRST_ACTIVE_NIC: the active NICs on
 *                   the calling CPU's NUMA node, fastest link; none known:
 *                   the first active NIC alone.
 *
 * A NIC of a larger path class than the near set's is never a rail of
 * device memory unless nicHint names it. */
#ifndef HO_RAILS_H
#define HO_RAILS_H

#include <stdbool.h>
#include <stddef.h>

#include "nic_choice.h"
#include "platform/topology.h"

#define HO_MAX_RAILS 16 /* HIPOBJ_INFO_MAX_RAILS */

/* hipObjPathClass_t's values. */
enum ho_path_class {
  HO_PATH_UNKNOWN = 0,
  HO_PATH_SWITCH = 1,    /* below the same PCIe switch */
  HO_PATH_SWITCHES = 2,  /* through several switches, not the root port */
  HO_PATH_ROOT_PORT = 3, /* through the root complex of one host bridge */
  HO_PATH_NUMA = 4,      /* another host bridge of the same NUMA node */
  HO_PATH_OTHER = 5      /* another NUMA node, or nodes unknown */
};

/* hipObjRailWhy_t's values. */
enum ho_rail_why {
  HO_RAIL_NONE = 0,
  HO_RAIL_NEAR_GPU = 1,
  HO_RAIL_NUMA_LOCAL = 2,
  HO_RAIL_HINT = 3,
  HO_RAIL_CLOSEST_BUS_ID = 4,
  HO_RAIL_FIRST_ACTIVE = 5
};

struct ho_rail {
  char name[HO_NIC_NAME_MAX];
  char bus_id[HO_BUS_ID_MAX]; /* "" unknown */
  int numa_node;              /* -1 unknown */
  enum ho_path_class path;    /* from the GPU, or (host memory) the CPU */
  enum ho_rail_why why;
  unsigned rate_mbps;         /* 0 unknown */
};

struct ho_rails {
  size_t count;                  /* >= 1 on success */
  struct ho_rail rail[HO_MAX_RAILS];
  enum ho_path_class near_class; /* of the near set; UNKNOWN if none */
  unsigned near;                 /* L: NICs in the near set, 0 if none */
  unsigned gpus;                 /* G: GPUs sharing it (with this one) */
  unsigned gpu_index;            /* i: this GPU's index among them */
};

struct ho_rails_in {
  const struct ho_nic_info *nics; /* the topology's list, in name order */
  size_t n;
  /* The GPU whose memory moves, NULL for host memory. Its pci_path "" when
   * its place is unknown. */
  const struct ho_pci_info *gpu;
  const struct ho_pci_info *gpus; /* every GPU of the host, by bus id */
  size_t n_gpus;
  int cpu_numa_node;              /* host memory: the calling CPU's, or -1 */
  const char *hint;               /* nicHint, or NULL */
  bool first_active;              /* HIPOBJ_INIT_FIRST_ACTIVE_NIC */
  unsigned max_rails;             /* HIPOBJ_MAX_RAILS, 0: the rule's */
};

/* The rails, rails->rail[0] first: the NIC init opens, named in *primary
 * with the reason hipObjGetInfo() reports as nicChoice. Errors as
 * ho_choose_nic(): NicNotFound. Outputs are written only on success. */
hipObjOpError_t ho_choose_rails(const struct ho_rails_in *in,
                                struct ho_rails *rails,
                                char primary[HO_NIC_NAME_MAX],
                                struct ho_nic_choice *choice);

/* The PCIe path class between two devices given their paths below
 * /sys/devices and NUMA nodes. UNKNOWN when either path is "". */
enum ho_path_class ho_path_class(const char *a, int a_numa, const char *b,
                                 int b_numa);

/* "same switch", "switches", "root port", "NUMA node", "other", "unknown". */
const char *ho_path_class_name(enum ho_path_class c);

#endif
