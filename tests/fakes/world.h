/* SPDX-License-Identifier: MIT */
/* A whole fake world for end-to-end tests: a simulated RC fabric with a
 * client NIC and a server NIC, a fake sysfs tree that describes them, a GPU
 * runtime (none or the fake), and the platform that bundles them. */
#ifndef HO_TESTS_WORLD_H
#define HO_TESTS_WORLD_H

#include "fakes/fake_sysfs.h"
#include "hipobj.h"
#include "options.h"
#include "platform/platform.h"

#define WORLD_CLIENT_NIC "fake_cli0"
#define WORLD_SERVER_NIC "fake_srv0"
#define WORLD_CLIENT_BUS "0000:41:00.0"
#define WORLD_SERVER_BUS "0000:c1:00.0"

struct world {
  struct ho_fake_sysfs fs;
  struct ho_topology topo;
  struct ho_platform plat;
  struct ho_options opts;
};

/* Resets the fabric and builds both NICs; gpu NULL means ho_gpu_none_ops.
 * Retry periods are scaled down so failures take milliseconds. */
int world_create(struct world *w, const struct ho_gpu_ops *gpu);
/* Adds another NIC to fabric and sysfs. */
int world_add_nic(struct world *w, const char *name, const char *bus_id);
/* The same with a device configuration (NULL: defaults). */
struct fake_device_cfg;
int world_add_nic_cfg(struct world *w, const char *name, const char *bus_id,
                      const struct fake_device_cfg *cfg);
void world_destroy(struct world *w);

/* ho_init_with() on this world with nicHint (NULL allowed), gpuDevice -1. */
hipObjOpError_t world_init(struct world *w, const char *nic_hint);
/* The same with an explicit gpuDevice. */
hipObjOpError_t world_init_gpu(struct world *w, const char *nic_hint, int gpu);

/* hipObjGetInfo() now, whole; aborts if it fails (a test's invariant). */
hipObjInfo_t world_info(void);

#endif
