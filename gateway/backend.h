/* SPDX-License-Identifier: MIT */
/* The store behind hipobj-gateway: one S3 request at a time per call,
 * signed with the gateway's own credentials (SigV4, hs_sigv4_sign) and
 * moved by libcurl, both bodies streamed: the request's is pushed in with
 * gw_call_send as it arrives, the response's pulled out with gw_call_read
 * as it is needed, so that no body is ever held whole. A call is driven by
 * the thread that calls it (curl's multi interface, pumped in place): one
 * thread at a time per call, and it may move from thread to thread (the
 * HTTP thread starts a GET, the RDMA transfer thread reads its body).
 *
 * Connections to the backend are kept between calls (a pool of handles).
 * A call closed before it ended cuts its connection, so the backend never
 * sees the end of a body that did not all arrive: nothing half-written is
 * committed. */
#ifndef GW_BACKEND_H
#define GW_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"
#include "headers.h"
#include "uri.h"

struct gw_backend_config {
  const char *url;        /* http://HOST[:PORT], no path */
  const char *access_key; /* NULL: requests go unsigned */
  const char *secret_key;
  const char *region;     /* of the backend's signatures (us-east-1) */
  unsigned connect_timeout_ms;
  unsigned stall_timeout_s; /* a backend silent this long has failed */
};

struct gw_backend;
struct gw_call;

/* Errors: HS_ERR_INVALID_ARGUMENT (a URL that is not http://HOST[:PORT]),
 * HS_ERR_NOMEM, HS_ERR_IO (libcurl would not start); reason in why. */
enum hs_err gw_backend_open(const struct gw_backend_config *cfg,
                            struct gw_backend **out, struct hs_buf *why);
/* No call may be open. Accepts NULL. */
void gw_backend_close(struct gw_backend *be);

struct gw_call_req {
  const char *method;
  struct hs_span path;          /* as received: re-encoded canonically */
  const struct hs_query *query; /* the parameters to send */
  const struct hs_kv *headers;  /* to forward as they are; the caller has
                                   left out Host, Authorization, the
                                   client's signature headers and the
                                   hop-by-hop ones */
  size_t nheaders;
  const char *payload_hash;     /* x-amz-content-sha256 to sign and send */
  bool body;                    /* a body follows through gw_call_send */
  uint64_t length;              /* its length; UINT64_MAX: unknown
                                   (sent chunked) */
  bool expect;                  /* send Expect: 100-continue and let
                                   gw_call_head return at the backend's
                                   100, before any body byte */
  bool head;                    /* HEAD: the response has no body */
  const char *access_key;       /* the store identity to sign as (the
                                   client's own, from --credentials); */
  const char *secret_key;       /* NULL: the backend's keys */
};

/* Starts the request (nothing is sent until the call is pumped by one of
 * the functions below). Errors: HS_ERR_INVALID_URI, HS_ERR_NOMEM. */
enum hs_err gw_call_start(struct gw_backend *be, const struct gw_call_req *r,
                          struct gw_call **out);

/* Body bytes, in order. false: the call has ended (the backend answered
 * early, or failed): the rest of the body is not wanted. */
bool gw_call_send(struct gw_call *c, const void *p, size_t n);
/* The body is complete (needed only when its length was unknown). */
void gw_call_send_end(struct gw_call *c);

enum gw_head {
  GW_HEAD_RESPONSE, /* the status and headers are in */
  GW_HEAD_CONTINUE, /* (expect) the backend wants the body */
  GW_HEAD_FAILED    /* no answer: gw_call_error says why */
};
/* Waits for the response's status line and headers (or, with expect, for
 * the backend's 100 Continue). */
enum gw_head gw_call_head(struct gw_call *c);
unsigned gw_call_status(const struct gw_call *c);
/* The response's headers ("name" NUL "value" NUL ...), in order. */
bool gw_call_next_header(const struct gw_call *c, size_t *pos,
                         const char **name, const char **value);
/* The response's Content-Length, or UINT64_MAX if it had none. */
uint64_t gw_call_length(const struct gw_call *c);
/* Response body bytes: > 0 read, 0 at its end, -1 if it failed. */
long gw_call_read(struct gw_call *c, void *buf, size_t max);
/* Why the call failed (libcurl's words), "" if it did not. */
const char *gw_call_error(const struct gw_call *c);
/* Whether the call ended with its whole response read. */
bool gw_call_complete(const struct gw_call *c);
/* Ends the call; one that had not ended is cut off (its connection
 * closed). Accepts NULL. */
void gw_call_close(struct gw_call *c);

#endif
