/* SPDX-License-Identifier: MIT */
/* Header field names (server/headers.c): the input, split at LF, is a list
 * of names. Each verdict of hs_header_name_ok() must be the RFC 9110 one
 * (1*tchar), computed here from the grammar's other reading (the visible
 * US-ASCII bytes but the delimiters), and hs_headers_bad_name() must name
 * the first bad one. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "headers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* tchar = VCHAR except the delimiters "(),/:;<=>?@[\]{} and DQUOTE */
static int oracle(const char *s)
{
  if (!*s)
    return 0;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (*p <= 0x20 || *p >= 0x7f || strchr("\"(),/:;<=>?@[\\]{}", *p))
      return 0;
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *text = malloc(size + 1);
  struct hs_kv kv[64];
  if (!text)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  size_t n = 0;
  const char *first_bad = NULL;
  for (char *p = text; n < 64;) {
    char *lf = strchr(p, '\n');
    if (lf)
      *lf = '\0';
    int ok = hs_header_name_ok(p);
    if (ok != oracle(p))
      abort();
    if (!ok && !first_bad)
      first_bad = p;
    kv[n++] = (struct hs_kv){p, ""};
    if (!lf)
      break;
    p = lf + 1;
  }
  struct hs_headers h = {kv, n};
  if (hs_headers_bad_name(&h) != first_bad)
    abort();
  free(text);
  return 0;
}
