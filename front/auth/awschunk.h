/* SPDX-License-Identifier: MIT */
/* The aws-chunked content encoding (x-amz-content-sha256: STREAMING-...):
 *   hex-size[;chunk-signature=<64 hex>] CRLF data CRLF ... 0[;...] CRLF
 *   trailer-field CRLF ... CRLF
 * A push parser: feed it the body as it arrives; it hands out the decoded
 * payload and reports each chunk's end with its signature. Pure: no
 * allocation, no I/O. */
#ifndef HS_AWSCHUNK_H
#define HS_AWSCHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define HS_AWSCHUNK_LINE_MAX 512

struct hs_awschunk_cbs {
  void *ctx;
  enum hs_err (*data)(void *ctx, const char *p, size_t n);
  /* After a chunk's data (also for the last, empty chunk). sig is the
   * chunk-signature's 64 hex digits, or NULL if the chunk had none. */
  enum hs_err (*chunk_end)(void *ctx, uint64_t size, const char *sig);
  /* One trailer field, "name:value" without CRLF. May be NULL. */
  enum hs_err (*trailer)(void *ctx, const char *line, size_t n);
};

struct hs_awschunk {
  int state;
  uint64_t remaining; /* of the current chunk's data */
  uint64_t size;      /* of the current chunk */
  uint64_t total;     /* decoded so far */
  char line[HS_AWSCHUNK_LINE_MAX];
  size_t line_len;
  char sig[65];
  bool has_sig;
};

void hs_awschunk_init(struct hs_awschunk *c);
/* Errors: HS_ERR_INVALID_ARGUMENT for malformed framing, or whatever a
 * callback returned. After an error the parser stays failed. */
enum hs_err hs_awschunk_feed(struct hs_awschunk *c, const char *in, size_t n,
                             const struct hs_awschunk_cbs *cbs);
/* Whether the body ended exactly after the final CRLF. */
bool hs_awschunk_done(const struct hs_awschunk *c);

#endif
