/* SPDX-License-Identifier: MIT */
/* hipobj-gateway: an S3 endpoint in front of an existing S3 store that
 * adds hipObject's RDMA data path (docs/gateway.md).
 *
 *   http.c (front/)   the HTTP front, one thread per connection
 *   proxy.c           one request: authenticate the client, then forward
 *                     it, or serve its token by RDMA (rdma_path.c)
 *   op.c              the request's response: proxy.c's and rdma_path.c's
 *   rdma_path.c       GetObject, PutObject and UploadPart with a token:
 *                     the payload streams between the backend and the
 *                     client's buffer through the server library
 *   backend.c         the store behind: re-signed, streamed S3 requests
 *
 * The gateway keeps no state between requests: several of them behind one
 * name serve the same clients. */
#ifndef GW_GATEWAY_H
#define GW_GATEWAY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "config.h"
#include "message.h"
#include "stats.h"

struct hs_rdma;

struct gw_config {
  struct hs_config front; /* the options shared with hipobj-test-server */
  struct gw_backend_config backend;
  bool public_stats; /* /_hipobj/stats to anyone, not only loopback */
  bool shared_store_identity; /* users may act as one store identity */
};

struct gw_server {
  const struct gw_config *cfg;
  struct gw_backend *be;
  struct hs_stats *stats;
  struct hs_rdma *rdma; /* NULL: requests with a token get 501 */
  atomic_uint_fast64_t next_id;
  atomic_uint_fast64_t backend_failures; /* answered 503 */
};

/* The HTTP front's handler (front/http.h); its app context is the
 * struct gw_server. */
extern const struct hs_http_ops gw_http_ops;

/* ---- for proxy.c, rdma_path.c and op.c ----------------------------------- */

struct gw_op;

enum gw_mode { GW_FORWARD, GW_LOCAL, GW_RDMA };

/* Headers of the client's request that go to the backend as they are (an
 * allow-list: x-amz-* but the client's signature and RDMA token, Content-
 * Type/MD5/Encoding/Language/Disposition, Cache-Control, Expires, Range,
 * If-*). SIZE_MAX when more than cap would go: the caller answers 431. */
size_t gw_forward_headers(const struct hs_headers *in, struct hs_kv *out,
                          size_t cap);
/* A request with x-amz-rdma-token for GetObject, PutObject or UploadPart,
 * authenticated: answers it (rdma_path.c). */
void gw_rdma(struct gw_op *op, const char *token, struct gw_call_req *r,
             const struct hs_headers *h);

#endif
