/* SPDX-License-Identifier: MIT */
/* The server of include/hipobj_server.h: one protocol engine per NIC, the
 * choice of engine for each token, the answer to give the client, and the
 * counters. Transfers are in server_xfer.c, memory in server_mem.c. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "platform/topology.h"
#include "server_internal.h"
#include "server_pick.h"

_Static_assert(offsetof(hipObjServerConfig_t, maxQueued) == HO_SERVER_CONFIG_V0,
               "hipObjServerConfig_t: fields are only appended");
_Static_assert(sizeof(hipObjServerConfig_t) == 80, "ABI");
_Static_assert(offsetof(hipObjServerConfig_t, movingMax) == 72, "appended");
_Static_assert(offsetof(hipObjServerConfig_t, chunkSize) == 48, "ABI");
_Static_assert(offsetof(hipObjServerConfig_t, faultSkipFinal) == 56, "ABI");
_Static_assert(sizeof(hipObjServerRequest_t) == HO_SERVER_REQUEST_V0,
               "hipObjServerRequest_t: fields are only appended");
_Static_assert(offsetof(hipObjServerRequest_t, doneArg) == 88, "ABI");
_Static_assert(offsetof(hipObjServerReply_t, bytesTransferred) == 104, "ABI");
_Static_assert(offsetof(hipObjServerStats_t, rdmaFailed) == 192, "appended");
_Static_assert(offsetof(hipObjServerStats_t, dataFirst) == 200, "appended");
_Static_assert(offsetof(hipObjServerStats_t, paceWindow) == 216, "appended");
_Static_assert(offsetof(hipObjServerStats_t, queued) == 224, "appended");
_Static_assert(sizeof(hipObjServerStats_t) == 328, "ABI");
_Static_assert(offsetof(hipObjServerStats_t, timeTransfers) == 256, "appended");
_Static_assert(offsetof(hipObjServerStats_t, startNs) == 320, "appended");
_Static_assert(offsetof(hipObjServerStats_t, movingMax) == 248, "appended");
_Static_assert(offsetof(hipObjServerStats_t, readyReclaimed) == 184, "ABI");
_Static_assert(offsetof(hipObjServerStats_t, qpTransitions) == 160, "ABI");
_Static_assert(offsetof(hipObjServerStats_t, maxReadsInFlight) == 180, "ABI");
_Static_assert(HO_ENGINE_REPLY_MAX <= HIPOBJ_SERVER_REPLY_MAX, "the reply fits");
_Static_assert(HIPOBJ_SERVER_MAX_NICS == HO_MAX_NICS &&
                   HIPOBJ_SERVER_NIC_NAME_MAX == HO_NIC_NAME_MAX,
               "the header's limits are the library's");
_Static_assert(hipObjServerOpGet == HIPOBJ_RDMA_OP_GET &&
                   hipObjServerOpPut == HIPOBJ_RDMA_OP_PUT,
               "the operations are the client's");

hipObjServerStatus_t ho_server_copy_in(void *dst, size_t dst_size,
                                       const void *src, uint32_t src_size,
                                       uint32_t min)
{
  if (src_size < min)
    return hipObjServerInvalidValue;
  const uint8_t *s = src;
  for (size_t i = dst_size; i < src_size; i++)
    if (s[i] != 0)
      return hipObjServerNotSupported;
  memset(dst, 0, dst_size);
  memcpy(dst, src, src_size < dst_size ? src_size : dst_size);
  return hipObjServerSuccess;
}

hipObjServerStatus_t hipObjServerGetVersion(uint32_t *major, uint32_t *minor,
                                            uint32_t *patch)
{
  if (major)
    *major = HIPOBJ_SERVER_VERSION_MAJOR;
  if (minor)
    *minor = HIPOBJ_SERVER_VERSION_MINOR;
  if (patch)
    *patch = HIPOBJ_SERVER_VERSION_PATCH;
  return hipObjServerSuccess;
}

const char *hipObjServerStatusString(hipObjServerStatus_t s)
{
  static const char *const names[] = {
      "success", "invalid value", "no usable RDMA device", "RDMA error",
      "out of memory", "malformed token (answer 400)",
      "declined (answer 501: the client falls back to HTTP)",
      "busy (answer 503)", "pending", "cancelled",
      "timed out waiting for the client", "the store's callback failed",
      "the client's ready message disagreed", "not supported"};
  if ((unsigned)s >= sizeof names / sizeof names[0])
    return "?";
  return names[s];
}

/* ---- opening -------------------------------------------------------------- */

static hipObjServerStatus_t from_op_error(hipObjOpError_t e)
{
  switch (e) {
  case hipObjSuccess: return hipObjServerSuccess;
  case hipObjNicNotFound: return hipObjServerNoDevice;
  case hipObjInvalidValue: return hipObjServerInvalidValue;
  case hipObjInternalError: return hipObjServerNoMemory;
  default: return hipObjServerRdmaError;
  }
}

static bool limits_ok(const hipObjServerConfig_t *c)
{
  if (c->nicCount > HIPOBJ_SERVER_MAX_NICS || (c->nicCount > 0 && !c->nics))
    return false;
  if (c->flags & ~(HIPOBJ_SERVER_ALL_ACTIVE_NICS | HIPOBJ_SERVER_DATA_FIRST |
                   HIPOBJ_SERVER_NO_PACING) ||
      c->reserved || c->reserved2)
    return false;
  if (c->maxTransfers > 4096 || c->movingMax > 4096 ||
      c->maxConnections > 65536 || c->depth > 32 || c->maxQueued > 65536 ||
      c->queueWaitMs > 3600000)
    return false;
  if (c->chunkSize && (c->chunkSize < 4096 || c->chunkSize > (1ull << 30)))
    return false;
  for (uint32_t i = 0; i < c->nicCount; i++) {
    if (!c->nics[i] || !c->nics[i][0] || strlen(c->nics[i]) >= HO_NIC_NAME_MAX)
      return false;
    for (uint32_t j = 0; j < i; j++)
      if (strcmp(c->nics[i], c->nics[j]) == 0)
        return false;
  }
  return true;
}

static struct ho_engine_config engine_config(const hipObjServerConfig_t *c,
                                             const char *nic)
{
  return (struct ho_engine_config){.nic = nic,
                                   .qps = c->maxTransfers,
                                   .max_connections = c->maxConnections,
                                   .idle_timeout_ms = c->idleTimeoutMs,
                                   .grace_ms = c->graceMs,
                                   .chunk_size = (size_t)c->chunkSize,
                                   .depth = c->depth,
                                   .queue = c->maxQueued,
                                   .queue_wait_ms = c->queueWaitMs,
                                   .moving = c->movingMax,
                                   .ready_timeout_ms = c->readyTimeoutMs,
                                   .rdma_timeout_ms = c->rdmaTimeoutMs,
                                   .fault_skip_final = c->faultSkipFinal,
                                   .data_first = (c->flags &
                                                  HIPOBJ_SERVER_DATA_FIRST) != 0,
                                   .pacing = (c->flags & HIPOBJ_SERVER_NO_PACING)
                                                 ? -1
                                                 : 0};
}

static hipObjServerStatus_t add_engine(hipObjServer_t *s,
                                       const struct ho_platform *plat,
                                       const hipObjServerConfig_t *c,
                                       const char *nic)
{
  struct ho_engine_config ec = engine_config(c, nic);
  struct ho_engine *e;
  hipObjServerStatus_t st = from_op_error(ho_engine_create(plat, &ec, &e));
  if (st != hipObjServerSuccess)
    return st;
  s->engines[s->nengines] = e;
  memset(s->names[s->nengines], 0, HO_NIC_NAME_MAX);
  strncpy(s->names[s->nengines], ho_engine_device_name(e), HO_NIC_NAME_MAX - 1);
  ho_engine_gid(e, s->gids[s->nengines]);
  s->nengines++;
  return hipObjServerSuccess;
}

/* Software NICs move their packets on the host's CPUs: the engines on
 * them share the admission cap (engine.h, ho_engine_moving_cap). */
static void share_cpus(hipObjServer_t *s)
{
  unsigned soft = 0;
  for (unsigned i = 0; i < s->nengines; i++)
    soft += ho_engine_is_soft(s->engines[i]);
  for (unsigned i = 0; soft > 1 && i < s->nengines; i++)
    ho_engine_share_cpus(s->engines[i], soft);
}

/* The NICs to open: the named ones, every active one, or the first. */
static hipObjServerStatus_t open_engines(hipObjServer_t *s,
                                         const struct ho_platform *plat,
                                         const hipObjServerConfig_t *c)
{
  static _Thread_local struct ho_nic_info nics[HO_MAX_NICS];
  size_t n = 0;
  bool all = c->nicCount == 0 && (c->flags & HIPOBJ_SERVER_ALL_ACTIVE_NICS);
  if (all && plat->topo->ops->list_nics(plat->topo, nics, HO_MAX_NICS, &n) !=
                 hipObjSuccess)
    n = 0;
  size_t max = c->nicCount ? c->nicCount : all ? n : 1;
  s->engines = calloc(max ? max : 1, sizeof *s->engines);
  s->names = calloc(max ? max : 1, sizeof *s->names);
  s->gids = calloc(max ? max : 1, sizeof *s->gids);
  if (!s->engines || !s->names || !s->gids)
    return hipObjServerNoMemory;
  hipObjServerStatus_t st = hipObjServerSuccess;
  if (c->nicCount)
    for (uint32_t i = 0; st == hipObjServerSuccess && i < c->nicCount; i++)
      st = add_engine(s, plat, c, c->nics[i]);
  else if (all)
    for (size_t i = 0; st == hipObjServerSuccess && i < n; i++)
      if (nics[i].active_port > 0)
        st = add_engine(s, plat, c, nics[i].name);
  if (!c->nicCount && !all)
    st = add_engine(s, plat, c, NULL);
  if (st == hipObjServerSuccess && s->nengines == 0)
    st = hipObjServerNoDevice;
  if (st == hipObjServerSuccess)
    share_cpus(s);
  return st;
}

hipObjServerStatus_t ho_server_open_on(const struct ho_platform *plat,
                                       const hipObjServerConfig_t *cfg,
                                       hipObjServer_t **out)
{
  hipObjServerConfig_t c;
  memset(&c, 0, sizeof c);
  c.size = HO_SERVER_CONFIG_V0;
  if (!out)
    return hipObjServerInvalidValue;
  if (cfg) {
    hipObjServerStatus_t st = ho_server_copy_in(&c, sizeof c, cfg, cfg->size,
                                                HO_SERVER_CONFIG_V0);
    if (st != hipObjServerSuccess)
      return st;
  }
  if (!limits_ok(&c))
    return hipObjServerInvalidValue;
  if (!plat || !plat->verbs)
    return hipObjServerNoDevice;
  hipObjServer_t *s = calloc(1, sizeof *s);
  if (!s)
    return hipObjServerNoMemory;
  ho_mutex_init(&s->mu);
  hipObjServerStatus_t st = open_engines(s, plat, &c);
  if (st != hipObjServerSuccess) {
    hipObjServerClose(s);
    return st;
  }
  *out = s;
  return hipObjServerSuccess;
}

hipObjServerStatus_t hipObjServerOpen(const hipObjServerConfig_t *cfg,
                                      hipObjServer_t **out)
{
  const struct ho_platform *plat;
  if (!out)
    return hipObjServerInvalidValue;
  if (ho_platform_system("none", &plat) != hipObjSuccess)
    return hipObjServerNoDevice;
  return ho_server_open_on(plat, cfg, out);
}

static void wait_idle(hipObjServer_t *s)
{
  unsigned round = 0;
  for (;;) {
    unsigned n = 0;
    for (uint32_t i = 0; i < s->nengines; i++)
      n += ho_engine_running(s->engines[i]);
    if (n == 0)
      return;
    ho_backoff(&round, 1000);
  }
}

static void wait_starts(hipObjServer_t *s)
{
  unsigned round = 0;
  for (;;) {
    ho_mutex_lock(&s->mu);
    unsigned n = s->starting;
    ho_mutex_unlock(&s->mu);
    if (n == 0)
      return;
    ho_backoff(&round, 1000);
  }
}

void ho_server_set_hook(hipObjServer_t *srv, ho_server_hook_fn fn, void *arg)
{
  srv->hook = fn;
  srv->hook_arg = arg;
}

void hipObjServerClose(hipObjServer_t *srv)
{
  if (!srv)
    return;
  /* No Start begins from here on (a done callback's gets Busy), and no
   * engine starts a transfer: once the Start calls under way have
   * returned and no engine runs one, nothing uses the server. */
  ho_mutex_lock(&srv->mu);
  srv->dying = true;
  ho_mutex_unlock(&srv->mu);
  for (uint32_t i = 0; i < srv->nengines; i++)
    ho_engine_refuse_new(srv->engines[i]);
  ho_server_hook(srv, HO_SERVER_AT_CLOSE, NULL);
  wait_starts(srv);
  /* A transfer's done callback runs before its slot is freed: once no
   * engine runs one, no callback runs and no memory is in use. (A done
   * callback may still start another: wait for that one too.) */
  wait_idle(srv);
  ho_server_mem_free_all(srv); /* deregistered while the devices exist */
  for (uint32_t i = 0; i < srv->nengines; i++)
    ho_engine_destroy(srv->engines[i]);
  ho_mutex_destroy(&srv->mu);
  free(srv->engines);
  free(srv->names);
  free(srv->gids);
  free(srv);
}

uint32_t hipObjServerNicCount(const hipObjServer_t *srv)
{
  return srv ? srv->nengines : 0;
}

const char *hipObjServerNicName(const hipObjServer_t *srv, uint32_t index)
{
  return srv && index < srv->nengines ? srv->names[index] : NULL;
}

/* ---- starting a transfer -------------------------------------------------- */

hipObjServerStatus_t hipObjServerParseToken(const char *token,
                                            uint64_t tokenLength,
                                            uint64_t *length)
{
  struct ho_token t;
  if (!token || !length)
    return hipObjServerInvalidValue;
  if (ho_server_foreign_token(token, tokenLength))
    return hipObjServerDeclined;
  if (tokenLength != HO_TOKEN_HEX ||
      !ho_token_decode(token, (size_t)tokenLength, &t))
    return hipObjServerBadToken;
  if (t.transport != HO_TRANSPORT_RC)
    return hipObjServerDeclined;
  *length = t.len;
  return hipObjServerSuccess;
}

static hipObjServerStatus_t check_request(const hipObjServerRequest_t *r)
{
  if (r->op != hipObjServerOpGet && r->op != hipObjServerOpPut)
    return hipObjServerInvalidValue;
  if (!r->token || r->length == 0)
    return hipObjServerInvalidValue;
  bool streamed = r->read || r->write;
  if (r->mem ? streamed : !streamed)
    return hipObjServerInvalidValue; /* exactly one of the two */
  if (!r->mem && (r->op == hipObjServerOpGet ? !r->read : !r->write))
    return hipObjServerInvalidValue;
  if (r->mem && (r->memOffset > r->mem->len ||
                 r->length > r->mem->len - r->memOffset))
    return hipObjServerInvalidValue;
  if (r->commit && r->op != hipObjServerOpPut)
    return hipObjServerInvalidValue;
  return hipObjServerSuccess;
}

static void answer(hipObjServerReply_t *rep, hipObjServerStatus_t st)
{
  memset(rep, 0, sizeof *rep);
  if (st == hipObjServerBadToken)
    rep->httpStatus = 400;
  if (st == hipObjServerDeclined) {
    rep->httpStatus = 501;
    memcpy(rep->rdmaReply, "501", 4);
  }
  if (st == hipObjServerBusy) {
    rep->httpStatus = 503;
    memcpy(rep->rdmaReply, "503", 4);
  }
}

/* The engine that keeps the connection the token proposes (a client's
 * kept connection lives on one NIC only), else, for a new connection, the
 * one ho_server_pick() chooses: on the client's subnet, the least busy,
 * the next in turn. */
static uint32_t first_engine(hipObjServer_t *s, const hipObjServerRequest_t *r)
{
  if (s->nengines == 1)
    return 0;
  for (uint32_t i = 0; i < s->nengines; i++)
    if (ho_engine_holds(s->engines[i], r->token, (size_t)r->tokenLength))
      return i;
  struct ho_token t;
  uint8_t client[16] = {0}; /* a malformed token: no subnet matches */
  if (r->tokenLength == HO_TOKEN_HEX &&
      ho_token_decode(r->token, HO_TOKEN_HEX, &t))
    memcpy(client, t.gid, sizeof client);
  struct ho_pick_engine v[HIPOBJ_SERVER_MAX_NICS];
  for (uint32_t i = 0; i < s->nengines; i++) {
    memcpy(v[i].gid, s->gids[i], sizeof v[i].gid);
    v[i].running = ho_engine_running(s->engines[i]);
  }
  return ho_server_pick(v, s->nengines, client,
                        atomic_fetch_add(&s->next, 1));
}

/* Try the engines from the chosen one on: Busy or Declined from one may
 * be served by another. Busy wins over Declined: it may pass. */
static enum ho_engine_start_result try_engines(hipObjServer_t *s,
                                               const hipObjServerRequest_t *r,
                                               hipObjServerTransfer_t *x,
                                               char *reply)
{
  uint32_t first = first_engine(s, r);
  enum ho_engine_start_result res = HO_ENGINE_DECLINE;
  bool busy = false;
  for (uint32_t k = 0; k < s->nengines; k++) {
    uint32_t i = (first + k) % s->nengines;
    struct ho_engine_io io;
    struct ho_engine_xfer_opts xo;
    ho_xfer_engine_io(x, &io, &xo, i);
    res = ho_engine_start_ex(s->engines[i], r->token, (size_t)r->tokenLength,
                             (int)r->op, r->length, &io, &xo, reply);
    if (ho_engine_started(res) || res == HO_ENGINE_BAD_TOKEN)
      return res;
    busy |= res == HO_ENGINE_BUSY;
  }
  return busy ? HO_ENGINE_BUSY : res;
}

static hipObjServerStatus_t count_refusal(hipObjServer_t *s,
                                          enum ho_engine_start_result res)
{
  switch (res) {
  case HO_ENGINE_BAD_TOKEN:
    atomic_fetch_add(&s->bad_tokens, 1);
    return hipObjServerBadToken;
  case HO_ENGINE_BUSY:
    atomic_fetch_add(&s->busy, 1);
    return hipObjServerBusy;
  default:
    atomic_fetch_add(&s->declined, 1);
    return hipObjServerDeclined;
  }
}

hipObjServerStatus_t hipObjServerStart(hipObjServer_t *srv,
                                       const hipObjServerRequest_t *req,
                                       hipObjServerReply_t *reply,
                                       hipObjServerTransfer_t **xfer)
{
  hipObjServerRequest_t r;
  if (!srv || !req || !reply)
    return hipObjServerInvalidValue;
  uint64_t t0 = ho_now_ns();
  hipObjServerStatus_t st =
      ho_server_copy_in(&r, sizeof r, req, req->size, HO_SERVER_REQUEST_V0);
  if (st == hipObjServerSuccess)
    st = check_request(&r);
  if (st != hipObjServerSuccess)
    return st;
  ho_mutex_lock(&srv->mu);
  if (srv->dying)
    st = hipObjServerBusy; /* closing: nothing new */
  else if (r.mem)
    st = ho_server_mem_use(srv, r.mem);
  if (st == hipObjServerSuccess)
    srv->starting++;
  ho_mutex_unlock(&srv->mu);
  if (st != hipObjServerSuccess) {
    answer(reply, st);
    return st;
  }
  hipObjServerTransfer_t *x = ho_xfer_new(srv, &r, xfer ? 2 : 1);
  char rep[HO_ENGINE_REPLY_MAX];
  enum ho_engine_start_result res =
      x && !ho_server_foreign_token(r.token, r.tokenLength)
          ? try_engines(srv, &r, x, rep)
          : HO_ENGINE_DECLINE;
  if (!ho_engine_started(res)) {
    if (x)
      ho_xfer_discard(x);
    else if (r.mem)
      atomic_fetch_sub(&r.mem->users, 1);
    st = x ? count_refusal(srv, res) : hipObjServerNoMemory;
  } else {
    atomic_fetch_add(&srv->start_calls, 1);
    atomic_fetch_add(&srv->start_ns, ho_now_ns() - t0);
  }
  /* the last touch of srv by this call: Close may free it after this */
  ho_mutex_lock(&srv->mu);
  srv->starting--;
  ho_mutex_unlock(&srv->mu);
  if (!ho_engine_started(res)) {
    answer(reply, st);
    return st;
  }
  /* x may have ended already: without a handle, it is not touched again. */
  answer(reply, hipObjServerSuccess);
  memcpy(reply->rdmaReply, rep, sizeof rep);
  reply->bytesTransferred = res == HO_ENGINE_RAN_FAILED ? 0 : r.length;
  if (res == HO_ENGINE_RAN_FAILED)
    reply->httpStatus = 500; /* data first: the transfer's outcome */
  if (xfer)
    *xfer = x;
  return hipObjServerSuccess;
}

/* ---- statistics ------------------------------------------------------------ */

static void add_engine_stats(hipObjServerStats_t *o,
                             const struct ho_engine_stats *e)
{
  o->started += e->started;
  o->completed += e->completed;
  o->failed += e->failed;
  o->timedOut += e->timed_out;
  o->badCookie += e->bad_cookie;
  o->finalFailed += e->final_failed;
  o->bytesWritten += e->bytes_written;
  o->bytesRead += e->bytes_read;
  o->connMade += e->conn_made;
  o->connReused += e->conn_reused;
  o->retiredFailure += e->retired_failure;
  o->retiredIdle += e->retired_idle;
  o->retiredEvicted += e->retired_evicted;
  o->retiredStale += e->retired_stale;
  o->retiredOneShot += e->retired_one_shot;
  o->qpTransitions += e->qp_transitions;
  o->readyReclaimed += e->ready_reclaimed;
  o->rdmaFailed += e->rdma_failed;
  o->dataFirst += e->data_first;
  o->connLive += e->conn_live;
  o->connIdle += e->conn_idle;
  if (e->max_reads_in_flight > o->maxReadsInFlight)
    o->maxReadsInFlight = e->max_reads_in_flight;
  o->paceShrinks += e->pace_shrinks;
  o->queued += e->queued;
  o->queueRefused += e->queue_full + e->queue_timeouts;
  o->queuedNow += e->queued_now;
  if (e->max_queued > o->maxQueuedSeen)
    o->maxQueuedSeen = e->max_queued;
  o->movingMax += e->moving_max;
  if (e->paced && (o->paceWindow == 0 || e->pace_window < o->paceWindow))
    o->paceWindow = e->pace_window;
  o->timeTransfers += e->times.transfers;
  o->timeTotalNs += e->times.total;
  o->timeAdmitNs += e->times.admit;
  o->timePostNs += e->times.post;
  o->timeWaitNs += e->times.wait;
  o->timeIoNs += e->times.io;
  o->timeCommitNs += e->times.finish;
}

static void sum_engine(hipObjServerStats_t *o, struct ho_engine *engine)
{
  struct ho_engine_stats e;
  ho_engine_get_stats(engine, &e);
  add_engine_stats(o, &e);
  o->running += ho_engine_running(engine);
}

/* What fits of o into the caller's size-first stats. */
static void copy_out(hipObjServerStats_t *o, hipObjServerStats_t *stats)
{
  uint32_t n = stats->size < sizeof *o ? stats->size : (uint32_t)sizeof *o;
  o->size = n;
  memcpy(stats, o, n);
}

hipObjServerStatus_t hipObjServerGetStats(hipObjServer_t *srv,
                                          hipObjServerStats_t *stats)
{
  if (!srv || !stats || stats->size < HO_SERVER_STATS_MIN)
    return hipObjServerInvalidValue;
  hipObjServerStats_t o;
  memset(&o, 0, sizeof o);
  o.nics = srv->nengines;
  for (uint32_t i = 0; i < srv->nengines; i++)
    sum_engine(&o, srv->engines[i]);
  o.badTokens = atomic_load(&srv->bad_tokens);
  o.declined = atomic_load(&srv->declined);
  o.busy = atomic_load(&srv->busy);
  o.cancelled = atomic_load(&srv->cancelled);
  o.startCalls = atomic_load(&srv->start_calls);
  o.startNs = atomic_load(&srv->start_ns);
  copy_out(&o, stats);
  return hipObjServerSuccess;
}

hipObjServerStatus_t hipObjServerGetNicStats(hipObjServer_t *srv,
                                             uint32_t index,
                                             hipObjServerStats_t *stats)
{
  if (!srv || !stats || stats->size < HO_SERVER_STATS_MIN ||
      index >= srv->nengines)
    return hipObjServerInvalidValue;
  hipObjServerStats_t o;
  memset(&o, 0, sizeof o);
  o.nics = 1;
  sum_engine(&o, srv->engines[index]);
  copy_out(&o, stats);
  return hipObjServerSuccess;
}
