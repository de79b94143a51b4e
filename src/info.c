/* SPDX-License-Identifier: MIT */
/* hipObjGetInfo(): what the current instance chose and counted. The struct
 * is filled whole here and copied out up to the caller's size, so a caller
 * built against an older header gets the fields it knows. */
#include "hipobj.h"

#include <stddef.h>
#include <string.h>

#include "instance.h"

/* hipObjInfo_t is ABI: these pin the layout of its first version. A field
 * added later goes after `failures` and gets its own assertion here. */
#define HO_INFO_SIZE_0 488u
_Static_assert(offsetof(hipObjInfo_t, size) == 0, "size first");
_Static_assert(offsetof(hipObjInfo_t, gpuBusId) == 28, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, nicName) == 60, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, gid) == 172, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, maxTransfers) == 196, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, transfers) == 200, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, failures) == 232, "hipObjInfo_t");
_Static_assert(sizeof(hipObjInfo_t) >= HO_INFO_SIZE_0, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, connectionsMade) == HO_INFO_SIZE_0,
               "appended after failures");
_Static_assert(offsetof(hipObjInfo_t, connectionsLive) == 552, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, tokenScope) == 560, "appended");
_Static_assert(offsetof(hipObjInfo_t, waitTimeoutMs) == 564, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, windowsBound) == 568, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, retriesFabric) == 576, "appended");
_Static_assert(offsetof(hipObjInfo_t, retriesServerRdma) == 584, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, retriesStalled) == 592, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, retriesKeptBroken) == 600, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, keptBroken) == 608, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, retries) == 616, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, stallTimeoutMs) == 620, "hipObjInfo_t");
_Static_assert(sizeof(hipObjInfo_t) == 624, "hipObjInfo_t");
_Static_assert(HIPOBJ_INFO_MAX_ERRORS > hipObjBusy, "a failure slot per code");
_Static_assert((int)HO_GID_IB == (int)hipObjGidIb &&
                   (int)HO_GID_ROCE_V1 == (int)hipObjGidRoceV1 &&
                   (int)HO_GID_ROCE_V2 == (int)hipObjGidRoceV2 &&
                   (int)HO_GID_UNKNOWN == (int)hipObjGidUnknown,
               "hipObjGidType_t mirrors enum ho_gid_type");

static int32_t runtime_of(const struct ho_gpu_ops *gpu)
{
  if (!strcmp(gpu->name, "none"))
    return hipObjGpuRuntimeNone;
  if (!strcmp(gpu->name, "hip"))
    return hipObjGpuRuntimeHip;
  if (!strcmp(gpu->name, "cuda"))
    return hipObjGpuRuntimeCuda;
  return hipObjGpuRuntimeOther;
}

static uint32_t reg_modes(const struct ho_instance *inst)
{
  uint32_t m = HIPOBJ_REG_HOST;
  if (inst->config.gpu < 0)
    return m;
  m |= HIPOBJ_REG_PLAIN;
  if (inst->opts.dmabuf && inst->plat.verbs->reg_dmabuf_mr)
    m |= HIPOBJ_REG_DMABUF;
  if (!inst->opts.require_gpu_direct)
    m |= HIPOBJ_REG_STAGED;
  return m;
}

/* Fixed-size strings of the instance into the struct's, always terminated. */
static void copy_str(char *dst, size_t cap, const char *src, size_t src_cap)
{
  size_t n = strnlen(src, src_cap);
  if (n >= cap)
    n = cap - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

static void fill(struct ho_instance *inst, hipObjInfo_t *o)
{
  const struct ho_config *c = &inst->config;
  o->initialized = 1;
  o->gpuRuntime = runtime_of(inst->plat.gpu);
  o->gpuDevice = c->gpu;
  copy_str(o->gpuBusId, sizeof o->gpuBusId, c->gpu_bus_id,
           sizeof c->gpu_bus_id);
  copy_str(o->nicName, sizeof o->nicName, c->nic, sizeof c->nic);
  copy_str(o->nicBusId, sizeof o->nicBusId, c->nic_choice.bus_id,
           sizeof c->nic_choice.bus_id);
  o->nicNumaNode = c->nic_choice.numa_node;
  o->nicChoice = c->nic_choice.why;
  o->port = inst->dev->port;
  o->gidIndex = inst->dev->gid_index;
  memcpy(o->gid, inst->dev->gid.raw, sizeof o->gid);
  o->gidType = (int32_t)c->gid_type; /* the same values */
  o->regModes = reg_modes(inst);
  o->maxTransfers = inst->opts.max_transfers;
  ho_stats_read(&inst->stats, o);
  struct ho_pool_stats p;
  ho_pool_get_stats(inst->pool, &p);
  o->connectionsMade = p.connections_made;
  o->connectionsReused = p.connections_reused;
  o->retiredFailure = p.retired_failure;
  o->retiredIdle = p.retired_idle;
  o->retiredEvicted = p.retired_evicted;
  o->retiredReplaced = p.retired_replaced;
  o->retiredOneShot = p.retired_one_shot;
  o->qpTransitions = p.qp_transitions;
  o->connectionsLive = p.live;
  o->connectionsIdle = p.idle;
  o->tokenScope = inst->config.scoped ? hipObjTokenScopeWindow
                                      : hipObjTokenScopeBuffer;
  o->waitTimeoutMs = inst->opts.wait_timeout_ms;
  o->windowsBound = p.windows_bound;
  o->keptBroken = p.kept_broken;
  o->retries = inst->opts.retries;
  o->stallTimeoutMs = inst->opts.stall_timeout_ms;
}

hipObjError_t hipObjGetInfo(hipObjInfo_t *info)
{
  hipObjError_t r = {hipObjInvalidValue, 0};
  if (!info || info->size < HO_INFO_SIZE_0)
    return r;
  hipObjInfo_t all;
  memset(&all, 0, sizeof all);
  all.versionMajor = HIPOBJ_VERSION_MAJOR;
  all.versionMinor = HIPOBJ_VERSION_MINOR;
  all.versionPatch = HIPOBJ_VERSION_PATCH;
  all.gpuDevice = -1;
  all.gidIndex = -1;
  all.nicNumaNode = -1;
  struct ho_instance *inst = ho_instance_get();
  if (inst) {
    fill(inst, &all);
    ho_instance_put(inst);
  }
  size_t n = info->size < sizeof all ? info->size : sizeof all;
  all.size = (uint32_t)n;
  memcpy(info, &all, n);
  r.opError = hipObjSuccess;
  return r;
}
