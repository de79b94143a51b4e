/* SPDX-License-Identifier: MIT */
/* HTTP/1.1 through libmicrohttpd: one thread per connection, keep-alive,
 * limits on connections, idle time and header size. Each request is handed
 * to the S3 layer (s3.h). */
#ifndef HS_HTTP_H
#define HS_HTTP_H

#include <stddef.h>

#include "err.h"
#include "s3.h"

struct hs_http;

/* Binds cfg->listen_host:listen_port (port 0: any free port) and starts
 * serving. `bound` gets "http://ADDR:PORT" (IPv6 in brackets). Errors:
 * HS_ERR_IO with a reason in why. */
enum hs_err hs_http_start(struct hs_server *srv, struct hs_http **out,
                          char *bound, size_t bound_len, struct hs_buf *why);
/* Stops accepting, ends the connections, waits for their threads.
 * Accepts NULL. */
void hs_http_stop(struct hs_http *h);

#endif
