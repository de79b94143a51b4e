/* SPDX-License-Identifier: MIT */
/* Transfer handles of include/hipobj_server.h, and the engine's callbacks
 * that drive them. A handle has two references: the caller's (dropped by
 * hipObjServerTransferRelease) and the engine's (dropped after the done
 * callback); it is freed when both are gone. */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "common/clock.h"
#include "server_internal.h"

hipObjServerTransfer_t *ho_xfer_new(hipObjServer_t *srv,
                                    const hipObjServerRequest_t *req, int refs)
{
  hipObjServerTransfer_t *x = calloc(1, sizeof *x);
  if (!x)
    return NULL;
  x->srv = srv;
  x->mem = req->mem;
  x->mem_offset = req->memOffset;
  x->op = (int)req->op;
  x->length = req->length;
  x->read = req->read;
  x->write = req->write;
  x->commit = req->commit;
  x->io_arg = req->ioArg;
  x->done = req->done;
  x->done_arg = req->doneArg;
  atomic_init(&x->refs, refs);
  atomic_init(&x->cancel, false);
  ho_mutex_init(&x->mu);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&x->ended_cv, &ca);
  pthread_condattr_destroy(&ca);
  x->status = hipObjServerPending; /* the memory's use is the caller's */
  return x;
}

static void xfer_free(hipObjServerTransfer_t *x)
{
  pthread_cond_destroy(&x->ended_cv);
  ho_mutex_destroy(&x->mu);
  free(x);
}

static void unref(hipObjServerTransfer_t *x)
{
  if (atomic_fetch_sub(&x->refs, 1) == 1)
    xfer_free(x);
}

static void unuse_mem(hipObjServerTransfer_t *x)
{
  if (x->mem)
    atomic_fetch_sub(&x->mem->users, 1);
  x->mem = NULL;
}

void ho_xfer_discard(hipObjServerTransfer_t *x)
{
  unuse_mem(x);
  xfer_free(x);
}

/* ---- the engine's callbacks, on its thread -------------------------------- */

static int io_read(void *ctx, uint64_t off, void *buf, size_t n)
{
  hipObjServerTransfer_t *x = ctx;
  if (atomic_load(&x->cancel))
    return -1;
  return x->read(x->io_arg, off, buf, n) == 0 ? 0 : -1;
}

static int io_write(void *ctx, uint64_t off, const void *buf, size_t n)
{
  hipObjServerTransfer_t *x = ctx;
  if (atomic_load(&x->cancel))
    return -1;
  return x->write(x->io_arg, off, buf, n) == 0 ? 0 : -1;
}

/* A PUT's commit, before the final goes out; nothing to do otherwise (the
 * outcome is reported by xfer_done). */
static int io_finish(void *ctx, int status, uint64_t bytes)
{
  hipObjServerTransfer_t *x = ctx;
  if (x->op != hipObjServerOpPut || status != HO_FINAL_OK)
    return 0;
  if (bytes != x->length || atomic_load(&x->cancel))
    return -1;
  return !x->commit || x->commit(x->io_arg, bytes) == 0 ? 0 : -1;
}

static hipObjServerStatus_t outcome_status(const struct ho_engine_outcome *o)
{
  if (o->status == HO_FINAL_OK && o->final_ok)
    return hipObjServerSuccess;
  if (o->cancelled)
    return hipObjServerCancelled;
  if (o->timed_out)
    return hipObjServerTimedOut;
  switch (o->status) {
  case HO_FINAL_BAD_COOKIE:
  case HO_FINAL_BAD_REQUEST: return hipObjServerProtocolError;
  case HO_FINAL_STORE_ERROR: return hipObjServerIoError;
  default: return hipObjServerRdmaError;
  }
}

static void xfer_done(void *ctx, const struct ho_engine_outcome *o)
{
  hipObjServerTransfer_t *x = ctx;
  hipObjServerStatus_t st = outcome_status(o);
  if (st == hipObjServerCancelled)
    atomic_fetch_add(&x->srv->cancelled, 1);
  unuse_mem(x);
  /* The callback first: once Poll or Wait see the end, the callback has
   * returned and the caller may free what it uses. */
  if (x->done)
    x->done(x, st, o->bytes, x->done_arg);
  ho_mutex_lock(&x->mu);
  x->ended = true;
  x->status = st;
  x->bytes = o->bytes;
  pthread_cond_broadcast(&x->ended_cv);
  ho_mutex_unlock(&x->mu);
  unref(x);
}

void ho_xfer_engine_io(hipObjServerTransfer_t *x, struct ho_engine_io *io,
                       struct ho_engine_xfer_opts *xo, uint32_t engine)
{
  *io = (struct ho_engine_io){io_read, io_write, io_finish, x};
  *xo = (struct ho_engine_xfer_opts){NULL, 0, &x->cancel, xfer_done};
  if (x->mem) {
    xo->base = x->mem->addr + x->mem_offset;
    xo->lkey = x->mem->lkeys[engine];
  }
}

/* ---- the caller's side ------------------------------------------------------ */

static hipObjServerStatus_t result(hipObjServerTransfer_t *x, uint64_t *bytes)
    HO_REQUIRES(x->mu)
{
  if (bytes && x->ended)
    *bytes = x->bytes;
  return x->ended ? x->status : hipObjServerPending;
}

hipObjServerStatus_t hipObjServerTransferPoll(const hipObjServerTransfer_t *cx,
                                              uint64_t *bytes)
{
  if (!cx)
    return hipObjServerInvalidValue;
  hipObjServerTransfer_t *x = (hipObjServerTransfer_t *)cx;
  ho_mutex_lock(&x->mu);
  hipObjServerStatus_t st = result(x, bytes);
  ho_mutex_unlock(&x->mu);
  return st;
}

static struct timespec deadline(uint32_t ms)
{
  uint64_t t = ho_now_ns() + (uint64_t)ms * 1000000u;
  return (struct timespec){(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
}

hipObjServerStatus_t hipObjServerTransferWait(const hipObjServerTransfer_t *cx,
                                              uint32_t timeoutMs,
                                              uint64_t *bytes)
{
  if (!cx)
    return hipObjServerInvalidValue;
  hipObjServerTransfer_t *x = (hipObjServerTransfer_t *)cx;
  struct timespec until = deadline(timeoutMs);
  ho_mutex_lock(&x->mu);
  while (!x->ended && timeoutMs > 0) {
    if (timeoutMs == UINT32_MAX)
      ho_cond_wait(&x->ended_cv, &x->mu);
    else if (ho_cond_timedwait(&x->ended_cv, &x->mu, &until) == ETIMEDOUT)
      break;
  }
  hipObjServerStatus_t st = result(x, bytes);
  ho_mutex_unlock(&x->mu);
  return st;
}

hipObjServerStatus_t hipObjServerTransferCancel(hipObjServerTransfer_t *x)
{
  if (!x)
    return hipObjServerInvalidValue;
  atomic_store(&x->cancel, true);
  return hipObjServerSuccess;
}

void hipObjServerTransferRelease(hipObjServerTransfer_t *x)
{
  if (x)
    unref(x);
}
