/* SPDX-License-Identifier: MIT */
/* Until the protocol engine (engine/) is in place the server has no RDMA:
 * every token is answered 501. */
#include "rdma.h"

enum hs_err hs_rdma_open(const struct hs_config *cfg, struct hs_stats *stats,
                         struct hs_store *store, struct hs_rdma **out,
                         struct hs_buf *why)
{
  *out = NULL;
  hs_buf_puts(why, cfg->no_rdma ? "disabled by --no-rdma"
                                : "this build has no RDMA engine");
  return HS_OK;
}

void hs_rdma_close(struct hs_rdma *r) {}

const char *hs_rdma_nic(const struct hs_rdma *r) { return ""; }
