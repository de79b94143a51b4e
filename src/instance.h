/* SPDX-License-Identifier: MIT */
/* The instance: all of the library's state, built by hipObjInit() and
 * released when the last call that holds it returns after hipObjShutdown().
 * Everything but pool, buffers and abandoned (each with its own lock) and
 * the atomic counters in stats is fixed once built, so the instance itself
 * needs no lock. */
#ifndef HO_INSTANCE_H
#define HO_INSTANCE_H

#include <stdatomic.h>

#include "abandoned.h"
#include "buffer.h"
#include "nic_choice.h"
#include "options.h"
#include "platform/platform.h"
#include "rails.h"
#include "railset.h"
#include "rdma/pool.h"
#include "rdma/transport.h"
#include "stats.h"

struct ho_config {
  int gpu;                         /* chosen GPU, -1 for none */
  char gpu_bus_id[HO_BUS_ID_MAX];  /* "" without a GPU */
  char nic[HO_NIC_NAME_MAX];
  struct ho_nic_choice nic_choice; /* why, and where the NIC is */
  struct ho_rails rails;           /* the rails, rails.rail[0] the NIC */
  enum ho_gid_type gid_type;       /* of the device's GID */
  bool scoped;                     /* tokens name a memory window per
                                      transfer; false: the buffer's MR */
};

struct ho_instance {
  atomic_uint refs;
  struct ho_platform plat;
  struct ho_options opts;
  struct ho_config config; /* what init chose (hipObjGetInfo) */
  struct ho_stats stats;    /* atomic counters */
  struct ho_device *dev;
  struct ho_pool *pool;     /* rail 0's */
  struct ho_railset rails;  /* every rail open: rail 0 is dev and pool */
  struct ho_buffers *buffers;
  struct ho_abandoned *abandoned;
};

/* Build and publish an instance. The platform and options are copied. */
hipObjOpError_t ho_init_with(const struct ho_platform *plat,
                             const struct ho_options *opts,
                             const hipObjConfig_t *cfg, int *native);

/* Unpublish the current instance and close its pool. */
hipObjOpError_t ho_shutdown(void);

/* A reference to the current instance, or NULL. Release it with
 * ho_instance_put() before returning from the public call. */
struct ho_instance *ho_instance_get(void);
void ho_instance_put(struct ho_instance *inst);

#endif
