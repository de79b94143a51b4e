/* SPDX-License-Identifier: MIT */
#include "stats.h"

static void add(atomic_uint_fast64_t *c, uint64_t n)
{
  atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

static uint64_t get(atomic_uint_fast64_t *c)
{
  return atomic_load_explicit(c, memory_order_relaxed);
}

void ho_stats_transfer(struct ho_stats *s, int op, uint64_t size,
                       hipObjOpError_t e)
{
  add(&s->transfers, 1);
  if (e != hipObjSuccess) {
    unsigned i = (unsigned)e;
    if (i >= HIPOBJ_INFO_MAX_ERRORS)
      i = HIPOBJ_INFO_MAX_ERRORS - 1;
    add(&s->failures[i], 1);
    return;
  }
  add(&s->succeeded, 1);
  add(op == HIPOBJ_RDMA_OP_GET ? &s->bytes_get : &s->bytes_put, size);
}

void ho_stats_retry(struct ho_stats *s, enum ho_retry_cause why)
{
  if (why >= 0 && why < HO_RETRY_CAUSES)
    add(&s->retries[why], 1);
}

void ho_stats_deadline_moves(struct ho_stats *s, unsigned n)
{
  if (n)
    add(&s->deadline_moves, n);
}

void ho_stats_read(struct ho_stats *s, hipObjInfo_t *out)
{
  out->deadlinesMoved = get(&s->deadline_moves);
  out->transfers = get(&s->transfers);
  out->transfersSucceeded = get(&s->succeeded);
  out->bytesGet = get(&s->bytes_get);
  out->bytesPut = get(&s->bytes_put);
  for (unsigned i = 0; i < HIPOBJ_INFO_MAX_ERRORS; i++)
    out->failures[i] = get(&s->failures[i]);
  out->retriesFabric = get(&s->retries[HO_RETRY_FABRIC]);
  out->retriesServerRdma = get(&s->retries[HO_RETRY_SERVER]);
  out->retriesStalled = get(&s->retries[HO_RETRY_STALLED]);
  out->retriesKeptBroken = get(&s->retries[HO_RETRY_KEPT_BROKEN]);
}
