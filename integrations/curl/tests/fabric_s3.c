/* SPDX-License-Identifier: MIT */
/* The in-process S3 responder of the fabric tests: HTTP/1.1 with
 * keep-alive, a thread per connection, objects and multipart uploads in
 * memory, and the reference engine for requests with a token. Test code:
 * simple and strict rather than fast. */
#include "fabric_s3.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_OBJS 64
#define MAX_UPLOADS 8
#define MAX_PARTS 64
#define MAX_CONNS 64
#define HEAD_MAX 16384
#define BODY_MAX ((size_t)64 << 20)

struct object {
  char path[512];
  uint8_t *data;
  size_t size;
  char etag[24];
};

struct part {
  uint8_t *data;
  size_t size;
  char etag[24];
};

struct upload {
  bool open;
  char id[16];
  char path[512];
  struct part parts[MAX_PARTS + 1];
};

struct fabric_s3 {
  struct ho_engine *engine;
  int fd;
  pthread_t acceptor;
  atomic_int stop, mode, live;
  atomic_uint slow_down, slowed; /* 503 SlowDown for the next slow_down */
  pthread_mutex_t mu;
  struct object objs[MAX_OBJS];
  struct upload ups[MAX_UPLOADS];
  unsigned next_upload;
  int conns[MAX_CONNS];
  struct fabric_counts counts;
};

struct request {
  char method[8];
  char path[512];
  char query[512];
  char *head;
  char *body;
  size_t body_len;
};

/* ---- helpers ------------------------------------------------------------ */

static void etag_of(const uint8_t *p, size_t n, char out[24])
{
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 1099511628211ull;
  snprintf(out, 24, "\"%016llx\"", (unsigned long long)h);
}

/* A request header's value (case-insensitive name), or NULL. */
static const char *header(const struct request *r, const char *name, char *out,
                          size_t cap)
{
  size_t n = strlen(name);
  for (const char *l = strstr(r->head, "\r\n"); l && l[2]; l = strstr(l + 2, "\r\n")) {
    const char *h = l + 2;
    if (strncasecmp(h, name, n) == 0 && h[n] == ':') {
      const char *v = h + n + 1;
      while (*v == ' ')
        v++;
      size_t len = strcspn(v, "\r");
      if (len >= cap)
        len = cap - 1;
      memcpy(out, v, len);
      out[len] = '\0';
      return out;
    }
  }
  return NULL;
}

static const char *query_param(const struct request *r, const char *name,
                               char *out, size_t cap)
{
  size_t n = strlen(name);
  for (const char *q = r->query; q && *q;) {
    if (strncmp(q, name, n) == 0 && q[n] == '=') {
      size_t len = strcspn(q + n + 1, "&");
      if (len >= cap)
        len = cap - 1;
      memcpy(out, q + n + 1, len);
      out[len] = '\0';
      return out;
    }
    q = strchr(q, '&');
    q = q ? q + 1 : NULL;
  }
  return NULL;
}

static bool send_all(int fd, const char *p, size_t n)
{
  while (n > 0) {
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k <= 0)
      return false;
    p += k;
    n -= (size_t)k;
  }
  return true;
}

/* Every answer has a Last-Modified (a fixed date), which minio-go's HEAD
 * and GET require (the Go bridge's tests). */
static bool respond(int fd, int status, const char *headers, const void *body,
                    size_t len, bool head)
{
  char line[1024];
  int n = snprintf(line, sizeof line,
                   "HTTP/1.1 %d X\r\nContent-Length: %zu\r\n"
                   "Last-Modified: Thu, 01 Jan 2026 00:00:00 GMT\r\n%s\r\n",
                   status, len, headers ? headers : "");
  return send_all(fd, line, (size_t)n) &&
         (head || !len || send_all(fd, body, len));
}

static bool respond_error(int fd, int status, const char *code)
{
  char body[256];
  int n = snprintf(body, sizeof body,
                   "<Error><Code>%s</Code><Message>test</Message></Error>",
                   code);
  return respond(fd, status, NULL, body, (size_t)n, false);
}

static struct object *find_obj(struct fabric_s3 *f, const char *path)
{
  for (int i = 0; i < MAX_OBJS; i++)
    if (f->objs[i].data && !strcmp(f->objs[i].path, path))
      return &f->objs[i];
  return NULL;
}

/* Stores data (owned from now on) as the object at path. */
static void put_obj(struct fabric_s3 *f, const char *path, uint8_t *data,
                    size_t size)
{
  pthread_mutex_lock(&f->mu);
  struct object *o = find_obj(f, path);
  for (int i = 0; !o && i < MAX_OBJS; i++)
    if (!f->objs[i].data)
      o = &f->objs[i];
  if (o) {
    free(o->data);
    snprintf(o->path, sizeof o->path, "%s", path);
    o->data = data;
    o->size = size;
    etag_of(data, size, o->etag);
  } else {
    free(data);
  }
  pthread_mutex_unlock(&f->mu);
}

static struct upload *find_upload(struct fabric_s3 *f, const char *id)
{
  for (int i = 0; i < MAX_UPLOADS; i++)
    if (f->ups[i].open && !strcmp(f->ups[i].id, id))
      return &f->ups[i];
  return NULL;
}

/* false: no such upload (never made, completed or aborted): the part is
 * dropped. */
static bool put_part(struct fabric_s3 *f, const char *id, unsigned n,
                     uint8_t *data, size_t size)
{
  pthread_mutex_lock(&f->mu);
  struct upload *u = find_upload(f, id);
  bool ok = u != NULL;
  if (u && n >= 1 && n <= MAX_PARTS) {
    free(u->parts[n].data);
    u->parts[n].data = data;
    u->parts[n].size = size;
    etag_of(data, size, u->parts[n].etag);
    data = NULL;
  }
  pthread_mutex_unlock(&f->mu);
  free(data);
  return ok;
}

static bool upload_open(struct fabric_s3 *f, const char *id)
{
  pthread_mutex_lock(&f->mu);
  bool open = find_upload(f, id) != NULL;
  pthread_mutex_unlock(&f->mu);
  return open;
}

/* ---- RDMA --------------------------------------------------------------- */

struct rdma_io {
  struct fabric_s3 *f;
  char path[512];
  char upload[16];
  unsigned part;
  uint8_t *buf;
  size_t size;
  bool put;
};

static int io_read(void *ctx, uint64_t off, void *buf, size_t n)
{
  struct rdma_io *io = ctx;
  if (off > io->size || n > io->size - off)
    return -1;
  memcpy(buf, io->buf + off, n);
  return 0;
}

static int io_write(void *ctx, uint64_t off, const void *buf, size_t n)
{
  struct rdma_io *io = ctx;
  if (off > io->size || n > io->size - off)
    return -1;
  memcpy(io->buf + off, buf, n);
  return 0;
}

static int io_finish(void *ctx, int status, uint64_t bytes)
{
  struct rdma_io *io = ctx;
  int rc = 0;
  if (status == HO_FINAL_OK && bytes == io->size) {
    atomic_fetch_add(&io->f->counts.rdma_bytes, bytes);
    /* A part whose upload ended meanwhile cannot be committed: the final
     * says so (as a store's 404 at the end of the part, through
     * hipobj-gateway). */
    if (io->put && io->part)
      rc = put_part(io->f, io->upload, io->part, io->buf, io->size) ? 0 : -1;
    else if (io->put)
      put_obj(io->f, io->path, io->buf, io->size);
    if (io->put)
      io->buf = NULL; /* taken (or freed) */
  }
  free(io->buf);
  free(io);
  return rc;
}

/* [first, first+len) from "bytes=a-b"; the whole object without one. */
static bool range_of(const struct request *r, size_t size, size_t *first,
                     size_t *len, bool *partial)
{
  char v[64];
  unsigned long long a, b;
  *first = 0;
  *len = size;
  *partial = false;
  if (!header(r, "Range", v, sizeof v))
    return true;
  if (sscanf(v, "bytes=%llu-%llu", &a, &b) != 2 || a > b || b >= size)
    return false;
  *first = (size_t)a;
  *len = (size_t)(b - a + 1);
  *partial = true;
  return true;
}

static bool token_answer(int fd, int status, const char *reply, size_t len)
{
  char h[600];
  snprintf(h, sizeof h, "x-amz-rdma-reply: %s\r\n"
                        "x-amz-rdma-bytes-transferred: %zu\r\n", reply, len);
  return respond(fd, status, h, NULL, 0, false);
}

static bool rdma_start(struct fabric_s3 *f, int fd, struct rdma_io *io,
                       const char *token, int status)
{
  char reply[HO_ENGINE_REPLY_MAX];
  struct ho_engine_io eio = {io_read, io_write, io_finish, io};
  size_t size = io->size;
  int op = io->put ? HIPOBJ_RDMA_OP_PUT : HIPOBJ_RDMA_OP_GET;
  enum ho_engine_start_result st =
      ho_engine_start(f->engine, token, strlen(token), op, size, &eio, reply);
  if (st != HO_ENGINE_STARTED) {
    free(io->buf);
    free(io);
    if (st == HO_ENGINE_BAD_TOKEN)
      return respond_error(fd, 400, "InvalidArgument");
    return token_answer(fd, 501, "501", size);
  }
  atomic_fetch_add(io->put ? &f->counts.rdma_put : &f->counts.rdma_get, 1);
  bool bad = atomic_load(&f->mode) == FABRIC_BAD_COUNT;
  return token_answer(fd, status, reply, bad ? size + 1 : size);
}

/* A request with a token: the mode decides, then the engine. */
static bool with_token(struct fabric_s3 *f, int fd, const struct request *r,
                       const char *token, bool put)
{
  int mode = atomic_load(&f->mode);
  if (mode == FABRIC_DECLINE) {
    atomic_fetch_add(&f->counts.declined, 1);
    char h[] = "x-amz-rdma-reply: 501\r\n";
    const char body[] = "<Error><Code>NotImplemented</Code></Error>";
    return respond(fd, 501, h, body, sizeof body - 1, false);
  }
  if (mode == FABRIC_PLAIN_REPLY)
    return respond(fd, 200, "x-amz-rdma-reply: 200\r\n", NULL, 0, false);
  struct rdma_io *io = calloc(1, sizeof *io);
  char v[32];
  io->f = f;
  io->put = put;
  snprintf(io->path, sizeof io->path, "%s", r->path);
  if (put) {
    if (query_param(r, "uploadId", io->upload, sizeof io->upload) &&
        query_param(r, "partNumber", v, sizeof v)) {
      io->part = (unsigned)strtoul(v, NULL, 10);
      if (!upload_open(f, io->upload)) { /* before any transfer, as S3 */
        free(io);
        return respond_error(fd, 404, "NoSuchUpload");
      }
    }
    /* The token's length is the part's: let the engine check it. */
    uint64_t len = 0;
    for (int b = 40; b >= 33; b--) {
      unsigned x;
      sscanf(token + b * 2, "%2x", &x);
      len = (len << 8) | x;
    }
    io->size = (size_t)len;
    io->buf = malloc(io->size ? io->size : 1);
    return rdma_start(f, fd, io, token, 200);
  }
  size_t first, len;
  bool partial;
  pthread_mutex_lock(&f->mu);
  struct object *o = find_obj(f, r->path);
  bool ok = o && range_of(r, o->size, &first, &len, &partial);
  if (ok && (io->buf = malloc(len ? len : 1)))
    memcpy(io->buf, o->data + first, len);
  pthread_mutex_unlock(&f->mu);
  if (!ok) {
    free(io);
    return respond_error(fd, o ? 416 : 404, o ? "InvalidRange" : "NoSuchKey");
  }
  io->size = len;
  return rdma_start(f, fd, io, token, partial ? 206 : 200);
}

/* ---- plain requests ----------------------------------------------------- */

static bool plain_get(struct fabric_s3 *f, int fd, const struct request *r,
                      bool head)
{
  size_t first, len;
  bool partial;
  char h[128];
  pthread_mutex_lock(&f->mu);
  struct object *o = find_obj(f, r->path);
  if (!o || !range_of(r, o->size, &first, &len, &partial)) {
    pthread_mutex_unlock(&f->mu);
    return head ? respond(fd, o ? 416 : 404, NULL, NULL, 0, true)
                : respond_error(fd, o ? 416 : 404,
                                o ? "InvalidRange" : "NoSuchKey");
  }
  uint8_t *copy = malloc(len ? len : 1);
  memcpy(copy, o->data + first, len);
  snprintf(h, sizeof h, "ETag: %s\r\n", o->etag);
  pthread_mutex_unlock(&f->mu);
  if (!head) {
    atomic_fetch_add(&f->counts.http_get, 1);
    atomic_fetch_add(&f->counts.http_bytes, len);
  }
  bool ok = respond(fd, partial ? 206 : 200, h, copy, len, head);
  free(copy);
  return ok;
}

static bool plain_put(struct fabric_s3 *f, int fd, struct request *r)
{
  char id[16], v[32], h[64];
  uint8_t *data = malloc(r->body_len ? r->body_len : 1);
  memcpy(data, r->body, r->body_len);
  etag_of(data, r->body_len, v);
  snprintf(h, sizeof h, "ETag: %s\r\n", v);
  atomic_fetch_add(&f->counts.http_put, 1);
  atomic_fetch_add(&f->counts.http_bytes, r->body_len);
  if (query_param(r, "uploadId", id, sizeof id) &&
      query_param(r, "partNumber", v, sizeof v)) {
    if (!put_part(f, id, (unsigned)strtoul(v, NULL, 10), data, r->body_len))
      return respond_error(fd, 404, "NoSuchUpload");
  } else
    put_obj(f, r->path, data, r->body_len);
  return respond(fd, 200, h, NULL, 0, false);
}

static bool create_upload(struct fabric_s3 *f, int fd, const struct request *r)
{
  char body[256];
  pthread_mutex_lock(&f->mu);
  struct upload *u = NULL;
  for (int i = 0; !u && i < MAX_UPLOADS; i++)
    if (!f->ups[i].open)
      u = &f->ups[i];
  if (u) {
    memset(u, 0, sizeof *u);
    u->open = true;
    snprintf(u->id, sizeof u->id, "up%u", ++f->next_upload);
    snprintf(u->path, sizeof u->path, "%s", r->path);
  }
  int n = snprintf(body, sizeof body,
                   "<InitiateMultipartUploadResult><UploadId>%s</UploadId>"
                   "</InitiateMultipartUploadResult>", u ? u->id : "");
  pthread_mutex_unlock(&f->mu);
  return u ? respond(fd, 200, NULL, body, (size_t)n, false)
           : respond_error(fd, 503, "SlowDown");
}

static void drop_upload(struct upload *u)
{
  for (int i = 0; i <= MAX_PARTS; i++)
    free(u->parts[i].data);
  memset(u, 0, sizeof *u);
}

static bool list_parts(struct fabric_s3 *f, int fd, const char *id)
{
  char *body = malloc(64 * 1024);
  size_t n = 0;
  atomic_fetch_add(&f->counts.list_parts, 1);
  pthread_mutex_lock(&f->mu);
  struct upload *u = find_upload(f, id);
  n += (size_t)snprintf(body, 256, "<ListPartsResult><UploadId>%s</UploadId>"
                                   "<IsTruncated>false</IsTruncated>", id);
  for (int i = 1; u && i <= MAX_PARTS; i++)
    if (u->parts[i].data) {
      /* The quotes as entities, as S3 writes them. */
      char e[24];
      snprintf(e, sizeof e, "%.16s", u->parts[i].etag + 1);
      n += (size_t)snprintf(body + n, 256, "<Part><PartNumber>%d</PartNumber>"
                            "<ETag>&quot;%s&quot;</ETag><Size>%zu</Size>"
                            "</Part>", i, e, u->parts[i].size);
    }
  pthread_mutex_unlock(&f->mu);
  n += (size_t)snprintf(body + n, 64, "</ListPartsResult>");
  bool ok = u ? respond(fd, 200, NULL, body, n, false)
              : respond_error(fd, 404, "NoSuchUpload");
  free(body);
  return ok;
}

/* A part's ETag in the request at p (after <ETag>) against the stored
 * one ("\"hex\""): the quotes may be there, as entities (&quot; or
 * &#34;, as Go's encoding/xml writes them) or absent, as S3 accepts. */
static bool etag_is(const char *p, const char *stored)
{
  size_t n = strlen(stored) - 2;
  static const char *const quotes[] = {"\"", "&quot;", "&#34;", ""};
  for (size_t i = 0; i < sizeof quotes / sizeof quotes[0]; i++) {
    size_t q = strlen(quotes[i]);
    if (!strncmp(p, quotes[i], q) && !strncmp(p + q, stored + 1, n) &&
        !strncmp(p + q + n, quotes[i], q) && p[q + n + q] == '<')
      return true;
  }
  return false;
}

/* <Part><PartNumber>N</PartNumber><ETag>E</ETag></Part>...: every part
 * named with its ETag, in order, then the object. */
static bool complete(struct fabric_s3 *f, int fd, struct request *r,
                     const char *id)
{
  atomic_fetch_add(&f->counts.completes, 1);
  pthread_mutex_lock(&f->mu);
  struct upload *u = find_upload(f, id);
  size_t total = 0;
  unsigned expect = 1;
  bool ok = u != NULL;
  for (const char *p = strstr(r->body, "<PartNumber>"); ok && p;
       p = strstr(p + 1, "<PartNumber>"), expect++) {
    unsigned n = (unsigned)strtoul(p + 12, NULL, 10);
    const char *e = strstr(p, "<ETag>");
    ok = n == expect && n <= MAX_PARTS && e && u->parts[n].data &&
         etag_is(e + 6, u->parts[n].etag);
    if (ok)
      total += u->parts[n].size;
  }
  ok = ok && expect > 1;
  uint8_t *data = ok ? malloc(total ? total : 1) : NULL;
  size_t off = 0;
  for (unsigned i = 1; data && i < expect; i++) {
    memcpy(data + off, u->parts[i].data, u->parts[i].size);
    off += u->parts[i].size;
  }
  char path[512];
  if (ok) {
    snprintf(path, sizeof path, "%s", u->path);
    drop_upload(u);
  }
  pthread_mutex_unlock(&f->mu);
  if (!ok)
    return respond_error(fd, 400, "InvalidPart");
  put_obj(f, path, data, total);
  /* With its Bucket, which minio-go requires to take it for a result. */
  char body[640];
  const char *b = path + 1, *slash = strchr(b, '/');
  int n = snprintf(body, sizeof body, "<CompleteMultipartUploadResult>"
                   "<Bucket>%.*s</Bucket><ETag>&quot;mp&quot;</ETag>"
                   "</CompleteMultipartUploadResult>",
                   slash ? (int)(slash - b) : 0, b);
  return respond(fd, 200, NULL, body, (size_t)n, false);
}

static bool abort_upload(struct fabric_s3 *f, int fd, const char *id)
{
  atomic_fetch_add(&f->counts.aborts, 1);
  pthread_mutex_lock(&f->mu);
  struct upload *u = find_upload(f, id);
  if (u)
    drop_upload(u);
  pthread_mutex_unlock(&f->mu);
  return respond(fd, 204, NULL, NULL, 0, false);
}

void fabric_s3_slow_down(struct fabric_s3 *f, unsigned n)
{
  atomic_store(&f->slow_down, n);
}

unsigned fabric_s3_slowed(struct fabric_s3 *f) { return atomic_load(&f->slowed); }

/* Takes one of the pending 503s, if any. */
static bool take_slow_down(struct fabric_s3 *f)
{
  unsigned n = atomic_load(&f->slow_down);
  while (n > 0 && !atomic_compare_exchange_weak(&f->slow_down, &n, n - 1))
    ;
  if (n > 0)
    atomic_fetch_add(&f->slowed, 1);
  return n > 0;
}

static bool dispatch(struct fabric_s3 *f, int fd, struct request *r)
{
  char token[128], id[16];
  if (take_slow_down(f)) /* a request body, if any, was read with it */
    return strcmp(r->method, "HEAD") ? respond_error(fd, 503, "SlowDown")
                                     : respond(fd, 503, NULL, NULL, 0, true);
  bool has_token = header(r, "x-amz-rdma-token", token, sizeof token) != NULL;
  bool has_id = query_param(r, "uploadId", id, sizeof id) != NULL;
  bool ignore = atomic_load(&f->mode) == FABRIC_IGNORE;
  const char *m = r->method;
  if (has_token && !ignore && (!strcmp(m, "GET") || !strcmp(m, "PUT")))
    return with_token(f, fd, r, token, !strcmp(m, "PUT"));
  if (!strcmp(m, "GET") && has_id)
    return list_parts(f, fd, id);
  if (!strcmp(m, "GET") || !strcmp(m, "HEAD"))
    return plain_get(f, fd, r, !strcmp(m, "HEAD"));
  if (!strcmp(m, "PUT"))
    return plain_put(f, fd, r);
  if (!strcmp(m, "POST") && strstr(r->query, "uploads"))
    return create_upload(f, fd, r);
  if (!strcmp(m, "POST") && has_id)
    return complete(f, fd, r, id);
  if (!strcmp(m, "DELETE") && has_id)
    return abort_upload(f, fd, id);
  return respond_error(fd, 405, "MethodNotAllowed");
}

/* ---- connections -------------------------------------------------------- */

/* Reads one request into buf (headers) and a malloc()ed body. */
static bool read_request(int fd, char *buf, struct request *r)
{
  size_t len = 0;
  char *end = NULL;
  while (!end) {
    if (len == HEAD_MAX - 1)
      return false;
    ssize_t k = recv(fd, buf + len, HEAD_MAX - 1 - len, 0);
    if (k <= 0)
      return false;
    len += (size_t)k;
    buf[len] = '\0';
    end = strstr(buf, "\r\n\r\n");
  }
  *end = '\0';
  memset(r, 0, sizeof *r);
  r->head = buf;
  char target[1024];
  if (sscanf(buf, "%7s %1023s", r->method, target) != 2)
    return false;
  char *q = strchr(target, '?');
  if (q)
    *q++ = '\0';
  snprintf(r->path, sizeof r->path, "%.*s", (int)sizeof r->path - 1, target);
  snprintf(r->query, sizeof r->query, "%s", q ? q : "");
  char v[32];
  size_t n = header(r, "Content-Length", v, sizeof v) ? strtoul(v, NULL, 10) : 0;
  if (n > BODY_MAX)
    return false;
  static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
  if (header(r, "Expect", v, sizeof v) && !strcasecmp(v, "100-continue") &&
      !send_all(fd, cont, sizeof cont - 1))
    return false;
  r->body = malloc(n + 1);
  size_t have = len - (size_t)(end + 4 - buf);
  if (have > n)
    return false; /* pipelining: not used by the clients tested */
  memcpy(r->body, end + 4, have);
  while (have < n) {
    ssize_t k = recv(fd, r->body + have, n - have, 0);
    if (k <= 0)
      return false;
    have += (size_t)k;
  }
  r->body[n] = '\0';
  r->body_len = n;
  return true;
}

struct conn {
  struct fabric_s3 *f;
  int fd;
  int slot;
};

static void *serve(void *arg)
{
  struct conn *c = arg;
  char *buf = malloc(HEAD_MAX);
  struct request r;
  memset(&r, 0, sizeof r);
  while (buf && read_request(c->fd, buf, &r)) {
    bool ok = dispatch(c->f, c->fd, &r);
    free(r.body);
    r.body = NULL;
    if (!ok)
      break;
  }
  free(r.body);
  free(buf);
  pthread_mutex_lock(&c->f->mu);
  c->f->conns[c->slot] = -1;
  pthread_mutex_unlock(&c->f->mu);
  close(c->fd);
  atomic_fetch_sub(&c->f->live, 1);
  free(c);
  return NULL;
}

static void start_conn(struct fabric_s3 *f, int fd)
{
  struct conn *c = calloc(1, sizeof *c);
  pthread_t t;
  c->f = f;
  c->fd = fd;
  c->slot = -1;
  pthread_mutex_lock(&f->mu);
  for (int i = 0; i < MAX_CONNS && c->slot < 0; i++)
    if (f->conns[i] < 0)
      f->conns[c->slot = i] = fd;
  pthread_mutex_unlock(&f->mu);
  atomic_fetch_add(&f->live, 1);
  if (c->slot < 0 || pthread_create(&t, NULL, serve, c) != 0) {
    if (c->slot >= 0)
      f->conns[c->slot] = -1;
    close(fd);
    atomic_fetch_sub(&f->live, 1);
    free(c);
    return;
  }
  pthread_detach(t);
}

static void *acceptor(void *arg)
{
  struct fabric_s3 *f = arg;
  while (!atomic_load(&f->stop)) {
    int fd = accept(f->fd, NULL, NULL);
    if (fd < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    start_conn(f, fd);
  }
  return NULL;
}

struct fabric_s3 *fabric_s3_start(struct ho_engine *engine, int *port)
{
  struct fabric_s3 *f = calloc(1, sizeof *f);
  struct sockaddr_in a = {.sin_family = AF_INET};
  socklen_t alen = sizeof a;
  if (!f)
    return NULL;
  f->engine = engine;
  pthread_mutex_init(&f->mu, NULL);
  for (int i = 0; i < MAX_CONNS; i++)
    f->conns[i] = -1;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  f->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (f->fd < 0 || bind(f->fd, (struct sockaddr *)&a, sizeof a) != 0 ||
      listen(f->fd, 64) != 0 ||
      getsockname(f->fd, (struct sockaddr *)&a, &alen) != 0 ||
      pthread_create(&f->acceptor, NULL, acceptor, f) != 0) {
    if (f->fd >= 0)
      close(f->fd);
    free(f);
    return NULL;
  }
  *port = ntohs(a.sin_port);
  return f;
}

void fabric_s3_stop(struct fabric_s3 *f)
{
  if (!f)
    return;
  atomic_store(&f->stop, 1);
  shutdown(f->fd, SHUT_RDWR);
  pthread_join(f->acceptor, NULL);
  close(f->fd);
  pthread_mutex_lock(&f->mu);
  for (int i = 0; i < MAX_CONNS; i++)
    if (f->conns[i] >= 0)
      shutdown(f->conns[i], SHUT_RDWR);
  pthread_mutex_unlock(&f->mu);
  while (atomic_load(&f->live) > 0)
    usleep(1000);
  for (int i = 0; i < MAX_OBJS; i++)
    free(f->objs[i].data);
  for (int i = 0; i < MAX_UPLOADS; i++)
    drop_upload(&f->ups[i]);
  pthread_mutex_destroy(&f->mu);
  free(f);
}

void fabric_s3_set_mode(struct fabric_s3 *f, enum fabric_mode m)
{
  atomic_store(&f->mode, (int)m);
}

struct fabric_counts *fabric_s3_counts(struct fabric_s3 *f)
{
  return &f->counts;
}

bool fabric_s3_object(struct fabric_s3 *f, const char *path, uint8_t **data,
                      size_t *size)
{
  pthread_mutex_lock(&f->mu);
  struct object *o = find_obj(f, path);
  if (o) {
    *data = malloc(o->size ? o->size : 1);
    memcpy(*data, o->data, o->size);
    *size = o->size;
  }
  pthread_mutex_unlock(&f->mu);
  return o != NULL;
}

unsigned fabric_s3_open_uploads(struct fabric_s3 *f)
{
  unsigned n = 0;
  pthread_mutex_lock(&f->mu);
  for (int i = 0; i < MAX_UPLOADS; i++)
    n += f->ups[i].open;
  pthread_mutex_unlock(&f->mu);
  return n;
}
