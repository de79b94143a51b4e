/* SPDX-License-Identifier: MIT */
/* The status line and header fields of an HTTP response from the store, as
 * libcurl hands them over one line at a time: interim responses (100
 * Continue) are noted and dropped, the final one's fields kept in order.
 * Pure: fuzzed by gateway/fuzz/fuzz_gateway_head.c. Nothing from the wire
 * is trusted: a malformed status line is ignored (the response then never
 * counts as complete), a field without a name dropped, Content-Length
 * taken only when it is all digits and below 2^60. */
#ifndef GW_HEAD_H
#define GW_HEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define GW_HEAD_MAX (1u << 20) /* bytes of fields kept */

struct gw_resp_head {
  unsigned status;   /* of the response being read; 0 before one */
  bool done;         /* a final (>= 200) response's fields are complete */
  bool got_continue; /* a 100 Continue came first */
  uint64_t length;   /* Content-Length, UINT64_MAX if none */
  struct hs_buf fields; /* "name" NUL "value" NUL ... */
};

void gw_head_init(struct gw_resp_head *h);
/* One line, with or without its CR LF; "" (or CR LF alone) ends a
 * response's fields. */
void gw_head_line(struct gw_resp_head *h, const char *line, size_t len);
/* The final response's fields in order: *pos starts at 0. */
bool gw_head_next(const struct gw_resp_head *h, size_t *pos, const char **name,
                  const char **value);
void gw_head_free(struct gw_resp_head *h);

#endif
