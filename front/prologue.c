/* SPDX-License-Identifier: MIT */
#include "prologue.h"

#include <pthread.h>

int hs_prologue_config(enum hs_config_result r, const char *prog,
                       const char *version, void (*usage)(FILE *f),
                       const struct hs_buf *err)
{
  switch (r) {
  case HS_CONFIG_HELP:
    usage(stdout);
    return 0;
  case HS_CONFIG_VERSION:
    printf("%s %s\n", prog, version);
    return 0;
  case HS_CONFIG_ERROR:
    fprintf(stderr, "%s: %s\nTry '%s --help'.\n", prog, hs_buf_cstr(err),
            prog);
    return 2;
  default:
    return -1;
  }
}

bool hs_prologue_credentials(const char *prog, struct hs_config *c,
                             struct hs_credentials **users)
{
  struct hs_buf why;
  hs_buf_init(&why, 4096);
  bool ok = hs_config_load_credentials(c, users, &why) == HS_OK;
  if (!ok)
    fprintf(stderr, "%s: --credentials %s: %s\n", prog, c->credentials_file,
            hs_buf_cstr(&why));
  hs_buf_free(&why);
  return ok;
}

bool hs_prologue_rdma(const char *prog, const struct hs_config *cfg,
                      struct hs_stats *stats, struct hs_rdma **out,
                      const char *plain)
{
  struct hs_buf why;
  hs_buf_init(&why, 4096);
  bool ok = hs_rdma_open(cfg, stats, out, &why) == HS_OK;
  if (!ok)
    fprintf(stderr, "%s: cannot use RDMA device %s: %s\n", prog,
            cfg->nic ? cfg->nic : "(default)", hs_buf_cstr(&why));
  else if (!*out)
    fprintf(stderr,
            "%s: RDMA unavailable (%s): %s plain HTTP only; requests with "
            "x-amz-rdma-token get 501\n",
            prog, hs_buf_cstr(&why), plain);
  else
    fprintf(stderr, "%s: RDMA on %s\n", prog, hs_rdma_nic(*out));
  hs_buf_free(&why);
  return ok;
}

void hs_prologue_signals(sigset_t *set)
{
  sigemptyset(set);
  sigaddset(set, SIGINT);
  sigaddset(set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, set, NULL);
  signal(SIGPIPE, SIG_IGN);
}
