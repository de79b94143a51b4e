/* SPDX-License-Identifier: MIT */
/* The glue's RDMA path end to end in one process: libhipobj (its internal
 * modules, on the simulated RC fabric of tests/fakes) as the client, the
 * glue speaking real HTTP on 127.0.0.1 to an in-process S3 responder whose
 * RDMA side is the reference engine. Checks what moved the bytes (the
 * responder's counters, the glue's result) and what the bytes are. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fabric_s3.h"
#include "fakes/world.h"
#include "hipobj_s3.h"

struct fixture {
  struct world w;
  struct ho_engine *engine;
  struct fabric_s3 *s3;
  char endpoint[64];
};

static struct fixture *fx;

static void fill(uint8_t *p, size_t n, unsigned seed)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (uint8_t)((i * 2654435761u + seed) >> 9);
}

static int setup(void **state)
{
  struct ho_engine_config ec = {0};
  int port = 0;
  fx = calloc(1, sizeof *fx);
  if (!fx || world_create(&fx->w, NULL) != 0 ||
      world_init(&fx->w, WORLD_CLIENT_NIC) != hipObjSuccess)
    return -1;
  ec.nic = WORLD_SERVER_NIC;
  ec.chunk_size = 64 * 1024;
  ec.ready_timeout_ms = 300;
  ec.rdma_timeout_ms = 2000;
  if (ho_engine_create(&fx->w.plat, &ec, &fx->engine) != hipObjSuccess)
    return -1;
  fx->s3 = fabric_s3_start(fx->engine, &port);
  if (!fx->s3)
    return -1;
  snprintf(fx->endpoint, sizeof fx->endpoint, "http://127.0.0.1:%d", port);
  return 0;
}

static int teardown(void **state)
{
  fabric_s3_stop(fx->s3);
  ho_engine_destroy(fx->engine);
  hipObjShutdown();
  world_destroy(&fx->w);
  free(fx);
  return 0;
}

static int reset_mode(void **state)
{
  fabric_s3_set_mode(fx->s3, FABRIC_NORMAL);
  return 0;
}

static hipObjS3Client_t *client(uint64_t part, uint32_t flags)
{
  hipObjS3Config_t cfg;
  hipObjS3Client_t *c = NULL;
  hipObjS3Result_t r;
  hipObjS3ConfigInit(&cfg);
  cfg.endpoint = fx->endpoint;
  cfg.flags = flags | HIPOBJ_S3_NO_ENV;
  cfg.partSize = part;
  cfg.concurrency = 3;
  if (hipObjS3ClientCreate(&cfg, &c, &r) != hipObjS3Ok)
    fail_msg("client: %s", r.message);
  /* hipObject is up (the fake world's instance): the client uses it. */
  assert_true(hipObjS3ClientRdma(c, NULL, 0, NULL));
  return c;
}

static void assert_stored(const char *path, const uint8_t *want, size_t n)
{
  uint8_t *data = NULL;
  size_t size = 0;
  assert_true(fabric_s3_object(fx->s3, path, &data, &size));
  assert_int_equal(size, n);
  assert_memory_equal(data, want, n);
  free(data);
}

static unsigned count(atomic_uint *c)
{
  return atomic_load(c);
}

/* ---- RDMA ---------------------------------------------------------------- */

static void rdma_put_get(void **state)
{
  struct fabric_counts *k = fabric_s3_counts(fx->s3);
  hipObjS3Client_t *c = client(0, 0);
  hipObjS3Result_t r;
  size_t n = (1 << 20) + 5;
  uint8_t *src = malloc(n), *dst = calloc(1, n);
  fill(src, n, 1);
  unsigned put0 = count(&k->rdma_put), get0 = count(&k->rdma_get);
  unsigned hput0 = count(&k->http_put), hget0 = count(&k->http_get);
  assert_int_equal(hipObjS3PutObject(c, "b", "one", src, n, hipObjS3MemHost,
                                     &r), hipObjS3Ok);
  assert_int_equal(r.partsRdma, 1);
  assert_int_equal(r.partsHttp, 0);
  assert_false(r.fellBack);
  assert_int_equal(r.fallbackReason, hipObjS3FallbackNone);
  assert_stored("/b/one", src, n);
  assert_int_equal(hipObjS3GetObject(c, "b", "one", dst, n, hipObjS3MemHost,
                                     &r), hipObjS3Ok);
  assert_memory_equal(src, dst, n);
  assert_int_equal(r.partsRdma, 1);
  assert_false(r.fellBack);
  /* The responder moved them by RDMA, nothing by HTTP. */
  assert_int_equal(count(&k->rdma_put) - put0, 1);
  assert_int_equal(count(&k->rdma_get) - get0, 1);
  assert_int_equal(count(&k->http_put) - hput0, 0);
  assert_int_equal(count(&k->http_get) - hget0, 0);
  hipObjS3Counters_t cnt;
  hipObjS3GetCounters(c, &cnt);
  assert_int_equal(cnt.rdmaTransfers, 2);
  assert_int_equal(cnt.rdmaBytes, 2 * n);
  assert_int_equal(cnt.httpTransfers, 0);
  hipObjS3ClientDestroy(c);
  free(src);
  free(dst);
}

static void rdma_multipart_and_ranges(void **state)
{
  struct fabric_counts *k = fabric_s3_counts(fx->s3);
  hipObjS3Client_t *c = client(256 << 10, 0);
  hipObjS3Result_t r;
  size_t n = (1 << 20) + 100; /* 5 parts */
  uint8_t *src = malloc(n), *dst = calloc(1, n);
  fill(src, n, 2);
  unsigned lp0 = count(&k->list_parts), put0 = count(&k->rdma_put);
  assert_int_equal(hipObjS3PutObject(c, "b", "multi", src, n,
                                     hipObjS3MemHost, &r), hipObjS3Ok);
  assert_int_equal(r.partsRdma, 5);
  assert_int_equal(r.partsHttp, 0);
  /* RDMA parts have no ETag in their answers: ListParts supplied them. */
  assert_int_equal(count(&k->list_parts) - lp0, 1);
  assert_int_equal(count(&k->rdma_put) - put0, 5);
  assert_int_equal(fabric_s3_open_uploads(fx->s3), 0);
  assert_string_equal(r.etag, "\"mp\"");
  assert_stored("/b/multi", src, n);
  assert_int_equal(hipObjS3GetObject(c, "b", "multi", dst, n,
                                     hipObjS3MemHost, &r), hipObjS3Ok);
  assert_int_equal(r.partsRdma, 5);
  assert_memory_equal(src, dst, n);
  memset(dst, 0, n);
  assert_int_equal(hipObjS3GetRange(c, "b", "multi", 300000, dst, 600001,
                                    hipObjS3MemHost, &r), hipObjS3Ok);
  assert_int_equal(r.partsRdma, 3);
  assert_memory_equal(dst, src + 300000, 600001);
  hipObjS3ClientDestroy(c);
  free(src);
  free(dst);
}

/* A buffer the application registered stays registered. */
static void caller_registered_buffer(void **state)
{
  hipObjS3Client_t *c = client(0, 0);
  hipObjS3Result_t r;
  size_t n = 70000;
  uint8_t *src = malloc(n);
  fill(src, n, 3);
  assert_int_equal(hipObjBufRegisterHost(src, n).opError, hipObjSuccess);
  assert_int_equal(hipObjS3PutObject(c, "b", "reg", src, n, hipObjS3MemHost,
                                     &r), hipObjS3Ok);
  assert_int_equal(r.partsRdma, 1);
  assert_int_equal(hipObjBufDeregister(src).opError, hipObjSuccess);
  assert_int_equal(hipObjBufDeregister(src).opError, hipObjBufNotRegistered);
  hipObjS3ClientDestroy(c);
  free(src);
}

/* The callbacks with the application's own hipObjGet(). */
static void application_driven_call(void **state)
{
  hipObjS3Client_t *c = client(0, 0);
  hipObjS3Result_t r;
  size_t n = 4096;
  uint8_t *src = malloc(n), *dst = calloc(1, n);
  fill(src, n, 4);
  assert_int_equal(hipObjS3PutObject(c, "b", "app", src, n, hipObjS3MemHost,
                                     &r), hipObjS3Ok);
  assert_int_equal(hipObjBufRegisterHost(dst, n).opError, hipObjSuccess);
  hipObjS3CallSpec_t spec = {.bucket = "b", .key = "app",
                             .op = HIPOBJ_RDMA_OP_GET, .offset = 96,
                             .length = 1000};
  hipObjS3Call_t *call;
  assert_int_equal(hipObjS3CallCreate(c, &spec, &call), hipObjS3Ok);
  hipObjError_t e = hipObjGet(NULL, dst, 1000, 8, hipObjS3CallOps(), call);
  assert_int_equal(e.opError, hipObjSuccess);
  assert_int_equal(hipObjS3CallResult(call, e, &r), hipObjS3Ok);
  assert_int_equal(r.bytes, 1000);
  assert_memory_equal(dst + 8, src + 96, 1000);
  hipObjS3CallDestroy(call);
  hipObjBufDeregister(dst);
  hipObjS3ClientDestroy(c);
  free(src);
  free(dst);
}

/* ---- the server declines: an explicit fallback -------------------------- */

static void declined_falls_back(void **state)
{
  struct fabric_counts *k = fabric_s3_counts(fx->s3);
  hipObjS3Client_t *c = client(256 << 10, 0);
  hipObjS3Result_t r;
  size_t n = (1 << 20) + 100;
  uint8_t *src = malloc(n), *dst = calloc(1, n);
  fill(src, n, 5);
  fabric_s3_set_mode(fx->s3, FABRIC_DECLINE);
  unsigned d0 = count(&k->declined), hp0 = count(&k->http_put);
  assert_int_equal(hipObjS3PutObject(c, "b", "declined", src, n,
                                     hipObjS3MemHost, &r), hipObjS3Ok);
  assert_true(r.fellBack);
  assert_int_equal(r.fallbackReason, hipObjS3FallbackDeclined);
  assert_int_equal(r.partsHttp, 5);
  assert_int_equal(r.partsRdma, 0);
  /* Once declined, the other parts go straight to HTTP. */
  unsigned asked = count(&k->declined) - d0;
  assert_true(asked >= 1 && asked <= 3);
  assert_int_equal(count(&k->http_put) - hp0, 5);
  assert_stored("/b/declined", src, n);
  assert_int_equal(hipObjS3GetObject(c, "b", "declined", dst, n,
                                     hipObjS3MemHost, &r), hipObjS3Ok);
  assert_true(r.fellBack);
  assert_int_equal(r.partsHttp, 5);
  assert_memory_equal(src, dst, n);
  hipObjS3Counters_t cnt;
  hipObjS3GetCounters(c, &cnt);
  assert_int_equal(cnt.fallbacksDeclined, 10);
  assert_int_equal(cnt.rdmaTransfers, 0);
  hipObjS3ClientDestroy(c);
  free(src);
  free(dst);
}

static void declined_and_required(void **state)
{
  hipObjS3Client_t *c = client(0, HIPOBJ_S3_REQUIRE_RDMA);
  hipObjS3Result_t r;
  uint8_t b[100] = {7};
  fabric_s3_set_mode(fx->s3, FABRIC_DECLINE);
  assert_int_equal(hipObjS3PutObject(c, "b", "req", b, sizeof b,
                                     hipObjS3MemHost, &r),
                   hipObjS3RdmaDeclined);
  assert_non_null(strstr(r.message, "declined"));
  uint8_t *data;
  size_t size;
  assert_false(fabric_s3_object(fx->s3, "/b/req", &data, &size));
  hipObjS3ClientDestroy(c);
}

/* ---- servers that break the protocol: errors, never success ------------- */

static void ignored_token(void **state)
{
  hipObjS3Client_t *c = client(0, 0);
  hipObjS3Result_t r;
  uint8_t b[5000];
  fill(b, sizeof b, 6);
  assert_int_equal(hipObjS3PutObject(c, "b", "ign", b, sizeof b,
                                     hipObjS3MemHost, &r), hipObjS3Ok);
  fabric_s3_set_mode(fx->s3, FABRIC_IGNORE);
  assert_int_equal(hipObjS3GetObject(c, "b", "ign", b, sizeof b,
                                     hipObjS3MemHost, &r),
                   hipObjS3ProtocolError);
  assert_non_null(strstr(r.message, "ignored x-amz-rdma-token"));
  assert_int_equal(hipObjS3PutObject(c, "b", "ign", b, sizeof b,
                                     hipObjS3MemHost, &r),
                   hipObjS3ProtocolError);
  assert_non_null(strstr(r.message, "empty object"));
  hipObjS3ClientDestroy(c);
}

static void wrong_byte_count(void **state)
{
  hipObjS3Client_t *c = client(0, 0);
  hipObjS3Result_t r;
  uint8_t b[5000];
  fill(b, sizeof b, 7);
  assert_int_equal(hipObjS3PutObject(c, "b", "cnt", b, sizeof b,
                                     hipObjS3MemHost, &r), hipObjS3Ok);
  fabric_s3_set_mode(fx->s3, FABRIC_BAD_COUNT);
  assert_int_equal(hipObjS3GetObject(c, "b", "cnt", b, sizeof b,
                                     hipObjS3MemHost, &r),
                   hipObjS3ProtocolError);
  assert_non_null(strstr(r.message, "x-amz-rdma-bytes-transferred"));
  hipObjS3ClientDestroy(c);
}

static void reply_without_peer(void **state)
{
  hipObjS3Client_t *c = client(0, 0);
  hipObjS3Result_t r;
  uint8_t b[100] = {0};
  fabric_s3_set_mode(fx->s3, FABRIC_PLAIN_REPLY);
  assert_int_equal(hipObjS3PutObject(c, "b", "peerless", b, sizeof b,
                                     hipObjS3MemHost, &r),
                   hipObjS3ProtocolError);
  if (!strstr(r.message, "names no peer"))
    fail_msg("message: %s", r.message);
  assert_int_equal(r.rdmaError, hipObjS3Error);
  hipObjS3ClientDestroy(c);
}

/* 503 SlowDown is what S3 asks clients to retry: the glue sends the
 * request again after a random backoff, the RDMA request included, up to
 * AWS_MAX_ATTEMPTS (4) attempts in all. */
static void slow_down_is_retried(void **state)
{
  hipObjS3Client_t *c = client(0, 0);
  hipObjS3Result_t r;
  uint8_t b[3000], back[3000];
  fill(b, sizeof b, 9);
  unsigned s0 = fabric_s3_slowed(fx->s3);
  fabric_s3_slow_down(fx->s3, 2);
  assert_int_equal(hipObjS3PutObject(c, "b", "slow", b, sizeof b,
                                     hipObjS3MemHost, &r), hipObjS3Ok);
  assert_int_equal(r.partsRdma, 1);
  fabric_s3_slow_down(fx->s3, 3);
  if (hipObjS3GetObject(c, "b", "slow", back, sizeof back, hipObjS3MemHost,
                        &r) != hipObjS3Ok)
    fail_msg("GET after three 503s: %s", r.message);
  assert_memory_equal(back, b, sizeof b);
  assert_int_equal(fabric_s3_slowed(fx->s3) - s0, 5);
  /* Four in a row: the fourth answer is the caller's. */
  fabric_s3_slow_down(fx->s3, 4);
  assert_int_not_equal(hipObjS3GetObject(c, "b", "slow", back, sizeof back,
                                         hipObjS3MemHost, &r), hipObjS3Ok);
  assert_int_equal(r.httpStatus, 503);
  assert_int_equal(fabric_s3_slowed(fx->s3) - s0, 9);
  fabric_s3_slow_down(fx->s3, 0);
  hipObjS3ClientDestroy(c);
}

/* ---- threads ------------------------------------------------------------- */

struct worker_arg {
  hipObjS3Client_t *c;
  unsigned id;
  int ok;
};

static void *worker(void *arg)
{
  struct worker_arg *w = arg;
  char key[16];
  size_t n = 100000 + w->id;
  uint8_t *src = malloc(n), *dst = malloc(n);
  hipObjS3Result_t r;
  fill(src, n, 10 + w->id);
  snprintf(key, sizeof key, "t%u", w->id);
  w->ok = 1;
  for (int i = 0; i < 4 && w->ok; i++)
    w->ok = hipObjS3PutObject(w->c, "b", key, src, n, hipObjS3MemHost, &r) ==
                hipObjS3Ok &&
            r.partsRdma == 1 &&
            hipObjS3GetObject(w->c, "b", key, dst, n, hipObjS3MemHost, &r) ==
                hipObjS3Ok &&
            r.partsRdma == 1 && !memcmp(src, dst, n);
  free(src);
  free(dst);
  return NULL;
}

static void threads_share_a_client(void **state)
{
  hipObjS3Client_t *c = client(0, 0);
  struct worker_arg a[4];
  pthread_t t[4];
  for (unsigned i = 0; i < 4; i++) {
    a[i] = (struct worker_arg){c, i, 0};
    assert_int_equal(pthread_create(&t[i], NULL, worker, &a[i]), 0);
  }
  for (unsigned i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    assert_true(a[i].ok);
  }
  hipObjS3ClientDestroy(c);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(rdma_put_get, reset_mode),
      cmocka_unit_test_setup(rdma_multipart_and_ranges, reset_mode),
      cmocka_unit_test_setup(caller_registered_buffer, reset_mode),
      cmocka_unit_test_setup(application_driven_call, reset_mode),
      cmocka_unit_test_setup(declined_falls_back, reset_mode),
      cmocka_unit_test_setup(declined_and_required, reset_mode),
      cmocka_unit_test_setup(ignored_token, reset_mode),
      cmocka_unit_test_setup(wrong_byte_count, reset_mode),
      cmocka_unit_test_setup(reply_without_peer, reset_mode),
      cmocka_unit_test_setup(slow_down_is_retried, reset_mode),
      cmocka_unit_test_setup(threads_share_a_client, reset_mode),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
