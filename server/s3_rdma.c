/* SPDX-License-Identifier: MIT */
/* Requests that carry x-amz-rdma-token: GetObject, PutObject and UploadPart
 * (docs/protocol.md). The token is checked strictly: a malformed one gets
 * 400 InvalidArgument and no reply header. A well-formed one the server
 * cannot serve (--decline-rdma, no RDMA device, a DC token, a length that
 * is not the payload's) gets 501 with x-amz-rdma-reply: 501, so the client
 * falls back to plain HTTP. Otherwise the engine answers first: 200 (or 206
 * for a range) with x-amz-rdma-reply: 200:<server token>, and the payload
 * moves once the client says it is ready. The response never has a body. */
#include <stdio.h>
#include <string.h>

#include "range.h"
#include "rdma.h"
#include "rdma/token.h"
#include "s3_internal.h"

static bool carries_payload(enum hs_s3_kind k)
{
  return k == HS_OP_GET_OBJECT || k == HS_OP_PUT_OBJECT ||
         k == HS_OP_UPLOAD_PART;
}

static void decline(struct hs_op *op, enum hs_err why, const char *message)
{
  hs_stat_add(&op->srv->stats->rdma_declined, 1);
  hs_op_error_msg(op, why, message);
  hs_resp_header(&op->resp, "x-amz-rdma-reply", "501");
}

/* The engine's answer to a start. */
static bool answered(struct hs_op *op, enum hs_rdma_start res,
                     const char *reply)
{
  switch (res) {
  case HS_RDMA_STARTED:
    hs_resp_header(&op->resp, "x-amz-rdma-reply", reply);
    op->done = true;
    return true;
  case HS_RDMA_BAD_TOKEN:
    hs_stat_add(&op->srv->stats->rdma_bad_tokens, 1);
    hs_op_error(op, HS_ERR_RDMA_TOKEN);
    return false;
  case HS_RDMA_BUSY:
    hs_op_error_msg(op, HS_ERR_SLOW_DOWN,
                    "Every RDMA connection of this server is in use.");
    hs_resp_header(&op->resp, "x-amz-rdma-reply", "503");
    return false;
  default:
    decline(op, HS_ERR_RDMA_UNSERVABLE, NULL);
    return false;
  }
}

static void mismatch(struct hs_op *op, uint64_t token_len, uint64_t bytes)
{
  char m[200];
  snprintf(m, sizeof m,
           "The token's length (%llu) is not the number of bytes to move "
           "(%llu); use plain HTTP, or a token of that length.",
           (unsigned long long)token_len, (unsigned long long)bytes);
  decline(op, HS_ERR_RDMA_UNSERVABLE, m);
}

/* GET: the object (or the range asked for) into the client's buffer. The
 * token's length must be exactly the number of bytes to move. */
static void rdma_get(struct hs_op *op, const char *tok,
                     const struct ho_token *t)
{
  struct hs_obj_info info;
  struct hs_reader *r;
  enum hs_err err =
      hs_store_get(op->srv->store, op->bucket, op->key, &info, &r);
  if (err) {
    hs_op_error(op, err);
    return;
  }
  uint64_t first = 0, count = info.size;
  const char *range = hs_header_get(&op->req.headers, "range");
  enum hs_range_result rr =
      range ? hs_range_parse(range, strlen(range), info.size, &first, &count)
            : HS_RANGE_IGNORE;
  if (rr == HS_RANGE_UNSATISFIABLE) {
    hs_reader_close(r);
    hs_op_error(op, HS_ERR_INVALID_RANGE);
    return;
  }
  if (rr != HS_RANGE_OK) {
    first = 0;
    count = info.size;
  }
  if (t->len != count || count == 0) {
    hs_reader_close(r);
    mismatch(op, t->len, count);
    return;
  }
  char reply[HS_RDMA_REPLY_MAX];
  if (!answered(op, hs_rdma_get(op->srv->rdma, tok, r, first, count, reply),
                reply))
    return;
  hs_stat_add(&op->srv->stats->rdma_get, 1);
  hs_op_object_headers(op, &info);
  op->resp.status = rr == HS_RANGE_OK ? 206 : 200;
  if (rr == HS_RANGE_OK)
    hs_resp_headerf(&op->resp, "Content-Range", "bytes %llu-%llu/%llu",
                    (unsigned long long)first,
                    (unsigned long long)(first + count - 1),
                    (unsigned long long)info.size);
  hs_resp_headerf(&op->resp, "x-amz-rdma-bytes-transferred", "%llu",
                  (unsigned long long)count);
}

/* PUT and UploadPart: the token's length is the object's (or part's) size;
 * the request has no body. */
static void rdma_put(struct hs_op *op, const char *tok,
                     const struct ho_token *t)
{
  if (op->req.chunked || (op->req.has_length && op->req.content_length)) {
    hs_op_error_msg(op, HS_ERR_INVALID_ARGUMENT,
                    "A request with x-amz-rdma-token has no body.");
    return;
  }
  if (t->len == 0) {
    mismatch(op, 0, 0);
    return;
  }
  if (t->len > op->srv->cfg->max_object_size) {
    hs_op_error(op, HS_ERR_ENTITY_TOO_LARGE);
    return;
  }
  struct hs_writer *w = NULL;
  enum hs_err err;
  if (op->kind == HS_OP_UPLOAD_PART) {
    err = hs_op_part_args(op);
    if (!err)
      err = hs_store_upload_part(op->srv->store, op->bucket, op->key,
                                 op->upload_id, op->part_number, t->len, &w);
  } else {
    struct hs_obj_attrs attrs;
    err = hs_op_attrs(op, &attrs);
    if (!err)
      err = hs_store_put(op->srv->store, op->bucket, op->key, &attrs, t->len,
                         &w);
  }
  if (err) {
    hs_op_error(op, err);
    return;
  }
  if (op->has_content_md5)
    hs_writer_require_md5(w);
  char reply[HS_RDMA_REPLY_MAX];
  if (answered(op,
               hs_rdma_put(op->srv->rdma, tok, w, t->len,
                           op->has_content_md5 ? op->content_md5 : NULL,
                           reply),
               reply))
    hs_stat_add(&op->srv->stats->rdma_put, 1);
}

bool hs_s3_rdma(struct hs_op *op)
{
  const struct hs_headers *h = &op->req.headers;
  const char *tok = hs_header_get(h, "x-amz-rdma-token");
  if (!tok || !carries_payload(op->kind))
    return false;
  struct hs_stats *st = op->srv->stats;
  hs_stat_add(&st->rdma_requests, 1);
  op->rdma = true;
  struct ho_token t;
  if (hs_header_count(h, "x-amz-rdma-token") != 1 ||
      !ho_token_decode(tok, strlen(tok), &t)) {
    hs_stat_add(&st->rdma_bad_tokens, 1);
    hs_op_error(op, HS_ERR_RDMA_TOKEN);
    return true;
  }
  if (op->srv->cfg->decline_rdma)
    decline(op, HS_ERR_RDMA_DECLINED, NULL);
  else if (!op->srv->rdma)
    decline(op, HS_ERR_RDMA_UNSERVABLE,
            "This server has no RDMA device; use plain HTTP.");
  else if (t.transport != HO_TRANSPORT_RC)
    decline(op, HS_ERR_RDMA_UNSERVABLE,
            "This server serves RC tokens only; use plain HTTP.");
  else if (op->kind == HS_OP_GET_OBJECT)
    rdma_get(op, tok, &t);
  else
    rdma_put(op, tok, &t);
  return true;
}
