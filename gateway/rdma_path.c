/* SPDX-License-Identifier: MIT */
/* GetObject, PutObject and UploadPart with x-amz-rdma-token, through the
 * server library (include/hipobj_server.h) with the backend as the source
 * or the sink of the payload:
 *   GET  the backend's GET (range and conditions forwarded) decides the
 *        answer: anything but 200 or 206 goes back as it is; otherwise the
 *        transfer starts with a read callback that pulls the backend's body
 *        chunk by chunk, so the next chunk is read while the last one is
 *        being written to the client (the library keeps several in
 *        flight);
 *   PUT  the backend's PUT is sent with Expect: 100-continue and the
 *        token's length: an error the backend gives before the body (no
 *        such bucket or upload, denied) goes back as it is; at its 100 the
 *        transfer starts and each chunk the library reads from the client
 *        is pushed into the backend's body. The last byte is held back
 *        until the whole payload has arrived and matched its
 *        x-amz-checksum-*; the backend checks Content-MD5 and a declared
 *        SHA-256 itself. Any failure cuts the backend's connection before
 *        that byte, so the store never commits a partial object; the
 *        client is told only once the backend has answered 2xx.
 * The answer has no body and no ETag (as hipobj-test-server's): HEAD, or
 * ListParts for a part, gives it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/auth.h"
#include "auth/checksum.h"
#include "log.h"
#include "gateway.h"
#include "op.h"
#include "hipobj_server.h"
#include "rdma.h"

struct gw_xfer {
  struct gw_server *gw;
  struct gw_call *call;
  uint64_t length;
  struct hs_cksum ck;       /* x-amz-checksum-*, when given */
  bool have_ck;
  uint8_t last;             /* a PUT's last byte, held back */
  bool have_last;
  bool get;
};

static void xfer_free(struct gw_xfer *x)
{
  gw_call_close(x->call); /* cut, unless it ended cleanly */
  hs_cksum_free(&x->ck);
  free(x);
}

/* ---- the library's callbacks -------------------------------------------- */

static int get_read(void *arg, uint64_t offset, void *buf, size_t len)
{
  struct gw_xfer *x = arg;
  size_t got = 0;
  while (got < len) {
    long n = gw_call_read(x->call, (char *)buf + got, len - got);
    if (n <= 0)
      return -1;
    got += (size_t)n;
  }
  if (offset + len == x->length) { /* see the response end: keep the
                                      connection for the next call */
    char extra;
    if (gw_call_read(x->call, &extra, 1) != 0)
      return -1;
  }
  return 0;
}

/* The store answered (or failed) before the whole upload was sent. */
static void stopped(struct gw_xfer *x, const char *what)
{
  hs_warn("gateway: the store %s only part of an RDMA upload: HTTP %u %s",
          what, gw_call_status(x->call), gw_call_error(x->call));
}

static int put_write(void *arg, uint64_t offset, const void *buf, size_t len)
{
  struct gw_xfer *x = arg;
  if (x->have_ck)
    hs_cksum_update(&x->ck, buf, len);
  if (offset + len == x->length) {
    x->last = ((const uint8_t *)buf)[len - 1];
    x->have_last = true;
    len--;
  }
  if (len && !gw_call_send(x->call, buf, len)) {
    stopped(x, "took");
    return -1;
  }
  return 0;
}

static int put_commit(void *arg, uint64_t bytes)
{
  struct gw_xfer *x = arg;
  if (!x->have_last || bytes != x->length)
    return -1;
  if (x->have_ck) {
    uint8_t got[HS_CKSUM_MAX];
    hs_cksum_final(&x->ck, got);
    if (memcmp(got, x->ck.expected, hs_cksum_len(x->ck.alg)) != 0) {
      hs_warn("gateway: %s of an RDMA upload does not match; not sent to "
              "the backend", hs_cksum_header(x->ck.alg));
      return -1;
    }
  }
  if (!gw_call_send(x->call, &x->last, 1)) {
    stopped(x, "took");
    return -1;
  }
  if (gw_call_head(x->call) != GW_HEAD_RESPONSE) {
    stopped(x, "answered");
    return -1;
  }
  unsigned st = gw_call_status(x->call);
  char sink[4096];
  while (gw_call_read(x->call, sink, sizeof sink) > 0)
    ;
  if (st / 100 != 2) {
    hs_warn("gateway: the backend refused an RDMA upload: HTTP %u", st);
    return -1;
  }
  return 0;
}

static void done(hipObjServerTransfer_t *t, hipObjServerStatus_t status,
                 uint64_t bytes, void *arg)
{
  struct gw_xfer *x = arg;
  struct hs_stats *s = x->gw->stats;
  if (status == hipObjServerSuccess) {
    hs_stat_add(&s->rdma_completed, 1);
    hs_stat_add(x->get ? &s->rdma_bytes_out : &s->rdma_bytes_in, bytes);
  } else
    hs_stat_add(&s->rdma_failures, 1);
  hipObjServerTransferRelease(t);
  xfer_free(x);
}

/* ---- answers ------------------------------------------------------------ */

/* Where the answer goes (front/rdma.h): the op's response. */
struct gw_answer {
  struct hs_err_where where;
  struct hs_rdma_answer a;
};

static void answer_init(struct gw_answer *ga, struct gw_op *op)
{
  ga->where = gw_op_error_where(op);
  ga->a = (struct hs_rdma_answer){gw_op_resp(op), gw_op_server(op)->stats,
                                  &ga->where, false};
}

static hipObjServerStatus_t start(struct gw_op *op, struct gw_xfer *x,
                                  const char *token, bool get,
                                  hipObjServerReply_t *reply)
{
  struct hs_rdma_io io = {get ? get_read : NULL, get ? NULL : put_write,
                          get ? NULL : put_commit, done, x};
  hipObjServerTransfer_t *t = NULL; /* released by done() */
  return hs_rdma_start(gw_op_server(op)->rdma, token, x->length, &io, reply,
                       &t);
}

/* ---- GET ---------------------------------------------------------------- */

static void rdma_get(struct gw_op *op, const char *token, uint64_t tlen,
                     struct gw_call_req *cr)
{
  struct gw_answer ga;
  struct gw_server *gw = gw_op_server(op);
  cr->payload_hash = HS_EMPTY_SHA256;
  cr->body = false;
  struct gw_call *call = NULL;
  enum hs_err err = gw_call_start(gw->be, cr, &call);
  if (err) {
    gw_op_error(op, err, NULL);
    return;
  }
  if (gw_call_head(call) != GW_HEAD_RESPONSE) {
    gw_op_backend_failed(op, call);
    return;
  }
  unsigned st = gw_call_status(call);
  if (st != 200 && st != 206) { /* 304, 412, 416, 404...: as they are */
    gw_op_backend_response(op, call, true);
    return;
  }
  uint64_t len = gw_call_length(call);
  if (len != tlen || len == 0) {
    gw_call_close(call);
    answer_init(&ga, op);
    hs_rdma_mismatch(&ga.a, tlen, len == UINT64_MAX ? 0 : len);
    return;
  }
  struct gw_xfer *x = calloc(1, sizeof *x);
  if (!x) {
    gw_call_close(call);
    gw_op_error(op, HS_ERR_NOMEM, NULL);
    return;
  }
  *x = (struct gw_xfer){.gw = gw, .call = call, .length = len, .get = true};
  /* The backend's status and headers, without its body, taken before the
   * transfer owns the call (data first, it has ended, and the call is
   * closed, when start returns); a refusal's answer replaces them. */
  gw_op_backend_headers(op, call);
  hipObjServerReply_t reply;
  hipObjServerStatus_t s = start(op, x, token, true, &reply);
  if (s != hipObjServerSuccess)
    xfer_free(x);
  answer_init(&ga, op);
  if (hs_rdma_answer(&ga.a, s, &reply, HS_ERR_RDMA_UNSERVABLE, NULL))
    hs_stat_add(&gw->stats->rdma_get, 1);
}

/* ---- PUT and UploadPart ------------------------------------------------- */

static enum hs_err checksum_of(const struct hs_headers *h, struct gw_xfer *x)
{
  for (size_t i = 0; i < h->n; i++) {
    enum hs_cksum_alg a = hs_cksum_alg_of_header(h->v[i].name);
    if (a == HS_CK_NONE)
      continue;
    if (x->have_ck)
      return HS_ERR_INVALID_REQUEST; /* more than one */
    enum hs_err err = hs_cksum_begin(&x->ck, a);
    if (!err)
      err = hs_cksum_expect(&x->ck, h->v[i].value, strlen(h->v[i].value));
    if (err)
      return err;
    x->have_ck = true;
  }
  return HS_OK;
}

static void rdma_put(struct gw_op *op, const char *token, uint64_t tlen,
                     struct gw_call_req *cr, const struct hs_headers *h)
{
  struct gw_server *gw = gw_op_server(op);
  struct gw_xfer *x = calloc(1, sizeof *x);
  if (!x) {
    gw_op_error(op, HS_ERR_NOMEM, NULL);
    return;
  }
  x->gw = gw;
  x->length = tlen;
  enum hs_err err = checksum_of(h, x);
  if (err) {
    xfer_free(x);
    gw_op_error(op, err, NULL);
    return;
  }
  cr->body = true;
  cr->length = tlen;
  cr->expect = true;
  err = gw_call_start(gw->be, cr, &x->call);
  if (err) {
    xfer_free(x);
    gw_op_error(op, err, NULL);
    return;
  }
  enum gw_head head = gw_call_head(x->call);
  if (head != GW_HEAD_CONTINUE) { /* refused (or failed) before the body */
    struct gw_call *call = x->call;
    x->call = NULL;
    xfer_free(x);
    if (head == GW_HEAD_RESPONSE)
      gw_op_backend_response(op, call, true);
    else
      gw_op_backend_failed(op, call);
    return;
  }
  hipObjServerReply_t reply;
  hipObjServerStatus_t s = start(op, x, token, false, &reply);
  if (s != hipObjServerSuccess)
    xfer_free(x);
  else
    hs_resp_header(gw_op_resp(op), "x-amz-request-id", gw_op_request_id(op));
  struct gw_answer ga;
  answer_init(&ga, op);
  if (hs_rdma_answer(&ga.a, s, &reply, HS_ERR_RDMA_UNSERVABLE, NULL))
    hs_stat_add(&gw->stats->rdma_put, 1);
}

void gw_rdma(struct gw_op *op, const char *token, struct gw_call_req *cr,
             const struct hs_headers *h)
{
  struct gw_server *gw = gw_op_server(op);
  hs_stat_add(&gw->stats->rdma_requests, 1);
  uint64_t tlen = 0;
  hipObjServerStatus_t st = hs_header_count(h, "x-amz-rdma-token") == 1
                                ? hipObjServerParseToken(token, strlen(token),
                                                         &tlen)
                                : hipObjServerBadToken;
  if (st == hipObjServerInvalidValue)
    st = hipObjServerBadToken;
  struct gw_answer ga;
  answer_init(&ga, op);
  if (st != hipObjServerSuccess)
    hs_rdma_answer(&ga.a, st, NULL, HS_ERR_RDMA_UNSERVABLE,
                   "This gateway serves hipObject RC tokens only; use plain "
                   "HTTP.");
  else if (!gw->rdma)
    hs_rdma_decline(&ga.a, HS_ERR_RDMA_UNSERVABLE,
                    "This gateway has no RDMA device; use plain HTTP.");
  else if (tlen == 0)
    hs_rdma_mismatch(&ga.a, 0, 0);
  else if (!strcmp(cr->method, "GET"))
    rdma_get(op, token, tlen, cr);
  else
    rdma_put(op, token, tlen, cr, h);
}
