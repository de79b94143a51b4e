/* SPDX-License-Identifier: MIT */
/* The platform: the library's only routes to the outside world. */
#ifndef HO_PLATFORM_PLATFORM_H
#define HO_PLATFORM_PLATFORM_H

#include "platform/gpu.h"
#include "platform/topology.h"
#include "platform/verbs.h"

struct ho_platform {
  const struct ho_verbs_ops *verbs; /* NULL: no libibverbs */
  const struct ho_gpu_ops *gpu;     /* never NULL: ho_gpu_none_ops at least */
  const struct ho_topology *topo;
};

/* The production platform, built on first use and never destroyed.
 * gpu_runtime is HIPOBJ_GPU_RUNTIME: "auto", "hip", "cuda" or "none". */
hipObjOpError_t ho_platform_system(const char *gpu_runtime,
                                   const struct ho_platform **out);

#endif
