/* SPDX-License-Identifier: MIT */
/* NIC and GID selection: pure functions over what the topology and the
 * device report, so that tests can feed them any table. */
#ifndef HO_RDMA_SELECT_H
#define HO_RDMA_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/topology.h"

/* Choose the NIC for a GPU. Candidates: NICs with an active port whose name
 * is in `hint` (a comma-separated allow-list; NULL or "" allows all). With a
 * GPU bus id and a candidate whose bus id is known, the closest one wins:
 * distance is the number of characters after the common prefix of the two
 * bus ids, ignoring the PCI function (".N"); ties go to the first. Otherwise,
 * with a hint, the hint's first name is chosen as given (GPU-less hosts).
 * Otherwise hipObjNicNotFound. `out` is written only on success. */
hipObjOpError_t ho_select_nic(const struct ho_nic_info *nics, size_t n,
                              const char *gpu_bus_id, const char *hint,
                              char out[HO_NIC_NAME_MAX]);

/* The next comma-separated name of list at *pos, without surrounding
 * blanks; empty names are skipped. False at the end of the list. */
bool ho_name_list_next(const char *list, size_t *pos, const char **name,
                       size_t *len);

/* Bus-id distance as above; exposed for tests. The comparison ignores case
 * and spells the domain as 4 digits (so "00000000:1B:00.0", "1b:00.0" and
 * "0000:1b:00.1" are all at distance 0 from "0000:1b:00.0"). SIZE_MAX when
 * either id is NULL or empty. */
size_t ho_bus_id_distance(const char *a, const char *b);

struct ho_gid_entry {
  int index;
  uint8_t raw[16];
  enum ho_gid_type type;
};

/* The best GID: RoCE v2 IPv4-mapped, v2 global, v2 link-local, v1 global,
 * v1 link-local (then, for an InfiniBand port, IB global, IB link-local).
 * All-zero GIDs, unknown types and negative indexes are skipped; ties go to
 * the lowest index. Returns the chosen entry's index, or 0 with no
 * candidate. */
int ho_select_gid(const struct ho_gid_entry *e, size_t n);

#endif
