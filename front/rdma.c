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
  char nic[256]; /* the NICs open, comma-separated (cut short past 255) */
};

/* --nic's names, split, for the library's config (used during the open
 * only: the library keeps the names it opened). */
struct nic_names {
  char name[HS_MAX_NICS][HS_NIC_NAME_MAX];
  const char *ptr[HS_MAX_NICS];
};

static hipObjServerConfig_t lib_config(const struct hs_config *cfg,
                                       struct nic_names *nn)
{
  hipObjServerConfig_t c;
  memset(&c, 0, sizeof c);
  c.size = sizeof c;
  int n = cfg->nic ? hs_nic_list(cfg->nic, nn->name, NULL) : 0;
  for (int i = 0; i < n; i++)
    nn->ptr[i] = nn->name[i];
  if (n > 0) {
    c.nics = nn->ptr;
    c.nicCount = (uint32_t)n;
  }
  c.maxTransfers = cfg->rdma_qps;
  c.maxQueued = cfg->rdma_queue;
  c.queueWaitMs = cfg->rdma_queue_wait_ms;
  c.movingMax = cfg->rdma_moving;
  c.maxConnections = cfg->rdma_max_connections;
  c.idleTimeoutMs = cfg->rdma_idle_timeout_ms;
  c.readyTimeoutMs = cfg->rdma_timeout_ms;
  c.rdmaTimeoutMs = cfg->rdma_timeout_ms;
  c.depth = cfg->rdma_depth;
  c.chunkSize = cfg->rdma_chunk_size;
  c.faultSkipFinal = cfg->fault_skip_final;
  if (cfg->rdma_no_pacing)
    c.flags |= HIPOBJ_SERVER_NO_PACING;
  if (!cfg->rdma_answer_first)
    c.flags |= HIPOBJ_SERVER_DATA_FIRST;
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
  /* a list set without the parser (hs_config_set checks it) */
  if (cfg->nic && hs_nic_list(cfg->nic, NULL, why) < 0)
    return HS_ERR_IO;
  struct hs_rdma *r = calloc(1, sizeof *r);
  if (!r)
    return HS_ERR_NOMEM;
  struct nic_names nn;
  hipObjServerConfig_t c = lib_config(cfg, &nn);
  hipObjServerStatus_t st = open(ctx, &c, &r->srv);
  if (st != hipObjServerSuccess) {
    free(r);
    hs_buf_puts(why, why_not(st, cfg->nic != NULL));
    return cfg->nic ? HS_ERR_IO : HS_OK;
  }
  r->stats = stats;
  size_t at = 0;
  for (uint32_t i = 0; i < hipObjServerNicCount(r->srv) && at < sizeof r->nic;
       i++) {
    int k = snprintf(r->nic + at, sizeof r->nic - at, "%s%s", i ? "," : "",
                     hipObjServerNicName(r->srv, i));
    at += k > 0 ? (size_t)k : 0;
  }
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
      "\"qp_transitions\":%llu,\"rdma_failed\":%llu,\"no_ready\":%llu,"
      "\"data_first\":%llu,\"pace_shrinks\":%llu,\"pace_window\":%llu,"
      "\"queued\":%llu,\"queue_refused\":%llu,\"moving_max\":%u,",
      (unsigned long long)transfers, (unsigned long long)s.connMade,
      (unsigned long long)s.connReused, s.connLive, s.connIdle,
      (unsigned long long)s.retiredFailure, (unsigned long long)s.retiredIdle,
      (unsigned long long)s.retiredEvicted, (unsigned long long)s.retiredStale,
      (unsigned long long)s.retiredOneShot, (unsigned long long)s.finalFailed,
      (unsigned long long)s.readyReclaimed, (unsigned long long)s.qpTransitions,
      (unsigned long long)s.rdmaFailed, (unsigned long long)s.timedOut,
      (unsigned long long)s.dataFirst, (unsigned long long)s.paceShrinks,
      (unsigned long long)s.paceWindow, (unsigned long long)s.queued,
      (unsigned long long)s.queueRefused, s.movingMax);
  /* where the time went (the library's sums; docs/architecture.md) */
  hs_buf_printf(
      out,
      "\"time_ns\":{\"transfers\":%llu,\"total\":%llu,\"admit\":%llu,"
      "\"post\":%llu,\"wait\":%llu,\"io\":%llu,\"commit\":%llu,"
      "\"start_calls\":%llu,\"start\":%llu}}",
      (unsigned long long)s.timeTransfers, (unsigned long long)s.timeTotalNs,
      (unsigned long long)s.timeAdmitNs, (unsigned long long)s.timePostNs,
      (unsigned long long)s.timeWaitNs, (unsigned long long)s.timeIoNs,
      (unsigned long long)s.timeCommitNs, (unsigned long long)s.startCalls,
      (unsigned long long)s.startNs);
}

void hs_rdma_nics_json(struct hs_rdma *r, struct hs_buf *out)
{
  hs_buf_puts(out, "\"nics\":[");
  for (uint32_t i = 0; i < hipObjServerNicCount(r->srv); i++) {
    hipObjServerStats_t s;
    memset(&s, 0, sizeof s);
    s.size = sizeof s;
    if (hipObjServerGetNicStats(r->srv, i, &s) != hipObjServerSuccess)
      continue;
    hs_buf_printf(out,
                  "%s{\"name\":\"%s\",\"transfers\":%llu,\"bytes\":%llu,"
                  "\"failed\":%llu,\"live\":%u}",
                  i ? "," : "", hipObjServerNicName(r->srv, i),
                  (unsigned long long)(s.completed + s.failed),
                  (unsigned long long)(s.bytesWritten + s.bytesRead),
                  (unsigned long long)s.failed, s.connLive);
  }
  hs_buf_puts(out, "]");
}

hipObjServerStatus_t hs_rdma_start(struct hs_rdma *r, const char *token,
                                   uint64_t length,
                                   const struct hs_rdma_io *io,
                                   hipObjServerReply_t *rep,
                                   hipObjServerTransfer_t **xfer)
{
  hipObjServerRequest_t req = {
      .size = sizeof req,
      .op = io->read ? hipObjServerOpGet : hipObjServerOpPut,
      .token = token,
      .tokenLength = strlen(token),
      .length = length,
      .read = io->read,
      .write = io->write,
      .commit = io->commit,
      .ioArg = io->arg,
      .done = io->done,
      .doneArg = io->arg,
  };
  memset(rep, 0, sizeof *rep);
  return hipObjServerStart(r->srv, &req, rep, xfer);
}

/* ---- the answer ----------------------------------------------------------- */

void hs_rdma_decline(const struct hs_rdma_answer *a, enum hs_err decline,
                     const char *message)
{
  hs_stat_add(&a->stats->rdma_declined, 1);
  hs_resp_error(a->resp, decline, message, a->where, a->head);
  hs_resp_header(a->resp, "x-amz-rdma-reply", "501");
}

void hs_rdma_mismatch(const struct hs_rdma_answer *a, uint64_t token_len,
                      uint64_t bytes)
{
  char m[200];
  snprintf(m, sizeof m,
           "The token's length (%llu) is not the number of bytes to move "
           "(%llu); use plain HTTP, or a token of that length.",
           (unsigned long long)token_len, (unsigned long long)bytes);
  hs_rdma_decline(a, HS_ERR_RDMA_UNSERVABLE, m);
}

bool hs_rdma_answer(const struct hs_rdma_answer *a, hipObjServerStatus_t st,
                    const hipObjServerReply_t *rep, enum hs_err decline,
                    const char *message)
{
  switch (st) {
  case hipObjServerSuccess:
    if (rep->httpStatus) { /* data first: the transfer ran and failed */
      hs_resp_error(a->resp, HS_ERR_RDMA_FAILED, NULL, a->where, a->head);
      hs_resp_header(a->resp, "x-amz-rdma-reply", rep->rdmaReply);
      return false;
    }
    hs_resp_header(a->resp, "x-amz-rdma-reply", rep->rdmaReply);
    hs_resp_headerf(a->resp, "x-amz-rdma-bytes-transferred", "%llu",
                    (unsigned long long)rep->bytesTransferred);
    return true;
  case hipObjServerBadToken:
    hs_stat_add(&a->stats->rdma_bad_tokens, 1);
    hs_resp_error(a->resp, HS_ERR_RDMA_TOKEN, NULL, a->where, a->head);
    return false;
  case hipObjServerBusy:
  case hipObjServerNoMemory:
    hs_resp_error(a->resp, HS_ERR_SLOW_DOWN,
                  "Every RDMA connection of this server is in use.", a->where,
                  a->head);
    hs_resp_header(a->resp, "x-amz-rdma-reply", "503");
    return false;
  default:
    hs_rdma_decline(a, decline, message);
    return false;
  }
}
