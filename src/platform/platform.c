/* SPDX-License-Identifier: MIT */
/* The production platform: libibverbs through dlopen, the GPU runtime that
 * HIPOBJ_GPU_RUNTIME names, and sysfs. One platform per runtime choice, each
 * built on first use and never destroyed, so that what they loaded stays
 * loaded for the life of the process. */
#include "platform/platform.h"

#include <stdbool.h>
#include <strings.h>

#include "common/log.h"
#include "common/thread_safety.h"

enum runtime_choice { RT_AUTO, RT_HIP, RT_CUDA, RT_NONE, RT_COUNT };

static const char *const runtime_names[RT_COUNT] = {"auto", "hip", "cuda",
                                                    "none"};

static ho_mutex plat_lock = HO_MUTEX_INIT;
static struct ho_platform plats[RT_COUNT] HO_GUARDED_BY(plat_lock);
static hipObjOpError_t plat_err[RT_COUNT] HO_GUARDED_BY(plat_lock);
static bool plat_built[RT_COUNT] HO_GUARDED_BY(plat_lock);
static struct ho_topology topo HO_GUARDED_BY(plat_lock);
static hipObjOpError_t topo_err HO_GUARDED_BY(plat_lock);
static bool topo_built HO_GUARDED_BY(plat_lock);

static bool parse_choice(const char *s, enum runtime_choice *out)
{
  if (!s || !*s) {
    *out = RT_AUTO;
    return true;
  }
  for (int i = 0; i < RT_COUNT; i++) {
    if (strcasecmp(s, runtime_names[i]) == 0) {
      *out = (enum runtime_choice)i;
      return true;
    }
  }
  return false;
}

/* A runtime counts for "auto" if its library loads and reports a device. */
static bool has_device(hipObjOpError_t (*load)(const struct ho_gpu_ops **),
                       const struct ho_gpu_ops **gpu)
{
  int count = 0;
  return load(gpu) == hipObjSuccess &&
         (*gpu)->device_count(&count, NULL) == hipObjSuccess && count > 0;
}

static hipObjOpError_t choose_gpu(enum runtime_choice c,
                                  const struct ho_gpu_ops **gpu)
{
  switch (c) {
  case RT_HIP:
    return ho_gpu_hip_load(gpu);
  case RT_CUDA:
    return ho_gpu_cuda_load(gpu);
  case RT_NONE:
    *gpu = &ho_gpu_none_ops;
    return hipObjSuccess;
  default:
    if (!has_device(ho_gpu_hip_load, gpu) && !has_device(ho_gpu_cuda_load, gpu))
      *gpu = &ho_gpu_none_ops;
    ho_debug("GPU runtime: %s", (*gpu)->name);
    return hipObjSuccess;
  }
}

static hipObjOpError_t build(enum runtime_choice c) HO_REQUIRES(plat_lock)
{
  const struct ho_gpu_ops *gpu = NULL;
  if (!topo_built) {
    topo_err = ho_topology_sysfs_init(&topo, NULL);
    topo_built = true;
  }
  if (topo_err != hipObjSuccess)
    return topo_err;
  hipObjOpError_t e = choose_gpu(c, &gpu);
  if (e != hipObjSuccess)
    return e;
  plats[c].verbs = ho_verbs_system();
  plats[c].gpu = gpu;
  plats[c].topo = &topo;
  return hipObjSuccess;
}

hipObjOpError_t ho_platform_system(const char *gpu_runtime,
                                   const struct ho_platform **out)
{
  enum runtime_choice c = RT_AUTO;
  if (!out || !parse_choice(gpu_runtime, &c))
    return hipObjInvalidValue;
  ho_mutex_lock(&plat_lock);
  if (!plat_built[c]) {
    plat_err[c] = build(c);
    plat_built[c] = true;
  }
  hipObjOpError_t e = plat_err[c];
  const struct ho_platform *p = &plats[c];
  ho_mutex_unlock(&plat_lock);
  if (e == hipObjSuccess)
    *out = p;
  return e;
}
