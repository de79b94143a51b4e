/* SPDX-License-Identifier: MIT */
#include "head.h"

#include <string.h>
#include <strings.h>

void gw_head_init(struct gw_resp_head *h)
{
  memset(h, 0, sizeof *h);
  h->length = UINT64_MAX;
  hs_buf_init(&h->fields, GW_HEAD_MAX);
}

void gw_head_free(struct gw_resp_head *h) { hs_buf_free(&h->fields); }

/* "HTTP/x.y NNN ...": NNN, 100 to 999. */
static bool status_line(const char *b, size_t n, unsigned *out)
{
  const char *sp = memchr(b, ' ', n);
  if (!sp || (size_t)(sp - b) + 4 > n)
    return false;
  unsigned v = 0;
  for (int i = 1; i <= 3; i++) {
    if (sp[i] < '0' || sp[i] > '9')
      return false;
    v = v * 10 + (unsigned)(sp[i] - '0');
  }
  if ((size_t)(sp - b) + 4 < n && sp[4] != ' ')
    return false;
  *out = v;
  return v >= 100;
}

static void content_length(struct gw_resp_head *h, const char *v, size_t n)
{
  uint64_t len = 0;
  if (n == 0)
    return;
  for (size_t i = 0; i < n; i++) {
    if (v[i] < '0' || v[i] > '9' || len >= (1ull << 56))
      return;
    len = len * 10 + (uint64_t)(v[i] - '0');
  }
  h->length = len;
}

static void field(struct gw_resp_head *h, const char *b, size_t end)
{
  const char *colon = memchr(b, ':', end);
  if (!colon || colon == b || memchr(b, '\0', end))
    return;
  size_t nlen = (size_t)(colon - b);
  const char *v = colon + 1;
  size_t vlen = end - nlen - 1;
  while (vlen && (*v == ' ' || *v == '\t')) {
    v++;
    vlen--;
  }
  while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
    vlen--;
  hs_buf_append(&h->fields, b, nlen);
  hs_buf_putc(&h->fields, '\0');
  hs_buf_append(&h->fields, v, vlen);
  hs_buf_putc(&h->fields, '\0');
  if (nlen == 14 && strncasecmp(b, "content-length", 14) == 0)
    content_length(h, v, vlen);
}

void gw_head_line(struct gw_resp_head *h, const char *b, size_t len)
{
  size_t end = len;
  while (end && (b[end - 1] == '\r' || b[end - 1] == '\n'))
    end--;
  if (h->done)
    return; /* trailers, or a second response: not this one's */
  if (end >= 5 && strncmp(b, "HTTP/", 5) == 0) {
    unsigned st;
    if (status_line(b, end, &st)) {
      h->status = st;
      hs_buf_free(&h->fields);
      hs_buf_init(&h->fields, GW_HEAD_MAX);
      h->length = UINT64_MAX;
    }
    return;
  }
  if (end == 0) {
    if (h->status >= 100 && h->status < 200) {
      h->got_continue = h->got_continue || h->status == 100;
      h->status = 0;
      hs_buf_free(&h->fields);
      hs_buf_init(&h->fields, GW_HEAD_MAX);
    } else if (h->status) {
      h->done = true;
    }
    return;
  }
  if (h->status >= 200)
    field(h, b, end);
}

bool gw_head_next(const struct gw_resp_head *h, size_t *pos, const char **name,
                  const char **value)
{
  return hs_buf_next_pair(&h->fields, pos, name, value);
}
