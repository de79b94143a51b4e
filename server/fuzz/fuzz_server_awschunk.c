/* SPDX-License-Identifier: MIT */
/* The aws-chunked decoder, fed whole and in pieces: the decoded payload and
 * the verdict must not depend on how the body was split. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth/awschunk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct out {
  uint64_t bytes;
  uint64_t chunks;
  uint32_t sum;
};

static enum hs_err on_data(void *ctx, const char *p, size_t n)
{
  struct out *o = ctx;
  o->bytes += n;
  for (size_t i = 0; i < n; i++)
    o->sum = o->sum * 31 + (uint8_t)p[i];
  return HS_OK;
}

static enum hs_err on_end(void *ctx, uint64_t size, const char *sig)
{
  ((struct out *)ctx)->chunks++;
  if (sig && strlen(sig) != 64)
    abort();
  return HS_OK;
}

static enum hs_err run(const uint8_t *d, size_t n, size_t step, struct out *o,
                       bool *done)
{
  struct hs_awschunk c;
  struct hs_awschunk_cbs cbs = {o, on_data, on_end, NULL};
  hs_awschunk_init(&c);
  enum hs_err err = HS_OK;
  for (size_t off = 0; off < n && !err; off += step)
    err = hs_awschunk_feed(&c, (const char *)d + off,
                           n - off < step ? n - off : step, &cbs);
  *done = hs_awschunk_done(&c);
  return err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct out a = {0}, b = {0};
  bool da, db;
  enum hs_err ea = run(data, size, size ? size : 1, &a, &da);
  enum hs_err eb = run(data, size, 1 + size % 7, &b, &db);
  if (ea != eb || da != db ||
      (!ea && (a.bytes != b.bytes || a.sum != b.sum || a.chunks != b.chunks)))
    abort();
  return 0;
}
