/* SPDX-License-Identifier: MIT */
/* The test server's transfers on the public server library: nothing here
 * but include/hipobj_server.h (and the servers' own headers). */
#include "rdma_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "hipobj_server.h"

/* One transfer handed to the library, freed by its done callback (or at
 * once when it does not start). */
struct xfer {
  struct hs_rdma *r;
  struct hs_reader *reader; /* GET */
  uint64_t offset;
  struct hs_writer *writer; /* PUT, until committed */
  bool has_md5;
  uint8_t md5[HS_MD5_LEN];
  struct hs_digest *sha;   /* when x-amz-content-sha256 is a digest */
  uint8_t sha_expected[HS_SHA256_LEN];
  struct hs_cksum cksum;   /* when x-amz-checksum-* is given */
  uint64_t size;
};

/* ---- the library's callbacks, on its threads ----------------------------- */

static int io_read(void *ctx, uint64_t off, void *buf, size_t n)
{
  struct xfer *x = ctx;
  if (off > x->size || n > x->size - off)
    return -1;
  return hs_reader_read(x->reader, x->offset + off, buf, n) ? -1 : 0;
}

static int io_write(void *ctx, uint64_t off, const void *buf, size_t n)
{
  struct xfer *x = ctx;
  /* chunks arrive in order; anything else is refused, not reordered */
  if (!x->writer || off != hs_writer_size(x->writer) || n > x->size - off)
    return -1;
  if (x->sha)
    hs_digest_update(x->sha, buf, n);
  if (x->cksum.alg)
    hs_cksum_update(&x->cksum, buf, n);
  return hs_writer_write(x->writer, buf, n) ? -1 : 0;
}

/* The declared x-amz-content-sha256 and x-amz-checksum-* against the bytes
 * that arrived, before the commit (Content-MD5 is the writer's). */
static bool payload_matches(struct xfer *x)
{
  bool ok = true;
  if (x->sha) {
    uint8_t h[HS_SHA256_LEN];
    hs_digest_final(x->sha, h);
    x->sha = NULL;
    ok = hs_mem_equal(h, x->sha_expected, sizeof h);
  }
  if (x->cksum.alg) {
    uint8_t c[HS_CKSUM_MAX];
    size_t n = hs_cksum_len(x->cksum.alg);
    hs_cksum_final(&x->cksum, c);
    ok = ok && x->cksum.have_expected &&
         hs_mem_equal(c, x->cksum.expected, n);
  }
  return ok;
}

/* Every byte arrived: commit before the client is told. */
static int io_commit(void *ctx, uint64_t bytes)
{
  struct xfer *x = ctx;
  struct hs_writer *w = x->writer;
  x->writer = NULL;
  if (!w || bytes != x->size || hs_writer_size(w) != bytes ||
      !payload_matches(x)) {
    hs_writer_abort(w);
    return -1;
  }
  return hs_writer_commit(w, x->has_md5 ? x->md5 : NULL, NULL) ? -1 : 0;
}

static void xfer_free(struct xfer *x)
{
  hs_reader_close(x->reader);
  hs_writer_abort(x->writer); /* NULL once committed */
  hs_digest_free(x->sha);
  hs_cksum_free(&x->cksum);
  free(x);
}

static void on_done(hipObjServerTransfer_t *t, hipObjServerStatus_t st,
                    uint64_t bytes, void *arg)
{
  (void)t;
  struct xfer *x = arg;
  struct hs_stats *s = hs_rdma_stats(x->r);
  if (st == hipObjServerSuccess) {
    hs_stat_add(&s->rdma_completed, 1);
    hs_stat_add(x->reader ? &s->rdma_bytes_out : &s->rdma_bytes_in, bytes);
  } else {
    hs_stat_add(&s->rdma_failures, 1);
  }
  xfer_free(x);
}

static hipObjServerStatus_t start(struct hs_rdma *r, struct xfer *x, bool get,
                                  const char *token, hipObjServerReply_t *rep)
{
  struct hs_rdma_io io = {get ? io_read : NULL, get ? NULL : io_write,
                          get ? NULL : io_commit, on_done, x};
  x->r = r;
  hipObjServerStatus_t st = hs_rdma_start(r, token, x->size, &io, rep, NULL);
  if (st != hipObjServerSuccess)
    xfer_free(x); /* otherwise x belongs to on_done now */
  return st;
}

hipObjServerStatus_t hs_rdma_get(struct hs_rdma *r, const char *token,
                                 struct hs_reader *reader, uint64_t offset,
                                 uint64_t length, hipObjServerReply_t *rep)
{
  struct xfer *x = calloc(1, sizeof *x);
  if (!x) {
    hs_reader_close(reader);
    return hipObjServerNoMemory;
  }
  x->reader = reader;
  x->offset = offset;
  x->size = length;
  return start(r, x, true, token, rep);
}

hipObjServerStatus_t hs_rdma_put(struct hs_rdma *r, const char *token,
                                 struct hs_writer *w, uint64_t size,
                                 const struct hs_rdma_checks *checks,
                                 hipObjServerReply_t *rep)
{
  struct xfer *x = calloc(1, sizeof *x);
  if (x && checks->cksum) {
    x->cksum = *checks->cksum;
    memset(checks->cksum, 0, sizeof *checks->cksum);
  }
  if (x && checks->sha256 && !(x->sha = hs_digest_sha256())) {
    xfer_free(x);
    x = NULL;
  }
  if (!x) {
    hs_writer_abort(w);
    if (checks->cksum)
      hs_cksum_free(checks->cksum);
    return hipObjServerNoMemory;
  }
  x->writer = w;
  x->size = size;
  if (checks->sha256)
    memcpy(x->sha_expected, checks->sha256, HS_SHA256_LEN);
  if (checks->content_md5) {
    x->has_md5 = true;
    memcpy(x->md5, checks->content_md5, HS_MD5_LEN);
  }
  return start(r, x, false, token, rep);
}
