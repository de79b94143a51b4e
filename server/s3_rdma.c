/* SPDX-License-Identifier: MIT */
/* Requests that carry x-amz-rdma-token: GetObject, PutObject and UploadPart
 * (docs/protocol.md). The token is checked strictly: a malformed one gets
 * 400 InvalidArgument and no reply header. A well-formed one the server
 * cannot serve (--decline-rdma, no RDMA device, a DC token, a length that
 * is not the payload's) gets 501 with x-amz-rdma-reply: 501, so the client
 * falls back to plain HTTP; so does a token of another protocol's shape
 * (NVIDIA cuObject's DC descriptor), whose client falls back the same way
 * but would stop at a 400. The token's rules are the server library's
 * (hipObjServerParseToken), the answer the front's (hs_rdma_answer), as
 * in hipobj-gateway. Otherwise the engine answers first: 200 (or 206
 * for a range) with x-amz-rdma-reply: 200:<server token>, and the payload
 * moves once the client says it is ready. The response never has a body. */
#include <stdio.h>
#include <string.h>

#include "rdma_store.h"
#include "s3_internal.h"

/* The SHA-256 of no bytes. */
static const uint8_t empty_sha256[HS_SHA256_LEN] = {
    0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4,
    0xc8, 0x99, 0x6f, 0xb9, 0x24, 0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b,
    0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55};

/* Where the answer goes (front/rdma.h), for the op's response. */
struct rdma_op {
  struct hs_op *op;
  struct hs_err_where where;
  struct hs_rdma_answer a;
};

static void rdma_op_init(struct rdma_op *ro, struct hs_op *op)
{
  ro->op = op;
  ro->where = (struct hs_err_where){op->bucket, op->key, op->key_len,
                                    op->path.p, op->path.len, op->request_id};
  ro->a = (struct hs_rdma_answer){&op->resp, op->srv->stats, &ro->where,
                                  false};
  op->done = true; /* every path below answers */
}

/* GET: the object (or the range asked for) into the client's buffer,
 * decided as over HTTP (conditions, range) before any RDMA. The token's
 * length must be exactly the number of bytes to move. A declared
 * x-amz-content-sha256 is the empty body's: the request has none. */
static void rdma_get(struct rdma_op *ro, const char *tok, uint64_t tlen)
{
  struct hs_op *op = ro->op;
  if (op->auth.payload == HS_PAYLOAD_SHA256 &&
      !hs_mem_equal(op->auth.expected, empty_sha256, HS_SHA256_LEN)) {
    hs_op_error(op, HS_ERR_SHA256_MISMATCH);
    return;
  }
  struct hs_get g;
  if (!hs_op_get_prepare(op, true, &g))
    return;
  if (tlen != g.count || g.count == 0) {
    hs_reader_close(g.reader);
    hs_rdma_mismatch(&ro->a, tlen, g.count);
    return;
  }
  hipObjServerReply_t rep;
  hipObjServerStatus_t st =
      hs_rdma_get(op->srv->rdma, tok, g.reader, g.first, g.count, &rep);
  if (!hs_rdma_answer(&ro->a, st, &rep, HS_ERR_RDMA_UNSERVABLE, NULL))
    return;
  hs_stat_add(&op->srv->stats->rdma_get, 1);
  hs_op_get_headers(op, &g);
}

/* PUT and UploadPart: the token's length is the object's (or part's) size;
 * the writer is chosen as over HTTP, and the payload that arrives is
 * checked as an HTTP body is (x-amz-content-sha256, x-amz-checksum-*,
 * Content-MD5) before the commit. */
static void rdma_put(struct rdma_op *ro, const char *tok, uint64_t tlen)
{
  struct hs_op *op = ro->op;
  if (tlen == 0) {
    hs_rdma_mismatch(&ro->a, 0, 0);
    return;
  }
  if (!hs_op_open_writer(op, tlen))
    return;
  struct hs_writer *w = op->writer;
  op->writer = NULL;
  if (op->cksum.alg && op->cksum.have_expected) { /* kept if the bytes match it; nothing is otherwise */
    char b64[64];
    hs_base64_encode(op->cksum.expected, hs_cksum_len(op->cksum.alg), b64);
    if (!hs_attrs_add_checksum(hs_writer_attrs(w), op->cksum.alg, b64,
                               op->kind == HS_OP_PUT_OBJECT ? "FULL_OBJECT"
                                                            : NULL)) {
      hs_writer_abort(w);
      hs_op_error(op, HS_ERR_INTERNAL);
      return;
    }
  }
  struct hs_rdma_checks checks = {
      .content_md5 = op->has_content_md5 ? op->content_md5 : NULL,
      .sha256 = op->auth.payload == HS_PAYLOAD_SHA256 ? op->auth.expected
                                                      : NULL,
      .cksum = op->cksum.alg ? &op->cksum : NULL};
  hipObjServerReply_t rep;
  hipObjServerStatus_t st =
      hs_rdma_put(op->srv->rdma, tok, w, tlen, &checks, &rep);
  if (hs_rdma_answer(&ro->a, st, &rep, HS_ERR_RDMA_UNSERVABLE, NULL))
    hs_stat_add(&op->srv->stats->rdma_put, 1);
}

/* The token's checks in the library (hipObjServerParseToken: malformed,
 * another protocol's, not RC), then the server's own declines. */
static bool servable(struct rdma_op *ro, const char *tok, uint64_t *tlen)
{
  struct hs_op *op = ro->op;
  hipObjServerStatus_t st =
      hs_header_count(&op->req.headers, "x-amz-rdma-token") == 1
          ? hipObjServerParseToken(tok, strlen(tok), tlen)
          : hipObjServerBadToken;
  if (st == hipObjServerInvalidValue)
    st = hipObjServerBadToken;
  if (st != hipObjServerSuccess)
    hs_rdma_answer(&ro->a, st, NULL, HS_ERR_RDMA_UNSERVABLE,
                   "This server serves hipObject RC tokens only; use plain "
                   "HTTP.");
  else if (op->srv->cfg->decline_rdma)
    hs_rdma_decline(&ro->a, HS_ERR_RDMA_DECLINED, NULL);
  else if (!op->srv->rdma)
    hs_rdma_decline(&ro->a, HS_ERR_RDMA_UNSERVABLE,
                    "This server has no RDMA device; use plain HTTP.");
  else
    return true;
  return false;
}

bool hs_s3_rdma(struct hs_op *op)
{
  const char *tok = hs_header_get(&op->req.headers, "x-amz-rdma-token");
  if (!tok || !hs_s3_token_route(op->kind))
    return false;
  hs_stat_add(&op->srv->stats->rdma_requests, 1);
  op->rdma = true;
  if (op->req.chunked || (op->req.has_length && op->req.content_length)) {
    hs_op_error_msg(op, HS_ERR_INVALID_ARGUMENT,
                    "A request with x-amz-rdma-token has no body.");
    return true;
  }
  struct rdma_op ro;
  rdma_op_init(&ro, op);
  uint64_t tlen = 0;
  if (!servable(&ro, tok, &tlen))
    return true;
  if (op->kind == HS_OP_GET_OBJECT)
    rdma_get(&ro, tok, tlen);
  else
    rdma_put(&ro, tok, tlen);
  return true;
}
