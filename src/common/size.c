/* SPDX-License-Identifier: MIT */
#include "common/size.h"

#include <stddef.h>

/* The digits at *s, advancing *s past them: false for none or overflow. */
static bool take_digits(const char **s, uint64_t *out)
{
  const char *p = *s;
  uint64_t v = 0;
  for (; *p >= '0' && *p <= '9'; p++) {
    uint64_t d = (uint64_t)(*p - '0');
    if (v > (UINT64_MAX - d) / 10)
      return false;
    v = v * 10 + d;
  }
  if (p == *s)
    return false;
  *s = p;
  *out = v;
  return true;
}

/* "", "K", "Ki", "KB", "KiB", ... (either case): the power of two, or -1. */
static int unit_shift(const char *u)
{
  static const char units[] = "kmgt";
  int shift = -1;
  if (*u == '\0')
    return 0;
  for (size_t i = 0; units[i]; i++)
    if ((*u | 0x20) == units[i])
      shift = 10 * (int)(i + 1);
  if (shift < 0)
    return -1;
  u++;
  if ((*u | 0x20) == 'i')
    u++;
  if ((*u | 0x20) == 'b')
    u++;
  return *u == '\0' ? shift : -1;
}

bool ho_parse_size(const char *s, uint64_t *out)
{
  uint64_t v;
  if (!s || !take_digits(&s, &v))
    return false;
  int shift = unit_shift(s);
  if (shift < 0 || v > (UINT64_MAX >> shift))
    return false;
  *out = v << shift;
  return true;
}

bool ho_parse_uint_n(const char *s, size_t len, uint64_t *out)
{
  char buf[21];
  uint64_t v;
  if (!s || len == 0 || len >= sizeof buf)
    return false;
  for (size_t i = 0; i < len; i++)
    buf[i] = s[i] ? s[i] : 'x'; /* a NUL inside is not a digit */
  buf[len] = '\0';
  const char *p = buf;
  if (!take_digits(&p, &v) || *p != '\0')
    return false;
  *out = v;
  return true;
}

bool ho_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
  uint64_t v;
  if (!s || !take_digits(&s, &v) || *s != '\0' || v > max)
    return false;
  *out = v;
  return true;
}
