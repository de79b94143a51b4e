/* SPDX-License-Identifier: MIT */
#include "instance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "memlock.h"
#include "common/thread_safety.h"
#include "rdma/select.h"

/* Lock order: init_mu, then cur_lock. */
static ho_mutex init_mu = HO_MUTEX_INIT;
static ho_rwlock cur_lock HO_ACQUIRED_AFTER(init_mu) = HO_RWLOCK_INIT;
static struct ho_instance *cur HO_GUARDED_GLOBAL(cur_lock);

/* A transfer's connection: 8 send and 8 receive WRs. With windows the peer
 * may read and write through the QP, and each window limits it to one
 * transfer's range and direction. Without them the QP grants nothing
 * until a transfer grants its direction (ho_conn_set_access, hipobj.c). */
static struct ho_conn_attr client_conn_attr(bool scoped)
{
  return (struct ho_conn_attr){
      .max_send_wr = 8,
      .max_recv_wr = 8,
      .qp_access =
          scoped ? IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE : 0};
}

/* How long a retired QP is kept before it is destroyed: longer than the
 * peer's retry budget (docs/protocol.md, section 7), so that its late
 * packets and retransmissions die at a QP in ERR. */
#define HO_RETIRE_GRACE_MS 2000u

static void instance_destroy(struct ho_instance *inst)
{
  /* Reverse order of construction: copies, buffers, rails, pool, device. */
  ho_abandoned_destroy(inst->abandoned);
  ho_buffers_destroy(inst->buffers);
  ho_railset_destroy(&inst->rails);
  ho_pool_destroy(inst->pool);
  ho_device_close(inst->dev);
  free(inst);
}

struct ho_instance *ho_instance_get(void)
{
  ho_rdlock(&cur_lock);
  struct ho_instance *inst = cur;
  if (inst)
    atomic_fetch_add(&inst->refs, 1);
  ho_rdunlock(&cur_lock);
  return inst;
}

void ho_instance_put(struct ho_instance *inst)
{
  if (inst && atomic_fetch_sub(&inst->refs, 1) == 1)
    instance_destroy(inst);
}

static hipObjOpError_t resolve_gpu(const struct ho_platform *p,
                                   const hipObjConfig_t *cfg,
                                   struct ho_config *c, int *native)
{
  int count = 0, dev = cfg->gpuDevice;
  c->gpu = -1;
  c->gpu_bus_id[0] = '\0';
  if (p->gpu->device_count(&count, native) != hipObjSuccess || count <= 0)
    return hipObjSuccess; /* no GPU: acceptable with a hint */
  if (dev == -1 && p->gpu->current_device(&dev, native) != hipObjSuccess)
    return hipObjInvalidValue;
  if (dev < 0 || dev >= count)
    return hipObjInvalidValue;
  c->gpu = dev;
  if (p->gpu->pci_bus_id(dev, c->gpu_bus_id, sizeof c->gpu_bus_id, native) !=
      hipObjSuccess)
    c->gpu_bus_id[0] = '\0';
  return hipObjSuccess;
}

/* The rails and the NIC init opens (src/rails.h), from the topology. */
static hipObjOpError_t choose_nic(const struct ho_platform *p,
                                  const struct ho_options *o,
                                  const hipObjConfig_t *cfg, struct ho_config *c)
{
  static _Thread_local struct ho_nic_info nics[HO_MAX_NICS];
  static _Thread_local struct ho_pci_info gpus[HO_MAX_GPUS];
  const struct ho_topology *t = p->topo;
  size_t n = 0, n_gpus = 0;
  if (t->ops->list_nics(t, nics, HO_MAX_NICS, &n) != hipObjSuccess)
    n = 0;
  struct ho_pci_info gpu;
  memset(&gpu, 0, sizeof gpu);
  gpu.numa_node = -1;
  if (c->gpu >= 0) {
    if (t->ops->pci_device(t, c->gpu_bus_id, &gpu) != hipObjSuccess) {
      memset(&gpu, 0, sizeof gpu); /* its place is unknown */
      gpu.numa_node = -1;
    }
    memcpy(gpu.bus_id, c->gpu_bus_id, sizeof gpu.bus_id);
    if (t->ops->list_gpus(t, gpus, HO_MAX_GPUS, &n_gpus) != hipObjSuccess)
      n_gpus = 0;
  }
  struct ho_rails_in in = {
      .nics = nics,
      .n = n,
      .gpu = c->gpu >= 0 ? &gpu : NULL,
      .gpus = gpus,
      .n_gpus = n_gpus,
      .cpu_numa_node = c->gpu >= 0 ? -1 : t->ops->cpu_numa_node(t),
      .hint = cfg->nicHint,
      .first_active = cfg->flags & HIPOBJ_INIT_FIRST_ACTIVE_NIC,
      .max_rails = o->max_rails,
  };
  hipObjOpError_t e = ho_choose_rails(&in, &c->rails, c->nic, &c->nic_choice);
  if (e == hipObjSuccess && c->gpu >= 0 && c->rails.near == 0 &&
      c->rails.rail[0].why != HO_RAIL_HINT)
    ho_debug("GPU %s: no NIC's place in the PCI tree is known: using %s, "
             "the closest by bus id", c->gpu_bus_id, c->nic);
  else if (e == hipObjSuccess && c->gpu >= 0 &&
           c->rails.near_class == HO_PATH_OTHER)
    ho_warn("GPU %s has no NIC on its NUMA node: its rails, from %s, cross "
            "to another node", c->gpu_bus_id, c->nic);
  else if (e == hipObjSuccess && c->gpu >= 0 &&
           c->rails.near_class == HO_PATH_NUMA)
    ho_debug("GPU %s has no NIC below its host bridge: its rails, from %s, "
             "are on another host bridge of its NUMA node",
             c->gpu_bus_id, c->nic);
  return e;
}

/* Windows where the NIC binds them (and HIPOBJ_SCOPED_TOKENS is on), else
 * the buffer's MR with one warning, or a failure under
 * HIPOBJ_REQUIRE_SCOPED_TOKENS. */
static hipObjOpError_t choose_token_scope(struct ho_instance *inst)
{
  const struct ho_options *o = &inst->opts;
  inst->config.scoped = o->scoped_tokens && inst->dev->mw_type2;
  if (inst->config.scoped)
    return hipObjSuccess;
  const char *why = o->scoped_tokens ? "cannot bind type-2 memory windows"
                                     : "HIPOBJ_SCOPED_TOKENS is off";
  if (o->require_scoped_tokens) {
    ho_warn("%s %s, and HIPOBJ_REQUIRE_SCOPED_TOKENS requires them",
            inst->dev->name, why);
    return hipObjNotSupported;
  }
  ho_warn("%s: %s: RDMA tokens grant the whole registered buffer",
          inst->dev->name, why);
  return hipObjSuccess;
}

/* The rails that will carry transfers: those chosen (HIPOBJ_MAX_RAILS
 * is applied by the choice). */
static unsigned rails_chosen(const struct ho_rails *r)
{
  return r->count ? (unsigned)r->count : 1;
}

/* The connections' QPs at their most (every link of every rail connected,
 * with its spare) must fit under RLIMIT_MEMLOCK beside what is pinned. */
static hipObjOpError_t check_memlock(const struct ho_platform *plat,
                                     unsigned links, unsigned rails)
{
  char what[128];
  snprintf(what, sizeof what,
           "hipObjInit (%u connections on each of %u rail%s: %u QPs' "
           "message areas)",
           links, rails, rails == 1 ? "" : "s", 2 * links * rails);
  return ho_memlock_check(plat->topo, ho_memlock_conns(2 * links * rails),
                          what);
}

/* Rails 1 and on: a device and a pool each, as rail 0's, and the buffer
 * map told of their devices (it registers there on first use). Scoped
 * tokens need windows on every rail: a rail whose NIC cannot bind them is
 * left out. */
static void open_other_rails(struct ho_instance *inst,
                             const struct ho_conn_attr *attr,
                             const struct ho_pool_config *pool)
{
  const struct ho_railset_config cfg = {
      .attr = attr,
      .pool = pool,
      .spin_us = inst->opts.spin_us,
      .need_windows = inst->config.scoped,
      .failback_ms = inst->opts.failback_ms,
  };
  ho_railset_open(&inst->rails, &inst->plat, &inst->config.rails, inst->dev,
                  inst->pool, &cfg);
  for (unsigned i = 1; i < inst->rails.n; i++)
    ho_buffers_set_rail(inst->buffers, i, inst->rails.rail[i].dev);
}

static hipObjOpError_t build(const struct ho_platform *plat,
                             const struct ho_options *opts,
                             const hipObjConfig_t *cfg,
                             struct ho_instance **out, int *native)
{
  struct ho_instance *inst = calloc(1, sizeof *inst);
  if (!inst)
    return hipObjInternalError;
  atomic_init(&inst->refs, 1);
  inst->plat = *plat;
  inst->opts = *opts;
  hipObjOpError_t e = resolve_gpu(plat, cfg, &inst->config, native);
  if (e == hipObjSuccess)
    e = choose_nic(plat, opts, cfg, &inst->config);
  if (e == hipObjSuccess)
    e = ho_device_open(plat->verbs, plat->topo, inst->config.nic, &inst->dev);
  if (e == hipObjSuccess)
    ho_device_set_spin(inst->dev, opts->spin_us);
  if (e == hipObjSuccess)
    inst->config.gid_type = plat->topo->ops->gid_type(
        plat->topo, inst->dev->name, inst->dev->port, inst->dev->gid_index);
  if (e == hipObjSuccess)
    e = choose_token_scope(inst);
  unsigned links = opts->max_connections ? opts->max_connections
                                         : 2 * opts->max_transfers;
  if (links < opts->max_transfers)
    links = opts->max_transfers;
  const struct ho_pool_config pool_cfg = {
      .max_leases = opts->max_transfers,
      .max_connections = links,
      .idle_timeout_ms = opts->idle_timeout_ms,
      .wait_timeout_ms = opts->wait_timeout_ms,
      .grace_ms = HO_RETIRE_GRACE_MS};
  if (e == hipObjSuccess)
    e = check_memlock(plat, links, rails_chosen(&inst->config.rails));
  const struct ho_conn_attr attr = client_conn_attr(inst->config.scoped);
  if (e == hipObjSuccess)
    e = ho_pool_create(inst->dev, &attr, &pool_cfg, &inst->pool);
  if (e == hipObjSuccess)
    e = ho_buffers_create(&inst->plat, inst->dev, opts, inst->config.scoped,
                          &inst->buffers);
  if (e == hipObjSuccess)
    open_other_rails(inst, &attr, &pool_cfg);
  if (e == hipObjSuccess)
    e = ho_abandoned_create(plat->gpu, &inst->abandoned);
  if (e != hipObjSuccess) {
    instance_destroy(inst);
    return e;
  }
  *out = inst;
  return hipObjSuccess;
}

hipObjOpError_t ho_init_with(const struct ho_platform *plat,
                             const struct ho_options *opts,
                             const hipObjConfig_t *cfg, int *native)
{
  if (!plat->verbs)
    return hipObjNicNotFound;
  ho_mutex_lock(&init_mu);
  ho_rdlock(&cur_lock);
  bool up = cur != NULL;
  ho_rdunlock(&cur_lock);
  struct ho_instance *inst = NULL;
  hipObjOpError_t e = up ? hipObjAlreadyInitialized
                         : build(plat, opts, cfg, &inst, native);
  if (e == hipObjSuccess) {
    ho_log_set_debug(opts->rdma_debug);
    ho_wrlock(&cur_lock);
    cur = inst;
    ho_wrunlock(&cur_lock);
  }
  ho_mutex_unlock(&init_mu);
  return e;
}

hipObjOpError_t ho_shutdown(void)
{
  ho_mutex_lock(&init_mu);
  ho_wrlock(&cur_lock);
  struct ho_instance *inst = cur;
  cur = NULL;
  ho_wrunlock(&cur_lock);
  if (inst) {
    ho_pool_close(inst->pool);
    ho_railset_close(&inst->rails);
  }
  ho_mutex_unlock(&init_mu);
  if (!inst)
    return hipObjNotInitialized;
  ho_instance_put(inst); /* the reference the publication held */
  return hipObjSuccess;
}
