/* SPDX-License-Identifier: MIT */
/* The Range request header (RFC 9110 section 14), as S3 serves it: one byte
 * range. Pure function, overflow-safe. */
#ifndef HS_RANGE_H
#define HS_RANGE_H

#include <stddef.h>
#include <stdint.h>

enum hs_range_result {
  HS_RANGE_IGNORE,        /* not a single byte range we honour: serve it all */
  HS_RANGE_OK,            /* serve [first, first + count) with 206 */
  HS_RANGE_UNSATISFIABLE  /* 416 InvalidRange */
};

/* Parses "bytes=a-b", "bytes=a-" or "bytes=-n" against an object of `size`
 * bytes. The unit is case-insensitive; blanks around the range are allowed.
 * A syntactically invalid header, another unit, or several ranges are
 * ignored (the whole object is served, as RFC 9110 allows). A last position
 * past the end, even one too large for 64 bits, is clamped to the end. A
 * first position at or past the end, "-0", and any range of an empty object
 * are unsatisfiable. first/count are written only for HS_RANGE_OK. */
enum hs_range_result hs_range_parse(const char *s, size_t len, uint64_t size,
                                    uint64_t *first, uint64_t *count);

#endif
