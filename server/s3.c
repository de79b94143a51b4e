/* SPDX-License-Identifier: MIT */
/* One request's life: parse the target, authenticate, route, receive the
 * body (decoding aws-chunked, hashing, streaming it to the store), and run
 * the operation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "auth/awschunk.h"
#include "http.h"
#include "s3_internal.h"

/* A request that should not have a body may still send this much. */
#define STRAY_BODY_MAX (64u << 10)

struct hs_op_ext {
  struct hs_op op;
  struct hs_awschunk chunk;
  uint64_t raw_bytes; /* body bytes as received, before decoding */
};

static struct hs_op_ext *ext(struct hs_op *op)
{
  return (struct hs_op_ext *)op;
}

/* ---- response helpers -------------------------------------------------- */

void hs_op_resp_reset(struct hs_op *op)
{
  hs_resp_reset(&op->resp, op->request_id);
}

void hs_op_error(struct hs_op *op, enum hs_err err)
{
  hs_op_error_msg(op, err, NULL);
}

void hs_op_error_msg(struct hs_op *op, enum hs_err err, const char *message)
{
  struct hs_err_where w = {op->bucket, op->key, op->key_len, op->path.p,
                           op->path.len, op->request_id};
  hs_resp_error(&op->resp, err, message, &w, op->method == HS_M_HEAD);
  op->done = true;
}

void hs_op_xml_begin(struct hs_op *op, unsigned status)
{
  op->resp.status = status;
  op->done = true;
  hs_resp_header(&op->resp, "Content-Type", "application/xml");
  hs_buf_puts(&op->resp.body, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
}

/* ---- attributes --------------------------------------------------------- */

/* The headers an object keeps and returns as given, and the GetObject
 * query parameter that replaces each in the response. */
static const struct {
  const char *name, *line, *override;
} kept[] = {
    {"Cache-Control", "cache-control", "response-cache-control"},
    {"Content-Disposition", "content-disposition",
     "response-content-disposition"},
    {"Content-Encoding", "content-encoding", "response-content-encoding"},
    {"Content-Language", "content-language", "response-content-language"},
    {"Expires", "expires", "response-expires"},
};
#define NKEPT (sizeof kept / sizeof kept[0])
/* Room kept in hs_obj_attrs.headers for the checksum lines (the longest,
 * a multipart upload's algorithm, type and composite SHA-256, take 135
 * bytes). */
#define CKSUM_ROOM 160

bool hs_attr_line_add(char *lines, size_t max, const char *name,
                      const char *value, size_t vl)
{
  size_t used = strlen(lines), nl = strlen(name);
  if (nl + vl + 2 > max - used)
    return false;
  memcpy(lines + used, name, nl);
  lines[used + nl] = ':';
  memcpy(lines + used + nl + 1, value, vl);
  lines[used + nl + 1 + vl] = '\n';
  lines[used + nl + 2 + vl] = '\0';
  return true;
}

const char *hs_attr_line(const char *lines, const char *name, size_t *vl)
{
  size_t n = strlen(name);
  for (const char *l = lines; *l;) {
    const char *nl = strchr(l, '\n');
    if (!nl)
      break;
    if ((size_t)(nl - l) > n && l[n] == ':' && memcmp(l, name, n) == 0) {
      *vl = (size_t)(nl - l) - n - 1;
      return l + n + 1;
    }
    l = nl + 1;
  }
  return NULL;
}

/* Content-Encoding as stored: without aws-chunked, which names how this
 * request's body travels, not what the object is (S3 drops it too). */
static bool add_content_encoding(char *lines, const char *v)
{
  char out[HS_OBJ_HEADERS_MAX + 1];
  size_t used = 0;
  if (!strcasestr(v, "aws-chunked")) /* as given, its spaces too */
    return hs_attr_line_add(lines, HS_OBJ_HEADERS_MAX + 1 - CKSUM_ROOM,
                            "content-encoding", v, strlen(v));
  for (const char *p = v; *p;) {
    while (*p == ' ' || *p == ',')
      p++;
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    size_t t = n;
    while (t && p[t - 1] == ' ')
      t--;
    if (t && !(t == 11 && strncasecmp(p, "aws-chunked", 11) == 0)) {
      if (used + t + 2 >= sizeof out)
        return false;
      if (used) {
        out[used++] = ',';
        out[used++] = ' ';
      }
      memcpy(out + used, p, t);
      used += t;
    }
    p += n;
  }
  return used == 0 ||
         hs_attr_line_add(lines, HS_OBJ_HEADERS_MAX + 1 - CKSUM_ROOM,
                          "content-encoding", out, used);
}

static enum hs_err kept_headers(const struct hs_op *op, char *lines)
{
  for (size_t k = 0; k < NKEPT; k++) {
    const char *v = hs_header_get(&op->req.headers, kept[k].line);
    if (!v)
      continue;
    bool ok = strcmp(kept[k].line, "content-encoding") == 0
                  ? add_content_encoding(lines, v)
                  : hs_attr_line_add(lines, HS_OBJ_HEADERS_MAX + 1 - CKSUM_ROOM,
                                     kept[k].line, v, strlen(v));
    if (!ok)
      return HS_ERR_INVALID_ARGUMENT;
  }
  return HS_OK;
}

/* A metadata value "=?UTF-8?B?BASE64?=" (RFC 2047, as S3 returns non-ASCII
 * values and clients may send them): its decoded bytes into out (at most
 * max), as S3 stores it. False if v has another form. */
static bool rfc2047_decode(const char *v, size_t vl, char *out, size_t max,
                           size_t *n)
{
  static const char pre[] = "=?UTF-8?B?";
  size_t pl = sizeof pre - 1;
  if (vl < pl + 2 || strncasecmp(v, pre, pl) != 0 ||
      memcmp(v + vl - 2, "?=", 2) != 0)
    return false;
  const char *b = v + pl;
  size_t bl = vl - pl - 2;
  if (bl % 4)
    return false;
  size_t len = bl / 4 * 3;
  for (size_t i = bl; i > 0 && b[i - 1] == '=' && len > 0; i--)
    len--;
  if (len > max || !hs_base64_decode(b, bl, (uint8_t *)out, len) ||
      memchr(out, '\0', len) || memchr(out, '\n', len))
    return false;
  *n = len;
  return true;
}

enum hs_err hs_op_attrs(const struct hs_op *op, struct hs_obj_attrs *out)
{
  struct hs_obj_attrs a;
  memset(&a, 0, sizeof a);
  const char *ct = hs_header_get(&op->req.headers, "content-type");
  if (ct) {
    size_t n = strlen(ct);
    if (n >= sizeof a.content_type)
      return HS_ERR_INVALID_ARGUMENT;
    memcpy(a.content_type, ct, n + 1);
  }
  size_t used = 0;
  for (size_t i = 0; i < op->req.headers.n; i++) {
    const struct hs_kv *h = &op->req.headers.v[i];
    if (strncasecmp(h->name, "x-amz-meta-", 11) != 0)
      continue;
    const char *name = h->name + 11;
    size_t nl = strlen(name), vl = strlen(h->value);
    if (nl == 0 || used + nl + vl + 2 > HS_USER_META_MAX)
      return HS_ERR_INVALID_ARGUMENT;
    for (size_t k = 0; k < nl; k++) {
      char c = name[k];
      a.meta[used++] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    a.meta[used++] = ':';
    size_t dl;
    if (rfc2047_decode(h->value, vl, a.meta + used,
                       HS_USER_META_MAX - used - 1, &dl))
      vl = dl;
    else
      memcpy(a.meta + used, h->value, vl);
    used += vl;
    a.meta[used++] = '\n';
  }
  a.meta[used] = '\0';
  enum hs_err err = kept_headers(op, a.headers);
  if (err)
    return err;
  *out = a;
  return HS_OK;
}

bool hs_attrs_add_checksum(struct hs_obj_attrs *a, enum hs_cksum_alg alg,
                           const char *b64, const char *type)
{
  const char *name = hs_cksum_header(alg);
  return hs_attr_line_add(a->headers, sizeof a->headers, name, b64,
                          strlen(b64)) &&
         (!type || hs_attr_line_add(a->headers, sizeof a->headers,
                                    "x-amz-checksum-type", type,
                                    strlen(type)));
}

void hs_op_checksum_headers(struct hs_op *op, const struct hs_obj_attrs *a)
{
  const char *mode = hs_header_get(&op->req.headers, "x-amz-checksum-mode");
  if (!mode || strcasecmp(mode, "ENABLED") != 0)
    return;
  bool any = false;
  for (const char *l = a->headers; *l;) {
    const char *colon = strchr(l, ':'), *nl = strchr(l, '\n');
    if (!colon || !nl || colon > nl)
      break;
    char name[64], value[HS_OBJ_HEADERS_MAX + 1];
    snprintf(name, sizeof name, "%.*s", (int)(colon - l), l);
    snprintf(value, sizeof value, "%.*s", (int)(nl - colon - 1), colon + 1);
    if (hs_cksum_alg_of_header(name) != HS_CK_NONE) {
      hs_resp_header(&op->resp, name, value);
      any = true;
    }
    l = nl + 1;
  }
  size_t tl;
  const char *type = hs_attr_line(a->headers, "x-amz-checksum-type", &tl);
  if (any && type) {
    char value[32];
    snprintf(value, sizeof value, "%.*s", (int)tl, type);
    hs_resp_header(&op->resp, "x-amz-checksum-type", value);
  }
}

/* A GetObject's response-* override of a header, or NULL. */
static const char *override(const struct hs_op *op, const char *param)
{
  if (op->kind != HS_OP_GET_OBJECT && op->kind != HS_OP_HEAD_OBJECT)
    return NULL;
  const struct hs_param *p = hs_query_get(&op->query, param);
  return p ? p->value : NULL;
}

enum hs_err hs_op_check_overrides(const struct hs_op *op)
{
  for (size_t i = 0; i <= NKEPT; i++) {
    const char *v = override(
        op, i < NKEPT ? kept[i].override : "response-content-type");
    for (; v && *v; v++)
      if ((unsigned char)*v < 0x20 || *v == 0x7f)
        return HS_ERR_INVALID_ARGUMENT;
  }
  return HS_OK;
}

void hs_op_object_headers(struct hs_op *op, const struct hs_obj_info *info)
{
  struct hs_response *r = &op->resp;
  char date[40];
  hs_time_http(info->mtime, date);
  hs_resp_headerf(r, "ETag", "\"%s\"", info->etag);
  hs_resp_header(r, "Last-Modified", date);
  const char *ct = override(op, "response-content-type");
  hs_resp_header(r, "Content-Type",
                 ct                            ? ct
                 : info->attrs.content_type[0] ? info->attrs.content_type
                                               : "binary/octet-stream");
  hs_resp_header(r, "Accept-Ranges", "bytes");
  if (info->tag_count)
    hs_resp_headerf(r, "x-amz-tagging-count", "%u", info->tag_count);
  for (size_t k = 0; k < NKEPT; k++) {
    const char *v = override(op, kept[k].override);
    size_t vl;
    if (v)
      hs_resp_header(r, kept[k].name, v);
    else if ((v = hs_attr_line(info->attrs.headers, kept[k].line, &vl))) {
      char value[HS_OBJ_HEADERS_MAX + 1];
      memcpy(value, v, vl);
      value[vl] = '\0';
      hs_resp_header(r, kept[k].name, value);
    }
  }
  const char *m = info->attrs.meta;
  while (*m) {
    const char *colon = strchr(m, ':');
    const char *nl = strchr(m, '\n');
    if (!colon || !nl || colon > nl)
      break;
    char name[HS_USER_META_MAX + 16];
    /* RFC 2047 for a value that is not ASCII, as S3 answers */
    char value[16 + 4 * ((HS_USER_META_MAX + 2) / 3)];
    snprintf(name, sizeof name, "x-amz-meta-%.*s", (int)(colon - m), m);
    size_t vl = (size_t)(nl - colon - 1);
    bool ascii = true;
    for (size_t i = 0; i < vl; i++)
      ascii = ascii && (unsigned char)colon[1 + i] < 0x80;
    if (ascii) {
      snprintf(value, sizeof value, "%.*s", (int)vl, colon + 1);
    } else {
      memcpy(value, "=?UTF-8?B?", 10);
      hs_base64_encode((const uint8_t *)colon + 1, vl, value + 10);
      strcat(value, "?=");
    }
    hs_resp_header(r, name, value);
    m = nl + 1;
  }
}

/* ---- life cycle --------------------------------------------------------- */

struct hs_op *hs_op_new(struct hs_server *srv, const struct hs_request *req)
{
  struct hs_op_ext *x = calloc(1, sizeof *x);
  if (!x)
    return NULL;
  struct hs_op *op = &x->op;
  op->srv = srv;
  op->req = *req;
  op->method = hs_method_of(req->method);
  op->kind = HS_OP_NOT_FOUND;
  uint64_t id = atomic_fetch_add(&srv->next_id, 1);
  snprintf(op->request_id, sizeof op->request_id, "%016llX",
           (unsigned long long)id);
  hs_buf_init(&op->resp.headers, 64u << 10);
  hs_buf_init(&op->resp.body, 0);
  hs_buf_init(&op->body, srv->cfg->max_xml_size);
  hs_awschunk_init(&x->chunk);
  hs_op_resp_reset(op);
  return op;
}

void hs_op_free(struct hs_op *op)
{
  if (!op)
    return;
  if (op->writer) {
    hs_writer_abort(op->writer);
    hs_stat_add(&op->srv->stats->aborted_bodies, 1);
  }
  hs_auth_free(&op->auth);
  hs_cksum_free(&op->cksum);
  hs_query_free(&op->query);
  hs_buf_free(&op->body);
  hs_resp_free(&op->resp);
  free(ext(op));
}

struct hs_response *hs_op_response(struct hs_op *op)
{
  if (!op->done)
    hs_op_error(op, HS_ERR_INTERNAL);
  if (op->resp.headers.failed || op->resp.body.failed) {
    op->resp.headers.failed = false;
    op->resp.body.failed = false;
    hs_op_resp_reset(op);
    hs_op_error(op, HS_ERR_NOMEM);
  }
  return &op->resp;
}

const char *hs_op_name(const struct hs_op *op)
{
  return hs_s3_kind_name(op->kind);
}

const char *hs_op_path(const struct hs_op *op)
{
  return op->rdma ? "rdma" : "http";
}

uint64_t hs_op_body_bytes(const struct hs_op *op) { return op->body_bytes; }

/* ---- begin -------------------------------------------------------------- */

static struct hs_sigv4_request sigv4_request(const struct hs_op *op)
{
  struct hs_sigv4_request r = {.method = op->req.method,
                               .path = op->path,
                               .query = &op->query,
                               .headers = &op->req.headers};
  return r;
}

static size_t header_section_size(const struct hs_op *op)
{
  size_t n = strlen(op->req.method) + strlen(op->req.target) + 16;
  for (size_t i = 0; i < op->req.headers.n; i++)
    n += strlen(op->req.headers.v[i].name) +
         strlen(op->req.headers.v[i].value) + 4;
  return n;
}

static enum hs_err parse_target(struct hs_op *op)
{
  const char *t = op->req.target;
  if (!hs_target_split(t, strlen(t), &op->path, &op->query_raw))
    return HS_ERR_INVALID_URI;
  enum hs_err err = hs_query_parse(op->query_raw.p, op->query_raw.len,
                                   &op->query);
  if (err)
    return err;
  return hs_path_parse(op->path.p, op->path.len, op->bucket, op->key,
                       &op->key_len);
}

static enum hs_err parse_content_md5(struct hs_op *op)
{
  const char *v = hs_header_get(&op->req.headers, "content-md5");
  if (!v)
    return HS_OK;
  if (!hs_base64_decode(v, strlen(v), op->content_md5, HS_MD5_LEN))
    return HS_ERR_INVALID_DIGEST;
  op->has_content_md5 = true;
  return HS_OK;
}

static bool body_expected(const struct hs_op *op)
{
  return op->req.chunked || (op->req.has_length && op->req.content_length);
}

/* The test server's handlers of the operations, by row (s3_ops.h). */
static const struct {
  enum hs_step (*begin)(struct hs_op *op);
  void (*end)(struct hs_op *op);
} handlers[HS_OP__COUNT] = {
#define HS_S3_HANDLER(kind, name, flags, begin, end) {begin, end},
    HS_S3_OPS(HS_S3_HANDLER)
#undef HS_S3_HANDLER
};

static enum hs_step dispatch_begin(struct hs_op *op)
{
  if (hs_s3_ops[op->kind].flags & HS_S3_BODY) {
    op->body_mode = HS_BODY_BUFFER;
    op->body_limit = op->srv->cfg->max_xml_size;
  }
  return handlers[op->kind].begin(op);
}

static void dispatch_end(struct hs_op *op) { handlers[op->kind].end(op); }

static enum hs_step fail(struct hs_op *op, enum hs_err err)
{
  hs_op_error(op, err);
  return HS_STEP_RESPOND;
}

/* Authentication, before anything else is done for the request. A request
 * without a body (a token request is one: its payload travels by RDMA) is
 * settled here too, so no handler ever runs for a signature that would only
 * be checked at the end of the body. */
static enum hs_err check_auth(struct hs_op *op)
{
  struct hs_sigv4_request r = sigv4_request(op);
  enum hs_err err =
      hs_auth_begin(&op->auth, &op->srv->cfg->auth, &r, (int64_t)time(NULL));
  /* Only a route whose payload the token carries has no body to sign;
   * elsewhere (DeleteObjects, say) a token header changes nothing. */
  bool rdma = hs_header_get(&op->req.headers, "x-amz-rdma-token") != NULL &&
              hs_s3_token_route(op->kind);
  if (!err && (rdma || !body_expected(op)))
    err = hs_auth_no_body(&op->auth, &op->srv->cfg->auth, &r, rdma);
  if (err == HS_ERR_ACCESS_DENIED || err == HS_ERR_SIGNATURE ||
      err == HS_ERR_UNKNOWN_ACCESS_KEY || err == HS_ERR_AUTH_HEADER ||
      err == HS_ERR_AUTH_QUERY ||
      err == HS_ERR_TIME_SKEWED || err == HS_ERR_EXPIRED)
    hs_stat_add(&op->srv->stats->auth_failures, 1);
  return err;
}

/* x-amz-checksum-ALG in a header, or announced by x-amz-trailer for an
 * aws-chunked body: the payload of a PutObject or UploadPart is checked
 * against it before the commit. */
static enum hs_err setup_checksum(struct hs_op *op)
{
  if (op->kind != HS_OP_PUT_OBJECT && op->kind != HS_OP_UPLOAD_PART)
    return HS_OK;
  const struct hs_headers *h = &op->req.headers;
  enum hs_cksum_alg alg = HS_CK_NONE;
  const char *value = NULL;
  for (size_t i = 0; i < h->n; i++) {
    enum hs_cksum_alg a = hs_cksum_alg_of_header(h->v[i].name);
    if (a == HS_CK_NONE)
      continue;
    if (alg != HS_CK_NONE)
      return HS_ERR_INVALID_ARGUMENT; /* one checksum per request */
    alg = a;
    value = h->v[i].value;
  }
  const char *trailer = hs_header_get(h, "x-amz-trailer");
  if (alg == HS_CK_NONE && trailer && hs_auth_streaming(&op->auth))
    alg = hs_cksum_alg_of_header(trailer);
  if (alg == HS_CK_NONE)
    return HS_OK;
  enum hs_err err = hs_cksum_begin(&op->cksum, alg);
  if (!err && value)
    err = hs_cksum_expect(&op->cksum, value, strlen(value));
  /* a value that is no checksum of this algorithm does not match */
  return err == HS_ERR_INVALID_DIGEST ? HS_ERR_BAD_DIGEST : err;
}

/* Headers that ask for what this server does not do: 501 (true). */
static bool refuse_unsupported(struct hs_op *op)
{
  const char *unsupported = hs_s3_unsupported_header(&op->req.headers);
  if (!unsupported)
    return false;
  char m[256];
  const char *v = hs_header_get(&op->req.headers, unsupported);
  snprintf(m, sizeof m, "This server does not implement the %.80s "
                        "header, or this value of it (%.60s).",
           unsupported, v ? v : "");
  hs_op_error_msg(op, HS_ERR_NOT_IMPLEMENTED, m);
  return true;
}

/* After authentication: what the request asks for, Content-MD5, the
 * checksum. HS_STEP_BODY: go on. */
static enum hs_step check_request(struct hs_op *op)
{
  enum hs_err err;
  if (op->kind == HS_OP_NOT_IMPLEMENTED)
    return fail(op, HS_ERR_NOT_IMPLEMENTED);
  if (refuse_unsupported(op))
    return HS_STEP_RESPOND;
  if ((err = parse_content_md5(op)))
    return fail(op, err);
  if ((err = setup_checksum(op))) {
    hs_op_error_msg(op, err, err == HS_ERR_INVALID_ARGUMENT
                                 ? "An x-amz-checksum header is malformed, "
                                   "or there are several."
                                 : NULL);
    return HS_STEP_RESPOND;
  }
  return HS_STEP_BODY;
}

/* The operation's handler begins; HS_STEP_BODY when a body follows. */
static enum hs_step begin_operation(struct hs_op *op)
{
  op->body_mode = HS_BODY_NONE;
  op->body_limit = STRAY_BODY_MAX;
  if (dispatch_begin(op) == HS_STEP_RESPOND || op->done)
    return HS_STEP_RESPOND;
  if (op->req.has_length && op->req.content_length > op->body_limit &&
      !hs_auth_streaming(&op->auth))
    return fail(op, HS_ERR_ENTITY_TOO_LARGE);
  if (!body_expected(op)) {
    hs_op_end(op);
    return HS_STEP_RESPOND;
  }
  return HS_STEP_BODY;
}

enum hs_step hs_op_begin(struct hs_op *op)
{
  const struct hs_config *cfg = op->srv->cfg;
  hs_stat_add(&op->srv->stats->requests[op->method], 1);
  if (header_section_size(op) > cfg->max_header_size)
    return fail(op, HS_ERR_HEADERS_TOO_LARGE);
  const char *t = op->req.target;
  op->kind = hs_admin_route(op->req.method, t, strlen(t));
  if (op->kind != HS_OP_NOT_FOUND) {
    hs_target_split(t, strlen(t), &op->path, &op->query_raw);
    hs_s3_admin(op);
    return HS_STEP_RESPOND;
  }
  enum hs_err err = parse_target(op);
  if (err)
    return fail(op, err);
  op->kind = hs_s3_route(
      op->req.method, op->bucket[0] != '\0', op->key_len > 0, &op->query,
      hs_header_get(&op->req.headers, "x-amz-copy-source") != NULL);
  if (op->kind == HS_OP_METHOD_NOT_ALLOWED)
    return fail(op, HS_ERR_METHOD_NOT_ALLOWED);
  if (op->bucket[0] && !hs_bucket_name_valid(op->bucket))
    return fail(op, HS_ERR_INVALID_BUCKET_NAME);
  if ((err = check_auth(op))) {
    hs_op_error_msg(op, err, op->auth.detail[0] ? op->auth.detail : NULL);
    return HS_STEP_RESPOND;
  }
  if (check_request(op) == HS_STEP_RESPOND || hs_s3_rdma(op))
    return HS_STEP_RESPOND;
  return begin_operation(op);
}

/* ---- body --------------------------------------------------------------- */

static enum hs_err payload(void *ctx, const char *p, size_t n)
{
  struct hs_op *op = ctx;
  if (n > op->body_limit - op->body_bytes)
    return HS_ERR_ENTITY_TOO_LARGE;
  op->body_bytes += n;
  hs_auth_payload(&op->auth, p, n);
  if (op->cksum.alg)
    hs_cksum_update(&op->cksum, p, n);
  switch (op->body_mode) {
  case HS_BODY_WRITER:
    hs_stat_add(&op->srv->stats->http_bytes_in, n);
    return hs_writer_write(op->writer, p, n);
  case HS_BODY_BUFFER:
    return hs_buf_append(&op->body, p, n) ? HS_OK : HS_ERR_ENTITY_TOO_LARGE;
  default:
    return HS_OK;
  }
}

static enum hs_err chunk_end(void *ctx, uint64_t size, const char *sig)
{
  struct hs_op *op = ctx;
  return hs_auth_chunk_end(&op->auth, sig);
}

/* An aws-chunked trailer: the checksum x-amz-trailer announced. */
static enum hs_err trailer(void *ctx, const char *line, size_t n)
{
  struct hs_op *op = ctx;
  return hs_cksum_trailer(&op->cksum, line, n);
}

void hs_op_body(struct hs_op *op, const char *data, size_t n)
{
  struct hs_op_ext *x = ext(op);
  x->raw_bytes += n;
  if (op->body_err || op->done)
    return;
  if (hs_auth_streaming(&op->auth)) {
    struct hs_awschunk_cbs cbs = {
        .ctx = op, .data = payload, .chunk_end = chunk_end, .trailer = trailer};
    op->body_err = hs_awschunk_feed(&x->chunk, data, n, &cbs);
  } else {
    op->body_err = payload(op, data, n);
  }
}

/* x-amz-decoded-content-length, when the body is aws-chunked. */
static enum hs_err check_decoded_length(struct hs_op *op)
{
  const char *v =
      hs_header_get(&op->req.headers, "x-amz-decoded-content-length");
  if (!v)
    return HS_OK;
  char *end;
  unsigned long long n = strtoull(v, &end, 10);
  if (*v < '0' || *v > '9' || *end || n != op->body_bytes)
    return HS_ERR_INCOMPLETE_BODY;
  return HS_OK;
}

/* True (and the error set) if the payload does not match its checksum. */
static bool check_checksum(struct hs_op *op)
{
  struct hs_cksum *c = &op->cksum;
  char m[160];
  if (!c->have_expected) {
    snprintf(m, sizeof m, "The trailer %s announced by x-amz-trailer is "
                          "missing.", hs_cksum_header(c->alg));
    hs_op_error_msg(op, HS_ERR_INVALID_ARGUMENT, m);
    return true;
  }
  uint8_t got[HS_CKSUM_MAX];
  size_t n = hs_cksum_len(c->alg);
  hs_cksum_final(c, got);
  if (!hs_mem_equal(got, c->expected, n)) {
    snprintf(m, sizeof m, "The %s you specified did not match the "
                          "calculated checksum.", hs_cksum_name(c->alg));
    hs_op_error_msg(op, HS_ERR_BAD_DIGEST, m);
    return true;
  }
  hs_base64_encode(got, n, op->cksum_b64);
  return false;
}

void hs_op_end(struct hs_op *op)
{
  if (op->done)
    return;
  enum hs_err err = op->body_err;
  if (err == HS_ERR_SIGNATURE) /* a chunk's signature */
    hs_stat_add(&op->srv->stats->auth_failures, 1);
  if (err == HS_ERR_INVALID_ARGUMENT && hs_auth_streaming(&op->auth))
    err = HS_ERR_INCOMPLETE_BODY;
  if (!err && hs_auth_streaming(&op->auth)) {
    if (!hs_awschunk_done(&ext(op)->chunk))
      err = HS_ERR_INCOMPLETE_BODY;
    else
      err = check_decoded_length(op);
  }
  if (!err && op->req.has_length && !op->req.chunked &&
      ext(op)->raw_bytes != op->req.content_length)
    err = HS_ERR_INCOMPLETE_BODY;
  if (!err) {
    struct hs_sigv4_request r = sigv4_request(op);
    err = hs_auth_end(&op->auth, &op->srv->cfg->auth, &r);
    if (err == HS_ERR_SIGNATURE)
      hs_stat_add(&op->srv->stats->auth_failures, 1);
  }
  if (!err && op->body_mode == HS_BODY_BUFFER && op->has_content_md5) {
    uint8_t d[HS_MD5_LEN];
    hs_md5(hs_buf_cstr(&op->body), op->body.len, d);
    if (!hs_mem_equal(d, op->content_md5, HS_MD5_LEN))
      err = HS_ERR_BAD_DIGEST;
  }
  if (err) {
    hs_op_error(op, err);
    return;
  }
  if (op->cksum.alg && check_checksum(op))
    return;
  /* kept with the object (or part), returned when asked for */
  if (op->cksum.alg && op->writer &&
      !hs_attrs_add_checksum(hs_writer_attrs(op->writer), op->cksum.alg,
                             op->cksum_b64,
                             op->kind == HS_OP_PUT_OBJECT ? "FULL_OBJECT"
                                                          : NULL)) {
    hs_op_error(op, HS_ERR_INTERNAL); /* CKSUM_ROOM is enough */
    return;
  }
  dispatch_end(op);
  if (!op->done)
    hs_op_error(op, HS_ERR_INTERNAL);
  else if (op->cksum.alg && op->resp.status == 200)
    hs_resp_header(&op->resp, hs_cksum_header(op->cksum.alg), op->cksum_b64);
}

/* ---- the HTTP front's handler ------------------------------------------ */

static void *ops_new(void *app, const struct hs_request *req)
{
  return hs_op_new(app, req);
}
static enum hs_step ops_begin(void *op) { return hs_op_begin(op); }
static void ops_body(void *op, const char *d, size_t n) { hs_op_body(op, d, n); }
static void ops_end(void *op) { hs_op_end(op); }
static struct hs_response *ops_response(void *op) { return hs_op_response(op); }
static const char *ops_name(const void *op) { return hs_op_name(op); }
static const char *ops_path(const void *op) { return hs_op_path(op); }
static uint64_t ops_body_bytes(const void *op) { return hs_op_body_bytes(op); }
static void ops_free(void *op) { hs_op_free(op); }

const struct hs_http_ops hs_s3_http_ops = {
    ops_new,  ops_begin, ops_body,       ops_end,  ops_response,
    ops_name, ops_path,  ops_body_bytes, ops_free,
};
