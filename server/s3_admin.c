/* SPDX-License-Identifier: MIT */
/* The admin resources (front/admin.c, as in the gateway), with the
 * store's usage in the counters. */
#include "admin.h"
#include "s3_internal.h"

void hs_store_usage_json(struct hs_store *st, struct hs_buf *out)
{
  struct hs_store_usage u;
  hs_store_usage(st, &u);
  hs_buf_printf(out,
                "\"store\":{\"buckets\":%llu,\"objects\":%llu,\"bytes\":%llu,"
                "\"uploads\":%llu}",
                (unsigned long long)u.buckets, (unsigned long long)u.objects,
                (unsigned long long)u.bytes, (unsigned long long)u.uploads);
}

static void store_members(void *ctx, struct hs_buf *out)
{
  hs_store_usage_json(ctx, out);
}

void hs_s3_admin(struct hs_op *op)
{
  struct hs_admin a = {op->srv->stats, op->srv->rdma, store_members,
                       op->srv->store};
  struct hs_err_where w = {op->bucket, op->key, op->key_len, op->path.p,
                           op->path.len, op->request_id};
  hs_admin_answer(&op->resp, op->kind, &a, &w, op->method == HS_M_HEAD);
  op->done = true;
}
