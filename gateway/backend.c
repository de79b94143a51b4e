/* SPDX-License-Identifier: MIT */
#include "backend.h"
#include "head.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "auth/auth.h"
#include "auth/sigv4.h"
#include "common/thread_safety.h"

/* Response bytes kept between reads; past it the backend is paused. */
#define PEND_MAX (512u << 10)
/* Handles (each with its connections) kept for the next calls. */
#define POOL_MAX 64
#define HEADERS_MAX 128

struct gw_handle {
  CURLM *m;
  CURL *e;
  struct gw_handle *next;
};

struct gw_backend {
  char base[300];  /* http://host:port */
  char host[260];  /* the Host header */
  const char *access_key;
  const char *secret_key;
  const char *region;
  unsigned connect_ms;
  unsigned stall_s;
  ho_mutex mu;
  struct gw_handle *pool HO_GUARDED_BY(mu);
  unsigned pooled HO_GUARDED_BY(mu);
};

struct gw_call {
  struct gw_backend *be;
  struct gw_handle *h;
  struct curl_slist *hdrs;
  struct hs_buf url;
  bool expect;
  /* the request's body */
  const char *in;
  size_t in_n;
  bool in_end;
  bool want_body;
  bool send_paused;
  /* the response */
  struct gw_resp_head head;
  char *dst;
  size_t dst_n, dst_got;
  char *pend;
  size_t pend_off, pend_len;
  bool recv_paused;
  bool done;
  CURLcode result;
  char err[CURL_ERROR_SIZE];
};

/* ---- the backend -------------------------------------------------------- */

static bool parse_url(const char *url, struct gw_backend *be)
{
  if (strncmp(url, "http://", 7) != 0)
    return false;
  const char *h = url + 7;
  size_t n = strlen(h);
  while (n && h[n - 1] == '/')
    n--;
  if (n == 0 || n >= sizeof be->host || memchr(h, '/', n) ||
      memchr(h, '?', n) || memchr(h, '@', n))
    return false;
  memcpy(be->host, h, n);
  be->host[n] = '\0';
  snprintf(be->base, sizeof be->base, "http://%s", be->host);
  return true;
}

enum hs_err gw_backend_open(const struct gw_backend_config *cfg,
                            struct gw_backend **out, struct hs_buf *why)
{
  struct gw_backend *be = calloc(1, sizeof *be);
  if (!be)
    return HS_ERR_NOMEM;
  if (!parse_url(cfg->url, be)) {
    hs_buf_printf(why, "--backend must be http://HOST[:PORT], not '%s'",
                  cfg->url);
    free(be);
    return HS_ERR_INVALID_ARGUMENT;
  }
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    hs_buf_puts(why, "libcurl would not initialise");
    free(be);
    return HS_ERR_IO;
  }
  be->access_key = cfg->access_key;
  be->secret_key = cfg->secret_key;
  be->region = cfg->region ? cfg->region : "us-east-1";
  be->connect_ms = cfg->connect_timeout_ms ? cfg->connect_timeout_ms : 5000;
  be->stall_s = cfg->stall_timeout_s ? cfg->stall_timeout_s : 60;
  ho_mutex_init(&be->mu);
  *out = be;
  return HS_OK;
}

static void handle_free(struct gw_handle *h)
{
  if (!h)
    return;
  if (h->m && h->e)
    curl_multi_remove_handle(h->m, h->e);
  curl_easy_cleanup(h->e);
  curl_multi_cleanup(h->m);
  free(h);
}

void gw_backend_close(struct gw_backend *be)
{
  if (!be)
    return;
  ho_mutex_lock(&be->mu);
  struct gw_handle *h = be->pool;
  be->pool = NULL;
  ho_mutex_unlock(&be->mu);
  while (h) {
    struct gw_handle *next = h->next;
    handle_free(h);
    h = next;
  }
  ho_mutex_destroy(&be->mu);
  curl_global_cleanup();
  free(be);
}

static struct gw_handle *handle_get(struct gw_backend *be)
{
  ho_mutex_lock(&be->mu);
  struct gw_handle *h = be->pool;
  if (h) {
    be->pool = h->next;
    be->pooled--;
  }
  ho_mutex_unlock(&be->mu);
  if (h) {
    curl_easy_reset(h->e);
    return h;
  }
  h = calloc(1, sizeof *h);
  if (!h)
    return NULL;
  h->m = curl_multi_init();
  h->e = curl_easy_init();
  if (!h->m || !h->e) {
    curl_easy_cleanup(h->e);
    curl_multi_cleanup(h->m);
    free(h);
    return NULL;
  }
  return h;
}

/* A handle whose transfer ended cleanly keeps its connection for the next
 * call. */
static void handle_put(struct gw_backend *be, struct gw_handle *h)
{
  curl_multi_remove_handle(h->m, h->e);
  ho_mutex_lock(&be->mu);
  bool keep = be->pooled < POOL_MAX;
  if (keep) {
    h->next = be->pool;
    be->pool = h;
    be->pooled++;
  }
  ho_mutex_unlock(&be->mu);
  if (!keep) {
    curl_easy_cleanup(h->e);
    curl_multi_cleanup(h->m);
    free(h);
  }
}

/* ---- curl's callbacks --------------------------------------------------- */

static size_t on_send(char *buf, size_t size, size_t n, void *ud)
{
  struct gw_call *c = ud;
  size_t cap = size * n;
  if (c->in_n) {
    size_t k = c->in_n < cap ? c->in_n : cap;
    memcpy(buf, c->in, k);
    c->in += k;
    c->in_n -= k;
    return k;
  }
  c->want_body = true;
  if (c->in_end)
    return 0;
  c->send_paused = true;
  return CURL_READFUNC_PAUSE;
}

static size_t on_recv(char *p, size_t size, size_t n, void *ud)
{
  struct gw_call *c = ud;
  size_t len = size * n;
  size_t direct = c->dst ? c->dst_n - c->dst_got : 0;
  if (direct > len)
    direct = len;
  size_t rest = len - direct;
  if (rest) {
    if (!c->pend) {
      c->pend = malloc(PEND_MAX);
      if (!c->pend)
        return 0; /* fails the transfer */
    }
    if (c->pend_len == 0)
      c->pend_off = 0;
    if (c->pend_off + c->pend_len + rest > PEND_MAX && c->pend_off) {
      memmove(c->pend, c->pend + c->pend_off, c->pend_len);
      c->pend_off = 0;
    }
    if (c->pend_len + rest > PEND_MAX) {
      c->recv_paused = true; /* curl delivers these bytes again */
      return CURL_WRITEFUNC_PAUSE;
    }
  }
  if (direct) {
    memcpy(c->dst + c->dst_got, p, direct);
    c->dst_got += direct;
  }
  if (rest) {
    memcpy(c->pend + c->pend_off + c->pend_len, p + direct, rest);
    c->pend_len += rest;
  }
  return len;
}

static size_t on_header(char *b, size_t size, size_t n, void *ud)
{
  struct gw_call *c = ud;
  gw_head_line(&c->head, b, size * n);
  return size * n;
}

/* ---- pumping ------------------------------------------------------------ */

static void collect(struct gw_call *c)
{
  CURLMsg *msg;
  int left;
  while ((msg = curl_multi_info_read(c->h->m, &left)))
    if (msg->msg == CURLMSG_DONE) {
      c->done = true;
      c->result = msg->data.result;
      if (c->result != CURLE_OK && !c->err[0])
        snprintf(c->err, sizeof c->err, "%s",
                 curl_easy_strerror(c->result));
    }
}

static void repause(struct gw_call *c)
{
  curl_easy_pause(c->h->e, (c->recv_paused ? CURLPAUSE_RECV : 0) |
                               (c->send_paused ? CURLPAUSE_SEND : 0));
}

/* What can be done now, without waiting. */
static void perform(struct gw_call *c)
{
  int running;
  curl_multi_perform(c->h->m, &running);
  collect(c);
}

/* Waits up to 100 ms for the socket, then does what it allows. curl
 * enforces the connect and stall timeouts. Only called when what the
 * caller waits for has not happened after a perform(). */
static void wait_io(struct gw_call *c)
{
  curl_multi_poll(c->h->m, NULL, 0, 100, NULL);
  perform(c);
}

/* ---- a call ------------------------------------------------------------- */

static bool add(struct curl_slist **l, const char *name, const char *value)
{
  struct hs_buf b;
  hs_buf_init(&b, 0);
  if (value && value[0])
    hs_buf_printf(&b, "%s: %s", name, value);
  else if (value)
    hs_buf_printf(&b, "%s;", name); /* curl's way to send an empty value */
  else
    hs_buf_printf(&b, "%s:", name); /* curl's way to send none */
  struct curl_slist *n = b.failed ? NULL : curl_slist_append(*l, b.data);
  hs_buf_free(&b);
  if (!n)
    return false;
  *l = n;
  return true;
}

static int cmp_name(const void *a, const void *b)
{
  /* strcasecmp orders as the lower-case names do, as SigV4 sorts them */
  return strcasecmp(*(const char *const *)a, *(const char *const *)b);
}

/* "content-type;host;range;x-amz-date...": every header of kv, lower-case,
 * sorted, once each. The gateway signs everything it sends, so a store
 * that checks SignedHeaders sees no header the gateway did not vouch for.
 * false: the list does not fit (the caller answers 431). */
static bool signed_list(const struct hs_kv *kv, size_t n, char *out,
                        size_t cap)
{
  const char *sorted[HEADERS_MAX];
  if (n > HEADERS_MAX)
    return false;
  for (size_t i = 0; i < n; i++)
    sorted[i] = kv[i].name;
  qsort(sorted, n, sizeof sorted[0], cmp_name);
  size_t o = 0;
  out[0] = '\0';
  for (size_t i = 0; i < n; i++) {
    if (i && strcasecmp(sorted[i], sorted[i - 1]) == 0)
      continue;
    size_t l = strlen(sorted[i]);
    if (l + (o != 0) >= cap - o)
      return false;
    if (o)
      out[o++] = ';';
    for (size_t j = 0; j < l; j++) {
      char c = sorted[i][j];
      out[o++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    out[o] = '\0';
  }
  return true;
}

/* Every header the request carries, the signature's among them. */
static enum hs_err build_headers(struct gw_call *c, const struct gw_call_req *r,
                                 const char *amz_date)
{
  struct gw_backend *be = c->be;
  if (r->nheaders + 3 > HEADERS_MAX)
    return HS_ERR_HEADERS_TOO_LARGE;
  struct hs_kv kv[HEADERS_MAX];
  size_t n = 0;
  kv[n++] = (struct hs_kv){"host", be->host};
  kv[n++] = (struct hs_kv){"x-amz-date", amz_date};
  kv[n++] = (struct hs_kv){"x-amz-content-sha256", r->payload_hash};
  bool has_type = false;
  for (size_t i = 0; i < r->nheaders; i++) {
    kv[n++] = r->headers[i];
    has_type = has_type || !strcasecmp(r->headers[i].name, "content-type");
  }
  bool ok = true;
  for (size_t i = 0; i < n && ok; i++)
    ok = add(&c->hdrs, i == 0 ? "Host" : kv[i].name, kv[i].value);
  ok = ok && add(&c->hdrs, "Expect", r->expect ? "100-continue" : NULL);
  ok = ok && add(&c->hdrs, "Accept", NULL);
  if (!has_type)
    ok = ok && add(&c->hdrs, "Content-Type", NULL);
  if (!ok)
    return HS_ERR_NOMEM;
  const char *ak = r->access_key ? r->access_key : be->access_key;
  const char *sk = r->access_key ? r->secret_key : be->secret_key;
  if (!ak)
    return HS_OK;
  struct hs_sigv4_auth a = {0};
  snprintf(a.access_key, sizeof a.access_key, "%s", ak);
  memcpy(a.date, amz_date, 8);
  snprintf(a.region, sizeof a.region, "%s", be->region);
  snprintf(a.service, sizeof a.service, "s3");
  if (!signed_list(kv, n, a.signed_headers, sizeof a.signed_headers))
    return HS_ERR_HEADERS_TOO_LARGE;
  struct hs_headers hh = {kv, n};
  struct hs_sigv4_request sr = {.method = r->method, .path = r->path,
                                .query = r->query, .headers = &hh};
  struct hs_buf auth;
  hs_buf_init(&auth, 0);
  enum hs_err err =
      hs_sigv4_sign(&sr, &a, sk, amz_date, r->payload_hash, &auth);
  if (!err && !add(&c->hdrs, "Authorization", auth.data))
    err = HS_ERR_NOMEM;
  hs_buf_free(&auth);
  return err;
}

static enum hs_err build_url(struct gw_call *c, const struct gw_call_req *r)
{
  struct hs_headers none = {NULL, 0};
  struct hs_sigv4_request sr = {.method = r->method, .path = r->path,
                                .query = r->query, .headers = &none};
  hs_buf_puts(&c->url, c->be->base);
  enum hs_err err = hs_sigv4_canonical_target(&sr, &c->url);
  if (!err && c->url.failed)
    err = HS_ERR_NOMEM;
  return err;
}

static void set_method(CURL *e, const struct gw_call_req *r)
{
  curl_off_t len = r->length == UINT64_MAX ? -1 : (curl_off_t)r->length;
  if (!r->body)
    len = 0;
  if (r->head) {
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  } else if (!strcmp(r->method, "PUT")) {
    curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, len);
  } else if (!strcmp(r->method, "POST")) {
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, len);
  } else if (strcmp(r->method, "GET") != 0) {
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
  }
  curl_easy_setopt(e, CURLOPT_READFUNCTION, on_send);
}

static void set_options(struct gw_call *c, const struct gw_call_req *r)
{
  CURL *e = c->h->e;
  set_method(e, r);
  curl_easy_setopt(e, CURLOPT_URL, c->url.data);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, c->hdrs);
  curl_easy_setopt(e, CURLOPT_READDATA, c);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_recv);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, c);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, c);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, c->err);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L); /* "a/../b" is a key */
  curl_easy_setopt(e, CURLOPT_HTTP_CONTENT_DECODING, 0L);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)c->be->connect_ms);
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, (long)c->be->stall_s);
  curl_easy_setopt(e, CURLOPT_EXPECT_100_TIMEOUT_MS, 10000L);
  curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 256L << 10);
  curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, 1L << 20);
  curl_easy_setopt(e, CURLOPT_USERAGENT, "hipobj-gateway");
}

enum hs_err gw_call_start(struct gw_backend *be, const struct gw_call_req *r,
                          struct gw_call **out)
{
  struct gw_call *c = calloc(1, sizeof *c);
  if (!c)
    return HS_ERR_NOMEM;
  c->be = be;
  c->expect = r->expect;
  c->in_end = !r->body;
  hs_buf_init(&c->url, 0);
  gw_head_init(&c->head);
  char amz_date[17];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(amz_date, sizeof amz_date, "%Y%m%dT%H%M%SZ", &tm);
  enum hs_err err = build_url(c, r);
  if (!err)
    err = build_headers(c, r, amz_date);
  if (!err && !(c->h = handle_get(be)))
    err = HS_ERR_NOMEM;
  if (err) {
    gw_call_close(c);
    return err;
  }
  set_options(c, r);
  if (curl_multi_add_handle(c->h->m, c->h->e) != CURLM_OK) {
    gw_call_close(c);
    return HS_ERR_NOMEM;
  }
  *out = c;
  return HS_OK;
}

bool gw_call_send(struct gw_call *c, const void *p, size_t n)
{
  c->in = p;
  c->in_n = n;
  if (c->send_paused) {
    c->send_paused = false;
    repause(c);
  }
  if (c->in_n)
    perform(c);
  while (c->in_n && !c->done && !c->head.done) {
    if (c->send_paused) {
      c->send_paused = false;
      repause(c);
      perform(c);
      continue;
    }
    wait_io(c);
  }
  bool ok = c->in_n == 0;
  c->in = NULL;
  c->in_n = 0;
  return ok;
}

void gw_call_send_end(struct gw_call *c)
{
  c->in_end = true;
  if (c->send_paused) {
    c->send_paused = false;
    repause(c);
  }
}

enum gw_head gw_call_head(struct gw_call *c)
{
  perform(c);
  while (!c->head.done && !c->done) {
    if (c->expect && (c->head.got_continue || c->want_body)) {
      c->expect = false; /* once: the next call waits for the response */
      return GW_HEAD_CONTINUE;
    }
    wait_io(c);
  }
  if (c->head.done)
    return GW_HEAD_RESPONSE;
  if (!c->err[0])
    snprintf(c->err, sizeof c->err, "the backend closed the connection "
                                    "without an answer");
  return GW_HEAD_FAILED;
}

unsigned gw_call_status(const struct gw_call *c) { return c->head.status; }

uint64_t gw_call_length(const struct gw_call *c) { return c->head.length; }

bool gw_call_next_header(const struct gw_call *c, size_t *pos,
                         const char **name, const char **value)
{
  return gw_head_next(&c->head, pos, name, value);
}

long gw_call_read(struct gw_call *c, void *buf, size_t max)
{
  if (max == 0)
    return 0;
  if (c->pend_len) {
    size_t k = c->pend_len < max ? c->pend_len : max;
    memcpy(buf, c->pend + c->pend_off, k);
    c->pend_off += k;
    c->pend_len -= k;
    if (c->recv_paused) {
      c->recv_paused = false;
      repause(c);
    }
    return (long)k;
  }
  if (c->done)
    return c->result == CURLE_OK ? 0 : -1;
  c->dst = buf;
  c->dst_n = max;
  c->dst_got = 0;
  if (c->recv_paused) {
    c->recv_paused = false;
    repause(c);
  }
  perform(c);
  while (!c->dst_got && !c->done)
    wait_io(c);
  size_t got = c->dst_got;
  c->dst = NULL;
  if (got)
    return (long)got;
  return c->result == CURLE_OK ? 0 : -1;
}

const char *gw_call_error(const struct gw_call *c) { return c->err; }

bool gw_call_complete(const struct gw_call *c)
{
  return c->done && c->result == CURLE_OK;
}

void gw_call_close(struct gw_call *c)
{
  if (!c)
    return;
  if (c->h) {
    if (gw_call_complete(c))
      handle_put(c->be, c->h);
    else
      handle_free(c->h); /* cut: its connection is closed */
  }
  curl_slist_free_all(c->hdrs);
  hs_buf_free(&c->url);
  gw_head_free(&c->head);
  free(c->pend);
  free(c);
}
