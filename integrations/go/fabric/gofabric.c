/* SPDX-License-Identifier: MIT */
/* Test only: libhipobj_gofabric, what the Go packages link under the
 * hipobj_fabric build tag. It holds the whole client library (every
 * hipObj* function) and the server library (hipObjServer*) built on the
 * simulated fabric of tests/fakes, plus the S3 glue tests' in-process S3
 * responder (integrations/curl/tests/fabric_s3.c) on the reference engine,
 * so the Go bindings and the MinIO bridge run RDMA transfers end to end
 * in one process, with no RDMA device. Never installed. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gofabric.h"

#include "fabric_s3.h"
#include "fakes/world.h"
#include "server_internal.h"

static struct {
  struct world w;
  int world_up;
  struct ho_engine *engine;
  struct fabric_s3 *s3;
} fx;

/* The fabric with both NICs, and the client instance on its client NIC. */
static int world_up(void)
{
  if (fx.world_up)
    return 0;
  if (world_create(&fx.w, NULL) != 0)
    return -1;
  if (world_init(&fx.w, WORLD_CLIENT_NIC) != hipObjSuccess)
    return -1;
  fx.world_up = 1;
  return 0;
}

/* Starts the S3 responder; its endpoint ("http://127.0.0.1:PORT") is
 * written to out. Returns 0, or -1. */
GOFABRIC_API int hipObjGoFabricStart(char *out, size_t outLen)
{
  struct ho_engine_config ec = {0};
  int port = 0;
  if (!fx.s3) {
    if (world_up() != 0)
      return -1;
    ec.nic = WORLD_SERVER_NIC;
    ec.chunk_size = 64 * 1024;
    ec.ready_timeout_ms = 300;
    ec.rdma_timeout_ms = 2000;
    if (ho_engine_create(&fx.w.plat, &ec, &fx.engine) != hipObjSuccess)
      return -1;
    if (!(fx.s3 = fabric_s3_start(fx.engine, &port)))
      return -1;
    snprintf(out, outLen, "http://127.0.0.1:%d", port);
  }
  return 0;
}

/* enum fabric_mode: 0 normal, 1 decline (501), 2 ignore the token,
 * 3 a byte count one too many, 4 a reply without a peer token. */
GOFABRIC_API void hipObjGoFabricSetMode(int mode)
{
  if (fx.s3)
    fabric_s3_set_mode(fx.s3, (enum fabric_mode)mode);
}

/* What moved how: rdma_get, rdma_put, http_get, http_put, declined,
 * list_parts, completes, aborts, rdma_bytes, http_bytes, open uploads. */
GOFABRIC_API void hipObjGoFabricCounts(uint64_t out[11])
{
  memset(out, 0, 11 * sizeof out[0]);
  if (!fx.s3)
    return;
  struct fabric_counts *k = fabric_s3_counts(fx.s3);
  out[0] = atomic_load(&k->rdma_get);
  out[1] = atomic_load(&k->rdma_put);
  out[2] = atomic_load(&k->http_get);
  out[3] = atomic_load(&k->http_put);
  out[4] = atomic_load(&k->declined);
  out[5] = atomic_load(&k->list_parts);
  out[6] = atomic_load(&k->completes);
  out[7] = atomic_load(&k->aborts);
  out[8] = atomic_load(&k->rdma_bytes);
  out[9] = atomic_load(&k->http_bytes);
  out[10] = fabric_s3_open_uploads(fx.s3);
}

/* A hipObjServer on the fabric's server NIC (the client instance is up on
 * the client NIC). */
GOFABRIC_API hipObjServerStatus_t
hipObjGoFabricServerOpen(const hipObjServerConfig_t *cfg, hipObjServer_t **out)
{
  hipObjServerConfig_t c;
  if (world_up() != 0)
    return hipObjServerNoDevice;
  memcpy(&c, cfg, sizeof c);
  if (c.nicCount == 0) {
    static const char *const nic[] = {WORLD_SERVER_NIC};
    c.nics = nic;
    c.nicCount = 1;
  }
  return ho_server_open_on(&fx.w.plat, &c, out);
}
