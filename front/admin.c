/* SPDX-License-Identifier: MIT */
#include "admin.h"

static const char *json_or_null(const struct hs_buf *b)
{
  return b->len && !b->failed ? b->data : NULL;
}

static void stats(struct hs_response *r, const struct hs_admin *a)
{
  struct hs_buf conns, more;
  hs_buf_init(&conns, 0);
  hs_buf_init(&more, 0);
  if (a->rdma) {
    hs_rdma_stats_json(a->rdma, &conns);
    hs_rdma_nics_json(a->rdma, &more);
  }
  if (a->members) {
    if (more.len)
      hs_buf_puts(&more, ",");
    a->members(a->ctx, &more);
  }
  hs_stats_json(a->stats, json_or_null(&conns), json_or_null(&more),
                &r->body);
  hs_buf_free(&conns);
  hs_buf_free(&more);
  hs_resp_header(r, "Content-Type", "application/json");
  hs_resp_header(r, "Cache-Control", "no-store");
  r->status = 200;
}

void hs_admin_answer(struct hs_response *r, enum hs_s3_kind k,
                     const struct hs_admin *a, const struct hs_err_where *w,
                     bool head)
{
  switch (k) {
  case HS_OP_ADMIN_STATS:
    stats(r, a);
    break;
  case HS_OP_ADMIN_HEALTH:
    hs_buf_puts(&r->body, "ok\n");
    hs_resp_header(r, "Content-Type", "text/plain");
    r->status = 200;
    break;
  case HS_OP_METHOD_NOT_ALLOWED:
    hs_resp_error(r, HS_ERR_METHOD_NOT_ALLOWED, NULL, w, head);
    break;
  default:
    hs_resp_error(r, HS_ERR_NO_KEY, "No such admin resource.", w, head);
  }
}
