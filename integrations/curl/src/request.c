/* SPDX-License-Identifier: MIT */
/* One HTTP exchange with the S3 server on a curl easy handle: the request
 * (path-style URL, SigV4 through CURLOPT_AWS_SIGV4 with every x-amz-* header
 * signed, the token, the range, the body) and the response (status line,
 * the headers hipObject cares about, matched case-insensitively, and the
 * body into its sink, bounded). Nothing here decides what a status means;
 * ho_s3_req_outcome() turns it into a status and a message. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include "common/size.h"
#include "internal.h"

#define PROGRESS_EVERY_NS 100000000ll /* 100 ms */

void ho_s3_req_init(struct ho_s3_req *r, hipObjS3Client_t *c,
                    const char *method, const char *bucket, const char *key)
{
  memset(r, 0, sizeof *r);
  r->client = c;
  r->method = method;
  r->target.op = method;
  r->target.bucket = bucket;
  r->target.key = key;
}

void ho_s3_req_cleanup(struct ho_s3_req *r)
{
  free(r->xml);
  r->xml = NULL;
  r->xml_len = r->xml_cap = 0;
}

/* ---- response headers --------------------------------------------------- */

/* "bytes FIRST-LAST/TOTAL": the total. */
static bool parse_content_range(const char *v, size_t len, uint64_t *total)
{
  const char *slash = memchr(v, '/', len);
  if (len < 6 || strncasecmp(v, "bytes ", 6) != 0 || !slash)
    return false;
  size_t rest = len - (size_t)(slash + 1 - v);
  return ho_parse_uint_n(slash + 1, rest, total);
}

/* A new response (a 100 Continue comes before the real one): forget the
 * headers of the previous one. */
static void status_line(struct ho_s3_req *r, const char *line, size_t len)
{
  const char *sp = memchr(line, ' ', len);
  uint64_t code = 0;
  r->status = 0;
  if (sp && (size_t)(sp - line) + 4 <= len &&
      ho_parse_uint_n(sp + 1, 3, &code))
    r->status = (long)code;
  r->have_reply = r->reply_too_long = false;
  r->reply_len = 0;
  r->have_xfer = r->xfer_bad = false;
  r->have_length = r->have_total = false;
  r->etag[0] = '\0';
}

static void copy_header(char *dst, size_t cap, const char *v, size_t len)
{
  if (len >= cap)
    len = cap - 1;
  memcpy(dst, v, len);
  dst[len] = '\0';
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)dst[i] < 0x20)
      dst[i] = ' ';
}

static void rdma_reply(struct ho_s3_req *r, const char *v, size_t len)
{
  if (r->have_reply || len >= sizeof r->reply) {
    r->reply_too_long = true; /* twice, or too long: never trusted */
    return;
  }
  memcpy(r->reply, v, len);
  r->reply[len] = '\0';
  r->reply_len = len;
  r->have_reply = true;
}

static void header_field(struct ho_s3_req *r, const char *name, size_t nlen,
                         const char *v, size_t vlen)
{
#define IS(h) (nlen == sizeof(h) - 1 && strncasecmp(name, h, nlen) == 0)
  if (IS("x-amz-rdma-reply")) {
    rdma_reply(r, v, vlen);
  } else if (IS("x-amz-rdma-bytes-transferred")) {
    r->have_xfer = true;
    r->xfer_bad = !ho_parse_uint_n(v, vlen, &r->xfer_bytes);
  } else if (IS("etag")) {
    copy_header(r->etag, sizeof r->etag, v, vlen);
  } else if (IS("content-length")) {
    r->have_length = ho_parse_uint_n(v, vlen, &r->content_length);
  } else if (IS("content-range")) {
    r->have_total = parse_content_range(v, vlen, &r->total_size);
  }
#undef IS
}

static size_t on_header(char *buf, size_t size, size_t n, void *ud)
{
  struct ho_s3_req *r = ud;
  size_t len = size * n;
  size_t end = len;
  while (end > 0 && (buf[end - 1] == '\r' || buf[end - 1] == '\n'))
    end--;
  if (end >= 5 && strncmp(buf, "HTTP/", 5) == 0) {
    status_line(r, buf, end);
    return len;
  }
  const char *colon = memchr(buf, ':', end);
  if (!colon)
    return len;
  size_t nlen = (size_t)(colon - buf);
  const char *v = colon + 1;
  size_t vlen = end - nlen - 1;
  while (vlen > 0 && (*v == ' ' || *v == '\t')) {
    v++;
    vlen--;
  }
  while (vlen > 0 && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
    vlen--;
  header_field(r, buf, nlen, v, vlen);
  return len;
}

/* ---- progress ----------------------------------------------------------- */

static int64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* Adds n bytes; false when the application cancelled. */
static bool progress_add(struct ho_s3_req *r, size_t n)
{
  struct ho_s3_progress *p = r->progress;
  if (!p)
    return true;
  uint64_t done = atomic_fetch_add(&p->done, n) + n;
  if (atomic_load(&p->cancelled))
    return false;
  if (!p->fn)
    return true;
  int64_t t = now_ns();
  if ((int64_t)r->progress_reported != 0 &&
      t - (int64_t)r->progress_reported < PROGRESS_EVERY_NS)
    return true;
  r->progress_reported = (uint64_t)t;
  if (p->fn(p->ctx, done, p->total) != 0) {
    atomic_store(&p->cancelled, 1);
    return false;
  }
  return true;
}

/* ---- response body ------------------------------------------------------ */

static bool xml_append(struct ho_s3_req *r, const char *p, size_t n,
                       size_t limit)
{
  if (r->xml_len >= limit)
    return false;
  if (n > limit - r->xml_len)
    n = limit - r->xml_len;
  if (r->xml_cap - r->xml_len < n + 1) {
    size_t cap = r->xml_cap ? r->xml_cap : 4096;
    while (cap - r->xml_len < n + 1)
      cap *= 2;
    char *q = realloc(r->xml, cap);
    if (!q)
      return false;
    r->xml = q;
    r->xml_cap = cap;
  }
  memcpy(r->xml + r->xml_len, p, n);
  r->xml_len += n;
  r->xml[r->xml_len] = '\0';
  return true;
}

static bool bounce_flush(struct ho_s3_req *r)
{
  struct ho_s3_bounce *b = r->bounce;
  const struct ho_s3_settings *s = &r->client->s;
  if (b->fill == 0)
    return true;
  if (s->dev.copyToDevice(s->dev.ctx, r->dst + r->dst_len, b->p, b->fill)) {
    r->copy_failed = true;
    return false;
  }
  r->dst_len += b->fill;
  b->fill = 0;
  return true;
}

/* GET into device memory: fill the bounce, copy it over when full. */
static bool sink_device(struct ho_s3_req *r, const char *p, size_t n)
{
  struct ho_s3_bounce *b = r->bounce;
  while (n > 0) {
    if (r->dst_len + b->fill >= r->dst_cap) {
      r->body_overflow = true;
      return false;
    }
    size_t room = b->cap - b->fill;
    uint64_t left = r->dst_cap - r->dst_len - b->fill;
    size_t k = n < room ? n : room;
    if (k > left)
      k = (size_t)left;
    memcpy(b->p + b->fill, p, k);
    b->fill += k;
    p += k;
    n -= k;
    if (b->fill == b->cap && !bounce_flush(r))
      return false;
  }
  return true;
}

static bool sink_host(struct ho_s3_req *r, const char *p, size_t n)
{
  if (n > r->dst_cap - r->dst_len) {
    r->body_overflow = true;
    return false;
  }
  memcpy(r->dst + r->dst_len, p, n);
  r->dst_len += n;
  return true;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
  struct ho_s3_req *r = ud;
  size_t n = size * nmemb;
  if (r->status < 200 || r->status > 299) {
    xml_append(r, p, n, HO_S3_ERRBODY_MAX); /* the rest is dropped */
    return n;
  }
  bool ok = true;
  switch (r->sink) {
  case HO_S3_SINK_NONE:
    if (r->token) {
      r->body_unexpected = true; /* the token was ignored */
      return 0;
    }
    return n;
  case HO_S3_SINK_HOST:
    ok = sink_host(r, p, n);
    break;
  case HO_S3_SINK_DEVICE:
    ok = sink_device(r, p, n);
    break;
  case HO_S3_SINK_XML:
    ok = xml_append(r, p, n, HO_S3_XMLBODY_MAX);
    if (!ok)
      r->body_overflow = true;
    return ok ? n : 0;
  }
  if (!ok || !progress_add(r, n))
    return 0;
  return n;
}

/* ---- request body ------------------------------------------------------- */

static bool bounce_refill(struct ho_s3_req *r)
{
  struct ho_s3_bounce *b = r->bounce;
  const struct ho_s3_settings *s = &r->client->s;
  uint64_t left = r->src_len - r->src_pos;
  size_t k = left < b->cap ? (size_t)left : b->cap;
  if (s->dev.copyToHost(s->dev.ctx, b->p, r->src_ptr + r->src_pos, k)) {
    r->copy_failed = true;
    return false;
  }
  b->fill = k;
  b->pos = 0;
  return true;
}

static size_t on_read(char *out, size_t size, size_t nmemb, void *ud)
{
  struct ho_s3_req *r = ud;
  size_t want = size * nmemb;
  uint64_t left = r->src_len - r->src_pos;
  if (left == 0)
    return 0;
  if (want > left)
    want = (size_t)left;
  if (r->src == HO_S3_SRC_DEVICE) {
    struct ho_s3_bounce *b = r->bounce;
    if (b->pos == b->fill && !bounce_refill(r))
      return CURL_READFUNC_ABORT;
    if (want > b->fill - b->pos)
      want = b->fill - b->pos;
    memcpy(out, b->p + b->pos, want);
    b->pos += want;
  } else {
    memcpy(out, r->src_ptr + r->src_pos, want);
  }
  r->src_pos += want;
  if (r->src != HO_S3_SRC_XML && !progress_add(r, want))
    return CURL_READFUNC_ABORT;
  return want;
}

/* curl rewinds the body when it must send it again (a redirect, an
 * authentication round): only to the start is supported. */
static int on_seek(void *ud, curl_off_t off, int origin)
{
  struct ho_s3_req *r = ud;
  if (origin != SEEK_SET || off != 0)
    return CURL_SEEKFUNC_CANTSEEK;
  if (r->progress && r->src != HO_S3_SRC_XML)
    atomic_fetch_sub(&r->progress->done, r->src_pos);
  r->src_pos = 0;
  if (r->bounce)
    r->bounce->fill = r->bounce->pos = 0;
  return CURL_SEEKFUNC_OK;
}

/* ---- setting up --------------------------------------------------------- */

static bool add_header(struct curl_slist **list, const char *fmt,
                       const char *value)
{
  char line[HO_S3_SESSION_MAX + 64];
  int n = snprintf(line, sizeof line, fmt, value);
  if (n <= 0 || (size_t)n >= sizeof line)
    return false;
  struct curl_slist *l = curl_slist_append(*list, line);
  if (!l)
    return false;
  *list = l;
  return true;
}

static bool build_headers(const struct ho_s3_req *r, struct curl_slist **out)
{
  const struct ho_s3_settings *s = &r->client->s;
  struct curl_slist *l = NULL;
  char range[64];
  bool ok = true;
  if (s->sign)
    ok = ok && add_header(&l, "x-amz-content-sha256: %s", "UNSIGNED-PAYLOAD");
  if (s->sign && s->session_token[0])
    ok = ok && add_header(&l, "x-amz-security-token: %s", s->session_token);
  if (r->token) {
    ok = ok && add_header(&l, "x-amz-rdma-token: %s", r->token);
    ok = ok && add_header(&l, "Content-Length: %s", "0");
  }
  if (r->has_range) {
    snprintf(range, sizeof range, "%" PRIu64 "-%" PRIu64, r->range_first,
             r->range_first + r->range_len - 1);
    ok = ok && add_header(&l, "Range: bytes=%s", range);
  }
  if (r->src == HO_S3_SRC_XML)
    ok = ok && add_header(&l, "Content-Type: %s", "application/xml");
  /* No "Expect:" to suppress 100-continue: curl 7.88 would sign the
   * removed header, and the server could never match the signature. */
  if (!ok) {
    curl_slist_free_all(l);
    return false;
  }
  *out = l;
  return true;
}

static void set_method(CURL *h, struct ho_s3_req *r)
{
  if (!strcmp(r->method, "HEAD")) {
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else if (!strcmp(r->method, "PUT")) {
    curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)r->src_len);
  } else if (!strcmp(r->method, "POST")) {
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->src_len);
  } else if (strcmp(r->method, "GET") != 0) {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, r->method);
  }
  if (r->src != HO_S3_SRC_NONE || !strcmp(r->method, "PUT") ||
      !strcmp(r->method, "POST")) {
    curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
    curl_easy_setopt(h, CURLOPT_READDATA, r);
    curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, on_seek);
    curl_easy_setopt(h, CURLOPT_SEEKDATA, r);
  }
}

static void set_auth(CURL *h, const hipObjS3Client_t *c)
{
  if (!c->s.sign)
    return;
  curl_easy_setopt(h, CURLOPT_AWS_SIGV4, c->sigv4);
  curl_easy_setopt(h, CURLOPT_USERNAME, c->s.access_key);
  curl_easy_setopt(h, CURLOPT_PASSWORD, c->s.secret_key);
}

static void set_common(CURL *h, struct ho_s3_req *r, const char *url,
                       struct curl_slist *headers)
{
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  /* A server that stops sending for two minutes is gone. */
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 120L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, r->curl_error);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
  curl_easy_setopt(h, CURLOPT_USERAGENT, "hipobj-s3/" HIPOBJ_S3_VERSION);
}

static CURLcode perform_once(struct ho_s3_req *r)
{
  char url[HO_S3_URL_MAX];
  struct curl_slist *headers = NULL;
  CURLcode cc = CURLE_OUT_OF_MEMORY;
  r->curl_error[0] = '\0';
  if (!ho_s3_object_url(&r->client->s, r->target.bucket, r->target.key,
                        r->query, url, sizeof url))
    return CURLE_URL_MALFORMAT;
  if (!build_headers(r, &headers))
    return CURLE_OUT_OF_MEMORY;
  CURL *h = ho_s3_handle_get(r->client);
  if (!h)
    goto free_headers;
  set_common(h, r, url, headers);
  set_auth(h, r->client);
  set_method(h, r);
  ho_s3_count(&r->client->requests, 1);
  cc = curl_easy_perform(h);
  if (cc == CURLE_OK && r->sink == HO_S3_SINK_DEVICE && r->status >= 200 &&
      r->status <= 299 && !bounce_flush(r))
    cc = CURLE_WRITE_ERROR;
  ho_s3_handle_put(r->client, h);
free_headers:
  curl_slist_free_all(headers);
  return cc;
}

/* What S3 asks its clients to retry, as the AWS SDKs do: 503 (SlowDown,
 * ServiceUnavailable, and the test server's "no RDMA slot") and 500
 * (InternalError). */
static bool s3_asks_retry(const struct ho_s3_req *r, CURLcode cc)
{
  /* A 500 with x-amz-rdma-reply is the outcome of a transfer that ran
   * (data first, docs/protocol.md section 5): hipObject decides whether it
   * is tried again, with a new token; this one is spent. */
  if (r->have_reply && r->status != 503)
    return false;
  return cc == CURLE_OK && (r->status == 503 || r->status == 500);
}

/* Full jitter: a random wait in [0, min(cap, base * 2^n)). */
static void backoff(unsigned n)
{
  uint64_t cap_us = HO_S3_BACKOFF_BASE_MS * 1000ull << (n < 10 ? n : 10);
  if (cap_us > HO_S3_BACKOFF_CAP_MS * 1000ull)
    cap_us = HO_S3_BACKOFF_CAP_MS * 1000ull;
  uint64_t r = 0;
  if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
    r = (uint64_t)time(NULL) * 2654435761u;
  uint64_t us = r % (cap_us ? cap_us : 1);
  struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000};
  nanosleep(&ts, NULL);
}

/* Before a retry: the body from its start, the error body dropped. */
static void rewind_request(struct ho_s3_req *r)
{
  on_seek(r, 0, SEEK_SET);
  r->xml_len = 0;
  r->dst_len = 0;
}

CURLcode ho_s3_req_perform(struct ho_s3_req *r)
{
  for (unsigned n = 0;; n++) {
    CURLcode cc = perform_once(r);
    if (!s3_asks_retry(r, cc) || n + 1 >= r->client->s.max_attempts)
      return cc;
    ho_s3_count(&r->client->s3_retries, 1);
    backoff(n);
    rewind_request(r);
  }
}

hipObjS3Status_t ho_s3_req_outcome(struct ho_s3_req *r, CURLcode cc,
                                   hipObjS3Result_t *res)
{
  const struct ho_s3_settings *s = &r->client->s;
  res->httpStatus = r->status;
  if (r->copy_failed)
    return ho_s3_fail(res, hipObjS3DeviceCopyFailed, "copying between host "
                      "and device memory failed (deviceOps returned an "
                      "error)");
  if (r->progress && atomic_load(&r->progress->cancelled))
    return ho_s3_fail(res, hipObjS3HttpError, "cancelled");
  if (r->body_unexpected)
    return ho_s3_fail(res, hipObjS3ProtocolError, "the server answered the "
                      "RDMA request with a body: it ignored x-amz-rdma-token "
                      "(it does not speak hipObject RDMA); use plain HTTP "
                      "(--no-rdma)");
  if (r->body_overflow)
    return ho_s3_fail(res, hipObjS3ProtocolError, "the server sent more "
                      "bytes than were asked for (HTTP %ld)", r->status);
  if (cc == CURLE_URL_MALFORMAT && !r->curl_error[0])
    return ho_s3_fail(res, hipObjS3InvalidArgument, "bucket or key too long "
                      "for a URL");
  if (cc != CURLE_OK)
    return ho_s3_curl_failure(s, cc, r->curl_error, res);
  if (r->status < 200 || r->status > 299)
    return ho_s3_http_failure(s, &r->target, r->status, r->xml, r->xml_len,
                              res);
  return hipObjS3Ok;
}
