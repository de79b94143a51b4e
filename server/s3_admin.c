/* SPDX-License-Identifier: MIT */
/* The admin resources, outside S3's name space (a bucket name cannot start
 * with '_'): GET /_hipobj/stats (JSON counters) and GET /_hipobj/health.
 * They need no signature: they reveal no data, only counts. */
#include "rdma.h"
#include "s3_internal.h"

void hs_s3_admin(struct hs_op *op)
{
  struct hs_response *r = &op->resp;
  switch (op->kind) {
  case HS_OP_ADMIN_STATS: {
    struct hs_store_usage u;
    hs_store_usage(op->srv->store, &u);
    struct hs_buf conns;
    hs_buf_init(&conns, 0);
    if (op->srv->rdma)
      hs_rdma_stats_json(op->srv->rdma, &conns);
    hs_stats_json(op->srv->stats, &u,
                  conns.len && !conns.failed ? conns.data : NULL, &r->body);
    hs_buf_free(&conns);
    hs_resp_header(r, "Content-Type", "application/json");
    hs_resp_header(r, "Cache-Control", "no-store");
    r->status = 200;
    op->done = true;
    break;
  }
  case HS_OP_ADMIN_HEALTH:
    hs_buf_puts(&r->body, "ok\n");
    hs_resp_header(r, "Content-Type", "text/plain");
    r->status = 200;
    op->done = true;
    break;
  case HS_OP_METHOD_NOT_ALLOWED:
    hs_op_error(op, HS_ERR_METHOD_NOT_ALLOWED);
    break;
  default:
    hs_op_error_msg(op, HS_ERR_NO_KEY, "No such admin resource.");
  }
}
