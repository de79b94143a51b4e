/* SPDX-License-Identifier: MIT */
/* The servers' diagnostics that no response carries (a store that stopped
 * in the middle of a transfer): one line on stderr, "hipobj: warning: " first, as
 * the library's own (src/common/log.c) by default. The servers do not
 * link the library's internals, so they do not share its log state. */
#ifndef HS_LOG_H
#define HS_LOG_H

void hs_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
