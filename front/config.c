/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auth/credentials.h"
#include "common/size.h"

/* ---- the options: one row each --------------------------------------- */

enum opt_kind {
  K_SECTION, /* a heading of the usage, no option */
  K_STR,     /* const char *, not empty */
  K_NICS,    /* const char *, a list of NIC names (hs_nic_list) */
  K_FLAG,    /* bool, set */
  K_UINT,    /* unsigned, in [min, max] */
  K_SIZE,    /* uint64_t, a size (K, M, G, T) in [min, max] */
  K_LISTEN,  /* listen_host and listen_port */
  K_PER_IP,  /* K_UINT that also says it was given */
  K_HELP,
  K_VERSION
};

/* An option: its name, its argument in the usage (NULL: none),
 * its help (lines apart by '\n'), its kind, its field, its range and its
 * default (K_UINT, K_SIZE: dflt; K_STR, K_LISTEN: dflt_str). The usage,
 * the defaults and the parsing come from this table alone. Positional. */
struct opt_row {
  const char *name, *arg, *help; /* the usage's */
  enum opt_kind kind;
  size_t off;
  uint64_t min, max, dflt;
  const char *dflt_str;
};

#define F(f) offsetof(struct hs_config, f)
#define UINT(n, a, f, lo, hi, d, h) {n, a, h, K_UINT, F(f), lo, hi, d, NULL}
#define SIZE(n, a, f, lo, hi, d, h) {n, a, h, K_SIZE, F(f), lo, hi, d, NULL}
#define STR(n, a, f, d, h) {n, a, h, K_STR, F(f), 0, 0, 0, d}
#define FLAG(n, f, h) {n, NULL, h, K_FLAG, F(f), 0, 0, 0, NULL}
#define SECTION(h) {NULL, NULL, h, K_SECTION, 0, 0, 0, 0, NULL}
#define NOMAX UINT64_MAX

static const struct opt_row rows[] = {
    SECTION("Listening and storage:"),
    {"listen", "ADDR:PORT",
     "address to bind (default 127.0.0.1:9000);\nport 0 picks a free port; "
     "[V6]:PORT for IPv6",
     K_LISTEN, 0, 0, 0, 0, "127.0.0.1:9000"},
    STR("data-dir", "DIR", data_dir, NULL,
        "keep objects in DIR (temporary file, fsync,\nrename); default: in "
        "memory"),
    STR("region", "NAME", auth.region, "us-east-1",
        "region reported by GetBucketLocation\n(default us-east-1)"),
    FLAG("random-etags", random_etags,
         "ETags unique per write instead of the MD5\nof the content, so "
         "uploads (HTTP and RDMA)\nare not limited by MD5 (about 0.5 GB/s a"
         "\nstream); Content-MD5 is still checked"),
    SECTION("Authentication (off unless both keys are given):"),
    STR("access-key", "KEY", auth.access_key, NULL,
        "verify AWS Signature V4 with this key pair;"),
    STR("secret-key", "SECRET", auth.secret_key, NULL,
        "also from HIPOBJ_TEST_SERVER_ACCESS_KEY and\n"
        "HIPOBJ_TEST_SERVER_SECRET_KEY"),
    STR("credentials", "FILE", credentials_file, NULL,
        "instead: several users, one \"ACCESS_KEY\nSECRET_KEY\" per line "
        "('#' comments); the\nfile must be the user's or root's and not\n"
        "readable by others"),
    FLAG("shared-buckets", shared_buckets,
         "with several users: they share every bucket\n(each reads, changes "
         "and deletes the\nothers' objects; no owners here); required\nfor "
         "a file of more than one user"),
    UINT("max-clock-skew", "SEC", auth.max_clock_skew_s, 0, 604800, 900,
         "reject signed requests dated further than SEC\nfrom now (default "
         "900; 0: do not check)"),
    SECTION("RDMA:"),
    {"nic", "NAME[,NAME]...",
     "RDMA devices to use, a rail each (default:\nas the library chooses); "
     "a new client\nconnection goes to a device on the client's\nsubnet; "
     "without a device, plain HTTP only",
     K_NICS, F(nic), 0, 0, 0, NULL},
    FLAG("decline-rdma", decline_rdma,
         "answer every RDMA request 501 (for fallback\ntests)"),
    FLAG("no-rdma", no_rdma, "do not open an RDMA device at all"),
    FLAG("rdma-answer-first", rdma_answer_first,
         "answer before the payload moves on kept\nconnections too (protocol "
         "version 2; default:\nthe payload first where the client asks)"),
    FLAG("rdma-no-pacing", rdma_no_pacing,
         "on a software device (Soft-RoCE), keep the\nwhole pipeline in flight "
         "even while the\ndevice retries (default: two MTUs in flight\n"
         "while its retry counter moves)"),
    UINT("rdma-timeout-ms", "MS", rdma_timeout_ms, 1, 3600000, 10000,
         "how long a client has to send \"ready\" and\nthe transfer to "
         "finish (default 10000)"),
    UINT("rdma-qps", "N", rdma_qps, 1, 4096, 16,
         "server QPs, i.e. concurrent RDMA transfers\n(default 16); more "
         "wait (--rdma-queue)"),
    UINT("rdma-queue", "N", rdma_queue, 0, 65536, 0,
         "with every QP busy, requests that wait for\none (default 4 x "
         "--rdma-qps); more get 503"),
    UINT("rdma-queue-wait-ms", "MS", rdma_queue_wait_ms, 1, 3600000, 10000,
         "how long a request waits for a QP (default\n10000); then 503"),
    UINT("rdma-moving", "N", rdma_moving, 0, 4096, 0,
         "transfers that move at once per NIC, at most\n--rdma-qps; more "
         "wait (--rdma-queue). 0 (the\ndefault): --rdma-qps, and on a "
         "software\ndevice (Soft-RoCE) 4 per CPU, shared by the\n"
         "software NICs"),
    SIZE("rdma-chunk-size", "SIZE", rdma_chunk_size, 4096, 1ull << 30,
         1u << 20, "bytes per work request (default 1M)"),
    UINT("rdma-depth", "N", rdma_depth, 1, 32, 4,
         "work requests in flight per transfer, READ\ndepth of a PUT "
         "included (default 4, at most\n32)"),
    UINT("rdma-max-connections", "N", rdma_max_connections, 1, 65536, 1024,
         "client connections kept between transfers\n(default 1024); the "
         "least recently used idle\none makes room, else 503"),
    UINT("rdma-idle-timeout-ms", "MS", rdma_idle_timeout_ms, 1, 86400000,
         60000, "close connections idle this long\n(default 60000)"),
    UINT("fault-skip-final", "N", fault_skip_final, 0, 1000000, 0,
         "testing: the next N RDMA transfers move their\ndata but never "
         "send the final message"),
    SECTION("Limits:"),
    SIZE("max-object-size", "SIZE", max_object_size, 1, NOMAX, 5ull << 30,
         "largest object or part (default 5G); more is\n413 EntityTooLarge"),
    SIZE("max-header-size", "SIZE", max_header_size, 1024, 1u << 20,
         16u << 10,
         "largest request line and headers (default\n16K); more is 431"),
    SIZE("max-xml-size", "SIZE", max_xml_size, 1024, NOMAX, 4u << 20,
         "largest XML request body (default 4M)"),
    SIZE("min-part-size", "SIZE", min_part_size, 0, NOMAX, 5u << 20,
         "smallest part but the last at Complete\n(default 5M, as S3)"),
    UINT("max-connections", "N", max_connections, 1, 1000000, 1024,
         "concurrent connections (default 1024)"),
    {"max-connections-per-ip", "N",
     "concurrent connections from one address\n(default: an eighth of "
     "--max-connections,\n128; 0: no limit)",
     K_PER_IP, F(max_connections_per_ip), 0, 1000000, 0, NULL},
    UINT("header-timeout", "SEC", header_timeout_s, 1, 86400, 30,
         "a request's line and headers must arrive\nwithin SEC, however "
         "slowly they trickle\n(default 30)"),
    UINT("idle-timeout", "SEC", idle_timeout_s, 0, 86400, 60,
         "close idle connections after SEC (default 60)"),
    UINT("max-buckets", "N", max_buckets, 0, 1000000, 1000, "(default 1000)"),
    UINT("max-uploads", "N", max_uploads, 0, 10000000, 10000,
         "multipart uploads in progress (default 10000)"),
    UINT("multipart-expiry", "SEC", multipart_expiry_s, 0, 30 * 86400, 86400,
         "abort uploads idle for SEC (default 86400;\n0: never)"),
    SIZE("max-memory", "SIZE", max_memory, 1 << 20, NOMAX, 0,
         "total of the memory store (default: half the\nphysical memory); "
         "more is 503 SlowDown"),
    SECTION("Observability:"),
    FLAG("log-requests", log_requests, "one line per request on stderr"),
    STR("stats-file", "PATH", stats_file, NULL,
        "write the counters of GET /_hipobj/stats to\nPATH every "
        "--stats-interval-ms (default 1000)\nand at exit"),
    UINT("stats-interval-ms", "MS", stats_interval_ms, 1, 3600000, 1000,
         NULL),
    SECTION(""),
    {"help", NULL, "this text", K_HELP, 0, 0, 0, 0, NULL},
    {"version", NULL, "the version", K_VERSION, 0, 0, 0, 0, NULL},
};
#undef F
#undef UINT
#undef SIZE
#undef STR
#undef FLAG
#undef SECTION

#define NROWS (sizeof rows / sizeof rows[0])

/* The usage column of the help text. */
#define HELP_COL 25

static void usage_row(FILE *f, const struct opt_row *r)
{
  if (r->kind == K_SECTION) {
    fprintf(f, "\n%s%s", r->help, r->help[0] ? "\n" : "");
    return;
  }
  if (!r->help)
    return; /* said in another row's help */
  int n = fprintf(f, "  --%s%s%s", r->name, r->arg ? " " : "",
                  r->arg ? r->arg : "");
  const char *h = r->help;
  /* the help from the column, or two spaces after a long option, or on
   * the next line after a longer one */
  int pad = n < HELP_COL ? HELP_COL - n : 2;
  if (n > HELP_COL + 2) {
    fputc('\n', f);
    pad = HELP_COL;
  }
  for (;;) {
    const char *nl = strchr(h, '\n');
    int len = nl ? (int)(nl - h) : (int)strlen(h);
    fprintf(f, "%*s%.*s\n", pad, "", len, h);
    if (!nl)
      break;
    h = nl + 1;
    pad = HELP_COL;
  }
}

void hs_config_usage(FILE *f)
{
  fputs("Usage: hipobj-test-server [OPTION]...\n"
        "A small S3 server (path-style buckets, plain HTTP/1.1) and the\n"
        "reference server of the hipObject RDMA protocol "
        "(docs/protocol.md).\n"
        "On start it prints one line on stdout:\n"
        "  listening on http://ADDR:PORT\n",
        f);
  for (size_t i = 0; i < NROWS; i++)
    usage_row(f, &rows[i]);
  fputs("\n"
        "SIZE takes K, M, G, T suffixes, also as Ki or KiB (all powers of\n"
        "1024). SIGINT and SIGTERM stop the server cleanly. Exit status: 0\n"
        "after a clean stop, 1 if it could not start, 2 for a usage "
        "error.\n",
        f);
}

bool hs_parse_listen(const char *s, char host[256], uint16_t *port)
{
  const char *colon;
  const char *h = s;
  size_t hl;
  if (s[0] == '[') {
    const char *close = strchr(s, ']');
    if (!close || close[1] != ':')
      return false;
    h = s + 1;
    hl = (size_t)(close - h);
    colon = close + 1;
  } else {
    colon = strrchr(s, ':');
    if (!colon)
      return false;
    hl = (size_t)(colon - s);
    if (memchr(s, ':', hl))
      return false; /* an IPv6 address needs brackets */
  }
  uint64_t p;
  if (hl >= 256 || !ho_parse_uint(colon + 1, 65535, &p))
    return false;
  if (hl == 0) {
    memcpy(host, "127.0.0.1", 10);
  } else {
    memcpy(host, h, hl);
    host[hl] = '\0';
  }
  *port = (uint16_t)p;
  return true;
}

/* ---- --nic's list ------------------------------------------------------ */

struct span {
  const char *p;
  size_t n;
};

/* Why the name `one` cannot join the n names before it; NULL if it can. */
static const char *nic_name_problem(const struct span *one,
                                    const struct span *before, int n)
{
  if (one->n == 0)
    return "an empty NIC name";
  if (one->n >= HS_NIC_NAME_MAX)
    return "a NIC name too long";
  for (int i = 0; i < n; i++)
    if (before[i].n == one->n && memcmp(before[i].p, one->p, one->n) == 0)
      return "a NIC named twice";
  if (n == HS_MAX_NICS)
    return "more NICs than the most a server opens";
  return NULL;
}

int hs_nic_list(const char *list, char names[][HS_NIC_NAME_MAX],
                struct hs_buf *why)
{
  struct span s[HS_MAX_NICS];
  int n = 0;
  for (const char *p = list;; p++) {
    const char *end = strchr(p, ',');
    struct span one = {p, end ? (size_t)(end - p) : strlen(p)};
    const char *problem = nic_name_problem(&one, s, n);
    if (problem) {
      if (why)
        hs_buf_printf(why, "%s (name %d of '%s'; at most %d names of at "
                           "most %d bytes, each once)",
                      problem, n + 1, list, HS_MAX_NICS, HS_NIC_NAME_MAX - 1);
      return -1;
    }
    s[n++] = one;
    if (!end)
      break;
    p = end;
  }
  for (int i = 0; names && i < n; i++) {
    memcpy(names[i], s[i].p, s[i].n);
    names[i][s[i].n] = '\0';
  }
  return n;
}

void hs_config_explain(const char *name, const char *arg, struct hs_buf *err)
{
  hs_buf_printf(err, "invalid value for --%s: ", name);
  if (strcmp(name, "nic") == 0 && hs_nic_list(arg, NULL, err) < 0)
    return;
  hs_buf_printf(err, "'%s'", arg);
}

static void *field(struct hs_config *c, const struct opt_row *r)
{
  return (char *)c + r->off;
}

static void set_default(struct hs_config *c, const struct opt_row *r)
{
  if (r->kind == K_UINT)
    *(unsigned *)field(c, r) = (unsigned)r->dflt;
  else if (r->kind == K_SIZE)
    *(uint64_t *)field(c, r) = r->dflt;
  else if (r->kind == K_STR || r->kind == K_NICS)
    *(const char **)field(c, r) = r->dflt_str;
  else if (r->kind == K_LISTEN)
    hs_parse_listen(r->dflt_str, c->listen_host, &c->listen_port);
}

static void defaults(struct hs_config *c)
{
  memset(c, 0, sizeof *c);
  for (size_t i = 0; i < NROWS; i++)
    set_default(c, &rows[i]);
}

unsigned hs_config_per_ip(const struct hs_config *c)
{
  if (c->max_connections_per_ip_set)
    return c->max_connections_per_ip;
  unsigned n = c->max_connections / 8;
  return n ? n : 1;
}

static bool apply_number(struct hs_config *c, const struct opt_row *r,
                         const char *arg)
{
  uint64_t v;
  bool ok = r->kind == K_SIZE ? ho_parse_size(arg, &v)
                              : ho_parse_uint(arg, r->max, &v);
  if (!ok || v < r->min || v > r->max)
    return false;
  if (r->kind == K_SIZE)
    *(uint64_t *)field(c, r) = v;
  else
    *(unsigned *)field(c, r) = (unsigned)v;
  return true;
}

static bool apply(struct hs_config *c, const struct opt_row *r,
                  const char *arg)
{
  switch (r->kind) {
  case K_LISTEN: return hs_parse_listen(arg, c->listen_host, &c->listen_port);
  case K_STR: *(const char **)field(c, r) = arg; return *arg != '\0';
  case K_NICS:
    *(const char **)field(c, r) = arg;
    return hs_nic_list(arg, NULL, NULL) > 0;
  case K_FLAG: *(bool *)field(c, r) = true; return true;
  case K_PER_IP: c->max_connections_per_ip_set = true; /* fall through */
  case K_UINT:
  case K_SIZE: return apply_number(c, r, arg);
  default: return false;
  }
}

static const struct opt_row *row_named(const char *name)
{
  for (size_t i = 0; i < NROWS; i++)
    if (rows[i].name && strcmp(rows[i].name, name) == 0)
      return &rows[i];
  return NULL;
}

void hs_config_defaults(struct hs_config *c) { defaults(c); }

enum hs_err hs_config_load_credentials(struct hs_config *c,
                                       struct hs_credentials **owned,
                                       struct hs_buf *why)
{
  *owned = NULL;
  if (!c->credentials_file)
    return HS_OK;
  enum hs_err err = hs_credentials_load(c->credentials_file, owned, why);
  c->auth.credentials = *owned;
  return err;
}

bool hs_config_set(struct hs_config *c, const char *name, const char *arg)
{
  const struct opt_row *r = row_named(name);
  return r && r->kind != K_HELP && r->kind != K_VERSION && apply(c, r, arg);
}

/* getopt_long's table, from the rows: val is the row's index + 256. */
static void long_options(struct option *o)
{
  for (size_t i = 0; i < NROWS; i++)
    if (rows[i].name)
      *o++ = (struct option){rows[i].name,
                             rows[i].arg ? required_argument : no_argument,
                             NULL, (int)i + 256};
  *o = (struct option){NULL, 0, NULL, 0};
}

/* One option from getopt_long: HS_CONFIG_OK to go on. */
static enum hs_config_result one_option(struct hs_config *c, int opt,
                                        char **argv, struct hs_buf *err)
{
  if (opt == '?' || opt == ':') {
    hs_buf_printf(err, "unknown option or missing value: %s",
                  argv[optind - 1]);
    return HS_CONFIG_ERROR;
  }
  const struct opt_row *r = &rows[opt - 256];
  if (r->kind == K_HELP)
    return HS_CONFIG_HELP;
  if (r->kind == K_VERSION)
    return HS_CONFIG_VERSION;
  if (!apply(c, r, optarg)) {
    hs_config_explain(r->name, optarg ? optarg : "", err);
    return HS_CONFIG_ERROR;
  }
  return HS_CONFIG_OK;
}

enum hs_config_result hs_config_parse(int argc, char **argv,
                                      struct hs_config *out,
                                      struct hs_buf *err)
{
  struct hs_config c;
  defaults(&c);
  struct option options[NROWS + 1];
  long_options(options);
  optind = 1;
  opterr = 0;
  int opt;
  while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
    enum hs_config_result res = one_option(&c, opt, argv, err);
    if (res != HS_CONFIG_OK)
      return res;
  }
  if (optind < argc) {
    hs_buf_printf(err, "unexpected argument: %s", argv[optind]);
    return HS_CONFIG_ERROR;
  }
  if (!c.auth.access_key && !c.credentials_file)
    c.auth.access_key = getenv("HIPOBJ_TEST_SERVER_ACCESS_KEY");
  if (!c.auth.secret_key && !c.credentials_file)
    c.auth.secret_key = getenv("HIPOBJ_TEST_SERVER_SECRET_KEY");
  if (c.auth.access_key && !*c.auth.access_key)
    c.auth.access_key = NULL;
  if (c.auth.secret_key && !*c.auth.secret_key)
    c.auth.secret_key = NULL;
  if (c.credentials_file && (c.auth.access_key || c.auth.secret_key)) {
    hs_buf_puts(err, "--credentials and --access-key/--secret-key exclude "
                     "each other");
    return HS_CONFIG_ERROR;
  }
  if (!c.auth.access_key != !c.auth.secret_key) {
    hs_buf_puts(err, "--access-key and --secret-key go together");
    return HS_CONFIG_ERROR;
  }
  if (c.auth.access_key && strlen(c.auth.access_key) > 128) {
    hs_buf_puts(err, "--access-key is longer than 128 characters");
    return HS_CONFIG_ERROR;
  }
  if (c.min_part_size > c.max_object_size) {
    hs_buf_puts(err, "--min-part-size is larger than --max-object-size");
    return HS_CONFIG_ERROR;
  }
  *out = c;
  return HS_CONFIG_OK;
}
