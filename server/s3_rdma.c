/* SPDX-License-Identifier: MIT */
/* Requests that carry x-amz-rdma-token (GetObject, PutObject, UploadPart):
 * the token is checked strictly (a malformed one gets 400 and no reply
 * header), a token the server cannot serve gets 501 with
 * x-amz-rdma-reply: 501, and the rest goes to the engine. */
#include <string.h>

#include "rdma/token.h"
#include "s3_internal.h"

static bool carries_payload(enum hs_s3_kind k)
{
  return k == HS_OP_GET_OBJECT || k == HS_OP_PUT_OBJECT ||
         k == HS_OP_UPLOAD_PART;
}

static void decline(struct hs_op *op, enum hs_err why)
{
  hs_stat_add(&op->srv->stats->rdma_declined, 1);
  hs_op_error(op, why);
  hs_resp_header(&op->resp, "x-amz-rdma-reply", "501");
  op->rdma_reply_sent = true;
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
  if (op->srv->cfg->decline_rdma) {
    decline(op, HS_ERR_RDMA_DECLINED);
    return true;
  }
  if (!op->srv->rdma || t.transport != HO_TRANSPORT_RC) {
    decline(op, HS_ERR_RDMA_UNSERVABLE);
    return true;
  }
  /* The engine is not wired in yet. */
  decline(op, HS_ERR_RDMA_UNSERVABLE);
  return true;
}
