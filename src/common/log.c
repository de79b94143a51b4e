/* SPDX-License-Identifier: MIT */
/* The library's single logging module: every warning and debug line goes
 * through emit(), to the application's callback (hipObjSetLogCallback) or,
 * by default, to stderr with the "hipobj: " prefix.
 *
 * The callback is called without any lock of this file held. log_mu guards
 * the callback and the count of calls running in each epoch; replacing the
 * callback starts a new epoch and waits until the calls of the old one have
 * returned, so that when hipObjSetLogCallback() returns, the old callback
 * and its context are no longer used. hipObjSetLogCallback() is defined
 * here, not in hipobj.c, because the callback is this module's state and
 * it needs no instance. log_mu is a leaf lock: ho_warn() may
 * run under any other lock, and nothing is taken while log_mu is held. */
#include "common/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

#include "common/thread_safety.h"

static atomic_bool debug_on;
static atomic_bool quiet;

static ho_mutex log_mu = HO_MUTEX_INIT;
static pthread_cond_t log_idle = PTHREAD_COND_INITIALIZER;
static hipObjLogCallback_t log_fn HO_GUARDED_GLOBAL(log_mu);
static void *log_ctx HO_GUARDED_GLOBAL(log_mu);
static unsigned log_epoch HO_GUARDED_GLOBAL(log_mu);
static unsigned log_running[2] HO_GUARDED_GLOBAL(log_mu); /* by epoch & 1 */
static _Thread_local unsigned in_callback; /* this thread's nesting depth */

void ho_log_set_quiet(bool on) { atomic_store(&quiet, on); }

void ho_log_set_debug(bool on) { atomic_store(&debug_on, on); }
bool ho_log_debug_enabled(void) { return atomic_load(&debug_on); }

hipObjError_t hipObjSetLogCallback(hipObjLogCallback_t fn, void *ctx)
{
  hipObjError_t busy = {hipObjBusy, 0}, ok = {hipObjSuccess, 0};
  if (in_callback)
    return busy; /* it would wait for its own return */
  ho_mutex_lock(&log_mu);
  const unsigned old = log_epoch & 1u;
  log_fn = fn;
  log_ctx = fn ? ctx : NULL;
  log_epoch++;
  while (log_running[old] != 0)
    ho_cond_wait(&log_idle, &log_mu);
  ho_mutex_unlock(&log_mu);
  return ok;
}

static void call_callback(hipObjLogLevel_t level, const char *line)
{
  ho_mutex_lock(&log_mu);
  hipObjLogCallback_t fn = log_fn;
  void *ctx = log_ctx;
  const unsigned epoch = log_epoch & 1u;
  if (fn)
    log_running[epoch]++;
  ho_mutex_unlock(&log_mu);
  if (!fn) {
    fprintf(stderr, "hipobj: %s%s\n",
            level == hipObjLogWarning ? "warning: " : "debug: ", line);
    return;
  }
  in_callback++;
  fn(ctx, level, line);
  in_callback--;
  ho_mutex_lock(&log_mu);
  if (--log_running[epoch] == 0)
    pthread_cond_broadcast(&log_idle);
  ho_mutex_unlock(&log_mu);
}

static void emit(hipObjLogLevel_t level, const char *fmt, va_list ap)
{
  char line[512];
  vsnprintf(line, sizeof line, fmt, ap);
  call_callback(level, line);
}

void ho_warn(const char *fmt, ...)
{
  if (atomic_load(&quiet))
    return;
  va_list ap;
  va_start(ap, fmt);
  emit(hipObjLogWarning, fmt, ap);
  va_end(ap);
}

void ho_debug(const char *fmt, ...)
{
  if (!ho_log_debug_enabled())
    return;
  va_list ap;
  va_start(ap, fmt);
  emit(hipObjLogDebug, fmt, ap);
  va_end(ap);
}
