/* SPDX-License-Identifier: MIT */
/* hipobj-test-server: options, start-up, the wait for a signal, shutdown. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth/credentials.h"
#include "config.h"
#include "http.h"
#include "prologue.h"
#include "rdma.h"
#include "s3.h"
#include "stats.h"
#include "store/store.h"

#define PROG "hipobj-test-server"

static void write_stats(const struct hs_config *cfg, struct hs_stats *stats,
                        struct hs_store *store)
{
  if (!cfg->stats_file)
    return;
  struct hs_buf u;
  hs_buf_init(&u, 0);
  hs_store_usage_json(store, &u);
  if (u.failed || hs_stats_write_file(cfg->stats_file, stats, hs_buf_cstr(&u)))
    fprintf(stderr, PROG ": cannot write %s\n", cfg->stats_file);
  hs_buf_free(&u);
}

/* Blocks until SIGINT or SIGTERM, writing the stats file and expiring
 * abandoned multipart uploads meanwhile. */
static int wait_for_signal(const sigset_t *set, const struct hs_config *cfg,
                           struct hs_stats *stats, struct hs_store *store)
{
  unsigned ms = cfg->stats_file ? cfg->stats_interval_ms : 60000;
  if (ms > 60000)
    ms = 60000;
  struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
  for (;;) {
    int sig = sigtimedwait(set, NULL, &ts);
    if (sig == SIGINT || sig == SIGTERM)
      return sig;
    if (sig < 0 && errno != EAGAIN && errno != EINTR)
      return -1;
    write_stats(cfg, stats, store);
    hs_store_expire_uploads(store, (int64_t)time(NULL));
  }
}

static int run(const struct hs_config *cfg, const sigset_t *set)
{
  static struct hs_stats stats;
  hs_stats_init(&stats);
  struct hs_store_config sc = {.data_dir = cfg->data_dir,
                               .max_object_size = cfg->max_object_size,
                               .min_part_size = cfg->min_part_size,
                               .max_buckets = cfg->max_buckets,
                               .max_uploads = cfg->max_uploads,
                               .random_etags = cfg->random_etags,
                               .max_memory = cfg->max_memory,
                               .upload_expiry_s = cfg->multipart_expiry_s};
  struct hs_store *store = NULL;
  struct hs_rdma *rdma = NULL;
  struct hs_http *http = NULL;
  struct hs_buf why;
  hs_buf_init(&why, 4096);
  int status = 1;
  if (hs_store_open(&sc, &store)) {
    fprintf(stderr, PROG ": cannot open the store%s%s\n",
            cfg->data_dir ? " in " : "", cfg->data_dir ? cfg->data_dir : "");
    goto out;
  }
  if (!hs_prologue_rdma(PROG, cfg, &stats, &rdma, "serving"))
    goto out_store;
  struct hs_server srv = {
      .cfg = cfg, .store = store, .stats = &stats, .rdma = rdma};
  atomic_init(&srv.next_id, ((uint64_t)time(NULL) << 24) ^ 0x5eed);
  char bound[128];
  hs_buf_free(&why);
  struct hs_http_app app = {.cfg = cfg, .stats = &stats,
                            .ops = &hs_s3_http_ops, .ctx = &srv,
                            .server_name = PROG};
  if (hs_http_start(&app, &http, bound, sizeof bound, &why)) {
    fprintf(stderr, PROG ": %s\n", hs_buf_cstr(&why));
    goto out_rdma;
  }
  printf("listening on %s\n", bound);
  fflush(stdout);
  status = wait_for_signal(set, cfg, &stats, store) < 0 ? 1 : 0;
  hs_http_stop(http);
out_rdma:
  hs_rdma_close(rdma);
  write_stats(cfg, &stats, store);
out_store:
  hs_store_close(store);
out:
  hs_buf_free(&why);
  return status;
}

int main(int argc, char **argv)
{
  struct hs_config cfg;
  struct hs_buf err;
  hs_buf_init(&err, 4096);
  int rc = hs_prologue_config(hs_config_parse(argc, argv, &cfg, &err), PROG,
                              HIPOBJ_SERVER_VERSION, hs_config_usage, &err);
  struct hs_credentials *users = NULL;
  if (rc < 0 && !hs_prologue_credentials(PROG, &cfg, &users))
    rc = 1;
  if (rc >= 0) {
    hs_buf_free(&err);
    return rc;
  }
  /* No bucket owners here: several users share everything, which is said
   * explicitly; store identities are the gateway's. */
  const char *bad = NULL;
  if (hs_credentials_has_store(users))
    bad = "a store identity (a third and fourth field) is for "
          "hipobj-gateway";
  else if (hs_credentials_count(users) > 1 && !cfg.shared_buckets)
    bad = "its users would share every bucket (this server has no bucket "
          "owners): say --shared-buckets";
  if (bad) {
    fprintf(stderr, PROG ": --credentials %s: %s\n", cfg.credentials_file,
            bad);
    hs_buf_free(&err);
    hs_credentials_free(users);
    return 1;
  }
  hs_buf_free(&err);
  sigset_t set;
  hs_prologue_signals(&set);
  rc = run(&cfg, &set);
  hs_credentials_free(users);
  return rc;
}
