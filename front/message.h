/* SPDX-License-Identifier: MIT */
/* One request and its response, as the HTTP front (http.c) hands them to a
 * server's handler and sends what it builds: the test server's S3 layer
 * (server/s3.h) and the gateway's proxy (gateway/proxy.c). Independent of
 * the HTTP library and of what serves the request. */
#ifndef HS_MESSAGE_H
#define HS_MESSAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"
#include "headers.h"

struct hs_request {
  const char *method;
  const char *target; /* raw request-target, NUL-terminated */
  struct hs_headers headers;
  bool has_length;          /* Content-Length was given */
  uint64_t content_length;
  bool chunked;             /* Transfer-Encoding: chunked */
  const char *peer;         /* "addr:port", for the log */
};

/* A body read in order from elsewhere (a store reader, the gateway's
 * backend): read gives up to max bytes, 0 at the end, -1 on an error (the
 * connection is then cut); close is called once, whether or not the body
 * was read. */
struct hs_source {
  long (*read)(void *ctx, char *buf, size_t max);
  void (*close)(void *ctx);
  void *ctx;
};

/* The response: status, headers, and at most one of an in-memory body or
 * a source. */
struct hs_response {
  unsigned status;
  struct hs_buf headers; /* "name" NUL "value" NUL, repeated */
  struct hs_buf body;
  uint64_t length;          /* the source's byte count; UINT64_MAX: a
                               source of unknown length */
  struct hs_source source;  /* owned when source.read is set */
  bool head;                /* no body, but Content-Length: head_length */
  uint64_t head_length;
  bool close;               /* close the connection afterwards */
};

enum hs_step { HS_STEP_RESPOND, HS_STEP_BODY };

void hs_resp_header(struct hs_response *r, const char *name,
                    const char *value);
void hs_resp_headerf(struct hs_response *r, const char *name,
                     const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Iterates the response headers: *pos starts at 0. */
bool hs_resp_next_header(const struct hs_response *r, size_t *pos,
                         const char **name, const char **value);
/* Forgets any response set so far (its source closed): status 200, and
 * only x-amz-request-id when request_id is not NULL. */
void hs_resp_reset(struct hs_response *r, const char *request_id);
/* Frees what the response holds. */
void hs_resp_free(struct hs_response *r);
/* The S3 error for err: status, x-amz-request-id (w->request_id) and the
 * XML document (none for a HEAD or a 304). */
void hs_resp_error(struct hs_response *r, enum hs_err err,
                   const char *message, const struct hs_err_where *w,
                   bool head);

#endif
