/* SPDX-License-Identifier: MIT */
/* The public API: argument checks, the transfer sequence of the D3 protocol
 * (docs/protocol.md), staging copies. Every function that needs the library
 * takes a reference to the current instance first and passes it down;
 * nothing below this file calls a public function. */
#include "hipobj.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/thread_safety.h"
#include "instance.h"
#include "rdma/protocol.h"
#include "rdma/token.h"
#include "s3/control.h"
#include "staging.h"
#include "stats.h"
#include "token_arena.h"

#define HO_STR2(x) #x
#define HO_STR(x) HO_STR2(x)

static hipObjError_t mk(hipObjOpError_t op, int native)
{
  hipObjError_t e = {op, op == hipObjSuccess ? 0 : native};
  return e;
}

/* ---- lifecycle ---------------------------------------------------------- */

hipObjError_t hipObjInit(const hipObjConfig_t *config)
{
  if (!config || (config->flags & ~HIPOBJ_INIT_FIRST_ACTIVE_NIC) != 0 ||
      config->gpuDevice < -1)
    return mk(hipObjInvalidValue, 0);
  struct ho_options opts;
  ho_options_from_env(&opts);
  const struct ho_platform *plat = NULL;
  hipObjOpError_t e = ho_platform_system(opts.gpu_runtime, &plat);
  if (e != hipObjSuccess)
    return mk(e, 0);
  int native = 0;
  return mk(ho_init_with(plat, &opts, config, &native), native);
}

hipObjError_t hipObjShutdown(void) { return mk(ho_shutdown(), 0); }

/* ---- buffers ------------------------------------------------------------ */

static hipObjError_t do_register(void *ptr, size_t size, bool host_only)
{
  struct ho_instance *inst = ho_instance_get();
  if (!inst)
    return mk(hipObjNotInitialized, 0);
  int native = 0;
  hipObjOpError_t e = ho_buffers_register(inst->buffers, ptr, size, host_only,
                                          &native);
  ho_instance_put(inst);
  return mk(e, native);
}

hipObjError_t hipObjBufRegister(void *devPtr, size_t size)
{
  return do_register(devPtr, size, false);
}

hipObjError_t hipObjBufRegisterHost(void *hostPtr, size_t size)
{
  return do_register(hostPtr, size, true);
}

hipObjError_t hipObjBufDeregister(void *devPtr)
{
  struct ho_instance *inst = ho_instance_get();
  if (!inst)
    return mk(hipObjNotInitialized, 0);
  hipObjOpError_t e = hipObjInvalidValue;
  if (devPtr) {
    ho_abandoned_collect(inst->abandoned, NULL);
    e = ho_buffers_deregister(inst->buffers, devPtr);
  }
  ho_instance_put(inst);
  return mk(e, 0);
}

/* Find the buffer and check [offset, offset+size) inside it. */
static hipObjOpError_t find_range(struct ho_instance *inst, const void *ptr,
                                  size_t size, off_t offset, struct ho_buf **out)
{
  if (!ptr || size == 0 || offset < 0)
    return hipObjInvalidValue;
  struct ho_buf *b = ho_buffers_find(inst->buffers, ptr);
  if (!b)
    return hipObjBufNotRegistered;
  if (!ho_buf_range_ok(b, (uint64_t)offset, size)) {
    ho_buf_put(b);
    return hipObjInvalidValue;
  }
  if (ho_abandoned_busy(inst->abandoned, b)) {
    ho_buf_put(b);
    return hipObjBusy;
  }
  *out = b;
  return hipObjSuccess;
}

hipObjError_t hipObjBufSync(void *devPtr, size_t size, off_t offset,
                            int direction)
{
  struct ho_instance *inst = ho_instance_get();
  if (!inst)
    return mk(hipObjNotInitialized, 0);
  struct ho_buf *b = NULL;
  int native = 0;
  hipObjOpError_t e = hipObjInvalidValue;
  if (direction == HIPOBJ_SYNC_TO_HOST || direction == HIPOBJ_SYNC_TO_DEVICE)
    e = find_range(inst, devPtr, size, offset, &b);
  if (e == hipObjSuccess)
    e = ho_stage_copy(inst->plat.gpu, inst->abandoned, b, (uint64_t)offset,
                      size, direction, inst->opts.stage_timeout_ms, &native);
  ho_buf_put(b);
  ho_instance_put(inst);
  return mk(e, native);
}

/* ---- the transfer ------------------------------------------------------- */

/* The peer this thread's transfers go to (hipObjSetPeerHint), hashed. */
static _Thread_local uint64_t peer_hint;

/* One transfer's range and direction, and what the rail it is placed on
 * gives it: the buffer's MR there, whether the rail's link is Ethernet. */
struct xfer {
  struct ho_buf *b;
  uint64_t offset, size;
  int op;
  struct ibv_mr *mr;
  bool roce;
};

/* The token names the lease's memory window (scoped) or the buffer's MR.
 * The port byte's version-3 bit (docs/protocol.md, section 5): on a token
 * that proposes a connection, the window is bound there (data first); on
 * one that asks for a new connection, only that this client speaks
 * version 3 (it takes an offer's flags). RdmaError if no window can be
 * made. */
static hipObjOpError_t mint_token(const struct ho_instance *inst,
                                  struct ho_lease *l, const struct xfer *x,
                                  bool data_first, char out[HO_TOKEN_HEX + 1])
{
  struct ho_token t;
  ho_conn_token(l->link->spare, &t);
  t.qpn = ho_lease_token_qpn(l);
  t.rkey = inst->config.scoped ? ho_lease_window_rkey(l) : x->mr->rkey;
  t.addr = x->b->token_addr + x->offset;
  t.len = x->size;
  if (data_first || (inst->opts.data_first && ho_token_tag(&t) == 0))
    t.port |= HO_TOKEN_DATA_FIRST;
  if (t.rkey == 0)
    return hipObjRdmaError;
  ho_token_encode(&t, out);
  return hipObjSuccess;
}

/* The one direction a transfer lets the server use: it WRITEs a GET's
 * payload, READs a PUT's. */
static int direction_access(const struct xfer *x)
{
  return x->op == HIPOBJ_RDMA_OP_GET ? IBV_ACCESS_REMOTE_WRITE
                                     : IBV_ACCESS_REMOTE_READ;
}

/* Scoped: bind the lease's window on c over exactly the transfer's range,
 * with only the access its direction needs. */
static hipObjOpError_t open_window(const struct ho_instance *inst,
                                   struct ho_lease *l, struct ho_conn *c,
                                   const struct xfer *x)
{
  if (!inst->config.scoped)
    return hipObjSuccess;
  return ho_lease_bind_window(l, c, x->mr, x->b->token_addr + x->offset,
                              x->size, direction_access(x));
}

/* How long a bind before the request may take: a kept connection that
 * cannot complete one in this time is taken for broken. */
#define HO_PREBIND_WAIT_NS 1000000000u

/* Data first (docs/protocol.md, section 5): the kept connection gets the
 * transfer's window (without windows: the QP its direction) before the
 * request leaves, waited for, so that the server may move the payload
 * before it answers. A connection that cannot take it is broken: it is
 * replaced, and the token asks for a new one. True when the token may say
 * data first. */
static bool prepare_data_first(const struct ho_instance *inst,
                               struct ho_lease *l, const struct xfer *x)
{
  struct ho_conn *c = ho_lease_kept(l);
  if (!c || !inst->opts.data_first)
    return false;
  hipObjOpError_t e =
      inst->config.scoped
          ? ho_lease_prebind_window(l, x->mr, x->b->token_addr + x->offset,
                                    x->size, direction_access(x),
                                    ho_now_ns() + HO_PREBIND_WAIT_NS)
          : ho_conn_set_access(c, direction_access(x));
  if (e == hipObjSuccess)
    return true;
  ho_lease_drop_kept(l);
  return false;
}

/* Data first: close the window bound before the request (without
 * windows: revoke the QP's access) on the kept connection: after a done:
 * answer, and after an answer that moved nothing (a 4xx or 5xx of the
 * server's own, 503 when busy), which keeps the connection. */
static hipObjOpError_t close_data_first(const struct ho_instance *inst,
                                        struct ho_lease *l, uint64_t deadline)
{
  struct ho_conn *c = ho_lease_kept(l);
  if (!c)
    return hipObjRdmaError;
  return inst->config.scoped ? ho_lease_close_window(l, c, deadline)
                             : ho_conn_set_access(c, 0);
}

/* After a data-first answer: nothing left on the wire. done:<bytes> is
 * the success (the count must be the transfer's), rdma-failed a fabric
 * failure worth another try; the window is closed (or the QP's access
 * revoked) before the call returns. */
static hipObjOpError_t finish_data_first(const struct ho_instance *inst,
                                         struct ho_lease *l,
                                         const struct ho_reply *reply,
                                         const struct xfer *x,
                                         uint64_t deadline,
                                         enum ho_retry_cause *why)
{
  if (reply->rdma_failed) {
    ho_warn("the server's RDMA failed before it answered (%s): tried again "
            "on a new connection", x->op == HIPOBJ_RDMA_OP_GET ? "GET" : "PUT");
    *why = HO_RETRY_SERVER;
    return hipObjRdmaError;
  }
  if (reply->bytes != x->size) {
    ho_warn("the server reports %llu bytes moved of %llu",
            (unsigned long long)reply->bytes, (unsigned long long)x->size);
    return hipObjRdmaError;
  }
  hipObjOpError_t e = close_data_first(inst, l, deadline);
  if (e == hipObjSuccess)
    ho_lease_count_data_first(l);
  return e;
}

/* A transfer's clock (docs/protocol.md, section 7): it starts at the first
 * attempt's ready (data first: its request; or at a failure before
 * either: deadline 0 until then); the deadline moves while the transfer
 * moves, never past start + transfer_span_ns(). */
struct xclock {
  uint64_t start, deadline;
};

#define HO_PROGRESS_BUDGETS 4u /* HIPOBJ_TRANSFER_MAX_MS 0: four budgets */
#define HO_GET_PROGRESS_SLICES 8u /* a GET moves in its deadline's last 1/8 */

/* How long to wait for final: HIPOBJ_TRANSFER_TIMEOUT_MS, plus time for
 * the payload at HO_SLOWEST_LINK_BPS, so large objects on slow links are
 * not cut off and a dead server still fails in bounded time. */
#define HO_SLOWEST_LINK_BPS 10000000u /* 10 MB/s: 100 ms a MB */
static uint64_t transfer_budget_ns(const struct ho_instance *inst, uint64_t size)
{
  return (uint64_t)inst->opts.transfer_timeout_ms * 1000000u +
         size / HO_SLOWEST_LINK_BPS * 1000000000u +
         size % HO_SLOWEST_LINK_BPS * 100u;
}

/* The most a transfer's deadline may move to, from its clock's start:
 * HIPOBJ_TRANSFER_MAX_MS, or four budgets (0), never less than one. */
static uint64_t transfer_span_ns(const struct ho_instance *inst, uint64_t size)
{
  uint64_t budget = transfer_budget_ns(inst, size);
  uint64_t span = inst->opts.transfer_max_ms
                      ? (uint64_t)inst->opts.transfer_max_ms * 1000000u
                      : HO_PROGRESS_BUDGETS * budget;
  return span > budget ? span : budget;
}

static void clock_start(const struct ho_instance *inst, struct xclock *clk,
                        uint64_t size)
{
  clk->start = ho_now_ns();
  clk->deadline = clk->start + transfer_budget_ns(inst, size);
}

/* *why: HO_RETRY_SERVER for a final that says the server's RDMA failed
 * (nothing reported moved: worth another try); otherwise the failure is
 * the server's answer, not the fabric's. */
static hipObjOpError_t check_final(const struct ho_msg *ready,
                                   const struct ho_msg *fin, uint64_t size,
                                   enum ho_retry_cause *why)
{
  if (fin->type != HO_MSG_FINAL || fin->cookie != ready->cookie ||
      fin->version != ready->version || fin->op != ready->op) {
    ho_warn("final message does not match this transfer");
    return hipObjRdmaError;
  }
  if (fin->status != HO_FINAL_OK || fin->bytes != size) {
    ho_warn("server reports status %u after moving %llu of %llu bytes",
            fin->status, (unsigned long long)fin->bytes,
            (unsigned long long)size);
    if (fin->status == HO_FINAL_RDMA_ERROR)
      *why = HO_RETRY_SERVER;
    return hipObjRdmaError;
  }
  return hipObjSuccess;
}

/* What an attempt's wait for final ended with, as a retry cause. */
static enum ho_retry_cause wait_cause(enum ho_wait_end r, bool reused,
                                      bool ready_acked)
{
  switch (r) {
  case HO_WAIT_ERROR:
    return reused && !ready_acked ? HO_RETRY_KEPT_BROKEN : HO_RETRY_FABRIC;
  case HO_WAIT_STALLED: return HO_RETRY_STALLED;
  default: return HO_RETRY_NONE; /* a timeout (the deadline is gone), a
                                    malformed message (the server's fault) */
  }
}

static hipObjOpError_t exchange_rc(struct ho_instance *inst,
                                   struct ho_lease *l, struct ho_conn *c,
                                   uint64_t cookie,
                                   const struct ho_conn_offer *po,
                                   const struct xfer *x, struct xclock *clk,
                                   enum ho_retry_cause *why);

/* After a success reply: ride the connection or connect the spare (the
 * server's offer decides); without windows grant the QP the transfer's
 * direction for its duration only; send ready with the server's cookie,
 * wait for the final message (until deadline, or for a GET until the
 * server has sent nothing for the stall bound) and check it. *why: the
 * failure's retry cause. */
static hipObjOpError_t finish_rc(struct ho_instance *inst, struct ho_lease *l,
                                 const struct ho_reply *reply,
                                 const struct xfer *x, struct xclock *clk,
                                 enum ho_retry_cause *why)
{
  const uint64_t cookie = reply->peer.addr;
  struct ho_conn_offer offer;
  struct ho_conn *c = NULL;
  *why = HO_RETRY_NONE;
  if (!ho_server_token_ok(&reply->peer, x->roce) ||
      !ho_offer_decode(&reply->peer, &offer)) {
    ho_warn("malformed server token in x-amz-rdma-reply");
    return hipObjS3Error;
  }
  hipObjOpError_t e = ho_lease_connect(l, &reply->peer, &offer, cookie,
                                       ho_now_ns() + HO_PREBIND_WAIT_NS, &c);
  if (e != hipObjSuccess) {
    /* a kept QP that broke under its window before ready: retried; a
     * connect that failed (the path to the server's QP did not resolve:
     * the rail's link is down) is the rail's transport failing, before
     * ready, nothing moved: retried on another rail, the rail marked; an
     * offer it did not propose: not */
    if (l->move_failed)
      *why = HO_RETRY_KEPT_BROKEN;
    else if (l->connect_failed)
      *why = HO_RETRY_FABRIC;
    return e;
  }
  *why = HO_RETRY_FABRIC; /* verbs calls on a connected QP */
  if (ho_conn_post_msg_recv(c) != hipObjSuccess ||
      open_window(inst, l, c, x) != hipObjSuccess)
    return hipObjRdmaError;
  if (!inst->config.scoped) {
    if (ho_conn_set_access(c, direction_access(x)) != hipObjSuccess)
      return hipObjRdmaError;
    e = exchange_rc(inst, l, c, cookie, &offer, x, clk, why);
    /* nothing between transfers: revoked on every path (a failed
     * connection is retired as well) */
    if (ho_conn_set_access(c, 0) != hipObjSuccess && e == hipObjSuccess)
      e = hipObjRdmaError;
    return e;
  }
  return exchange_rc(inst, l, c, cookie, &offer, x, clk, why);
}

/* Ready, the wait for final, and the window's end. */
static hipObjOpError_t exchange_rc(struct ho_instance *inst,
                                   struct ho_lease *l, struct ho_conn *c,
                                   uint64_t cookie,
                                   const struct ho_conn_offer *po,
                                   const struct xfer *x, struct xclock *clk,
                                   enum ho_retry_cause *why)
{
  const uint64_t size = x->size;
  const struct ho_conn_offer offer = *po;
  hipObjOpError_t e;
  struct ho_msg ready = {.type = HO_MSG_READY,
                         .version = offer.version,
                         .cookie = cookie,
                         .bytes = size};
  if (offer.version >= HO_PROTO_V2) {
    ready.op = ho_wire_op(x->op);
    ready.next_qpn = ho_lease_next_qpn(l);
  }
  bool send_pending = true;
  if (ho_conn_send_msg(c, &ready) != hipObjSuccess)
    return hipObjRdmaError;
  if (!clk->deadline) /* the transfer's clock starts at its first ready */
    clock_start(inst, clk, size);
  /* The stall bound watches the receive PSN, which a GET's WRITEs move
   * packet by packet; a PUT's READ requests move it once per work request
   * (all of them at the start of a small PUT), and a READ the server
   * retries does not move it at all: a PUT has the probes. The deadline
   * moves while the PSN does: a GET's must have moved in the deadline's
   * last eighth, a PUT's since the deadline was set. */
  struct ho_final_bounds b = {
      .deadline_ns = clk->deadline,
      .limit_ns = clk->start + transfer_span_ns(inst, size),
      .extend_ns = transfer_budget_ns(inst, size),
      .stall_ns = x->op == HIPOBJ_RDMA_OP_GET
                      ? (uint64_t)inst->opts.stall_timeout_ms * 1000000u
                      : 0,
      /* A server that offered it answers liveness probes: one that gave
       * the transfer up (its QP in error) is known within the interval
       * plus our retry budget, a PUT as well as a GET. */
      .probe_ns = offer.probes
                      ? (uint64_t)inst->opts.probe_interval_ms * 1000000u
                      : 0,
      .slices = x->op == HIPOBJ_RDMA_OP_GET ? HO_GET_PROGRESS_SLICES : 1};
  struct ho_msg fin;
  enum ho_wait_end r = ho_conn_wait_final(c, &send_pending, &b, &fin);
  clk->deadline = b.deadline_ns;
  ho_stats_deadline_moves(&inst->stats, b.moves);
  *why = wait_cause(r, offer.reuse, !send_pending);
  if (r != HO_WAIT_DONE)
    return hipObjRdmaError;
  e = check_final(&ready, &fin, size, why);
  /* Closed here, before the call returns; after a failure the window is
   * freed when the lease ends (ho_pool_release), after its QP is retired. */
  if (e == hipObjSuccess)
    e = ho_lease_close_window(l, c, clk->deadline);
  return e;
}

/* Whether a failed exchange may have left a connection half made: every
 * failure but a well-formed reply with a failure status (501, 4xx, 5xx),
 * which the server sends without touching a connection. */
static bool exchange_failed_midway(hipObjOpError_t e, int status)
{
  return e != hipObjSuccess && (status == 0 || ho_status_is_success(status));
}

/* What the reply says, with or without data first. */
static hipObjOpError_t finish(struct ho_instance *inst, struct ho_lease *l,
                              const struct ho_reply *reply, bool data_first,
                              const struct xfer *x, struct xclock *clk,
                              enum ho_retry_cause *why)
{
  if (reply->done || reply->rdma_failed) {
    if (data_first)
      return finish_data_first(inst, l, reply, x, clk->deadline, why);
    ho_warn("the server answered data first to a token that did not offer it");
    return hipObjRdmaError;
  }
  return finish_rc(inst, l, reply, x, clk, why);
}

/* After the exchange (e its result so far): the transfer's end, and
 * whether the lease's connections are kept. */
static hipObjOpError_t conclude(struct ho_instance *inst, struct ho_lease *l,
                                hipObjOpError_t e, const struct ho_reply *reply,
                                int status, bool data_first,
                                const struct xfer *x, struct xclock *clk,
                                enum ho_retry_cause *why)
{
  if (e == hipObjSuccess)
    e = finish(inst, l, reply, data_first, x, clk, why);
  /* data first, a 500 may come from a transfer that ran: the server has
   * retired the connection */
  l->failed = exchange_failed_midway(e, status) || reply->rdma_failed ||
              (data_first && status == 500);
  if (data_first && e != hipObjSuccess && !l->failed &&
      close_data_first(inst, l, ho_now_ns() + HO_PREBIND_WAIT_NS) !=
          hipObjSuccess)
    l->failed = true;
  return e;
}

/* Everything between leasing a connection and returning it. */
static hipObjOpError_t leased_exchange(struct ho_instance *inst,
                                       struct ho_lease *l, const struct xfer *x,
                                       const hipObjOps_t *ops, void *ctx,
                                       struct xclock *clk,
                                       enum ho_retry_cause *why)
{
  char token[HO_TOKEN_HEX + 1];
  struct ho_reply reply = {0};
  int status = 0;
  *why = HO_RETRY_NONE;
  ho_lease_check_kept(l);
  const bool df = prepare_data_first(inst, l, x);
  hipObjOpError_t e = mint_token(inst, l, x, df, token);
  if (e != hipObjSuccess)
    return e;
  if (df && !clk->deadline) /* the clock starts as the payload may move */
    clock_start(inst, clk, x->size);
  e = ho_control_exchange(ops, ctx, token, &reply, &status);
  return conclude(inst, l, e, &reply, status, df, x, clk, why);
}

static hipObjOpError_t flush_if_direct(struct ho_instance *inst,
                                       const struct ho_buf *b, int *native)
{
  if (b->kind != HO_BUF_DIRECT)
    return hipObjSuccess;
  hipObjOpError_t e = inst->plat.gpu->flush_rdma_writes(native);
  return e == hipObjSuccess || e == hipObjNotSupported ? hipObjSuccess
                                                       : hipObjInternalError;
}

/* The transfer as rail r sees it: the buffer's MR there (registered on
 * the rail's first use of it), the rail's link layer. */
static hipObjOpError_t on_rail(struct ho_instance *inst, unsigned r,
                               struct xfer *x, int *native)
{
  x->roce = inst->rails.rail[r].dev->roce;
  return ho_buf_rail_mr(inst->buffers, x->b, r, &x->mr, native);
}

/* One attempt on rail r: the buffer's MR there, a lease of the rail's
 * pool, the exchange, the lease returned. */
static hipObjOpError_t attempt(struct ho_instance *inst, unsigned r,
                               const struct xfer *in, const hipObjOps_t *ops,
                               void *ctx, struct xclock *clk,
                               enum ho_retry_cause *why, int *native)
{
  struct xfer x = *in;
  struct ho_lease lease = {0};
  *why = HO_RETRY_NONE;
  hipObjOpError_t e = on_rail(inst, r, &x, native);
  if (e == hipObjSuccess)
    e = ho_pool_acquire(inst->rails.rail[r].pool, true, true, peer_hint,
                        &lease);
  if (e != hipObjSuccess)
    return e;
  e = leased_exchange(inst, &lease, &x, ops, ctx, clk, why);
  if (e == hipObjSuccess && x.op == HIPOBJ_RDMA_OP_GET)
    e = flush_if_direct(inst, x.b, native);
  ho_pool_release(&lease);
  return e;
}

/* One attempt placed on a rail (railset.h): a healthy rail this transfer
 * has not failed on, the fewest in flight; its outcome kept by the rail
 * (a transport failure marks it down), and the rail added to *tried. */
static hipObjOpError_t placed_attempt(struct ho_instance *inst,
                                      const struct xfer *x,
                                      const hipObjOps_t *ops, void *ctx,
                                      struct xclock *clk, uint32_t *tried,
                                      enum ho_retry_cause *why, int *native)
{
  unsigned r = ho_railset_pick(&inst->rails, *tried, x->size, ho_now_ns());
  hipObjOpError_t e = attempt(inst, r, x, ops, ctx, clk, why, native);
  ho_railset_done(&inst->rails, r, e == hipObjSuccess, x->size,
                  e == hipObjSuccess ? HO_RETRY_NONE : *why, ho_now_ns());
  if (e != hipObjSuccess)
    *tried |= 1u << r;
  return e;
}

/* Before attempt n + 1 (n from 0): wait until its slot, the fraction
 * (2^(n+1) - 1) / (2^(retries+1) - 1) of the budget (with 3 retries: 1/15,
 * 3/15, 7/15), so that the first retries come soon after a fast failure
 * (a server's rdma-failed answer, an error completion) and the last one
 * late enough that a fault shorter than half the deadline (a link flap, a
 * blackout) is outlived; a failure whose slot has passed goes on at once. */
static void wait_for_slot(uint64_t start, uint64_t budget, unsigned retries,
                          unsigned n)
{
  unsigned shift = retries + 1u < 20u ? retries + 1u : 20u;
  uint64_t den = (1ull << shift) - 1u;
  uint64_t num = (1ull << (n + 1u < shift ? n + 1u : shift)) - 1u;
  uint64_t slot = start + budget / den * num;
  uint64_t now = ho_now_ns();
  if (now >= slot)
    return;
  struct timespec ts = {(time_t)((slot - now) / 1000000000u),
                        (long)((slot - now) % 1000000000u)};
  while (nanosleep(&ts, &ts) != 0)
    ;
}

/* The attempts of one transfer: a failure for a fabric reason (before the
 * server reported any byte moved: a final with OK is the only report) is
 * sent again through the application's callbacks on a new connection, on
 * another rail where a healthy one has not failed it yet (at once: the
 * backoff's slot is waited for only by a retry on a rail tried already),
 * at most HIPOBJ_RETRIES times, while the deadline has not passed.
 * Repeating is safe: a GET writes the same bytes into the same range
 * again, a PUT stores the same bytes again (docs/protocol.md, section 7). */
static hipObjOpError_t attempts(struct ho_instance *inst, const struct xfer *x,
                                const hipObjOps_t *ops, void *ctx, int *native)
{
  const unsigned retries = inst->opts.retries;
  const uint64_t budget = transfer_budget_ns(inst, x->size);
  struct xclock clk = {0}; /* started when the first attempt sends ready */
  uint32_t tried = 0;      /* the rails that failed it */
  for (unsigned n = 0;; n++) {
    enum ho_retry_cause why;
    hipObjOpError_t e =
        placed_attempt(inst, x, ops, ctx, &clk, &tried, &why, native);
    if (!clk.deadline) /* it failed before ready: the clock starts now */
      clock_start(inst, &clk, x->size);
    if (e == hipObjSuccess || why == HO_RETRY_NONE || n >= retries ||
        ho_now_ns() >= clk.deadline)
      return e;
    ho_stats_retry(&inst->stats, why);
    if (!ho_railset_untried(&inst->rails, tried))
      wait_for_slot(clk.start, budget, retries, n);
  }
}

static hipObjOpError_t transfer(struct ho_instance *inst, const void *ptr,
                                size_t size, off_t offset, int op,
                                const hipObjOps_t *ops, void *ctx, int *native)
{
  struct ho_buf *b = NULL;
  if (!ops || !ops->sendRequest || !ops->recvReply)
    return hipObjInvalidValue;
  hipObjOpError_t e = find_range(inst, ptr, size, offset, &b);
  if (e != hipObjSuccess)
    return e;
  const unsigned tmo = inst->opts.stage_timeout_ms;
  if (op == HIPOBJ_RDMA_OP_PUT)
    e = ho_stage_copy(inst->plat.gpu, inst->abandoned, b, (uint64_t)offset,
                      size, HIPOBJ_SYNC_TO_HOST, tmo, native);
  if (e == hipObjSuccess) {
    const struct xfer x = {b, (uint64_t)offset, size, op, NULL, false};
    e = attempts(inst, &x, ops, ctx, native);
  }
  if (e == hipObjSuccess && op == HIPOBJ_RDMA_OP_GET)
    e = ho_stage_copy(inst->plat.gpu, inst->abandoned, b, (uint64_t)offset,
                      size, HIPOBJ_SYNC_TO_DEVICE, tmo, native);
  ho_buf_put(b);
  return e;
}

static hipObjError_t public_transfer(const void *ptr, size_t size, off_t offset,
                                     int op, const hipObjOps_t *ops, void *ctx)
{
  struct ho_instance *inst = ho_instance_get();
  if (!inst)
    return mk(hipObjNotInitialized, 0);
  int native = 0;
  hipObjOpError_t e = transfer(inst, ptr, size, offset, op, ops, ctx, &native);
  ho_stats_transfer(&inst->stats, op, size, e);
  ho_instance_put(inst);
  return mk(e, native);
}

hipObjError_t hipObjGet(hipObjHandle_t handle, void *devPtr, size_t size,
                        off_t offset, const hipObjOps_t *ops, void *ctx)
{
  (void)handle;
  return public_transfer(devPtr, size, offset, HIPOBJ_RDMA_OP_GET, ops, ctx);
}

hipObjError_t hipObjPut(hipObjHandle_t handle, const void *devPtr, size_t size,
                        off_t offset, const hipObjOps_t *ops, void *ctx)
{
  (void)handle;
  return public_transfer(devPtr, size, offset, HIPOBJ_RDMA_OP_PUT, ops, ctx);
}

/* ---- transfers the application drives ---------------------------------- */

enum app_state { APP_READY, APP_COMPLETING, APP_DONE };

/* A token handed to the application. The token string lives in the token
 * arena (token_arena.h), whose addresses are never reused: the pointer the
 * application holds is the transfer's handle, compared, never read. */
struct app_xfer {
  char *token;
  struct app_xfer *next;
  struct ho_instance *inst; /* a reference */
  struct ho_buf *buf;       /* a reference */
  struct ho_lease lease;   /* of its rail's pool */
  unsigned rail;           /* placed on it until completed or put back */
  struct ibv_mr *mr;       /* the buffer's on that rail */
  uint64_t size;
  int op;
  enum app_state state;
  bool retryable; /* the completion failed for a fabric reason */
  bool data_first; /* the token offered it (docs/protocol.md, section 5) */
};

static ho_mutex app_mu = HO_MUTEX_INIT;
static struct app_xfer *app_live HO_GUARDED_GLOBAL(app_mu);

/* Find a live transfer by the pointer the application holds (not by
 * content: two tokens may be equal strings). The pointer is only compared:
 * a stale one names no live transfer, since token addresses are never
 * reused. */
static struct app_xfer *app_find(const char *token) HO_REQUIRES(app_mu)
{
  for (struct app_xfer *x = app_live; x; x = x->next)
    if (x->token == token)
      return x;
  return NULL;
}

/* The transfer as its token described it, on its rail. */
static struct xfer app_xfer_of(const struct app_xfer *x)
{
  return (struct xfer){x->buf, 0, x->size, x->op, x->mr,
                       x->inst->rails.rail[x->rail].dev->roce};
}

/* A token for a transfer placed on a rail: the buffer's MR there, a
 * lease of the rail's pool (not waited for), the window or the QP's
 * access bound before the request where data first applies. */
static hipObjOpError_t app_lease(struct ho_instance *inst, struct app_xfer *x)
{
  struct xfer t = {x->buf, 0, x->size, x->op, NULL, false};
  int native = 0;
  hipObjOpError_t e = on_rail(inst, x->rail, &t, &native);
  if (e == hipObjSuccess)
    e = ho_pool_acquire(inst->rails.rail[x->rail].pool, false, false,
                        peer_hint, &x->lease);
  if (e != hipObjSuccess)
    return e;
  x->mr = t.mr;
  ho_lease_check_kept(&x->lease);
  x->data_first = prepare_data_first(inst, &x->lease, &t);
  e = mint_token(inst, &x->lease, &t, x->data_first, x->token);
  if (e != hipObjSuccess)
    ho_pool_release(&x->lease);
  return e;
}

static hipObjOpError_t app_begin(struct ho_instance *inst, const void *ptr,
                                 size_t size, int op, struct app_xfer **out)
{
  struct app_xfer *x = calloc(1, sizeof *x);
  if (!x)
    return hipObjInternalError;
  hipObjOpError_t e = hipObjInternalError;
  x->size = size;
  x->op = op;
  x->token = ho_token_slot_alloc();
  if (!x->token)
    goto free_x;
  e = find_range(inst, ptr, size, 0, &x->buf);
  if (e != hipObjSuccess)
    goto free_token;
  x->rail = ho_railset_pick(&inst->rails, 0, size, ho_now_ns());
  e = app_lease(inst, x);
  if (e != hipObjSuccess)
    goto unplace;
  *out = x;
  return hipObjSuccess;
unplace:
  ho_railset_done(&inst->rails, x->rail, false, size, HO_RETRY_NONE,
                  ho_now_ns());
  ho_buf_put(x->buf);
free_token:
  ho_token_slot_free(x->token);
free_x:
  free(x);
  return e;
}

hipObjError_t hipObjGetRdmaToken(const void *devPtr, size_t size, int op,
                                 char **outToken)
{
  if (!outToken || (op != HIPOBJ_RDMA_OP_GET && op != HIPOBJ_RDMA_OP_PUT))
    return mk(hipObjInvalidValue, 0);
  struct ho_instance *inst = ho_instance_get();
  if (!inst)
    return mk(hipObjNotInitialized, 0);
  struct app_xfer *x = NULL;
  hipObjOpError_t e = app_begin(inst, devPtr, size, op, &x);
  if (e != hipObjSuccess) {
    ho_instance_put(inst);
    return mk(e, 0);
  }
  x->inst = inst; /* the transfer keeps the reference */
  ho_mutex_lock(&app_mu);
  x->next = app_live;
  app_live = x;
  ho_mutex_unlock(&app_mu);
  *outToken = x->token;
  return mk(hipObjSuccess, 0);
}

/* Claim a live transfer for completion; NULL if unknown or busy. */
static hipObjOpError_t app_claim(const char *token, struct app_xfer **out)
{
  hipObjOpError_t e = hipObjInvalidValue;
  ho_mutex_lock(&app_mu);
  struct app_xfer *x = token ? app_find(token) : NULL;
  if (x && x->state == APP_READY) {
    x->state = APP_COMPLETING;
    *out = x;
    e = hipObjSuccess;
  } else if (x) {
    e = x->state == APP_COMPLETING ? hipObjBusy : hipObjInvalidValue;
  }
  ho_mutex_unlock(&app_mu);
  return e;
}

hipObjError_t hipObjCompleteRdmaTransfer(const char *token, const char *reply,
                                         size_t replyLen)
{
  struct app_xfer *x = NULL;
  if (!reply)
    return mk(hipObjInvalidValue, 0);
  hipObjOpError_t e = app_claim(token, &x);
  if (e != hipObjSuccess)
    return mk(e, 0);
  struct ho_reply r = {0};
  int status = 0, native = 0;
  e = ho_control_check_reply(reply, replyLen, &r, &status);
  const struct xfer t = app_xfer_of(x);
  enum ho_retry_cause why = HO_RETRY_NONE; /* the application retries */
  struct xclock clk = {0}; /* data first: from here; else from ready */
  if (x->data_first)
    clock_start(x->inst, &clk, x->size);
  e = conclude(x->inst, &x->lease, e, &r, status, x->data_first, &t,
               &clk, &why);
  if (e == hipObjSuccess && x->op == HIPOBJ_RDMA_OP_GET)
    e = flush_if_direct(x->inst, x->buf, &native);
  ho_stats_transfer(&x->inst->stats, x->op, x->size, e);
  ho_pool_release(&x->lease);
  ho_railset_done(&x->inst->rails, x->rail, e == hipObjSuccess, x->size,
                  e == hipObjSuccess ? HO_RETRY_NONE : why, ho_now_ns());
  ho_mutex_lock(&app_mu);
  x->retryable = e != hipObjSuccess && why != HO_RETRY_NONE;
  x->state = APP_DONE;
  ho_mutex_unlock(&app_mu);
  return mk(e, native);
}

hipObjError_t hipObjRdmaTransferRetryable(const char *token, int *retryable)
{
  hipObjOpError_t e = hipObjInvalidValue;
  if (!retryable)
    return mk(e, 0);
  ho_mutex_lock(&app_mu);
  struct app_xfer *x = token ? app_find(token) : NULL;
  if (x && x->state == APP_DONE) {
    *retryable = x->retryable ? 1 : 0;
    e = hipObjSuccess;
  }
  ho_mutex_unlock(&app_mu);
  return mk(e, 0);
}

hipObjError_t hipObjPutRdmaToken(char *token)
{
  struct app_xfer *x = NULL;
  hipObjOpError_t e = hipObjInvalidValue;
  ho_mutex_lock(&app_mu);
  for (struct app_xfer **pp = &app_live; token && *pp; pp = &(*pp)->next) {
    if ((*pp)->token != token)
      continue;
    if ((*pp)->state == APP_COMPLETING) {
      e = hipObjBusy;
      break;
    }
    x = *pp;
    *pp = x->next;
    e = hipObjSuccess;
    break;
  }
  ho_mutex_unlock(&app_mu);
  if (!x)
    return mk(e, 0);
  if (x->lease.pool) { /* abandoned before completion: the server may */
    x->lease.failed = true; /* have connected to the token's QP */
    ho_pool_release(&x->lease);
    ho_railset_done(&x->inst->rails, x->rail, false, x->size, HO_RETRY_NONE,
                    ho_now_ns());
  }
  ho_buf_put(x->buf);
  ho_instance_put(x->inst);
  ho_token_slot_free(x->token);
  free(x);
  return mk(hipObjSuccess, 0);
}

/* FNV-1a: a stable 64-bit key for the peer's name. */
hipObjError_t hipObjSetPeerHint(const char *peer)
{
  uint64_t h = 0;
  if (peer) {
    h = 0xcbf29ce484222325ull;
    for (const unsigned char *c = (const unsigned char *)peer; *c; c++)
      h = (h ^ *c) * 0x100000001b3ull;
  }
  peer_hint = h;
  return mk(hipObjSuccess, 0);
}

/* ---- pure helpers ------------------------------------------------------- */

hipObjError_t hipObjParseRdmaReply(const char *reply, size_t replyLen,
                                   int *httpCode)
{
  struct ho_reply r;
  if (!reply || !httpCode || !ho_reply_parse(reply, replyLen, &r))
    return mk(hipObjInvalidValue, 0);
  *httpCode = r.status;
  return mk(hipObjSuccess, 0);
}

hipObjError_t hipObjTokenClientNic(const char *token, char *nicIp,
                                   size_t nicIpLen)
{
  struct ho_token t;
  if (!token || !nicIp || nicIpLen == 0)
    return mk(hipObjInvalidValue, 0);
  if (!ho_token_decode(token, strnlen(token, HO_TOKEN_HEX + 1), &t))
    return mk(hipObjInvalidValue, 0);
  return mk(ho_gid_ipv4(t.gid, nicIp, nicIpLen) ? hipObjSuccess
                                                 : hipObjInvalidValue, 0);
}

const char *hipObjGetErrorString(hipObjOpError_t err)
{
  static const char *const names[] = {
      [hipObjSuccess] = "success",
      [hipObjInvalidValue] = "invalid argument",
      [hipObjNotInitialized] = "hipObject is not initialized",
      [hipObjAlreadyInitialized] = "hipObject is already initialized",
      [hipObjRdmaError] = "RDMA error",
      [hipObjS3Error] = "S3 request or reply failed",
      [hipObjBufNotRegistered] = "buffer not registered",
      [hipObjBufAlreadyRegistered] = "buffer already registered",
      [hipObjNicNotFound] = "no usable RDMA NIC found",
      [hipObjDmabufNotSupported] = "GPU memory cannot be registered for RDMA",
      [hipObjSizeTooLarge] =
          "size too large, or above what RLIMIT_MEMLOCK lets the process pin",
      [hipObjInternalError] = "internal error",
      [hipObjNotSupported] = "not supported",
      [hipObjBusy] = "busy: resource in use",
  };
  if ((unsigned)err < sizeof names / sizeof names[0] && names[err])
    return names[err];
  return "unknown error";
}

const char *hipObjGetVersionString(void)
{
  return HO_STR(HIPOBJ_VERSION_MAJOR) "." HO_STR(HIPOBJ_VERSION_MINOR) "." HO_STR(
      HIPOBJ_VERSION_PATCH);
}

hipObjError_t hipObjGetVersion(unsigned *major, unsigned *minor, unsigned *patch)
{
  if (major)
    *major = HIPOBJ_VERSION_MAJOR;
  if (minor)
    *minor = HIPOBJ_VERSION_MINOR;
  if (patch)
    *patch = HIPOBJ_VERSION_PATCH;
  return mk(hipObjSuccess, 0);
}
