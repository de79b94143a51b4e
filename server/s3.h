/* SPDX-License-Identifier: MIT */
/* The S3 side of one request, independent of the HTTP library: http.c hands
 * it the request line and headers, then the body bytes, and sends the
 * response it builds. Unit tests drive it the same way without a socket.
 *
 *   op = hs_op_new(srv, &req)
 *   if (hs_op_begin(op) == HS_STEP_BODY) {
 *     hs_op_body(op, data, n) ... ;   (any number of times)
 *     hs_op_end(op);
 *   }
 *   send hs_op_response(op)
 *   hs_op_free(op)                     (also when the body was cut short)
 */
#ifndef HS_S3_H
#define HS_S3_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "config.h"
#include "headers.h"
#include "message.h"
#include "stats.h"
#include "store/store.h"

struct hs_rdma;

/* What every request shares. Set up before the first request; the pointers
 * are not changed afterwards. */
struct hs_server {
  const struct hs_config *cfg;
  struct hs_store *store;
  struct hs_stats *stats;
  struct hs_rdma *rdma; /* NULL: RDMA unavailable (requests get 501) */
  atomic_uint_fast64_t next_id;
};

struct hs_op;

/* NULL when out of memory. The request's strings must outlive the op. */
struct hs_op *hs_op_new(struct hs_server *srv, const struct hs_request *req);
enum hs_step hs_op_begin(struct hs_op *op);
void hs_op_body(struct hs_op *op, const char *data, size_t n);
void hs_op_end(struct hs_op *op);
struct hs_response *hs_op_response(struct hs_op *op);
/* The S3 operation's name ("GetObject"), for the log. */
const char *hs_op_name(const struct hs_op *op);
/* Whether the op moved (or was asked to move) its payload by RDMA. */
const char *hs_op_path(const struct hs_op *op);
uint64_t hs_op_body_bytes(const struct hs_op *op);
/* Aborts whatever was not committed (a cut-short upload). Accepts NULL. */
void hs_op_free(struct hs_op *op);

/* The store's usage as the "store" member of the stats object. */
void hs_store_usage_json(struct hs_store *st, struct hs_buf *out);

/* The functions above as the HTTP front's handler (http.h); its app
 * context is the struct hs_server. */
struct hs_http_ops;
extern const struct hs_http_ops hs_s3_http_ops;

#endif
