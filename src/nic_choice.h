/* SPDX-License-Identifier: MIT */
/* The NIC hipObjInit() uses, and why: ho_select_nic() (src/rdma/select.c)
 * with the reason it took, and the first active NIC when the application
 * allows it (HIPOBJ_INIT_FIRST_ACTIVE_NIC) and nothing else applies. */
#ifndef HO_NIC_CHOICE_H
#define HO_NIC_CHOICE_H

#include <stdbool.h>
#include <stddef.h>

#include "platform/topology.h"

struct ho_nic_choice {
  char bus_id[HO_BUS_ID_MAX]; /* "" when unknown or not listed */
  int numa_node;              /* -1 when unknown or not listed */
  hipObjNicChoice_t why;
};

/* nics: the topology's list, in name order. gpu_bus_id "" without a GPU.
 * hint: nicHint, or NULL. Errors: NicNotFound. `name` and `out` are
 * written only on success. Pure. */
hipObjOpError_t ho_choose_nic(const struct ho_nic_info *nics, size_t n,
                              const char *gpu_bus_id, const char *hint,
                              bool first_active, char name[HO_NIC_NAME_MAX],
                              struct ho_nic_choice *out);

#endif
