/* SPDX-License-Identifier: MIT */
/* The server's RDMA path on the simulated RC fabric (tests/fakes): the real
 * library as client (hipObjGet, hipObjPut, the application-driven calls)
 * against the server's S3 layer and engine in one process. The client's
 * hipObjOps_t callbacks hand each request to the S3 layer exactly as http.c
 * does, with x-amz-rdma-token, and give the library the x-amz-rdma-reply
 * header of the response.
 *
 * Checked: GET (whole objects, ranges) and PUT and UploadPart, from 1 byte
 * to many chunks; the bytes; which path moved them (server counters, the
 * server NIC's counters); several READs in flight on a PUT; concurrent
 * clients; a client that disappears after the reply (the QP and the upload
 * are reclaimed, nothing is committed); a wrong cookie; a decline; a token
 * whose length is not the payload's; every QP busy. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "fakes/fake_verbs.h"
#include "fakes/world.h"
#include "hipobj.h"
#include "engine.h"
#include "rdma.h"
#include "rdma/token.h"
#include "s3_internal.h"

#define BUF_SIZE (4u << 20)
#define CHUNK (64u << 10)

struct fixture {
  struct world w;
  struct hs_config cfg;
  struct hs_stats stats;
  struct hs_server srv;
  uint8_t *buf;
};

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (uint8_t)((i * 2654435761u + seed) >> 11);
}

/* A second rail on its own subnet: server fake_srv1 (10.0.1.2), client
 * fake_cli1 (10.0.1.1); the first is fake_srv0 and fake_cli0 (10.0.0.x). */
static int add_rail(struct world *w)
{
  struct fake_device_cfg dc;
  fake_device_cfg_default(&dc);
  dc.ipv4 = 0x0a000102u;
  if (world_add_nic_cfg(w, "fake_srv1", "0000:c2:00.0", &dc) != 0)
    return -1;
  dc.ipv4 = 0x0a000101u;
  return world_add_nic_cfg(w, "fake_cli1", "0000:42:00.0", &dc);
}

static struct fixture *make_on(const char *nic, unsigned qps,
                               unsigned timeout_ms, bool decline)
{
  struct fixture *f = calloc(1, sizeof *f);
  if (!f || world_create(&f->w, NULL) != 0)
    return NULL;
  if (strchr(nic, ',') && add_rail(&f->w) != 0)
    return NULL;
  if (world_init(&f->w, WORLD_CLIENT_NIC) != hipObjSuccess)
    return NULL;
  struct hs_buf why;
  hs_buf_init(&why, 0);
  char *argv[] = {"x", NULL};
  if (hs_config_parse(1, argv, &f->cfg, &why) != HS_CONFIG_OK)
    return NULL;
  f->cfg.nic = nic;
  f->cfg.rdma_qps = qps;
  f->cfg.rdma_chunk_size = CHUNK;
  f->cfg.rdma_depth = 4;
  f->cfg.rdma_timeout_ms = timeout_ms;
  f->cfg.decline_rdma = decline;
  f->cfg.min_part_size = 0;
  /* a request finding every QP busy waits 20 ms for one, then 503: the
   * busy cases hold their QPs longer (the queue: test_server_api) */
  f->cfg.rdma_queue_wait_ms = 20;
  hs_stats_init(&f->stats);
  if (hs_rdma_open_on(&f->w.plat, &f->cfg, &f->stats, &f->srv.rdma, &why) ||
      !f->srv.rdma) {
    fprintf(stderr, "engine: %s\n", hs_buf_cstr(&why));
    return NULL;
  }
  hs_buf_free(&why);
  struct hs_store_config sc = {.max_object_size = f->cfg.max_object_size};
  if (hs_store_open(&sc, &f->srv.store) ||
      hs_store_bucket_create(f->srv.store, "bkt"))
    return NULL;
  f->srv.cfg = &f->cfg;
  f->srv.stats = &f->stats;
  f->buf = aligned_alloc(4096, BUF_SIZE);
  memset(f->buf, 0xee, BUF_SIZE);
  if (hipObjBufRegisterHost(f->buf, BUF_SIZE).opError != hipObjSuccess)
    return NULL;
  return f;
}

static struct fixture *make(unsigned qps, unsigned timeout_ms, bool decline)
{
  return make_on(WORLD_SERVER_NIC, qps, timeout_ms, decline);
}

static int setup(void **state)
{
  *state = make(8, 2000, false);
  return *state ? 0 : -1;
}

static int teardown(void **state)
{
  struct fixture *f = *state;
  hipObjBufDeregister(f->buf);
  hipObjShutdown();
  hs_rdma_close(f->srv.rdma);
  hs_store_close(f->srv.store);
  world_destroy(&f->w);
  free(f->buf);
  free(f);
  return 0;
}

/* ---- the application: an S3 client that is the S3 layer itself ---------- */

struct app {
  struct fixture *f;
  const char *method;
  char target[256];
  char range[64];
  const char *content_md5;
  struct hs_kv extra[4]; /* more request headers, up to the first NULL */
  bool drop_reply;   /* the client goes away after the reply */
  bool bad_cookie;   /* the reply's cookie is changed before the library */
  unsigned status;
  char reply[HO_ENGINE_REPLY_MAX + 8];
  bool has_reply;
  uint64_t bytes_header;
  char content_range[64];
};

static const char *header_of(const struct hs_response *r, const char *name)
{
  size_t pos = 0;
  const char *n, *v;
  while (hs_resp_next_header(r, &pos, &n, &v))
    if (strcasecmp(n, name) == 0)
      return v;
  return NULL;
}

/* One HTTP request through the S3 layer, as http.c makes it. */
static struct hs_op *s3_call(struct fixture *f, const char *method,
                             const char *target, struct hs_kv *h, size_t nh,
                             const char *body, size_t blen)
{
  struct hs_request req = {.method = method,
                           .target = target,
                           .headers = {h, nh},
                           .has_length = true,
                           .content_length = blen};
  struct hs_op *op = hs_op_new(&f->srv, &req);
  assert_non_null(op);
  if (hs_op_begin(op) == HS_STEP_BODY) {
    if (blen)
      hs_op_body(op, body, blen);
    hs_op_end(op);
  }
  hs_op_response(op);
  return op;
}

static int send_request(void *ctx, const char *token, size_t len)
{
  struct app *a = ctx;
  char tok[HO_TOKEN_HEX + 1];
  assert_int_equal(len, HO_TOKEN_HEX);
  memcpy(tok, token, len);
  tok[len] = '\0';
  struct hs_kv h[8] = {{.name = "x-amz-rdma-token", .value = tok},
                       {.name = "Content-Length", .value = "0"}};
  size_t nh = 2;
  for (size_t i = 0; i < 4 && a->extra[i].name; i++)
    h[nh++] = a->extra[i];
  if (a->range[0])
    h[nh++] = (struct hs_kv){"Range", a->range};
  if (a->content_md5)
    h[nh++] = (struct hs_kv){"Content-MD5", a->content_md5};
  struct hs_op *op = s3_call(a->f, a->method, a->target, h, nh, NULL, 0);
  struct hs_response *r = hs_op_response(op);
  a->status = r->status;
  const char *rep = header_of(r, "x-amz-rdma-reply");
  a->has_reply = rep != NULL;
  if (rep)
    snprintf(a->reply, sizeof a->reply, "%s", rep);
  const char *bt = header_of(r, "x-amz-rdma-bytes-transferred");
  a->bytes_header = bt ? strtoull(bt, NULL, 10) : 0;
  const char *cr = header_of(r, "Content-Range");
  snprintf(a->content_range, sizeof a->content_range, "%s", cr ? cr : "");
  if (r->status / 100 == 2)
    assert_int_equal(r->body.len, 0); /* the payload is not in the body */
  hs_op_free(op);
  return 0;
}

static int recv_reply(void *ctx, char *reply, size_t *len)
{
  struct app *a = ctx;
  if (!a->has_reply || a->drop_reply)
    return -1;
  size_t n = strlen(a->reply);
  if (n >= *len)
    return -1;
  memcpy(reply, a->reply, n);
  if (a->bad_cookie && n == 4 + HO_TOKEN_HEX)
    reply[4 + 50] = reply[4 + 50] == '0' ? '1' : '0'; /* address: cookie */
  *len = n;
  return 0;
}

static const hipObjOps_t app_ops = {send_request, recv_reply};

static void app_init(struct app *a, struct fixture *f, const char *method,
                     const char *key)
{
  memset(a, 0, sizeof *a);
  a->f = f;
  a->method = method;
  snprintf(a->target, sizeof a->target, "/bkt/%s", key);
}

static void http_put(struct fixture *f, const char *key, const void *data,
                     size_t n)
{
  char t[256];
  snprintf(t, sizeof t, "/bkt/%s", key);
  struct hs_op *op = s3_call(f, "PUT", t, NULL, 0, data, n);
  assert_int_equal(hs_op_response(op)->status, 200);
  hs_op_free(op);
}

/* The object's bytes, read from the store. */
static uint8_t *stored(struct fixture *f, const char *key, size_t *n)
{
  struct hs_obj_info info;
  struct hs_reader *r;
  if (hs_store_get(f->srv.store, "bkt", key, &info, &r))
    return NULL;
  uint8_t *b = malloc(info.size + 1);
  assert_int_equal(hs_reader_read(r, 0, b, info.size), HS_OK);
  hs_reader_close(r);
  *n = info.size;
  return b;
}

/* The engine ends a transfer on its own thread, after the final message:
 * wait for the counters to show it. */
static void wait_counter(atomic_uint_fast64_t *c, uint64_t want)
{
  for (int i = 0; i < 5000 && atomic_load(c) < want; i++)
    nanosleep(&(struct timespec){0, 1000000}, NULL);
  assert_true(atomic_load(c) >= want);
}

/* ---- tests ---------------------------------------------------------------- */

static void get_objects(void **state)
{
  struct fixture *f = *state;
  static const size_t sizes[] = {1, 2, 4095, CHUNK - 1, CHUNK, CHUNK + 1,
                                 10 * CHUNK + 17, 3u << 20};
  uint8_t *obj = malloc(3u << 20);
  uint64_t done = 0, bytes = 0;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t n = sizes[i];
    fill(obj, n, (uint32_t)i);
    char key[32];
    snprintf(key, sizeof key, "get-%zu", n);
    http_put(f, key, obj, n);
    uint64_t http_out = f->stats.http_bytes_out;
    struct fake_dev_stats before, after;
    fake_device_stats(WORLD_SERVER_NIC, &before);
    memset(f->buf, 0xee, n + 2);
    struct app a;
    app_init(&a, f, "GET", key);
    hipObjError_t e = hipObjGet(NULL, f->buf, n, 1, &app_ops, &a);
    assert_int_equal(e.opError, hipObjSuccess);
    assert_int_equal(a.status, 200);
    assert_int_equal(a.bytes_header, n);
    assert_memory_equal(f->buf + 1, obj, n);
    assert_int_equal(f->buf[0], 0xee);
    assert_int_equal(f->buf[n + 1], 0xee);
    wait_counter(&f->stats.rdma_completed, ++done);
    bytes += n;
    assert_int_equal(f->stats.rdma_bytes_out, bytes);
    /* moved by the server's RDMA WRITEs, not over HTTP */
    fake_device_stats(WORLD_SERVER_NIC, &after);
    assert_true(after.bytes_written - before.bytes_written >= n);
    assert_int_equal(f->stats.http_bytes_out, http_out);
  }
  /* a range: the token's length is the range's */
  struct app a;
  app_init(&a, f, "GET", "get-3145728");
  snprintf(a.range, sizeof a.range, "bytes=%u-%u", CHUNK + 5,
           3 * CHUNK + 4);
  assert_int_equal(hipObjGet(NULL, f->buf, 2 * CHUNK, 0, &app_ops, &a)
                       .opError,
                   hipObjSuccess);
  assert_int_equal(a.status, 206);
  assert_int_equal(a.bytes_header, 2 * CHUNK);
  fill(obj, 3u << 20, 7);
  assert_memory_equal(f->buf, obj + CHUNK + 5, 2 * CHUNK);
  free(obj);
  assert_int_equal(f->stats.rdma_failures, 0);
}

/* --nic fake_srv0,fake_srv1 (issue #22, 4): both open, and a client on
 * either subnet is served by the server's NIC on it. */
static void two_rails(void **state)
{
  (void)state;
  struct fixture *f = make_on("fake_srv0,fake_srv1", 8, 2000, false);
  assert_non_null(f);
  assert_string_equal(hs_rdma_nic(f->srv.rdma), "fake_srv0,fake_srv1");
  enum { N = 3 * CHUNK + 11 };
  uint8_t *obj = malloc(N);
  fill(obj, N, 5);
  http_put(f, "railed", obj, N);
  static const char *const srv_nic[2] = {"fake_srv0", "fake_srv1"};
  static const char *const cli_nic[4] = {"fake_cli1", WORLD_CLIENT_NIC,
                                         "fake_cli1", WORLD_CLIENT_NIC};
  for (int i = 0; i < 4; i++) {
    int rail = i % 2 == 0 ? 1 : 0;
    hipObjBufDeregister(f->buf);
    hipObjShutdown();
    assert_int_equal(world_init(&f->w, cli_nic[i]), hipObjSuccess);
    assert_int_equal(hipObjBufRegisterHost(f->buf, BUF_SIZE).opError,
                     hipObjSuccess);
    struct fake_dev_stats b[2], a[2];
    for (int k = 0; k < 2; k++)
      fake_device_stats(srv_nic[k], &b[k]);
    memset(f->buf, 0xee, N);
    struct app g;
    app_init(&g, f, "GET", "railed");
    assert_int_equal(hipObjGet(NULL, f->buf, N, 0, &app_ops, &g).opError,
                     hipObjSuccess);
    assert_memory_equal(f->buf, obj, N);
    wait_counter(&f->stats.rdma_completed, (uint64_t)i + 1);
    for (int k = 0; k < 2; k++)
      fake_device_stats(srv_nic[k], &a[k]);
    assert_int_equal(a[rail].bytes_written - b[rail].bytes_written, N);
    assert_int_equal(a[!rail].bytes_written - b[!rail].bytes_written, 0);
  }
  /* /_hipobj/stats: a rail each, with its two GETs */
  struct hs_op *op = s3_call(f, "GET", "/_hipobj/stats", NULL, 0, NULL, 0);
  struct hs_response *r = hs_op_response(op);
  assert_int_equal(r->status, 200);
  const char *body = hs_buf_cstr(&r->body);
  for (int k = 0; k < 2; k++) {
    char want[160];
    snprintf(want, sizeof want,
             "%s{\"name\":\"%s\",\"transfers\":2,\"bytes\":%d,"
             "\"failed\":0,\"live\":",
             k ? "," : "\"nics\":[", srv_nic[k], 2 * N);
    assert_non_null(strstr(body, want));
  }
  assert_non_null(strstr(body, "\"store\":{")); /* the members after it */
  hs_op_free(op);
  free(obj);
  /* a list that did not come through the parser is checked at the open */
  struct hs_config bad = f->cfg;
  bad.nic = "fake_srv0,fake_srv0";
  struct hs_rdma *rd = NULL;
  struct hs_buf why;
  hs_buf_init(&why, 0);
  assert_int_equal(hs_rdma_open_on(&f->w.plat, &bad, &f->stats, &rd, &why),
                   HS_ERR_IO);
  assert_null(rd);
  assert_non_null(strstr(hs_buf_cstr(&why), "a NIC named twice"));
  hs_buf_free(&why);
  *state = f;
  teardown(state);
}

static void put_objects(void **state)
{
  struct fixture *f = *state;
  static const size_t sizes[] = {1, 4096, CHUNK + 1, 20 * CHUNK + 3};
  uint64_t done = 0;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t n = sizes[i];
    fill(f->buf, n, (uint32_t)i + 50);
    char key[32];
    snprintf(key, sizeof key, "put-%zu", n);
    struct fake_dev_stats before, after;
    fake_device_stats(WORLD_SERVER_NIC, &before);
    uint64_t http_in = f->stats.http_bytes_in;
    struct app a;
    app_init(&a, f, "PUT", key);
    assert_int_equal(hipObjPut(NULL, f->buf, n, 0, &app_ops, &a).opError,
                     hipObjSuccess);
    assert_int_equal(a.status, 200);
    wait_counter(&f->stats.rdma_completed, ++done);
    size_t got;
    uint8_t *b = stored(f, key, &got);
    assert_non_null(b);
    assert_int_equal(got, n);
    assert_memory_equal(b, f->buf, n);
    free(b);
    /* the ETag is the MD5 of what arrived */
    struct hs_obj_info info;
    hs_store_get(f->srv.store, "bkt", key, &info, NULL);
    uint8_t md5[16];
    char etag[HS_ETAG_MAX];
    hs_md5(f->buf, n, md5);
    hs_etag_from_md5(md5, etag);
    assert_string_equal(info.etag, etag);
    fake_device_stats(WORLD_SERVER_NIC, &after);
    assert_true(after.bytes_read - before.bytes_read >= n); /* RDMA READ */
    assert_int_equal(f->stats.http_bytes_in, http_in);
  }
  /* Content-MD5 is checked at the commit: a wrong one commits nothing */
  fill(f->buf, 1000, 3);
  struct app a;
  app_init(&a, f, "PUT", "md5");
  a.content_md5 = "AAAAAAAAAAAAAAAAAAAAAA==";
  assert_int_not_equal(hipObjPut(NULL, f->buf, 1000, 0, &app_ops, &a).opError,
                       hipObjSuccess);
  wait_counter(&f->stats.rdma_failures, 1);
  size_t n;
  assert_null(stored(f, "md5", &n));
}

static void upload_parts(void **state)
{
  struct fixture *f = *state;
  struct hs_op *op = s3_call(f, "POST", "/bkt/mp?uploads", NULL, 0, NULL, 0);
  const char *body = hs_buf_cstr(&hs_op_response(op)->body);
  const char *id = strstr(body, "<UploadId>") + 10;
  char upload[HS_UPLOAD_ID_LEN + 1];
  memcpy(upload, id, HS_UPLOAD_ID_LEN);
  upload[HS_UPLOAD_ID_LEN] = '\0';
  hs_op_free(op);
  const size_t sizes[] = {5 * CHUNK + 1, 3 * CHUNK, 1000};
  size_t off = 0;
  for (unsigned p = 0; p < 3; p++) {
    fill(f->buf + off, sizes[p], p + 9);
    struct app a;
    app_init(&a, f, "PUT", "mp");
    snprintf(a.target, sizeof a.target, "/bkt/mp?partNumber=%u&uploadId=%s",
             p + 1, upload);
    assert_int_equal(
        hipObjPut(NULL, f->buf, sizes[p], (off_t)off, &app_ops, &a).opError,
        hipObjSuccess);
    off += sizes[p];
  }
  wait_counter(&f->stats.rdma_completed, 3);
  /* the parts' ETags come from ListParts: the RDMA response precedes them */
  char t[128];
  snprintf(t, sizeof t, "/bkt/mp?uploadId=%s", upload);
  op = s3_call(f, "GET", t, NULL, 0, NULL, 0);
  body = hs_buf_cstr(&hs_op_response(op)->body);
  struct hs_buf xml;
  hs_buf_init(&xml, 0);
  hs_buf_puts(&xml, "<CompleteMultipartUpload>");
  const char *p = body;
  for (unsigned i = 1; i <= 3; i++) {
    p = strstr(p, "<ETag>&quot;") + 12;
    hs_buf_printf(&xml, "<Part><PartNumber>%u</PartNumber><ETag>%.32s</ETag>"
                        "</Part>", i, p);
  }
  hs_buf_puts(&xml, "</CompleteMultipartUpload>");
  hs_op_free(op);
  op = s3_call(f, "POST", t, NULL, 0, xml.data, xml.len);
  assert_int_equal(hs_op_response(op)->status, 200);
  assert_non_null(strstr(hs_buf_cstr(&hs_op_response(op)->body), "-3&quot;"));
  hs_op_free(op);
  hs_buf_free(&xml);
  size_t n;
  uint8_t *b = stored(f, "mp", &n);
  assert_int_equal(n, off);
  assert_memory_equal(b, f->buf, off);
  /* GetObject ?partNumber=N by RDMA: the part's bytes, a ranged GET */
  uint64_t done = atomic_load(&f->stats.rdma_completed);
  for (unsigned k = 0, first = 0; k < 3; first += (unsigned)sizes[k++]) {
    struct app a;
    app_init(&a, f, "GET", "mp");
    snprintf(a.target, sizeof a.target, "/bkt/mp?partNumber=%u", k + 1);
    memset(f->buf + off, 0xee, sizes[k]);
    assert_int_equal(
        hipObjGet(NULL, f->buf, sizes[k], (off_t)off, &app_ops, &a).opError,
        hipObjSuccess);
    assert_int_equal(a.status, 206);
    assert_int_equal(a.bytes_header, sizes[k]);
    char want[64];
    snprintf(want, sizeof want, "bytes %u-%u/%zu", first,
             first + (unsigned)sizes[k] - 1, off);
    assert_string_equal(a.content_range, want);
    assert_memory_equal(f->buf + off, b + first, sizes[k]);
    wait_counter(&f->stats.rdma_completed, ++done);
  }
  /* a token whose length is not the part's moves nothing */
  struct app a;
  app_init(&a, f, "GET", "mp");
  snprintf(a.target, sizeof a.target, "/bkt/mp?partNumber=3");
  assert_int_not_equal(
      hipObjGet(NULL, f->buf, 1001, (off_t)off, &app_ops, &a).opError,
      hipObjSuccess);
  free(b);
}

struct worker {
  struct fixture *f;
  int id;
  int failures;
};

static void *worker(void *arg)
{
  struct worker *w = arg;
  struct fixture *f = w->f;
  size_t slot = (size_t)w->id * (BUF_SIZE / 8);
  size_t n = 3 * CHUNK + (size_t)w->id * 101;
  for (int round = 0; round < 4; round++) {
    char key[32];
    snprintf(key, sizeof key, "conc-%d", w->id);
    fill(f->buf + slot, n, (uint32_t)(w->id * 10 + round));
    struct app a;
    app_init(&a, f, "PUT", key);
    if (hipObjPut(NULL, f->buf, n, (off_t)slot, &app_ops, &a).opError)
      w->failures++;
    /* wait for the commit, then read it back by RDMA into another slot */
    for (int i = 0; i < 2000; i++) {
      struct hs_obj_info info;
      if (!hs_store_get(f->srv.store, "bkt", key, &info, NULL) &&
          info.size == n) {
        uint8_t md5[16];
        char e[HS_ETAG_MAX];
        hs_md5(f->buf + slot, n, md5);
        hs_etag_from_md5(md5, e);
        if (!strcmp(e, info.etag))
          break;
      }
      nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    app_init(&a, f, "GET", key);
    size_t back = slot + BUF_SIZE / 16;
    if (hipObjGet(NULL, f->buf, n, (off_t)back, &app_ops, &a).opError ||
        memcmp(f->buf + back, f->buf + slot, n))
      w->failures++;
  }
  return NULL;
}

static void concurrent_clients(void **state)
{
  struct fixture *f = *state;
  pthread_t t[6];
  struct worker w[6];
  for (int i = 0; i < 6; i++) {
    w[i] = (struct worker){.f = f, .id = i};
    pthread_create(&t[i], NULL, worker, &w[i]);
  }
  for (int i = 0; i < 6; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(w[i].failures, 0);
  }
}

/* The client takes the reply and never comes back: the server waits for
 * ready until its timeout, then reclaims the QP; a PUT commits nothing. */
static void client_disappears(void **state)
{
  struct fixture *f = make(2, 100, false);
  assert_non_null(f);
  http_put(f, "obj", "0123456789", 10);
  for (int i = 0; i < 2; i++) { /* as many as the server has QPs */
    struct app a;
    app_init(&a, f, i ? "GET" : "PUT", i ? "obj" : "new");
    a.drop_reply = true;
    hipObjError_t e = i ? hipObjGet(NULL, f->buf, 10, 0, &app_ops, &a)
                        : hipObjPut(NULL, f->buf, 10, 0, &app_ops, &a);
    assert_int_equal(e.opError, hipObjS3Error);
    assert_int_equal(a.status, 200); /* the server had answered */
  }
  /* both QPs wait for a ready that never comes */
  struct app a;
  app_init(&a, f, "GET", "obj");
  assert_int_equal(hipObjGet(NULL, f->buf, 10, 0, &app_ops, &a).opError,
                   hipObjS3Error);
  assert_int_equal(a.status, 503);
  /* until the timeout reclaims them; the PUT committed nothing */
  wait_counter(&f->stats.rdma_failures, 2);
  size_t n;
  assert_null(stored(f, "new", &n));
  assert_int_equal(f->stats.rdma_completed, 0);
  app_init(&a, f, "GET", "obj");
  for (int i = 0; i < 100 && a.status != 200; i++) {
    memset(f->buf, 0, 10);
    if (hipObjGet(NULL, f->buf, 10, 0, &app_ops, &a).opError == hipObjSuccess)
      break;
    nanosleep(&(struct timespec){0, 10000000}, NULL);
  }
  assert_int_equal(a.status, 200);
  assert_memory_equal(f->buf, "0123456789", 10);
  *state = f;
  teardown(state);
}

static void wrong_cookie(void **state)
{
  struct fixture *f = *state;
  http_put(f, "obj", "abcdefgh", 8);
  for (int put = 0; put < 2; put++) {
    struct app a;
    app_init(&a, f, put ? "PUT" : "GET", put ? "cookie" : "obj");
    a.bad_cookie = true;
    memset(f->buf, 0xee, 8);
    hipObjError_t e = put ? hipObjPut(NULL, f->buf, 8, 0, &app_ops, &a)
                          : hipObjGet(NULL, f->buf, 8, 0, &app_ops, &a);
    assert_int_equal(e.opError, hipObjRdmaError);
    if (!put)
      assert_int_equal(f->buf[0], 0xee); /* nothing moved */
  }
  wait_counter(&f->stats.rdma_failures, 2);
  size_t n;
  assert_null(stored(f, "cookie", &n));
  assert_int_equal(f->stats.rdma_completed, 0);
}

static void declines(void **state)
{
  struct fixture *f = *state;
  http_put(f, "obj", "abcdefgh", 8);
  /* a length that is not the object's: 501, fall back */
  struct app a;
  app_init(&a, f, "GET", "obj");
  assert_int_equal(hipObjGet(NULL, f->buf, 4, 0, &app_ops, &a).opError,
                   hipObjS3Error);
  assert_int_equal(a.status, 501);
  assert_string_equal(a.reply, "501");
  /* a missing object: 404 and no reply */
  app_init(&a, f, "GET", "missing");
  assert_int_equal(hipObjGet(NULL, f->buf, 4, 0, &app_ops, &a).opError,
                   hipObjS3Error);
  assert_int_equal(a.status, 404);
  assert_false(a.has_reply);
  /* --decline-rdma */
  f->cfg.decline_rdma = true;
  app_init(&a, f, "GET", "obj");
  assert_int_equal(hipObjGet(NULL, f->buf, 8, 0, &app_ops, &a).opError,
                   hipObjS3Error);
  assert_int_equal(a.status, 501);
  assert_string_equal(a.reply, "501");
  app_init(&a, f, "PUT", "declined");
  assert_int_equal(hipObjPut(NULL, f->buf, 8, 0, &app_ops, &a).opError,
                   hipObjS3Error);
  f->cfg.decline_rdma = false;
  size_t n;
  assert_null(stored(f, "declined", &n));
  assert_int_equal(f->stats.rdma_declined, 3);
  assert_int_equal(f->stats.rdma_completed, 0);
}

/* Every server QP busy: 503 with reply 503. */
static void busy(void **state)
{
  struct fixture *f = make(1, 300, false);
  assert_non_null(f);
  http_put(f, "obj", "abcdefgh", 8);
  char *tok = NULL;
  assert_int_equal(hipObjGetRdmaToken(f->buf, 8, HIPOBJ_RDMA_OP_GET, &tok)
                       .opError,
                   hipObjSuccess);
  struct app held;
  app_init(&held, f, "GET", "obj");
  send_request(&held, tok, strlen(tok)); /* takes the only server QP */
  assert_int_equal(held.status, 200);
  struct app a;
  app_init(&a, f, "GET", "obj");
  assert_int_equal(hipObjGet(NULL, f->buf, 8, 4096, &app_ops, &a).opError,
                   hipObjS3Error);
  assert_int_equal(a.status, 503);
  assert_string_equal(a.reply, "503");
  /* the held transfer still completes */
  assert_int_equal(hipObjCompleteRdmaTransfer(tok, held.reply,
                                              strlen(held.reply))
                       .opError,
                   hipObjSuccess);
  assert_memory_equal(f->buf, "abcdefgh", 8);
  hipObjPutRdmaToken(tok);
  *state = f;
  teardown(state);
}

/* Authentication comes before the engine: a request with a forged
 * signature and no x-amz-content-sha256 (whose signature would otherwise
 * be checked only at the end of a body that never comes) gets 403, and no
 * transfer starts, GET or PUT. */
static void forged_signature(void **state)
{
  struct fixture *f = *state;
  http_put(f, "obj", "abcdefgh", 8);
  f->cfg.auth.access_key = "AKIDEXAMPLE";
  f->cfg.auth.secret_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
  f->cfg.auth.max_clock_skew_s = 0;
  struct fake_dev_stats before, after;
  fake_device_stats(WORLD_SERVER_NIC, &before);
  for (int put = 0; put < 2; put++) {
    struct app a;
    app_init(&a, f, put ? "PUT" : "GET", "obj");
    a.extra[0] = (struct hs_kv){"Host", "localhost"};
    a.extra[1] = (struct hs_kv){"x-amz-date", "20260101T000000Z"};
    a.extra[2] = (struct hs_kv){
        "Authorization",
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/s3/"
        "aws4_request, SignedHeaders=host;x-amz-date;x-amz-rdma-token, "
        "Signature=0000000000000000000000000000000000000000000000000000000000"
        "000000"};
    memset(f->buf, 0xee, 8);
    hipObjError_t e = put ? hipObjPut(NULL, f->buf, 8, 0, &app_ops, &a)
                          : hipObjGet(NULL, f->buf, 8, 0, &app_ops, &a);
    assert_int_equal(e.opError, hipObjS3Error);
    assert_int_equal(a.status, 403);
    assert_false(a.has_reply);
    assert_int_equal(f->buf[0], 0xee);
  }
  assert_int_equal(f->stats.rdma_get + f->stats.rdma_put, 0);
  fake_device_stats(WORLD_SERVER_NIC, &after);
  assert_int_equal(after.bytes_read, before.bytes_read);
  assert_int_equal(after.bytes_written, before.bytes_written);
  assert_int_equal(f->stats.auth_failures, 2);
  f->cfg.auth.access_key = NULL;
  size_t n;
  uint8_t *b = stored(f, "obj", &n);
  assert_int_equal(n, 8);
  assert_memory_equal(b, "abcdefgh", 8);
  free(b);
}

/* A PUT's declared x-amz-content-sha256, x-amz-checksum-* and Content-MD5
 * are checked against the bytes that arrived by RDMA before the commit: a
 * mismatch fails the transfer and stores nothing. */
static void put_payload_checks(void **state)
{
  struct fixture *f = *state;
  fill(f->buf, 3000, 77);
  uint8_t sha[HS_SHA256_LEN], md5[HS_MD5_LEN];
  char sha_hex[2 * HS_SHA256_LEN + 1], md5_b64[32], crc_b64[16];
  hs_sha256(f->buf, 3000, sha);
  hs_hex(sha, sizeof sha, sha_hex);
  hs_md5(f->buf, 3000, md5);
  hs_base64_encode(md5, sizeof md5, md5_b64);
  uint32_t crc = hs_crc32(0, f->buf, 3000);
  uint8_t crc_be[4] = {(uint8_t)(crc >> 24), (uint8_t)(crc >> 16),
                       (uint8_t)(crc >> 8), (uint8_t)crc};
  hs_base64_encode(crc_be, 4, crc_b64);
  const char *zero_sha = "00000000000000000000000000000000"
                         "00000000000000000000000000000000";
  const struct {
    const char *name, *value;
    bool ok;
  } cases[] = {
      {"x-amz-content-sha256", zero_sha, false},
      {"x-amz-content-sha256", sha_hex, true},
      {"x-amz-checksum-crc32", "AAAAAA==", false},
      {"x-amz-checksum-crc32", crc_b64, true},
      {"Content-MD5", "AAAAAAAAAAAAAAAAAAAAAA==", false},
      {"Content-MD5", md5_b64, true},
  };
  uint64_t failures = 0, completed = 0, data_first_failures = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char key[32];
    snprintf(key, sizeof key, "check-%zu", i);
    struct app a;
    app_init(&a, f, "PUT", key);
    a.extra[0] = (struct hs_kv){cases[i].name, cases[i].value};
    hipObjError_t e = hipObjPut(NULL, f->buf, 3000, 0, &app_ops, &a);
    size_t n;
    uint8_t *b;
    if (cases[i].ok) {
      assert_int_equal(a.status, 200);
      assert_int_equal(e.opError, hipObjSuccess);
      wait_counter(&f->stats.rdma_completed, ++completed);
      b = stored(f, key, &n);
      assert_non_null(b);
      assert_int_equal(n, 3000);
      assert_memory_equal(b, f->buf, 3000);
      free(b);
      /* a checksum is kept with the object, as over HTTP */
      struct hs_obj_info info;
      assert_int_equal(hs_store_get(f->srv.store, "bkt", key, &info, NULL),
                       HS_OK);
      if (strcmp(cases[i].name, "x-amz-checksum-crc32") == 0) {
        char line[64];
        snprintf(line, sizeof line, "x-amz-checksum-crc32:%s\n", crc_b64);
        assert_non_null(strstr(info.attrs.headers, line));
      }
    } else if (a.status == 200) {
      /* answer first (a new connection): the final message says store
       * error, and the client fails */
      assert_int_equal(e.opError, hipObjRdmaError);
      wait_counter(&f->stats.rdma_failures, ++failures);
      assert_null(stored(f, key, &n));
    } else {
      /* data first (a kept connection): the answer is the outcome */
      assert_int_equal(a.status, 500);
      assert_int_equal(e.opError, hipObjS3Error);
      assert_int_equal(f->stats.rdma_failures, ++failures);
      assert_null(stored(f, key, &n));
      data_first_failures++;
    }
  }
  assert_int_equal(f->stats.rdma_failures, failures);
  assert_true(data_first_failures > 0); /* the kept connections said so */
}

/* A GET's conditions, range and payload hash are decided before any RDMA:
 * 412, 304, 416 (with Content-Range: bytes * /N) and 400 move nothing. */
static void get_conditions(void **state)
{
  struct fixture *f = *state;
  http_put(f, "obj", "abcdefgh", 8);
  struct hs_obj_info info;
  assert_int_equal(hs_store_get(f->srv.store, "bkt", "obj", &info, NULL),
                   HS_OK);
  char etag[HS_ETAG_MAX + 2];
  snprintf(etag, sizeof etag, "\"%s\"", info.etag);
  const struct {
    const char *name, *value;
    unsigned status;
  } cases[] = {
      {"If-Match", "\"0123\"", 412},
      {"If-Unmodified-Since", "Sat, 01 Jan 2000 00:00:00 GMT", 412},
      {"If-None-Match", etag, 304},
      {"If-Modified-Since", "Fri, 01 Jan 2100 00:00:00 GMT", 304},
      {"Range", "bytes=8-", 416},
      /* the request's body is empty: only the empty body's SHA-256 fits */
      {"x-amz-content-sha256", "2d711642b726b04401627ca9fbac32f5c8530fb1903c"
                               "c4db02258717921a4881", 400},
  };
  struct fake_dev_stats before, after;
  fake_device_stats(WORLD_SERVER_NIC, &before);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct app a;
    app_init(&a, f, "GET", "obj");
    a.extra[0] = (struct hs_kv){cases[i].name, cases[i].value};
    memset(f->buf, 0xee, 8);
    assert_int_equal(hipObjGet(NULL, f->buf, 8, 0, &app_ops, &a).opError,
                     hipObjS3Error);
    assert_int_equal(a.status, cases[i].status);
    assert_false(a.has_reply);
    assert_int_equal(f->buf[0], 0xee);
    if (cases[i].status == 416)
      assert_string_equal(a.content_range, "bytes */8");
  }
  assert_int_equal(f->stats.rdma_get, 0);
  fake_device_stats(WORLD_SERVER_NIC, &after);
  assert_int_equal(after.bytes_written, before.bytes_written);
  /* conditions that hold: the object moves */
  struct app a;
  app_init(&a, f, "GET", "obj");
  a.extra[0] = (struct hs_kv){"If-Match", etag};
  a.extra[1] = (struct hs_kv){"If-Modified-Since",
                              "Sat, 01 Jan 2000 00:00:00 GMT"};
  assert_int_equal(hipObjGet(NULL, f->buf, 8, 0, &app_ops, &a).opError,
                   hipObjSuccess);
  assert_memory_equal(f->buf, "abcdefgh", 8);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(get_objects, setup, teardown),
      cmocka_unit_test(two_rails),
      cmocka_unit_test_setup_teardown(put_objects, setup, teardown),
      cmocka_unit_test_setup_teardown(upload_parts, setup, teardown),
      cmocka_unit_test_setup_teardown(concurrent_clients, setup, teardown),
      cmocka_unit_test(client_disappears),
      cmocka_unit_test_setup_teardown(wrong_cookie, setup, teardown),
      cmocka_unit_test_setup_teardown(declines, setup, teardown),
      cmocka_unit_test(busy),
      cmocka_unit_test_setup_teardown(forged_signature, setup, teardown),
      cmocka_unit_test_setup_teardown(put_payload_checks, setup, teardown),
      cmocka_unit_test_setup_teardown(get_conditions, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
