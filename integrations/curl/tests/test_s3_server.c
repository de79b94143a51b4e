/* SPDX-License-Identifier: MIT */
/* The glue against a running hipobj-test-server over plain HTTP (started by
 * run_server_tests.sh, its address in HIPOBJ_TEST_ENDPOINT). One group per
 * server configuration, named on the command line:
 *   plain    no authentication, --min-part-size 1K
 *   sigv4    --access-key AK --secret-key SK
 *   decline  --decline-rdma
 * Bytes are compared exactly, and the server's counters say which path
 * moved them. */
#include <pthread.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "hipobj_s3.h"

static const char *endpoint;
static char bucket[64];
static bool sign_raw; /* the sigv4 group: raw requests are signed too */

/* ---- helpers ------------------------------------------------------------ */

static void fill(uint8_t *p, size_t n, unsigned seed)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (uint8_t)((i * 2654435761u + seed) >> 11);
}

static hipObjS3Client_t *client_with(uint32_t flags, const char *ak,
                                     const char *sk, uint64_t part)
{
  hipObjS3Config_t cfg;
  hipObjS3Client_t *c = NULL;
  hipObjS3Result_t r;
  hipObjS3ConfigInit(&cfg);
  cfg.endpoint = endpoint;
  cfg.flags = flags | HIPOBJ_S3_NO_ENV;
  cfg.accessKey = ak;
  cfg.secretKey = sk;
  cfg.partSize = part;
  cfg.concurrency = 3;
  if (hipObjS3ClientCreate(&cfg, &c, &r) != hipObjS3Ok)
    fail_msg("client: %s", r.message);
  return c;
}

static hipObjS3Client_t *client(void)
{
  return client_with(0, NULL, NULL, 0);
}

static size_t body_cb(char *p, size_t s, size_t n, void *ud)
{
  char *buf = ud;
  size_t len = strlen(buf), k = s * n;
  if (len + k < 8192) {
    memcpy(buf + len, p, k);
    buf[len + k] = '\0';
  }
  return k;
}

/* A plain (unsigned) request with curl: bucket creation, stats. */
static long raw(const char *method, const char *path, char *out)
{
  char url[512];
  long status = 0;
  CURL *h = curl_easy_init();
  snprintf(url, sizeof url, "%s%s", endpoint, path);
  out[0] = '\0';
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, body_cb);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
  if (!strcmp(method, "PUT"))
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, 0L);
  if (sign_raw) {
    curl_easy_setopt(h, CURLOPT_AWS_SIGV4, "aws:amz:us-east-1:s3");
    curl_easy_setopt(h, CURLOPT_USERPWD, "AK:SK");
  }
  curl_easy_perform(h);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(h);
  return status;
}

/* A counter of GET /_hipobj/stats: "\"section\":{...\"name\":N". */
static unsigned long long stat(const char *section, const char *name)
{
  char body[8192], key[64];
  raw("GET", "/_hipobj/stats", body);
  snprintf(key, sizeof key, "\"%s\":{", section);
  const char *s = strstr(body, key);
  assert_non_null(s);
  snprintf(key, sizeof key, "\"%s\":", name);
  const char *v = strstr(s, key);
  assert_non_null(v);
  return strtoull(v + strlen(key), NULL, 10);
}

/* The path a client says it took: over HTTP, and why. */
static void assert_http_path(hipObjS3Client_t *c, const hipObjS3Result_t *r)
{
  assert_int_equal(r->partsRdma, 0);
  assert_true(r->partsHttp > 0);
  assert_true(r->fellBack);
  if (hipObjS3ClientRdma(c, NULL, 0, NULL))
    assert_int_equal(r->fallbackReason, hipObjS3FallbackDeclined);
  else
    assert_int_equal(r->fallbackReason, hipObjS3FallbackNoRdma);
}

static void round_trip(hipObjS3Client_t *c, const char *key, size_t n,
                       hipObjS3Result_t *put, hipObjS3Result_t *get)
{
  uint8_t *src = malloc(n + 1), *dst = malloc(n + 1);
  fill(src, n, (unsigned)n);
  memset(dst, 0, n + 1);
  assert_int_equal(hipObjS3PutObject(c, bucket, key, src, n, hipObjS3MemHost,
                                     put), hipObjS3Ok);
  assert_int_equal(hipObjS3GetObject(c, bucket, key, dst, n, hipObjS3MemHost,
                                     get), hipObjS3Ok);
  assert_int_equal(get->bytes, n);
  assert_int_equal(get->objectSize, n);
  assert_memory_equal(src, dst, n);
  free(src);
  free(dst);
}

/* ---- plain HTTP ---------------------------------------------------------- */

static void small_object(void **state)
{
  hipObjS3Client_t *c = client();
  hipObjS3Result_t p, g;
  unsigned long long out0 = stat("http", "bytes_out");
  unsigned long long in0 = stat("http", "bytes_in");
  round_trip(c, "small.bin", 100000, &p, &g);
  assert_http_path(c, &p);
  assert_http_path(c, &g);
  assert_true(p.etag[0] == '"');
  /* The server saw the bytes over HTTP, and nothing by RDMA. */
  assert_int_equal(stat("http", "bytes_in") - in0, 100000);
  assert_int_equal(stat("http", "bytes_out") - out0, 100000);
  assert_int_equal(stat("rdma", "bytes_in") + stat("rdma", "bytes_out"), 0);
  hipObjS3Counters_t k;
  hipObjS3GetCounters(c, &k);
  assert_int_equal(k.httpBytes, 200000);
  assert_int_equal(k.httpTransfers, 2);
  assert_int_equal(k.rdmaTransfers, 0);
  assert_int_equal(k.fallbacksNoRdma + k.fallbacksDeclined, 2);
  hipObjS3ClientDestroy(c);
}

static void no_rdma_flag(void **state)
{
  hipObjS3Client_t *c = client_with(HIPOBJ_S3_NO_RDMA, NULL, NULL, 0);
  hipObjS3Result_t p, g;
  char why[128];
  hipObjOpError_t e = hipObjRdmaError;
  assert_false(hipObjS3ClientRdma(c, why, sizeof why, &e));
  assert_non_null(strstr(why, "HIPOBJ_S3_NO_RDMA"));
  assert_int_equal(e, hipObjSuccess);
  round_trip(c, "norddma.bin", 4096, &p, &g);
  assert_int_equal(g.fallbackReason, hipObjS3FallbackDisabled);
  assert_false(g.fellBack);
  assert_int_equal(g.partsHttp, 1);
  hipObjS3ClientDestroy(c);
}

static void require_rdma(void **state)
{
  hipObjS3Config_t cfg;
  hipObjS3Client_t *c = NULL;
  hipObjS3Result_t r;
  hipObjS3ConfigInit(&cfg);
  cfg.endpoint = endpoint;
  cfg.flags = HIPOBJ_S3_REQUIRE_RDMA;
  hipObjS3Status_t st = hipObjS3ClientCreate(&cfg, &c, &r);
  if (st == hipObjS3Ok) {
    /* This host has RDMA: the server (no engine) declines, and the
     * fallback is refused. */
    uint8_t b[16] = {0};
    assert_int_equal(hipObjS3PutObject(c, bucket, "req.bin", b, sizeof b,
                                       hipObjS3MemHost, &r),
                     hipObjS3RdmaDeclined);
    hipObjS3ClientDestroy(c);
    return;
  }
  assert_int_equal(st, hipObjS3RdmaUnavailable);
  assert_null(c);
  assert_non_null(strstr(r.message, "RDMA is required"));
}

static void multipart_and_ranges(void **state)
{
  hipObjS3Client_t *c = client_with(0, NULL, NULL, 256 << 10);
  hipObjS3Result_t p, g;
  size_t n = (1 << 20) + 12345; /* 5 parts of 256 KiB */
  round_trip(c, "dir/multi part.bin", n, &p, &g);
  assert_int_equal(p.partsHttp, 5);
  assert_int_equal(g.partsHttp, 5);
  size_t len = strlen(p.etag);
  assert_true(len > 3 && !strcmp(p.etag + len - 3, "-5\""));
  assert_int_equal(stat("store", "uploads"), 0); /* completed, none left */
  hipObjS3ClientDestroy(c);
}

static void ranged_get(void **state)
{
  hipObjS3Client_t *c = client_with(0, NULL, NULL, 1024);
  hipObjS3Result_t r;
  size_t n = 10000;
  uint8_t *src = malloc(n), dst[5000];
  fill(src, n, 3);
  assert_int_equal(hipObjS3PutObject(c, bucket, "range.bin", src, n,
                                     hipObjS3MemHost, &r), hipObjS3Ok);
  /* 4321 bytes from 1234: five ranges of at most 1 KiB. */
  assert_int_equal(hipObjS3GetRange(c, bucket, "range.bin", 1234, dst, 4321,
                                    hipObjS3MemHost, &r), hipObjS3Ok);
  assert_memory_equal(dst, src + 1234, 4321);
  assert_int_equal(r.partsHttp, 5);
  assert_int_equal(hipObjS3GetRange(c, bucket, "range.bin", 9999, dst, 1,
                                    hipObjS3MemHost, &r), hipObjS3Ok);
  assert_int_equal(dst[0], src[9999]);
  assert_int_equal(hipObjS3GetRange(c, bucket, "range.bin", 9999, dst, 2,
                                    hipObjS3MemHost, &r),
                   hipObjS3InvalidRange);
  assert_int_equal(hipObjS3GetRange(c, bucket, "range.bin", 10000, dst, 1,
                                    hipObjS3MemHost, &r),
                   hipObjS3InvalidRange);
  assert_non_null(strstr(r.message, "outside"));
  free(src);
  hipObjS3ClientDestroy(c);
}

static void missing_things(void **state)
{
  hipObjS3Client_t *c = client();
  hipObjS3Result_t r;
  uint8_t b[8];
  assert_int_equal(hipObjS3GetObject(c, bucket, "nope", b, sizeof b,
                                     hipObjS3MemHost, &r), hipObjS3NoSuchKey);
  assert_string_equal(r.s3Code, "NoSuchKey");
  assert_int_equal(r.httpStatus, 404);
  assert_non_null(strstr(r.message, "does not exist"));
  assert_int_equal(hipObjS3GetObject(c, "no-such-bucket", "k", b, sizeof b,
                                     hipObjS3MemHost, &r),
                   hipObjS3NoSuchBucket);
  assert_non_null(strstr(r.message, "bucket 'no-such-bucket'"));
  assert_int_equal(hipObjS3PutObject(c, "no-such-bucket", "k", b, sizeof b,
                                     hipObjS3MemHost, &r),
                   hipObjS3NoSuchBucket);
  assert_int_equal(hipObjS3HeadObject(c, bucket, "nope", &r),
                   hipObjS3NoSuchKey);
  hipObjS3ClientDestroy(c);
}

static void buffer_too_small_and_empty(void **state)
{
  hipObjS3Client_t *c = client();
  hipObjS3Result_t r;
  uint8_t b[100] = {1};
  assert_int_equal(hipObjS3PutObject(c, bucket, "hundred", b, 100,
                                     hipObjS3MemHost, &r), hipObjS3Ok);
  assert_int_equal(hipObjS3GetObject(c, bucket, "hundred", b, 99,
                                     hipObjS3MemHost, &r),
                   hipObjS3BufferTooSmall);
  assert_non_null(strstr(r.message, "100 bytes"));
  assert_int_equal(hipObjS3PutObject(c, bucket, "empty", NULL, 0,
                                     hipObjS3MemHost, &r), hipObjS3Ok);
  assert_int_equal(hipObjS3GetObject(c, bucket, "empty", NULL, 0,
                                     hipObjS3MemHost, &r), hipObjS3Ok);
  assert_int_equal(r.bytes, 0);
  assert_int_equal(r.objectSize, 0);
  hipObjS3ClientDestroy(c);
}

static void odd_keys(void **state)
{
  static const char *const keys[] = {
      "a b", "plus+sign", "per%cent", "eq=amp&q?h#", "tilde~under_score",
      "\xc3\xa9t\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac", "deep/er/and/deeper/",
      "x"};
  hipObjS3Client_t *c = client();
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
    hipObjS3Result_t p, g;
    round_trip(c, keys[i], 777 + i, &p, &g);
  }
  hipObjS3ClientDestroy(c);
}

static void delete_object(void **state)
{
  hipObjS3Client_t *c = client();
  hipObjS3Result_t r;
  uint8_t b[4] = {1, 2, 3, 4};
  assert_int_equal(hipObjS3PutObject(c, bucket, "del", b, 4, hipObjS3MemHost,
                                     &r), hipObjS3Ok);
  assert_int_equal(hipObjS3DeleteObject(c, bucket, "del", &r), hipObjS3Ok);
  assert_int_equal(hipObjS3HeadObject(c, bucket, "del", &r),
                   hipObjS3NoSuchKey);
  hipObjS3ClientDestroy(c);
}

/* A port nothing listens on: bound (so nobody else takes it), never
 * listening, so a connection is refused. */
static int closed_port(int *fd)
{
  struct sockaddr_in a = {.sin_family = AF_INET};
  socklen_t len = sizeof a;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  *fd = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(*fd >= 0);
  assert_int_equal(bind(*fd, (struct sockaddr *)&a, sizeof a), 0);
  assert_int_equal(getsockname(*fd, (struct sockaddr *)&a, &len), 0);
  return ntohs(a.sin_port);
}

static void unreachable(void **state)
{
  hipObjS3Config_t cfg;
  hipObjS3Client_t *c;
  hipObjS3Result_t r;
  uint8_t b[4];
  char url[64];
  int fd;
  snprintf(url, sizeof url, "http://127.0.0.1:%d", closed_port(&fd));
  hipObjS3ConfigInit(&cfg);
  cfg.endpoint = url;
  cfg.flags = HIPOBJ_S3_NO_ENV;
  assert_int_equal(hipObjS3ClientCreate(&cfg, &c, &r), hipObjS3Ok);
  assert_int_equal(hipObjS3GetObject(c, bucket, "k", b, 4, hipObjS3MemHost,
                                     &r), hipObjS3ConnectFailed);
  assert_non_null(strstr(r.message, "is the server running"));
  hipObjS3ClientDestroy(c);
  close(fd);
}

/* ---- device memory: never touched by the CPU ---------------------------- */

/* "Device memory" the CPU cannot touch (PROT_NONE), backed by a shadow the
 * copy functions use: any CPU access by the glue would crash the test. */
struct fake_device {
  uint8_t *dev;    /* PROT_NONE */
  uint8_t *shadow;
  size_t size;
  unsigned to_device, to_host, allocs, frees;
  pthread_mutex_t mu;
};

static uint8_t *shadow_of(struct fake_device *d, const void *p, size_t n)
{
  const uint8_t *q = p;
  assert_true(q >= d->dev && n <= d->size && (size_t)(q - d->dev) <= d->size - n);
  return d->shadow + (q - d->dev);
}

static int fd_to_device(void *ctx, void *dst, const void *src, size_t n)
{
  struct fake_device *d = ctx;
  memcpy(shadow_of(d, dst, n), src, n);
  pthread_mutex_lock(&d->mu);
  d->to_device++;
  pthread_mutex_unlock(&d->mu);
  return 0;
}

static int fd_to_host(void *ctx, void *dst, const void *src, size_t n)
{
  struct fake_device *d = ctx;
  memcpy(dst, shadow_of(d, src, n), n);
  pthread_mutex_lock(&d->mu);
  d->to_host++;
  pthread_mutex_unlock(&d->mu);
  return 0;
}

static void *fd_alloc(void *ctx, size_t n)
{
  struct fake_device *d = ctx;
  pthread_mutex_lock(&d->mu);
  d->allocs++;
  pthread_mutex_unlock(&d->mu);
  return malloc(n);
}

static void fd_free(void *ctx, void *p)
{
  struct fake_device *d = ctx;
  pthread_mutex_lock(&d->mu);
  d->frees++;
  pthread_mutex_unlock(&d->mu);
  free(p);
}

static void device_memory_fallback(void **state)
{
  struct fake_device d = {.size = (3u << 20) + 7};
  pthread_mutex_init(&d.mu, NULL);
  d.dev = mmap(NULL, d.size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  d.shadow = malloc(d.size);
  assert_true(d.dev != MAP_FAILED && d.shadow);
  fill(d.shadow, d.size, 42);
  hipObjS3DeviceOps_t ops = {fd_to_device, fd_to_host, fd_alloc, fd_free, &d};
  hipObjS3Config_t cfg;
  hipObjS3Client_t *c;
  hipObjS3Result_t r;
  hipObjS3ConfigInit(&cfg);
  cfg.endpoint = endpoint;
  cfg.flags = HIPOBJ_S3_NO_RDMA | HIPOBJ_S3_NO_ENV;
  cfg.partSize = 1 << 20;
  cfg.deviceOps = &ops;
  assert_int_equal(hipObjS3ClientCreate(&cfg, &c, &r), hipObjS3Ok);
  assert_int_equal(hipObjS3PutObject(c, bucket, "dev.bin", d.dev, d.size,
                                     hipObjS3MemDevice, &r), hipObjS3Ok);
  uint8_t *want = malloc(d.size);
  memcpy(want, d.shadow, d.size);
  memset(d.shadow, 0, d.size);
  assert_int_equal(hipObjS3GetObject(c, bucket, "dev.bin", d.dev, d.size,
                                     hipObjS3MemDevice, &r), hipObjS3Ok);
  assert_memory_equal(d.shadow, want, d.size);
  assert_true(d.to_device >= 4 && d.to_host >= 4); /* 4 parts each way */
  assert_true(d.allocs > 0);
  assert_int_equal(d.allocs, d.frees);
  hipObjS3ClientDestroy(c);

  /* Without copy functions, device memory cannot go over HTTP. */
  c = client_with(HIPOBJ_S3_NO_RDMA, NULL, NULL, 0);
  assert_int_equal(hipObjS3GetObject(c, bucket, "dev.bin", d.dev, d.size,
                                     hipObjS3MemDevice, &r),
                   hipObjS3NoDeviceOps);
  assert_non_null(strstr(r.message, "deviceOps"));
  hipObjS3ClientDestroy(c);
  munmap(d.dev, d.size);
  free(d.shadow);
  free(want);
  pthread_mutex_destroy(&d.mu);
}

/* ---- progress and threads ----------------------------------------------- */

struct progress_seen {
  pthread_mutex_t mu;
  uint64_t last, total;
  unsigned calls;
};

static int on_progress(void *ctx, uint64_t done, uint64_t total)
{
  struct progress_seen *p = ctx;
  pthread_mutex_lock(&p->mu);
  p->calls++;
  if (done > p->last)
    p->last = done;
  p->total = total;
  pthread_mutex_unlock(&p->mu);
  return 0;
}

static void progress(void **state)
{
  struct progress_seen seen = {.mu = PTHREAD_MUTEX_INITIALIZER};
  hipObjS3Config_t cfg;
  hipObjS3Client_t *c;
  hipObjS3Result_t r;
  size_t n = 2 << 20;
  uint8_t *b = calloc(1, n);
  hipObjS3ConfigInit(&cfg);
  cfg.endpoint = endpoint;
  cfg.flags = HIPOBJ_S3_NO_ENV;
  cfg.partSize = 512 << 10;
  cfg.progress = on_progress;
  cfg.progressCtx = &seen;
  assert_int_equal(hipObjS3ClientCreate(&cfg, &c, &r), hipObjS3Ok);
  assert_int_equal(hipObjS3PutObject(c, bucket, "progress", b, n,
                                     hipObjS3MemHost, &r), hipObjS3Ok);
  assert_true(seen.calls >= 1);
  assert_int_equal(seen.last, n);
  assert_int_equal(seen.total, n);
  hipObjS3ClientDestroy(c);
  free(b);
}

struct worker_arg {
  hipObjS3Client_t *c;
  unsigned id;
  int ok;
};

static void *worker(void *arg)
{
  struct worker_arg *w = arg;
  char key[32];
  size_t n = 50000 + w->id * 1000;
  uint8_t *src = malloc(n), *dst = malloc(n);
  hipObjS3Result_t r;
  fill(src, n, w->id);
  snprintf(key, sizeof key, "thread-%u", w->id);
  w->ok = 1;
  for (int i = 0; i < 5 && w->ok; i++)
    w->ok = hipObjS3PutObject(w->c, bucket, key, src, n, hipObjS3MemHost,
                              &r) == hipObjS3Ok &&
            hipObjS3GetObject(w->c, bucket, key, dst, n, hipObjS3MemHost,
                              &r) == hipObjS3Ok &&
            memcmp(src, dst, n) == 0;
  free(src);
  free(dst);
  return NULL;
}

static void one_client_many_threads(void **state)
{
  hipObjS3Client_t *c = client_with(0, NULL, NULL, 16 << 10);
  struct worker_arg args[6];
  pthread_t th[6];
  for (unsigned i = 0; i < 6; i++) {
    args[i] = (struct worker_arg){c, i, 0};
    assert_int_equal(pthread_create(&th[i], NULL, worker, &args[i]), 0);
  }
  for (unsigned i = 0; i < 6; i++) {
    pthread_join(th[i], NULL);
    assert_true(args[i].ok);
  }
  hipObjS3ClientDestroy(c);
}

/* ---- the callbacks, driven by hand -------------------------------------- */

/* A well-formed RC token (docs/protocol.md), length `len`: what hipObject
 * would mint. The server checks it and declines (it has no RDMA). */
static void make_token(char out[HIPOBJ_TOKEN_LEN + 1], uint64_t len)
{
  uint8_t t[44] = {1, 0x11, 0x22, 0x33};
  t[15] = 0xff;
  t[16] = 0xff;
  t[17] = 10;
  t[20] = 1;
  for (int i = 0; i < 8; i++)
    t[33 + i] = (uint8_t)(len >> (8 * i));
  t[41] = 1;
  for (int i = 0; i < 44; i++)
    snprintf(out + 2 * i, 3, "%02x", t[i]);
}

static hipObjS3Status_t call_by_hand(hipObjS3Client_t *c, int op,
                                     uint64_t len, hipObjS3Result_t *r)
{
  hipObjS3CallSpec_t spec = {.bucket = bucket, .key = "small.bin", .op = op,
                             .offset = 0, .length = len};
  hipObjS3Call_t *call;
  char tok[HIPOBJ_TOKEN_LEN + 1], reply[HIPOBJ_REPLY_BUF_LEN];
  size_t reply_len = sizeof reply;
  make_token(tok, len);
  assert_int_equal(hipObjS3CallCreate(c, &spec, &call), hipObjS3Ok);
  const hipObjOps_t *ops = hipObjS3CallOps();
  hipObjError_t e = {hipObjS3Error, 0};
  if (ops->sendRequest(call, tok, HIPOBJ_TOKEN_LEN) == 0 &&
      ops->recvReply(call, reply, &reply_len) == 0) {
    int code = 0;
    assert_int_equal(hipObjParseRdmaReply(reply, reply_len, &code).opError,
                     hipObjSuccess);
    assert_int_equal(code, 501);
  }
  hipObjS3Status_t st = hipObjS3CallResult(call, e, r);
  hipObjS3CallDestroy(call);
  return st;
}

static void callbacks_declined(void **state)
{
  hipObjS3Client_t *c = client();
  hipObjS3Result_t r;
  uint8_t b[64] = {0};
  assert_int_equal(hipObjS3PutObject(c, bucket, "small.bin", b, 64,
                                     hipObjS3MemHost, &r), hipObjS3Ok);
  unsigned long long d0 = stat("rdma", "declined");
  unsigned long long out0 = stat("http", "bytes_out");
  assert_int_equal(call_by_hand(c, HIPOBJ_RDMA_OP_GET, 64, &r),
                   hipObjS3RdmaDeclined);
  assert_non_null(strstr(r.message, "declined"));
  assert_int_equal(call_by_hand(c, HIPOBJ_RDMA_OP_PUT, 64, &r),
                   hipObjS3RdmaDeclined);
  assert_int_equal(stat("rdma", "declined") - d0, 2);
  assert_int_equal(stat("http", "bytes_out"), out0); /* no body came */
  hipObjS3ClientDestroy(c);
}

static void callbacks_refuse_misuse(void **state)
{
  hipObjS3Client_t *c = client();
  hipObjS3CallSpec_t spec = {.bucket = bucket, .key = "k",
                             .op = HIPOBJ_RDMA_OP_GET};
  hipObjS3Call_t *call;
  char reply[HIPOBJ_REPLY_BUF_LEN];
  size_t len = sizeof reply;
  hipObjS3Result_t r;
  assert_int_equal(hipObjS3CallCreate(c, &spec, &call), hipObjS3Ok);
  const hipObjOps_t *ops = hipObjS3CallOps();
  /* A reply before any request, and a short token, are failures. */
  assert_int_not_equal(ops->recvReply(call, reply, &len), 0);
  assert_int_not_equal(ops->sendRequest(call, "abcd", 4), 0);
  hipObjError_t e = {hipObjS3Error, 0};
  assert_int_equal(hipObjS3CallResult(call, e, &r), hipObjS3ProtocolError);
  hipObjS3CallDestroy(call);
  spec.uploadId = "u";
  spec.partNumber = 0;
  spec.op = HIPOBJ_RDMA_OP_PUT;
  assert_int_equal(hipObjS3CallCreate(c, &spec, &call),
                   hipObjS3InvalidArgument);
  hipObjS3ClientDestroy(c);
}

/* ---- SigV4 --------------------------------------------------------------- */

static void sigv4_good_keys(void **state)
{
  hipObjS3Client_t *c = client_with(0, "AK", "SK", 64 << 10);
  hipObjS3Result_t p, g;
  round_trip(c, "signed/a b+c.bin", 300000, &p, &g); /* multipart too */
  round_trip(c, "signed-small", 10, &p, &g);
  hipObjS3Result_t r;
  uint8_t buf[10];
  assert_int_equal(hipObjS3GetRange(c, bucket, "signed-small", 2, buf, 3,
                                    hipObjS3MemHost, &r), hipObjS3Ok);
  hipObjS3ClientDestroy(c);
}

static void sigv4_wrong_secret(void **state)
{
  hipObjS3Client_t *c = client_with(0, "AK", "wrong", 0);
  hipObjS3Result_t r;
  uint8_t b[4] = {0};
  assert_int_equal(hipObjS3PutObject(c, bucket, "x", b, 4, hipObjS3MemHost,
                                     &r), hipObjS3AccessDenied);
  assert_string_equal(r.s3Code, "SignatureDoesNotMatch");
  assert_non_null(strstr(r.message, "AWS_SECRET_ACCESS_KEY"));
  assert_int_equal(hipObjS3GetObject(c, bucket, "signed-small", b, 4,
                                     hipObjS3MemHost, &r),
                   hipObjS3AccessDenied);
  assert_string_equal(r.s3Code, "SignatureDoesNotMatch"); /* HEAD explained */
  hipObjS3ClientDestroy(c);
}

static void sigv4_unknown_key(void **state)
{
  hipObjS3Client_t *c = client_with(0, "NOBODY", "SK", 0);
  hipObjS3Result_t r;
  uint8_t b[4] = {0};
  assert_int_equal(hipObjS3PutObject(c, bucket, "x", b, 4, hipObjS3MemHost,
                                     &r), hipObjS3AccessDenied);
  assert_string_equal(r.s3Code, "InvalidAccessKeyId");
  assert_non_null(strstr(r.message, "AWS_ACCESS_KEY_ID"));
  hipObjS3ClientDestroy(c);
}

static void sigv4_unsigned(void **state)
{
  hipObjS3Client_t *c = client_with(HIPOBJ_S3_ANONYMOUS, "AK", "SK", 0);
  hipObjS3Result_t r;
  uint8_t b[4] = {0};
  assert_int_equal(hipObjS3PutObject(c, bucket, "x", b, 4, hipObjS3MemHost,
                                     &r), hipObjS3AccessDenied);
  assert_non_null(strstr(r.message, "AWS_ACCESS_KEY_ID"));
  hipObjS3ClientDestroy(c);
}

static void sigv4_session_token(void **state)
{
  hipObjS3Config_t cfg;
  hipObjS3Client_t *c;
  hipObjS3Result_t p, g;
  hipObjS3ConfigInit(&cfg);
  cfg.endpoint = endpoint;
  cfg.flags = HIPOBJ_S3_NO_ENV;
  cfg.accessKey = "AK";
  cfg.secretKey = "SK";
  cfg.sessionToken = "FwoGZXIvYXdzEBYaD+/=session";
  assert_int_equal(hipObjS3ClientCreate(&cfg, &c, &p), hipObjS3Ok);
  round_trip(c, "with-session", 1000, &p, &g);
  hipObjS3ClientDestroy(c);
}

/* The token header is signed: a server that verifies SigV4 accepts the
 * request (and declines RDMA, having none). */
static void sigv4_token_signed(void **state)
{
  hipObjS3Client_t *c = client_with(0, "AK", "SK", 0);
  hipObjS3Result_t r;
  uint8_t b[64] = {0};
  assert_int_equal(hipObjS3PutObject(c, bucket, "small.bin", b, 64,
                                     hipObjS3MemHost, &r), hipObjS3Ok);
  unsigned long long d0 = stat("rdma", "declined");
  assert_int_equal(call_by_hand(c, HIPOBJ_RDMA_OP_GET, 64, &r),
                   hipObjS3RdmaDeclined);
  assert_int_equal(stat("rdma", "declined") - d0, 1);
  hipObjS3ClientDestroy(c);
  c = client_with(0, "AK", "bad", 0);
  assert_int_equal(call_by_hand(c, HIPOBJ_RDMA_OP_GET, 64, &r),
                   hipObjS3AccessDenied);
  hipObjS3ClientDestroy(c);
}

/* ---- --decline-rdma ------------------------------------------------------- */

static void decline_callbacks(void **state)
{
  hipObjS3Client_t *c = client();
  hipObjS3Result_t r;
  uint8_t b[64] = {0};
  assert_int_equal(hipObjS3PutObject(c, bucket, "small.bin", b, 64,
                                     hipObjS3MemHost, &r), hipObjS3Ok);
  unsigned long long d0 = stat("rdma", "declined");
  assert_int_equal(call_by_hand(c, HIPOBJ_RDMA_OP_GET, 64, &r),
                   hipObjS3RdmaDeclined);
  assert_int_equal(call_by_hand(c, HIPOBJ_RDMA_OP_PUT, 64, &r),
                   hipObjS3RdmaDeclined);
  assert_int_equal(stat("rdma", "declined") - d0, 2);
  hipObjS3ClientDestroy(c);
}

/* ---- main ----------------------------------------------------------------- */

static int make_bucket(void **state)
{
  char body[8192];
  long st = raw("PUT", "/glue-test", body);
  snprintf(bucket, sizeof bucket, "glue-test");
  return (st == 200 || st == 409) ? 0 : -1;
}

int main(int argc, char **argv)
{
  const struct CMUnitTest plain[] = {
      cmocka_unit_test(small_object),
      cmocka_unit_test(no_rdma_flag),
      cmocka_unit_test(require_rdma),
      cmocka_unit_test(multipart_and_ranges),
      cmocka_unit_test(ranged_get),
      cmocka_unit_test(missing_things),
      cmocka_unit_test(buffer_too_small_and_empty),
      cmocka_unit_test(odd_keys),
      cmocka_unit_test(delete_object),
      cmocka_unit_test(unreachable),
      cmocka_unit_test(device_memory_fallback),
      cmocka_unit_test(progress),
      cmocka_unit_test(one_client_many_threads),
      cmocka_unit_test(callbacks_declined),
      cmocka_unit_test(callbacks_refuse_misuse),
  };
  const struct CMUnitTest sigv4[] = {
      cmocka_unit_test(sigv4_good_keys),
      cmocka_unit_test(sigv4_wrong_secret),
      cmocka_unit_test(sigv4_unknown_key),
      cmocka_unit_test(sigv4_unsigned),
      cmocka_unit_test(sigv4_session_token),
      cmocka_unit_test(sigv4_token_signed),
  };
  const struct CMUnitTest decline[] = {
      cmocka_unit_test(decline_callbacks),
  };
  endpoint = getenv("HIPOBJ_TEST_ENDPOINT");
  if (argc != 2 || !endpoint) {
    fprintf(stderr, "usage: HIPOBJ_TEST_ENDPOINT=URL %s plain|sigv4|decline\n",
            argv[0]);
    return 2;
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  int rc = 2;
  if (!strcmp(argv[1], "plain"))
    rc = cmocka_run_group_tests_name("plain", plain, make_bucket, NULL);
  else if (!strcmp(argv[1], "sigv4") && (sign_raw = true))
    rc = cmocka_run_group_tests_name("sigv4", sigv4, make_bucket, NULL);
  else if (!strcmp(argv[1], "decline"))
    rc = cmocka_run_group_tests_name("decline", decline, make_bucket, NULL);
  curl_global_cleanup();
  return rc;
}
