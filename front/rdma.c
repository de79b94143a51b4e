/* SPDX-License-Identifier: MIT */
/* The test server on the public server library: nothing here but
 * include/hipobj_server.h (and the server's own headers). */
#include "rdma.h"

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

struct hs_rdma {
  hipObjServer_t *srv;
  struct hs_stats *stats;
  char nic[64];
};

static hipObjServerConfig_t lib_config(const struct hs_config *cfg,
                                       const char **nic)
{
  hipObjServerConfig_t c;
  memset(&c, 0, sizeof c);
  c.size = sizeof c;
  if (cfg->nic) {
    *nic = cfg->nic;
    c.nics = nic;
    c.nicCount = 1;
  }
  c.maxTransfers = cfg->rdma_qps;
  c.maxConnections = cfg->rdma_max_connections;
  c.idleTimeoutMs = cfg->rdma_idle_timeout_ms;
  c.readyTimeoutMs = cfg->rdma_timeout_ms;
  c.rdmaTimeoutMs = cfg->rdma_timeout_ms;
  c.depth = cfg->rdma_depth;
  c.chunkSize = cfg->rdma_chunk_size;
  c.faultSkipFinal = cfg->fault_skip_final;
  return c;
}

static const char *why_not(hipObjServerStatus_t st, bool named)
{
  if (st != hipObjServerNoDevice)
    return hipObjServerStatusString(st);
  return named ? "no such RDMA device, or no active port, or no "
                 "libibverbs.so.1"
               : "no RDMA device with an active port (or no libibverbs.so.1)";
}

enum hs_err hs_rdma_open_with(hs_rdma_opener open, const void *ctx,
                              const struct hs_config *cfg,
                              struct hs_stats *stats, struct hs_rdma **out,
                              struct hs_buf *why)
{
  *out = NULL;
  struct hs_rdma *r = calloc(1, sizeof *r);
  if (!r)
    return HS_ERR_NOMEM;
  const char *nic = NULL;
  hipObjServerConfig_t c = lib_config(cfg, &nic);
  hipObjServerStatus_t st = open(ctx, &c, &r->srv);
  if (st != hipObjServerSuccess) {
    free(r);
    hs_buf_puts(why, why_not(st, cfg->nic != NULL));
    return cfg->nic ? HS_ERR_IO : HS_OK;
  }
  r->stats = stats;
  snprintf(r->nic, sizeof r->nic, "%s", hipObjServerNicName(r->srv, 0));
  *out = r;
  return HS_OK;
}

static hipObjServerStatus_t open_system(const void *ctx,
                                        const hipObjServerConfig_t *cfg,
                                        hipObjServer_t **out)
{
  (void)ctx;
  return hipObjServerOpen(cfg, out);
}

enum hs_err hs_rdma_open(const struct hs_config *cfg, struct hs_stats *stats,
                         struct hs_rdma **out, struct hs_buf *why)
{
  *out = NULL;
  if (cfg->no_rdma) {
    hs_buf_puts(why, "disabled by --no-rdma");
    return HS_OK;
  }
  return hs_rdma_open_with(open_system, NULL, cfg, stats, out, why);
}

void hs_rdma_close(struct hs_rdma *r)
{
  if (!r)
    return;
  hipObjServerClose(r->srv); /* waits for every transfer to end */
  free(r);
}

hipObjServer_t *hs_rdma_library(struct hs_rdma *r) { return r->srv; }

const char *hs_rdma_nic(const struct hs_rdma *r) { return r->nic; }

void hs_rdma_stats_json(struct hs_rdma *r, struct hs_buf *out)
{
  hipObjServerStats_t s;
  memset(&s, 0, sizeof s);
  s.size = sizeof s;
  hipObjServerGetStats(r->srv, &s);
  uint64_t transfers = s.completed + s.failed;
  hs_buf_printf(
      out,
      "{\"transfers\":%llu,\"made\":%llu,\"reused\":%llu,\"live\":%u,"
      "\"idle\":%u,\"retired\":{\"failure\":%llu,\"idle\":%llu,"
      "\"evicted\":%llu,\"stale\":%llu,\"one_shot\":%llu},"
      "\"final_failed\":%llu,\"ready_reclaimed\":%llu,"
      "\"qp_transitions\":%llu}",
      (unsigned long long)transfers, (unsigned long long)s.connMade,
      (unsigned long long)s.connReused, s.connLive, s.connIdle,
      (unsigned long long)s.retiredFailure, (unsigned long long)s.retiredIdle,
      (unsigned long long)s.retiredEvicted, (unsigned long long)s.retiredStale,
      (unsigned long long)s.retiredOneShot, (unsigned long long)s.finalFailed,
      (unsigned long long)s.readyReclaimed, (unsigned long long)s.qpTransitions);
}

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
  struct hs_stats *s = x->r->stats;
  if (st == hipObjServerSuccess) {
    hs_stat_add(&s->rdma_completed, 1);
    hs_stat_add(x->reader ? &s->rdma_bytes_out : &s->rdma_bytes_in, bytes);
  } else {
    hs_stat_add(&s->rdma_failures, 1);
  }
  xfer_free(x);
}

static enum hs_rdma_start start(struct hs_rdma *r, struct xfer *x, int op,
                                const char *token,
                                char reply[HS_RDMA_REPLY_MAX])
{
  hipObjServerRequest_t req;
  memset(&req, 0, sizeof req);
  req.size = sizeof req;
  req.op = (uint32_t)op;
  req.token = token;
  req.tokenLength = strlen(token);
  req.length = x->size;
  if (op == hipObjServerOpGet) {
    req.read = io_read;
  } else {
    req.write = io_write;
    req.commit = io_commit;
  }
  req.ioArg = x;
  req.done = on_done;
  req.doneArg = x;
  x->r = r;
  hipObjServerReply_t rep;
  hipObjServerStatus_t st = hipObjServerStart(r->srv, &req, &rep, NULL);
  if (st == hipObjServerSuccess) {
    snprintf(reply, HS_RDMA_REPLY_MAX, "%s", rep.rdmaReply);
    return HS_RDMA_STARTED; /* x belongs to on_done now */
  }
  xfer_free(x);
  switch (st) {
  case hipObjServerBadToken: return HS_RDMA_BAD_TOKEN;
  case hipObjServerBusy:
  case hipObjServerNoMemory: return HS_RDMA_BUSY;
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
  x->reader = reader;
  x->offset = offset;
  x->size = length;
  return start(r, x, hipObjServerOpGet, token, reply);
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
  x->writer = w;
  x->size = size;
  if (checks->sha256)
    memcpy(x->sha_expected, checks->sha256, HS_SHA256_LEN);
  if (checks->content_md5) {
    x->has_md5 = true;
    memcpy(x->md5, checks->content_md5, HS_MD5_LEN);
  }
  return start(r, x, hipObjServerOpPut, token, reply);
}
