/* SPDX-License-Identifier: MIT */
/* hipobj-gateway: options, start-up, the wait for a signal, shutdown. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "auth/credentials.h"
#include "gw_config.h"
#include "http.h"
#include "prologue.h"
#include "rdma.h"

#define PROG "hipobj-gateway"

static int serve(const struct gw_config *cfg, struct gw_server *gw,
                 const sigset_t *set)
{
  struct hs_http_app app = {.cfg = &cfg->front, .stats = gw->stats,
                            .ops = &gw_http_ops, .ctx = gw,
                            .server_name = PROG};
  struct hs_http *http = NULL;
  struct hs_buf why;
  hs_buf_init(&why, 4096);
  char bound[128];
  if (hs_http_start(&app, &http, bound, sizeof bound, &why)) {
    fprintf(stderr, PROG ": %s\n", hs_buf_cstr(&why));
    hs_buf_free(&why);
    return 1;
  }
  hs_buf_free(&why);
  printf("listening on %s\n", bound);
  fflush(stdout);
  int sig;
  while (sigwait(set, &sig) == 0 && sig != SIGINT && sig != SIGTERM)
    ;
  hs_http_stop(http);
  return 0;
}

static int run(const struct gw_config *cfg, const sigset_t *set)
{
  static struct hs_stats stats;
  hs_stats_init(&stats);
  struct gw_server gw = {.cfg = cfg, .stats = &stats};
  atomic_init(&gw.next_id, ((uint64_t)time(NULL) << 24) ^ 0x6a7e);
  atomic_init(&gw.backend_failures, 0);
  struct hs_buf why;
  hs_buf_init(&why, 4096);
  int status = 1;
  if (gw_backend_open(&cfg->backend, &gw.be, &why)) {
    fprintf(stderr, PROG ": %s\n", hs_buf_cstr(&why));
    goto out;
  }
  if (!hs_prologue_rdma(PROG, &cfg->front, &stats, &gw.rdma, "forwarding"))
    goto out_backend;
  fprintf(stderr, PROG ": backend %s\n", cfg->backend.url);
  status = serve(cfg, &gw, set);
  hs_rdma_close(gw.rdma);
out_backend:
  gw_backend_close(gw.be);
out:
  hs_buf_free(&why);
  return status;
}

int main(int argc, char **argv)
{
  struct gw_config cfg;
  struct hs_buf err;
  hs_buf_init(&err, 4096);
  int rc = hs_prologue_config(gw_config_parse(argc, argv, &cfg, &err), PROG,
                              HIPOBJ_GATEWAY_VERSION, gw_config_usage, &err);
  struct hs_credentials *users = NULL;
  if (rc < 0 && !hs_prologue_credentials(PROG, &cfg.front, &users))
    rc = 1;
  if (rc >= 0) {
    hs_buf_free(&err);
    return rc;
  }
  /* Users apart: each acts at the store as its own identity, so that the
   * store's own users and policies isolate them; sharing one is said
   * explicitly. */
  if (users && !cfg.shared_store_identity &&
      hs_credentials_shared(users, cfg.backend.access_key, &err)) {
    fprintf(stderr,
            PROG ": --credentials %s: %s: each user would read, change and "
                 "delete what the others stored. Give each line its own "
                 "store identity (ACCESS SECRET STORE_ACCESS STORE_SECRET), "
                 "or say --shared-store-identity\n",
            cfg.front.credentials_file, hs_buf_cstr(&err));
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
