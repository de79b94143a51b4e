/* SPDX-License-Identifier: MIT */
/* hipobj-vmtest: end-to-end cases over real verbs, against
 * hipobj-test-server, using only the public API (and tests/vm/s3mini for
 * the S3 requests). Each case prints what it checked and exits 0, 1 on a
 * failure, 77 when it cannot run here.
 *
 *   hipobj-vmtest ENDPOINT CASE [ARG]
 *   cases: init, sizes, upload-part, threads N, decline, no-final,
 *          vanish, vanish-put KEY, wrong-cookie, killed, seed KEY SIZE,
 *          bench [STREAMS [MAX_SIZE]], getlat|putlat SIZE COUNT, idle SECS,
 *          phases get|put SIZE COUNT,
 *          mkbucket NAME,
 *          stats */
#include <curl/curl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "hipobj.h"
#include "s3mini.h"

static const char *endpoint;
static int failures;

static void check(int ok, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  printf("%s: ", ok ? "ok" : "FAIL");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
  if (!ok)
    failures++;
}

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    p[i] = (uint8_t)x;
  }
}

static void request(struct s3mini *r, const char *method, const char *fmt, ...)
{
  memset(r, 0, sizeof *r);
  r->endpoint = endpoint;
  r->method = method;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->path, sizeof r->path, fmt, ap);
  va_end(ap);
}

static void make_bucket(const char *b)
{
  struct s3mini r;
  request(&r, "PUT", "/%s", b);
  s3mini_send(&r, NULL);
  s3mini_reset(&r);
}

/* Store an object over plain HTTP; returns the HTTP status. */
static long put_http(const char *key, const void *body, size_t len)
{
  struct s3mini r;
  request(&r, "PUT", "/vmtest/%s", key);
  r.body = body;
  r.body_len = len;
  s3mini_send(&r, NULL);
  long status = r.status;
  s3mini_reset(&r);
  return status;
}

static int init(void)
{
  hipObjConfig_t cfg = {0};
  cfg.gpuDevice = -1;
  cfg.nicHint = getenv("RXE_DEV") ? getenv("RXE_DEV") : "rxe0";
  hipObjError_t e = hipObjInit(&cfg);
  check(e.opError == hipObjSuccess, "hipObjInit on %s: %s", cfg.nicHint,
        hipObjGetErrorString(e.opError));
  return e.opError == hipObjSuccess ? 0 : -1;
}

static hipObjOpError_t rdma_put(const char *key, uint8_t *buf, size_t n, off_t off)
{
  struct s3mini r;
  request(&r, "PUT", "/vmtest/%s", key);
  hipObjOpError_t e = hipObjPut(NULL, buf, n, off, &s3mini_ops, &r).opError;
  s3mini_reset(&r);
  return e;
}

static hipObjOpError_t rdma_get(const char *key, uint8_t *buf, size_t n, off_t off,
                                long first, long len)
{
  struct s3mini r;
  request(&r, "GET", "/vmtest/%s", key);
  r.range_first = first;
  r.range_len = len;
  hipObjOpError_t e = hipObjGet(NULL, buf, n, off, &s3mini_ops, &r).opError;
  s3mini_reset(&r);
  return e;
}

/* GET and PUT of many sizes, at offsets, bytes compared, and the server's
 * counters showing that RDMA, not HTTP, moved them. */
static void case_sizes(void)
{
  static const size_t sizes[] = {1, 4096, 4097, 1u << 20, 64u << 20};
  const size_t cap = (64u << 20) + 8192;
  uint8_t *src = malloc(cap), *dst = malloc(cap);
  if (!src || !dst || init() != 0)
    exit(1);
  make_bucket("vmtest");
  check(hipObjBufRegisterHost(src, cap).opError == hipObjSuccess, "register source");
  check(hipObjBufRegisterHost(dst, cap).opError == hipObjSuccess, "register sink");
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t n = sizes[i];
    off_t off = i % 2 ? 4093 : 0;
    char key[32];
    snprintf(key, sizeof key, "obj-%zu", n);
    fill(src + off, n, (uint32_t)n);
    memset(dst, 0, cap);
    long long in0 = s3mini_stat(endpoint, "rdma", "bytes_in");
    long long out0 = s3mini_stat(endpoint, "rdma", "bytes_out");
    long long http0 = s3mini_stat(endpoint, "http", "bytes_in") +
                      s3mini_stat(endpoint, "http", "bytes_out");
    double t0 = now_s();
    hipObjOpError_t e = rdma_put(key, src, n, off);
    double t1 = now_s();
    check(e == hipObjSuccess, "PUT %zu bytes at offset %ld by RDMA (%.1f ms): %s", n,
          (long)off, (t1 - t0) * 1e3, hipObjGetErrorString(e));
    off_t doff = i % 2 ? 0 : 777;
    e = rdma_get(key, dst, n, doff, 0, 0);
    double t2 = now_s();
    check(e == hipObjSuccess, "GET %zu bytes at offset %ld by RDMA (%.1f ms): %s", n,
          (long)doff, (t2 - t1) * 1e3, hipObjGetErrorString(e));
    check(memcmp(dst + doff, src + off, n) == 0, "%zu bytes identical", n);
    long long in1 = s3mini_stat(endpoint, "rdma", "bytes_in");
    long long out1 = s3mini_stat(endpoint, "rdma", "bytes_out");
    long long http1 = s3mini_stat(endpoint, "http", "bytes_in") +
                      s3mini_stat(endpoint, "http", "bytes_out");
    check(in1 - in0 == (long long)n && out1 - out0 == (long long)n,
          "server counted %lld bytes in and %lld out over RDMA", in1 - in0, out1 - out0);
    check(http1 - http0 < 4096, "no payload over HTTP (%lld bytes of stats JSON)",
          http1 - http0);
    if (n == 1u << 20) { /* a range of it into the middle of the buffer */
      memset(dst, 0, cap);
      e = rdma_get(key, dst, 1000, 5000, 300, 1000);
      check(e == hipObjSuccess && memcmp(dst + 5000, src + off + 300, 1000) == 0,
            "ranged GET of bytes 300..1299 lands at offset 5000");
    }
  }
  hipObjBufDeregister(src);
  hipObjBufDeregister(dst);
  hipObjShutdown();
}

/* Multipart upload whose parts move by RDMA (UploadPart with a token). */
static void case_upload_part(void)
{
  const size_t part = 5u << 20, total = 3 * part - 12345;
  uint8_t *src = malloc(total), *dst = malloc(total);
  if (init() != 0)
    exit(1);
  make_bucket("vmtest");
  fill(src, total, 99);
  hipObjBufRegisterHost(src, total);
  hipObjBufRegisterHost(dst, total);
  struct s3mini r;
  request(&r, "POST", "/vmtest/mp?uploads");
  s3mini_send(&r, NULL);
  char id[256] = "";
  const char *p = r.resp ? strstr(r.resp, "<UploadId>") : NULL;
  if (p)
    sscanf(p + 10, "%255[^<]", id);
  check(r.status == 200 && id[0], "CreateMultipartUpload: %s", id);
  s3mini_reset(&r);
  /* An answer-first server cannot know a part's MD5 when it answers, so
   * the ETags come from ListParts once the parts are in. */
  for (int i = 0; i < 3; i++) {
    size_t off = (size_t)i * part, n = i < 2 ? part : total - 2 * part;
    request(&r, "PUT", "/vmtest/mp?partNumber=%d&uploadId=%s", i + 1, id);
    hipObjOpError_t e = hipObjPut(NULL, src, n, (off_t)off, &s3mini_ops, &r).opError;
    check(e == hipObjSuccess, "UploadPart %d (%zu bytes) by RDMA", i + 1, n);
    s3mini_reset(&r);
  }
  request(&r, "GET", "/vmtest/mp?uploadId=%s", id);
  s3mini_send(&r, NULL);
  char xml[2048] = "<CompleteMultipartUpload>";
  const char *cur = r.resp;
  for (int i = 0; i < 3 && cur; i++) {
    char etag[128] = "";
    cur = strstr(cur, "<ETag>");
    if (cur && sscanf(cur + 6, "%127[^<]", etag) == 1)
      cur += 6;
    size_t l = strlen(xml);
    snprintf(xml + l, sizeof xml - l,
             "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>", i + 1, etag);
    check(etag[0] != 0, "ListParts: part %d ETag %s", i + 1, etag);
  }
  s3mini_reset(&r);
  strncat(xml, "</CompleteMultipartUpload>", sizeof xml - strlen(xml) - 1);
  request(&r, "POST", "/vmtest/mp?uploadId=%s", id);
  r.body = xml;
  r.body_len = strlen(xml);
  s3mini_send(&r, NULL);
  check(r.status == 200, "CompleteMultipartUpload: HTTP %ld", r.status);
  s3mini_reset(&r);
  hipObjOpError_t e = rdma_get("mp", dst, total, 0, 0, 0);
  check(e == hipObjSuccess && memcmp(src, dst, total) == 0,
        "the assembled %zu-byte object reads back by RDMA, identical", total);
  hipObjShutdown();
}

struct worker {
  pthread_t t;
  int id;
  uint8_t *buf;
  size_t slice;
  int ok;
};

static void *worker_main(void *arg)
{
  struct worker *w = arg;
  for (int i = 0; i < 5; i++) {
    hipObjOpError_t e = rdma_get("threads", w->buf, w->slice, (off_t)(w->id * w->slice),
                                 (long)(w->id * 1000), (long)w->slice);
    w->ok += e == hipObjSuccess;
  }
  return NULL;
}

/* More threads than connections: all finish, none fails. */
static void case_threads(int n)
{
  const size_t slice = 256u << 10;
  uint8_t *obj = malloc(slice + 1000u * (size_t)n), *buf = calloc((size_t)n, slice);
  if (init() != 0)
    exit(1);
  make_bucket("vmtest");
  size_t objlen = slice + 1000u * (size_t)n;
  fill(obj, objlen, 5);
  put_http("threads", obj, objlen);
  hipObjBufRegisterHost(buf, (size_t)n * slice);
  struct worker *w = calloc((size_t)n, sizeof *w);
  double t0 = now_s();
  for (int i = 0; i < n; i++) {
    w[i] = (struct worker){0, i, buf, slice, 0};
    pthread_create(&w[i].t, NULL, worker_main, &w[i]);
  }
  int ok = 0;
  for (int i = 0; i < n; i++) {
    pthread_join(w[i].t, NULL);
    ok += w[i].ok;
    if (memcmp(buf + (size_t)i * slice, obj + (size_t)i * 1000, slice) != 0)
      check(0, "thread %d's bytes differ", i);
  }
  check(ok == 5 * n, "%d of %d concurrent GETs by %d threads over %s connections (%.2f s)",
        ok, 5 * n, n, getenv("HIPOBJ_MAX_TRANSFERS") ? getenv("HIPOBJ_MAX_TRANSFERS") : "16",
        now_s() - t0);
  hipObjShutdown();
}

/* The server declines: hipObjS3Error, reply 501, nothing moved. */
static void case_decline(void)
{
  uint8_t *buf = calloc(1, 4096);
  if (init() != 0)
    exit(1);
  make_bucket("vmtest");
  struct s3mini r;
  put_http("small", "0123456789", 10);
  hipObjBufRegisterHost(buf, 4096);
  request(&r, "GET", "/vmtest/small");
  hipObjOpError_t e = hipObjGet(NULL, buf, 10, 0, &s3mini_ops, &r).opError;
  int code = 0;
  hipObjParseRdmaReply(r.reply, r.reply_len, &code);
  check(e == hipObjS3Error && r.status == 501 && code == 501,
        "declined: %s, HTTP %ld, reply %d", hipObjGetErrorString(e), r.status, code);
  check(buf[0] == 0, "nothing written");
  s3mini_reset(&r);
  hipObjShutdown();
}

/* The server never sends final (test knob): the client fails at its
 * timeout, and the next transfer works. */
static hipObjInfo_t info_now(void)
{
  hipObjInfo_t i;
  memset(&i, 0, sizeof i);
  i.size = sizeof i;
  hipObjGetInfo(&i);
  return i;
}

/* The server skips its final once (--fault-skip-final): with probes and
 * retries (the defaults) the attempt is found gone and retried; without,
 * it fails at the transfer timeout. Either way the next transfer works. */
static void case_no_final(void)
{
  uint8_t *buf = calloc(1, 65536);
  if (init() != 0)
    exit(1);
  make_bucket("vmtest");
  hipObjBufRegisterHost(buf, 65536);
  fill(buf, 65536, 1);
  hipObjInfo_t i0 = info_now();
  double t0 = now_s();
  hipObjOpError_t e = rdma_put("nf", buf, 65536, 0);
  double t1 = now_s();
  hipObjInfo_t i1 = info_now();
  if (i0.probeIntervalMs && i0.retries) {
    /* the server retired the connection without its final: a liveness
     * probe finds it, the retry succeeds, well before the deadline */
    check(e == hipObjSuccess && i1.probesFailed > i0.probesFailed &&
              i1.retriesFabric > i0.retriesFabric,
          "no final: %s after %.2f s, %llu probe(s) failed, retried",
          hipObjGetErrorString(e), t1 - t0,
          (unsigned long long)(i1.probesFailed - i0.probesFailed),
         (unsigned long long)(i1.deadlinesMoved - i0.deadlinesMoved));
  } else {
    check(e == hipObjRdmaError, "no final, no probes or retries: %s after "
          "%.2f s", hipObjGetErrorString(e), t1 - t0);
  }
  e = rdma_put("nf", buf, 65536, 0);
  check(e == hipObjSuccess, "next transfer: %s", hipObjGetErrorString(e));
  hipObjShutdown();
}

/* The client goes away after the reply: the server reclaims the QP. */
static void case_vanish(void)
{
  uint8_t *buf = calloc(1, 4096);
  if (init() != 0)
    exit(1);
  make_bucket("vmtest");
  hipObjBufRegisterHost(buf, 4096);
  struct s3mini r;
  put_http("vanish", "x", 1);
  long long fail0 = s3mini_stat(endpoint, "rdma", "failures");
  char *token = NULL;
  hipObjGetRdmaToken(buf, 1, HIPOBJ_RDMA_OP_GET, &token);
  request(&r, "GET", "/vmtest/vanish");
  s3mini_send(&r, token);
  check(r.status == 200 && r.reply_len > 4, "server answered first: %.4s...", r.reply);
  hipObjPutRdmaToken(token); /* gone without ready */
  s3mini_reset(&r);
  long long fail1 = fail0;
  for (int i = 0; i < 200 && fail1 == fail0; i++) {
    struct timespec ts = {0, 100000000};
    nanosleep(&ts, NULL);
    fail1 = s3mini_stat(endpoint, "rdma", "failures");
  }
  check(fail1 == fail0 + 1, "server gave the transfer up (failures %lld -> %lld)", fail0, fail1);
  hipObjOpError_t e = rdma_get("vanish", buf, 1, 0, 0, 0);
  check(e == hipObjSuccess && buf[0] == 'x', "and serves the next one");
  hipObjShutdown();
}

/* A PUT whose client goes away after the reply, before ready: the server
 * gives the transfer up and stores nothing (t40_gateway checks the store
 * behind a gateway). */
static void case_vanish_put(const char *key)
{
  const size_t n = 65536;
  uint8_t *buf = calloc(1, n);
  if (!buf || init() != 0)
    exit(1);
  make_bucket("vmtest");
  hipObjBufRegisterHost(buf, n);
  fill(buf, n, 7);
  long long fail0 = s3mini_stat(endpoint, "rdma", "failures");
  char *token = NULL;
  hipObjGetRdmaToken(buf, n, HIPOBJ_RDMA_OP_PUT, &token);
  struct s3mini r;
  request(&r, "PUT", "/vmtest/%s", key);
  s3mini_send(&r, token);
  check(r.status == 200 && r.reply_len > 4, "server answered first: HTTP %ld %.4s...",
        r.status, r.reply);
  hipObjPutRdmaToken(token); /* gone without ready */
  s3mini_reset(&r);
  long long fail1 = fail0;
  for (int i = 0; i < 200 && fail1 == fail0; i++) {
    struct timespec ts = {0, 100000000};
    nanosleep(&ts, NULL);
    fail1 = s3mini_stat(endpoint, "rdma", "failures");
  }
  check(fail1 == fail0 + 1, "server gave the PUT up (failures %lld -> %lld)", fail0, fail1);
  hipObjShutdown();
  free(buf);
}

/* A ready message with the wrong cookie: nothing moves, the client fails. */
static void case_wrong_cookie(void)
{
  uint8_t *buf = calloc(1, 4096);
  if (init() != 0)
    exit(1);
  make_bucket("vmtest");
  hipObjBufRegisterHost(buf, 4096);
  struct s3mini r;
  put_http("cookie", "abcdef", 6);
  char *token = NULL;
  hipObjGetRdmaToken(buf, 6, HIPOBJ_RDMA_OP_GET, &token);
  request(&r, "GET", "/vmtest/cookie");
  s3mini_send(&r, token);
  char reply[HIPOBJ_REPLY_BUF_LEN];
  memcpy(reply, r.reply, r.reply_len);
  reply[4 + 50] = reply[4 + 50] == '0' ? '1' : '0'; /* the cookie's first digit */
  hipObjOpError_t e = hipObjCompleteRdmaTransfer(token, reply, r.reply_len).opError;
  check(e == hipObjRdmaError && buf[0] == 0, "wrong cookie: %s, buffer untouched",
        hipObjGetErrorString(e));
  hipObjPutRdmaToken(token);
  s3mini_reset(&r);
  hipObjShutdown();
}

/* The server is killed during large GETs (the driver kills it): every
 * transfer ends, with a failure, within a bounded time. */
static void case_killed(void)
{
  const size_t n = 64u << 20;
  uint8_t *buf = malloc(n);
  if (init() != 0)
    exit(1);
  hipObjBufRegisterHost(buf, n);
  int failed = 0;
  double worst = 0;
  for (int i = 0; i < 20 && !failed; i++) {
    double t0 = now_s();
    hipObjOpError_t e = rdma_get("big", buf, n, 0, 0, 0);
    double dt = now_s() - t0;
    if (dt > worst)
      worst = dt;
    if (e != hipObjSuccess) {
      failed = 1;
      check(e == hipObjRdmaError || e == hipObjS3Error,
            "transfer during the kill failed: %s after %.2f s", hipObjGetErrorString(e), dt);
    }
  }
  check(failed, "a transfer failed once the server was gone");
  check(worst < 30, "no transfer took longer than %.1f s", worst);
  hipObjShutdown();
}

/* Throughput of GET and PUT by RDMA for one size, with `streams` threads,
 * each moving its own object; and 4 KiB GET latency. Prints BENCH lines. */
struct bench_arg {
  pthread_t t;
  int op, id;
  uint8_t *buf;
  size_t size;
  int iters, ok;
};

static void *bench_main(void *p)
{
  struct bench_arg *a = p;
  char key[32];
  snprintf(key, sizeof key, "bench-%zu-%d", a->size, a->id);
  for (int i = 0; i < a->iters; i++) {
    hipObjOpError_t e = a->op == HIPOBJ_RDMA_OP_GET
                            ? rdma_get(key, a->buf, a->size, 0, 0, 0)
                            : rdma_put(key, a->buf, a->size, 0);
    a->ok += e == hipObjSuccess;
  }
  return NULL;
}

static double bench_run(int op, size_t size, int streams, uint8_t **bufs, int iters)
{
  struct bench_arg a[16];
  double t0 = now_s();
  for (int i = 0; i < streams; i++) {
    a[i] = (struct bench_arg){0, op, i, bufs[i], size, iters, 0};
    pthread_create(&a[i].t, NULL, bench_main, &a[i]);
  }
  int ok = 0;
  for (int i = 0; i < streams; i++) {
    pthread_join(a[i].t, NULL);
    ok += a[i].ok;
  }
  double secs = now_s() - t0;
  check(ok == streams * iters, "%s %zu x%d: %d/%d transfers", op ? "GET" : "PUT", size,
        streams, ok, streams * iters);
  return (double)size * ok / secs / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void case_bench(int streams, size_t max_size)
{
  uint8_t *bufs[16];
  if (streams < 1 || streams > 16 || init() != 0)
    exit(2);
  make_bucket("vmtest");
  for (int i = 0; i < streams; i++) {
    bufs[i] = malloc(max_size);
    fill(bufs[i], max_size, (uint32_t)i);
    hipObjBufRegisterHost(bufs[i], max_size);
  }
  const char *min = getenv("VMTEST_BENCH_MIN"); /* default 64 KiB */
  size_t first = min && atol(min) > 0 ? (size_t)atol(min) : 64u << 10;
  for (size_t size = first; size <= max_size; size *= 4) {
    int iters = (int)((256u << 20) / size / (size_t)streams);
    if (iters < 4)
      iters = 4;
    if (iters > 200)
      iters = 200;
    bench_run(HIPOBJ_RDMA_OP_PUT, size, streams, bufs, 1); /* create the objects */
    double put = bench_run(HIPOBJ_RDMA_OP_PUT, size, streams, bufs, iters);
    double get = bench_run(HIPOBJ_RDMA_OP_GET, size, streams, bufs, iters);
    printf("BENCH op=put size=%zu streams=%d iters=%d MBps=%.1f\n", size, streams, iters, put);
    printf("BENCH op=get size=%zu streams=%d iters=%d MBps=%.1f\n", size, streams, iters, get);
  }
  if (streams == 1) {
    enum { N = 200 };
    double lat[N];
    rdma_put("lat", bufs[0], 4096, 0);
    for (int i = 0; i < N; i++) {
      double t0 = now_s();
      rdma_get("lat", bufs[0], 4096, 0, 0, 0);
      lat[i] = (now_s() - t0) * 1e6;
    }
    qsort(lat, N, sizeof lat[0], cmp_double);
    printf("BENCH op=latency size=4096 p50_us=%.0f p99_us=%.0f\n", lat[N / 2],
           lat[N * 99 / 100]);
  }
  fflush(stdout);
  hipObjShutdown();
}

/* One stream: COUNT GETs (getlat) or PUTs (putlat) of one SIZE-byte
 * object, each timed: throughput over the timed calls and p50/p99 latency
 * of the ones that succeeded (bench/rxe-fault-bench.sh runs both under
 * each fault profile). Every GET's bytes are compared; every PUT stores a
 * different pattern, read back untimed and compared. */
static int timed_call(int put, const char *key, uint8_t *src, uint8_t *dst, size_t size,
                      int i, double *ms, hipObjOpError_t *err)
{
  if (put)
    fill(src, size, (uint8_t)(7 + i));
  else
    memset(dst, 0, size);
  double t = now_s();
  hipObjOpError_t e = put ? rdma_put(key, src, size, 0) : rdma_get(key, dst, size, 0, 0, 0);
  *ms = (now_s() - t) * 1e3;
  *err = e;
  if (e != hipObjSuccess)
    return -1;
  if (put) {
    memset(dst, 0, size);
    if (rdma_get(key, dst, size, 0, 0, 0) != hipObjSuccess)
      return 1;
  }
  return memcmp(src, dst, size) != 0;
}

static void case_lat(int put, size_t size, int count)
{
  if (size == 0 || count < 1 || init() != 0)
    exit(2);
  make_bucket("vmtest");
  uint8_t *src = malloc(size), *dst = malloc(size);
  double *lat = calloc((size_t)count, sizeof *lat);
  fill(src, size, 5);
  hipObjBufRegisterHost(src, size);
  hipObjBufRegisterHost(dst, size);
  char key[32];
  snprintf(key, sizeof key, "%slat-%zu", put ? "put" : "get", size);
  check(rdma_put(key, src, size, 0) == hipObjSuccess, "PUT %zu bytes", size);
  int ok = 0, wrong = 0, failed = 0;
  double secs = 0;
  hipObjInfo_t i0 = info_now();
  for (int i = 0; i < count; i++) {
    double ms;
    hipObjOpError_t e;
    int r = timed_call(put, key, src, dst, size, i, &ms, &e);
    if (r < 0 && failed++ < 3)
      printf("FAILED op=%s size=%zu call=%d ms=%.0f error=%s\n", put ? "putlat" : "getlat",
             size, i, ms, hipObjGetErrorString(e));
    if (r < 0)
      continue;
    secs += ms / 1e3;
    lat[ok++] = ms;
    wrong += r;
  }
  hipObjInfo_t i1 = info_now();
  qsort(lat, (size_t)ok, sizeof lat[0], cmp_double);
  const char *op = put ? "putlat" : "getlat";
  check(wrong == 0, "%d of %d %s of %zu bytes succeeded, %d with wrong bytes", ok, count,
        op, size, wrong);
  printf("BENCH op=%s size=%zu n=%d ok=%d MBps=%.1f p50_ms=%.1f p99_ms=%.1f "
         "retries_fabric=%llu retries_server_rdma=%llu retries_stalled=%llu "
         "retries_kept_broken=%llu probes_sent=%llu probes_failed=%llu "
         "deadlines_moved=%llu\n",
         op, size, count, ok, secs > 0 ? (double)size * ok / secs / 1e6 : 0.0,
         ok ? lat[ok / 2] : 0.0,
         ok ? lat[(ok * 99) / 100 < ok ? (ok * 99) / 100 : ok - 1] : 0.0,
         (unsigned long long)(i1.retriesFabric - i0.retriesFabric),
         (unsigned long long)(i1.retriesServerRdma - i0.retriesServerRdma),
         (unsigned long long)(i1.retriesStalled - i0.retriesStalled),
         (unsigned long long)(i1.retriesKeptBroken - i0.retriesKeptBroken),
         (unsigned long long)(i1.probesSent - i0.probesSent),
         (unsigned long long)(i1.probesFailed - i0.probesFailed),
         (unsigned long long)(i1.deadlinesMoved - i0.deadlinesMoved));
  fflush(stdout);
  hipObjBufDeregister(src);
  hipObjBufDeregister(dst);
  free(src);
  free(dst);
  free(lat);
  hipObjShutdown();
}

/* Where a small transfer's time goes (issue 23, item 4): COUNT rounds of
 * one SIZE-byte object, each round a plain-HTTP request of it, a
 * header-only request (HEAD), one transfer through the application-driven
 * calls, timed in its three parts, and one through hipObjGet/hipObjPut.
 * The parts: token (hipObjGetRdmaToken: the lease, the kept QP's check,
 * the window bound and waited for), exchange (the S3 request with the
 * token: HTTP, the server's RDMA and its commit; data first, the answer
 * follows the payload), complete (hipObjCompleteRdmaTransfer: the reply
 * checked, the window invalidated and waited for). Every request rides
 * one curl handle, so one kept TCP connection, as a real client's do.
 * Every byte is compared. Prints the medians in microseconds. */
enum { PH_HTTP, PH_HEAD, PH_TOKEN, PH_EXCHANGE, PH_COMPLETE, PH_RDMA, PH_WHOLE,
       PH_N };
static const char *const ph_name[PH_N] = {"http",     "head",     "token",   "exchange",
                                          "complete", "rdma_sum", "whole"};

static void kept_request(struct s3mini *r, CURL *h, const char *method, const char *key)
{
  request(r, method, "/vmtest/%s", key);
  r->handle = h;
}

/* The plain-HTTP request of the object (a PUT sends it, a GET reads it
 * back) and a HEAD of it: microseconds each. */
static void phase_http(CURL *h, int put, const char *key, uint8_t *src, size_t size,
                       double *http_us, double *head_us)
{
  struct s3mini r;
  kept_request(&r, h, put ? "PUT" : "GET", key);
  if (put) {
    r.body = src;
    r.body_len = size;
  }
  double t = now_s();
  s3mini_send(&r, NULL);
  *http_us = (now_s() - t) * 1e6;
  check(r.status == 200 && (put || (r.resp_len == size && !memcmp(r.resp, src, size))),
        "plain-HTTP %s of %zu bytes", put ? "PUT" : "GET", size);
  kept_request(&r, h, "HEAD", key);
  t = now_s();
  s3mini_send(&r, NULL);
  *head_us = (now_s() - t) * 1e6;
  s3mini_reset(&r);
}

/* One transfer by the application-driven calls, its parts timed. */
static int phase_app(CURL *h, int put, const char *key, uint8_t *buf, size_t size,
                     double us[PH_N])
{
  struct s3mini r;
  kept_request(&r, h, put ? "PUT" : "GET", key);
  char *token = NULL;
  double t0 = now_s();
  hipObjError_t e = hipObjGetRdmaToken(buf, size, put ? HIPOBJ_RDMA_OP_PUT : HIPOBJ_RDMA_OP_GET,
                                       &token);
  double t1 = now_s();
  if (e.opError != hipObjSuccess)
    return -1;
  s3mini_send(&r, token);
  double t2 = now_s();
  e = hipObjCompleteRdmaTransfer(token, r.reply, r.reply_len);
  double t3 = now_s();
  hipObjPutRdmaToken(token);
  s3mini_reset(&r);
  us[PH_TOKEN] = (t1 - t0) * 1e6;
  us[PH_EXCHANGE] = (t2 - t1) * 1e6;
  us[PH_COMPLETE] = (t3 - t2) * 1e6;
  us[PH_RDMA] = (t3 - t0) * 1e6;
  return e.opError == hipObjSuccess ? 0 : -1;
}

static int phase_whole(CURL *h, int put, const char *key, uint8_t *buf, size_t size,
                       double *us)
{
  struct s3mini r;
  kept_request(&r, h, put ? "PUT" : "GET", key);
  double t = now_s();
  hipObjOpError_t e = put ? hipObjPut(NULL, buf, size, 0, &s3mini_ops, &r).opError
                          : hipObjGet(NULL, buf, size, 0, &s3mini_ops, &r).opError;
  *us = (now_s() - t) * 1e6;
  s3mini_reset(&r);
  return e == hipObjSuccess ? 0 : -1;
}

/* A PUT's object read back (untimed) and compared; a GET's buffer. */
static int phase_verify(CURL *h, int put, const char *key, const uint8_t *want,
                        const uint8_t *got, size_t size)
{
  if (!put)
    return memcmp(want, got, size) == 0;
  struct s3mini r;
  kept_request(&r, h, "GET", key);
  s3mini_send(&r, NULL);
  int ok = r.status == 200 && r.resp_len == size && !memcmp(r.resp, want, size);
  s3mini_reset(&r);
  return ok;
}

/* The server library's time sums (its /_hipobj/stats "time_ns"). */
enum { ST_TRANSFERS, ST_TOTAL, ST_ADMIT, ST_POST, ST_WAIT, ST_IO, ST_COMMIT,
       ST_CALLS, ST_START, ST_N };
static const char *const st_name[ST_N] = {"transfers", "total", "admit", "post",
                                          "wait", "io", "commit", "start_calls",
                                          "start"};

static void server_times(long long v[ST_N])
{
  for (int k = 0; k < ST_N; k++)
    v[k] = s3mini_stat(endpoint, "time_ns", st_name[k]);
}

/* Per transfer, in microseconds, from the first round's end (its new
 * connection left out): the parts, what is in none of them (`other`: the
 * engine's locks, counters, keeping the connection, the done callback),
 * and `around`: hipObjServerStart's time outside the engine (data first:
 * the call holds the whole transfer). */
static void print_server_times(int put, size_t size, const long long a[ST_N],
                               const long long b[ST_N])
{
  long long d[ST_N];
  for (int k = 0; k < ST_N; k++)
    d[k] = b[k] - a[k];
  if (a[0] < 0 || d[ST_TRANSFERS] <= 0 || d[ST_CALLS] != d[ST_TRANSFERS])
    return; /* a server without the sums, or answer-first starts among them */
  double n = (double)d[ST_TRANSFERS], us[ST_N];
  for (int k = ST_TOTAL; k < ST_N; k++)
    us[k] = (double)d[k] / n / 1e3;
  printf("SERVER_TIME op=%s size=%zu n=%lld", put ? "PUT" : "GET", size,
         d[ST_TRANSFERS]);
  for (int k = ST_TOTAL; k <= ST_COMMIT; k++)
    printf(" %s_us=%.1f", st_name[k], us[k]);
  printf(" other_us=%.1f start_us=%.1f around_us=%.1f\n",
         us[ST_TOTAL] - us[ST_ADMIT] - us[ST_POST] - us[ST_WAIT] - us[ST_IO] -
             us[ST_COMMIT],
         us[ST_START], us[ST_START] - us[ST_TOTAL]);
}

static void case_phases(int put, size_t size, int count)
{
  if (size == 0 || count < 1 || init() != 0)
    exit(2);
  make_bucket("vmtest");
  CURL *h = curl_easy_init();
  uint8_t *src = malloc(size), *dst = malloc(size);
  double *v[PH_N];
  for (int p = 0; p < PH_N; p++)
    v[p] = calloc((size_t)count, sizeof(double));
  hipObjBufRegisterHost(src, size);
  hipObjBufRegisterHost(dst, size);
  fill(src, size, 3);
  put_http("phases", src, size);
  hipObjInfo_t i0 = info_now();
  int ok = 0, wrong = 0;
  long long t0[ST_N] = {-1}, t1[ST_N];
  for (int i = 0; i < count; i++) {
    if (i == 1)
      server_times(t0);
    double us[PH_N] = {0};
    if (put)
      fill(src, size, (uint32_t)(11 + i));
    phase_http(h, put, "phases", src, size, &us[PH_HTTP], &us[PH_HEAD]);
    /* a PUT stores new bytes each time, so the read-back tells them apart */
    uint8_t *buf = put ? src : dst;
    if (put)
      fill(src, size, (uint32_t)(1000 + i));
    memset(dst, 0, size);
    int r = phase_app(h, put, "phases", buf, size, us);
    wrong += r == 0 && !phase_verify(h, put, "phases", src, dst, size);
    if (put)
      fill(src, size, (uint32_t)(2000 + i));
    memset(dst, 0, size);
    r |= phase_whole(h, put, "phases", buf, size, &us[PH_WHOLE]);
    wrong += r == 0 && !phase_verify(h, put, "phases", src, dst, size);
    if (r != 0)
      continue;
    for (int p = 0; p < PH_N; p++)
      v[p][ok] = us[p];
    ok++;
  }
  hipObjInfo_t i1 = info_now();
  server_times(t1);
  check(ok == count && wrong == 0, "%d of %d rounds succeeded, %d with wrong bytes", ok,
        count, wrong);
  printf("PHASES op=%s size=%zu n=%d", put ? "PUT" : "GET", size, ok);
  for (int p = 0; p < PH_N && ok; p++) {
    qsort(v[p], (size_t)ok, sizeof(double), cmp_double);
    printf(" %s_us=%.0f", ph_name[p], v[p][ok / 2]);
  }
  printf(" data_first=%llu transfers=%llu windows=%llu\n",
         (unsigned long long)(i1.transfersDataFirst - i0.transfersDataFirst),
         (unsigned long long)(i1.transfers - i0.transfers),
         (unsigned long long)(i1.windowsBound - i0.windowsBound));
  if (count > 1)
    print_server_times(put, size, t0, t1);
  fflush(stdout);
  for (int p = 0; p < PH_N; p++)
    free(v[p]);
  hipObjBufDeregister(src);
  hipObjBufDeregister(dst);
  free(src);
  free(dst);
  curl_easy_cleanup(h);
  hipObjShutdown();
}

/* The process's CPU seconds so far (getrusage: every thread, user and
 * system). */
static double cpu_s(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
         (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* One 4 KiB PUT and GET (a kept connection), then SECS seconds with no
 * transfer, then a GET on the kept connection: the CPU the process spent
 * while idle (bench/rxe-cpu.sh runs several at once). */
static void case_idle(int secs)
{
  enum { SIZE = 4096 };
  static uint8_t src[SIZE], dst[SIZE];
  if (secs < 1 || init() != 0)
    exit(2);
  make_bucket("vmtest");
  char key[32];
  snprintf(key, sizeof key, "idle-%d", (int)getpid());
  fill(src, SIZE, 11);
  hipObjBufRegisterHost(src, SIZE);
  hipObjBufRegisterHost(dst, SIZE);
  check(rdma_put(key, src, SIZE, 0) == hipObjSuccess, "PUT before the idle time");
  check(rdma_get(key, dst, SIZE, 0, 0, 0) == hipObjSuccess && !memcmp(src, dst, SIZE),
        "GET before the idle time");
  hipObjInfo_t i0 = info_now();
  double c0 = cpu_s(), t0 = now_s();
  sleep((unsigned)secs);
  double c1 = cpu_s(), t1 = now_s();
  memset(dst, 0, SIZE);
  check(rdma_get(key, dst, SIZE, 0, 0, 0) == hipObjSuccess && !memcmp(src, dst, SIZE),
        "GET after the idle time");
  hipObjInfo_t i1 = info_now();
  printf("IDLE pid=%d secs=%.2f cpu_ms=%.2f cpu_pct=%.3f reused=%llu\n", (int)getpid(),
         t1 - t0, (c1 - c0) * 1e3, (c1 - c0) * 100 / (t1 - t0),
         (unsigned long long)(i1.connectionsReused - i0.connectionsReused));
  fflush(stdout);
  hipObjBufDeregister(src);
  hipObjBufDeregister(dst);
  hipObjShutdown();
}

/* Store an object over plain HTTP (to set up other cases). */
static void case_seed(const char *key, size_t n)
{
  uint8_t *obj = malloc(n ? n : 1);
  fill(obj, n, 77);
  make_bucket("vmtest");
  check(put_http(key, obj, n) == 200, "seeded %s with %zu bytes over HTTP", key, n);
  free(obj);
}

int main(int argc, char **argv)
{
  if (argc < 3) {
    fprintf(stderr, "usage: %s ENDPOINT CASE [ARG]\n", argv[0]);
    return 2;
  }
  endpoint = argv[1];
  curl_global_init(CURL_GLOBAL_DEFAULT);
  const char *c = argv[2];
  if (!strcmp(c, "init")) {
    if (init() == 0)
      hipObjShutdown();
  } else if (!strcmp(c, "sizes"))
    case_sizes();
  else if (!strcmp(c, "upload-part"))
    case_upload_part();
  else if (!strcmp(c, "threads"))
    case_threads(argc > 3 ? atoi(argv[3]) : 8);
  else if (!strcmp(c, "decline"))
    case_decline();
  else if (!strcmp(c, "no-final"))
    case_no_final();
  else if (!strcmp(c, "vanish"))
    case_vanish();
  else if (!strcmp(c, "vanish-put") && argc == 4)
    case_vanish_put(argv[3]);
  else if (!strcmp(c, "wrong-cookie"))
    case_wrong_cookie();
  else if (!strcmp(c, "bench"))
    case_bench(argc > 3 ? atoi(argv[3]) : 1,
               argc > 4 ? strtoull(argv[4], NULL, 10) : (64u << 20));
  else if ((!strcmp(c, "getlat") || !strcmp(c, "putlat")) && argc == 5)
    case_lat(c[0] == 'p', strtoull(argv[3], NULL, 10), atoi(argv[4]));
  else if (!strcmp(c, "phases") && argc == 6 &&
           (!strcmp(argv[3], "get") || !strcmp(argv[3], "put")))
    case_phases(argv[3][0] == 'p', strtoull(argv[4], NULL, 10), atoi(argv[5]));
  else if (!strcmp(c, "idle") && argc == 4)
    case_idle(atoi(argv[3]));
  else if (!strcmp(c, "mkbucket") && argc == 4)
    make_bucket(argv[3]);
  else if (!strcmp(c, "stats")) {
    struct s3mini r;
    request(&r, "GET", "/_hipobj/stats");
    s3mini_send(&r, NULL);
    printf("%s\n", r.resp ? r.resp : "");
    s3mini_reset(&r);
  } else if (!strcmp(c, "seed") && argc == 5)
    case_seed(argv[3], strtoull(argv[4], NULL, 10));
  else if (!strcmp(c, "killed"))
    case_killed();
  else {
    fprintf(stderr, "unknown case %s\n", c);
    return 2;
  }
  printf("%s: %s\n", c, failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
