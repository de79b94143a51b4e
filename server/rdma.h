/* SPDX-License-Identifier: MIT */
/* The server's side of the RDMA path, between the S3 layer and the protocol
 * engine (engine/): opening the engine (or finding that RDMA is not
 * available), and handing it requests that carry a token. */
#ifndef HS_RDMA_H
#define HS_RDMA_H

#include <stdbool.h>

#include "buf.h"
#include "config.h"
#include "err.h"
#include "stats.h"
#include "store.h"

struct hs_rdma;

/* Opens the engine on cfg->nic (or the NIC the library would choose).
 * *out is NULL, with a one-line reason in why, when RDMA is not available
 * here (no libibverbs, no device, no active port): the server then serves
 * plain HTTP only. Errors only for --nic naming a device that cannot be
 * used. */
enum hs_err hs_rdma_open(const struct hs_config *cfg, struct hs_stats *stats,
                         struct hs_store *store, struct hs_rdma **out,
                         struct hs_buf *why);
/* Accepts NULL. Waits for the transfers in flight, or times them out. */
void hs_rdma_close(struct hs_rdma *r);
/* The NIC in use, for the startup line. */
const char *hs_rdma_nic(const struct hs_rdma *r);

#endif
