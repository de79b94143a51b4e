/* SPDX-License-Identifier: MIT */
/* hipobj-gateway's command line: its own options (the backend, the
 * clients' credentials) and a set of hipobj-test-server's, validated by
 * the server's own parser (hs_config_set). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "common/size.h"
#include "gw_config.h"

enum {
  OPT_BACKEND = 256, OPT_BACKEND_AK, OPT_BACKEND_SK, OPT_BACKEND_REGION,
  OPT_BACKEND_TIMEOUT, OPT_PUBLIC_STATS, OPT_SHARED_STORE_ID, OPT_HELP, OPT_VERSION, OPT_SHARED
};

/* The server's options the gateway takes, by their server names. */
static const struct option options[] = {
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"backend-access-key", required_argument, NULL, OPT_BACKEND_AK},
    {"backend-secret-key", required_argument, NULL, OPT_BACKEND_SK},
    {"backend-region", required_argument, NULL, OPT_BACKEND_REGION},
    {"backend-timeout", required_argument, NULL, OPT_BACKEND_TIMEOUT},
    {"public-stats", no_argument, NULL, OPT_PUBLIC_STATS},
    {"shared-store-identity", no_argument, NULL, OPT_SHARED_STORE_ID},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {"listen", required_argument, NULL, OPT_SHARED},
    {"access-key", required_argument, NULL, OPT_SHARED},
    {"secret-key", required_argument, NULL, OPT_SHARED},
    {"credentials", required_argument, NULL, OPT_SHARED},
    {"region", required_argument, NULL, OPT_SHARED},
    {"max-clock-skew", required_argument, NULL, OPT_SHARED},
    {"nic", required_argument, NULL, OPT_SHARED},
    {"no-rdma", no_argument, NULL, OPT_SHARED},
    {"rdma-timeout-ms", required_argument, NULL, OPT_SHARED},
    {"rdma-qps", required_argument, NULL, OPT_SHARED},
    {"rdma-queue", required_argument, NULL, OPT_SHARED},
    {"rdma-queue-wait-ms", required_argument, NULL, OPT_SHARED},
    {"rdma-moving", required_argument, NULL, OPT_SHARED},
    {"rdma-chunk-size", required_argument, NULL, OPT_SHARED},
    {"rdma-depth", required_argument, NULL, OPT_SHARED},
    {"rdma-no-pacing", no_argument, NULL, OPT_SHARED},
    {"rdma-max-connections", required_argument, NULL, OPT_SHARED},
    {"rdma-idle-timeout-ms", required_argument, NULL, OPT_SHARED},
    {"max-header-size", required_argument, NULL, OPT_SHARED},
    {"max-connections", required_argument, NULL, OPT_SHARED},
    {"max-connections-per-ip", required_argument, NULL, OPT_SHARED},
    {"idle-timeout", required_argument, NULL, OPT_SHARED},
    {"header-timeout", required_argument, NULL, OPT_SHARED},
    {"log-requests", no_argument, NULL, OPT_SHARED},
    {NULL, 0, NULL, 0}};

void gw_config_usage(FILE *f)
{
  fputs(
      "Usage: hipobj-gateway --backend URL --backend-access-key KEY\n"
      "         --backend-secret-key SECRET --access-key KEY --secret-key\n"
      "         SECRET [OPTION]...\n"
      "An S3 endpoint in front of an existing S3 store (Ceph RGW, MinIO...)\n"
      "that adds hipObject's RDMA data path (docs/gateway.md). Requests\n"
      "without x-amz-rdma-token are forwarded to the store, re-signed with\n"
      "the backend's credentials, bodies streamed both ways; GetObject,\n"
      "PutObject and UploadPart with a token move their payload between\n"
      "the store and the client's buffer by RDMA. On start it prints one\n"
      "line on stdout:\n"
      "  listening on http://ADDR:PORT\n"
      "\n"
      "The store:\n"
      "  --backend URL          http://HOST[:PORT] of the S3 store\n"
      "  --backend-access-key KEY, --backend-secret-key SECRET\n"
      "                         the gateway's credentials at the store; also\n"
      "                         from HIPOBJ_GATEWAY_BACKEND_ACCESS_KEY and\n"
      "                         HIPOBJ_GATEWAY_BACKEND_SECRET_KEY\n"
      "  --backend-region NAME  the store's signing region (us-east-1)\n"
      "  --backend-timeout SEC  a store silent this long has failed (60)\n"
      "\n"
      "Clients (AWS Signature V4, required):\n"
      "  --access-key KEY, --secret-key SECRET\n"
      "                         the key pair clients sign with; also from\n"
      "                         HIPOBJ_GATEWAY_ACCESS_KEY and\n"
      "                         HIPOBJ_GATEWAY_SECRET_KEY\n"
      "  --credentials FILE     instead: several users, one \"ACCESS_KEY\n"
      "                         SECRET_KEY [STORE_ACCESS_KEY STORE_SECRET]\"\n"
      "                         per line ('#' comments): each user acts at\n"
      "                         the store as its own store identity (else\n"
      "                         as the --backend keys); the file must be\n"
      "                         the user's or root's, unreadable by others\n"
      "  --shared-store-identity\n"
      "                         accept a file in which users act as one\n"
      "                         store identity: each may then read, change\n"
      "                         and delete what the others stored\n"
      "  --region NAME          the clients' signing region (us-east-1)\n"
      "  --max-clock-skew SEC   (default 900; 0: not checked)\n"
      "\n"
      "As hipobj-test-server (see its --help): --listen ADDR:PORT (default\n"
      "127.0.0.1:9000), --nic NAME[,NAME]... (a rail each), --no-rdma,\n"
      "--rdma-timeout-ms MS, --rdma-qps N, --rdma-queue N,\n"
      "--rdma-queue-wait-ms MS, --rdma-moving N, --rdma-chunk-size SIZE,\n"
      "--rdma-depth N, --rdma-no-pacing, "
      "--rdma-max-connections N, --rdma-idle-timeout-ms MS,\n"
      "--max-header-size SIZE, --max-connections N,\n"
      "--max-connections-per-ip N, --idle-timeout SEC, --header-timeout\n"
      "SEC, --log-requests.\n"
      "\n"
      "  --public-stats         serve GET /_hipobj/stats to any address\n"
      "                         (default: to this host's loopback only; the\n"
      "                         counters tell who uses the gateway and how)\n"
      "  --help                 this text\n"
      "  --version              the version\n"
      "\n"
      "SIGINT and SIGTERM stop it cleanly. Exit status: 0 after a clean\n"
      "stop, 1 if it could not start, 2 for a usage error.\n",
      f);
}

static const char *env_or(const char *v, const char *name)
{
  if (!v)
    v = getenv(name);
  return v && *v ? v : NULL;
}

static bool apply(struct gw_config *c, int opt, const char *name,
                  const char *arg)
{
  uint64_t v;
  switch (opt) {
  case OPT_BACKEND: c->backend.url = arg; return *arg != '\0';
  case OPT_BACKEND_AK: c->backend.access_key = arg; return *arg != '\0';
  case OPT_BACKEND_SK: c->backend.secret_key = arg; return *arg != '\0';
  case OPT_BACKEND_REGION: c->backend.region = arg; return *arg != '\0';
  case OPT_PUBLIC_STATS: c->public_stats = true; return true;
  case OPT_SHARED_STORE_ID: c->shared_store_identity = true; return true;
  case OPT_BACKEND_TIMEOUT:
    if (!ho_parse_uint(arg, 86400, &v) || v == 0)
      return false;
    c->backend.stall_timeout_s = (unsigned)v;
    return true;
  default: return hs_config_set(&c->front, name, arg);
  }
}

static enum hs_config_result check(struct gw_config *c, struct hs_buf *err)
{
  struct hs_config *f = &c->front;
  if (!f->credentials_file) {
    f->auth.access_key = env_or(f->auth.access_key, "HIPOBJ_GATEWAY_ACCESS_KEY");
    f->auth.secret_key = env_or(f->auth.secret_key, "HIPOBJ_GATEWAY_SECRET_KEY");
  }
  c->backend.access_key =
      env_or(c->backend.access_key, "HIPOBJ_GATEWAY_BACKEND_ACCESS_KEY");
  c->backend.secret_key =
      env_or(c->backend.secret_key, "HIPOBJ_GATEWAY_BACKEND_SECRET_KEY");
  const char *why = NULL;
  if (!c->backend.url)
    why = "--backend is required";
  else if (f->credentials_file && (f->auth.access_key || f->auth.secret_key))
    why = "--credentials and --access-key/--secret-key exclude each other";
  else if (!f->credentials_file && (!f->auth.access_key || !f->auth.secret_key))
    why = "--access-key and --secret-key (or --credentials) are required: "
          "the gateway signs every request it forwards, so it must know "
          "who asks";
  else if (f->auth.access_key && strlen(f->auth.access_key) > 128)
    why = "--access-key is longer than 128 characters";
  else if (!c->backend.access_key != !c->backend.secret_key)
    why = "--backend-access-key and --backend-secret-key go together";
  if (why) {
    hs_buf_puts(err, why);
    return HS_CONFIG_ERROR;
  }
  return HS_CONFIG_OK;
}

enum hs_config_result gw_config_parse(int argc, char **argv,
                                      struct gw_config *out,
                                      struct hs_buf *err)
{
  struct gw_config c;
  memset(&c, 0, sizeof c);
  hs_config_defaults(&c.front);
  c.backend.region = "us-east-1";
  optind = 1;
  opterr = 0;
  int opt, idx = -1;
  while ((opt = getopt_long(argc, argv, "", options, &idx)) != -1) {
    if (opt == OPT_HELP)
      return HS_CONFIG_HELP;
    if (opt == OPT_VERSION)
      return HS_CONFIG_VERSION;
    if (opt == '?' || opt == ':' || idx < 0) {
      hs_buf_printf(err, "unknown option or missing value: %s",
                    argv[optind - 1]);
      return HS_CONFIG_ERROR;
    }
    const char *name = options[idx].name;
    if (!apply(&c, opt, name, optarg ? optarg : "")) {
      hs_config_explain(name, optarg ? optarg : "", err);
      return HS_CONFIG_ERROR;
    }
    idx = -1;
  }
  if (optind < argc) {
    hs_buf_printf(err, "unexpected argument: %s", argv[optind]);
    return HS_CONFIG_ERROR;
  }
  enum hs_config_result r = check(&c, err);
  if (r == HS_CONFIG_OK)
    *out = c;
  return r;
}
