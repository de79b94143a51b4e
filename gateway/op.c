/* SPDX-License-Identifier: MIT */
/* A request's response through the gateway (op.h). */
#include "op.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

struct hs_response *gw_op_resp(struct gw_op *op) { return &op->resp; }
struct gw_server *gw_op_server(struct gw_op *op) { return op->gw; }

struct hs_err_where gw_op_error_where(const struct gw_op *op)
{
  return (struct hs_err_where){NULL, NULL, 0, op->path.p, op->path.len,
                               op->request_id};
}

void gw_op_error(struct gw_op *op, enum hs_err err, const char *message)
{
  struct hs_err_where w = gw_op_error_where(op);
  hs_resp_error(&op->resp, err, message, &w, !strcmp(op->req.method, "HEAD"));
  op->done = true;
}

/* Hop-by-hop headers and those the front writes itself. */
static bool front_owns(const char *name)
{
  static const char *const own[] = {
      "connection", "keep-alive", "transfer-encoding", "content-length",
      "date",       "server",     "upgrade",           "trailer",
      "proxy-connection", "te"};
  for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
    if (strcasecmp(name, own[i]) == 0)
      return true;
  return false;
}

static long source_read(void *ctx, char *buf, size_t max)
{
  return gw_call_read(ctx, buf, max);
}

static void source_close(void *ctx) { gw_call_close(ctx); }

const char *gw_op_request_id(const struct gw_op *op)
{
  return op->request_id;
}

void gw_op_backend_headers(struct gw_op *op, struct gw_call *call)
{
  hs_resp_reset(&op->resp, NULL);
  struct hs_response *r = &op->resp;
  r->status = gw_call_status(call);
  op->done = true;
  size_t pos = 0;
  const char *name, *value;
  while (gw_call_next_header(call, &pos, &name, &value))
    /* x-amz-rdma-*: only this gateway's own RDMA path speaks of RDMA to
     * its client; a store's would read as a transfer that never ran */
    if (!front_owns(name) && strncasecmp(name, "x-amz-rdma-", 11) != 0)
      hs_resp_header(r, name, value);
}

void gw_op_backend_response(struct gw_op *op, struct gw_call *call, bool body)
{
  gw_op_backend_headers(op, call);
  struct hs_response *r = &op->resp;
  uint64_t len = gw_call_length(call);
  if (!strcmp(op->req.method, "HEAD")) {
    r->head = true;
    r->head_length = len == UINT64_MAX ? 0 : len;
    gw_call_close(call);
  } else if (!body || r->status == 204 || r->status == 304 || len == 0) {
    gw_call_close(call);
  } else {
    r->source = (struct hs_source){source_read, source_close, call};
    r->length = len;
  }
}

void gw_op_backend_failed(struct gw_op *op, struct gw_call *call)
{
  char m[512];
  snprintf(m, sizeof m, "The store behind this gateway cannot be reached: "
                        "%s.", call ? gw_call_error(call) : "no memory");
  gw_call_close(call);
  atomic_fetch_add(&op->gw->backend_failures, 1);
  gw_op_error(op, HS_ERR_UNAVAILABLE, m);
  hs_resp_header(&op->resp, "Retry-After", "1");
}
