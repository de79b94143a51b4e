/* SPDX-License-Identifier: MIT */
#include "abandoned.h"

#include <stdlib.h>

#include "common/log.h"
#include "common/thread_safety.h"

struct ho_abandoned_slot {
  struct ho_abandoned_slot *next;
  struct ho_gpu_event *ev;
  struct ho_buf *buf;
};

/* Copies still running when their instance went away. They stay here for
 * the life of the process: the GPU may still write their staging buffers,
 * and a leak checker sees them as reachable, which they are on purpose. */
static ho_mutex graveyard_mu = HO_MUTEX_INIT;
static struct ho_abandoned_slot *graveyard HO_GUARDED_GLOBAL(graveyard_mu);

struct ho_abandoned {
  const struct ho_gpu_ops *gpu;
  ho_mutex mu;
  struct ho_abandoned_slot *copies HO_GUARDED_BY(mu);
  unsigned ncopies HO_GUARDED_BY(mu);
};

hipObjOpError_t ho_abandoned_create(const struct ho_gpu_ops *gpu,
                                    struct ho_abandoned **out)
{
  struct ho_abandoned *a = calloc(1, sizeof *a);
  if (!a)
    return hipObjInternalError;
  a->gpu = gpu;
  ho_mutex_init(&a->mu);
  *out = a;
  return hipObjSuccess;
}

hipObjOpError_t ho_abandoned_reserve(struct ho_abandoned *a,
                                     struct ho_abandoned_slot **out)
{
  (void)a;
  struct ho_abandoned_slot *s = calloc(1, sizeof *s);
  if (!s)
    return hipObjInternalError;
  *out = s;
  return hipObjSuccess;
}

void ho_abandoned_unreserve(struct ho_abandoned *a, struct ho_abandoned_slot *s)
{
  (void)a;
  free(s);
}

void ho_abandoned_add(struct ho_abandoned *a, struct ho_abandoned_slot *s,
                      struct ho_gpu_event *ev, struct ho_buf *b)
{
  ho_buf_get(b);
  atomic_fetch_add(&b->abandoned, 1);
  s->ev = ev;
  s->buf = b;
  ho_mutex_lock(&a->mu);
  s->next = a->copies;
  a->copies = s;
  a->ncopies++;
  ho_mutex_unlock(&a->mu);
}

/* Unlink the finished copies (of b, or all) into *done. Querying an event
 * does not wait. */
static void unlink_finished(struct ho_abandoned *a, struct ho_buf *b,
                            struct ho_abandoned_slot **done) HO_REQUIRES(a->mu)
{
  struct ho_abandoned_slot **pp = &a->copies;
  while (*pp) {
    struct ho_abandoned_slot *s = *pp;
    bool mine = !b || s->buf == b;
    if (mine && a->gpu->event_query(s->ev, NULL) != hipObjBusy) {
      *pp = s->next;
      a->ncopies--;
      s->next = *done;
      *done = s;
    } else {
      pp = &s->next;
    }
  }
}

static void release_list(struct ho_abandoned *a, struct ho_abandoned_slot *s)
{
  while (s) {
    struct ho_abandoned_slot *next = s->next;
    a->gpu->event_destroy(s->ev);
    atomic_fetch_sub(&s->buf->abandoned, 1);
    ho_buf_put(s->buf);
    free(s);
    s = next;
  }
}

void ho_abandoned_collect(struct ho_abandoned *a, struct ho_buf *b)
{
  struct ho_abandoned_slot *done = NULL;
  ho_mutex_lock(&a->mu);
  unlink_finished(a, b, &done);
  ho_mutex_unlock(&a->mu);
  release_list(a, done);
}

bool ho_abandoned_busy(struct ho_abandoned *a, struct ho_buf *b)
{
  if (atomic_load(&b->abandoned) == 0)
    return false;
  ho_abandoned_collect(a, b);
  return atomic_load(&b->abandoned) > 0;
}

unsigned ho_abandoned_count(struct ho_abandoned *a)
{
  ho_mutex_lock(&a->mu);
  unsigned n = a->ncopies;
  ho_mutex_unlock(&a->mu);
  return n;
}

void ho_abandoned_destroy(struct ho_abandoned *a)
{
  if (!a)
    return;
  ho_abandoned_collect(a, NULL);
  ho_mutex_lock(&a->mu);
  unsigned left = a->ncopies;
  struct ho_abandoned_slot *running = a->copies;
  a->copies = NULL;
  ho_mutex_unlock(&a->mu);
  /* Still running: the GPU may yet write the staging buffers, so their
   * events, entries and memory are leaked rather than freed under it. */
  while (running) {
    struct ho_abandoned_slot *next = running->next;
    ho_mutex_lock(&graveyard_mu);
    running->next = graveyard;
    graveyard = running;
    ho_mutex_unlock(&graveyard_mu);
    running = next;
  }
  if (left)
    ho_warn("%u staging copies still running at shutdown: their buffers are "
            "leaked on purpose", left);
  ho_mutex_destroy(&a->mu);
  free(a);
}
