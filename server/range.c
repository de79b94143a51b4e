/* SPDX-License-Identifier: MIT */
#include "range.h"

#include <stdbool.h>
#include <strings.h>

/* Digits at s[*i...]: true if at least one; saturates at UINT64_MAX. */
static bool parse_u64(const char *s, size_t len, size_t *i, uint64_t *v,
                      bool *saturated)
{
  size_t start = *i;
  uint64_t x = 0;
  *saturated = false;
  while (*i < len && s[*i] >= '0' && s[*i] <= '9') {
    unsigned d = (unsigned)(s[*i] - '0');
    if (x > (UINT64_MAX - d) / 10) {
      x = UINT64_MAX;
      *saturated = true;
    } else if (!*saturated) {
      x = x * 10 + d;
    }
    (*i)++;
  }
  *v = x;
  return *i > start;
}

static void skip_blanks(const char *s, size_t len, size_t *i)
{
  while (*i < len && (s[*i] == ' ' || s[*i] == '\t'))
    (*i)++;
}

enum hs_range_result hs_range_parse(const char *s, size_t len, uint64_t size,
                                    uint64_t *first, uint64_t *count)
{
  static const char unit[] = "bytes=";
  const size_t ulen = sizeof unit - 1;
  if (!s || len < ulen || strncasecmp(s, unit, ulen) != 0)
    return HS_RANGE_IGNORE;
  size_t i = ulen;
  skip_blanks(s, len, &i);
  uint64_t a = 0, b = 0;
  bool a_sat = false, b_sat = false;
  bool has_a = parse_u64(s, len, &i, &a, &a_sat);
  if (i >= len || s[i] != '-')
    return HS_RANGE_IGNORE;
  i++;
  bool has_b = parse_u64(s, len, &i, &b, &b_sat);
  skip_blanks(s, len, &i);
  if (i != len || (!has_a && !has_b))
    return HS_RANGE_IGNORE; /* trailing bytes, a second range, or "-" */
  if (has_a && has_b && !b_sat && b < a)
    return HS_RANGE_IGNORE; /* invalid per RFC 9110: ignored */
  if (!has_a) {
    /* suffix: the last b bytes */
    if (b == 0 || size == 0)
      return HS_RANGE_UNSATISFIABLE;
    uint64_t n = b < size ? b : size;
    *first = size - n;
    *count = n;
    return HS_RANGE_OK;
  }
  if (a_sat || a >= size)
    return HS_RANGE_UNSATISFIABLE;
  uint64_t last = (!has_b || b_sat || b >= size) ? size - 1 : b;
  *first = a;
  *count = last - a + 1;
  return HS_RANGE_OK;
}
