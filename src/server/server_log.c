/* SPDX-License-Identifier: MIT */
/* hipObjServerSetLogCallback(): the server library's warnings to the
 * application instead of stderr. The library's copy of the logger
 * (src/common/log.c, hidden in libhipobj_server.so) is process-wide; this
 * file hands it a trampoline and owns the target it calls. */
#include <stdlib.h>

#include "common/thread_safety.h"
#include "hipobj.h"
#include "hipobj_server.h"

struct log_target {
  hipObjServerLogFn fn;
  void *ctx;
};

/* Held across the logger's wait for the old callback's calls: a callback
 * never takes it (it gets Busy first). */
static ho_mutex set_mu = HO_MUTEX_INIT;
static struct log_target *cur HO_GUARDED_GLOBAL(set_mu);
static _Thread_local unsigned in_callback;

_Static_assert((int)hipObjServerLogWarning == (int)hipObjLogWarning &&
                   (int)hipObjServerLogDebug == (int)hipObjLogDebug,
               "the levels are the logger's");

static void trampoline(void *ctx, hipObjLogLevel_t level, const char *message)
{
  struct log_target *t = ctx;
  in_callback++;
  t->fn(t->ctx, (hipObjServerLogLevel_t)level, message);
  in_callback--;
}

hipObjServerStatus_t hipObjServerSetLogCallback(hipObjServerLogFn fn,
                                                void *ctx)
{
  if (in_callback)
    return hipObjServerBusy; /* it would wait for its own return */
  struct log_target *t = NULL;
  if (fn) {
    t = malloc(sizeof *t);
    if (!t)
      return hipObjServerNoMemory;
    t->fn = fn;
    t->ctx = ctx;
  }
  ho_mutex_lock(&set_mu);
  /* returns once every call of the previous target has returned */
  hipObjSetLogCallback(t ? trampoline : NULL, t);
  struct log_target *old = cur;
  cur = t;
  ho_mutex_unlock(&set_mu);
  free(old);
  return hipObjServerSuccess;
}
