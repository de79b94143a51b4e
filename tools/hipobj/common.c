/* SPDX-License-Identifier: MIT */
/* What the subcommands share: options, sizes, messages, exit codes, and the
 * session (GPU and client) with its explanation of how bytes will move. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/size.h"
#include "tool.h"

enum {
  OPT_ENDPOINT = 256, OPT_REGION, OPT_NIC, OPT_GPU, OPT_HOST, OPT_PART_SIZE,
  OPT_CONCURRENCY, OPT_REQUIRE_RDMA, OPT_NO_RDMA, OPT_UNSIGNED,
  OPT_NO_PROGRESS, OPT_JSON, OPT_SIZES, OPT_ITERATIONS, OPT_OPS, OPT_KEEP,
  OPT_VS_HTTP
};

static const struct option long_opts[] = {
    {"endpoint", required_argument, NULL, OPT_ENDPOINT},
    {"region", required_argument, NULL, OPT_REGION},
    {"nic", required_argument, NULL, OPT_NIC},
    {"gpu", required_argument, NULL, OPT_GPU},
    {"host", no_argument, NULL, OPT_HOST},
    {"part-size", required_argument, NULL, OPT_PART_SIZE},
    {"concurrency", required_argument, NULL, OPT_CONCURRENCY},
    {"require-rdma", no_argument, NULL, OPT_REQUIRE_RDMA},
    {"no-rdma", no_argument, NULL, OPT_NO_RDMA},
    {"unsigned", no_argument, NULL, OPT_UNSIGNED},
    {"output", required_argument, NULL, 'o'},
    {"verbose", no_argument, NULL, 'v'},
    {"quiet", no_argument, NULL, 'q'},
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"json", no_argument, NULL, OPT_JSON},
    {"sizes", required_argument, NULL, OPT_SIZES},
    {"iterations", required_argument, NULL, OPT_ITERATIONS},
    {"ops", required_argument, NULL, OPT_OPS},
    {"keep", no_argument, NULL, OPT_KEEP},
    {"vs-http", no_argument, NULL, OPT_VS_HTTP},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}};

void tool_err(const char *fmt, ...)
{
  va_list ap;
  fputs("hipobj: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

void tool_note(const struct tool_opts *o, const char *fmt, ...)
{
  va_list ap;
  if (o->quiet)
    return;
  fputs("hipobj: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

static bool parse_uint(const char *s, unsigned max, unsigned *out)
{
  uint64_t v;
  if (!ho_parse_uint(s, max, &v))
    return false;
  *out = (unsigned)v;
  return true;
}

void tool_fmt_bytes(double n, char *out, size_t cap)
{
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  unsigned u = 0;
  while (n >= 1024 && u + 1 < sizeof units / sizeof *units) {
    n /= 1024;
    u++;
  }
  snprintf(out, cap, u ? "%.2f %s" : "%.0f %s", n, units[u]);
}

double tool_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool parse_one(int c, const char *arg, struct tool_opts *o)
{
  switch (c) {
  case OPT_ENDPOINT: o->endpoint = arg; return true;
  case OPT_REGION: o->region = arg; return true;
  case OPT_NIC: o->nic = arg; return true;
  case OPT_HOST: o->gpu = -1; return true;
  case OPT_REQUIRE_RDMA: o->require_rdma = true; return true;
  case OPT_NO_RDMA: o->no_rdma = true; return true;
  case OPT_UNSIGNED: o->anonymous = true; return true;
  case 'o': o->output = arg; return true;
  case 'v': o->verbose = true; return true;
  case 'q': o->quiet = true; return true;
  case OPT_NO_PROGRESS: o->no_progress = true; return true;
  case OPT_JSON: o->json = true; return true;
  case OPT_SIZES: o->sizes = arg; return true;
  case OPT_OPS: o->ops = arg; return true;
  case OPT_KEEP: o->keep = true; return true;
  case OPT_VS_HTTP: o->vs_http = true; return true;
  case OPT_GPU: {
    unsigned g;
    if (!parse_uint(arg, 1024, &g))
      return false;
    o->gpu = (int)g;
    return true;
  }
  case OPT_PART_SIZE:
    return ho_parse_size(arg, &o->part_size) && o->part_size > 0 &&
           o->part_size <= HIPOBJ_MAX_BUFFER_SIZE;
  case OPT_CONCURRENCY:
    o->concurrency_list = arg;
    return strchr(arg, ',') ||
           (parse_uint(arg, HIPOBJ_S3_MAX_CONCURRENCY, &o->concurrency) &&
            o->concurrency > 0);
  case OPT_ITERATIONS:
    return parse_uint(arg, 1000000, &o->iterations) && o->iterations > 0;
  default:
    return false;
  }
}

bool tool_parse(int argc, char **argv, struct tool_opts *o)
{
  memset(o, 0, sizeof *o);
  o->gpu = -1;
  optind = 1;
  opterr = 0;
  int c, index = -1;
  while ((c = getopt_long(argc, argv, "o:vqh", long_opts, &index)) != -1) {
    if (c == 'h')
      return false;
    if (c == '?' || c == ':') {
      tool_err("unknown option or missing value: %s", argv[optind - 1]);
      return false;
    }
    if (!parse_one(c, optarg, o)) {
      tool_err("invalid value for --%s: %s",
               index >= 0 ? long_opts[index].name : "?", optarg ? optarg : "");
      return false;
    }
    index = -1;
  }
  if (o->require_rdma && o->no_rdma) {
    tool_err("--require-rdma and --no-rdma contradict each other");
    return false;
  }
  o->nargs = argc - optind;
  o->args = argv + optind;
  return true;
}

int tool_exit_for(hipObjS3Status_t st)
{
  switch (st) {
  case hipObjS3Ok: return EXIT_OK;
  case hipObjS3InvalidArgument: return EXIT_USAGE;
  case hipObjS3NoSuchBucket:
  case hipObjS3NoSuchKey: return EXIT_NOT_FOUND;
  case hipObjS3AccessDenied: return EXIT_DENIED;
  case hipObjS3ConnectFailed: return EXIT_UNREACHABLE;
  case hipObjS3RdmaUnavailable:
  case hipObjS3RdmaDeclined: return EXIT_NO_RDMA;
  case hipObjS3RdmaFailed: return EXIT_RDMA_FAILED;
  case hipObjS3NoDeviceOps:
  case hipObjS3DeviceCopyFailed: return EXIT_GPU;
  default: return EXIT_FAILED;
  }
}

int tool_fail(const hipObjS3Result_t *r, const char *what)
{
  tool_err("%s: %s", what, r->message[0] ? r->message
                                         : hipObjS3StatusString(r->status));
  return tool_exit_for(r->status);
}

void tool_path_text(const hipObjS3Result_t *r, const hipObjS3Client_t *c,
                    char *out, size_t cap)
{
  char why[256] = "";
  if (r->partsHttp == 0 && r->partsRdma == 0) {
    snprintf(out, cap, "(nothing to move)");
    return;
  }
  if (r->partsHttp == 0) {
    snprintf(out, cap, "via RDMA");
    return;
  }
  const char *mixed = r->partsRdma ? "via RDMA and " : "via ";
  switch (r->fallbackReason) {
  case hipObjS3FallbackDeclined:
    snprintf(out, cap, "%sHTTP fallback (the server declined RDMA: 501)",
             mixed);
    break;
  case hipObjS3FallbackNoRdma:
    hipObjS3ClientRdma(c, why, sizeof why, NULL);
    why[strcspn(why, "(")] = '\0';
    snprintf(out, cap, "via HTTP fallback (%.*s)", (int)strlen(why) - 1,
             why);
    break;
  case hipObjS3FallbackDisabled:
    snprintf(out, cap, "via HTTP (--no-rdma)");
    break;
  default:
    snprintf(out, cap, "via HTTP");
    break;
  }
}

/* ---- the session -------------------------------------------------------- */

static int open_gpu(struct tool_session *s, const struct tool_opts *o)
{
  char why[300];
  const char *which = getenv("HIPOBJ_GPU_RUNTIME");
  if (o->gpu < 0)
    return EXIT_OK;
  if (which && !strcmp(which, "none")) {
    tool_err("--gpu %d, but HIPOBJ_GPU_RUNTIME=none: use --host", o->gpu);
    return EXIT_GPU;
  }
  s->gpu = tool_gpu_open(which && which[0] ? which : "auto", why, sizeof why);
  if (!s->gpu) {
    tool_err("--gpu %d: %s; use --host for host memory", o->gpu, why);
    return EXIT_GPU;
  }
  if (!tool_gpu_select(s->gpu, o->gpu)) {
    tool_err("--gpu %d: no such %s device (%d found)", o->gpu,
             tool_gpu_runtime(s->gpu), tool_gpu_count(s->gpu));
    return EXIT_GPU;
  }
  tool_gpu_device_ops(s->gpu, &s->dev_ops);
  return EXIT_OK;
}

static void fill_config(const struct tool_session *s,
                        const struct tool_opts *o, const char *nic,
                        hipObjS3Config_t *cfg)
{
  hipObjS3ConfigInit(cfg);
  cfg->endpoint = o->endpoint;
  cfg->region = o->region;
  cfg->partSize = o->part_size;
  cfg->concurrency = o->concurrency;
  cfg->flags = (o->no_rdma ? HIPOBJ_S3_NO_RDMA : 0) |
               (o->require_rdma ? HIPOBJ_S3_REQUIRE_RDMA : 0) |
               (o->anonymous ? HIPOBJ_S3_ANONYMOUS : 0);
  cfg->gpuDevice = o->gpu;
  cfg->nicHint = nic;
  cfg->deviceOps = s->gpu ? &s->dev_ops : NULL;
  if (s->progress) {
    cfg->progress = tool_progress_cb;
    cfg->progressCtx = s->progress;
  }
}

/* hipObjInit needs a NIC name on a host without a GPU: when the user gave
 * none, the first active RDMA device is the natural choice, and the glue
 * has the library make it (HIPOBJ_S3_FIRST_ACTIVE_NIC). */
static int create_client(struct tool_session *s, const struct tool_opts *o)
{
  hipObjS3Config_t cfg;
  hipObjS3Result_t r;
  fill_config(s, o, o->nic, &cfg);
  if (!s->gpu)
    cfg.flags |= HIPOBJ_S3_FIRST_ACTIVE_NIC;
  hipObjS3Status_t st = hipObjS3ClientCreate(&cfg, &s->client, &r);
  return st == hipObjS3Ok ? EXIT_OK : tool_fail(&r, "cannot start");
}

/* The NIC the library took as the first active one, or "". */
static void first_active_nic(char *out, size_t cap)
{
  hipObjInfo_t info;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  out[0] = '\0';
  if (hipObjGetInfo(&info).opError == hipObjSuccess &&
      info.nicChoice == hipObjNicChoiceFirstActive)
    snprintf(out, cap, "%s", info.nicName);
}

int tool_http_client(const struct tool_session *s, const struct tool_opts *o,
                     hipObjS3Client_t **out)
{
  hipObjS3Config_t cfg;
  hipObjS3Result_t r;
  fill_config(s, o, o->nic, &cfg);
  cfg.flags = (cfg.flags & ~(unsigned)(HIPOBJ_S3_REQUIRE_RDMA |
                                       HIPOBJ_S3_FIRST_ACTIVE_NIC)) |
              HIPOBJ_S3_NO_RDMA;
  cfg.progress = NULL;
  cfg.progressCtx = NULL;
  return hipObjS3ClientCreate(&cfg, out, &r) == hipObjS3Ok
             ? EXIT_OK
             : tool_fail(&r, "cannot start the plain-HTTP client");
}

int tool_session_open(struct tool_session *s, const struct tool_opts *o,
                      bool want_progress)
{
  char why[256];
  memset(s, 0, sizeof *s);
  int rc = open_gpu(s, o);
  if (rc != EXIT_OK)
    return rc;
  if (want_progress && !o->quiet && !o->no_progress && isatty(2))
    s->progress = tool_progress_new("");
  if ((rc = create_client(s, o)) != EXIT_OK)
    return rc;
  bool rdma = hipObjS3ClientRdma(s->client, why, sizeof why, NULL);
  if (rdma)
    first_active_nic(s->nic_auto, sizeof s->nic_auto);
  if (rdma && s->nic_auto[0] && o->verbose)
    tool_note(o, "no GPU: using RDMA device %s (the first active one; "
              "choose with --nic)", s->nic_auto);
  if (!rdma && !o->no_rdma)
    tool_note(o, "note: %s: moving the bytes over plain HTTP", why);
  return EXIT_OK;
}

void tool_session_close(struct tool_session *s)
{
  hipObjS3ClientDestroy(s->client);
  tool_progress_free(s->progress);
  tool_gpu_close(s->gpu);
  memset(s, 0, sizeof *s);
}

/* ---- the closing lines of get and put ----------------------------------- */

void tool_summary(const struct tool_opts *o, const struct tool_session *s,
                  const char *from, const char *to,
                  const hipObjS3Result_t *r, double seconds)
{
  char size[32], rate[32], path[400];
  tool_fmt_bytes((double)r->bytes, size, sizeof size);
  tool_fmt_bytes(seconds > 0 ? (double)r->bytes / seconds : 0, rate,
                 sizeof rate);
  tool_path_text(r, s->client, path, sizeof path);
  tool_note(o, "%s -> %s: %s in %.3f s (%s/s) %s", from, to, size, seconds,
            rate, path);
  if (!o->verbose || o->quiet)
    return;
  hipObjS3Counters_t k;
  hipObjS3GetCounters(s->client, &k);
  tool_note(o, "parts: %u by RDMA, %u by HTTP; memory: %s", r->partsRdma,
            r->partsHttp, s->gpu ? tool_gpu_runtime(s->gpu) : "host");
  if (r->etag[0])
    tool_note(o, "etag: %s", r->etag);
  tool_note(o, "counters: rdma %llu transfers / %llu bytes, http %llu "
            "transfers / %llu bytes, fallbacks %llu declined + %llu without "
            "RDMA, %llu requests",
            (unsigned long long)k.rdmaTransfers,
            (unsigned long long)k.rdmaBytes,
            (unsigned long long)k.httpTransfers,
            (unsigned long long)k.httpBytes,
            (unsigned long long)k.fallbacksDeclined,
            (unsigned long long)k.fallbacksNoRdma,
            (unsigned long long)k.requests);
}

/* s3://bucket/key with a non-empty key. */
bool tool_object_url(const char *url, char *bucket, size_t blen, char *key,
                     size_t klen)
{
  if (hipObjS3ParseUrl(url, bucket, blen, key, klen) != hipObjS3Ok ||
      !key[0]) {
    tool_err("not an object URL: %s (expected s3://BUCKET/KEY)", url);
    return false;
  }
  return true;
}
