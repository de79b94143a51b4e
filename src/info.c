/* SPDX-License-Identifier: MIT */
/* hipObjGetInfo(): what the current instance chose and counted. The struct
 * is filled whole here and copied out up to the caller's size, so a caller
 * built against an older header gets the fields it knows. */
#include "hipobj.h"

#include <stddef.h>
#include <string.h>

#include "instance.h"
#include "options.h"

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
_Static_assert(offsetof(hipObjInfo_t, railCount) == 576, "appended");
_Static_assert(offsetof(hipObjInfo_t, railsInUse) == 580, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, railNear) == 584, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, railGpus) == 588, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, railGpuIndex) == 592, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, railPathClass) == 596, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, rails) == 600, "hipObjInfo_t");
_Static_assert(sizeof(hipObjRailInfo_t) == 112, "hipObjRailInfo_t");
_Static_assert(offsetof(hipObjRailInfo_t, busId) == 64, "hipObjRailInfo_t");
_Static_assert(offsetof(hipObjRailInfo_t, numaNode) == 96, "hipObjRailInfo_t");
_Static_assert(offsetof(hipObjRailInfo_t, pathClass) == 100, "hipObjRailInfo_t");
_Static_assert(offsetof(hipObjRailInfo_t, why) == 104, "hipObjRailInfo_t");
_Static_assert(offsetof(hipObjRailInfo_t, rateMbps) == 108, "hipObjRailInfo_t");
_Static_assert(HIPOBJ_INFO_MAX_RAILS == HO_MAX_RAILS, "a slot per rail");
_Static_assert((int)HO_PATH_UNKNOWN == (int)hipObjPathUnknown &&
                   (int)HO_PATH_SWITCH == (int)hipObjPathSameSwitch &&
                   (int)HO_PATH_SWITCHES == (int)hipObjPathSwitches &&
                   (int)HO_PATH_ROOT_PORT == (int)hipObjPathRootPort &&
                   (int)HO_PATH_NUMA == (int)hipObjPathNumaNode &&
                   (int)HO_PATH_OTHER == (int)hipObjPathOther,
               "hipObjPathClass_t mirrors enum ho_path_class");
_Static_assert((int)HO_RAIL_NONE == (int)hipObjRailNone &&
                   (int)HO_RAIL_NEAR_GPU == (int)hipObjRailNearGpu &&
                   (int)HO_RAIL_NUMA_LOCAL == (int)hipObjRailNumaLocal &&
                   (int)HO_RAIL_HINT == (int)hipObjRailHint &&
                   (int)HO_RAIL_CLOSEST_BUS_ID == (int)hipObjRailClosestBusId &&
                   (int)HO_RAIL_FIRST_ACTIVE == (int)hipObjRailFirstActive,
               "hipObjRailWhy_t mirrors enum ho_rail_why");
_Static_assert(offsetof(hipObjInfo_t, retriesFabric) == 2392, "appended");
_Static_assert(offsetof(hipObjInfo_t, retriesServerRdma) == 2400, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, retriesStalled) == 2408, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, retriesKeptBroken) == 2416, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, keptBroken) == 2424, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, retries) == 2432, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, stallTimeoutMs) == 2436, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, transfersDataFirst) == 2440, "appended");
_Static_assert(offsetof(hipObjInfo_t, dataFirst) == 2448, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, probeIntervalMs) == 2452, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, probesSent) == 2456, "appended");
_Static_assert(offsetof(hipObjInfo_t, probesFailed) == 2464, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, railStats) == 2472, "appended");
_Static_assert(sizeof(hipObjRailStats_t) == 40, "hipObjRailStats_t");
_Static_assert(offsetof(hipObjRailStats_t, transfers) == 8, "hipObjRailStats_t");
_Static_assert(offsetof(hipObjRailStats_t, failures) == 16, "hipObjRailStats_t");
_Static_assert(offsetof(hipObjRailStats_t, marksDown) == 24, "hipObjRailStats_t");
_Static_assert(offsetof(hipObjRailStats_t, inFlight) == 32, "hipObjRailStats_t");
_Static_assert(offsetof(hipObjRailStats_t, state) == 36, "hipObjRailStats_t");
_Static_assert(offsetof(hipObjInfo_t, deadlinesMoved) == 3112, "appended");
_Static_assert(offsetof(hipObjInfo_t, transferTimeoutMs) == 3120, "hipObjInfo_t");
_Static_assert(offsetof(hipObjInfo_t, transferMaxMs) == 3124, "hipObjInfo_t");
_Static_assert(sizeof(hipObjInfo_t) == 3128, "hipObjInfo_t");
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

/* The counters of the rails open, at the index of the chosen rail each
 * is (a rail that did not open leaves a gap). */
static void fill_rail_stats(struct ho_railset *s, const struct ho_rails *r,
                            hipObjInfo_t *o)
{
  for (unsigned k = 0; k < s->n; k++) {
    struct ho_rail_rt *rt = &s->rail[k];
    for (size_t i = 0; i < r->count && i < HIPOBJ_INFO_MAX_RAILS; i++) {
      if (strcmp(r->rail[i].name, rt->dev->name) != 0)
        continue;
      hipObjRailStats_t *x = &o->railStats[i];
      x->bytes = atomic_load_explicit(&rt->bytes, memory_order_relaxed);
      x->transfers = atomic_load_explicit(&rt->transfers, memory_order_relaxed);
      x->failures = atomic_load_explicit(&rt->failures, memory_order_relaxed);
      x->marksDown = atomic_load_explicit(&rt->marks, memory_order_relaxed);
      x->inFlight = atomic_load(&rt->in_flight);
      x->state = atomic_load(&rt->down) ? hipObjRailDown : hipObjRailUp;
      break;
    }
  }
}

static void fill_rails(const struct ho_rails *r, unsigned in_use,
                       hipObjInfo_t *o)
{
  o->railCount = (uint32_t)r->count;
  o->railsInUse = in_use;
  o->railNear = r->near;
  o->railGpus = r->gpus;
  o->railGpuIndex = r->gpu_index;
  o->railPathClass = (int32_t)r->near_class;
  for (size_t i = 0; i < r->count && i < HIPOBJ_INFO_MAX_RAILS; i++) {
    hipObjRailInfo_t *x = &o->rails[i];
    copy_str(x->name, sizeof x->name, r->rail[i].name, sizeof r->rail[i].name);
    copy_str(x->busId, sizeof x->busId, r->rail[i].bus_id,
             sizeof r->rail[i].bus_id);
    x->numaNode = r->rail[i].numa_node;
    x->pathClass = (int32_t)r->rail[i].path;
    x->why = (int32_t)r->rail[i].why;
    x->rateMbps = r->rail[i].rate_mbps;
  }
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
  ho_railset_pool_stats(&inst->rails, &p);
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
  fill_rails(&c->rails, inst->rails.n, o);
  fill_rail_stats(&inst->rails, &c->rails, o);
  o->keptBroken = p.kept_broken;
  o->retries = inst->opts.retries;
  o->stallTimeoutMs = inst->opts.stall_timeout_ms;
  o->transfersDataFirst = p.data_first;
  o->dataFirst = inst->opts.data_first ? 1u : 0u;
  o->probeIntervalMs = inst->opts.probe_interval_ms;
  o->probesSent = ho_railset_probes(&inst->rails, false);
  o->probesFailed = ho_railset_probes(&inst->rails, true);
  o->transferTimeoutMs = inst->opts.transfer_timeout_ms;
  o->transferMaxMs = inst->opts.transfer_max_ms;
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

hipObjError_t hipObjGetEnvVar(uint32_t index, const char **name,
                              const char **defaultText)
{
  hipObjError_t r = {hipObjInvalidValue, 0};
  if (name && defaultText && ho_options_var(index, name, defaultText))
    r.opError = hipObjSuccess;
  return r;
}
