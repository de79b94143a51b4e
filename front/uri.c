/* SPDX-License-Identifier: MIT */
#include "uri.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/hex.h"

bool hs_target_split(const char *t, size_t len, struct hs_span *path,
                     struct hs_span *query)
{
  if (!t || len == 0 || t[0] != '/')
    return false;
  size_t q = len;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)t[i];
    if (c <= 0x20 || c == 0x7f || c == '#')
      return false;
    if (c == '?' && q == len)
      q = i;
  }
  path->p = t;
  path->len = q;
  query->p = q < len ? t + q + 1 : t + len;
  query->len = q < len ? len - q - 1 : 0;
  return true;
}

bool hs_utf8_valid(const char *s, size_t len)
{
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < len) {
    unsigned char c = p[i];
    size_t n;
    uint32_t cp;
    if (c < 0x80) {
      i++;
      continue;
    } else if (c >= 0xc2 && c <= 0xdf) {
      n = 1;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (len - i <= n)
      return false;
    for (size_t k = 1; k <= n; k++) {
      if ((p[i + k] & 0xc0) != 0x80)
        return false;
      cp = (cp << 6) | (p[i + k] & 0x3f);
    }
    if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    i += n + 1;
  }
  return true;
}

bool hs_pct_decode(const char *in, size_t len, bool plus_is_space, char *out,
                   size_t cap, size_t *outlen)
{
  size_t o = 0;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)in[i];
    if (c == '%') {
      if (len - i < 3)
        return false;
      int hi = ho_hex_digit(in[i + 1]);
      int lo = ho_hex_digit(in[i + 2]);
      if (hi < 0 || lo < 0)
        return false;
      c = (unsigned char)(hi << 4 | lo);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      c = ' ';
    }
    if (c == 0 || o + 1 >= cap)
      return false;
    out[o++] = (char)c;
  }
  if (cap == 0 || !hs_utf8_valid(out, o))
    return false;
  out[o] = '\0';
  *outlen = o;
  return true;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_lower_alnum(char c)
{
  return is_digit(c) || (c >= 'a' && c <= 'z');
}

static bool looks_like_ipv4(const char *s)
{
  int dots = 0;
  for (; *s; s++) {
    if (*s == '.')
      dots++;
    else if (!is_digit(*s))
      return false;
  }
  return dots == 3;
}

bool hs_bucket_name_valid(const char *name)
{
  size_t n = strnlen(name, HS_BUCKET_MAX + 1);
  if (n < 3 || n > HS_BUCKET_MAX)
    return false;
  if (!is_lower_alnum(name[0]) || !is_lower_alnum(name[n - 1]))
    return false;
  for (size_t i = 0; i < n; i++) {
    char c = name[i];
    if (!is_lower_alnum(c) && c != '.' && c != '-')
      return false;
    if (c == '.' && i + 1 < n && (name[i + 1] == '.' || name[i + 1] == '-'))
      return false;
    if (c == '-' && i + 1 < n && name[i + 1] == '.')
      return false;
  }
  return !looks_like_ipv4(name);
}

enum hs_err hs_path_parse(const char *path, size_t len,
                          char bucket[HS_BUCKET_MAX + 1],
                          char key[HS_KEY_MAX + 1], size_t *keylen)
{
  if (len == 0 || path[0] != '/')
    return HS_ERR_INVALID_URI;
  const char *b = path + 1;
  const char *end = path + len;
  const char *slash = memchr(b, '/', (size_t)(end - b));
  const char *bend = slash ? slash : end;
  char bk[HS_BUCKET_MAX + 1] = "";
  size_t blen = 0;
  /* A bucket name never needs escapes, but a client may send them. */
  if (bend > b && !hs_pct_decode(b, (size_t)(bend - b), false, bk, sizeof bk,
                                 &blen))
    return HS_ERR_INVALID_URI;
  if (memchr(bk, '/', blen))
    return HS_ERR_INVALID_URI;
  const char *k = slash ? slash + 1 : end;
  char tmp[HS_KEY_MAX + 1] = "";
  size_t klen = 0;
  if (k < end &&
      !hs_pct_decode(k, (size_t)(end - k), false, tmp, sizeof tmp, &klen)) {
    /* Tell "too long" from "malformed" by the decoded length. */
    size_t n = 0;
    for (const char *p = k; p < end; p++, n++)
      if (*p == '%')
        p += 2;
    return n > HS_KEY_MAX ? HS_ERR_KEY_TOO_LONG : HS_ERR_INVALID_URI;
  }
  /* A C1 control character (U+0080..U+009F, UTF-8 C2 80..C2 9F) is no
   * part of a readable key: 400, as RGW answers, rather than a 404. */
  for (size_t i = 0; i + 1 < klen; i++)
    if ((unsigned char)tmp[i] == 0xc2 && (unsigned char)tmp[i + 1] >= 0x80 &&
        (unsigned char)tmp[i + 1] <= 0x9f)
      return HS_ERR_INVALID_URI;
  memcpy(bucket, bk, blen + 1);
  memcpy(key, tmp, klen + 1);
  *keylen = klen;
  return HS_OK;
}

static bool is_unreserved(unsigned char c)
{
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
         c == '~';
}

bool hs_uri_encode(struct hs_buf *out, const char *s, size_t len,
                   bool keep_slash)
{
  static const char hex[] = "0123456789ABCDEF";
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (is_unreserved(c) || (keep_slash && c == '/')) {
      hs_buf_putc(out, (char)c);
    } else {
      char e[3] = {'%', hex[c >> 4], hex[c & 15]};
      hs_buf_append(out, e, 3);
    }
  }
  return !out->failed;
}

enum hs_err hs_query_parse(const char *q, size_t len, struct hs_query *out)
{
  struct hs_query r = {.n = 0};
  /* Decoded strings never outgrow the input; one NUL per name and value. */
  size_t cap = len + 2 * HS_QUERY_MAX + 2;
  r.arena = malloc(cap);
  if (!r.arena)
    return HS_ERR_NOMEM;
  size_t used = 0;
  enum hs_err err = HS_ERR_INVALID_URI;
  size_t i = 0;
  while (i < len) {
    const char *amp = memchr(q + i, '&', len - i);
    size_t plen = amp ? (size_t)(amp - (q + i)) : len - i;
    const char *p = q + i;
    i += plen + 1;
    if (plen == 0)
      continue;
    if (r.n == HS_QUERY_MAX) {
      err = HS_ERR_INVALID_ARGUMENT;
      goto fail;
    }
    const char *eq = memchr(p, '=', plen);
    size_t nlen = eq ? (size_t)(eq - p) : plen;
    if (nlen == 0) {
      err = HS_ERR_INVALID_ARGUMENT;
      goto fail;
    }
    struct hs_param *pp = &r.p[r.n];
    size_t dl;
    if (!hs_pct_decode(p, nlen, true, r.arena + used, cap - used, &dl))
      goto fail;
    pp->name = r.arena + used;
    used += dl + 1;
    pp->has_value = eq != NULL;
    const char *v = eq ? eq + 1 : p + plen;
    size_t vlen = eq ? plen - nlen - 1 : 0;
    if (vlen == 0) {
      r.arena[used] = '\0';
      dl = 0;
    } else if (!hs_pct_decode(v, vlen, true, r.arena + used, cap - used,
                              &dl)) {
      goto fail;
    }
    pp->value = r.arena + used;
    used += dl + 1;
    r.n++;
  }
  *out = r;
  return HS_OK;
fail:
  free(r.arena);
  return err;
}

void hs_query_free(struct hs_query *q)
{
  if (!q)
    return;
  free(q->arena);
  q->arena = NULL;
  q->n = 0;
}

const struct hs_param *hs_query_get(const struct hs_query *q, const char *name)
{
  for (size_t i = 0; i < q->n; i++)
    if (strcmp(q->p[i].name, name) == 0)
      return &q->p[i];
  return NULL;
}
