/* SPDX-License-Identifier: MIT */
/* Diagnostics. The library prints nothing on success. ho_warn() is for the
 * few events the API cannot report (a staging fallback, an error
 * completion's status); ho_debug() prints only with HIPOBJ_RDMA_DEBUG. Both
 * go to the application's log callback, or else to stderr with the
 * "hipobj: " prefix. */
#ifndef HO_COMMON_LOG_H
#define HO_COMMON_LOG_H

#include <stdbool.h>

#include "hipobj.h"

void ho_log_set_debug(bool on);
/* Silences ho_warn() too (fuzzers, tests of hostile input). */
void ho_log_set_quiet(bool on);
bool ho_log_debug_enabled(void);
void ho_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ho_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
