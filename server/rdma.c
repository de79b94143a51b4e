/* SPDX-License-Identifier: MIT */
#include "rdma.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/thread_safety.h"
#include "engine.h"
#include "auth/hash.h"
#include "platform/platform.h"

/* One transfer handed to the engine. Every context is on the list until the
 * engine is done with it, so none is freed while the engine may still call
 * it, and none outlives hs_rdma_close. */
struct xfer {
  struct hs_rdma *r;
  int op;
  struct hs_reader *reader; /* GET */
  uint64_t offset;
  struct hs_writer *writer; /* PUT */
  bool has_md5;
  uint8_t md5[HS_MD5_LEN];
  struct hs_digest *sha;   /* when x-amz-content-sha256 is a digest */
  uint8_t sha_expected[HS_SHA256_LEN];
  struct hs_cksum cksum;   /* when x-amz-checksum-* is given */
  uint64_t size;
  bool finished;
  struct xfer *prev, *next;
};

struct hs_rdma {
  struct ho_engine *engine;
  struct hs_stats *stats;
  char nic[64];
  ho_mutex lock;
  struct xfer *live HO_GUARDED_BY(lock);
};

static const char *err_name(hipObjOpError_t e)
{
  switch (e) {
  case hipObjNicNotFound: return "no such RDMA device, or no active port";
  case hipObjRdmaError: return "the device could not be set up";
  case hipObjNotSupported: return "not supported";
  case hipObjInvalidValue: return "invalid value";
  default: return "internal error";
  }
}

enum hs_err hs_rdma_open_on(const struct ho_platform *plat,
                            const struct hs_config *cfg,
                            struct hs_stats *stats, struct hs_rdma **out,
                            struct hs_buf *why)
{
  *out = NULL;
  if (!plat->verbs) {
    hs_buf_puts(why, "libibverbs.so.1 is not installed");
    return cfg->nic ? HS_ERR_IO : HS_OK;
  }
  struct hs_rdma *r = calloc(1, sizeof *r);
  if (!r)
    return HS_ERR_NOMEM;
  struct ho_engine_config ec = {.nic = cfg->nic,
                                .qps = cfg->rdma_qps,
                                .chunk_size = cfg->rdma_chunk_size,
                                .depth = cfg->rdma_depth,
                                .max_connections = cfg->rdma_max_connections,
                                .idle_timeout_ms = cfg->rdma_idle_timeout_ms,
                                .ready_timeout_ms = cfg->rdma_timeout_ms,
                                .rdma_timeout_ms = cfg->rdma_timeout_ms,
                                .fault_skip_final = cfg->fault_skip_final};
  hipObjOpError_t e = ho_engine_create(plat, &ec, &r->engine);
  if (e != hipObjSuccess) {
    free(r);
    if (cfg->nic) {
      hs_buf_puts(why, err_name(e));
      return HS_ERR_IO;
    }
    hs_buf_puts(why, e == hipObjNicNotFound
                         ? "no RDMA device with an active port"
                         : err_name(e));
    return HS_OK;
  }
  r->stats = stats;
  ho_mutex_init(&r->lock);
  snprintf(r->nic, sizeof r->nic, "%s", ho_engine_device_name(r->engine));
  *out = r;
  return HS_OK;
}

enum hs_err hs_rdma_open(const struct hs_config *cfg, struct hs_stats *stats,
                         struct hs_rdma **out, struct hs_buf *why)
{
  *out = NULL;
  if (cfg->no_rdma) {
    hs_buf_puts(why, "disabled by --no-rdma");
    return HS_OK;
  }
  const struct ho_platform *plat;
  if (ho_platform_system("none", &plat) != hipObjSuccess) {
    hs_buf_puts(why, "the RDMA platform could not be set up");
    return cfg->nic ? HS_ERR_IO : HS_OK;
  }
  return hs_rdma_open_on(plat, cfg, stats, out, why);
}

static void xfer_free(struct xfer *x)
{
  hs_reader_close(x->reader);
  hs_writer_abort(x->writer);
  hs_digest_free(x->sha);
  hs_cksum_free(&x->cksum);
  free(x);
}

void hs_rdma_close(struct hs_rdma *r)
{
  if (!r)
    return;
  ho_engine_destroy(r->engine); /* waits for every transfer to end */
  ho_mutex_lock(&r->lock);
  struct xfer *x = r->live;
  r->live = NULL;
  ho_mutex_unlock(&r->lock);
  while (x) {
    struct xfer *next = x->next;
    xfer_free(x);
    x = next;
  }
  ho_mutex_destroy(&r->lock);
  free(r);
}

const char *hs_rdma_nic(const struct hs_rdma *r) { return r->nic; }

void hs_rdma_stats_json(struct hs_rdma *r, struct hs_buf *out)
{
  struct ho_engine_stats s;
  ho_engine_get_stats(r->engine, &s);
  uint64_t transfers = s.completed + s.failed;
  hs_buf_printf(
      out,
      "{\"transfers\":%llu,\"made\":%llu,\"reused\":%llu,\"live\":%u,"
      "\"idle\":%u,\"retired\":{\"failure\":%llu,\"idle\":%llu,"
      "\"evicted\":%llu,\"stale\":%llu,\"one_shot\":%llu},"
      "\"final_failed\":%llu,\"ready_reclaimed\":%llu,"
      "\"qp_transitions\":%llu}",
      (unsigned long long)transfers, (unsigned long long)s.conn_made,
      (unsigned long long)s.conn_reused, s.conn_live, s.conn_idle,
      (unsigned long long)s.retired_failure, (unsigned long long)s.retired_idle,
      (unsigned long long)s.retired_evicted, (unsigned long long)s.retired_stale,
      (unsigned long long)s.retired_one_shot, (unsigned long long)s.final_failed,
      (unsigned long long)s.ready_reclaimed, (unsigned long long)s.qp_transitions);
}

/* ---- the engine's callbacks, on its thread ------------------------------ */

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

static void unlink_xfer(struct hs_rdma *r, struct xfer *x)
{
  ho_mutex_lock(&r->lock);
  if (x->prev)
    x->prev->next = x->next;
  else
    r->live = x->next;
  if (x->next)
    x->next->prev = x->prev;
  ho_mutex_unlock(&r->lock);
}

static int io_finish(void *ctx, int status, uint64_t bytes)
{
  struct xfer *x = ctx;
  struct hs_stats *st = x->r->stats;
  if (x->finished) {
    /* A second call for the same transfer: free it now. */
    unlink_xfer(x->r, x);
    xfer_free(x);
    return -1;
  }
  x->finished = true;
  int rc = 0;
  if (x->op == HIPOBJ_RDMA_OP_PUT) {
    struct hs_writer *w = x->writer;
    x->writer = NULL;
    if (status == HO_FINAL_OK && bytes == x->size &&
        hs_writer_size(w) == bytes && payload_matches(x))
      rc = hs_writer_commit(w, x->has_md5 ? x->md5 : NULL, NULL) ? -1 : 0;
    else {
      hs_writer_abort(w);
      rc = -1;
    }
  }
  bool ok = status == HO_FINAL_OK && rc == 0;
  if (ok) {
    hs_stat_add(&st->rdma_completed, 1);
    hs_stat_add(x->op == HIPOBJ_RDMA_OP_GET ? &st->rdma_bytes_out
                                            : &st->rdma_bytes_in,
                bytes);
  } else {
    hs_stat_add(&st->rdma_failures, 1);
  }
  /* A PUT whose commit failed may be finished twice by the engine (the
   * commit's failure turns into a store-error final): keep the context
   * until then, or until hs_rdma_close. */
  if (x->op == HIPOBJ_RDMA_OP_PUT && status == HO_FINAL_OK && rc != 0)
    return rc;
  unlink_xfer(x->r, x);
  xfer_free(x);
  return rc;
}

static enum hs_rdma_start start(struct hs_rdma *r, struct xfer *x,
                                const char *token,
                                char reply[HS_RDMA_REPLY_MAX])
{
  x->r = r;
  ho_mutex_lock(&r->lock);
  x->next = r->live;
  if (r->live)
    r->live->prev = x;
  r->live = x;
  ho_mutex_unlock(&r->lock);
  struct ho_engine_io io = {.read = io_read,
                            .write = io_write,
                            .finish = io_finish,
                            .ctx = x};
  char rep[HO_ENGINE_REPLY_MAX];
  enum ho_engine_start_result res = ho_engine_start(
      r->engine, token, strlen(token), x->op, x->size, &io, rep);
  if (res == HO_ENGINE_STARTED) {
    snprintf(reply, HS_RDMA_REPLY_MAX, "%s", rep);
    return HS_RDMA_STARTED;
  }
  unlink_xfer(r, x);
  xfer_free(x);
  switch (res) {
  case HO_ENGINE_BAD_TOKEN: return HS_RDMA_BAD_TOKEN;
  case HO_ENGINE_BUSY: return HS_RDMA_BUSY;
  default: return HS_RDMA_DECLINED;
  }
}

enum hs_rdma_start hs_rdma_get(struct hs_rdma *r, const char *token,
                               struct hs_reader *reader, uint64_t offset,
                               uint64_t length, char reply[HS_RDMA_REPLY_MAX])
{
  struct xfer *x = calloc(1, sizeof *x);
  if (!x) {
    hs_reader_close(reader);
    return HS_RDMA_BUSY;
  }
  x->op = HIPOBJ_RDMA_OP_GET;
  x->reader = reader;
  x->offset = offset;
  x->size = length;
  return start(r, x, token, reply);
}

enum hs_rdma_start hs_rdma_put(struct hs_rdma *r, const char *token,
                               struct hs_writer *w, uint64_t size,
                               const struct hs_rdma_checks *checks,
                               char reply[HS_RDMA_REPLY_MAX])
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
    return HS_RDMA_BUSY;
  }
  x->op = HIPOBJ_RDMA_OP_PUT;
  x->writer = w;
  x->size = size;
  if (checks->sha256)
    memcpy(x->sha_expected, checks->sha256, HS_SHA256_LEN);
  if (checks->content_md5) {
    x->has_md5 = true;
    memcpy(x->md5, checks->content_md5, HS_MD5_LEN);
  }
  return start(r, x, token, reply);
}
