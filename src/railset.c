/* SPDX-License-Identifier: MIT */
#include "railset.h"

#include <string.h>

#include "common/log.h"

static void rail_init(struct ho_rail_rt *r, struct ho_device *dev,
                      struct ho_pool *pool, bool owned)
{
  r->dev = dev;
  r->pool = pool;
  r->owned = owned;
  atomic_init(&r->in_flight, 0);
  atomic_init(&r->in_flight_bytes, 0);
  atomic_init(&r->down, false);
  atomic_init(&r->down_ns, 0);
  atomic_init(&r->marks, 0);
  atomic_init(&r->bytes, 0);
  atomic_init(&r->transfers, 0);
  atomic_init(&r->failures, 0);
}

static bool open_rail(struct ho_rail_rt *r, const struct ho_platform *plat,
                      const char *name, const struct ho_railset_config *cfg)
{
  struct ho_device *dev = NULL;
  struct ho_pool *pool = NULL;
  hipObjOpError_t e = ho_device_open(plat->verbs, plat->topo, name, &dev);
  if (e != hipObjSuccess)
    goto fail;
  if (cfg->need_windows && !dev->mw_type2) {
    ho_warn("rail %s cannot bind type-2 memory windows, which scoped "
            "tokens need: left out", name);
    goto close_dev;
  }
  ho_device_set_spin(dev, cfg->spin_us);
  e = ho_pool_create(dev, cfg->attr, cfg->pool, &pool);
  if (e != hipObjSuccess)
    goto fail;
  rail_init(r, dev, pool, true);
  return true;
fail:
  ho_warn("rail %s does not open (error %d): left out", name, (int)e);
close_dev:
  ho_device_close(dev);
  return false;
}

void ho_railset_open(struct ho_railset *s, const struct ho_platform *plat,
                     const struct ho_rails *rails, struct ho_device *dev0,
                     struct ho_pool *pool0,
                     const struct ho_railset_config *cfg)
{
  memset(s, 0, sizeof *s);
  atomic_init(&s->cursor, 0);
  s->failback_ns = (uint64_t)cfg->failback_ms * 1000000u;
  rail_init(&s->rail[0], dev0, pool0, false);
  s->n = 1;
  for (size_t i = 1; i < rails->count && s->n < HO_MAX_RAILS; i++)
    if (open_rail(&s->rail[s->n], plat, rails->rail[i].name, cfg))
      s->n++;
}

void ho_railset_close(struct ho_railset *s)
{
  for (unsigned i = 1; i < s->n; i++)
    ho_pool_close(s->rail[i].pool);
}

void ho_railset_destroy(struct ho_railset *s)
{
  for (unsigned i = 0; i < s->n; i++) {
    struct ho_rail_rt *r = &s->rail[i];
    if (!r->owned)
      continue;
    ho_pool_destroy(r->pool);
    ho_device_close(r->dev);
    r->pool = NULL;
    r->dev = NULL;
  }
  s->n = 0;
}

/* What is in flight on rail r, in bytes (railset.h, HO_RAIL_XFER_COST). */
static uint64_t load_of(struct ho_rail_rt *r)
{
  return atomic_load(&r->in_flight_bytes) +
         (uint64_t)atomic_load(&r->in_flight) * HO_RAIL_XFER_COST;
}

/* Among the rails in `allowed` (bit i: rail i), the least loaded,
 * starting the scan at the round-robin cursor; -1 if none. */
static int least_loaded(struct ho_railset *s, uint32_t allowed)
{
  unsigned start = atomic_fetch_add(&s->cursor, 1) % s->n;
  int best = -1;
  uint64_t best_load = 0;
  for (unsigned k = 0; k < s->n; k++) {
    unsigned i = (start + k) % s->n;
    if (!((allowed >> i) & 1u))
      continue;
    uint64_t load = load_of(&s->rail[i]);
    if (best < 0 || load < best_load) {
      best = (int)i;
      best_load = load;
    }
  }
  return best;
}

static uint32_t all_rails(const struct ho_railset *s)
{
  return s->n >= 32 ? UINT32_MAX : (1u << s->n) - 1u;
}

static unsigned placed(struct ho_railset *s, unsigned i, uint64_t size)
{
  atomic_fetch_add(&s->rail[i].in_flight_bytes, size);
  atomic_fetch_add(&s->rail[i].in_flight, 1);
  atomic_fetch_add_explicit(&s->rail[i].transfers, 1, memory_order_relaxed);
  return i;
}

/* The rails not marked down. */
static uint32_t up_rails(struct ho_railset *s)
{
  uint32_t m = 0;
  for (unsigned i = 0; i < s->n; i++)
    if (!atomic_load(&s->rail[i].down))
      m |= 1u << i;
  return m;
}

/* Whether rail i is down and its failback delay has passed. */
static bool probe_due(struct ho_railset *s, unsigned i, uint64_t now_ns,
                      uint64_t *since)
{
  struct ho_rail_rt *r = &s->rail[i];
  *since = atomic_load(&r->down_ns);
  return atomic_load(&r->down) && now_ns - *since >= s->failback_ns;
}

/* A down rail in `allowed` due for its probe, claimed (its clock restarts,
 * so the next transfer does not probe it too); -1 if none. */
static int claim_probe(struct ho_railset *s, uint32_t allowed,
                       uint64_t now_ns)
{
  for (unsigned i = 0; i < s->n; i++) {
    uint64_t since;
    if (((allowed >> i) & 1u) && probe_due(s, i, now_ns, &since) &&
        atomic_compare_exchange_strong(&s->rail[i].down_ns, &since, now_ns))
      return (int)i;
  }
  return -1;
}

static void clear_marks(struct ho_railset *s)
{
  bool any = false;
  for (unsigned i = 0; i < s->n; i++)
    any |= atomic_exchange(&s->rail[i].down, false);
  if (any)
    ho_warn("every rail is marked down: the marks are cleared");
}

unsigned ho_railset_pick(struct ho_railset *s, uint32_t tried, uint64_t size,
                         uint64_t now_ns)
{
  const uint32_t all = all_rails(s), fresh = all & ~tried;
  int i = tried ? -1 : claim_probe(s, all, now_ns); /* no retry probes */
  if (i < 0)
    i = least_loaded(s, fresh & up_rails(s));
  if (i < 0)
    i = least_loaded(s, all & up_rails(s));
  if (i < 0) {
    clear_marks(s);
    i = least_loaded(s, fresh ? fresh : all);
  }
  return placed(s, (unsigned)i, size);
}

bool ho_railset_untried(struct ho_railset *s, uint32_t tried)
{
  return (all_rails(s) & ~tried & up_rails(s)) != 0;
}

/* Why a failure marks its rail down; NULL: it does not. */
static const char *mark_reason(enum ho_retry_cause why)
{
  switch (why) {
  case HO_RETRY_FABRIC: return "an error completion or a failed connect";
  case HO_RETRY_STALLED: return "a stall";
  case HO_RETRY_SERVER: return "the server's RDMA failing on it";
  default: return NULL; /* an answer, a local error, a kept connection */
  }
}

static void mark_down(struct ho_railset *s, struct ho_rail_rt *r,
                      const char *reason, uint64_t now_ns)
{
  atomic_store(&r->down_ns, now_ns);
  if (atomic_exchange(&r->down, true))
    return; /* a failed probe, or a second failure of the same mark */
  atomic_fetch_add_explicit(&r->marks, 1, memory_order_relaxed);
  ho_warn("rail %s marked down after %s: probed again in %llu ms",
          r->dev->name, reason,
          (unsigned long long)(s->failback_ns / 1000000u));
}

void ho_railset_done(struct ho_railset *s, unsigned i, bool success,
                     uint64_t size, enum ho_retry_cause why,
                     uint64_t now_ns)
{
  if (i >= s->n)
    return;
  struct ho_rail_rt *r = &s->rail[i];
  atomic_fetch_sub(&r->in_flight, 1);
  atomic_fetch_sub(&r->in_flight_bytes, size);
  if (success) {
    atomic_fetch_add_explicit(&r->bytes, size, memory_order_relaxed);
    if (atomic_exchange(&r->down, false))
      ho_warn("rail %s is back up", r->dev->name);
    return;
  }
  atomic_fetch_add_explicit(&r->failures, 1, memory_order_relaxed);
  const char *reason = mark_reason(why);
  if (reason && s->n > 1)
    mark_down(s, r, reason, now_ns);
}

static void add_pool_stats(struct ho_pool_stats *t,
                           const struct ho_pool_stats *p)
{
  t->connections_made += p->connections_made;
  t->connections_reused += p->connections_reused;
  t->retired_failure += p->retired_failure;
  t->retired_idle += p->retired_idle;
  t->retired_evicted += p->retired_evicted;
  t->retired_replaced += p->retired_replaced;
  t->retired_one_shot += p->retired_one_shot;
  t->kept_broken += p->kept_broken;
  t->data_first += p->data_first;
  t->qp_transitions += p->qp_transitions;
  t->windows_bound += p->windows_bound;
  t->live += p->live;
  t->idle += p->idle;
  t->retired_waiting += p->retired_waiting;
}

void ho_railset_pool_stats(struct ho_railset *s, struct ho_pool_stats *out)
{
  memset(out, 0, sizeof *out);
  for (unsigned i = 0; i < s->n; i++) {
    struct ho_pool_stats p;
    ho_pool_get_stats(s->rail[i].pool, &p);
    add_pool_stats(out, &p);
  }
}

uint64_t ho_railset_probes(struct ho_railset *s, bool failed)
{
  uint64_t n = 0;
  for (unsigned i = 0; i < s->n; i++)
    n += atomic_load(failed ? &s->rail[i].dev->probes_failed
                            : &s->rail[i].dev->probes);
  return n;
}
