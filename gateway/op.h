/* SPDX-License-Identifier: MIT */
/* One request through the gateway (struct gw_op) and its accessors, the
 * response's pieces: what proxy.c (the request's life) and rdma_path.c
 * (its RDMA transfers) share, in a file of its own so that neither calls
 * the other back (proxy.c -> rdma_path.c -> op.c). */
#ifndef GW_OP_H
#define GW_OP_H

#include <stdbool.h>
#include <stdint.h>

#include "auth/auth.h"
#include "auth/awschunk.h"
#include "auth/checksum.h"
#include "gateway.h"

/* The largest body read whole to check a deferred signature. */
#define GW_DEFERRED_MAX (8u << 20)

struct gw_op {
  struct gw_server *gw;
  struct hs_request req;
  char request_id[20];
  struct hs_response resp;
  struct hs_span path;
  struct hs_query query;     /* as received */
  struct hs_query fwd_query; /* without a presigned URL's parameters */
  struct hs_auth auth;
  enum gw_mode mode;
  const char *name;
  struct gw_call *call;      /* a forwarded request with a body */
  bool body_refused;         /* the backend answered before the body */
  char *held;                /* the last body piece, not yet sent */
  size_t held_n, held_cap;
  uint64_t body_bytes;
  bool done;
  /* a deferred signature: the body, checked before the backend hears of it */
  bool deferred;
  bool deferred_over; /* more than GW_DEFERRED_MAX: never forwarded */
  struct hs_buf deferred_body;
  /* aws-chunked bodies */
  bool chunked;
  struct hs_awschunk chunk;
  struct hs_cksum cksum;     /* announced by x-amz-trailer */
  enum hs_err body_err;      /* framing, a chunk's signature */
  uint64_t decoded_len;      /* x-amz-decoded-content-length */
  uint64_t decoded;
  char encoding[128];        /* Content-Encoding without aws-chunked */
};

/* The response: an S3 error, or the backend's answer (its status and
 * headers; its body streamed unless body is false). The response takes
 * the call. */
void gw_op_error(struct gw_op *op, enum hs_err err, const char *message);
void gw_op_backend_response(struct gw_op *op, struct gw_call *call,
                            bool body);
/* Only the backend's status and headers (its Content-Length left out); the
 * call stays the caller's. */
void gw_op_backend_headers(struct gw_op *op, struct gw_call *call);
const char *gw_op_request_id(const struct gw_op *op);
/* The backend could not be reached (503). Takes the call. */
void gw_op_backend_failed(struct gw_op *op, struct gw_call *call);
struct hs_response *gw_op_resp(struct gw_op *op);
/* What an error document of the op names (its resource, its request id). */
struct hs_err_where gw_op_error_where(const struct gw_op *op);
struct gw_server *gw_op_server(struct gw_op *op);

#endif
