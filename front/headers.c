/* SPDX-License-Identifier: MIT */
#include "headers.h"

#include <strings.h>

const char *hs_header_get(const struct hs_headers *h, const char *name)
{
  for (size_t i = 0; i < h->n; i++)
    if (strcasecmp(h->v[i].name, name) == 0)
      return h->v[i].value;
  return NULL;
}

size_t hs_header_count(const struct hs_headers *h, const char *name)
{
  size_t n = 0;
  for (size_t i = 0; i < h->n; i++)
    n += strcasecmp(h->v[i].name, name) == 0;
  return n;
}
