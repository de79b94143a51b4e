/* SPDX-License-Identifier: MIT */
/* The servers on the public server library: nothing here but
 * include/hipobj_server.h (and the front's own headers). */
#include "rdma.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipobj_server.h"

struct hs_rdma {
  hipObjServer_t *srv;
  struct hs_stats *stats;
  char nic[64];
};

static hipObjServerConfig_t lib_config(const struct hs_config *cfg,
                                       const char **nic)
{
  hipObjServerConfig_t c;
  memset(&c, 0, sizeof c);
  c.size = sizeof c;
  if (cfg->nic) {
    *nic = cfg->nic;
    c.nics = nic;
    c.nicCount = 1;
  }
  c.maxTransfers = cfg->rdma_qps;
  c.maxConnections = cfg->rdma_max_connections;
  c.idleTimeoutMs = cfg->rdma_idle_timeout_ms;
  c.readyTimeoutMs = cfg->rdma_timeout_ms;
  c.rdmaTimeoutMs = cfg->rdma_timeout_ms;
  c.depth = cfg->rdma_depth;
  c.chunkSize = cfg->rdma_chunk_size;
  c.faultSkipFinal = cfg->fault_skip_final;
  return c;
}

static const char *why_not(hipObjServerStatus_t st, bool named)
{
  if (st != hipObjServerNoDevice)
    return hipObjServerStatusString(st);
  return named ? "no such RDMA device, or no active port, or no "
                 "libibverbs.so.1"
               : "no RDMA device with an active port (or no libibverbs.so.1)";
}

enum hs_err hs_rdma_open_with(hs_rdma_opener open, const void *ctx,
                              const struct hs_config *cfg,
                              struct hs_stats *stats, struct hs_rdma **out,
                              struct hs_buf *why)
{
  *out = NULL;
  struct hs_rdma *r = calloc(1, sizeof *r);
  if (!r)
    return HS_ERR_NOMEM;
  const char *nic = NULL;
  hipObjServerConfig_t c = lib_config(cfg, &nic);
  hipObjServerStatus_t st = open(ctx, &c, &r->srv);
  if (st != hipObjServerSuccess) {
    free(r);
    hs_buf_puts(why, why_not(st, cfg->nic != NULL));
    return cfg->nic ? HS_ERR_IO : HS_OK;
  }
  r->stats = stats;
  snprintf(r->nic, sizeof r->nic, "%s", hipObjServerNicName(r->srv, 0));
  *out = r;
  return HS_OK;
}

static hipObjServerStatus_t open_system(const void *ctx,
                                        const hipObjServerConfig_t *cfg,
                                        hipObjServer_t **out)
{
  (void)ctx;
  return hipObjServerOpen(cfg, out);
}

enum hs_err hs_rdma_open(const struct hs_config *cfg, struct hs_stats *stats,
                         struct hs_rdma **out, struct hs_buf *why)
{
  *out = NULL;
  if (cfg->no_rdma) {
    hs_buf_puts(why, "disabled by --no-rdma");
    return HS_OK;
  }
  return hs_rdma_open_with(open_system, NULL, cfg, stats, out, why);
}

void hs_rdma_close(struct hs_rdma *r)
{
  if (!r)
    return;
  hipObjServerClose(r->srv); /* waits for every transfer to end */
  free(r);
}

hipObjServer_t *hs_rdma_library(struct hs_rdma *r) { return r->srv; }

struct hs_stats *hs_rdma_stats(struct hs_rdma *r) { return r->stats; }

const char *hs_rdma_nic(const struct hs_rdma *r) { return r->nic; }

void hs_rdma_stats_json(struct hs_rdma *r, struct hs_buf *out)
{
  hipObjServerStats_t s;
  memset(&s, 0, sizeof s);
  s.size = sizeof s;
  hipObjServerGetStats(r->srv, &s);
  uint64_t transfers = s.completed + s.failed;
  hs_buf_printf(
      out,
      "{\"transfers\":%llu,\"made\":%llu,\"reused\":%llu,\"live\":%u,"
      "\"idle\":%u,\"retired\":{\"failure\":%llu,\"idle\":%llu,"
      "\"evicted\":%llu,\"stale\":%llu,\"one_shot\":%llu},"
      "\"final_failed\":%llu,\"ready_reclaimed\":%llu,"
      "\"qp_transitions\":%llu,\"rdma_failed\":%llu,\"no_ready\":%llu}",
      (unsigned long long)transfers, (unsigned long long)s.connMade,
      (unsigned long long)s.connReused, s.connLive, s.connIdle,
      (unsigned long long)s.retiredFailure, (unsigned long long)s.retiredIdle,
      (unsigned long long)s.retiredEvicted, (unsigned long long)s.retiredStale,
      (unsigned long long)s.retiredOneShot, (unsigned long long)s.finalFailed,
      (unsigned long long)s.readyReclaimed, (unsigned long long)s.qpTransitions,
      (unsigned long long)s.rdmaFailed, (unsigned long long)s.timedOut);
}
