/* SPDX-License-Identifier: MIT */
/* The request target: splitting it into path and query, strict percent
 * decoding, bucket and key extraction, query parameters, and the AWS flavour
 * of percent encoding. Pure functions; outputs written only on success. */
#ifndef HS_URI_H
#define HS_URI_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "err.h"
#include "s3_limits.h"

#define HS_QUERY_MAX 64

struct hs_span {
  const char *p;
  size_t len;
};

/* Splits an origin-form target ("/path?query") at the first '?'. The query
 * never belongs to the path. False for an empty target, one that does not
 * start with '/', or one with a fragment, a NUL, a control character or a
 * space. */
bool hs_target_split(const char *t, size_t len, struct hs_span *path,
                     struct hs_span *query);

/* Percent-decodes in[0, len) into out (cap bytes, NUL-terminated). Every '%'
 * must be followed by two hex digits; a decoded NUL is refused. With
 * plus_is_space, '+' decodes to ' ' (query strings). The result must be
 * valid UTF-8. False on any of these, or if it does not fit. */
bool hs_pct_decode(const char *in, size_t len, bool plus_is_space, char *out,
                   size_t cap, size_t *outlen);

bool hs_utf8_valid(const char *s, size_t len);

/* S3 bucket names: 3..63 of [a-z0-9.-], starting and ending with a letter or
 * a digit, no "..", not an IPv4 address. */
bool hs_bucket_name_valid(const char *name);

/* "/", "/bucket", "/bucket/", "/bucket/key...": the bucket (decoded, not
 * validated) and the key (decoded, NUL-terminated, possibly empty). Errors:
 * HS_ERR_INVALID_URI (bad escape, NUL, invalid UTF-8, a C1 control
 * character in the key, bucket too long),
 * HS_ERR_KEY_TOO_LONG (over HS_KEY_MAX bytes decoded). */
enum hs_err hs_path_parse(const char *path, size_t len,
                          char bucket[HS_BUCKET_MAX + 1],
                          char key[HS_KEY_MAX + 1], size_t *keylen);

struct hs_param {
  const char *name;  /* decoded, NUL-terminated */
  const char *value; /* decoded, NUL-terminated; "" when absent */
  bool has_value;    /* "name=value" or "name=" as opposed to "name" */
};

struct hs_query {
  struct hs_param p[HS_QUERY_MAX];
  size_t n;
  char *arena; /* owns the strings */
};

/* Parses "a=b&c&d=" (decoded, '+' as space). Empty parameters ("&&") are
 * skipped. Errors: HS_ERR_INVALID_URI (bad escape), HS_ERR_INVALID_ARGUMENT
 * (more than HS_QUERY_MAX parameters, or an empty name), HS_ERR_NOMEM. */
enum hs_err hs_query_parse(const char *q, size_t len, struct hs_query *out);
void hs_query_free(struct hs_query *q);
/* The first parameter with this exact name, or NULL. */
const struct hs_param *hs_query_get(const struct hs_query *q, const char *name);

/* Appends s percent-encoded as SigV4 wants it: A-Z a-z 0-9 - _ . ~ kept,
 * '/' kept if keep_slash, every other byte %XX with upper-case hex. */
bool hs_uri_encode(struct hs_buf *out, const char *s, size_t len,
                   bool keep_slash);

#endif
