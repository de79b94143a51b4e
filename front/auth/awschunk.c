/* SPDX-License-Identifier: MIT */
#include "awschunk.h"

#include <string.h>

#include "common/hex.h"

enum { S_SIZE, S_DATA, S_DATA_CR, S_DATA_LF, S_TRAILER, S_DONE, S_FAILED };

void hs_awschunk_init(struct hs_awschunk *c)
{
  memset(c, 0, sizeof *c);
  c->state = S_SIZE;
}

/* "hex[;chunk-signature=<64 hex>]" */
static bool parse_size_line(struct hs_awschunk *c, const char *l, size_t n)
{
  size_t i = 0;
  uint64_t v = 0;
  while (i < n && ho_hex_digit(l[i]) >= 0) {
    if (i == 16)
      return false;
    v = v << 4 | (uint64_t)ho_hex_digit(l[i]);
    i++;
  }
  if (i == 0)
    return false;
  c->has_sig = false;
  if (i < n) {
    static const char ext[] = ";chunk-signature=";
    size_t el = sizeof ext - 1;
    if (n - i != el + 64 || memcmp(l + i, ext, el) != 0)
      return false;
    for (size_t k = 0; k < 64; k++)
      if (ho_hex_digit(l[i + el + k]) < 0)
        return false;
    memcpy(c->sig, l + i + el, 64);
    c->sig[64] = '\0';
    c->has_sig = true;
  }
  c->size = v;
  c->remaining = v;
  return true;
}

/* Accumulates a CRLF-terminated line; true when one is complete (without
 * the CRLF, in c->line[0, c->line_len)). */
static bool take_line(struct hs_awschunk *c, const char **in, size_t *n,
                      bool *overflow)
{
  while (*n) {
    char ch = **in;
    (*in)++;
    (*n)--;
    if (ch == '\n') {
      if (c->line_len == 0 || c->line[c->line_len - 1] != '\r') {
        *overflow = true; /* a bare LF */
        return false;
      }
      c->line_len--;
      return true;
    }
    if (c->line_len == sizeof c->line) {
      *overflow = true;
      return false;
    }
    c->line[c->line_len++] = ch;
  }
  return false;
}

static enum hs_err step(struct hs_awschunk *c, const char **in, size_t *n,
                        const struct hs_awschunk_cbs *cbs)
{
  bool bad = false;
  enum hs_err err = HS_OK;
  switch (c->state) {
  case S_SIZE:
    if (!take_line(c, in, n, &bad))
      return bad ? HS_ERR_INVALID_ARGUMENT : HS_OK;
    if (!parse_size_line(c, c->line, c->line_len))
      return HS_ERR_INVALID_ARGUMENT;
    c->line_len = 0;
    if (c->size == 0) {
      err = cbs->chunk_end(cbs->ctx, 0, c->has_sig ? c->sig : NULL);
      c->state = S_TRAILER;
    } else {
      c->state = S_DATA;
    }
    return err;
  case S_DATA: {
    size_t k = *n < c->remaining ? *n : (size_t)c->remaining;
    if (k) {
      err = cbs->data(cbs->ctx, *in, k);
      *in += k;
      *n -= k;
      c->remaining -= k;
      c->total += k;
    }
    if (!err && c->remaining == 0)
      c->state = S_DATA_CR;
    return err;
  }
  case S_DATA_CR:
  case S_DATA_LF: {
    char want = c->state == S_DATA_CR ? '\r' : '\n';
    if (**in != want)
      return HS_ERR_INVALID_ARGUMENT;
    (*in)++;
    (*n)--;
    if (c->state == S_DATA_CR) {
      c->state = S_DATA_LF;
      return HS_OK;
    }
    c->state = S_SIZE;
    return cbs->chunk_end(cbs->ctx, c->size, c->has_sig ? c->sig : NULL);
  }
  case S_TRAILER:
    if (!take_line(c, in, n, &bad))
      return bad ? HS_ERR_INVALID_ARGUMENT : HS_OK;
    if (c->line_len == 0) {
      c->state = S_DONE;
      return HS_OK;
    }
    if (!memchr(c->line, ':', c->line_len))
      return HS_ERR_INVALID_ARGUMENT;
    if (cbs->trailer)
      err = cbs->trailer(cbs->ctx, c->line, c->line_len);
    c->line_len = 0;
    return err;
  default:
    return HS_ERR_INVALID_ARGUMENT; /* bytes after the end */
  }
}

enum hs_err hs_awschunk_feed(struct hs_awschunk *c, const char *in, size_t n,
                             const struct hs_awschunk_cbs *cbs)
{
  if (c->state == S_FAILED)
    return HS_ERR_INVALID_ARGUMENT;
  while (n) {
    enum hs_err err = step(c, &in, &n, cbs);
    if (err) {
      c->state = S_FAILED;
      return err;
    }
  }
  return HS_OK;
}

bool hs_awschunk_done(const struct hs_awschunk *c)
{
  return c->state == S_DONE;
}
