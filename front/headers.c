/* SPDX-License-Identifier: MIT */
#include "headers.h"

#include <string.h>
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

bool hs_header_name_ok(const char *name)
{
  if (!name || !*name)
    return false;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
    unsigned char c = *p;
    bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9');
    if (!alnum && !strchr("!#$%&'*+-.^_`|~", c))
      return false;
  }
  return true;
}

const char *hs_headers_bad_name(const struct hs_headers *h)
{
  for (size_t i = 0; i < h->n; i++)
    if (!hs_header_name_ok(h->v[i].name))
      return h->v[i].name;
  return NULL;
}
