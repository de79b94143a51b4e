/* SPDX-License-Identifier: MIT */
/* The admin resources, outside S3's name space (a bucket name cannot start
 * with '_'): GET /_hipobj/stats (JSON counters) and GET /_hipobj/health.
 * They need no signature: they reveal no data, only counts. */
#include "rdma.h"
#include "s3_internal.h"

void hs_store_usage_json(struct hs_store *st, struct hs_buf *out)
{
  struct hs_store_usage u;
  hs_store_usage(st, &u);
  hs_buf_printf(out,
                "{\"buckets\":%llu,\"objects\":%llu,\"bytes\":%llu,"
                "\"uploads\":%llu}",
                (unsigned long long)u.buckets, (unsigned long long)u.objects,
                (unsigned long long)u.bytes, (unsigned long long)u.uploads);
}

static const char *json_or_null(const struct hs_buf *b)
{
  return b->len && !b->failed ? b->data : NULL;
}

void hs_s3_admin(struct hs_op *op)
{
  struct hs_response *r = &op->resp;
  switch (op->kind) {
  case HS_OP_ADMIN_STATS: {
    struct hs_buf conns, store;
    hs_buf_init(&conns, 0);
    hs_buf_init(&store, 0);
    if (op->srv->rdma)
      hs_rdma_stats_json(op->srv->rdma, &conns);
    hs_store_usage_json(op->srv->store, &store);
    hs_stats_json(op->srv->stats, json_or_null(&conns), json_or_null(&store),
                  &r->body);
    hs_buf_free(&conns);
    hs_buf_free(&store);
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
