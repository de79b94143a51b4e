/* SPDX-License-Identifier: MIT */
#include "fakes/world.h"

#include <stdlib.h>
#include <string.h>

#include "fakes/fake_verbs.h"
#include "instance.h"

static const char *gid_type_name(enum fake_gid_type t)
{
  switch (t) {
  case FAKE_GID_ROCE_V1: return "IB/RoCE v1";
  case FAKE_GID_ROCE_V2: return "RoCE v2";
  case FAKE_GID_IB: return "IB/RoCE v1";
  default: return NULL;
  }
}

/* Mirror the fabric's GID table into sysfs, as the kernel does. */
static int describe_nic(struct world *w, const char *name, const char *bus)
{
  if (ho_fake_sysfs_add_nic(&w->fs, name, bus, 0) != 0 ||
      ho_fake_sysfs_set_port_state(&w->fs, name, 1, "4: ACTIVE") != 0)
    return -1;
  for (int i = 0; i < FAKE_GID_TABLE_LEN; i++) {
    const char *t = gid_type_name(fake_gid_type(name, 1, i));
    if (t && ho_fake_sysfs_set_gid_type(&w->fs, name, 1, i, t) != 0)
      return -1;
  }
  return 0;
}

int world_add_nic(struct world *w, const char *name, const char *bus_id)
{
  return world_add_nic_cfg(w, name, bus_id, NULL);
}

int world_add_nic_cfg(struct world *w, const char *name, const char *bus_id,
                      const struct fake_device_cfg *cfg)
{
  if (fake_device_add(name, cfg) != 0)
    return -1;
  return describe_nic(w, name, bus_id);
}

int world_create(struct world *w, const struct ho_gpu_ops *gpu)
{
  memset(w, 0, sizeof *w);
  fake_fabric_reset();
  fake_fabric_set_time_scale(0.01); /* timeout 14: 0.67 ms a try */
  /* End to end as on Soft-RoCE: PSNs, acknowledgements that travel (and
   * die with a QP that leaves RTS first), rxe's RESET and ACK handling. */
  fake_fabric_set_soft_roce(true, 20000);
  if (ho_fake_sysfs_create(&w->fs) != 0)
    return -1;
  if (world_add_nic(w, WORLD_CLIENT_NIC, WORLD_CLIENT_BUS) != 0 ||
      world_add_nic(w, WORLD_SERVER_NIC, WORLD_SERVER_BUS) != 0)
    return -1;
  if (ho_topology_sysfs_init(&w->topo, w->fs.root) != hipObjSuccess)
    return -1;
  w->plat.verbs = &fake_verbs_ops;
  w->plat.gpu = gpu ? gpu : &ho_gpu_none_ops;
  w->plat.topo = &w->topo;
  ho_options_defaults(&w->opts);
  w->opts.max_transfers = 4;
  w->opts.transfer_timeout_ms = 2000;
  return 0;
}

void world_destroy(struct world *w)
{
  ho_fake_sysfs_destroy(&w->fs);
}

hipObjOpError_t world_init(struct world *w, const char *nic_hint)
{
  return world_init_gpu(w, nic_hint, -1);
}

hipObjOpError_t world_init_gpu(struct world *w, const char *nic_hint, int gpu)
{
  hipObjConfig_t cfg = {0};
  cfg.gpuDevice = gpu;
  cfg.nicHint = nic_hint;
  int native = 0;
  return ho_init_with(&w->plat, &w->opts, &cfg, &native);
}

hipObjInfo_t world_info(void)
{
  hipObjInfo_t i;
  memset(&i, 0, sizeof i);
  i.size = sizeof i;
  if (hipObjGetInfo(&i).opError != hipObjSuccess)
    abort();
  return i;
}
