/* SPDX-License-Identifier: MIT */
#include "rdma/pool.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/thread_safety.h"
#include "rdma/vendor.h"

#define MS 1000000ull

struct ho_pool {
  struct ho_device *dev;
  uint64_t grace_ns; /* retired QPs wait this long (ho_retire_grace_ns) */
  struct ho_conn_attr attr;
  struct ho_pool_config cfg;
  ho_mutex mu;
  pthread_cond_t cv;
  /* A link belongs to whoever leases it, or to the pool while idle. */
  struct ho_link *links HO_PT_GUARDED_BY(mu);
  unsigned leases HO_GUARDED_BY(mu);
  bool closed HO_GUARDED_BY(mu);
  struct ho_retired retired HO_GUARDED_BY(mu);
  struct ho_pool_stats stats HO_GUARDED_BY(mu);
};

static _Thread_local unsigned leases_held;

enum retire_cause {
  CAUSE_FAILURE,
  CAUSE_IDLE,
  CAUSE_EVICTED,
  CAUSE_REPLACED,
  CAUSE_ONE_SHOT,
  CAUSE_BROKEN, /* a kept connection found in error before a transfer */
  CAUSE_SPARE /* a spare that a failed transfer named: not a connection */
};

static void count_retired(struct ho_pool *p, enum retire_cause why)
    HO_REQUIRES(p->mu)
{
  uint64_t *c[] = {&p->stats.retired_failure, &p->stats.retired_idle,
                   &p->stats.retired_evicted, &p->stats.retired_replaced,
                   &p->stats.retired_one_shot, &p->stats.kept_broken};
  if (why < CAUSE_SPARE)
    (*c[why])++;
}

/* Retire a QP outside the lock (a verbs call), then park it. */
static void retire(struct ho_pool *p, struct ho_conn *c, enum retire_cause why)
{
  if (!c)
    return;
  ho_conn_retire(c);
  ho_mutex_lock(&p->mu);
  ho_retired_add(&p->retired, c, ho_now_ns());
  count_retired(p, why);
  ho_mutex_unlock(&p->mu);
}

hipObjOpError_t ho_pool_create(struct ho_device *d, const struct ho_conn_attr *a,
                               const struct ho_pool_config *cfg,
                               struct ho_pool **out)
{
  struct ho_pool *p = calloc(1, sizeof *p);
  if (!p)
    return hipObjInternalError;
  p->dev = d;
  p->attr = *a;
  p->cfg = *cfg;
  p->grace_ns = ho_retire_grace_ns(ho_vendor_tuning(d->vendor_id),
                                   (uint64_t)cfg->grace_ms * MS);
  if (p->cfg.max_connections < p->cfg.max_leases)
    p->cfg.max_connections = p->cfg.max_leases;
  if (!p->cfg.wait_timeout_ms)
    p->cfg.wait_timeout_ms = 10000;
  ho_mutex_init(&p->mu);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* as ho_now_ns() */
  pthread_cond_init(&p->cv, &ca);
  pthread_condattr_destroy(&ca);
  p->links = calloc(p->cfg.max_connections, sizeof *p->links);
  if (!p->links) {
    ho_pool_destroy(p);
    return hipObjInternalError;
  }
  for (unsigned i = 0; i < p->cfg.max_leases; i++) {
    hipObjOpError_t e = ho_conn_create(d, a, &p->links[i].spare);
    if (e != hipObjSuccess) {
      ho_pool_destroy(p);
      return e;
    }
  }
  *out = p;
  return hipObjSuccess;
}

void ho_pool_destroy(struct ho_pool *p)
{
  if (!p)
    return;
  for (unsigned i = 0; p->links && i < p->cfg.max_connections; i++) {
    struct ho_link *l = &p->links[i];
    if (l->qp)
      ho_conn_retire(l->qp);
    ho_conn_destroy(l->qp);
    ho_conn_destroy(l->spare);
    if (l->mw && p->dev->v->dealloc_mw(l->mw) != 0)
      ho_warn("cannot free a memory window");
  }
  ho_conn_destroy_chain(ho_retired_take_expired(&p->retired, 0, 0));
  pthread_cond_destroy(&p->cv);
  ho_mutex_destroy(&p->mu);
  free(p->links);
  free(p);
}

static bool is_idle_conn(const struct ho_link *l)
{
  return !l->leased && l->qp;
}

/* The link for a transfer to `peer`: its most recently used idle
 * connection, else an empty link, else the least recently used idle
 * connection (to another peer: *evict). NULL when all are leased. */
static struct ho_link *choose(struct ho_pool *p, uint64_t peer, bool *evict)
    HO_REQUIRES(p->mu)
{
  struct ho_link *same = NULL, *empty = NULL, *oldest = NULL;
  for (unsigned i = 0; i < p->cfg.max_connections; i++) {
    struct ho_link *l = &p->links[i];
    if (l->leased)
      continue;
    if (!l->qp) {
      if (!empty || (l->spare && !empty->spare))
        empty = l;
    } else if (l->peer == peer) {
      if (!same || l->last_used_ns > same->last_used_ns)
        same = l;
    } else if (!oldest || l->last_used_ns < oldest->last_used_ns) {
      oldest = l;
    }
  }
  *evict = !same && !empty && oldest;
  return same ? same : empty ? empty : oldest;
}

/* Detach the QPs of idle connections unused for idle_timeout_ms; the
 * caller retires them outside the lock. Returns how many went to out. */
static unsigned take_idle(struct ho_pool *p, uint64_t now, struct ho_conn **out,
                          unsigned max) HO_REQUIRES(p->mu)
{
  unsigned n = 0;
  uint64_t limit = (uint64_t)p->cfg.idle_timeout_ms * MS;
  for (unsigned i = 0; i < p->cfg.max_connections && n < max; i++) {
    struct ho_link *l = &p->links[i];
    /* last_used_ns may be later than now: now was read before the lock */
    if (is_idle_conn(l) && limit && now > l->last_used_ns &&
        now - l->last_used_ns > limit) {
      out[n++] = l->qp;
      l->qp = NULL;
      l->id = 0;
    }
  }
  return n;
}

/* Bounded: a transfer that waits longer than wait_timeout_ms for a
 * connection gets hipObjBusy instead of waiting behind stuck ones. */
static hipObjOpError_t wait_for_link(struct ho_pool *p, bool wait, uint64_t now)
    HO_REQUIRES(p->mu)
{
  uint64_t deadline = now + (uint64_t)p->cfg.wait_timeout_ms * MS;
  struct timespec abs = {(time_t)(deadline / 1000000000u),
                         (long)(deadline % 1000000000u)};
  for (;;) {
    if (p->closed)
      return hipObjNotInitialized;
    if (p->leases < p->cfg.max_leases)
      return hipObjSuccess;
    if (!wait || leases_held > 0)
      return hipObjBusy;
    if (ho_cond_timedwait(&p->cv, &p->mu, &abs) == ETIMEDOUT && !p->closed &&
        p->leases >= p->cfg.max_leases)
      return hipObjBusy;
  }
}

/* Housekeeping outside the lock: destroy what waited out its grace, retire
 * what idled out. */
static void tidy(struct ho_pool *p, struct ho_conn *expired,
                 struct ho_conn **idle, unsigned nidle)
{
  ho_conn_destroy_chain(expired);
  for (unsigned i = 0; i < nidle; i++)
    retire(p, idle[i], CAUSE_IDLE);
}

#define IDLE_BATCH 8

hipObjOpError_t ho_pool_acquire(struct ho_pool *p, bool wait, bool count,
                                uint64_t peer, struct ho_lease *out)
{
  struct ho_conn *idle[IDLE_BATCH], *expired, *evicted = NULL;
  uint64_t now = ho_now_ns();
  bool evict = false;
  struct ho_link *l = NULL;
  ho_mutex_lock(&p->mu);
  hipObjOpError_t err = wait_for_link(p, wait, now);
  unsigned nidle = take_idle(p, now, idle, IDLE_BATCH);
  expired = ho_retired_take_expired(&p->retired, now, p->grace_ns);
  if (err == hipObjSuccess) {
    l = choose(p, peer, &evict);
    l->leased = true;
    p->leases++;
    if (count)
      leases_held++;
  if (evict) {
      evicted = l->qp;
      l->qp = NULL;
      l->id = 0;
    }
  }
  ho_mutex_unlock(&p->mu);
  tidy(p, expired, idle, nidle);
  retire(p, evicted, CAUSE_EVICTED);
  if (err != hipObjSuccess)
    return err;
  *out = (struct ho_lease){.pool = p, .link = l, .counted = count};
  if (!l->spare && ho_conn_create(p->dev, &p->attr, &l->spare) != hipObjSuccess) {
    ho_pool_release(out);
    return hipObjRdmaError;
  }
  if (!l->qp)
    l->peer = peer;
  return hipObjSuccess;
}

static void free_bound_window(struct ho_pool *p, struct ho_link *k);

struct ho_conn *ho_lease_kept(const struct ho_lease *l)
{
  const struct ho_link *k = l->link;
  return k->qp && k->persistent ? k->qp : NULL;
}

void ho_lease_drop_kept(struct ho_lease *l)
{
  struct ho_link *k = l->link;
  if (!k->qp)
    return;
  ho_warn("QP 0x%x: a kept connection is in error before its next transfer: "
          "replaced by a new one", k->qp->qp->qp_num);
  retire(l->pool, k->qp, CAUSE_BROKEN);
  k->qp = NULL;
  k->id = 0;
  free_bound_window(l->pool, k); /* after the retire, as at release */
}

bool ho_lease_check_kept(struct ho_lease *l)
{
  struct ho_conn *c = ho_lease_kept(l);
  if (!c || ho_conn_usable(c))
    return true;
  ho_lease_drop_kept(l);
  return false;
}

void ho_lease_count_data_first(struct ho_lease *l)
{
  ho_mutex_lock(&l->pool->mu);
  l->pool->stats.data_first++;
  l->pool->stats.connections_reused++; /* it rode a kept connection */
  ho_mutex_unlock(&l->pool->mu);
}

uint32_t ho_lease_token_qpn(const struct ho_lease *l)
{
  const struct ho_link *k = l->link;
  uint32_t qpn = k->spare->qp->qp_num & 0xffffff;
  if (k->qp && k->persistent)
    qpn |= (uint32_t)ho_conn_tag(k->id) << 24;
  return qpn;
}

static hipObjOpError_t connect_spare(struct ho_lease *l, const struct ho_token *srv,
                                     const struct ho_conn_offer *offer,
                                     uint64_t cookie)
{
  struct ho_link *k = l->link;
  struct ho_conn *old = k->qp;
  hipObjOpError_t e = ho_conn_connect(
      k->spare, srv, ho_psn_from_cookie(cookie, HO_PSN_CLIENT_TO_SERVER),
      ho_psn_from_cookie(cookie, HO_PSN_SERVER_TO_CLIENT));
  l->connect_failed = e != hipObjSuccess;
  k->qp = k->spare;
  k->spare = NULL;
  k->id = offer->conn_id;
  k->persistent = offer->version >= HO_PROTO_V2;
  retire(l->pool, old, CAUSE_REPLACED);
  ho_mutex_lock(&l->pool->mu);
  l->pool->stats.connections_made++;
  ho_mutex_unlock(&l->pool->mu);
  return e;
}

/* A window bound on the old connection before the request (data first)
 * moves to the new one: invalidated where it is, and bound again later
 * under the key the token named. */
static hipObjOpError_t unbind_for_move(struct ho_lease *l, uint64_t deadline_ns)
{
  struct ho_link *k = l->link;
  if (!k->mw_bound || k->mw_qp != k->qp)
    return hipObjSuccess;
  if (ho_conn_invalidate(k->qp, k->mw_rkey, deadline_ns) != hipObjSuccess) {
    l->move_failed = true; /* the window stays with the broken QP */
    return hipObjRdmaError;
  }
  k->mw_bound = false;
  k->mw_qp = NULL;
  k->mw_keep_key = true;
  return hipObjSuccess;
}

hipObjOpError_t ho_lease_connect(struct ho_lease *l, const struct ho_token *srv,
                                 const struct ho_conn_offer *offer,
                                 uint64_t cookie, uint64_t deadline_ns,
                                 struct ho_conn **out)
{
  struct ho_link *k = l->link;
  hipObjOpError_t e = hipObjSuccess;
  if (offer->reuse) {
    bool proposed = k->qp && k->persistent;
    if (!proposed || offer->conn_id != k->id ||
        ho_token_qpn(srv) != k->qp->peer_qpn) {
      ho_warn("the server offers a connection this client did not propose");
      return hipObjRdmaError;
    }
    ho_mutex_lock(&l->pool->mu);
    l->pool->stats.connections_reused++;
    ho_mutex_unlock(&l->pool->mu);
  } else {
    e = unbind_for_move(l, deadline_ns);
    if (e != hipObjSuccess)
      return e;
    e = connect_spare(l, srv, offer, cookie);
  }
  *out = k->qp;
  return e;
}

uint32_t ho_lease_next_qpn(struct ho_lease *l)
{
  struct ho_link *k = l->link;
  if (!k->persistent)
    return 0;
  if (!k->spare &&
      ho_conn_create(l->pool->dev, &l->pool->attr, &k->spare) != hipObjSuccess)
    return 0;
  return k->spare->qp->qp_num & 0xffffff;
}

uint32_t ho_lease_window_rkey(struct ho_lease *l)
{
  struct ho_link *k = l->link;
  if (!k->mw) {
    k->mw = l->pool->dev->v->alloc_mw(l->pool->dev->pd, IBV_MW_TYPE_2);
    if (!k->mw) {
      ho_warn("cannot allocate a memory window");
      return 0;
    }
    k->mw_rkey = k->mw->rkey;
  }
  return k->mw_bound || k->mw_keep_key ? k->mw_rkey : ibv_inc_rkey(k->mw_rkey);
}

/* Bind under the token's key (ho_lease_window_rkey), on c; wait for it
 * when deadline_ns is not 0. */
static hipObjOpError_t bind_window(struct ho_lease *l, struct ho_conn *c,
                                   struct ibv_mr *mr, uint64_t addr,
                                   uint64_t len, int access,
                                   uint64_t deadline_ns)
{
  struct ho_link *k = l->link;
  if (!k->mw)
    return hipObjRdmaError;
  uint32_t rkey = k->mw_keep_key ? k->mw_rkey : ibv_inc_rkey(k->mw_rkey);
  k->mw_keep_key = false;
  k->mw_rkey = rkey;
  k->mw_bound = true; /* until invalidated; a failed bind is freed too */
  k->mw_qp = c;
  ho_mutex_lock(&l->pool->mu);
  l->pool->stats.windows_bound++;
  ho_mutex_unlock(&l->pool->mu);
  hipObjOpError_t e =
      deadline_ns ? ho_conn_bind_window_now(c, k->mw, rkey, mr, addr, len,
                                            access, deadline_ns)
                  : ho_conn_bind_window(c, k->mw, rkey, mr, addr, len, access);
  /* The window's struct carries its current key: providers name the
   * window by it in the next bind (rxe passes mw->rkey to the kernel),
   * and only the consumer knows a type-2 bind's new key. */
  k->mw->rkey = rkey;
  return e;
}

hipObjOpError_t ho_lease_bind_window(struct ho_lease *l, struct ho_conn *c,
                                     struct ibv_mr *mr, uint64_t addr,
                                     uint64_t len, int access)
{
  struct ho_link *k = l->link;
  if (k->mw_bound) /* bound before the request: on c, or it cannot be used */
    return k->mw_qp == c ? hipObjSuccess : hipObjRdmaError;
  return bind_window(l, c, mr, addr, len, access, 0);
}

hipObjOpError_t ho_lease_prebind_window(struct ho_lease *l, struct ibv_mr *mr,
                                        uint64_t addr, uint64_t len,
                                        int access, uint64_t deadline_ns)
{
  struct ho_conn *c = ho_lease_kept(l);
  if (!c || l->link->mw_bound || !ho_lease_window_rkey(l))
    return hipObjRdmaError;
  return bind_window(l, c, mr, addr, len, access, deadline_ns);
}

hipObjOpError_t ho_lease_close_window(struct ho_lease *l, struct ho_conn *c,
                                      uint64_t deadline_ns)
{
  struct ho_link *k = l->link;
  if (!k->mw_bound)
    return hipObjSuccess;
  if (ho_conn_invalidate(c, k->mw_rkey, deadline_ns) != hipObjSuccess)
    return hipObjRdmaError;
  k->mw_bound = false;
  k->mw_qp = NULL;
  return hipObjSuccess;
}

/* A window still bound when its lease ends: the transfer failed, its QP is
 * retired (ERR, so nothing reaches the window through it), and freeing
 * the window invalidates it. The next transfer makes a new one. */
static void free_bound_window(struct ho_pool *p, struct ho_link *k)
{
  k->mw_keep_key = false; /* invalidated to move, never bound again */
  if (!k->mw_bound)
    return;
  if (p->dev->v->dealloc_mw(k->mw) != 0)
    ho_warn("cannot free a memory window");
  k->mw = NULL;
  k->mw_bound = false;
  k->mw_qp = NULL;
}

void ho_pool_release(struct ho_lease *l)
{
  struct ho_pool *p = l->pool;
  if (!p)
    return;
  struct ho_link *k = l->link;
  if (k->mw_bound)
    l->failed = true; /* the transfer ended without closing its window */
  if (l->failed || (k->qp && !k->persistent)) {
    retire(p, k->qp, l->failed ? CAUSE_FAILURE : CAUSE_ONE_SHOT);
    k->qp = NULL;
    k->id = 0;
  }
  if (l->failed) {
    retire(p, k->spare, CAUSE_SPARE); /* named in a token: never reused */
    k->spare = NULL;
  }
  free_bound_window(p, k);
  k->last_used_ns = ho_now_ns();
  ho_mutex_lock(&p->mu);
  k->leased = false;
  p->leases--;
  if (l->counted)
    leases_held--;
  pthread_cond_signal(&p->cv);
  ho_mutex_unlock(&p->mu);
  l->pool = NULL;
  l->link = NULL;
}

void ho_pool_close(struct ho_pool *p)
{
  ho_mutex_lock(&p->mu);
  p->closed = true;
  pthread_cond_broadcast(&p->cv);
  ho_mutex_unlock(&p->mu);
}

void ho_pool_get_stats(struct ho_pool *p, struct ho_pool_stats *out)
{
  ho_mutex_lock(&p->mu);
  *out = p->stats;
  out->live = out->idle = 0;
  for (unsigned i = 0; i < p->cfg.max_connections; i++) {
    out->live += p->links[i].qp != NULL;
    out->idle += is_idle_conn(&p->links[i]);
  }
  out->retired_waiting = p->retired.count;
  ho_mutex_unlock(&p->mu);
  out->qp_transitions =
      atomic_load_explicit(&p->dev->qp_transitions, memory_order_relaxed);
}
