/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auth/credentials.h"
#include "common/size.h"

enum {
  OPT_LISTEN = 256, OPT_DATA_DIR, OPT_NIC, OPT_ACCESS_KEY, OPT_SECRET_KEY,
  OPT_REGION, OPT_STATS_FILE, OPT_STATS_INTERVAL, OPT_DECLINE_RDMA,
  OPT_NO_RDMA, OPT_LOG_REQUESTS, OPT_MAX_OBJECT, OPT_MAX_HEADER, OPT_MAX_XML,
  OPT_MIN_PART, OPT_MAX_CONN, OPT_IDLE, OPT_SKEW, OPT_MAX_BUCKETS,
  OPT_MAX_UPLOADS, OPT_RDMA_TIMEOUT, OPT_RDMA_QPS, OPT_RDMA_CHUNK,
  OPT_RDMA_DEPTH, OPT_RDMA_MAX_CONN, OPT_RDMA_IDLE, OPT_FAULT_SKIP_FINAL,
  OPT_RANDOM_ETAGS, OPT_MAX_MEMORY, OPT_MULTIPART_EXPIRY, OPT_MAX_CONN_PER_IP,
  OPT_CREDENTIALS, OPT_HEADER_TIMEOUT, OPT_SHARED_BUCKETS, OPT_HELP,
  OPT_VERSION
};

static const struct option options[] = {
    {"listen", required_argument, NULL, OPT_LISTEN},
    {"data-dir", required_argument, NULL, OPT_DATA_DIR},
    {"nic", required_argument, NULL, OPT_NIC},
    {"access-key", required_argument, NULL, OPT_ACCESS_KEY},
    {"secret-key", required_argument, NULL, OPT_SECRET_KEY},
    {"region", required_argument, NULL, OPT_REGION},
    {"stats-file", required_argument, NULL, OPT_STATS_FILE},
    {"stats-interval-ms", required_argument, NULL, OPT_STATS_INTERVAL},
    {"decline-rdma", no_argument, NULL, OPT_DECLINE_RDMA},
    {"no-rdma", no_argument, NULL, OPT_NO_RDMA},
    {"log-requests", no_argument, NULL, OPT_LOG_REQUESTS},
    {"max-object-size", required_argument, NULL, OPT_MAX_OBJECT},
    {"max-header-size", required_argument, NULL, OPT_MAX_HEADER},
    {"max-xml-size", required_argument, NULL, OPT_MAX_XML},
    {"min-part-size", required_argument, NULL, OPT_MIN_PART},
    {"max-connections", required_argument, NULL, OPT_MAX_CONN},
    {"idle-timeout", required_argument, NULL, OPT_IDLE},
    {"max-clock-skew", required_argument, NULL, OPT_SKEW},
    {"max-buckets", required_argument, NULL, OPT_MAX_BUCKETS},
    {"max-uploads", required_argument, NULL, OPT_MAX_UPLOADS},
    {"rdma-timeout-ms", required_argument, NULL, OPT_RDMA_TIMEOUT},
    {"rdma-qps", required_argument, NULL, OPT_RDMA_QPS},
    {"rdma-chunk-size", required_argument, NULL, OPT_RDMA_CHUNK},
    {"rdma-depth", required_argument, NULL, OPT_RDMA_DEPTH},
    {"rdma-max-connections", required_argument, NULL, OPT_RDMA_MAX_CONN},
    {"rdma-idle-timeout-ms", required_argument, NULL, OPT_RDMA_IDLE},
    {"fault-skip-final", required_argument, NULL, OPT_FAULT_SKIP_FINAL},
    {"random-etags", no_argument, NULL, OPT_RANDOM_ETAGS},
    {"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
    {"multipart-expiry", required_argument, NULL, OPT_MULTIPART_EXPIRY},
    {"max-connections-per-ip", required_argument, NULL, OPT_MAX_CONN_PER_IP},
    {"credentials", required_argument, NULL, OPT_CREDENTIALS},
    {"header-timeout", required_argument, NULL, OPT_HEADER_TIMEOUT},
    {"shared-buckets", no_argument, NULL, OPT_SHARED_BUCKETS},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0}};

void hs_config_usage(FILE *f)
{
  fputs(
      "Usage: hipobj-test-server [OPTION]...\n"
      "A small S3 server (path-style buckets, plain HTTP/1.1) and the\n"
      "reference server of the hipObject RDMA protocol (docs/protocol.md).\n"
      "On start it prints one line on stdout:\n"
      "  listening on http://ADDR:PORT\n"
      "\n"
      "Listening and storage:\n"
      "  --listen ADDR:PORT     address to bind (default 127.0.0.1:9000);\n"
      "                         port 0 picks a free port; [V6]:PORT for IPv6\n"
      "  --data-dir DIR         keep objects in DIR (temporary file, fsync,\n"
      "                         rename); default: in memory\n"
      "  --region NAME          region reported by GetBucketLocation\n"
      "                         (default us-east-1)\n"
      "  --random-etags         ETags unique per write instead of the MD5\n"
      "                         of the content, so uploads (HTTP and RDMA)\n"
      "                         are not limited by MD5 (about 0.5 GB/s a\n"
      "                         stream); Content-MD5 is still checked\n"
      "\n"
      "Authentication (off unless both keys are given):\n"
      "  --access-key KEY       verify AWS Signature V4 with this key pair;\n"
      "  --secret-key SECRET    also from HIPOBJ_TEST_SERVER_ACCESS_KEY and\n"
      "                         HIPOBJ_TEST_SERVER_SECRET_KEY\n"
      "  --credentials FILE     instead: several users, one \"ACCESS_KEY\n"
      "                         SECRET_KEY\" per line ('#' comments); the\n"
      "                         file must be the user's or root's and not\n"
      "                         readable by others\n"
      "  --shared-buckets       with several users: they share every bucket\n"
      "                         (each reads, changes and deletes the\n"
      "                         others' objects; no owners here); required\n"
      "                         for a file of more than one user\n"
      "  --max-clock-skew SEC   reject signed requests dated further than SEC\n"
      "                         from now (default 900; 0: do not check)\n"
      "\n"
      "RDMA:\n"
      "  --nic NAME             RDMA device to use (default: as the library\n"
      "                         chooses); without a device, plain HTTP only\n"
      "  --decline-rdma         answer every RDMA request 501 (for fallback\n"
      "                         tests)\n"
      "  --no-rdma              do not open an RDMA device at all\n"
      "  --rdma-timeout-ms MS   how long a client has to send \"ready\" and\n"
      "                         the transfer to finish (default 10000)\n"
      "  --rdma-qps N           server QPs, i.e. concurrent RDMA transfers\n"
      "                         (default 16); more get 503\n"
      "  --rdma-chunk-size SIZE bytes per work request (default 1M)\n"
      "  --rdma-depth N         work requests in flight per transfer, READ\n"
      "                         depth of a PUT included (default 4, at most\n"
      "                         32)\n"
      "  --rdma-max-connections N  client connections kept between transfers\n"
      "                         (default 1024); the least recently used idle\n"
      "                         one makes room, else 503\n"
      "  --rdma-idle-timeout-ms MS  close connections idle this long\n"
      "                         (default 60000)\n"
      "  --fault-skip-final N   testing: the next N RDMA transfers move their\n"
      "                         data but never send the final message\n"
      "\n"
      "Limits:\n"
      "  --max-object-size SIZE largest object or part (default 5G); more is\n"
      "                         413 EntityTooLarge\n"
      "  --max-header-size SIZE largest request line and headers (default\n"
      "                         16K); more is 431\n"
      "  --max-xml-size SIZE    largest XML request body (default 4M)\n"
      "  --min-part-size SIZE   smallest part but the last at Complete\n"
      "                         (default 5M, as S3)\n"
      "  --max-connections N    concurrent connections (default 1024)\n"
      "  --max-connections-per-ip N\n"
      "                         concurrent connections from one address\n"
      "                         (default: an eighth of --max-connections,\n"
      "                         128; 0: no limit)\n"
      "  --header-timeout SEC   a request's line and headers must arrive\n"
      "                         within SEC, however slowly they trickle\n"
      "                         (default 30)\n"
      "  --idle-timeout SEC     close idle connections after SEC (default 60)\n"
      "  --max-buckets N        (default 1000)\n"
      "  --max-uploads N        multipart uploads in progress (default 10000)\n"
      "  --multipart-expiry SEC abort uploads idle for SEC (default 86400;\n"
      "                         0: never)\n"
      "  --max-memory SIZE      total of the memory store (default: half the\n"
      "                         physical memory); more is 503 SlowDown\n"
      "\n"
      "Observability:\n"
      "  --log-requests         one line per request on stderr\n"
      "  --stats-file PATH      write the counters of GET /_hipobj/stats to\n"
      "                         PATH every --stats-interval-ms (default 1000)\n"
      "                         and at exit\n"
      "\n"
      "  --help                 this text\n"
      "  --version              the version\n"
      "\n"
      "SIZE takes K, M, G, T suffixes, also as Ki or KiB (all powers of\n"
      "1024). SIGINT and SIGTERM stop the server cleanly. Exit status: 0\n"
      "after a clean stop, 1 if it could not start, 2 for a usage error.\n",
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

static bool parse_uint(const char *s, unsigned max, unsigned *out)
{
  uint64_t v;
  if (!ho_parse_uint(s, max, &v))
    return false;
  *out = (unsigned)v;
  return true;
}

static void defaults(struct hs_config *c)
{
  memset(c, 0, sizeof *c);
  memcpy(c->listen_host, "127.0.0.1", 10);
  c->listen_port = 9000;
  c->auth.region = "us-east-1";
  c->stats_interval_ms = 1000;
  c->max_object_size = 5ull << 30;
  c->max_header_size = 16u << 10;
  c->max_xml_size = 4u << 20;
  c->min_part_size = 5u << 20;
  c->max_connections = 1024;
  c->idle_timeout_s = 60;
  c->auth.max_clock_skew_s = 900;
  c->max_buckets = 1000;
  c->max_uploads = 10000;
  c->rdma_timeout_ms = 10000;
  c->rdma_qps = 16;
  c->rdma_chunk_size = 1u << 20;
  c->rdma_depth = 4;
  c->rdma_max_connections = 1024;
  c->rdma_idle_timeout_ms = 60000;
  c->multipart_expiry_s = 86400;
  c->max_connections_per_ip = 0; /* hs_config_per_ip(): an eighth */
  c->header_timeout_s = 30;
}

unsigned hs_config_per_ip(const struct hs_config *c)
{
  if (c->max_connections_per_ip_set)
    return c->max_connections_per_ip;
  unsigned n = c->max_connections / 8;
  return n ? n : 1;
}

static bool set_size(const char *arg, uint64_t min, uint64_t *out)
{
  uint64_t v;
  if (!ho_parse_size(arg, &v) || v < min)
    return false;
  *out = v;
  return true;
}

static bool apply(struct hs_config *c, int opt, const char *arg)
{
  switch (opt) {
  case OPT_LISTEN: return hs_parse_listen(arg, c->listen_host, &c->listen_port);
  case OPT_DATA_DIR: c->data_dir = arg; return *arg != '\0';
  case OPT_NIC: c->nic = arg; return *arg != '\0';
  case OPT_ACCESS_KEY: c->auth.access_key = arg; return *arg != '\0';
  case OPT_SECRET_KEY: c->auth.secret_key = arg; return *arg != '\0';
  case OPT_CREDENTIALS: c->credentials_file = arg; return *arg != '\0';
  case OPT_REGION: c->auth.region = arg; return *arg != '\0';
  case OPT_STATS_FILE: c->stats_file = arg; return *arg != '\0';
  case OPT_STATS_INTERVAL:
    return parse_uint(arg, 3600000, &c->stats_interval_ms) &&
           c->stats_interval_ms > 0;
  case OPT_DECLINE_RDMA: c->decline_rdma = true; return true;
  case OPT_NO_RDMA: c->no_rdma = true; return true;
  case OPT_LOG_REQUESTS: c->log_requests = true; return true;
  case OPT_MAX_OBJECT: return set_size(arg, 1, &c->max_object_size);
  case OPT_MAX_HEADER:
    return set_size(arg, 1024, &c->max_header_size) &&
           c->max_header_size <= (1u << 20);
  case OPT_MAX_XML: return set_size(arg, 1024, &c->max_xml_size);
  case OPT_MIN_PART: return set_size(arg, 0, &c->min_part_size);
  case OPT_MAX_CONN:
    return parse_uint(arg, 1000000, &c->max_connections) &&
           c->max_connections > 0;
  case OPT_IDLE: return parse_uint(arg, 86400, &c->idle_timeout_s);
  case OPT_SKEW: return parse_uint(arg, 604800, &c->auth.max_clock_skew_s);
  case OPT_MAX_BUCKETS: return parse_uint(arg, 1000000, &c->max_buckets);
  case OPT_MAX_UPLOADS: return parse_uint(arg, 10000000, &c->max_uploads);
  case OPT_RDMA_TIMEOUT:
    return parse_uint(arg, 3600000, &c->rdma_timeout_ms) &&
           c->rdma_timeout_ms > 0;
  case OPT_RDMA_QPS:
    return parse_uint(arg, 4096, &c->rdma_qps) && c->rdma_qps > 0;
  case OPT_RANDOM_ETAGS: c->random_etags = true; return true;
  case OPT_FAULT_SKIP_FINAL:
    return parse_uint(arg, 1000000, &c->fault_skip_final);
  case OPT_RDMA_MAX_CONN:
    return parse_uint(arg, 65536, &c->rdma_max_connections) &&
           c->rdma_max_connections > 0;
  case OPT_RDMA_IDLE:
    return parse_uint(arg, 86400000, &c->rdma_idle_timeout_ms) &&
           c->rdma_idle_timeout_ms > 0;
  case OPT_RDMA_DEPTH:
    return parse_uint(arg, 32, &c->rdma_depth) && c->rdma_depth > 0;
  case OPT_MAX_MEMORY: return set_size(arg, 1 << 20, &c->max_memory);
  case OPT_MULTIPART_EXPIRY:
    return parse_uint(arg, 30 * 86400, &c->multipart_expiry_s);
  case OPT_MAX_CONN_PER_IP:
    c->max_connections_per_ip_set = true;
    return parse_uint(arg, 1000000, &c->max_connections_per_ip);
  case OPT_SHARED_BUCKETS: c->shared_buckets = true; return true;
  case OPT_HEADER_TIMEOUT:
    return parse_uint(arg, 86400, &c->header_timeout_s) &&
           c->header_timeout_s > 0;
  case OPT_RDMA_CHUNK:
    return set_size(arg, 4096, &c->rdma_chunk_size) &&
           c->rdma_chunk_size <= (1ull << 30);
  default: return false;
  }
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
  for (const struct option *o = options; o->name; o++)
    if (strcmp(o->name, name) == 0)
      return o->val != OPT_HELP && o->val != OPT_VERSION &&
             apply(c, o->val, arg);
  return false;
}

enum hs_config_result hs_config_parse(int argc, char **argv,
                                      struct hs_config *out,
                                      struct hs_buf *err)
{
  struct hs_config c;
  defaults(&c);
  optind = 1;
  opterr = 0;
  int opt;
  while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
    if (opt == OPT_HELP)
      return HS_CONFIG_HELP;
    if (opt == OPT_VERSION)
      return HS_CONFIG_VERSION;
    if (opt == '?' || opt == ':') {
      hs_buf_printf(err, "unknown option or missing value: %s",
                    argv[optind - 1]);
      return HS_CONFIG_ERROR;
    }
    if (!apply(&c, opt, optarg)) {
      hs_buf_printf(err, "invalid value for --%s: '%s'",
                    options[opt - OPT_LISTEN].name, optarg ? optarg : "");
      return HS_CONFIG_ERROR;
    }
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
