/* SPDX-License-Identifier: MIT */
#include "buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hs_buf_init(struct hs_buf *b, size_t limit)
{
  b->data = NULL;
  b->len = 0;
  b->cap = 0;
  b->limit = limit;
  b->failed = false;
}

void hs_buf_free(struct hs_buf *b)
{
  if (!b)
    return;
  free(b->data);
  hs_buf_init(b, b->limit);
}

static bool reserve(struct hs_buf *b, size_t extra)
{
  if (b->failed)
    return false;
  if (extra > SIZE_MAX - 1 - b->len ||
      (b->limit && b->len + extra > b->limit)) {
    b->failed = true;
    return false;
  }
  size_t need = b->len + extra + 1;
  if (need <= b->cap)
    return true;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < need)
    cap = cap > SIZE_MAX / 2 ? need : cap * 2;
  char *p = realloc(b->data, cap);
  if (!p) {
    b->failed = true;
    return false;
  }
  b->data = p;
  b->cap = cap;
  return true;
}

bool hs_buf_append(struct hs_buf *b, const void *p, size_t n)
{
  if (!reserve(b, n))
    return false;
  if (n)
    memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = '\0';
  return true;
}

bool hs_buf_puts(struct hs_buf *b, const char *s)
{
  return hs_buf_append(b, s, strlen(s));
}

bool hs_buf_putc(struct hs_buf *b, char c)
{
  return hs_buf_append(b, &c, 1);
}

bool hs_buf_printf(struct hs_buf *b, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char small[256];
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) {
    b->failed = true;
    return false;
  }
  if ((size_t)n < sizeof small)
    return hs_buf_append(b, small, (size_t)n);
  if (!reserve(b, (size_t)n))
    return false;
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
  return true;
}

const char *hs_buf_cstr(const struct hs_buf *b)
{
  return b->data ? b->data : "";
}

char *hs_buf_take(struct hs_buf *b, size_t *len)
{
  if (b->failed || !b->data) {
    hs_buf_free(b);
    if (len)
      *len = 0;
    return NULL;
  }
  char *p = b->data;
  if (len)
    *len = b->len;
  hs_buf_init(b, b->limit);
  return p;
}

bool hs_buf_next_pair(const struct hs_buf *b, size_t *pos, const char **name,
                      const char **value)
{
  if (b->failed || !b->data || *pos >= b->len)
    return false;
  *name = b->data + *pos;
  size_t nl = strlen(*name) + 1;
  if (*pos + nl >= b->len)
    return false;
  *value = b->data + *pos + nl;
  *pos += nl + strlen(*value) + 1;
  return true;
}
