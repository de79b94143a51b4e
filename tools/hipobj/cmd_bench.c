/* SPDX-License-Identifier: MIT */
/* hipobj bench s3://BUCKET[/PREFIX]: for each object size and each number
 * of concurrent requests, PUT then GET, and report throughput, latency
 * percentiles, the path that moved the bytes (from the client's counters)
 * and the process's CPU time (getrusage, user and system, every thread)
 * per transfer and per GB; with --vs-http each point runs again through a
 * plain-HTTP client, for the same figures. A table, or JSON with --json. */
#include <pthread.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "common/size.h"
#include "tool.h"

#define MAX_POINTS 16
#define BENCH_BYTES ((uint64_t)64 << 20) /* per thread and point */

static const char usage[] =
    "usage: hipobj bench s3://BUCKET[/PREFIX] [--sizes LIST] "
    "[--concurrency LIST]\n"
    "                    [--iterations N] [--ops get,put] [--json] [--keep]\n"
    "                    [--vs-http] [--gpu N | --host] [options]\n";

struct plan {
  uint64_t sizes[MAX_POINTS];
  unsigned n_sizes;
  unsigned conc[MAX_POINTS];
  unsigned n_conc;
  bool get, put;
  char bucket[256];
  char prefix[512];
};

struct point {
  const char *op;
  uint64_t size;
  unsigned conc, iters;
  double seconds, p50, p90, p99;
  char path[16];
  /* From hipObjGetInfo() around the point: connection reuse. */
  double reuse;       /* transfers that rode an existing connection, 0..1 */
  double transitions; /* QP state transitions per transfer */
  /* Retries inside the library, by cause (docs/protocol.md, section 7). */
  uint64_t retry_fabric, retry_server, retry_stalled, retry_kept;
  uint64_t deadlines_moved; /* a moving transfer given more time */
  /* The process's CPU seconds over the point (getrusage). */
  double cpu_user, cpu_sys;
};

struct bench {
  struct tool_session *s;
  const struct tool_opts *o;
  struct plan *pl;
  hipObjS3Client_t *client; /* the one the point runs through */
  hipObjS3Client_t *http;   /* --vs-http: plain HTTP only */
  struct tool_buf bufs[HIPOBJ_S3_MAX_CONCURRENCY];
};

struct job {
  struct bench *b;
  unsigned thread, iters;
  bool get;
  uint64_t size;
  double *lat;
  hipObjS3Result_t fail;
  bool failed;
};

/* ---- the plan ----------------------------------------------------------- */

static bool parse_sizes(const char *s, struct plan *pl)
{
  char copy[256], *save = NULL;
  snprintf(copy, sizeof copy, "%s", s ? s : "4K,64K,1M,16M");
  for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    uint64_t v;
    if (pl->n_sizes == MAX_POINTS || !ho_parse_size(t, &v) || v == 0 ||
        v > HIPOBJ_MAX_BUFFER_SIZE)
      return false;
    pl->sizes[pl->n_sizes++] = v;
  }
  return pl->n_sizes > 0;
}

static bool parse_conc(const char *s, struct plan *pl)
{
  char copy[256], *save = NULL;
  snprintf(copy, sizeof copy, "%s", s ? s : "1,4");
  for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char *end = NULL;
    unsigned long v = strtoul(t, &end, 10);
    if (pl->n_conc == MAX_POINTS || *end || v < 1 ||
        v > HIPOBJ_S3_MAX_CONCURRENCY)
      return false;
    pl->conc[pl->n_conc++] = (unsigned)v;
  }
  return pl->n_conc > 0;
}

static bool parse_ops(const char *s, struct plan *pl)
{
  char copy[64], *save = NULL;
  snprintf(copy, sizeof copy, "%s", s ? s : "put,get");
  for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (!strcmp(t, "get"))
      pl->get = true;
    else if (!strcmp(t, "put"))
      pl->put = true;
    else
      return false;
  }
  return pl->get || pl->put;
}

static bool make_plan(const struct tool_opts *o, struct plan *pl)
{
  memset(pl, 0, sizeof *pl);
  if (hipObjS3ParseUrl(o->args[0], pl->bucket, sizeof pl->bucket, pl->prefix,
                       sizeof pl->prefix) != hipObjS3Ok) {
    tool_err("not a bucket URL: %s (expected s3://BUCKET[/PREFIX])",
             o->args[0]);
    return false;
  }
  if (!parse_sizes(o->sizes, pl) ||
      !parse_conc(o->concurrency_list, pl) || !parse_ops(o->ops, pl)) {
    tool_err("bad --sizes, --concurrency or --ops (at most %d values; sizes "
             "1..4G, concurrency 1..%u, ops get,put)", MAX_POINTS,
             HIPOBJ_S3_MAX_CONCURRENCY);
    return false;
  }
  return true;
}

/* ---- running ------------------------------------------------------------ */

static void object_key(const struct plan *pl, uint64_t size, unsigned t,
                       char *out, size_t cap)
{
  const char *sep = pl->prefix[0] && pl->prefix[strlen(pl->prefix) - 1] != '/'
                        ? "/" : "";
  snprintf(out, cap, "%s%shipobj-bench-%llu-%u", pl->prefix, sep,
           (unsigned long long)size, t);
}

static void *run_job(void *arg)
{
  struct job *j = arg;
  struct bench *b = j->b;
  char key[600];
  object_key(b->pl, j->size, j->thread, key, sizeof key);
  hipObjS3MemKind_t mem = b->s->gpu ? hipObjS3MemDevice : hipObjS3MemHost;
  void *p = b->bufs[j->thread].p;
  for (unsigned i = 0; i < j->iters; i++) {
    double t0 = tool_now();
    hipObjS3Status_t st =
        j->get ? hipObjS3GetObject(b->client, b->pl->bucket, key, p,
                                   (size_t)j->size, mem, &j->fail)
               : hipObjS3PutObject(b->client, b->pl->bucket, key, p,
                                   (size_t)j->size, mem, &j->fail);
    j->lat[i] = tool_now() - t0;
    if (st != hipObjS3Ok) {
      j->failed = true;
      break;
    }
  }
  return NULL;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double pct(const double *v, size_t n, double q)
{
  size_t rank = (size_t)(q * (double)n + 0.999999);
  return v[rank ? rank - 1 : 0] * 1e3;
}

static void path_of(const hipObjS3Counters_t *a, const hipObjS3Counters_t *z,
                    char *out, size_t cap)
{
  uint64_t rdma = z->rdmaTransfers - a->rdmaTransfers;
  uint64_t http = z->httpTransfers - a->httpTransfers;
  snprintf(out, cap, "%s", rdma && http ? "mixed" : rdma ? "RDMA" : "HTTP");
}

static double tv_s(struct timeval t)
{
  return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

/* One (op, size, conc) point: conc threads, iters requests each. */
static int run_point(struct bench *b, bool get, uint64_t size, unsigned conc,
                     unsigned iters, struct point *pt)
{
  struct job jobs[HIPOBJ_S3_MAX_CONCURRENCY];
  pthread_t th[HIPOBJ_S3_MAX_CONCURRENCY];
  double *lat = calloc((size_t)conc * iters, sizeof *lat);
  hipObjS3Counters_t before, after;
  if (!lat)
    return EXIT_FAILED;
  struct rusage ru0, ru1;
  hipObjS3GetCounters(b->client, &before);
  getrusage(RUSAGE_SELF, &ru0);
  double t0 = tool_now();
  unsigned started = 0;
  for (unsigned t = 0; t < conc; t++) {
    jobs[t] = (struct job){.b = b, .thread = t, .iters = iters, .get = get,
                           .size = size, .lat = lat + (size_t)t * iters};
    if (pthread_create(&th[t], NULL, run_job, &jobs[t]) != 0)
      break;
    started++;
  }
  for (unsigned t = 0; t < started; t++)
    pthread_join(th[t], NULL);
  double seconds = tool_now() - t0;
  getrusage(RUSAGE_SELF, &ru1);
  hipObjS3GetCounters(b->client, &after);
  int rc = started == conc ? EXIT_OK : EXIT_FAILED;
  for (unsigned t = 0; t < started && rc == EXIT_OK; t++)
    if (jobs[t].failed)
      rc = tool_fail(&jobs[t].fail, get ? "bench GET" : "bench PUT");
  qsort(lat, (size_t)conc * iters, sizeof *lat, cmp_double);
  *pt = (struct point){.op = get ? "GET" : "PUT", .size = size, .conc = conc,
                       .iters = iters, .seconds = seconds,
                       .cpu_user = tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime),
                       .cpu_sys = tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime),
                       .p50 = pct(lat, (size_t)conc * iters, 0.50),
                       .p90 = pct(lat, (size_t)conc * iters, 0.90),
                       .p99 = pct(lat, (size_t)conc * iters, 0.99)};
  path_of(&before, &after, pt->path, sizeof pt->path);
  free(lat);
  return rc;
}

/* ---- buffers ------------------------------------------------------------ */

static bool fill_pattern(struct tool_buf *b, uint64_t size, unsigned seed)
{
  char *host = b->gpu ? malloc((size_t)size) : b->p;
  if (!host)
    return false;
  for (uint64_t i = 0; i < size; i++)
    host[i] = (char)((i * 131 + seed * 7 + (i >> 12)) & 0xff);
  bool ok = !b->gpu || tool_gpu_to_device(b->gpu, b->p, host, (size_t)size);
  if (b->gpu)
    free(host);
  return ok;
}

static void free_buffers(struct bench *b, unsigned n)
{
  for (unsigned i = 0; i < n; i++)
    tool_buf_free(&b->bufs[i]);
}

static bool alloc_buffers(struct bench *b, uint64_t size, unsigned n)
{
  for (unsigned i = 0; i < n; i++)
    if (!tool_buf_alloc(&b->bufs[i], b->s->gpu, (size_t)size) ||
        !fill_pattern(&b->bufs[i], size, i)) {
      tool_err("cannot allocate %u buffers of %llu bytes", n,
               (unsigned long long)size);
      free_buffers(b, i + 1);
      return false;
    }
  return true;
}

/* After a GET, the bytes must be those the PUT wrote (host memory). */
static bool verify(struct bench *b, uint64_t size, unsigned n)
{
  struct tool_buf want;
  bool ok = true;
  if (b->s->gpu)
    return true;
  if (!tool_buf_alloc(&want, NULL, (size_t)size))
    return false;
  for (unsigned i = 0; i < n && ok; i++) {
    fill_pattern(&want, size, i);
    ok = memcmp(want.p, b->bufs[i].p, (size_t)size) == 0;
  }
  tool_buf_free(&want);
  if (!ok)
    tool_err("bench: GET returned other bytes than PUT wrote");
  return ok;
}

/* ---- output ------------------------------------------------------------- */

static void print_point(const struct tool_opts *o, const struct point *p,
                        bool first)
{
  char size[32];
  double bytes = (double)p->size * p->conc * p->iters;
  double mibs = p->seconds > 0 ? bytes / p->seconds / (1 << 20) : 0;
  double ops = p->seconds > 0 ? p->conc * p->iters / p->seconds : 0;
  double cpu = p->cpu_user + p->cpu_sys;
  unsigned n = p->conc * p->iters;
  double cpu_ms_x = n ? cpu * 1e3 / n : 0;
  double cpu_s_gb = bytes > 0 ? cpu * 1e9 / bytes : 0;
  if (o->json) {
    printf("%s\n    {\"op\": \"%s\", \"size\": %llu, \"concurrency\": %u, "
           "\"iterations\": %u, \"seconds\": %.6f, \"mib_per_s\": %.2f, "
           "\"ops_per_s\": %.1f, \"p50_ms\": %.3f, \"p90_ms\": %.3f, "
           "\"p99_ms\": %.3f, \"path\": \"%s\", \"reuse\": %.3f, "
           "\"qp_transitions_per_transfer\": %.3f, \"retries\": "
           "{\"fabric\": %llu, \"server_rdma\": %llu, \"stalled\": %llu, "
           "\"kept_broken\": %llu}, \"deadlines_moved\": %llu, "
           "\"cpu_user_s\": %.6f, \"cpu_sys_s\": %.6f, "
           "\"cpu_ms_per_transfer\": %.4f, \"cpu_s_per_gb\": %.4f}",
           first ? "" : ",", p->op, (unsigned long long)p->size, p->conc,
           p->iters, p->seconds, mibs, ops, p->p50, p->p90, p->p99, p->path,
           p->reuse, p->transitions, (unsigned long long)p->retry_fabric,
           (unsigned long long)p->retry_server,
           (unsigned long long)p->retry_stalled,
           (unsigned long long)p->retry_kept,
           (unsigned long long)p->deadlines_moved, p->cpu_user, p->cpu_sys,
           cpu_ms_x, cpu_s_gb);
    return;
  }
  tool_fmt_bytes((double)p->size, size, sizeof size);
  printf("%-4s %10s %5u %6u %10.1f %9.1f %9.3f %9.3f %9.3f %5.0f%% %5.2f "
         "%8.3f %8.3f  %s",
         p->op, size, p->conc, p->iters, mibs, ops, p->p50, p->p90, p->p99,
         p->reuse * 100, p->transitions, cpu_ms_x, cpu_s_gb, p->path);
  if (p->retry_fabric + p->retry_server + p->retry_stalled + p->retry_kept)
    printf("  retries: %llu fabric, %llu server rdma, %llu stalled, %llu kept "
           "broken", (unsigned long long)p->retry_fabric,
           (unsigned long long)p->retry_server,
           (unsigned long long)p->retry_stalled,
           (unsigned long long)p->retry_kept);
  if (p->deadlines_moved)
    printf("  deadlines moved: %llu", (unsigned long long)p->deadlines_moved);
  printf("\n");
  fflush(stdout);
}

static void print_head(const struct bench *b)
{
  char why[256] = "";
  bool rdma = hipObjS3ClientRdma(b->s->client, why, sizeof why, NULL);
  if (b->o->json) {
    printf("{\n  \"memory\": \"%s\", \"rdma\": %s,\n  \"results\": [",
           b->s->gpu ? tool_gpu_runtime(b->s->gpu) : "host",
           rdma ? "true" : "false");
    return;
  }
  printf("# hipobj bench, %s memory, %s\n",
         b->s->gpu ? tool_gpu_runtime(b->s->gpu) : "host",
         rdma ? "RDMA available" : why);
  printf("%-4s %10s %5s %6s %10s %9s %9s %9s %9s %6s %5s %8s %8s  %s\n", "op",
         "size", "conc", "iters", "MiB/s", "ops/s", "p50 ms", "p90 ms",
         "p99 ms", "reuse", "qpt/x", "cpu ms/x", "cpu s/GB", "path");
}

/* ---- the command -------------------------------------------------------- */

/* run_point() with the library's connection counters read around it:
 * reuse rate and QP state transitions per transfer (0 in steady state),
 * retries by cause. */
static int measured_point(struct bench *b, bool get, uint64_t size,
                          unsigned conc, unsigned iters, struct point *pt)
{
  hipObjInfo_t i0 = {.size = sizeof i0}, i1 = {.size = sizeof i1};
  hipObjGetInfo(&i0);
  int rc = run_point(b, get, size, conc, iters, pt);
  hipObjGetInfo(&i1);
  uint64_t n = i1.transfers - i0.transfers;
  pt->reuse = n ? (double)(i1.connectionsReused - i0.connectionsReused) / n : 0;
  pt->transitions = n ? (double)(i1.qpTransitions - i0.qpTransitions) / n : 0;
  pt->retry_fabric = i1.retriesFabric - i0.retriesFabric;
  pt->retry_server = i1.retriesServerRdma - i0.retriesServerRdma;
  pt->retry_stalled = i1.retriesStalled - i0.retriesStalled;
  pt->retry_kept = i1.retriesKeptBroken - i0.retriesKeptBroken;
  pt->deadlines_moved = i1.deadlinesMoved - i0.deadlinesMoved;
  return rc;
}

/* A measured point through the session's client, then (--vs-http) the
 * same through the plain-HTTP client, each printed. */
static int both_paths(struct bench *b, bool get, uint64_t size, unsigned conc,
                      unsigned iters, bool *first)
{
  struct point pt;
  int rc = measured_point(b, get, size, conc, iters, &pt);
  if (rc == EXIT_OK)
    print_point(b->o, &pt, *first), *first = false;
  if (rc == EXIT_OK && b->http) {
    b->client = b->http;
    rc = measured_point(b, get, size, conc, iters, &pt);
    b->client = b->s->client;
    if (rc == EXIT_OK)
      print_point(b->o, &pt, *first), *first = false;
  }
  return rc;
}

static int bench_size(struct bench *b, uint64_t size, bool *first)
{
  const struct plan *pl = b->pl;
  unsigned iters = b->o->iterations;
  if (!iters) {
    uint64_t n = BENCH_BYTES / size;
    iters = n < 3 ? 3 : n > 100 ? 100 : (unsigned)n;
  }
  int rc = EXIT_OK;
  for (unsigned c = 0; c < pl->n_conc && rc == EXIT_OK; c++) {
    unsigned conc = pl->conc[c];
    struct point pt;
    if (!alloc_buffers(b, size, conc))
      return EXIT_FAILED;
    /* GET alone still needs the objects: one untimed PUT each. */
    if (rc == EXIT_OK && !pl->put)
      rc = run_point(b, false, size, conc, 1, &pt);
    if (rc == EXIT_OK && pl->put)
      rc = both_paths(b, false, size, conc, iters, first);
    if (rc == EXIT_OK && pl->get &&
        (rc = both_paths(b, true, size, conc, iters, first)) == EXIT_OK &&
        !verify(b, size, conc))
      rc = EXIT_FAILED;
    free_buffers(b, conc);
  }
  return rc;
}

static void clean_up(struct bench *b)
{
  char key[600];
  unsigned most = 0;
  for (unsigned c = 0; c < b->pl->n_conc; c++)
    most = b->pl->conc[c] > most ? b->pl->conc[c] : most;
  for (unsigned s = 0; s < b->pl->n_sizes; s++)
    for (unsigned t = 0; t < most; t++) {
      object_key(b->pl, b->pl->sizes[s], t, key, sizeof key);
      hipObjS3DeleteObject(b->client, b->pl->bucket, key, NULL);
    }
}

int cmd_bench(int argc, char **argv)
{
  struct tool_opts o;
  struct tool_session s;
  struct plan pl;
  if (!tool_parse(argc, argv, &o) || o.nargs != 1) {
    fputs(usage, stderr);
    return EXIT_USAGE;
  }
  if (!make_plan(&o, &pl))
    return EXIT_USAGE;
  int rc = tool_session_open(&s, &o, false);
  if (rc != EXIT_OK) {
    tool_session_close(&s);
    return rc;
  }
  struct bench b = {.s = &s, .o = &o, .pl = &pl, .client = s.client};
  if (o.vs_http && (rc = tool_http_client(&s, &o, &b.http)) != EXIT_OK) {
    tool_session_close(&s);
    return rc;
  }
  bool first = true;
  print_head(&b);
  for (unsigned i = 0; i < pl.n_sizes && rc == EXIT_OK; i++)
    rc = bench_size(&b, pl.sizes[i], &first);
  if (o.json)
    printf("\n  ],\n  \"ok\": %s\n}\n", rc == EXIT_OK ? "true" : "false");
  if (!o.keep)
    clean_up(&b);
  if (b.http)
    hipObjS3ClientDestroy(b.http);
  tool_session_close(&s);
  return rc;
}
