/* SPDX-License-Identifier: MIT */
/* The store's response head, line by line as libcurl hands it over: the
 * input is split at '\n'. A complete head has a final status; its fields
 * come back in pairs; Content-Length is only ever a parsed number. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "head.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct gw_resp_head h;
  gw_head_init(&h);
  const char *p = (const char *)data, *end = p + size;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
    gw_head_line(&h, p, n);
    p += n;
  }
  if (h.done && (h.status < 200 || h.status > 999))
    abort();
  size_t pos = 0, fields = 0;
  const char *name, *value;
  while (gw_head_next(&h, &pos, &name, &value)) {
    if (!name[0])
      abort();
    fields++;
  }
  if (h.length != UINT64_MAX && h.length >= (1ull << 60))
    abort();
  (void)fields;
  gw_head_free(&h);
  return 0;
}
