/* SPDX-License-Identifier: MIT */
/* The decline rules that a token's shape alone decides, shared by
 * hipObjServerParseToken() and hipObjServerStart(): a token of another
 * protocol, whose client falls back to plain HTTP when it gets 501 but
 * would stop at a 400. */
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "server_internal.h"

/* NVIDIA cuObject's descriptor: CUOBJ_DESC_LEN visible characters (no ':'),
 * optionally followed by ":ADDR:SIZE" in hex, as its clients append the
 * buffer's address and size. Its length alone tells it from ours
 * (HO_TOKEN_HEX), so this never shadows a malformed hipObject token. */
#define CUOBJ_DESC_LEN 81
#define CUOBJ_FIELD_MAX 16

static bool hex_field(const char *p, size_t n)
{
  if (n == 0 || n > CUOBJ_FIELD_MAX)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!isxdigit((unsigned char)p[i]))
      return false;
  return true;
}

static bool cuobject_descriptor(const char *t, size_t n)
{
  if (n < CUOBJ_DESC_LEN)
    return false;
  for (size_t i = 0; i < CUOBJ_DESC_LEN; i++)
    if (t[i] <= ' ' || t[i] > '~' || t[i] == ':')
      return false;
  if (n == CUOBJ_DESC_LEN)
    return true;
  const char *addr = t + CUOBJ_DESC_LEN + 1;
  const char *end = t + n;
  const char *colon = memchr(addr, ':', (size_t)(end - addr));
  return t[CUOBJ_DESC_LEN] == ':' && colon &&
         hex_field(addr, (size_t)(colon - addr)) &&
         hex_field(colon + 1, (size_t)(end - colon - 1));
}

bool ho_server_foreign_token(const char *token, uint64_t length)
{
  return length <= SIZE_MAX && cuobject_descriptor(token, (size_t)length);
}
