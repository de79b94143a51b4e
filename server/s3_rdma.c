/* SPDX-License-Identifier: MIT */
/* Requests that carry x-amz-rdma-token: GetObject, PutObject and UploadPart
 * (docs/protocol.md). The token is checked strictly: a malformed one gets
 * 400 InvalidArgument and no reply header. A well-formed one the server
 * cannot serve (--decline-rdma, no RDMA device, a DC token, a length that
 * is not the payload's) gets 501 with x-amz-rdma-reply: 501, so the client
 * falls back to plain HTTP; so does a token of another protocol's shape
 * (NVIDIA cuObject's DC descriptor), whose client falls back the same way
 * but would stop at a 400. Otherwise the engine answers first: 200 (or 206
 * for a range) with x-amz-rdma-reply: 200:<server token>, and the payload
 * moves once the client says it is ready. The response never has a body. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "rdma_store.h"
#include "rdma/token.h"
#include "s3_internal.h"

/* The SHA-256 of no bytes. */
static const uint8_t empty_sha256[HS_SHA256_LEN] = {
    0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4,
    0xc8, 0x99, 0x6f, 0xb9, 0x24, 0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b,
    0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55};

/* NVIDIA cuObject's descriptor: CUOBJ_DESC_LEN visible characters (no ':'),
 * optionally followed by ":ADDR:SIZE" in hex, as its clients append the
 * buffer's address and size. Its length alone tells it from ours
 * (HO_TOKEN_HEX), so this never shadows a malformed hipObject token. */
#define CUOBJ_DESC_LEN 81
#define CUOBJ_FIELD_MAX 16

static bool hex_field(const char *p, size_t n)
{
  if (n == 0 || n > CUOBJ_FIELD_MAX)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!isxdigit((unsigned char)p[i]))
      return false;
  return true;
}

static bool cuobject_descriptor(const char *t, size_t n)
{
  if (n < CUOBJ_DESC_LEN)
    return false;
  for (size_t i = 0; i < CUOBJ_DESC_LEN; i++)
    if (t[i] <= ' ' || t[i] > '~' || t[i] == ':')
      return false;
  if (n == CUOBJ_DESC_LEN)
    return true;
  const char *addr = t + CUOBJ_DESC_LEN + 1;
  const char *end = t + n;
  const char *colon = memchr(addr, ':', (size_t)(end - addr));
  return t[CUOBJ_DESC_LEN] == ':' && colon &&
         hex_field(addr, (size_t)(colon - addr)) &&
         hex_field(colon + 1, (size_t)(end - colon - 1));
}

bool hs_s3_token_route(enum hs_s3_kind k)
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

/* GET: the object (or the range asked for) into the client's buffer,
 * decided as over HTTP (conditions, range) before any RDMA. The token's
 * length must be exactly the number of bytes to move. A declared
 * x-amz-content-sha256 is the empty body's: the request has none. */
static void rdma_get(struct hs_op *op, const char *tok,
                     const struct ho_token *t)
{
  if (op->auth.payload == HS_PAYLOAD_SHA256 &&
      !hs_mem_equal(op->auth.expected, empty_sha256, HS_SHA256_LEN)) {
    hs_op_error(op, HS_ERR_SHA256_MISMATCH);
    return;
  }
  struct hs_get g;
  if (!hs_op_get_prepare(op, true, &g))
    return;
  if (t->len != g.count || g.count == 0) {
    hs_reader_close(g.reader);
    mismatch(op, t->len, g.count);
    return;
  }
  char reply[HS_RDMA_REPLY_MAX];
  if (!answered(op,
                hs_rdma_get(op->srv->rdma, tok, g.reader, g.first, g.count,
                            reply),
                reply))
    return;
  hs_stat_add(&op->srv->stats->rdma_get, 1);
  hs_op_get_headers(op, &g);
  hs_resp_headerf(&op->resp, "x-amz-rdma-bytes-transferred", "%llu",
                  (unsigned long long)g.count);
}

/* PUT and UploadPart: the token's length is the object's (or part's) size;
 * the writer is chosen as over HTTP, and the payload that arrives is
 * checked as an HTTP body is (x-amz-content-sha256, x-amz-checksum-*,
 * Content-MD5) before the commit. */
static void rdma_put(struct hs_op *op, const char *tok,
                     const struct ho_token *t)
{
  if (t->len == 0) {
    mismatch(op, 0, 0);
    return;
  }
  if (!hs_op_open_writer(op, t->len))
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
  char reply[HS_RDMA_REPLY_MAX];
  if (answered(op, hs_rdma_put(op->srv->rdma, tok, w, t->len, &checks, reply),
               reply))
    hs_stat_add(&op->srv->stats->rdma_put, 1);
}

bool hs_s3_rdma(struct hs_op *op)
{
  const struct hs_headers *h = &op->req.headers;
  const char *tok = hs_header_get(h, "x-amz-rdma-token");
  if (!tok || !hs_s3_token_route(op->kind))
    return false;
  struct hs_stats *st = op->srv->stats;
  hs_stat_add(&st->rdma_requests, 1);
  op->rdma = true;
  struct ho_token t;
  if (op->req.chunked || (op->req.has_length && op->req.content_length)) {
    hs_op_error_msg(op, HS_ERR_INVALID_ARGUMENT,
                    "A request with x-amz-rdma-token has no body.");
    return true;
  }
  if (hs_header_count(h, "x-amz-rdma-token") == 1 &&
      cuobject_descriptor(tok, strlen(tok))) {
    decline(op, HS_ERR_RDMA_UNSERVABLE,
            "This server serves hipObject RC tokens only, not cuObject "
            "descriptors; use plain HTTP.");
    return true;
  }
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
