/* SPDX-License-Identifier: MIT */
/* One request through the gateway. The client is authenticated with the
 * gateway's credentials, completely, before anything reaches the backend
 * or the RDMA path (front/auth). Then:
 *   - /_hipobj/ resources are answered here, as by the test server
 *     (front/admin.c);
 *   - GetObject, PutObject and UploadPart with x-amz-rdma-token go to
 *     rdma_path.c;
 *   - everything else is forwarded: the backend gets the same method, path,
 *     query and headers, signed with the gateway's own credentials, and the
 *     body as it arrives; its answer (status, headers, body) streams back.
 * The backend hears of a request only once its sender is authenticated.
 * A header-signed request with a body and no x-amz-content-sha256 (a
 * deferred signature, checked over the body's digest) is read whole into
 * memory, at most GW_DEFERRED_MAX bytes, and its signature checked before
 * the backend's call starts; a larger one is refused (InvalidRequest: it
 * must declare its hash). GET, HEAD and DELETE take no body: one is
 * refused, after its signature is checked. A body whose hash is declared
 * (the signature is checked with the headers; the backend checks the hash
 * too) or that is aws-chunked streams, its last piece held back until
 * every check has passed, so a forged body never reaches the backend
 * whole and is never committed. An aws-chunked body
 * (STREAMING-*) is decoded on the way: each chunk's signature and the
 * trailer's checksum are checked here, the store gets the payload with its
 * decoded length, and the last piece waits for every check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "admin.h"
#include "auth/auth.h"
#include "auth/awschunk.h"
#include "auth/checksum.h"
#include "auth/credentials.h"
#include "auth/sigv4.h"
#include "gateway.h"
#include "op.h"
#include "http.h"
#include "rdma.h"
#include "xml.h"

#define FWD_HEADERS_MAX 96

/* ---- what is forwarded -------------------------------------------------- */

/* Request headers the store gets (an allow-list): what S3 operations
 * read. Not the client's conversation with the gateway (its signature, the
 * RDMA token, hop-by-hop headers), and nothing else: a header the gateway
 * does not know is never handed to a store that might act on it. */
static bool forwarded(const char *name)
{
  static const char *const mine[] = {"x-amz-date", "x-amz-content-sha256",
                                     "x-amz-security-token"};
  if (strncasecmp(name, "x-amz-", 6) == 0) {
    if (strncasecmp(name, "x-amz-rdma-", 11) == 0)
      return false;
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++)
      if (strcasecmp(name, mine[i]) == 0)
        return false;
    return true;
  }
  static const char *const allow[] = {
      "content-type",     "content-md5",         "content-encoding",
      "content-language", "content-disposition", "cache-control",
      "expires",          "range"};
  for (size_t i = 0; i < sizeof allow / sizeof allow[0]; i++)
    if (strcasecmp(name, allow[i]) == 0)
      return true;
  return strncasecmp(name, "if-", 3) == 0; /* If-Match, If-None-Match... */
}

size_t gw_forward_headers(const struct hs_headers *in, struct hs_kv *out,
                          size_t cap)
{
  size_t n = 0;
  for (size_t i = 0; i < in->n; i++) {
    if (!forwarded(in->v[i].name))
      continue;
    if (n == cap)
      return SIZE_MAX; /* never a silent drop of what was signed */
    out[n++] = in->v[i];
  }
  return n;
}

/* The query without a presigned URL's signature: the backend gets the
 * gateway's. */
static void forward_query(struct gw_op *op)
{
  op->fwd_query.n = 0;
  op->fwd_query.arena = NULL;
  for (size_t i = 0; i < op->query.n; i++)
    if (strncasecmp(op->query.p[i].name, "X-Amz-", 6) != 0)
      op->fwd_query.p[op->fwd_query.n++] = op->query.p[i];
}

static const char *payload_hash(const struct gw_op *op, char hex[65])
{
  if (op->auth.payload != HS_PAYLOAD_SHA256)
    return HS_UNSIGNED_PAYLOAD;
  hs_hex(op->auth.expected, HS_SHA256_LEN, hex);
  return hex;
}

/* ---- life cycle --------------------------------------------------------- */

static void *op_new(void *app, const struct hs_request *req)
{
  struct gw_server *gw = app;
  struct gw_op *op = calloc(1, sizeof *op);
  if (!op)
    return NULL;
  op->gw = gw;
  op->req = *req;
  op->name = "Forward";
  hs_stat_add(&gw->stats->requests[hs_method_of(req->method)], 1);
  uint64_t id = atomic_fetch_add(&gw->next_id, 1);
  snprintf(op->request_id, sizeof op->request_id, "%016llX",
           (unsigned long long)id);
  hs_buf_init(&op->resp.headers, 64u << 10);
  hs_buf_init(&op->resp.body, 0);
  hs_buf_init(&op->deferred_body, GW_DEFERRED_MAX);
  op->resp.status = 200;
  return op;
}

static void op_free(void *p)
{
  struct gw_op *op = p;
  gw_call_close(op->call); /* a body cut short: the backend never sees
                              its end */
  hs_resp_free(&op->resp);
  hs_auth_free(&op->auth);
  hs_cksum_free(&op->cksum);
  hs_query_free(&op->query);
  hs_buf_free(&op->deferred_body);
  free(op->held);
  free(op);
}

static struct hs_sigv4_request sigv4_request(const struct gw_op *op)
{
  return (struct hs_sigv4_request){.method = op->req.method,
                                   .path = op->path,
                                   .query = &op->query,
                                   .headers = &op->req.headers};
}

static bool is_auth_failure(enum hs_err err)
{
  return err == HS_ERR_ACCESS_DENIED || err == HS_ERR_SIGNATURE ||
         err == HS_ERR_UNKNOWN_ACCESS_KEY || err == HS_ERR_AUTH_HEADER ||
         err == HS_ERR_AUTH_QUERY || err == HS_ERR_TIME_SKEWED ||
         err == HS_ERR_EXPIRED;
}

static bool has_body(const struct gw_op *op)
{
  return op->req.chunked || (op->req.has_length && op->req.content_length);
}

/* No S3 operation sends a body with these. */
static bool bodiless_method(const struct gw_op *op)
{
  const char *m = op->req.method;
  return !strcmp(m, "GET") || !strcmp(m, "HEAD") || !strcmp(m, "DELETE");
}

/* Which S3 operation the request is, by the test server's router
 * (front/s3_ops.h): GetObject, PutObject and UploadPart are what a token
 * may carry (HS_S3_PAYLOAD). */
static enum hs_s3_kind s3_kind(const struct gw_op *op)
{
  char bucket[HS_BUCKET_MAX + 1], key[HS_KEY_MAX + 1];
  size_t key_len = 0;
  if (hs_path_parse(op->path.p, op->path.len, bucket, key, &key_len))
    return HS_OP_NOT_FOUND;
  return hs_s3_route(op->req.method, bucket[0] != '\0', key_len > 0,
                     &op->query,
                     hs_header_get(&op->req.headers, "x-amz-copy-source") !=
                         NULL);
}

static enum hs_err authenticate(struct gw_op *op, bool rdma)
{
  struct hs_sigv4_request r = sigv4_request(op);
  const struct hs_auth_config *cfg = &op->gw->cfg->front.auth;
  enum hs_err err = hs_auth_begin(&op->auth, cfg, &r, (int64_t)time(NULL));
  if (!err && (rdma || !has_body(op)))
    err = hs_auth_no_body(&op->auth, cfg, &r, rdma);
  if (is_auth_failure(err))
    hs_stat_add(&op->gw->stats->auth_failures, 1);
  return err;
}

/* "127.x.y.z:port", "[::1]:port" or "[::ffff:127.x.y.z]:port" (the front's
 * form of the peer's address). */
static bool loopback_peer(const char *peer)
{
  return peer && (!strncmp(peer, "127.", 4) || !strncmp(peer, "[::1]:", 6) ||
                  !strncmp(peer, "[::ffff:127.", 12));
}

static void gateway_members(void *ctx, struct hs_buf *out)
{
  const struct gw_server *gw = ctx;
  hs_buf_printf(out, "\"gateway\":{\"backend_failures\":%llu}",
                (unsigned long long)atomic_load(&gw->backend_failures));
}

/* The admin resources, answered as by the test server (front/admin.c);
 * the counters only to the gateway's own host unless --public-stats. */
static void local(struct gw_op *op, enum hs_s3_kind k)
{
  op->mode = GW_LOCAL;
  op->name = hs_s3_kind_name(k);
  op->done = true;
  if (k == HS_OP_ADMIN_STATS && !op->gw->cfg->public_stats &&
      !loopback_peer(op->req.peer)) {
    gw_op_error(op, HS_ERR_ACCESS_DENIED, "The gateway's counters are "
                "served to its own host only (--public-stats).");
    return;
  }
  struct hs_admin a = {op->gw->stats, op->gw->rdma, gateway_members, op->gw};
  struct hs_err_where w = gw_op_error_where(op);
  hs_admin_answer(&op->resp, k, &a, &w, !strcmp(op->req.method, "HEAD"));
}

/* An aws-chunked body reaches the store decoded: without the framing's
 * headers, and with what Content-Encoding says besides aws-chunked. */
static size_t decoded_headers(struct gw_op *op, struct hs_kv *kv, size_t n)
{
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    const char *name = kv[i].name;
    if (!strcasecmp(name, "x-amz-decoded-content-length") ||
        !strcasecmp(name, "x-amz-trailer"))
      continue;
    if (!strcasecmp(name, "content-encoding")) {
      struct hs_buf b;
      hs_buf_init(&b, sizeof op->encoding - 1);
      for (const char *p = kv[i].value; *p;) {
        size_t len = strcspn(p, ",");
        const char *t = p;
        size_t tl = len;
        while (tl && *t == ' ') {
          t++;
          tl--;
        }
        while (tl && t[tl - 1] == ' ')
          tl--;
        if (tl && !(tl == 11 && !strncasecmp(t, "aws-chunked", 11))) {
          if (b.len)
            hs_buf_putc(&b, ',');
          hs_buf_append(&b, t, tl);
        }
        p += len + (p[len] == ',');
      }
      snprintf(op->encoding, sizeof op->encoding, "%s",
               b.failed ? "" : hs_buf_cstr(&b));
      hs_buf_free(&b);
      if (!op->encoding[0])
        continue;
      kv[o++] = (struct hs_kv){name, op->encoding};
      continue;
    }
    kv[o++] = kv[i];
  }
  return o;
}

/* HS_ERR_HEADERS_TOO_LARGE: more headers to forward than FWD_HEADERS_MAX. */
static enum hs_err fill_call(struct gw_op *op, struct gw_call_req *cr,
                             struct hs_kv *kv, char hex[65])
{
  *cr = (struct gw_call_req){
      .method = op->req.method,
      .path = op->path,
      .query = &op->fwd_query,
      .headers = kv,
      .nheaders = gw_forward_headers(&op->req.headers, kv, FWD_HEADERS_MAX),
      .payload_hash = payload_hash(op, hex),
      .body = has_body(op),
      .length = op->req.chunked ? UINT64_MAX : op->req.content_length,
      .head = !strcmp(op->req.method, "HEAD")};
  if (cr->nheaders == SIZE_MAX)
    return HS_ERR_HEADERS_TOO_LARGE;
  /* the store identity of the authenticated user (--credentials) */
  const struct hs_credentials *users = op->gw->cfg->front.auth.credentials;
  if (users && !hs_credentials_store(users, op->auth.sig.access_key,
                                     &cr->access_key, &cr->secret_key))
    cr->access_key = cr->secret_key = NULL;
  if (op->chunked) {
    cr->nheaders = decoded_headers(op, kv, cr->nheaders);
    cr->length = op->decoded_len;
    cr->payload_hash = HS_UNSIGNED_PAYLOAD;
  }
  if (op->deferred)
    cr->length = op->deferred_body.len; /* read whole, checked */
  return HS_OK;
}

/* STREAMING-*: the decoded length the store will get, and the checksum
 * the trailer will carry. */
static enum hs_err setup_chunked(struct gw_op *op)
{
  const struct hs_headers *h = &op->req.headers;
  const char *v = hs_header_get(h, "x-amz-decoded-content-length");
  uint64_t n = 0;
  if (!v || !*v)
    return HS_ERR_MISSING_LENGTH;
  for (const char *p = v; *p; p++) {
    if (*p < '0' || *p > '9' || n > (UINT64_MAX - 9) / 10)
      return HS_ERR_INVALID_ARGUMENT;
    n = n * 10 + (uint64_t)(*p - '0');
  }
  op->chunked = true;
  op->decoded_len = n;
  hs_awschunk_init(&op->chunk);
  const char *t = hs_header_get(h, "x-amz-trailer");
  if (!t)
    return HS_OK;
  enum hs_cksum_alg alg = hs_cksum_alg_of_header(t);
  if (alg == HS_CK_NONE)
    return HS_ERR_INVALID_ARGUMENT;
  return hs_cksum_begin(&op->cksum, alg);
}

static enum hs_step forward(struct gw_op *op)
{
  if (hs_auth_streaming(&op->auth)) {
    enum hs_err err = has_body(op) ? setup_chunked(op) : HS_ERR_INCOMPLETE_BODY;
    if (err) {
      gw_op_error(op, err, NULL);
      return HS_STEP_RESPOND;
    }
  }
  struct hs_kv kv[FWD_HEADERS_MAX];
  char hex[65];
  struct gw_call_req cr;
  struct gw_call *call = NULL;
  enum hs_err err = fill_call(op, &cr, kv, hex);
  if (!err)
    err = gw_call_start(op->gw->be, &cr, &call);
  if (err) {
    gw_op_error(op, err, NULL);
    return HS_STEP_RESPOND;
  }
  if (cr.body) {
    op->call = call;
    return HS_STEP_BODY;
  }
  if (gw_call_head(call) == GW_HEAD_RESPONSE)
    gw_op_backend_response(op, call, true);
  else
    gw_op_backend_failed(op, call);
  return HS_STEP_RESPOND;
}

/* A request whose sender is authenticated goes to the backend now; one
 * whose signature waits for its body is read first (op_end). */
static enum hs_step forward_after_auth(struct gw_op *op)
{
  if (op->auth.payload == HS_PAYLOAD_DEFERRED && has_body(op)) {
    op->deferred = true;
    return HS_STEP_BODY;
  }
  if (has_body(op) && bodiless_method(op)) {
    gw_op_error(op, HS_ERR_INVALID_REQUEST,
                "GET, HEAD and DELETE requests take no body.");
    return HS_STEP_RESPOND;
  }
  return forward(op);
}

/* An authenticated request with a token for GetObject, PutObject or
 * UploadPart: no body; a declared x-amz-content-sha256 is the empty
 * body's (as in the test server: a token GET's payload goes the other
 * way); then rdma_path.c answers it. */
static enum hs_step rdma_begin(struct gw_op *op, const char *tok,
                               enum hs_s3_kind kind)
{
  op->mode = GW_RDMA;
  op->name = hs_s3_kind_name(kind);
  if (has_body(op)) {
    gw_op_error(op, HS_ERR_INVALID_ARGUMENT,
                "A request with x-amz-rdma-token has no body.");
    return HS_STEP_RESPOND;
  }
  char declared[65];
  if (op->auth.payload == HS_PAYLOAD_SHA256)
    hs_hex(op->auth.expected, HS_SHA256_LEN, declared);
  if (!strcmp(op->req.method, "GET") &&
      op->auth.payload == HS_PAYLOAD_SHA256 &&
      strcmp(declared, HS_EMPTY_SHA256) != 0) {
    gw_op_error(op, HS_ERR_SHA256_MISMATCH, NULL);
    return HS_STEP_RESPOND;
  }
  struct hs_kv kv[FWD_HEADERS_MAX];
  char hex[65];
  struct gw_call_req cr;
  enum hs_err err = fill_call(op, &cr, kv, hex);
  if (err) {
    gw_op_error(op, err, NULL);
    return HS_STEP_RESPOND;
  }
  gw_rdma(op, tok, &cr, &op->req.headers);
  op->done = true;
  return HS_STEP_RESPOND;
}

static enum hs_step op_begin(void *p)
{
  struct gw_op *op = p;
  struct hs_span q;
  const char *t = op->req.target;
  if (!hs_target_split(t, strlen(t), &op->path, &q)) {
    gw_op_error(op, HS_ERR_INVALID_URI, NULL);
    return HS_STEP_RESPOND;
  }
  enum hs_err err = hs_query_parse(q.p, q.len, &op->query);
  if (err) {
    gw_op_error(op, err, NULL);
    return HS_STEP_RESPOND;
  }
  forward_query(op);
  enum hs_s3_kind admin = hs_admin_route(op->req.method, t, strlen(t));
  if (admin != HS_OP_NOT_FOUND) {
    local(op, admin);
    return HS_STEP_RESPOND;
  }
  const char *tok = hs_header_get(&op->req.headers, "x-amz-rdma-token");
  enum hs_s3_kind kind = s3_kind(op);
  bool rdma = tok && hs_s3_token_route(kind);
  err = authenticate(op, rdma);
  if (err) {
    gw_op_error(op, err, op->auth.detail[0] ? op->auth.detail : NULL);
    return HS_STEP_RESPOND;
  }
  return rdma ? rdma_begin(op, tok, kind) : forward_after_auth(op);
}

/* Sends the piece held back, then holds this one. */
static void forward_piece(struct gw_op *op, const char *data, size_t n)
{
  if (op->body_refused || !op->call)
    return; /* the backend answered already: the rest is dropped */
  if (op->held_n && !gw_call_send(op->call, op->held, op->held_n))
    op->body_refused = true;
  op->held_n = 0;
  if (n > op->held_cap) {
    char *h = realloc(op->held, n);
    if (!h) {
      op->body_refused = true;
      return;
    }
    op->held = h;
    op->held_cap = n;
  }
  memcpy(op->held, data, n);
  op->held_n = n;
}

/* ---- aws-chunked, decoded on the way ----------------------------------- */

static enum hs_err chunk_data(void *ctx, const char *p, size_t n)
{
  struct gw_op *op = ctx;
  if (n > op->decoded_len - op->decoded)
    return HS_ERR_INCOMPLETE_BODY; /* more than it said */
  op->decoded += n;
  hs_auth_payload(&op->auth, p, n);
  if (op->cksum.alg)
    hs_cksum_update(&op->cksum, p, n);
  forward_piece(op, p, n);
  return HS_OK;
}

static enum hs_err chunk_end(void *ctx, uint64_t size, const char *sig)
{
  struct gw_op *op = ctx;
  (void)size;
  return hs_auth_chunk_end(&op->auth, sig);
}

static enum hs_err chunk_trailer(void *ctx, const char *line, size_t n)
{
  struct gw_op *op = ctx;
  return hs_cksum_trailer(&op->cksum, line, n);
}

static void op_body(void *p, const char *data, size_t n)
{
  struct gw_op *op = p;
  op->body_bytes += n;
  if (op->deferred) {
    hs_auth_payload(&op->auth, data, n);
    if (!op->deferred_over && n > GW_DEFERRED_MAX - op->deferred_body.len)
      op->deferred_over = true;
    if (!op->deferred_over)
      hs_buf_append(&op->deferred_body, data, n);
    return;
  }
  if (!op->chunked) {
    hs_auth_payload(&op->auth, data, n);
    forward_piece(op, data, n);
    return;
  }
  if (op->body_err)
    return;
  const struct hs_awschunk_cbs cbs = {op, chunk_data, chunk_end,
                                      chunk_trailer};
  op->body_err = hs_awschunk_feed(&op->chunk, data, n, &cbs);
}

/* An aws-chunked body's checks at its end: framing, length, the chunks'
 * signatures (as they went), the trailer's checksum. */
static enum hs_err chunked_end(struct gw_op *op)
{
  if (op->body_err == HS_ERR_SIGNATURE)
    return HS_ERR_SIGNATURE;
  if (op->body_err || !hs_awschunk_done(&op->chunk) ||
      op->decoded != op->decoded_len)
    return HS_ERR_INCOMPLETE_BODY;
  if (!op->cksum.alg)
    return HS_OK;
  if (!op->cksum.have_expected)
    return HS_ERR_INVALID_ARGUMENT;
  uint8_t got[HS_CKSUM_MAX];
  hs_cksum_final(&op->cksum, got);
  return memcmp(got, op->cksum.expected, hs_cksum_len(op->cksum.alg))
             ? HS_ERR_BAD_DIGEST
             : HS_OK;
}

/* The deferred signature, checked over the whole body; then the body goes
 * to the backend in one piece. */
static void deferred_end(struct gw_op *op)
{
  struct hs_sigv4_request r = sigv4_request(op);
  enum hs_err err = hs_auth_end(&op->auth, &op->gw->cfg->front.auth, &r);
  if (is_auth_failure(err))
    hs_stat_add(&op->gw->stats->auth_failures, 1);
  const char *why = NULL;
  if (!err && bodiless_method(op)) {
    err = HS_ERR_INVALID_REQUEST;
    why = "GET, HEAD and DELETE requests take no body.";
  } else if (!err && op->deferred_over) {
    err = HS_ERR_INVALID_REQUEST;
    why = "Missing required header for this request: x-amz-content-sha256 "
          "(a body over 8 MiB must declare its hash).";
  } else if (!err && op->deferred_body.failed) {
    err = HS_ERR_NOMEM;
  }
  if (err) {
    gw_op_error(op, err, why);
    return;
  }
  struct hs_kv kv[FWD_HEADERS_MAX];
  char hex[65];
  struct gw_call_req cr;
  struct gw_call *call = NULL;
  err = fill_call(op, &cr, kv, hex);
  if (!err)
    err = gw_call_start(op->gw->be, &cr, &call);
  if (err) {
    gw_op_error(op, err, NULL);
    return;
  }
  if (op->deferred_body.len)
    gw_call_send(call, op->deferred_body.data, op->deferred_body.len);
  hs_stat_add(&op->gw->stats->http_bytes_in, op->body_bytes);
  if (gw_call_head(call) == GW_HEAD_RESPONSE)
    gw_op_backend_response(op, call, true);
  else
    gw_op_backend_failed(op, call);
}

static void op_end(void *p)
{
  struct gw_op *op = p;
  if (op->deferred) {
    deferred_end(op);
    return;
  }
  if (!op->call)
    return;
  struct hs_sigv4_request r = sigv4_request(op);
  enum hs_err err = op->chunked ? chunked_end(op) : HS_OK;
  if (!err)
    err = hs_auth_end(&op->auth, &op->gw->cfg->front.auth, &r);
  struct gw_call *call = op->call;
  if (err) { /* the backend never gets the last piece */
    op->call = NULL;
    gw_call_close(call);
    if (is_auth_failure(err))
      hs_stat_add(&op->gw->stats->auth_failures, 1);
    gw_op_error(op, err, NULL);
    return;
  }
  if (!op->body_refused && op->held_n)
    gw_call_send(call, op->held, op->held_n);
  if (op->req.chunked && !op->chunked)
    gw_call_send_end(call);
  op->call = NULL;
  hs_stat_add(&op->gw->stats->http_bytes_in, op->body_bytes);
  if (gw_call_head(call) == GW_HEAD_RESPONSE)
    gw_op_backend_response(op, call, true);
  else
    gw_op_backend_failed(op, call);
}

static struct hs_response *op_response(void *p)
{
  struct gw_op *op = p;
  if (!op->done)
    gw_op_error(op, HS_ERR_INTERNAL, NULL);
  if (op->resp.headers.failed || op->resp.body.failed) {
    op->resp.headers.failed = false;
    op->resp.body.failed = false;
    gw_op_error(op, HS_ERR_NOMEM, NULL);
  }
  return &op->resp;
}

static const char *op_name(const void *p)
{
  const struct gw_op *op = p;
  return op->name;
}

static const char *op_path(const void *p)
{
  const struct gw_op *op = p;
  return op->mode == GW_RDMA ? "rdma" : "http";
}

static uint64_t op_body_bytes(const void *p)
{
  const struct gw_op *op = p;
  return op->body_bytes;
}

const struct hs_http_ops gw_http_ops = {
    op_new,  op_begin, op_body,       op_end,  op_response,
    op_name, op_path,  op_body_bytes, op_free,
};
