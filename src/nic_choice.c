/* SPDX-License-Identifier: MIT */
#include "nic_choice.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rdma/select.h"

static const struct ho_nic_info *find(const struct ho_nic_info *nics,
                                      size_t n, const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (strncmp(nics[i].name, name, sizeof nics[i].name) == 0)
      return &nics[i];
  return NULL;
}

static bool has_bus_id(const struct ho_nic_info *nic)
{
  return memchr(nic->bus_id, '\0', sizeof nic->bus_id) && nic->bus_id[0];
}

/* ho_select_nic() takes the closest NIC whenever an active candidate with a
 * bus id is at a finite distance from the GPU, and otherwise the hint's
 * first name: a chosen NIC that is such a candidate was chosen by distance.
 * (The hint's first name is itself a candidate, so the case cannot be
 * mistaken.) */
static hipObjNicChoice_t reason(const struct ho_nic_info *nic,
                                const char *gpu_bus_id)
{
  if (nic && nic->active_port != 0 && has_bus_id(nic) &&
      ho_bus_id_distance(gpu_bus_id, nic->bus_id) != SIZE_MAX)
    return hipObjNicChoiceClosestToGpu;
  return hipObjNicChoiceHint;
}

static const struct ho_nic_info *first_active(const struct ho_nic_info *nics,
                                              size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (nics[i].active_port != 0 && nics[i].name[0] &&
        memchr(nics[i].name, '\0', sizeof nics[i].name))
      return &nics[i];
  return NULL;
}

hipObjOpError_t ho_choose_nic(const struct ho_nic_info *nics, size_t n,
                              const char *gpu_bus_id, const char *hint,
                              bool first, char name[HO_NIC_NAME_MAX],
                              struct ho_nic_choice *out)
{
  char chosen[HO_NIC_NAME_MAX];
  struct ho_nic_choice c;
  memset(&c, 0, sizeof c);
  hipObjOpError_t e = ho_select_nic(nics, n, gpu_bus_id, hint, chosen);
  const struct ho_nic_info *nic = NULL;
  if (e == hipObjSuccess) {
    nic = find(nics, n, chosen);
    c.why = reason(nic, gpu_bus_id);
  } else if (e == hipObjNicNotFound && first && (!hint || !hint[0]) &&
             (nic = first_active(nics, n)) != NULL) {
    snprintf(chosen, sizeof chosen, "%s", nic->name);
    c.why = hipObjNicChoiceFirstActive;
    e = hipObjSuccess;
  }
  if (e != hipObjSuccess)
    return e;
  c.numa_node = nic ? nic->numa_node : -1;
  if (nic && has_bus_id(nic))
    snprintf(c.bus_id, sizeof c.bus_id, "%s", nic->bus_id);
  memcpy(name, chosen, HO_NIC_NAME_MAX);
  *out = c;
  return hipObjSuccess;
}
