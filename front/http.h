/* SPDX-License-Identifier: MIT */
/* HTTP/1.1 through libmicrohttpd: one thread per connection, keep-alive,
 * limits on connections, idle time and header size. Each request is handed
 * to an application through struct hs_http_ops: the S3 layer (server/s3.h,
 * hs_s3_http_ops) in hipobj-test-server, the proxy in hipobj-gateway.
 * Handlers run on the connection's thread and may block. */
#ifndef HS_HTTP_H
#define HS_HTTP_H

#include <stddef.h>

#include "config.h"
#include "err.h"
#include "message.h"
#include "stats.h"

struct hs_http;

/* One request's handler, in the order of s3.h's life of an op: op_new
 * (NULL: out of memory), begin (HS_STEP_BODY: the body follows), body any
 * number of times, end, response, then free (also when the body was cut
 * short). name and path are for the request log. Initialised by position. */
struct hs_http_ops {
  void *(*op_new)(void *app, const struct hs_request *req);
  enum hs_step (*begin)(void *op);
  void (*body)(void *op, const char *data, size_t n);
  void (*end)(void *op);
  struct hs_response *(*response)(void *op);
  const char *(*name)(const void *op);
  const char *(*path)(const void *op);
  uint64_t (*body_bytes)(const void *op);
  void (*free)(void *op);
};

/* What the front needs besides the handler. */
struct hs_http_app {
  const struct hs_config *cfg; /* listen address, limits, log_requests */
  struct hs_stats *stats;      /* status classes, bytes sent */
  const struct hs_http_ops *ops;
  void *ctx;                   /* passed to op_new */
  const char *server_name;     /* the Server header */
};

/* Binds cfg->listen_host:listen_port (port 0: any free port) and starts
 * serving. `bound` gets "http://ADDR:PORT" (IPv6 in brackets). The app must
 * outlive hs_http_stop. Errors: HS_ERR_IO with a reason in why. */
enum hs_err hs_http_start(const struct hs_http_app *app, struct hs_http **out,
                          char *bound, size_t bound_len, struct hs_buf *why);
/* Stops accepting, ends the connections, waits for their threads.
 * Accepts NULL. */
void hs_http_stop(struct hs_http *h);

#endif
