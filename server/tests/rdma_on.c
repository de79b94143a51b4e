/* SPDX-License-Identifier: MIT */
/* hs_rdma_open_on(): the test server's RDMA path on a given platform (the
 * simulated fabric), through the server library's internal constructor.
 * Only the tests link it; the program opens the library with
 * hipObjServerOpen(). */
#include "rdma.h"
#include "server_internal.h"

static hipObjServerStatus_t open_on(const void *ctx,
                                    const hipObjServerConfig_t *cfg,
                                    hipObjServer_t **out)
{
  return ho_server_open_on(ctx, cfg, out);
}

enum hs_err hs_rdma_open_on(const struct ho_platform *plat,
                            const struct hs_config *cfg,
                            struct hs_stats *stats, struct hs_rdma **out,
                            struct hs_buf *why)
{
  return hs_rdma_open_with(open_on, plat, cfg, stats, out, why);
}
