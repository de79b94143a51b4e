/* SPDX-License-Identifier: MIT */
#include "rdma/pool.h"

#include <stdlib.h>

#include "common/thread_safety.h"

struct ho_pool {
  struct ho_device *dev;
  struct ho_conn_attr attr;
  unsigned nslots;
  /* Slot i belongs to whoever holds its lease, or to the free list. */
  struct ho_conn **slots;
  ho_mutex mu;
  pthread_cond_t cv;
  unsigned *free_list HO_PT_GUARDED_BY(mu);
  unsigned nfree HO_GUARDED_BY(mu);
  unsigned live HO_GUARDED_BY(mu);
  bool closed HO_GUARDED_BY(mu);
};

static _Thread_local unsigned leases_held;

hipObjOpError_t ho_pool_create(struct ho_device *d, const struct ho_conn_attr *a,
                               unsigned n, struct ho_pool **out)
{
  struct ho_pool *p = calloc(1, sizeof *p);
  if (!p)
    return hipObjInternalError;
  p->dev = d;
  p->attr = *a;
  p->slots = calloc(n, sizeof *p->slots);
  p->free_list = calloc(n, sizeof *p->free_list);
  ho_mutex_init(&p->mu);
  pthread_cond_init(&p->cv, NULL);
  if (!p->slots || !p->free_list) {
    ho_pool_destroy(p);
    return hipObjInternalError;
  }
  for (unsigned i = 0; i < n; i++) {
    hipObjOpError_t e = ho_conn_create(d, a, &p->slots[i]);
    if (e != hipObjSuccess) {
      ho_pool_destroy(p);
      return e;
    }
    p->nslots = i + 1;
    p->free_list[i] = i;
  }
  p->nfree = p->live = n;
  *out = p;
  return hipObjSuccess;
}

void ho_pool_destroy(struct ho_pool *p)
{
  if (!p)
    return;
  for (unsigned i = 0; i < p->nslots; i++)
    ho_conn_destroy(p->slots[i]);
  pthread_cond_destroy(&p->cv);
  ho_mutex_destroy(&p->mu);
  free(p->free_list);
  free(p->slots);
  free(p);
}

hipObjOpError_t ho_pool_acquire(struct ho_pool *p, bool wait, bool count,
                                struct ho_lease *out)
{
  hipObjOpError_t err = hipObjSuccess;
  ho_mutex_lock(&p->mu);
  for (;;) {
    if (p->closed) {
      err = hipObjNotInitialized;
      break;
    }
    if (p->live == 0) {
      err = hipObjRdmaError;
      break;
    }
    if (p->nfree > 0)
      break;
    if (!wait || leases_held > 0) {
      err = hipObjBusy;
      break;
    }
    ho_cond_wait(&p->cv, &p->mu);
  }
  if (err == hipObjSuccess) {
    unsigned slot = p->free_list[--p->nfree];
    *out = (struct ho_lease){p, slot, count, p->slots[slot]};
    if (count)
      leases_held++;
  }
  ho_mutex_unlock(&p->mu);
  return err;
}

/* Reset the slot's connection if it was used, or replace it; NULL when
 * both fail. A connection that failed is replaced, not reset: Soft-RoCE
 * was seen to keep a failed QP's state across RESET, failing every later
 * transfer on it. */
static struct ho_conn *recycle(struct ho_pool *p, struct ho_conn *c)
{
  if (c->state == HO_CONN_INIT && !c->dirty)
    return c;
  if (c->state != HO_CONN_BROKEN && ho_conn_reset(c) == hipObjSuccess)
    return c;
  ho_conn_destroy(c);
  struct ho_conn *fresh = NULL;
  if (ho_conn_create(p->dev, &p->attr, &fresh) != hipObjSuccess)
    return NULL;
  return fresh;
}

void ho_pool_release(struct ho_lease *l)
{
  struct ho_pool *p = l->pool;
  if (!p)
    return;
  struct ho_conn *c = recycle(p, l->conn);
  p->slots[l->slot] = c;
  ho_mutex_lock(&p->mu);
  if (c)
    p->free_list[p->nfree++] = l->slot;
  else
    p->live--;
  if (l->counted)
    leases_held--;
  pthread_cond_signal(&p->cv);
  if (p->live == 0)
    pthread_cond_broadcast(&p->cv);
  ho_mutex_unlock(&p->mu);
  l->pool = NULL;
  l->conn = NULL;
}

void ho_pool_close(struct ho_pool *p)
{
  ho_mutex_lock(&p->mu);
  p->closed = true;
  pthread_cond_broadcast(&p->cv);
  ho_mutex_unlock(&p->mu);
}

void ho_pool_counts(struct ho_pool *p, unsigned *live, unsigned *free_count)
{
  ho_mutex_lock(&p->mu);
  if (live)
    *live = p->live;
  if (free_count)
    *free_count = p->nfree;
  ho_mutex_unlock(&p->mu);
}
