/* SPDX-License-Identifier: MIT */
/* A transfer in parts. The buffer is registered with hipObject in windows
 * of at most 4 GiB (a whole number of parts each); workers take parts in
 * order, each on its own thread and curl handle, and move each by RDMA or,
 * after a 501 or without RDMA, by plain HTTP. The first failure stops the
 * others and is the transfer's result. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Per worker: the bounce buffer for device memory, made on first use. */
struct worker {
  struct ho_s3_xfer *x;
  struct ho_s3_bounce bounce;
  pthread_t thread;
  bool started;
};

hipObjS3Status_t ho_s3_xfer_plan(struct ho_s3_xfer *x, uint64_t obj_off,
                                 bool numbered, hipObjS3Result_t *res)
{
  uint64_t part = x->client->s.part_size;
  uint64_t n = x->size / part + (x->size % part != 0);
  if (numbered && n > HO_S3_MAX_PARTS)
    return ho_s3_fail(res, hipObjS3InvalidArgument, "%" PRIu64 " bytes in "
                      "parts of %" PRIu64 " is more than S3's 10000 parts: "
                      "raise the part size to at least %" PRIu64, x->size,
                      part, x->size / HO_S3_MAX_PARTS + 1);
  if (n == 0 || n > UINT32_MAX)
    return ho_s3_fail(res, hipObjS3InvalidArgument, "nothing to transfer");
  x->parts = calloc((size_t)n, sizeof *x->parts);
  if (!x->parts)
    return ho_s3_fail(res, hipObjS3OutOfMemory, "out of memory");
  x->n_parts = (unsigned)n;
  for (uint64_t i = 0; i < n; i++) {
    struct ho_s3_part *p = &x->parts[i];
    p->off = i * part;
    p->len = x->size - p->off < part ? x->size - p->off : part;
    p->obj_off = obj_off + p->off;
    p->number = numbered ? (unsigned)(i + 1) : 0;
  }
  x->window = (HIPOBJ_MAX_BUFFER_SIZE / part) * part;
  x->progress.fn = x->client->s.progress;
  x->progress.ctx = x->client->s.progress_ctx;
  x->progress.total = x->size;
  ho_mutex_init(&x->mu);
  return hipObjS3Ok;
}

void ho_s3_xfer_free(struct ho_s3_xfer *x)
{
  if (x->parts)
    ho_mutex_destroy(&x->mu);
  free(x->parts);
  x->parts = NULL;
}

/* ---- registration windows ---------------------------------------------- */

static uint64_t n_windows(const struct ho_s3_xfer *x)
{
  return x->size / x->window + (x->size % x->window != 0);
}

static hipObjError_t register_window(struct ho_s3_xfer *x, uint64_t w)
{
  uint64_t off = w * x->window;
  uint64_t len = x->size - off < x->window ? x->size - off : x->window;
  if (x->mem == hipObjS3MemDevice)
    return hipObjBufRegister(x->buf + off, (size_t)len);
  return hipObjBufRegisterHost(x->buf + off, (size_t)len);
}

/* Registers every window; owned[w] says which this transfer must release. */
static hipObjS3Status_t register_all(struct ho_s3_xfer *x, bool *owned,
                                     hipObjS3Result_t *res)
{
  uint64_t n = n_windows(x);
  for (uint64_t w = 0; w < n; w++) {
    hipObjError_t e = register_window(x, w);
    owned[w] = e.opError == hipObjSuccess;
    if (e.opError == hipObjSuccess || e.opError == hipObjBufAlreadyRegistered)
      continue;
    res->rdmaError = e.opError;
    return ho_s3_fail(res, hipObjS3RdmaFailed, "cannot register the %s "
                      "buffer with hipObject (%s)%s; plain HTTP needs no "
                      "registration (--no-rdma)",
                      x->mem == hipObjS3MemDevice ? "device" : "host",
                      hipObjGetErrorString(e.opError),
                      e.opError == hipObjDmabufNotSupported
                          ? ": GPU-direct RDMA is required "
                            "(HIPOBJ_REQUIRE_GPU_DIRECT) but impossible"
                      : e.opError == hipObjRdmaError
                          ? ": is the locked-memory limit (ulimit -l) too "
                            "small?"
                          : "");
  }
  return hipObjS3Ok;
}

static void deregister_all(struct ho_s3_xfer *x, const bool *owned)
{
  uint64_t n = n_windows(x);
  for (uint64_t w = 0; w < n; w++)
    if (owned[w])
      hipObjBufDeregister(x->buf + w * x->window);
}

/* ---- one part ----------------------------------------------------------- */

static void report(struct ho_s3_xfer *x, uint64_t n)
{
  struct ho_s3_progress *p = &x->progress;
  uint64_t done = atomic_fetch_add(&p->done, n) + n;
  if (p->fn && !atomic_load(&p->cancelled) && p->fn(p->ctx, done, p->total))
    atomic_store(&p->cancelled, 1);
}

static hipObjS3Status_t part_rdma(struct ho_s3_xfer *x, struct ho_s3_part *p,
                                  hipObjS3Result_t *res)
{
  struct hipObjS3Call call;
  hipObjS3CallSpec_t spec = {
      .bucket = x->bucket, .key = x->key, .op = x->op,
      .offset = p->obj_off,
      .length = (x->ranged || x->n_parts > 1) ? p->len : 0,
      .partNumber = p->number,
      .uploadId = p->number ? x->upload_id : NULL};
  if (!ho_s3_call_setup(&call, x->client, &spec))
    return ho_s3_fail(res, hipObjS3InvalidArgument, "upload id too long");
  char *base = x->buf + (p->off / x->window) * x->window;
  off_t in_window = (off_t)(p->off % x->window);
  /* Ride a connection made for this endpoint (docs/protocol.md, section 5). */
  hipObjSetPeerHint(x->client->s.endpoint);
  hipObjError_t e =
      x->op == HIPOBJ_RDMA_OP_GET
          ? hipObjGet(NULL, base, (size_t)p->len, in_window,
                      hipObjS3CallOps(), &call)
          : hipObjPut(NULL, base, (size_t)p->len, in_window,
                      hipObjS3CallOps(), &call);
  hipObjS3Status_t st = hipObjS3CallResult(&call, e, res);
  ho_s3_call_teardown(&call);
  if (st != hipObjS3Ok)
    return st;
  p->via_rdma = true;
  ho_s3_count(&x->client->rdma_transfers, 1);
  ho_s3_count(&x->client->rdma_bytes, p->len);
  atomic_fetch_add(&x->parts_rdma, 1);
  report(x, p->len);
  return hipObjS3Ok;
}

static bool bounce_ready(struct worker *w, const struct ho_s3_settings *s)
{
  struct ho_s3_bounce *b = &w->bounce;
  if (b->p)
    return true;
  uint64_t want = w->x->client->s.part_size;
  b->cap = want < HO_S3_BOUNCE_MAX ? (size_t)want : HO_S3_BOUNCE_MAX;
  b->pinned = s->dev.allocHost != NULL;
  b->p = b->pinned ? s->dev.allocHost(s->dev.ctx, b->cap) : malloc(b->cap);
  return b->p != NULL;
}

static void bounce_free(struct worker *w, const struct ho_s3_settings *s)
{
  struct ho_s3_bounce *b = &w->bounce;
  if (!b->p)
    return;
  if (b->pinned)
    s->dev.freeHost(s->dev.ctx, b->p);
  else
    free(b->p);
  b->p = NULL;
}

/* Sets up the request's body or sink for this part's memory. */
static hipObjS3Status_t http_memory(struct worker *w, struct ho_s3_req *r,
                                    const struct ho_s3_part *p,
                                    hipObjS3Result_t *res)
{
  struct ho_s3_xfer *x = w->x;
  const struct ho_s3_settings *s = &x->client->s;
  bool dev = x->mem == hipObjS3MemDevice;
  if (dev && !s->has_dev_ops)
    return ho_s3_fail(res, hipObjS3NoDeviceOps, "plain HTTP into or out of "
                      "device memory needs copy functions (deviceOps), and "
                      "the client has none");
  if (dev && !bounce_ready(w, s))
    return ho_s3_fail(res, hipObjS3OutOfMemory, "cannot allocate a %s "
                      "bounce buffer", s->dev.allocHost ? "pinned" : "host");
  if (dev)
    w->bounce.fill = w->bounce.pos = 0;
  r->bounce = dev ? &w->bounce : NULL;
  r->progress = &x->progress;
  if (x->op == HIPOBJ_RDMA_OP_GET) {
    r->sink = dev ? HO_S3_SINK_DEVICE : HO_S3_SINK_HOST;
    r->dst = x->buf + p->off;
    r->dst_cap = p->len;
  } else {
    r->src = dev ? HO_S3_SRC_DEVICE : HO_S3_SRC_HOST;
    r->src_ptr = x->buf + p->off;
    r->src_len = p->len;
  }
  return hipObjS3Ok;
}

static bool part_query(const struct ho_s3_xfer *x, const struct ho_s3_part *p,
                       char *out, size_t cap)
{
  char enc[3 * 1024 + 1];
  if (!p->number)
    return true;
  if (!ho_s3_uri_encode(x->upload_id, strlen(x->upload_id), false, enc,
                        sizeof enc))
    return false;
  int n = snprintf(out, cap, "partNumber=%u&uploadId=%s", p->number, enc);
  return n > 0 && (size_t)n < cap;
}

static hipObjS3Status_t http_check(const struct ho_s3_xfer *x,
                                   const struct ho_s3_req *r,
                                   struct ho_s3_part *p,
                                   hipObjS3Result_t *res)
{
  if (x->op == HIPOBJ_RDMA_OP_GET && r->dst_len != p->len)
    return ho_s3_fail(res, hipObjS3ProtocolError, "the server sent %" PRIu64
                      " of %" PRIu64 " bytes (HTTP %ld)", r->dst_len, p->len,
                      r->status);
  if (x->op == HIPOBJ_RDMA_OP_PUT) {
    if (p->number && !r->etag[0])
      return ho_s3_fail(res, hipObjS3ProtocolError, "the server sent no "
                        "ETag for part %u", p->number);
    snprintf(p->etag, sizeof p->etag, "%s", r->etag);
  }
  return hipObjS3Ok;
}

static hipObjS3Status_t part_http(struct worker *w, struct ho_s3_part *p,
                                  hipObjS3Result_t *res)
{
  struct ho_s3_xfer *x = w->x;
  struct ho_s3_req r;
  char query[3 * 1024 + 64];
  bool get = x->op == HIPOBJ_RDMA_OP_GET;
  ho_s3_req_init(&r, x->client, get ? "GET" : "PUT", x->bucket, x->key);
  query[0] = '\0';
  if (!part_query(x, p, query, sizeof query))
    return ho_s3_fail(res, hipObjS3InvalidArgument, "upload id too long");
  r.query = query[0] ? query : NULL;
  if (get && (x->ranged || x->n_parts > 1)) {
    r.has_range = true;
    r.range_first = p->obj_off;
    r.range_len = p->len;
  }
  hipObjS3Status_t st = http_memory(w, &r, p, res);
  if (st == hipObjS3Ok) {
    CURLcode cc = ho_s3_req_perform(&r);
    st = ho_s3_req_outcome(&r, cc, res);
  }
  if (st == hipObjS3Ok)
    st = http_check(x, &r, p, res);
  ho_s3_req_cleanup(&r);
  if (st != hipObjS3Ok)
    return st;
  ho_s3_count(&x->client->http_transfers, 1);
  ho_s3_count(&x->client->http_bytes, p->len);
  atomic_fetch_add(&x->parts_http, 1);
  return hipObjS3Ok;
}

static hipObjS3Status_t do_part(struct worker *w, struct ho_s3_part *p,
                                hipObjS3Result_t *res)
{
  struct ho_s3_xfer *x = w->x;
  hipObjS3Client_t *c = x->client;
  if (!c->rdma) {
    ho_s3_count(&c->fallbacks_no_rdma, 1);
    return part_http(w, p, res);
  }
  if (!atomic_load(&x->declined)) {
    hipObjS3Status_t st = part_rdma(x, p, res);
    if (st != hipObjS3RdmaDeclined)
      return st;
    if (c->s.flags & HIPOBJ_S3_REQUIRE_RDMA)
      return ho_s3_fail(res, st, "the server declined RDMA (501) and RDMA is "
                        "required: enable RDMA on the server, or allow the "
                        "plain-HTTP fallback");
    atomic_store(&x->declined, 1);
    ho_s3_result_clear(res);
  }
  ho_s3_count(&c->fallbacks_declined, 1);
  atomic_fetch_add(&x->parts_declined, 1);
  return part_http(w, p, res);
}

/* ---- workers ------------------------------------------------------------ */

static void record_failure(struct ho_s3_xfer *x, const hipObjS3Result_t *res)
{
  ho_mutex_lock(&x->mu);
  if (!x->failed) {
    x->failed = true;
    x->first_error = *res;
  }
  ho_mutex_unlock(&x->mu);
  atomic_store(&x->stop, 1);
}

static void *worker_main(void *arg)
{
  struct worker *w = arg;
  struct ho_s3_xfer *x = w->x;
  hipObjS3Result_t res;
  while (!atomic_load(&x->stop)) {
    unsigned i = atomic_fetch_add(&x->next, 1);
    if (i >= x->n_parts)
      break;
    ho_s3_result_clear(&res);
    if (atomic_load(&x->progress.cancelled)) {
      ho_s3_fail(&res, hipObjS3HttpError, "cancelled");
      record_failure(x, &res);
      break;
    }
    if (do_part(w, &x->parts[i], &res) != hipObjS3Ok) {
      record_failure(x, &res);
      break;
    }
  }
  bounce_free(w, &x->client->s);
  return NULL;
}

static void run_workers(struct ho_s3_xfer *x)
{
  unsigned n = x->client->s.concurrency;
  if (n > x->n_parts)
    n = x->n_parts;
  struct worker ws[HIPOBJ_S3_MAX_CONCURRENCY];
  memset(ws, 0, sizeof ws);
  for (unsigned i = 0; i < n; i++)
    ws[i].x = x;
  /* Worker 0 is this thread; if a thread cannot start, fewer run. */
  for (unsigned i = 1; i < n; i++)
    ws[i].started = pthread_create(&ws[i].thread, NULL, worker_main,
                                   &ws[i]) == 0;
  worker_main(&ws[0]);
  for (unsigned i = 1; i < n; i++)
    if (ws[i].started)
      pthread_join(ws[i].thread, NULL);
}

static void fill_result(struct ho_s3_xfer *x, hipObjS3Result_t *res)
{
  const hipObjS3Client_t *c = x->client;
  res->partsRdma = atomic_load(&x->parts_rdma);
  res->partsHttp = atomic_load(&x->parts_http);
  if (!c->rdma)
    res->fallbackReason = (c->s.flags & HIPOBJ_S3_NO_RDMA)
                              ? hipObjS3FallbackDisabled
                              : hipObjS3FallbackNoRdma;
  else if (atomic_load(&x->parts_declined))
    res->fallbackReason = hipObjS3FallbackDeclined;
  res->fellBack = res->partsHttp > 0 &&
                  res->fallbackReason != hipObjS3FallbackDisabled;
  if (!c->rdma && res->fallbackReason == hipObjS3FallbackNoRdma)
    res->rdmaError = c->init_error;
}

hipObjS3Status_t ho_s3_xfer_run(struct ho_s3_xfer *x, hipObjS3Result_t *res)
{
  bool *owned = NULL;
  hipObjS3Status_t st = hipObjS3Ok;
  if (x->client->rdma) {
    owned = calloc((size_t)n_windows(x), sizeof *owned);
    if (!owned)
      return ho_s3_fail(res, hipObjS3OutOfMemory, "out of memory");
    st = register_all(x, owned, res);
  }
  if (st == hipObjS3Ok)
    run_workers(x);
  if (owned)
    deregister_all(x, owned);
  free(owned);
  if (st != hipObjS3Ok)
    return st;
  ho_mutex_lock(&x->mu);
  bool failed = x->failed;
  if (failed)
    *res = x->first_error;
  ho_mutex_unlock(&x->mu);
  fill_result(x, res);
  if (failed)
    return res->status;
  if (x->progress.fn && !atomic_load(&x->progress.cancelled))
    x->progress.fn(x->progress.ctx, x->size, x->size);
  res->bytes = x->size;
  res->status = hipObjS3Ok;
  return hipObjS3Ok;
}
