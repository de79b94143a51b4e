/* SPDX-License-Identifier: MIT */
#include "common/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_bool debug_on;
static atomic_bool quiet;

void ho_log_set_quiet(bool on) { atomic_store(&quiet, on); }

void ho_log_set_debug(bool on) { atomic_store(&debug_on, on); }
bool ho_log_debug_enabled(void) { return atomic_load(&debug_on); }

static void vlog(const char *level, const char *fmt, va_list ap)
{
  char line[512];
  vsnprintf(line, sizeof line, fmt, ap);
  fprintf(stderr, "hipobj: %s%s\n", level, line);
}

void ho_warn(const char *fmt, ...)
{
  if (atomic_load(&quiet))
    return;
  va_list ap;
  va_start(ap, fmt);
  vlog("warning: ", fmt, ap);
  va_end(ap);
}

void ho_debug(const char *fmt, ...)
{
  if (!ho_log_debug_enabled())
    return;
  va_list ap;
  va_start(ap, fmt);
  vlog("debug: ", fmt, ap);
  va_end(ap);
}
