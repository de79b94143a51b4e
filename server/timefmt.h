/* SPDX-License-Identifier: MIT */
/* The dates S3 writes (ISO 8601 in XML, IMF-fixdate in headers) and reads
 * (IMF-fixdate in conditional headers). Pure functions, in UTC. */
#ifndef HS_TIMEFMT_H
#define HS_TIMEFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "2026-01-31T12:00:00.000Z" */
void hs_time_iso8601(int64_t t, char out[32]);
/* "Sat, 31 Jan 2026 12:00:00 GMT", whatever the locale. */
void hs_time_http(int64_t t, char out[40]);
/* "Sun, 06 Nov 1994 08:49:37 GMT" only; false on anything else. */
bool hs_time_parse_http(const char *s, int64_t *out);

/* "2026-01-31T12:00:00Z", with or without a fraction of a second
 * (ignored), len bytes; false on anything else. */
bool hs_time_parse_iso8601(const char *s, size_t len, int64_t *out);

#endif
