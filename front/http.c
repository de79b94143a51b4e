/* SPDX-License-Identifier: MIT */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/thread_safety.h"

#define STREAM_BLOCK (256u << 10)
/* A request answered before its body arrived still has its body read (and
 * dropped) up to this much, so the client sees the answer rather than a
 * reset; past it the connection is closed. */
#define DRAIN_MAX (8u << 20)

/* Per connection: the raw target of the request being read, taken by the
 * request when the handler first sees it; and, on the front's list, since
 * when its request head is awaited (0: a request is being served). */
struct conn_ctx {
  char *target;
  char peer[64];
  int fd;
  uint64_t head_since_ns;            /* under hs_http.mu */
  struct conn_ctx *prev, *next;      /* under hs_http.mu */
};

struct hs_http {
  struct MHD_Daemon *d;
  const struct hs_http_app *app;
  /* The head deadline: libmicrohttpd's timeout is for idleness, so a
   * client that sends its head a byte at a time would hold a connection
   * thread forever. A watcher shuts down connections whose head is
   * overdue (libmicrohttpd then closes them). */
  ho_mutex mu;
  pthread_cond_t cv;
  struct conn_ctx *conns HO_GUARDED_BY(mu);
  bool stop HO_GUARDED_BY(mu);
  pthread_t watcher;
  bool watcher_started;
};

/* RQ_READY: answered, to be queued at the next call (queueing during the
 * first call makes libmicrohttpd close the connection). */
enum rq_state { RQ_BODY, RQ_DRAIN, RQ_READY, RQ_QUEUED };

struct req_ctx {
  struct hs_http *h;
  void *op;
  char *target;
  struct hs_kv *headers;
  size_t nheaders;
  char peer[64];
  const char *method;
  enum rq_state state;
  bool has_body;      /* a body follows the headers */
  uint64_t body_len;  /* its declared length, UINT64_MAX if chunked */
  uint64_t drained;
  unsigned status;
  uint64_t bytes_out;
  uint64_t start_ns;
  /* Refused by the front itself (a field name that is not a token): no op,
   * this answer, and the connection closed after it. */
  bool refused;
  struct hs_response own;
};

struct stream_ctx {
  struct hs_source src;
  uint64_t length;
  struct hs_stats *stats;
  uint64_t *bytes_out; /* the request's counter, for the log */
};

/* ---- connections -------------------------------------------------------- */

static void format_peer(const struct sockaddr *sa, char *out, size_t len)
{
  char host[INET6_ADDRSTRLEN] = "?";
  unsigned port = 0;
  if (sa && sa->sa_family == AF_INET) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    port = ntohs(in->sin_port);
    snprintf(out, len, "%s:%u", host, port);
  } else if (sa && sa->sa_family == AF_INET6) {
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
    port = ntohs(in6->sin6_port);
    snprintf(out, len, "[%s]:%u", host, port);
  } else {
    snprintf(out, len, "?");
  }
}

static void conn_notify(void *cls, struct MHD_Connection *c, void **socket_ctx,
                        enum MHD_ConnectionNotificationCode code)
{
  struct hs_http *h = cls;
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    struct conn_ctx *cc = calloc(1, sizeof *cc);
    if (cc) {
      const union MHD_ConnectionInfo *ci =
          MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
      format_peer(ci ? ci->client_addr : NULL, cc->peer, sizeof cc->peer);
      ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
      cc->fd = ci ? ci->connect_fd : -1;
      ho_mutex_lock(&h->mu);
      cc->head_since_ns = ho_now_ns();
      cc->next = h->conns;
      if (h->conns)
        h->conns->prev = cc;
      h->conns = cc;
      ho_mutex_unlock(&h->mu);
    }
    *socket_ctx = cc;
  } else {
    /* libmicrohttpd closes the socket after this: once off the list, the
     * watcher never touches its descriptor */
    struct conn_ctx *cc = *socket_ctx;
    if (cc) {
      ho_mutex_lock(&h->mu);
      if (cc->prev)
        cc->prev->next = cc->next;
      else
        h->conns = cc->next;
      if (cc->next)
        cc->next->prev = cc->prev;
      ho_mutex_unlock(&h->mu);
      free(cc->target);
    }
    free(cc);
    *socket_ctx = NULL;
  }
}

/* Since when the connection awaits a request head (0: none). */
static void head_awaited(struct hs_http *h, struct conn_ctx *cc, bool yes)
{
  if (!cc)
    return;
  ho_mutex_lock(&h->mu);
  cc->head_since_ns = yes ? ho_now_ns() : 0;
  ho_mutex_unlock(&h->mu);
}

static void *head_watcher(void *arg)
{
  struct hs_http *h = arg;
  uint64_t limit = (uint64_t)h->app->cfg->header_timeout_s * 1000000000u;
  ho_mutex_lock(&h->mu);
  while (!h->stop) {
    uint64_t now = ho_now_ns();
    for (struct conn_ctx *cc = h->conns; cc; cc = cc->next)
      if (cc->head_since_ns && now - cc->head_since_ns > limit &&
          cc->fd >= 0) {
        shutdown(cc->fd, SHUT_RDWR); /* its thread sees the end */
        cc->head_since_ns = 0;
      }
    uint64_t t = ho_now_ns() + 250000000u; /* a quarter second */
    struct timespec until = {(time_t)(t / 1000000000u),
                             (long)(t % 1000000000u)};
    ho_cond_timedwait(&h->cv, &h->mu, &until);
  }
  ho_mutex_unlock(&h->mu);
  return NULL;
}

static struct conn_ctx *conn_of(struct MHD_Connection *c)
{
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return ci ? ci->socket_context : NULL;
}

/* Called with the raw request-target before MHD splits and unescapes it. */
static void *uri_log(void *cls, const char *uri, struct MHD_Connection *c)
{
  struct conn_ctx *cc = conn_of(c);
  if (cc) {
    free(cc->target);
    cc->target = strdup(uri);
  }
  return NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
  /* MHD's own diagnostics (malformed requests it answers itself) are of no
   * use to the user beyond the status the client sees. */
}

/* ---- requests ----------------------------------------------------------- */

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind,
                                    const char *key, const char *value)
{
  (*(size_t *)cls)++;
  return MHD_YES;
}

static enum MHD_Result add_header(void *cls, enum MHD_ValueKind kind,
                                  const char *key, const char *value)
{
  struct req_ctx *rq = cls;
  rq->headers[rq->nheaders].name = key;
  rq->headers[rq->nheaders].value = value ? value : "";
  rq->nheaders++;
  return MHD_YES;
}

static bool collect_headers(struct req_ctx *rq, struct MHD_Connection *c)
{
  size_t n = 0;
  MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &n);
  rq->headers = calloc(n ? n : 1, sizeof *rq->headers);
  if (!rq->headers)
    return false;
  MHD_get_connection_values(c, MHD_HEADER_KIND, add_header, rq);
  return true;
}

static bool parse_u64(const char *s, uint64_t *out)
{
  uint64_t v = 0;
  if (!*s)
    return false;
  for (; *s; s++) {
    if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
      return false;
    v = v * 10 + (uint64_t)(*s - '0');
  }
  *out = v;
  return true;
}

static void fill_request(struct req_ctx *rq, const char *method,
                         struct hs_request *req)
{
  memset(req, 0, sizeof *req);
  req->method = method;
  req->target = rq->target;
  req->headers.v = rq->headers;
  req->headers.n = rq->nheaders;
  req->peer = rq->peer;
  const char *cl = hs_header_get(&req->headers, "content-length");
  req->has_length = cl && parse_u64(cl, &req->content_length);
  const char *te = hs_header_get(&req->headers, "transfer-encoding");
  req->chunked = te && strcasestr(te, "chunked");
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
  struct stream_ctx *s = cls;
  if (pos >= s->length)
    return MHD_CONTENT_READER_END_OF_STREAM;
  size_t n = s->length - pos < max ? (size_t)(s->length - pos) : max;
  long got = s->src.read(s->src.ctx, buf, n);
  if (got == 0 && s->length == UINT64_MAX)
    return MHD_CONTENT_READER_END_OF_STREAM;
  if (got <= 0) /* short of its Content-Length: cut the connection */
    return MHD_CONTENT_READER_END_WITH_ERROR;
  n = (size_t)got;
  hs_stat_add(&s->stats->http_bytes_out, n);
  *s->bytes_out += n;
  return (ssize_t)n;
}

static void stream_free(void *cls)
{
  struct stream_ctx *s = cls;
  if (s->src.close)
    s->src.close(s->src.ctx);
  free(s);
}

/* HEAD: MHD sends Content-Length and no body; the callback is never used. */
static ssize_t no_body(void *cls, uint64_t pos, char *buf, size_t max)
{
  return MHD_CONTENT_READER_END_WITH_ERROR;
}

static struct MHD_Response *make_response(struct req_ctx *rq,
                                          struct hs_response *r)
{
  if (r->source.read) {
    struct stream_ctx *s = calloc(1, sizeof *s);
    if (!s)
      return NULL;
    s->src = r->source;
    s->length = r->length;
    s->stats = rq->h->app->stats;
    s->bytes_out = &rq->bytes_out;
    struct MHD_Response *m = MHD_create_response_from_callback(
        r->length == UINT64_MAX ? MHD_SIZE_UNKNOWN : r->length, STREAM_BLOCK,
        stream_read, s, stream_free);
    if (m) { /* the response owns it now */
      memset(&r->source, 0, sizeof r->source);
    } else {
      free(s);
    }
    return m;
  }
  if (r->head)
    return MHD_create_response_from_callback(r->head_length, STREAM_BLOCK,
                                             no_body, NULL, NULL);
  return MHD_create_response_from_buffer(r->body.len,
                                         (void *)hs_buf_cstr(&r->body),
                                         MHD_RESPMEM_MUST_COPY);
}

static enum MHD_Result queue(struct req_ctx *rq, struct MHD_Connection *c)
{
  struct hs_response *r =
      rq->refused ? &rq->own : rq->h->app->ops->response(rq->op);
  struct MHD_Response *m = make_response(rq, r);
  if (!m)
    return MHD_NO;
  size_t pos = 0;
  const char *name, *value;
  while (hs_resp_next_header(r, &pos, &name, &value))
    /* libmicrohttpd refuses an empty value; a client reads " " as "" */
    MHD_add_response_header(m, name, value[0] ? value : " ");
  MHD_add_response_header(m, "Server", rq->h->app->server_name);
  if (r->close)
    MHD_add_response_header(m, "Connection", "close");
  enum MHD_Result ok = MHD_queue_response(c, r->status, m);
  MHD_destroy_response(m);
  rq->state = RQ_QUEUED;
  rq->status = r->status;
  return ok;
}

/* A field name that is not a token (RFC 9110 5.1): "Host : x",
 * "Content-Length : 0" or a folded line would reach a lenient server
 * behind the gateway as a header this side never saw, so the request gets
 * 400 here, before any handler, and the connection is closed: its framing
 * (a length or chunking this side ignored) cannot be trusted. */
static void refuse_names(struct req_ctx *rq)
{
  struct hs_response *r = &rq->own;
  rq->refused = true;
  rq->has_body = false; /* never read: the connection closes */
  hs_buf_init(&r->headers, 4096);
  hs_buf_init(&r->body, 4096);
  r->status = hs_err_status(HS_ERR_INVALID_REQUEST);
  r->close = true;
  hs_resp_header(r, "Content-Type", "application/xml");
  struct hs_err_where w = {0};
  hs_err_xml(&r->body, HS_ERR_INVALID_REQUEST,
             "A header field name is not an HTTP token.", &w);
}

static struct req_ctx *start(struct hs_http *h, struct MHD_Connection *c,
                             const char *url, const char *method)
{
  struct req_ctx *rq = calloc(1, sizeof *rq);
  if (!rq)
    return NULL;
  rq->h = h;
  rq->method = method;
  rq->start_ns = ho_now_ns();
  struct conn_ctx *cc = conn_of(c);
  head_awaited(h, cc, false);
  if (cc) {
    rq->target = cc->target;
    cc->target = NULL;
    memcpy(rq->peer, cc->peer, sizeof rq->peer);
  }
  if (!rq->target)
    rq->target = strdup(url);
  struct hs_request req;
  if (!rq->target || !collect_headers(rq, c))
    return rq; /* op stays NULL: the caller closes */
  fill_request(rq, method, &req);
  rq->has_body = req.chunked || (req.has_length && req.content_length);
  rq->body_len = req.chunked ? UINT64_MAX : req.content_length;
  if (hs_headers_bad_name(&req.headers)) {
    refuse_names(rq);
    return rq;
  }
  rq->op = h->app->ops->op_new(h->app->ctx, &req);
  return rq;
}

static bool expects_continue(struct MHD_Connection *c)
{
  const char *e =
      MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Expect");
  return e && strcasecmp(e, "100-continue") == 0;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c,
                               const char *url, const char *method,
                               const char *version, const char *upload_data,
                               size_t *upload_data_size, void **con_cls)
{
  struct hs_http *h = cls;
  const struct hs_http_ops *ops = h->app->ops;
  struct req_ctx *rq = *con_cls;
  if (!rq) {
    rq = start(h, c, url, method);
    *con_cls = rq;
    if (rq && rq->refused) {
      rq->state = RQ_READY;
      return MHD_YES;
    }
    if (!rq || !rq->op)
      return MHD_NO;
    if (ops->begin(rq->op) == HS_STEP_BODY) {
      rq->state = RQ_BODY;
      return MHD_YES;
    }
    /* Answered already. Drop a small body first so the client reads the
     * answer; a client waiting for 100-continue sends none. */
    if (!rq->has_body) {
      rq->state = RQ_READY;
      return MHD_YES;
    }
    if (rq->body_len <= DRAIN_MAX && !expects_continue(c)) {
      rq->state = RQ_DRAIN;
      return MHD_YES;
    }
    return queue(rq, c);
  }
  if (*upload_data_size) {
    size_t n = *upload_data_size;
    *upload_data_size = 0;
    if (rq->state == RQ_BODY) {
      ops->body(rq->op, upload_data, n);
      return MHD_YES;
    }
    rq->drained += n;
    return rq->drained > DRAIN_MAX ? MHD_NO : MHD_YES;
  }
  if (rq->state == RQ_QUEUED)
    return MHD_YES;
  if (rq->state == RQ_BODY)
    ops->end(rq->op);
  return queue(rq, c);
}

static void log_request(const struct req_ctx *rq,
                        enum MHD_RequestTerminationCode toe)
{
  const struct hs_http_ops *ops = rq->h->app->ops;
  const void *op = rq->op;
  char when[32];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  /* The path only: a query may hold a presigned URL's signature. */
  const char *t = rq->target ? rq->target : "-";
  int plen = (int)strcspn(t, "?");
  static const char *const why[] = {"ok", "error", "timeout", "shutdown",
                                    "read-error", "client-abort"};
  fprintf(stderr,
          "%s %s %s %.*s %u %s %s in=%llu out=%llu %.3fms%s%s\n", when,
          rq->peer[0] ? rq->peer : "-", rq->method ? rq->method : "-", plen, t,
          rq->status, op ? ops->name(op) : "-", op ? ops->path(op) : "-",
          (unsigned long long)(op ? ops->body_bytes(op) : 0),
          (unsigned long long)rq->bytes_out,
          (double)(ho_now_ns() - rq->start_ns) / 1e6,
          toe != MHD_REQUEST_TERMINATED_COMPLETED_OK ? " " : "",
          toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && (unsigned)toe < 6
              ? why[toe]
              : "");
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
  struct hs_http *h = cls;
  struct req_ctx *rq = *con_cls;
  head_awaited(h, conn_of(c), true); /* the next request's, if any */
  if (!rq)
    return;
  if (rq->status && rq->status < 600)
    hs_stat_add(&h->app->stats->status[rq->status / 100], 1);
  if (h->app->cfg->log_requests)
    log_request(rq, toe);
  if (rq->op)
    h->app->ops->free(rq->op);
  hs_buf_free(&rq->own.headers);
  hs_buf_free(&rq->own.body);
  free(rq->headers);
  free(rq->target);
  free(rq);
  *con_cls = NULL;
}

/* ---- the listening socket ----------------------------------------------- */

static int bind_listen(const struct hs_config *cfg, struct hs_buf *why)
{
  struct addrinfo hints = {.ai_family = AF_UNSPEC,
                           .ai_socktype = SOCK_STREAM,
                           .ai_flags = AI_PASSIVE};
  struct addrinfo *res = NULL;
  char port[8];
  snprintf(port, sizeof port, "%u", cfg->listen_port);
  int rc = getaddrinfo(cfg->listen_host[0] ? cfg->listen_host : NULL, port,
                       &hints, &res);
  if (rc != 0) {
    hs_buf_printf(why, "cannot resolve %s: %s", cfg->listen_host,
                  gai_strerror(rc));
    return -1;
  }
  int fd = -1;
  for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                ai->ai_protocol);
    if (fd < 0)
      continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 1024) == 0)
      break;
    hs_buf_free(why);
    hs_buf_printf(why, "cannot listen on %s:%u: %s", cfg->listen_host,
                  cfg->listen_port, strerror(errno));
    close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  return fd;
}

static void bound_address(int fd, char *out, size_t len)
{
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  char peer[80];
  if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
    snprintf(peer, sizeof peer, "?");
  else
    format_peer((struct sockaddr *)&ss, peer, sizeof peer);
  snprintf(out, len, "http://%s", peer);
}

static void free_http(struct hs_http *h)
{
  pthread_cond_destroy(&h->cv);
  ho_mutex_destroy(&h->mu);
  free(h);
}

enum hs_err hs_http_start(const struct hs_http_app *app, struct hs_http **out,
                          char *bound, size_t bound_len, struct hs_buf *why)
{
  const struct hs_config *cfg = app->cfg;
  struct hs_http *h = calloc(1, sizeof *h);
  if (!h)
    return HS_ERR_NOMEM;
  h->app = app;
  ho_mutex_init(&h->mu);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&h->cv, &ca);
  pthread_condattr_destroy(&ca);
  int fd = bind_listen(cfg, why);
  if (fd < 0) {
    free_http(h);
    return HS_ERR_IO;
  }
  bound_address(fd, bound, bound_len);
  size_t pool = (size_t)cfg->max_header_size * 2 + (64u << 10);
  h->d = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
          MHD_USE_POLL | MHD_USE_ITC | MHD_USE_ERROR_LOG,
      0, NULL, NULL, handler, h, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
      MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool,
      MHD_OPTION_CONNECTION_LIMIT, (unsigned)cfg->max_connections,
      MHD_OPTION_PER_IP_CONNECTION_LIMIT,
      hs_config_per_ip(cfg),
      MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)cfg->idle_timeout_s,
      MHD_OPTION_NOTIFY_COMPLETED, completed, h, MHD_OPTION_NOTIFY_CONNECTION,
      conn_notify, h, MHD_OPTION_URI_LOG_CALLBACK, uri_log, h,
      MHD_OPTION_END);
  if (!h->d) {
    hs_buf_puts(why, "libmicrohttpd could not start");
    close(fd);
    free_http(h);
    return HS_ERR_IO;
  }
  h->watcher_started = pthread_create(&h->watcher, NULL, head_watcher, h) == 0;
  if (!h->watcher_started) {
    hs_buf_puts(why, "cannot start a thread");
    hs_http_stop(h);
    return HS_ERR_IO;
  }
  *out = h;
  return HS_OK;
}

void hs_http_stop(struct hs_http *h)
{
  if (!h)
    return;
  if (h->watcher_started) {
    ho_mutex_lock(&h->mu);
    h->stop = true;
    pthread_cond_broadcast(&h->cv);
    ho_mutex_unlock(&h->mu);
    pthread_join(h->watcher, NULL);
  }
  MHD_socket fd = MHD_quiesce_daemon(h->d);
  if (fd != MHD_INVALID_SOCKET)
    close(fd);
  MHD_stop_daemon(h->d);
  free_http(h);
}
