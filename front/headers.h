/* SPDX-License-Identifier: MIT */
/* A request's header fields as received: names and values are borrowed
 * (from the HTTP library) for the life of the request. */
#ifndef HS_HEADERS_H
#define HS_HEADERS_H

#include <stdbool.h>
#include <stddef.h>

struct hs_kv {
  const char *name;
  const char *value;
};

struct hs_headers {
  const struct hs_kv *v;
  size_t n;
};

/* The value of the first field named `name` (case-insensitive), or NULL. */
const char *hs_header_get(const struct hs_headers *h, const char *name);
/* How many fields are named `name`. */
size_t hs_header_count(const struct hs_headers *h, const char *name);
/* Whether `name` is a field name as RFC 9110 defines it: one or more
 * token characters (tchar: ALPHA, DIGIT and !#$%&'*+-.^_`|~), nothing
 * else: no blank before the colon, no folded line, no control byte. */
bool hs_header_name_ok(const char *name);
/* The first field of h whose name is not a token, or NULL. */
const char *hs_headers_bad_name(const struct hs_headers *h);

#endif
