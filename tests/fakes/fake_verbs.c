/* SPDX-License-Identifier: MIT */
/* The simulated RC fabric behind fake_verbs_ops; see fake_verbs.h for the
 * semantics. One mutex (fake_lock) guards the whole fabric: every entry
 * point takes it, runs the fabric forward (fake_progress_locked) and does
 * its work. Nothing here sleeps.
 *
 * A send WR (struct fake_swqe) moves through phases:
 *   QUEUED -> SENT (transmitted, arrives at t_arrive) -> DONE (answered)
 *          \-> WAIT (no answer or RNR; timer at t_next) -> SENT again
 * Requests reach the responder in posting order: only the head of the send
 * queue is delivered, and a WAITing head stops everything behind it (the
 * ones already SENT go back to QUEUED, as with go-back-N). DONE heads are
 * retired in order, which gives the CQEs.
 *
 * In PSN mode (fake_verbs_psn.c) transmitting puts a packet on the wire
 * and a SENT WR waits for a response packet until its transport timer
 * (t_next); responses, not arrival, make WRs DONE. Types and the functions
 * the two files share are in fake_verbs_int.h. */
#include "fakes/fake_verbs.h"
#include "fakes/fake_verbs_int.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/thread_safety.h"

/* ---- the fabric -------------------------------------------------------- */

#define FAKE_VERB_NAME(n) #n,
static const char *const fake_verb_names[FV_COUNT] = {
    FAKE_VERB_LIST(FAKE_VERB_NAME)};

ho_mutex fake_lock = HO_MUTEX_INIT;
struct fake_fabric fab HO_GUARDED_BY(fake_lock);

static void fake_settings_default(void) HO_REQUIRES(fake_lock)
{
  fab.scale = 1.0;
  fab.manual = false;
  fab.offset = 0;
  fab.retry = FAKE_RETRY_RXE;
  fab.dmabuf = false;
  fab.strict_mtu = true;
  fab.sq_release_on_poll = false;
  fab.psn = false;
  fab.rxe_reset = false;
  fab.rxe_acks = false;
  fab.ack_delay_ns = 0;
  memset(&fab.fault, 0, sizeof fab.fault);
  memset(fab.inject, 0, sizeof fab.inject);
  fab.next_qpn = 0x100;
  fab.next_key = 0x80;
  fab.next_handle = 1;
}

static void fake_init_locked(void) HO_REQUIRES(fake_lock)
{
  if (fab.ready)
    return;
  fake_list_init(&fab.ctxs);
  fake_list_init(&fab.pds);
  fake_list_init(&fab.mrs);
  fake_list_init(&fab.mws);
  fake_list_init(&fab.cqs);
  fake_list_init(&fab.qps);
  fake_list_init(&fab.chans);
  fake_list_init(&fab.pkts);
  fake_settings_default();
  fab.ready = true;
}

uint64_t fake_now(void) HO_REQUIRES(fake_lock)
{
  if (fab.manual)
    return fab.manual_now;
  return (uint64_t)((int64_t)ho_now_ns() + fab.offset);
}

/* ns * time scale, at least 1 ns. */
uint64_t fake_scaled(uint64_t ns) HO_REQUIRES(fake_lock)
{
  double v = (double)ns * fab.scale;
  if (v < 1.0)
    return 1;
  if (v > 9.0e18)
    return UINT64_MAX / 2;
  return (uint64_t)v;
}

static void *fake_find(struct fake_link *head, const void *obj,
                       size_t link_off)
{
  if (!obj)
    return NULL;
  for (struct fake_link *l = head->next; l != head; l = l->next)
    if ((const char *)l - link_off == (const char *)obj)
      return (char *)l - link_off;
  return NULL;
}

#define FAKE_FIND(head, obj, type)                                          \
  ((type *)fake_find((head), (obj), offsetof(type, link)))

static struct fake_dev *fake_dev_live(const struct ibv_device *d)
    HO_REQUIRES(fake_lock)
{
  for (int i = 0; i < fab.n_dev; i++)
    if (&fab.dev[i]->ibdev == d)
      return fab.dev[i];
  return NULL;
}

static struct fake_dev *fake_dev_by_name(const char *name)
    HO_REQUIRES(fake_lock)
{
  for (int i = 0; name && i < fab.n_dev; i++)
    if (strcmp(fab.dev[i]->ibdev.name, name) == 0)
      return fab.dev[i];
  return NULL;
}

static struct fake_port *fake_dev_port(struct fake_dev *d, unsigned port)
{
  if (!d || port < 1 || port > d->cfg.phys_port_cnt)
    return NULL;
  return &d->port[port - 1];
}

struct fake_port *fake_qp_port(struct fake_qp *qp)
{
  return fake_dev_port(qp->ctx->dev, qp->attr.port_num);
}

struct fake_qp *fake_qp_by_num(uint32_t qpn) HO_REQUIRES(fake_lock)
{
  for (struct fake_link *l = fab.qps.next; l != &fab.qps; l = l->next) {
    struct fake_qp *qp = fake_container(l, struct fake_qp, link);
    if (qp->ibqp.qp_num == qpn)
      return qp;
  }
  return NULL;
}

/* The MR of dev whose lkey (or rkey) is key. */
static struct fake_mr *fake_mr_by_key(struct fake_dev *d, uint32_t key,
                                      bool remote) HO_REQUIRES(fake_lock)
{
  for (struct fake_link *l = fab.mrs.next; l != &fab.mrs; l = l->next) {
    struct fake_mr *mr = fake_container(l, struct fake_mr, link);
    uint32_t k = remote ? mr->ibmr.rkey : mr->ibmr.lkey;
    if (k == key && mr->pd->ctx->dev == d)
      return mr;
  }
  return NULL;
}

static bool fake_in_range(uint64_t base, uint64_t size, uint64_t addr,
                          uint64_t len)
{
  return addr >= base && len <= size && addr - base <= size - len;
}

/* ---- CQs --------------------------------------------------------------- */

static void fake_cq_push(struct fake_cq *cq, const struct ibv_wc *wc,
                         struct fake_qp *qp, unsigned release)
{
  if (cq->overflowed || cq->count == cq->cap) {
    cq->overflowed = true;
    cq->ctx->dev->stats.cq_overflows++;
    return;
  }
  struct fake_cqe *e = &cq->ring[(cq->head + cq->count) % cq->cap];
  e->wc = *wc;
  e->qp = qp;
  e->release = release;
  cq->count++;
  if (cq->armed && cq->ch) {
    /* As a NIC: the first completion after the arm raises one event. */
    uint64_t one = 1;
    cq->armed = false;
    cq->events++;
    cq->ctx->dev->stats.cq_events++;
    if (write(cq->ch->ibch.fd, &one, sizeof one) != (ssize_t)sizeof one)
      abort(); /* an eventfd write fails only on overflow */
  }
}

/* Removes qp's entries, keeping the others in order. */
static void fake_cq_purge(struct fake_cq *cq, const struct fake_qp *qp)
{
  int kept = 0;
  for (int i = 0; i < cq->count; i++) {
    struct fake_cqe e = cq->ring[(cq->head + i) % cq->cap];
    if (e.qp != qp)
      cq->ring[(cq->head + kept++) % cq->cap] = e;
  }
  cq->count = kept;
}

static int fake_cq_pop(struct fake_cq *cq, int n, struct ibv_wc *wc)
{
  int i;
  for (i = 0; i < n && cq->count > 0; i++) {
    struct fake_cqe *e = &cq->ring[cq->head];
    wc[i] = e->wc;
    if (e->release && e->qp)
      e->qp->sq_held -= e->release;
    cq->head = (cq->head + 1) % cq->cap;
    cq->count--;
  }
  return i;
}

/* ---- completions and the error state ----------------------------------- */

/* A success turned into the forced status of the QP, its device or the
 * fabric, if any is armed. */
static enum ibv_wc_status fake_forced(struct fake_qp *qp,
                                      enum ibv_wc_status st)
    HO_REQUIRES(fake_lock)
{
  struct fake_fault *f[3] = {&qp->fault, &qp->ctx->dev->fault, &fab.fault};
  if (st != IBV_WC_SUCCESS)
    return st;
  for (int i = 0; i < 3; i++) {
    if (f[i]->force_n > 0) {
      f[i]->force_n--;
      return f[i]->force_status;
    }
  }
  return st;
}

static enum ibv_wc_opcode fake_wc_opcode(enum ibv_wr_opcode op)
{
  switch (op) {
  case IBV_WR_RDMA_WRITE:
  case IBV_WR_RDMA_WRITE_WITH_IMM:
    return IBV_WC_RDMA_WRITE;
  case IBV_WR_RDMA_READ:
    return IBV_WC_RDMA_READ;
  case IBV_WR_BIND_MW:
    return IBV_WC_BIND_MW;
  case IBV_WR_LOCAL_INV:
    return IBV_WC_LOCAL_INV;
  default:
    return IBV_WC_SEND;
  }
}

struct fake_swqe *fake_sq_at(struct fake_qp *qp, unsigned i)
{
  return &qp->sq[(qp->sq_head + i) % qp->init.cap.max_send_wr];
}


/* How many SQ slots the CQE for this retirement frees when polled. */
static unsigned fake_sq_hold(struct fake_qp *qp, bool report)
    HO_REQUIRES(fake_lock)
{
  unsigned release = 0;
  if (!fab.sq_release_on_poll)
    return 0;
  qp->sq_held++;
  if (!report) {
    qp->sq_unsignaled++;
    return 0;
  }
  release = qp->sq_unsignaled + 1;
  qp->sq_unsignaled = 0;
  return release;
}

/* Pops the head (phase DONE) and reports it; an error moves the QP to ERR. */
static void fake_sq_retire(struct fake_qp *qp) HO_REQUIRES(fake_lock)
{
  struct fake_swqe *w = fake_sq_at(qp, 0);
  enum ibv_wc_status st = fake_forced(qp, w->status);
  bool report = st != IBV_WC_SUCCESS || w->signaled;
  struct ibv_wc wc = {.wr_id = w->wr_id,
                      .status = st,
                      .opcode = fake_wc_opcode(w->opcode),
                      .byte_len = (uint32_t)w->len,
                      .qp_num = qp->ibqp.qp_num};
  unsigned release = fake_sq_hold(qp, report);
  qp->sq_head = (qp->sq_head + 1) % qp->init.cap.max_send_wr;
  qp->sq_count--;
  if (report)
    fake_cq_push(qp->scq, &wc, qp, release);
  if (st != IBV_WC_SUCCESS && qp->attr.qp_state != IBV_QPS_ERR)
    fake_qp_to_err(qp);
}

static void fake_sq_flush(struct fake_qp *qp) HO_REQUIRES(fake_lock)
{
  while (qp->sq_count > 0) {
    struct fake_swqe *w = fake_sq_at(qp, 0);
    if (w->phase != FAKE_DONE) {
      w->phase = FAKE_DONE;
      w->status = IBV_WC_WR_FLUSH_ERR;
    }
    fake_sq_retire(qp);
  }
  qp->reads_out = 0;
}

/* Pops the head receive and reports it with status; returns the status
 * reported (a forced error may replace a success). */
static enum ibv_wc_status fake_rq_complete_inv(struct fake_qp *qp,
                                               enum ibv_wc_opcode op,
                                               enum ibv_wc_status st,
                                               uint64_t len,
                                               const uint32_t *imm,
                                               uint32_t src_qp,
                                               const uint32_t *inv)
    HO_REQUIRES(fake_lock);

static enum ibv_wc_status fake_rq_complete(struct fake_qp *qp,
                                           enum ibv_wc_opcode op,
                                           enum ibv_wc_status st,
                                           uint64_t len, const uint32_t *imm,
                                           uint32_t src_qp)
    HO_REQUIRES(fake_lock)
{
  return fake_rq_complete_inv(qp, op, st, len, imm, src_qp, NULL);
}

/* The same, for a SEND_WITH_INV that invalidated *inv. */
static enum ibv_wc_status fake_rq_complete_inv(struct fake_qp *qp,
                                               enum ibv_wc_opcode op,
                                               enum ibv_wc_status st,
                                               uint64_t len,
                                               const uint32_t *imm,
                                               uint32_t src_qp,
                                               const uint32_t *inv)
    HO_REQUIRES(fake_lock)
{
  struct fake_rwqe *r = &qp->rq[qp->rq_head];
  struct ibv_wc wc = {.wr_id = r->wr_id,
                      .status = fake_forced(qp, st),
                      .opcode = op,
                      .byte_len = (uint32_t)len,
                      .qp_num = qp->ibqp.qp_num,
                      .src_qp = src_qp,
                      .wc_flags = IBV_WC_GRH};
  if (imm) {
    wc.imm_data = *imm;
    wc.wc_flags |= IBV_WC_WITH_IMM;
  }
  if (inv) {
    wc.invalidated_rkey = *inv;
    wc.wc_flags |= IBV_WC_WITH_INV;
  }
  qp->rq_head = (qp->rq_head + 1) % qp->init.cap.max_recv_wr;
  qp->rq_count--;
  fake_cq_push(qp->rcq, &wc, qp, 0);
  return wc.status;
}

static void fake_rq_flush(struct fake_qp *qp) HO_REQUIRES(fake_lock)
{
  while (qp->rq_count > 0)
    fake_rq_complete(qp, IBV_WC_RECV, IBV_WC_WR_FLUSH_ERR, 0, NULL, 0);
}

static void fake_qp_set_state(struct fake_qp *qp, enum ibv_qp_state s)
{
  qp->attr.qp_state = s;
  qp->attr.cur_qp_state = s;
  qp->ibqp.state = s;
}

void fake_qp_to_err(struct fake_qp *qp) HO_REQUIRES(fake_lock)
{
  fake_psn_qp_gone(qp);
  fake_qp_set_state(qp, IBV_QPS_ERR);
  fake_sq_flush(qp);
  fake_rq_flush(qp);
}

/* ---- data movement ----------------------------------------------------- */

static uint64_t fake_span_total(const struct fake_span *s, int n)
{
  uint64_t t = 0;
  for (int i = 0; i < n; i++)
    t += s[i].len;
  return t;
}

/* Copies up to limit bytes from the src spans to the dst spans. */
void fake_copy(const struct fake_span *dst, int nd,
               const struct fake_span *src, int ns, uint64_t limit)
{
  int i = 0, j = 0;
  uint64_t di = 0, sj = 0;
  while (limit > 0 && i < nd && j < ns) {
    uint64_t n = dst[i].len - di;
    if (src[j].len - sj < n)
      n = src[j].len - sj;
    if (limit < n)
      n = limit;
    if (n)
      memmove(dst[i].p + di, src[j].p + sj, n);
    di += n;
    sj += n;
    limit -= n;
    if (di == dst[i].len) {
      i++;
      di = 0;
    }
    if (sj == src[j].len) {
      j++;
      sj = 0;
    }
  }
}

/* Resolves an SGE list of qp's device and PD into spans; false if a key,
 * range or the needed access is wrong. */
static bool fake_sge_spans(struct fake_qp *qp, const struct ibv_sge *sge,
                           int n, int need, struct fake_span *out)
    HO_REQUIRES(fake_lock)
{
  for (int i = 0; i < n; i++) {
    struct fake_mr *mr;
    out[i].p = (uint8_t *)(uintptr_t)sge[i].addr;
    out[i].len = sge[i].length;
    if (sge[i].length == 0)
      continue;
    mr = fake_mr_by_key(qp->ctx->dev, sge[i].lkey, false);
    if (!mr || mr->pd != qp->pd || (mr->access & need) != need ||
        !fake_in_range((uintptr_t)mr->ibmr.addr, mr->ibmr.length,
                       sge[i].addr, sge[i].length))
      return false;
  }
  return true;
}

/* The requester's local side of w: the sink of a READ needs LOCAL_WRITE. */
bool fake_local_spans(struct fake_qp *qp, struct fake_swqe *w,
                      struct fake_span *out, int *n)
    HO_REQUIRES(fake_lock)
{
  if (w->flags & IBV_SEND_INLINE) {
    out[0].p = w->inl;
    out[0].len = w->inl_len;
    *n = 1;
    return true;
  }
  *n = w->num_sge;
  return fake_sge_spans(qp, w->sge, w->num_sge,
                        w->opcode == IBV_WR_RDMA_READ ? IBV_ACCESS_LOCAL_WRITE
                                                      : 0,
                        out);
}

/* The window of dev whose current rkey is rkey, bound or not. */
static struct fake_mw *fake_mw_by_rkey(struct fake_dev *d, uint32_t rkey)
    HO_REQUIRES(fake_lock)
{
  for (struct fake_link *l = fab.mws.next; l != &fab.mws; l = l->next) {
    struct fake_mw *mw = fake_container(l, struct fake_mw, link);
    if (mw->key_now == rkey && mw->pd->ctx->dev == d)
      return mw;
  }
  return NULL;
}

/* A bound window reached through peer: only through the QP it was bound
 * on (type 2B), within its range, with its access. */
static bool fake_mw_ok(struct fake_qp *peer, uint32_t rkey, uint64_t addr,
                       uint64_t len, int need) HO_REQUIRES(fake_lock)
{
  struct fake_mw *mw = fake_mw_by_rkey(peer->ctx->dev, rkey);
  return mw && mw->bound && mw->qp == peer && (mw->access & need) &&
         fake_in_range(mw->addr, mw->len, addr, len);
}

/* Whether peer lets len bytes at addr under rkey be accessed with need. */
static bool fake_remote_ok(struct fake_qp *peer, uint32_t rkey, uint64_t addr,
                           uint64_t len, int need) HO_REQUIRES(fake_lock)
{
  struct fake_mr *mr;
  bool ok;
  /* As rxe (check_op_valid, then check_rkey): the QP's access first, even
   * for a zero-length operation, which then needs no key (IBTA C9-88). */
  if (len == 0 && (peer->attr.qp_access_flags & need))
    return true;
  if (!(peer->attr.qp_access_flags & need)) {
    ok = false;
  } else if ((mr = fake_mr_by_key(peer->ctx->dev, rkey, true))) {
    ok = mr->pd == peer->pd && (mr->access & need) &&
         fake_in_range((uintptr_t)mr->ibmr.addr, mr->ibmr.length, addr, len);
  } else {
    ok = fake_mw_ok(peer, rkey, addr, len, need);
  }
  if (!ok)
    peer->ctx->dev->stats.remote_access_errors++;
  return ok;
}

bool fake_port_has_gid(const struct fake_port *p, const union ibv_gid *gid,
                       enum fake_gid_type t)
{
  for (int i = 0; i < FAKE_GID_TABLE_LEN; i++)
    if (p->gid_type[i] == t && memcmp(p->gid[i].raw, gid->raw, 16) == 0)
      return true;
  return false;
}

/* The QP that would answer qp's requests now, or NULL (dropped): the path
 * is up, the dgid is on the peer's port with the sgid's type, and the peer
 * is in RTR/RTS and connected back to qp's number and sgid. */
static struct fake_qp *fake_route(struct fake_qp *qp) HO_REQUIRES(fake_lock)
{
  const struct ibv_global_route *grh = &qp->attr.ah_attr.grh;
  struct fake_port *sp = fake_qp_port(qp), *pp;
  struct fake_qp *peer;
  if (!sp || sp->state != IBV_PORT_ACTIVE ||
      grh->sgid_index >= FAKE_GID_TABLE_LEN ||
      sp->gid_type[grh->sgid_index] == FAKE_GID_NONE)
    return NULL;
  peer = fake_qp_by_num(qp->attr.dest_qp_num);
  pp = peer ? fake_qp_port(peer) : NULL;
  if (!pp || pp->state != IBV_PORT_ACTIVE ||
      !fake_port_has_gid(pp, &grh->dgid, sp->gid_type[grh->sgid_index]))
    return NULL;
  if (peer->attr.qp_state != IBV_QPS_RTR && peer->attr.qp_state != IBV_QPS_RTS)
    return NULL;
  if (peer->attr.dest_qp_num != qp->ibqp.qp_num ||
      memcmp(peer->attr.ah_attr.grh.dgid.raw, sp->gid[grh->sgid_index].raw,
             16) != 0)
    return NULL;
  return peer;
}

bool fake_take_drop(struct fake_dev *d) HO_REQUIRES(fake_lock)
{
  unsigned *n = d->fault.drop_next ? &d->fault.drop_next
                                   : &fab.fault.drop_next;
  if (*n == 0)
    return false;
  (*n)--;
  return true;
}

static struct fake_result fake_fail(enum ibv_wc_status st,
                                    struct fake_qp *peer_err)
{
  return (struct fake_result){
      .kind = FAKE_R_FAIL, .status = st, .peer_err = peer_err};
}

static struct fake_result fake_rnr(struct fake_qp *peer)
{
  return (struct fake_result){.kind = FAKE_R_RNR,
                              .rnr_timer = peer->attr.min_rnr_timer};
}

/* Bytes of a WRITE_WITH_IMM placed before its last packet met RNR. */
static uint64_t fake_rnr_placed(enum ibv_mtu path_mtu, uint64_t len)
{
  uint64_t mtu = 128u << path_mtu;
  return len > mtu ? (len - 1) / mtu * mtu : 0;
}

static struct fake_result fake_do_write(const struct fake_req *rq,
                                        struct fake_qp *peer)
    HO_REQUIRES(fake_lock)
{
  struct fake_span dst = {(uint8_t *)(uintptr_t)rq->raddr, rq->len};
  bool imm = rq->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
  struct fake_result r = {.kind = FAKE_R_OK};
  if (!fake_remote_ok(peer, rq->rkey, rq->raddr, rq->len,
                      IBV_ACCESS_REMOTE_WRITE))
    return fake_fail(IBV_WC_REM_ACCESS_ERR, peer);
  if (imm && peer->rq_count == 0) {
    fake_copy(&dst, 1, rq->loc, rq->nloc, fake_rnr_placed(rq->mtu, rq->len));
    return fake_rnr(peer);
  }
  fake_copy(&dst, 1, rq->loc, rq->nloc, rq->len);
  rq->src->stats.bytes_written += rq->len;
  peer->ctx->dev->stats.bytes_received += rq->len;
  if (imm && fake_rq_complete(peer, IBV_WC_RECV_RDMA_WITH_IMM,
                              IBV_WC_SUCCESS, rq->len, &rq->imm,
                              rq->src_qpn) != IBV_WC_SUCCESS)
    r.peer_err = peer;
  return r;
}

static struct fake_result fake_do_read(const struct fake_req *rq,
                                       struct fake_qp *peer)
    HO_REQUIRES(fake_lock)
{
  struct fake_span src = {(uint8_t *)(uintptr_t)rq->raddr, rq->len};
  if (rq->reads_out > peer->attr.max_dest_rd_atomic)
    return fake_fail(IBV_WC_REM_INV_REQ_ERR, peer);
  if (!fake_remote_ok(peer, rq->rkey, rq->raddr, rq->len,
                      IBV_ACCESS_REMOTE_READ))
    return fake_fail(IBV_WC_REM_ACCESS_ERR, peer);
  fake_copy(rq->loc, rq->nloc, &src, 1, rq->len);
  rq->src->stats.bytes_read += rq->len;
  peer->ctx->dev->stats.bytes_served += rq->len;
  return (struct fake_result){.kind = FAKE_R_OK};
}

static struct fake_result fake_do_send(const struct fake_req *rq,
                                       struct fake_qp *peer)
    HO_REQUIRES(fake_lock)
{
  struct fake_span rs[FAKE_MAX_SGE];
  struct fake_rwqe *rw = &peer->rq[peer->rq_head];
  bool imm = rq->opcode == IBV_WR_SEND_WITH_IMM;
  bool inv = rq->opcode == IBV_WR_SEND_WITH_INV;
  struct fake_mw *mw = inv ? fake_mw_by_rkey(peer->ctx->dev, rq->imm) : NULL;
  struct fake_result r = {.kind = FAKE_R_OK};
  if (peer->rq_count == 0)
    return fake_rnr(peer);
  if (inv && !(mw && mw->bound && mw->pd == peer->pd)) {
    fake_rq_complete(peer, IBV_WC_RECV, IBV_WC_LOC_PROT_ERR, 0, NULL,
                     rq->src_qpn);
    return fake_fail(IBV_WC_REM_OP_ERR, peer);
  }
  if (!fake_sge_spans(peer, rw->sge, rw->num_sge, IBV_ACCESS_LOCAL_WRITE,
                      rs)) {
    fake_rq_complete(peer, IBV_WC_RECV, IBV_WC_LOC_PROT_ERR, 0, NULL,
                     rq->src_qpn);
    return fake_fail(IBV_WC_REM_OP_ERR, peer);
  }
  if (fake_span_total(rs, rw->num_sge) < rq->len) {
    fake_rq_complete(peer, IBV_WC_RECV, IBV_WC_LOC_LEN_ERR, 0, NULL,
                     rq->src_qpn);
    return fake_fail(IBV_WC_REM_INV_REQ_ERR, peer);
  }
  fake_copy(rs, rw->num_sge, rq->loc, rq->nloc, rq->len);
  rq->src->stats.bytes_sent += rq->len;
  peer->ctx->dev->stats.bytes_received += rq->len;
  if (mw) {
    mw->bound = false;
    peer->ctx->dev->stats.mw_invalidations++;
  }
  if (fake_rq_complete_inv(peer, IBV_WC_RECV, IBV_WC_SUCCESS, rq->len,
                           imm ? &rq->imm : NULL, rq->src_qpn,
                           inv ? &rq->imm : NULL) != IBV_WC_SUCCESS)
    r.peer_err = peer;
  return r;
}

struct fake_result fake_execute(const struct fake_req *rq,
                                struct fake_qp *peer) HO_REQUIRES(fake_lock)
{
  switch (rq->opcode) {
  case IBV_WR_RDMA_READ:
    return fake_do_read(rq, peer);
  case IBV_WR_RDMA_WRITE:
  case IBV_WR_RDMA_WRITE_WITH_IMM:
    return fake_do_write(rq, peer);
  default:
    return fake_do_send(rq, peer);
  }
}

/* One attempt of the head WR at the responder. */
static struct fake_result fake_deliver(struct fake_qp *qp,
                                       struct fake_swqe *w)
    HO_REQUIRES(fake_lock)
{
  struct fake_span loc[FAKE_MAX_SGE];
  struct fake_qp *peer;
  int nloc = 0;
  if (!fake_local_spans(qp, w, loc, &nloc))
    return fake_fail(IBV_WC_LOC_PROT_ERR, NULL);
  peer = fake_route(qp);
  if (!peer || fake_take_drop(qp->ctx->dev))
    return (struct fake_result){.kind = FAKE_R_DROP};
  struct fake_req rq = {.opcode = w->opcode, .raddr = w->raddr,
                        .len = w->len, .rkey = w->rkey, .imm = w->imm,
                        .src_qpn = qp->ibqp.qp_num,
                        .mtu = qp->attr.path_mtu,
                        .reads_out = qp->reads_out, .src = qp->ctx->dev,
                        .loc = loc, .nloc = nloc};
  return fake_execute(&rq, peer);
}

/* ---- the send queue engine --------------------------------------------- */

/* IBTA min_rnr_timer encoding, in microseconds. */
const uint32_t fake_rnr_us[32] = {
    655360, 10,    20,    30,    40,    60,     80,     120,
    160,    240,   320,   480,   640,   960,    1280,   1920,
    2560,   3840,  5120,  7680,  10240, 15360,  20480,  30720,
    40960,  61440, 81920, 122880, 163840, 245760, 327680, 491520};

uint64_t fake_retry_at(struct fake_qp *qp, uint64_t t_tx)
    HO_REQUIRES(fake_lock)
{
  if (qp->attr.timeout == 0)
    return UINT64_MAX; /* no transport timer */
  return t_tx + fake_scaled(4096ull << qp->attr.timeout);
}

uint64_t fake_delay_ns(struct fake_dev *d) HO_REQUIRES(fake_lock)
{
  return ((uint64_t)d->fault.delay_ms + fab.fault.delay_ms) * 1000000u;
}

void fake_swqe_done(struct fake_swqe *w, enum ibv_wc_status st)
{
  w->phase = FAKE_DONE;
  w->status = st;
}

static void fake_swqe_transmit(struct fake_qp *qp, struct fake_swqe *w,
                                uint64_t now) HO_REQUIRES(fake_lock)
{
  if (w->opcode == IBV_WR_RDMA_READ) {
    if (qp->attr.max_rd_atomic == 0) {
      fake_swqe_done(w, IBV_WC_LOC_QP_OP_ERR);
      return;
    }
    qp->reads_out++;
    if (qp->reads_out > qp->stats.max_reads_in_flight)
      qp->stats.max_reads_in_flight = qp->reads_out;
    if (qp->reads_out > qp->ctx->dev->stats.max_reads_out)
      qp->ctx->dev->stats.max_reads_out = qp->reads_out;
  }
  w->phase = FAKE_SENT;
  w->t_tx = now;
  w->t_arrive = now + fake_delay_ns(qp->ctx->dev);
  qp->ctx->dev->stats.requests++;
  if (fab.psn)
    fake_psn_transmit(qp, w, now);
}

/* Everything transmitted from the i-th WR on goes back to QUEUED
 * (go-back-N). */
void fake_sq_untransmit_from(struct fake_qp *qp, unsigned i)
{
  for (; i < qp->sq_count; i++) {
    struct fake_swqe *w = fake_sq_at(qp, i);
    if (w->phase != FAKE_SENT)
      continue;
    w->phase = FAKE_QUEUED;
    if (w->opcode == IBV_WR_RDMA_READ)
      qp->reads_out--;
  }
}

static void fake_swqe_wait(struct fake_qp *qp, struct fake_swqe *w,
                           const struct fake_result *r, uint64_t now)
    HO_REQUIRES(fake_lock)
{
  struct fake_dev *d = qp->ctx->dev;
  fake_sq_untransmit_from(qp, 1);
  w->phase = FAKE_WAIT;
  if (r->kind == FAKE_R_RNR) {
    w->wait = FAKE_WAIT_RNR;
    w->t_next = now + fake_scaled(fake_rnr_us[r->rnr_timer & 31] * 1000ull);
    d->stats.rnr_events++;
    qp->stats.rnr_events++;
    return;
  }
  w->wait = FAKE_WAIT_ACK;
  w->t_next = fake_retry_at(qp, w->t_tx);
  d->stats.requests_dropped++;
  qp->stats.drops++;
}

static void fake_swqe_arrive(struct fake_qp *qp, struct fake_swqe *w,
                             uint64_t now) HO_REQUIRES(fake_lock)
{
  struct fake_result r = fake_deliver(qp, w);
  if (w->opcode == IBV_WR_RDMA_READ)
    qp->reads_out--;
  if (r.kind == FAKE_R_OK)
    fake_swqe_done(w, IBV_WC_SUCCESS);
  else if (r.kind == FAKE_R_FAIL)
    fake_swqe_done(w, r.status);
  else
    fake_swqe_wait(qp, w, &r, now);
  if (r.peer_err && r.peer_err->attr.qp_state != IBV_QPS_ERR)
    fake_qp_to_err(r.peer_err);
}

/* The head's timer fired: retry, or fail when the retries are used up. */
void fake_swqe_timer(struct fake_qp *qp, struct fake_swqe *w, uint64_t now) HO_REQUIRES(fake_lock)
{
  bool rnr = w->wait == FAKE_WAIT_RNR;
  int *left = rnr ? &w->rnr_left : &w->retries_left;
  bool forever = *left == FAKE_RETRY_FOREVER &&
                 (rnr || fab.retry == FAKE_RETRY_RXE);
  if (*left == 0) {
    fake_swqe_done(w, rnr ? IBV_WC_RNR_RETRY_EXC_ERR : IBV_WC_RETRY_EXC_ERR);
    return;
  }
  if (!forever)
    (*left)--;
  if (!rnr) {
    qp->ctx->dev->stats.retries++;
    qp->stats.retries++;
  }
  fake_swqe_transmit(qp, w, now);
}

static bool fake_may_transmit(const struct fake_qp *qp,
                              const struct fake_swqe *w)
{
  if ((w->flags & IBV_SEND_FENCE) && qp->reads_out > 0)
    return false;
  return w->opcode != IBV_WR_RDMA_READ || qp->attr.max_rd_atomic == 0 ||
         qp->reads_out < qp->attr.max_rd_atomic;
}

static bool fake_is_local_op(enum ibv_wr_opcode op)
{
  return op == IBV_WR_BIND_MW || op == IBV_WR_LOCAL_INV;
}

static struct fake_mr *fake_mr_live(const struct ibv_mr *ibmr)
    HO_REQUIRES(fake_lock)
{
  return FAKE_FIND(&fab.mrs, ibmr, struct fake_mr);
}

/* IBV_WR_BIND_MW of a type-2 window (see MEMORY WINDOWS). */
static enum ibv_wc_status fake_bind_mw(struct fake_qp *qp,
                                       const struct fake_swqe *w)
    HO_REQUIRES(fake_lock)
{
  struct fake_mw *mw = FAKE_FIND(&fab.mws, w->mw, struct fake_mw);
  const struct ibv_mw_bind_info *b = &w->bind;
  struct fake_mr *mr = fake_mr_live(b->mr);
  int remote = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
               IBV_ACCESS_REMOTE_ATOMIC;
  if (!mw || mw->pd != qp->pd || mw->bound || w->mw_old != mw->key_now ||
      (w->rkey & ~0xffu) != (mw->key_now & ~0xffu))
    return IBV_WC_MW_BIND_ERR;
  if (!mr || mr->pd != qp->pd || !(mr->access & IBV_ACCESS_MW_BIND) ||
      (b->mw_access_flags & ~remote) || b->length == 0 ||
      !fake_in_range((uintptr_t)mr->ibmr.addr, mr->ibmr.length, b->addr,
                     b->length))
    return IBV_WC_MW_BIND_ERR;
  if ((b->mw_access_flags & IBV_ACCESS_REMOTE_WRITE) &&
      !(mr->access & IBV_ACCESS_LOCAL_WRITE))
    return IBV_WC_MW_BIND_ERR;
  mw->bound = true;
  mw->qp = qp;
  mw->key_now = w->rkey; /* ibmw.rkey is left to the consumer, as rxe */
  mw->addr = b->addr;
  mw->len = b->length;
  mw->access = (int)b->mw_access_flags;
  qp->ctx->dev->stats.mw_binds++;
  return IBV_WC_SUCCESS;
}

/* IBV_WR_LOCAL_INV: the key (in imm) names a bound window of the QP's PD. */
static enum ibv_wc_status fake_local_inv(struct fake_qp *qp,
                                         const struct fake_swqe *w)
    HO_REQUIRES(fake_lock)
{
  struct fake_mw *mw = fake_mw_by_rkey(qp->ctx->dev, w->imm);
  if (!mw || !mw->bound || mw->pd != qp->pd)
    return IBV_WC_LOC_PROT_ERR;
  mw->bound = false;
  qp->ctx->dev->stats.mw_invalidations++;
  return IBV_WC_SUCCESS;
}

/* Transmits the first QUEUED WR if everything before it is in flight. A
 * local operation (bind, invalidate) is carried out instead. */
static bool fake_sq_transmit_next(struct fake_qp *qp, uint64_t now)
    HO_REQUIRES(fake_lock)
{
  for (unsigned i = 0; i < qp->sq_count; i++) {
    struct fake_swqe *w = fake_sq_at(qp, i);
    if (w->phase == FAKE_SENT)
      continue;
    if (w->phase != FAKE_QUEUED || !fake_may_transmit(qp, w))
      return false;
    if (fake_is_local_op(w->opcode))
      fake_swqe_done(w, w->opcode == IBV_WR_BIND_MW ? fake_bind_mw(qp, w)
                                                    : fake_local_inv(qp, w));
    else
      fake_swqe_transmit(qp, w, now);
    return true;
  }
  return false;
}

/* One step of qp's send queue; false when nothing can happen now. */
static bool fake_sq_step(struct fake_qp *qp, uint64_t now)
    HO_REQUIRES(fake_lock)
{
  struct fake_swqe *w;
  if (qp->sq_count == 0)
    return false;
  w = fake_sq_at(qp, 0);
  switch (w->phase) {
  case FAKE_DONE:
    fake_sq_retire(qp);
    return true;
  case FAKE_WAIT:
    if (now < w->t_next)
      return false;
    fake_swqe_timer(qp, w, now);
    return true;
  case FAKE_SENT:
    if (fab.psn) {
      if (fake_psn_timer(qp, w, now))
        return true;
    } else if (now >= w->t_arrive) {
      fake_swqe_arrive(qp, w, now);
      return true;
    }
    break;
  case FAKE_QUEUED:
    break;
  }
  return fake_sq_transmit_next(qp, now);
}

static bool fake_qp_run(struct fake_qp *qp, uint64_t now)
    HO_REQUIRES(fake_lock)
{
  bool any = false;
  unsigned budget = 8 * qp->sq_count + 16;
  while (qp->attr.qp_state == IBV_QPS_RTS && budget-- > 0 &&
         fake_sq_step(qp, now))
    any = true;
  return any;
}

static void fake_progress_locked(void) HO_REQUIRES(fake_lock)
{
  uint64_t now = fake_now();
  int rounds = fab.psn ? 1024 : 4; /* packets bounce between QPs */
  for (int round = 0; round < rounds; round++) {
    bool any = fab.psn && fake_psn_deliver(now);
    for (struct fake_link *l = fab.qps.next; l != &fab.qps; l = l->next)
      any |= fake_qp_run(fake_container(l, struct fake_qp, link), now);
    if (!any)
      break;
  }
}

/* Every verb enters here: lock, count, run the fabric, then the injected
 * failure if one is due (0 otherwise). The lock is held on return. */
static int fake_enter(enum fake_verb v) HO_ACQUIRE(fake_lock)
{
  struct fake_inject *in;
  ho_mutex_lock(&fake_lock);
  fake_init_locked();
  in = &fab.inject[v];
  in->calls++;
  fake_progress_locked();
  if (in->count == 0)
    return 0;
  if (in->skip > 0) {
    in->skip--;
    return 0;
  }
  in->count--;
  return in->err;
}

static void fake_leave(void) HO_RELEASE(fake_lock)
{
  ho_mutex_unlock(&fake_lock);
}

/* Control calls: lock and make sure the fabric exists. */
static void fake_control_lock(void) HO_ACQUIRE(fake_lock)
{
  ho_mutex_lock(&fake_lock);
  fake_init_locked();
}

/* ---- devices ----------------------------------------------------------- */

static struct ibv_device **fake_get_device_list(int *num)
{
  struct ibv_device **list = NULL;
  int err = fake_enter(FV_get_device_list);
  if (!err) {
    list = calloc((size_t)fab.n_dev + 1, sizeof *list);
    err = list ? 0 : ENOMEM;
  }
  for (int i = 0; list && i < fab.n_dev; i++)
    list[i] = &fab.dev[i]->ibdev;
  if (list && num)
    *num = fab.n_dev;
  fake_leave();
  if (err)
    errno = err;
  return list;
}

static void fake_free_device_list(struct ibv_device **list)
{
  fake_enter(FV_free_device_list);
  fake_leave();
  free(list);
}

static const char *fake_get_device_name(struct ibv_device *d)
{
  const char *name = NULL;
  fake_enter(FV_get_device_name);
  if (fake_dev_live(d))
    name = d->name;
  fake_leave();
  return name;
}

static int fake_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
  struct fake_cq *cq;
  int err = fake_enter(FV_req_notify_cq);
  cq = err ? NULL : FAKE_FIND(&fab.cqs, ibcq, struct fake_cq);
  if (!err && !cq)
    err = EINVAL;
  if (!err && solicited_only)
    err = EOPNOTSUPP; /* the library arms for every completion */
  if (!err) {
    /* Entries already in the CQ raise nothing: only the next one. */
    cq->armed = true;
    cq->ctx->dev->stats.cq_arms++;
  }
  fake_leave();
  return err;
}

static int fake_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
                          struct ibv_send_wr **bad);
static int fake_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
                          struct ibv_recv_wr **bad);
static int fake_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc);
static struct ibv_mw *fake_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type);
static int fake_dealloc_mw(struct ibv_mw *ibmw);

static struct fake_ctx *fake_ctx_new(struct fake_dev *d) HO_REQUIRES(fake_lock)
{
  struct fake_ctx *c = calloc(1, sizeof *c);
  if (!c)
    return NULL;
  c->dev = d;
  c->ibctx.device = &d->ibdev;
  c->ibctx.cmd_fd = -1;
  c->ibctx.async_fd = -1;
  c->ibctx.num_comp_vectors = 1;
  c->ibctx.ops.post_send = fake_post_send;
  c->ibctx.ops.post_recv = fake_post_recv;
  c->ibctx.ops.poll_cq = fake_poll_cq;
  c->ibctx.ops.req_notify_cq = fake_req_notify_cq;
  c->ibctx.ops.alloc_mw = fake_alloc_mw;
  c->ibctx.ops.dealloc_mw = fake_dealloc_mw;
  pthread_mutex_init(&c->ibctx.mutex, NULL);
  fake_list_add(&fab.ctxs, &c->link);
  fab.n_live++;
  return c;
}

static struct ibv_context *fake_open_device(struct ibv_device *ibdev)
{
  struct fake_ctx *c = NULL;
  struct fake_dev *d;
  int err = fake_enter(FV_open_device);
  d = err ? NULL : fake_dev_live(ibdev);
  if (!err && !d)
    err = ENODEV;
  if (!err && !(c = fake_ctx_new(d)))
    err = ENOMEM;
  fake_leave();
  if (err)
    errno = err;
  return c ? &c->ibctx : NULL;
}

static int fake_close_device(struct ibv_context *ibctx)
{
  struct fake_ctx *c;
  int err = fake_enter(FV_close_device);
  c = err ? NULL : FAKE_FIND(&fab.ctxs, ibctx, struct fake_ctx);
  if (!err && !c)
    err = EINVAL;
  if (!err && (c->n_pd || c->n_cq || c->n_qp || c->n_ch))
    err = EBUSY;
  if (!err) {
    fake_list_del(&c->link);
    fab.n_live--;
    pthread_mutex_destroy(&c->ibctx.mutex);
    free(c);
  }
  fake_leave();
  if (err)
    errno = err;
  return err ? -1 : 0;
}

static void fake_fill_device_attr(const struct fake_dev *d,
                                  struct ibv_device_attr *a)
{
  const struct fake_device_cfg *c = &d->cfg;
  memset(a, 0, sizeof *a);
  snprintf(a->fw_ver, sizeof a->fw_ver, "0.%d.0-fake", d->index);
  a->node_guid = htobe64(0x02000000fe000000ull | (uint64_t)d->index);
  a->sys_image_guid = a->node_guid;
  a->max_mr_size = UINT64_MAX;
  a->page_size_cap = 0xfffff000u;
  a->vendor_id = c->vendor_id;
  a->vendor_part_id = c->vendor_part_id;
  a->max_qp = 1 << 17;
  a->max_qp_wr = c->max_qp_wr;
  a->device_cap_flags =
      IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT;
  if (c->mem_windows) {
    a->device_cap_flags |= IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B;
    a->max_mw = 1 << 16;
  }
  a->max_sge = c->max_sge;
  a->max_sge_rd = c->max_sge;
  a->max_cq = 1 << 16;
  a->max_cqe = c->max_cqe;
  a->max_mr = 1 << 20;
  a->max_pd = 1 << 16;
  a->max_qp_rd_atom = c->max_qp_rd_atom;
  a->max_qp_init_rd_atom = c->max_qp_init_rd_atom;
  a->max_res_rd_atom = c->max_qp_rd_atom * a->max_qp;
  a->atomic_cap = IBV_ATOMIC_NONE;
  a->max_pkeys = 1;
  a->local_ca_ack_delay = 15;
  a->phys_port_cnt = c->phys_port_cnt;
}

static int fake_query_device(struct ibv_context *ibctx,
                             struct ibv_device_attr *a)
{
  struct fake_ctx *c;
  int err = fake_enter(FV_query_device);
  c = err ? NULL : FAKE_FIND(&fab.ctxs, ibctx, struct fake_ctx);
  if (!err && (!c || !a))
    err = EINVAL;
  if (!err)
    fake_fill_device_attr(c->dev, a);
  fake_leave();
  return err;
}

static void fake_fill_port_attr(const struct fake_port *p,
                                struct ibv_port_attr *a)
{
  memset(a, 0, sizeof *a);
  a->state = p->state;
  a->max_mtu = IBV_MTU_4096;
  a->active_mtu = p->active_mtu;
  a->gid_tbl_len = FAKE_GID_TABLE_LEN;
  a->max_msg_sz = (uint32_t)FAKE_MAX_MSG;
  a->pkey_tbl_len = 1;
  a->lid = p->lid;
  a->max_vl_num = 1;
  a->active_width = 2;  /* 4X */
  a->active_speed = 32; /* EDR */
  a->phys_state = p->state == IBV_PORT_ACTIVE ? 5 : 3; /* LinkUp : Disabled */
  a->link_layer = IBV_LINK_LAYER_ETHERNET;
}

static int fake_query_port(struct ibv_context *ibctx, uint8_t port,
                           struct ibv_port_attr *a)
{
  struct fake_ctx *c;
  struct fake_port *p = NULL;
  int err = fake_enter(FV_query_port);
  c = err ? NULL : FAKE_FIND(&fab.ctxs, ibctx, struct fake_ctx);
  if (c)
    p = fake_dev_port(c->dev, port);
  if (!err && (!p || !a))
    err = EINVAL;
  if (!err)
    fake_fill_port_attr(p, a);
  fake_leave();
  return err;
}

static int fake_query_gid(struct ibv_context *ibctx, uint8_t port, int index,
                          union ibv_gid *gid)
{
  struct fake_ctx *c;
  struct fake_port *p = NULL;
  int err = fake_enter(FV_query_gid);
  c = err ? NULL : FAKE_FIND(&fab.ctxs, ibctx, struct fake_ctx);
  if (c)
    p = fake_dev_port(c->dev, port);
  if (!err && (!p || !gid || index < 0 || index >= FAKE_GID_TABLE_LEN))
    err = EINVAL;
  if (!err)
    *gid = p->gid[index];
  fake_leave();
  if (err)
    errno = err;
  return err ? -1 : 0;
}

/* ---- PDs and MRs ------------------------------------------------------- */

static struct ibv_pd *fake_alloc_pd(struct ibv_context *ibctx)
{
  struct fake_ctx *c;
  struct fake_pd *pd = NULL;
  int err = fake_enter(FV_alloc_pd);
  c = err ? NULL : FAKE_FIND(&fab.ctxs, ibctx, struct fake_ctx);
  if (!err && !c)
    err = EINVAL;
  if (!err && !(pd = calloc(1, sizeof *pd)))
    err = ENOMEM;
  if (!err) {
    pd->ctx = c;
    pd->ibpd.context = ibctx;
    pd->ibpd.handle = fab.next_handle++;
    c->n_pd++;
    fake_list_add(&fab.pds, &pd->link);
    fab.n_live++;
  }
  fake_leave();
  if (err)
    errno = err;
  return pd ? &pd->ibpd : NULL;
}

static int fake_dealloc_pd(struct ibv_pd *ibpd)
{
  struct fake_pd *pd;
  int err = fake_enter(FV_dealloc_pd);
  pd = err ? NULL : FAKE_FIND(&fab.pds, ibpd, struct fake_pd);
  if (!err && !pd)
    err = EINVAL;
  if (!err && (pd->n_mr || pd->n_qp || pd->n_mw))
    err = EBUSY;
  if (!err) {
    pd->ctx->n_pd--;
    fake_list_del(&pd->link);
    fab.n_live--;
    free(pd);
  }
  fake_leave();
  return err;
}

/* The kernel's rules: known bits only, remote write needs local write,
 * no ODP (as rxe). Optional-range bits (relaxed ordering) are accepted. */
static int fake_mr_access_check(int access)
{
  int known = FAKE_MR_ACCESS | IBV_ACCESS_OPTIONAL_RANGE;
  if (access & IBV_ACCESS_ON_DEMAND)
    return EOPNOTSUPP;
  if (access & ~known)
    return EINVAL;
  if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
      !(access & IBV_ACCESS_LOCAL_WRITE))
    return EINVAL;
  return 0;
}

struct fake_mr_args {
  void *addr;
  size_t len;
  int access;
  bool dmabuf;
  int fd;
  uint64_t offset;
};

static int fake_mr_args_check(const struct fake_mr_args *a)
{
  int err = fake_mr_access_check(a->access);
  if (err)
    return err;
  if (a->len == 0 || a->len > UINTPTR_MAX - (uintptr_t)a->addr)
    return EINVAL;
  if (!a->addr)
    return EFAULT;
  if (a->dmabuf && a->fd < 0)
    return EBADF;
  return 0;
}

static struct fake_mr *fake_mr_new(struct fake_pd *pd,
                                   const struct fake_mr_args *a)
    HO_REQUIRES(fake_lock)
{
  struct fake_mr *mr = calloc(1, sizeof *mr);
  uint32_t k;
  if (!mr)
    return NULL;
  k = fab.next_key++;
  mr->pd = pd;
  mr->access = a->access;
  mr->dmabuf = a->dmabuf;
  mr->fd = a->fd;
  mr->offset = a->offset;
  mr->ibmr.context = pd->ibpd.context;
  mr->ibmr.pd = &pd->ibpd;
  mr->ibmr.addr = a->addr;
  mr->ibmr.length = a->len;
  mr->ibmr.handle = fab.next_handle++;
  /* Distinct lkey and rkey, never reused: a mix-up or a stale key fails. */
  mr->ibmr.lkey = (k << 8) | 0x11u;
  mr->ibmr.rkey = (k << 8) | 0x22u;
  pd->n_mr++;
  fake_list_add(&fab.mrs, &mr->link);
  fab.n_live++;
  return mr;
}

static struct ibv_mr *fake_reg(enum fake_verb v, struct ibv_pd *ibpd,
                               const struct fake_mr_args *a)
{
  struct fake_pd *pd;
  struct fake_mr *mr = NULL;
  int err = fake_enter(v);
  if (!err && v == FV_reg_dmabuf_mr && !fab.dmabuf)
    err = EOPNOTSUPP;
  pd = err ? NULL : FAKE_FIND(&fab.pds, ibpd, struct fake_pd);
  if (!err && !pd)
    err = EINVAL;
  if (!err)
    err = fake_mr_args_check(a);
  if (!err && !(mr = fake_mr_new(pd, a)))
    err = ENOMEM;
  fake_leave();
  if (err)
    errno = err;
  return mr ? &mr->ibmr : NULL;
}

static struct ibv_mr *fake_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
                                  int access)
{
  struct fake_mr_args a = {.addr = addr, .len = len, .access = access,
                           .fd = -1};
  return fake_reg(FV_reg_mr, pd, &a);
}

static struct ibv_mr *fake_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
                                         size_t len, uint64_t iova, int fd,
                                         int access)
{
  struct fake_mr_args a = {.addr = (void *)(uintptr_t)iova, .len = len,
                           .access = access, .dmabuf = true, .fd = fd,
                           .offset = offset};
  return fake_reg(FV_reg_dmabuf_mr, pd, &a);
}

static int fake_dereg_mr(struct ibv_mr *ibmr)
{
  struct fake_mr *mr;
  int err = fake_enter(FV_dereg_mr);
  mr = err ? NULL : FAKE_FIND(&fab.mrs, ibmr, struct fake_mr);
  if (!err && !mr)
    err = EINVAL;
  if (!err) {
    mr->pd->n_mr--;
    fake_list_del(&mr->link);
    fab.n_live--;
    free(mr);
  }
  fake_leave();
  return err;
}

/* ---- memory windows ----------------------------------------------------- */

static struct ibv_mw *fake_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type)
{
  struct fake_pd *pd;
  struct fake_mw *mw = NULL;
  int err = fake_enter(FV_alloc_mw);
  pd = err ? NULL : FAKE_FIND(&fab.pds, ibpd, struct fake_pd);
  if (!err && !pd)
    err = EINVAL;
  if (!err && (!pd->ctx->dev->cfg.mem_windows || type != IBV_MW_TYPE_2))
    err = EOPNOTSUPP;
  if (!err && !(mw = calloc(1, sizeof *mw)))
    err = ENOMEM;
  if (!err) {
    mw->pd = pd;
    mw->ibmw.context = ibpd->context;
    mw->ibmw.pd = ibpd;
    mw->ibmw.type = type;
    mw->ibmw.handle = fab.next_handle++;
    mw->ibmw.rkey = (fab.next_key++ << 8) | 0x33u;
    mw->key_now = mw->ibmw.rkey;
    pd->n_mw++;
    fake_list_add(&fab.mws, &mw->link);
    fab.n_live++;
  }
  fake_leave();
  if (err)
    errno = err;
  return mw ? &mw->ibmw : NULL;
}

static int fake_dealloc_mw(struct ibv_mw *ibmw)
{
  struct fake_mw *mw;
  int err = fake_enter(FV_dealloc_mw);
  mw = err ? NULL : FAKE_FIND(&fab.mws, ibmw, struct fake_mw);
  if (!err && !mw)
    err = EINVAL;
  if (!err) {
    mw->pd->n_mw--;
    fake_list_del(&mw->link);
    fab.n_live--;
    free(mw);
  }
  fake_leave();
  return err;
}

/* ---- CQs --------------------------------------------------------------- */

static struct fake_cq *fake_cq_new(struct fake_ctx *c, int cqe, void *cq_ctx)
    HO_REQUIRES(fake_lock)
{
  struct fake_cq *cq = calloc(1, sizeof *cq);
  if (!cq)
    return NULL;
  cq->ring = calloc((size_t)cqe, sizeof *cq->ring);
  if (!cq->ring) {
    free(cq);
    return NULL;
  }
  cq->ctx = c;
  cq->cap = cqe;
  cq->ibcq.context = &c->ibctx;
  cq->ibcq.cq_context = cq_ctx;
  cq->ibcq.cqe = cqe;
  cq->ibcq.handle = fab.next_handle++;
  pthread_mutex_init(&cq->ibcq.mutex, NULL);
  pthread_cond_init(&cq->ibcq.cond, NULL);
  c->n_cq++;
  fake_list_add(&fab.cqs, &cq->link);
  fab.n_live++;
  return cq;
}

static struct ibv_cq *fake_create_cq(struct ibv_context *ibctx, int cqe,
                                     void *cq_ctx, struct ibv_comp_channel *ch,
                                     int vector)
{
  struct fake_ctx *c;
  struct fake_cq *cq = NULL;
  int err = fake_enter(FV_create_cq);
  c = err ? NULL : FAKE_FIND(&fab.ctxs, ibctx, struct fake_ctx);
  struct fake_channel *fch =
      err || !ch ? NULL : FAKE_FIND(&fab.chans, ch, struct fake_channel);
  if (!err && ch && (!fch || fch->ctx != c))
    err = EINVAL;
  if (!err && (!c || cqe < 1 || cqe > c->dev->cfg.max_cqe || vector != 0))
    err = EINVAL;
  if (!err && !(cq = fake_cq_new(c, cqe, cq_ctx)))
    err = ENOMEM;
  if (cq && fch) {
    cq->ch = fch;
    cq->ibcq.channel = &fch->ibch;
    fch->n_cq++;
  }
  fake_leave();
  if (err)
    errno = err;
  return cq ? &cq->ibcq : NULL;
}

static void fake_cq_free(struct fake_cq *cq) HO_REQUIRES(fake_lock)
{
  if (cq->ch) {
    /* Its events not read yet leave the channel with it, as in the
     * kernel: take their counts off the eventfd (it holds at least as
     * many, so these reads do not block). */
    uint64_t one;
    for (; cq->events > 0; cq->events--)
      if (read(cq->ch->ibch.fd, &one, sizeof one) != (ssize_t)sizeof one)
        break;
    cq->ch->n_cq--;
  }
  cq->ctx->n_cq--;
  fake_list_del(&cq->link);
  fab.n_live--;
  pthread_mutex_destroy(&cq->ibcq.mutex);
  pthread_cond_destroy(&cq->ibcq.cond);
  free(cq->ring);
  free(cq);
}

static int fake_destroy_cq(struct ibv_cq *ibcq)
{
  struct fake_cq *cq;
  int err = fake_enter(FV_destroy_cq);
  cq = err ? NULL : FAKE_FIND(&fab.cqs, ibcq, struct fake_cq);
  if (!err && !cq)
    err = EINVAL;
  if (!err && cq->n_qp)
    err = EBUSY;
  if (!err && cq->unacked) {
    /* libibverbs would wait forever for the acknowledgements. */
    cq->ctx->dev->stats.cq_destroy_unacked++;
    err = EBUSY;
  }
  if (!err)
    fake_cq_free(cq);
  fake_leave();
  return err;
}

static int fake_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
  struct fake_cq *cq;
  int rc;
  int err = fake_enter(FV_poll_cq);
  cq = err ? NULL : FAKE_FIND(&fab.cqs, ibcq, struct fake_cq);
  if (err)
    rc = -err;
  else if (!cq || n < 0 || (n > 0 && !wc))
    rc = -EINVAL;
  else if (cq->overflowed)
    rc = -EOVERFLOW;
  else
    rc = fake_cq_pop(cq, n, wc);
  fake_leave();
  return rc;
}

/* ---- completion channels ---------------------------------------------- */

static struct ibv_comp_channel *fake_create_comp_channel(struct ibv_context *ibctx)
{
  struct fake_channel *ch = NULL;
  struct fake_ctx *c;
  int err = fake_enter(FV_create_comp_channel);
  c = err ? NULL : FAKE_FIND(&fab.ctxs, ibctx, struct fake_ctx);
  if (!err && !c)
    err = EINVAL;
  if (!err && !(ch = calloc(1, sizeof *ch)))
    err = ENOMEM;
  if (!err) {
    ch->ibch.fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
    if (ch->ibch.fd < 0) {
      err = errno;
      free(ch);
      ch = NULL;
    }
  }
  if (!err) {
    ch->ibch.context = ibctx;
    ch->ctx = c;
    c->n_ch++;
    fake_list_add(&fab.chans, &ch->link);
    fab.n_live++;
  }
  fake_leave();
  if (err)
    errno = err;
  return ch ? &ch->ibch : NULL;
}

static void fake_channel_free(struct fake_channel *ch) HO_REQUIRES(fake_lock)
{
  ch->ctx->n_ch--;
  fake_list_del(&ch->link);
  fab.n_live--;
  close(ch->ibch.fd);
  free(ch);
}

static int fake_destroy_comp_channel(struct ibv_comp_channel *ibch)
{
  struct fake_channel *ch;
  int err = fake_enter(FV_destroy_comp_channel);
  ch = err ? NULL : FAKE_FIND(&fab.chans, ibch, struct fake_channel);
  if (!err && !ch)
    err = EINVAL;
  if (!err && ch->n_cq)
    err = EBUSY;
  if (!err)
    fake_channel_free(ch);
  fake_leave();
  return err; /* as libibverbs: the errno value (EBUSY with CQs on it) */
}

/* As libibverbs: reads one event from the fd (blocking unless the fd is
 * O_NONBLOCK; read before the fabric's lock is taken) and names its CQ. */
static int fake_get_cq_event(struct ibv_comp_channel *ibch,
                             struct ibv_cq **out, void **cq_ctx)
{
  uint64_t one;
  if (read(ibch->fd, &one, sizeof one) != (ssize_t)sizeof one)
    return -1; /* errno from read: EAGAIN when non-blocking and empty */
  struct fake_cq *cq = NULL;
  int err = fake_enter(FV_get_cq_event);
  struct fake_channel *ch =
      err ? NULL : FAKE_FIND(&fab.chans, ibch, struct fake_channel);
  if (!err && !ch)
    err = EINVAL;
  for (struct fake_link *l = fab.cqs.next; !err && l != &fab.cqs; l = l->next) {
    struct fake_cq *q = fake_container(l, struct fake_cq, link);
    if (q->ch == ch && q->events > 0) {
      cq = q;
      break;
    }
  }
  if (!err && !cq)
    err = EAGAIN; /* its CQ was destroyed meanwhile */
  if (!err) {
    cq->events--;
    cq->unacked++;
    *out = &cq->ibcq;
    if (cq_ctx)
      *cq_ctx = cq->ibcq.cq_context;
  }
  fake_leave();
  if (err)
    errno = err;
  return err ? -1 : 0;
}

static void fake_ack_cq_events(struct ibv_cq *ibcq, unsigned int nevents)
{
  fake_enter(FV_ack_cq_events);
  struct fake_cq *cq = FAKE_FIND(&fab.cqs, ibcq, struct fake_cq);
  if (cq && nevents <= cq->unacked)
    cq->unacked -= nevents;
  else if (cq)
    cq->ctx->dev->stats.cq_acks_bad++; /* more than were read */
  fake_leave();
}

/* ---- QPs --------------------------------------------------------------- */

static int fake_qp_caps_check(const struct fake_dev *d,
                              const struct ibv_qp_cap *cap)
{
  const struct fake_device_cfg *c = &d->cfg;
  if (cap->max_send_wr > (uint32_t)c->max_qp_wr ||
      cap->max_recv_wr > (uint32_t)c->max_qp_wr ||
      cap->max_send_sge > (uint32_t)c->max_sge ||
      cap->max_recv_sge > (uint32_t)c->max_sge ||
      cap->max_inline_data > c->max_inline)
    return EINVAL;
  return 0;
}

static int fake_qp_init_check(struct fake_pd *pd,
                              const struct ibv_qp_init_attr *a)
    HO_REQUIRES(fake_lock)
{
  struct fake_cq *scq, *rcq;
  if (!pd || !a)
    return EINVAL;
  if (a->qp_type != IBV_QPT_RC || a->srq)
    return EOPNOTSUPP;
  scq = FAKE_FIND(&fab.cqs, a->send_cq, struct fake_cq);
  rcq = FAKE_FIND(&fab.cqs, a->recv_cq, struct fake_cq);
  if (!scq || !rcq || scq->ctx != pd->ctx || rcq->ctx != pd->ctx)
    return EINVAL;
  return fake_qp_caps_check(pd->ctx->dev, &a->cap);
}

static uint32_t fake_new_qpn(void) HO_REQUIRES(fake_lock)
{
  for (;;) {
    uint32_t n = fab.next_qpn++ & FAKE_QPN_MASK;
    if (n > 1 && !fake_qp_by_num(n))
      return n;
  }
}

static size_t fake_max1(uint32_t v) { return v ? v : 1; }

static int fake_qp_alloc_queues(struct fake_qp *qp)
{
  const struct ibv_qp_cap *c = &qp->init.cap;
  size_t ns = fake_max1(c->max_send_wr), nr = fake_max1(c->max_recv_wr);
  qp->sq = calloc(ns, sizeof *qp->sq);
  qp->sq_sge = calloc(ns * fake_max1(c->max_send_sge), sizeof *qp->sq_sge);
  qp->sq_inl = calloc(ns, fake_max1(c->max_inline_data));
  qp->rq = calloc(nr, sizeof *qp->rq);
  qp->rq_sge = calloc(nr * fake_max1(c->max_recv_sge), sizeof *qp->rq_sge);
  if (!qp->sq || !qp->sq_sge || !qp->sq_inl || !qp->rq || !qp->rq_sge)
    return ENOMEM;
  for (size_t i = 0; i < ns; i++) {
    qp->sq[i].sge = qp->sq_sge + i * fake_max1(c->max_send_sge);
    qp->sq[i].inl = qp->sq_inl + i * fake_max1(c->max_inline_data);
  }
  for (size_t i = 0; i < nr; i++)
    qp->rq[i].sge = qp->rq_sge + i * fake_max1(c->max_recv_sge);
  return 0;
}

static void fake_qp_free_mem(struct fake_qp *qp)
{
  free(qp->sq);
  free(qp->sq_sge);
  free(qp->sq_inl);
  free(qp->rq);
  free(qp->rq_sge);
  pthread_mutex_destroy(&qp->ibqp.mutex);
  pthread_cond_destroy(&qp->ibqp.cond);
  free(qp);
}

static void fake_qp_link(struct fake_qp *qp, struct fake_pd *pd,
                         struct ibv_qp_init_attr *a) HO_REQUIRES(fake_lock)
{
  qp->ctx = pd->ctx;
  qp->pd = pd;
  qp->scq = FAKE_FIND(&fab.cqs, a->send_cq, struct fake_cq);
  qp->rcq = FAKE_FIND(&fab.cqs, a->recv_cq, struct fake_cq);
  qp->ibqp.context = pd->ibpd.context;
  qp->ibqp.qp_context = a->qp_context;
  qp->ibqp.pd = &pd->ibpd;
  qp->ibqp.send_cq = a->send_cq;
  qp->ibqp.recv_cq = a->recv_cq;
  qp->ibqp.handle = fab.next_handle++;
  qp->ibqp.qp_num = fake_new_qpn();
  qp->ibqp.qp_type = IBV_QPT_RC;
  fake_qp_set_state(qp, IBV_QPS_RESET);
  qp->scq->n_qp++;
  qp->rcq->n_qp++;
  pd->n_qp++;
  pd->ctx->n_qp++;
  fake_list_add(&fab.qps, &qp->link);
  fab.n_live++;
}

static struct fake_qp *fake_qp_new(struct fake_pd *pd,
                                   struct ibv_qp_init_attr *a)
    HO_REQUIRES(fake_lock)
{
  struct fake_qp *qp = calloc(1, sizeof *qp);
  if (!qp)
    return NULL;
  pthread_mutex_init(&qp->ibqp.mutex, NULL);
  pthread_cond_init(&qp->ibqp.cond, NULL);
  qp->init = *a;
  if (fake_qp_alloc_queues(qp) != 0) {
    fake_qp_free_mem(qp);
    return NULL;
  }
  fake_qp_link(qp, pd, a);
  return qp;
}

static struct ibv_qp *fake_create_qp(struct ibv_pd *ibpd,
                                     struct ibv_qp_init_attr *a)
{
  struct fake_pd *pd;
  struct fake_qp *qp = NULL;
  int err = fake_enter(FV_create_qp);
  pd = err ? NULL : FAKE_FIND(&fab.pds, ibpd, struct fake_pd);
  if (!err)
    err = fake_qp_init_check(pd, a);
  if (!err && !(qp = fake_qp_new(pd, a)))
    err = ENOMEM;
  fake_leave();
  if (err)
    errno = err;
  return qp ? &qp->ibqp : NULL;
}

/* Drops both queues and the QP's CQEs (RESET and destroy). */
static void fake_qp_clear(struct fake_qp *qp)
{
  qp->sq_head = qp->sq_count = qp->sq_held = qp->sq_unsignaled = 0;
  qp->rq_head = qp->rq_count = 0;
  qp->reads_out = 0;
  fake_cq_purge(qp->scq, qp);
  fake_cq_purge(qp->rcq, qp);
}

static int fake_destroy_qp(struct ibv_qp *ibqp)
{
  struct fake_qp *qp;
  int err = fake_enter(FV_destroy_qp);
  qp = err ? NULL : FAKE_FIND(&fab.qps, ibqp, struct fake_qp);
  if (!err && !qp)
    err = EINVAL;
  if (!err) {
    for (struct fake_link *l = fab.mws.next; l != &fab.mws; l = l->next) {
      struct fake_mw *mw = fake_container(l, struct fake_mw, link);
      if (mw->qp == qp) {
        mw->bound = false;
        mw->qp = NULL;
      }
    }
    fake_psn_qp_gone(qp);
    fake_qp_clear(qp);
    qp->scq->n_qp--;
    qp->rcq->n_qp--;
    qp->pd->n_qp--;
    qp->ctx->n_qp--;
    fake_list_del(&qp->link);
    fab.n_live--;
    fake_qp_free_mem(qp);
  }
  fake_leave();
  return err;
}

/* ---- modify_qp: the RC state machine ----------------------------------- */

struct fake_trans {
  enum ibv_qp_state from, to;
  int req, opt; /* besides IBV_QP_STATE and IBV_QP_CUR_STATE */
};

#define FAKE_INIT_OPT (IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define FAKE_RTS_OPT                                                        \
  (IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER |           \
   IBV_QP_PATH_MIG_STATE)

static const struct fake_trans fake_rc_trans[] = {
    {IBV_QPS_RESET, IBV_QPS_INIT, FAKE_INIT_OPT, 0},
    {IBV_QPS_INIT, IBV_QPS_INIT, 0, FAKE_INIT_OPT},
    {IBV_QPS_INIT, IBV_QPS_RTR,
     IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
         IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
     IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX},
    {IBV_QPS_RTR, IBV_QPS_RTS,
     IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
         IBV_QP_MAX_QP_RD_ATOMIC,
     FAKE_RTS_OPT},
    {IBV_QPS_RTS, IBV_QPS_RTS, 0, FAKE_RTS_OPT},
};

/* Whether cur -> next is legal, and the masks it takes. */
static bool fake_trans_masks(enum ibv_qp_state cur, enum ibv_qp_state next,
                             int *req, int *opt)
{
  *req = *opt = 0;
  if (next == IBV_QPS_RESET || next == IBV_QPS_ERR)
    return true;
  for (size_t i = 0; i < sizeof fake_rc_trans / sizeof fake_rc_trans[0];
       i++) {
    if (fake_rc_trans[i].from == cur && fake_rc_trans[i].to == next) {
      *req = fake_rc_trans[i].req;
      *opt = fake_rc_trans[i].opt;
      return true;
    }
  }
  return false;
}

static bool fake_av_ok(struct fake_qp *qp, unsigned port,
                       const struct ibv_ah_attr *ah)
{
  struct fake_port *p = fake_dev_port(qp->ctx->dev, port);
  if (!p || !ah->is_global || ah->port_num != port)
    return false;
  return ah->grh.sgid_index < FAKE_GID_TABLE_LEN &&
         p->gid_type[ah->grh.sgid_index] != FAKE_GID_NONE;
}

static bool fake_mtu_ok(struct fake_qp *qp, unsigned port, enum ibv_mtu mtu)
    HO_REQUIRES(fake_lock)
{
  struct fake_port *p = fake_dev_port(qp->ctx->dev, port);
  if (mtu < IBV_MTU_256 || mtu > IBV_MTU_4096 || !p)
    return false;
  return !fab.strict_mtu || mtu <= p->active_mtu;
}

/* Port, pkey, access, MTU and path attributes. */
static int fake_check_path(struct fake_qp *qp, const struct ibv_qp_attr *a,
                           int mask) HO_REQUIRES(fake_lock)
{
  const struct fake_device_cfg *c = &qp->ctx->dev->cfg;
  unsigned port = (mask & IBV_QP_PORT) ? a->port_num : qp->attr.port_num;
  if ((mask & IBV_QP_PORT) &&
      (a->port_num < 1 || a->port_num > c->phys_port_cnt))
    return EINVAL;
  if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0)
    return EINVAL;
  if ((mask & IBV_QP_ACCESS_FLAGS) && (a->qp_access_flags & ~FAKE_QP_ACCESS))
    return EINVAL;
  if ((mask & IBV_QP_PATH_MTU) && !fake_mtu_ok(qp, port, a->path_mtu))
    return EINVAL;
  if ((mask & IBV_QP_AV) && !fake_av_ok(qp, port, &a->ah_attr))
    return EINVAL;
  return 0;
}

/* Numbers, counters and timers. */
static int fake_check_numbers(struct fake_qp *qp, const struct ibv_qp_attr *a,
                              int mask)
{
  const struct fake_device_cfg *c = &qp->ctx->dev->cfg;
  if (((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > FAKE_QPN_MASK) ||
      ((mask & IBV_QP_RQ_PSN) && a->rq_psn > FAKE_QPN_MASK) ||
      ((mask & IBV_QP_SQ_PSN) && a->sq_psn > FAKE_QPN_MASK))
    return EINVAL;
  if (((mask & IBV_QP_MAX_DEST_RD_ATOMIC) &&
       a->max_dest_rd_atomic > c->max_qp_rd_atom) ||
      ((mask & IBV_QP_MAX_QP_RD_ATOMIC) &&
       a->max_rd_atomic > c->max_qp_init_rd_atom))
    return EINVAL;
  if (((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31) ||
      ((mask & IBV_QP_TIMEOUT) && a->timeout > 31) ||
      ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7) ||
      ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7))
    return EINVAL;
  return 0;
}

static int fake_modify_check(struct fake_qp *qp, const struct ibv_qp_attr *a,
                             int mask, enum ibv_qp_state *next)
    HO_REQUIRES(fake_lock)
{
  enum ibv_qp_state cur = qp->attr.qp_state;
  int req, opt, rest = mask & ~(IBV_QP_STATE | IBV_QP_CUR_STATE);
  int err;
  if (!a)
    return EINVAL;
  if ((mask & IBV_QP_CUR_STATE) && a->cur_qp_state != cur)
    return EINVAL;
  *next = (mask & IBV_QP_STATE) ? a->qp_state : cur;
  if (*next > IBV_QPS_ERR || !fake_trans_masks(cur, *next, &req, &opt))
    return EINVAL;
  if ((rest & req) != req || (rest & ~(req | opt)))
    return EINVAL;
  err = fake_check_path(qp, a, mask);
  return err ? err : fake_check_numbers(qp, a, mask);
}

#define FAKE_SET(bit, field)                                                \
  do {                                                                      \
    if (mask & (bit))                                                       \
      qp->attr.field = a->field;                                            \
  } while (0)

static void fake_qp_apply(struct fake_qp *qp, const struct ibv_qp_attr *a,
                          int mask)
{
  FAKE_SET(IBV_QP_PKEY_INDEX, pkey_index);
  FAKE_SET(IBV_QP_PORT, port_num);
  FAKE_SET(IBV_QP_ACCESS_FLAGS, qp_access_flags);
  FAKE_SET(IBV_QP_PATH_MTU, path_mtu);
  FAKE_SET(IBV_QP_AV, ah_attr);
  FAKE_SET(IBV_QP_DEST_QPN, dest_qp_num);
  FAKE_SET(IBV_QP_RQ_PSN, rq_psn);
  FAKE_SET(IBV_QP_SQ_PSN, sq_psn);
  FAKE_SET(IBV_QP_MAX_DEST_RD_ATOMIC, max_dest_rd_atomic);
  FAKE_SET(IBV_QP_MAX_QP_RD_ATOMIC, max_rd_atomic);
  FAKE_SET(IBV_QP_MIN_RNR_TIMER, min_rnr_timer);
  FAKE_SET(IBV_QP_TIMEOUT, timeout);
  FAKE_SET(IBV_QP_RETRY_CNT, retry_cnt);
  FAKE_SET(IBV_QP_RNR_RETRY, rnr_retry);
  FAKE_SET(IBV_QP_PATH_MIG_STATE, path_mig_state);
  FAKE_SET(IBV_QP_ALT_PATH, alt_ah_attr);
  FAKE_SET(IBV_QP_ALT_PATH, alt_pkey_index);
  FAKE_SET(IBV_QP_ALT_PATH, alt_port_num);
  FAKE_SET(IBV_QP_ALT_PATH, alt_timeout);
  qp->set_mask |= mask;
}

static void fake_qp_enter_state(struct fake_qp *qp, enum ibv_qp_state next)
    HO_REQUIRES(fake_lock)
{
  if (next == IBV_QPS_RESET) {
    fake_qp_clear(qp);
    memset(&qp->attr, 0, sizeof qp->attr);
    qp->set_mask = 0;
    fake_qp_set_state(qp, IBV_QPS_RESET);
  } else if (next == IBV_QPS_ERR) {
    if (qp->attr.qp_state != IBV_QPS_ERR)
      fake_qp_to_err(qp);
  } else {
    fake_qp_set_state(qp, next);
  }
}

static int fake_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *a, int mask)
{
  struct fake_qp *qp;
  enum ibv_qp_state next = IBV_QPS_RESET;
  int err = fake_enter(FV_modify_qp);
  qp = err ? NULL : FAKE_FIND(&fab.qps, ibqp, struct fake_qp);
  if (!err && !qp)
    err = EINVAL;
  if (!err)
    err = fake_modify_check(qp, a, mask, &next);
  if (!err && next == IBV_QPS_RTR && qp->ctx->dev->fault.rtr_fail_n > 0) {
    qp->ctx->dev->fault.rtr_fail_n--; /* the path did not resolve */
    err = qp->ctx->dev->fault.rtr_fail_err;
  }
  if (!err) {
    fake_qp_apply(qp, a, mask);
    fake_qp_enter_state(qp, next);
    fake_psn_modified(qp, a, mask, next);
    if (mask & IBV_QP_STATE)
      qp->rec[next] = (struct fake_record){true, *a, mask};
  }
  fake_leave();
  return err;
}

static int fake_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *a, int mask,
                         struct ibv_qp_init_attr *init)
{
  struct fake_qp *qp;
  int err = fake_enter(FV_query_qp);
  qp = err ? NULL : FAKE_FIND(&fab.qps, ibqp, struct fake_qp);
  if (!err && (!qp || !a || !init))
    err = EINVAL;
  if (!err) {
    *a = qp->attr;
    a->cap = qp->init.cap;
    *init = qp->init;
    if (fab.psn) { /* the live PSNs, as rxe_qp_to_attr() reports them */
      a->rq_psn = qp->epsn;
      a->sq_psn = qp->sq_next_psn;
    }
  }
  fake_leave();
  return err;
}

/* ---- posting ----------------------------------------------------------- */

static bool fake_send_opcode_ok(enum ibv_wr_opcode op)
{
  return op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM ||
         op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM ||
         op == IBV_WR_RDMA_READ || op == IBV_WR_SEND_WITH_INV ||
         op == IBV_WR_BIND_MW || op == IBV_WR_LOCAL_INV;
}

static uint64_t fake_sge_total(const struct ibv_sge *sge, int n)
{
  uint64_t t = 0;
  for (int i = 0; i < n; i++)
    t += sge[i].length;
  return t;
}

static int fake_swr_check(const struct fake_qp *qp,
                          const struct ibv_send_wr *wr)
{
  uint64_t len;
  if (!fake_send_opcode_ok(wr->opcode) || wr->num_sge < 0 ||
      (uint32_t)wr->num_sge > qp->init.cap.max_send_sge ||
      (wr->num_sge > 0 && !wr->sg_list))
    return EINVAL;
  len = fake_sge_total(wr->sg_list, wr->num_sge);
  if (len > FAKE_MAX_MSG)
    return EINVAL;
  if ((wr->send_flags & IBV_SEND_INLINE) &&
      (wr->opcode == IBV_WR_RDMA_READ || len > qp->init.cap.max_inline_data))
    return EINVAL;
  return 0;
}

static void fake_swqe_fill(struct fake_qp *qp, struct fake_swqe *w,
                           const struct ibv_send_wr *wr)
{
  w->wr_id = wr->wr_id;
  w->opcode = wr->opcode;
  w->flags = wr->send_flags;
  w->signaled = qp->init.sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED);
  w->imm = wr->imm_data; /* or invalidate_rkey: the same union */
  w->raddr = wr->wr.rdma.remote_addr;
  w->rkey = wr->wr.rdma.rkey;
  w->mw = NULL;
  if (wr->opcode == IBV_WR_BIND_MW) {
    w->mw = wr->bind_mw.mw;
    w->mw_old = wr->bind_mw.mw ? wr->bind_mw.mw->rkey : 0;
    w->rkey = wr->bind_mw.rkey;
    w->bind = wr->bind_mw.bind_info;
  }
  w->num_sge = wr->num_sge;
  if (wr->num_sge > 0)
    memcpy(w->sge, wr->sg_list, (size_t)wr->num_sge * sizeof *w->sge);
  w->len = fake_sge_total(wr->sg_list, wr->num_sge);
  w->inl_len = 0;
  if (wr->send_flags & IBV_SEND_INLINE) {
    for (int i = 0; i < wr->num_sge; i++) {
      memcpy(w->inl + w->inl_len, (void *)(uintptr_t)wr->sg_list[i].addr,
             wr->sg_list[i].length);
      w->inl_len += wr->sg_list[i].length;
    }
  }
  w->phase = FAKE_QUEUED;
  w->status = IBV_WC_SUCCESS;
  if (fake_is_local_op(w->opcode))
    w->npkts = 0; /* nothing goes on the wire */
  else
    fake_psn_assign(qp, w);
  w->retries_left = qp->attr.retry_cnt;
  w->rnr_left = qp->attr.rnr_retry;
}

static int fake_sq_post_one(struct fake_qp *qp, const struct ibv_send_wr *wr)
    HO_REQUIRES(fake_lock)
{
  enum ibv_qp_state s = qp->attr.qp_state;
  int err;
  if (s != IBV_QPS_RTS && s != IBV_QPS_ERR)
    return EINVAL;
  err = fake_swr_check(qp, wr);
  if (err)
    return err;
  if (qp->sq_count + qp->sq_held >= qp->init.cap.max_send_wr)
    return ENOMEM;
  fake_swqe_fill(qp, fake_sq_at(qp, qp->sq_count), wr);
  qp->sq_count++;
  qp->ctx->dev->stats.wrs_posted++;
  qp->ctx->dev->stats.wrs_by_op[wr->opcode == IBV_WR_RDMA_WRITE  ? 0
                                : wr->opcode == IBV_WR_RDMA_READ ? 1
                                                                 : 2]++;
  if (s == IBV_QPS_ERR)
    fake_sq_flush(qp);
  return 0;
}

static int fake_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
                          struct ibv_send_wr **bad)
{
  struct fake_qp *qp;
  int err = fake_enter(FV_post_send);
  qp = err ? NULL : FAKE_FIND(&fab.qps, ibqp, struct fake_qp);
  if (!err && !qp)
    err = EINVAL;
  while (!err && wr) {
    err = fake_sq_post_one(qp, wr);
    if (!err)
      wr = wr->next;
  }
  if (qp && fab.psn)
    fake_progress_locked(); /* eager delivery, and the answers */
  else if (qp)
    fake_qp_run(qp, fake_now()); /* eager delivery */
  fake_leave();
  if (err && bad)
    *bad = wr;
  return err;
}

static int fake_rq_post_one(struct fake_qp *qp, const struct ibv_recv_wr *wr)
    HO_REQUIRES(fake_lock)
{
  struct fake_rwqe *r;
  if (qp->attr.qp_state == IBV_QPS_RESET || wr->num_sge < 0 ||
      (uint32_t)wr->num_sge > qp->init.cap.max_recv_sge ||
      (wr->num_sge > 0 && !wr->sg_list))
    return EINVAL;
  if (qp->rq_count >= qp->init.cap.max_recv_wr)
    return ENOMEM;
  r = &qp->rq[(qp->rq_head + qp->rq_count) % qp->init.cap.max_recv_wr];
  r->wr_id = wr->wr_id;
  r->num_sge = wr->num_sge;
  if (wr->num_sge > 0)
    memcpy(r->sge, wr->sg_list, (size_t)wr->num_sge * sizeof *r->sge);
  qp->rq_count++;
  if (qp->attr.qp_state == IBV_QPS_ERR)
    fake_rq_flush(qp);
  return 0;
}

static int fake_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
                          struct ibv_recv_wr **bad)
{
  struct fake_qp *qp;
  int err = fake_enter(FV_post_recv);
  qp = err ? NULL : FAKE_FIND(&fab.qps, ibqp, struct fake_qp);
  if (!err && !qp)
    err = EINVAL;
  while (!err && wr) {
    err = fake_rq_post_one(qp, wr);
    if (!err)
      wr = wr->next;
  }
  fake_leave();
  if (err && bad)
    *bad = wr;
  return err;
}

const struct ho_verbs_ops fake_verbs_ops = {
    .name = "fake",
    .get_device_list = fake_get_device_list,
    .free_device_list = fake_free_device_list,
    .get_device_name = fake_get_device_name,
    .open_device = fake_open_device,
    .close_device = fake_close_device,
    .query_device = fake_query_device,
    .query_port = fake_query_port,
    .query_gid = fake_query_gid,
    .alloc_pd = fake_alloc_pd,
    .dealloc_pd = fake_dealloc_pd,
    .reg_mr = fake_reg_mr,
    .reg_dmabuf_mr = fake_reg_dmabuf_mr,
    .dereg_mr = fake_dereg_mr,
    .create_cq = fake_create_cq,
    .destroy_cq = fake_destroy_cq,
    .create_qp = fake_create_qp,
    .modify_qp = fake_modify_qp,
    .query_qp = fake_query_qp,
    .destroy_qp = fake_destroy_qp,
    .post_send = fake_post_send,
    .post_recv = fake_post_recv,
    .poll_cq = fake_poll_cq,
    .alloc_mw = fake_alloc_mw,
    .dealloc_mw = fake_dealloc_mw,
    .create_comp_channel = fake_create_comp_channel,
    .destroy_comp_channel = fake_destroy_comp_channel,
    .req_notify_cq = fake_req_notify_cq,
    .get_cq_event = fake_get_cq_event,
    .ack_cq_events = fake_ack_cq_events,
};

/* ---- control API: fabric ----------------------------------------------- */

static void fake_free_all(void) HO_REQUIRES(fake_lock)
{
  fake_psn_free_all();
  while (fab.qps.next != &fab.qps) {
    struct fake_link *l = fab.qps.next;
    fake_list_del(l);
    fake_qp_free_mem(fake_container(l, struct fake_qp, link));
  }
  while (fab.cqs.next != &fab.cqs)
    fake_cq_free(fake_container(fab.cqs.next, struct fake_cq, link));
  while (fab.chans.next != &fab.chans)
    fake_channel_free(
        fake_container(fab.chans.next, struct fake_channel, link));
  while (fab.mrs.next != &fab.mrs) {
    struct fake_link *l = fab.mrs.next;
    fake_list_del(l);
    free(fake_container(l, struct fake_mr, link));
  }
  while (fab.mws.next != &fab.mws) {
    struct fake_link *l = fab.mws.next;
    fake_list_del(l);
    free(fake_container(l, struct fake_mw, link));
  }
  while (fab.pds.next != &fab.pds) {
    struct fake_link *l = fab.pds.next;
    fake_list_del(l);
    free(fake_container(l, struct fake_pd, link));
  }
  while (fab.ctxs.next != &fab.ctxs) {
    struct fake_ctx *c = fake_container(fab.ctxs.next, struct fake_ctx, link);
    fake_list_del(&c->link);
    pthread_mutex_destroy(&c->ibctx.mutex);
    free(c);
  }
}

void fake_fabric_reset(void)
{
  fake_control_lock();
  fake_free_all();
  for (int i = 0; i < fab.n_dev; i++)
    free(fab.dev[i]);
  fab.n_dev = 0;
  fab.n_live = 0;
  fake_settings_default();
  fake_leave();
}

void fake_fabric_progress(void)
{
  fake_control_lock();
  fake_progress_locked();
  fake_leave();
}

int fake_fabric_set_time_scale(double scale)
{
  if (!(scale > 0.0))
    return EINVAL;
  fake_control_lock();
  fab.scale = scale;
  fake_leave();
  return 0;
}

void fake_fabric_set_manual_clock(bool on)
{
  fake_control_lock();
  if (on && !fab.manual)
    fab.manual_now = fake_now();
  else if (!on && fab.manual)
    fab.offset = (int64_t)fab.manual_now - (int64_t)ho_now_ns();
  fab.manual = on;
  fake_leave();
}

int fake_fabric_advance_ns(uint64_t ns)
{
  int err = 0;
  fake_control_lock();
  if (!fab.manual)
    err = EINVAL;
  else
    fab.manual_now += ns;
  fake_progress_locked();
  fake_leave();
  return err;
}

uint64_t fake_fabric_now_ns(void)
{
  uint64_t now;
  fake_control_lock();
  now = fake_now();
  fake_leave();
  return now;
}

void fake_fabric_set_retry_semantics(enum fake_retry_semantics s)
{
  fake_control_lock();
  fab.retry = s;
  fake_leave();
}

void fake_fabric_set_dmabuf(bool supported)
{
  fake_control_lock();
  fab.dmabuf = supported;
  fake_leave();
}

void fake_fabric_set_strict_mtu(bool on)
{
  fake_control_lock();
  fab.strict_mtu = on;
  fake_leave();
}

void fake_fabric_set_sq_release_on_poll(bool on)
{
  fake_control_lock();
  fab.sq_release_on_poll = on;
  fake_leave();
}

void fake_fabric_set_psn(bool on)
{
  fake_control_lock();
  fab.psn = on;
  fake_leave();
}

void fake_fabric_set_ack_delay_ns(uint64_t ns)
{
  fake_control_lock();
  fab.ack_delay_ns = ns;
  fake_leave();
}

void fake_fabric_set_rxe_reset(bool on)
{
  fake_control_lock();
  fab.rxe_reset = on;
  fake_leave();
}

void fake_fabric_set_rxe_acks(bool on)
{
  fake_control_lock();
  fab.rxe_acks = on;
  fake_leave();
}

void fake_fabric_set_soft_roce(bool on, uint64_t ack_delay_ns)
{
  fake_control_lock();
  fab.psn = fab.rxe_reset = fab.rxe_acks = on;
  fab.ack_delay_ns = on ? ack_delay_ns : 0;
  fake_leave();
}

int fake_fabric_live_objects(void)
{
  int n;
  fake_control_lock();
  n = fab.n_live;
  fake_leave();
  return n;
}

/* ---- control API: devices ---------------------------------------------- */

void fake_device_cfg_default(struct fake_device_cfg *cfg)
{
  *cfg = (struct fake_device_cfg){
      .vendor_id = 0x15b3,
      .vendor_part_id = 4129,
      .max_qp_rd_atom = 16,
      .max_qp_init_rd_atom = 16,
      .max_qp_wr = 4096,
      .max_sge = 16,
      .max_cqe = 65536,
      .max_inline = 256,
      .phys_port_cnt = 1,
      .active_mtu = IBV_MTU_1024,
      .mem_windows = true,
  };
}

static bool fake_cfg_ok(const struct fake_device_cfg *c)
{
  return c->phys_port_cnt >= 1 && c->phys_port_cnt <= FAKE_MAX_PORTS &&
         c->max_sge >= 1 && c->max_sge <= FAKE_MAX_SGE && c->max_qp_wr >= 1 &&
         c->max_cqe >= 1 && c->max_qp_rd_atom >= 0 &&
         c->max_qp_init_rd_atom >= 0 && c->active_mtu >= IBV_MTU_256 &&
         c->active_mtu <= IBV_MTU_4096;
}

static void fake_gid_v4(union ibv_gid *g, uint32_t ipv4)
{
  memset(g, 0, sizeof *g);
  g->raw[10] = 0xff;
  g->raw[11] = 0xff;
  g->raw[12] = (uint8_t)(ipv4 >> 24);
  g->raw[13] = (uint8_t)(ipv4 >> 16);
  g->raw[14] = (uint8_t)(ipv4 >> 8);
  g->raw[15] = (uint8_t)ipv4;
}

static void fake_gid_link_local(union ibv_gid *g, int n)
{
  static const uint8_t ll[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0,
                                 0x02, 0x00, 0x00, 0xff, 0xfe, 0, 0, 0};
  memcpy(g->raw, ll, 16);
  g->raw[15] = (uint8_t)n;
}

static void fake_port_init(struct fake_port *p, const struct fake_device_cfg *c,
                           int n)
{
  uint32_t ip = c->ipv4 ? c->ipv4 : (10u << 24) | (uint32_t)n;
  memset(p, 0, sizeof *p);
  p->state = IBV_PORT_ACTIVE;
  p->active_mtu = c->active_mtu;
  p->lid = c->lid;
  fake_gid_link_local(&p->gid[0], n);
  fake_gid_link_local(&p->gid[1], n);
  fake_gid_v4(&p->gid[2], ip);
  fake_gid_v4(&p->gid[3], ip);
  p->gid_type[0] = FAKE_GID_ROCE_V1;
  p->gid_type[1] = FAKE_GID_ROCE_V2;
  p->gid_type[2] = FAKE_GID_ROCE_V1;
  p->gid_type[3] = FAKE_GID_ROCE_V2;
}

static int fake_device_add_locked(const char *name,
                                  const struct fake_device_cfg *cfg)
    HO_REQUIRES(fake_lock)
{
  struct fake_dev *d;
  if (fake_dev_by_name(name))
    return EEXIST;
  if (fab.n_dev == FAKE_MAX_DEVICES)
    return ENOSPC;
  d = calloc(1, sizeof *d);
  if (!d)
    return ENOMEM;
  d->cfg = *cfg;
  d->index = fab.n_dev;
  d->ibdev.node_type = IBV_NODE_CA;
  d->ibdev.transport_type = IBV_TRANSPORT_IB;
  snprintf(d->ibdev.name, sizeof d->ibdev.name, "%s", name);
  snprintf(d->ibdev.dev_name, sizeof d->ibdev.dev_name, "uverbs%d", d->index);
  snprintf(d->ibdev.dev_path, sizeof d->ibdev.dev_path,
           "/sys/class/infiniband_verbs/uverbs%d", d->index);
  snprintf(d->ibdev.ibdev_path, sizeof d->ibdev.ibdev_path,
           "/sys/class/infiniband/%s", name);
  for (int p = 0; p < cfg->phys_port_cnt; p++)
    fake_port_init(&d->port[p], cfg, d->index + 1);
  fab.dev[fab.n_dev++] = d;
  return 0;
}

int fake_device_add(const char *name, const struct fake_device_cfg *cfg)
{
  struct fake_device_cfg def;
  int err;
  if (!cfg) {
    fake_device_cfg_default(&def);
    cfg = &def;
  }
  if (!name || !*name || strlen(name) >= IBV_SYSFS_NAME_MAX ||
      !fake_cfg_ok(cfg))
    return EINVAL;
  fake_control_lock();
  err = fake_device_add_locked(name, cfg);
  fake_leave();
  return err;
}

static struct fake_port *fake_port_find(const char *dev, uint8_t port)
    HO_REQUIRES(fake_lock)
{
  return fake_dev_port(fake_dev_by_name(dev), port);
}

int fake_port_set_state(const char *dev, uint8_t port,
                        enum ibv_port_state state)
{
  struct fake_port *p;
  if (state != IBV_PORT_ACTIVE && state != IBV_PORT_DOWN)
    return EINVAL;
  fake_control_lock();
  p = fake_port_find(dev, port);
  if (p)
    p->state = state;
  fake_leave();
  return p ? 0 : ENODEV;
}

int fake_port_set_mtu(const char *dev, uint8_t port, enum ibv_mtu mtu)
{
  struct fake_port *p;
  if (mtu < IBV_MTU_256 || mtu > IBV_MTU_4096)
    return EINVAL;
  fake_control_lock();
  p = fake_port_find(dev, port);
  if (p)
    p->active_mtu = mtu;
  fake_leave();
  return p ? 0 : ENODEV;
}

int fake_gid_set(const char *dev, uint8_t port, int index,
                 const union ibv_gid *gid, enum fake_gid_type type)
{
  struct fake_port *p;
  if (index < 0 || index >= FAKE_GID_TABLE_LEN || type > FAKE_GID_ROCE_V2 ||
      (type != FAKE_GID_NONE && !gid))
    return EINVAL;
  fake_control_lock();
  p = fake_port_find(dev, port);
  if (p && type == FAKE_GID_NONE)
    memset(&p->gid[index], 0, sizeof p->gid[index]);
  else if (p)
    p->gid[index] = *gid;
  if (p)
    p->gid_type[index] = type;
  fake_leave();
  return p ? 0 : ENODEV;
}

enum fake_gid_type fake_gid_type(const char *dev, uint8_t port, int index)
{
  struct fake_port *p;
  enum fake_gid_type t = FAKE_GID_NONE;
  if (index < 0 || index >= FAKE_GID_TABLE_LEN)
    return FAKE_GID_NONE;
  fake_control_lock();
  p = fake_port_find(dev, port);
  if (p)
    t = p->gid_type[index];
  fake_leave();
  return t;
}

static bool fake_gid_is_v4(const union ibv_gid *g)
{
  static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return memcmp(g->raw, prefix, sizeof prefix) == 0;
}

int fake_gid_find(const char *dev, uint8_t port, enum fake_gid_type type,
                  bool ipv4)
{
  struct fake_port *p;
  int found = -1;
  fake_control_lock();
  p = fake_port_find(dev, port);
  for (int i = 0; p && i < FAKE_GID_TABLE_LEN && found < 0; i++)
    if (p->gid_type[i] == type && fake_gid_is_v4(&p->gid[i]) == ipv4)
      found = i;
  fake_leave();
  return found;
}

int fake_device_stats(const char *dev, struct fake_dev_stats *out)
{
  struct fake_dev *d;
  if (!out)
    return EINVAL;
  fake_control_lock();
  d = fake_dev_by_name(dev);
  if (d)
    *out = d->stats;
  fake_leave();
  return d ? 0 : ENODEV;
}

/* ---- control API: faults ----------------------------------------------- */

static int fake_verb_index(const char *verb)
{
  for (int i = 0; verb && i < FV_COUNT; i++)
    if (strcmp(fake_verb_names[i], verb) == 0)
      return i;
  return -1;
}

int fake_verb_fail(const char *verb, unsigned skip, unsigned count, int err)
{
  int i = fake_verb_index(verb);
  if (i < 0 || i == FV_free_device_list || i == FV_get_device_name ||
      (count > 0 && err <= 0))
    return EINVAL;
  fake_control_lock();
  fab.inject[i].skip = count ? skip : 0;
  fab.inject[i].count = count;
  fab.inject[i].err = err;
  fake_leave();
  return 0;
}

unsigned long fake_verb_calls(const char *verb)
{
  int i = fake_verb_index(verb);
  unsigned long n;
  if (i < 0)
    return 0;
  fake_control_lock();
  n = fab.inject[i].calls;
  fake_leave();
  return n;
}

/* The fault block of dev, or the fabric's for NULL; NULL if no such dev. */
static struct fake_fault *fake_fault_find(const char *dev)
    HO_REQUIRES(fake_lock)
{
  struct fake_dev *d;
  if (!dev)
    return &fab.fault;
  d = fake_dev_by_name(dev);
  return d ? &d->fault : NULL;
}

int fake_device_drop_next(const char *dev, unsigned n)
{
  struct fake_fault *f;
  fake_control_lock();
  f = fake_fault_find(dev);
  if (f)
    f->drop_next = n;
  fake_leave();
  return f ? 0 : ENODEV;
}

int fake_device_set_delay_ms(const char *dev, unsigned ms)
{
  struct fake_fault *f;
  fake_control_lock();
  f = fake_fault_find(dev);
  if (f)
    f->delay_ms = ms;
  fake_leave();
  return f ? 0 : ENODEV;
}

int fake_device_force_error(const char *dev, unsigned n,
                            enum ibv_wc_status status)
{
  struct fake_fault *f;
  if (n > 0 && status == IBV_WC_SUCCESS)
    return EINVAL;
  fake_control_lock();
  f = fake_fault_find(dev);
  if (f) {
    f->force_n = n;
    f->force_status = status;
  }
  fake_leave();
  return f ? 0 : ENODEV;
}

int fake_device_fail_connect(const char *dev, unsigned n, int err)
{
  struct fake_dev *d;
  if (!dev || (n > 0 && err <= 0))
    return EINVAL;
  fake_control_lock();
  d = fake_dev_by_name(dev);
  if (d) {
    d->fault.rtr_fail_n = n;
    d->fault.rtr_fail_err = err;
  }
  fake_leave();
  return d ? 0 : ENODEV;
}

static struct fake_qp *fake_qp_find(struct ibv_qp *ibqp) HO_REQUIRES(fake_lock)
{
  return FAKE_FIND(&fab.qps, ibqp, struct fake_qp);
}

int fake_qp_force_error(struct ibv_qp *ibqp, unsigned n,
                        enum ibv_wc_status status)
{
  struct fake_qp *qp;
  if (n > 0 && status == IBV_WC_SUCCESS)
    return EINVAL;
  fake_control_lock();
  qp = fake_qp_find(ibqp);
  if (qp) {
    qp->fault.force_n = n;
    qp->fault.force_status = status;
  }
  fake_leave();
  return qp ? 0 : EINVAL;
}

/* ---- control API: inspection ------------------------------------------- */

int fake_qp_attrs(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int *set_mask)
{
  struct fake_qp *qp;
  if (!attr)
    return EINVAL;
  fake_control_lock();
  qp = fake_qp_find(ibqp);
  if (qp) {
    *attr = qp->attr;
    attr->cap = qp->init.cap;
    if (set_mask)
      *set_mask = qp->set_mask;
  }
  fake_leave();
  return qp ? 0 : EINVAL;
}

int fake_qp_transition(struct ibv_qp *ibqp, enum ibv_qp_state to,
                       struct ibv_qp_attr *attr, int *mask)
{
  struct fake_qp *qp;
  int err = 0;
  if (to > IBV_QPS_ERR)
    return EINVAL;
  fake_control_lock();
  qp = fake_qp_find(ibqp);
  if (!qp)
    err = EINVAL;
  else if (!qp->rec[to].valid)
    err = ENOENT;
  if (!err && attr)
    *attr = qp->rec[to].attr;
  if (!err && mask)
    *mask = qp->rec[to].mask;
  fake_leave();
  return err;
}

int fake_qp_stats(struct ibv_qp *ibqp, struct fake_qp_stats *out)
{
  struct fake_qp *qp;
  if (!out)
    return EINVAL;
  fake_control_lock();
  qp = fake_qp_find(ibqp);
  if (qp) {
    *out = qp->stats;
    out->sq_outstanding = qp->sq_count;
    out->rq_posted = qp->rq_count;
    out->reads_in_flight = qp->reads_out;
  }
  fake_leave();
  return qp ? 0 : EINVAL;
}

int fake_qp_psn(struct ibv_qp *ibqp, struct fake_qp_psn *out)
{
  struct fake_qp *qp;
  if (!out)
    return EINVAL;
  fake_control_lock();
  qp = fake_qp_find(ibqp);
  if (qp) {
    out->sq_next = qp->sq_next_psn;
    out->expected = qp->epsn;
    out->ack = qp->ack_psn;
  }
  fake_leave();
  return qp ? 0 : EINVAL;
}

bool fake_cq_overflowed(struct ibv_cq *ibcq)
{
  struct fake_cq *cq;
  bool o;
  fake_control_lock();
  cq = FAKE_FIND(&fab.cqs, ibcq, struct fake_cq);
  o = cq && cq->overflowed;
  fake_leave();
  return o;
}

int fake_cq_depth(struct ibv_cq *ibcq)
{
  struct fake_cq *cq;
  int n;
  fake_control_lock();
  cq = FAKE_FIND(&fab.cqs, ibcq, struct fake_cq);
  n = cq ? cq->count : -1;
  fake_leave();
  return n;
}

int fake_mr_access(struct ibv_mr *ibmr)
{
  struct fake_mr *mr;
  int a;
  fake_control_lock();
  mr = FAKE_FIND(&fab.mrs, ibmr, struct fake_mr);
  a = mr ? mr->access : -1;
  fake_leave();
  return a;
}

int fake_mw_bound_count(const char *dev)
{
  int n = -1;
  fake_control_lock();
  struct fake_dev *d = fake_dev_by_name(dev);
  if (d) {
    n = 0;
    for (struct fake_link *l = fab.mws.next; l != &fab.mws; l = l->next) {
      struct fake_mw *mw = fake_container(l, struct fake_mw, link);
      n += mw->bound && mw->pd->ctx->dev == d;
    }
  }
  fake_leave();
  return n;
}

int fake_mr_remote_count(const char *dev)
{
  int n = -1;
  fake_control_lock();
  struct fake_dev *d = fake_dev_by_name(dev);
  if (d) {
    n = 0;
    for (struct fake_link *l = fab.mrs.next; l != &fab.mrs; l = l->next) {
      struct fake_mr *mr = fake_container(l, struct fake_mr, link);
      n += mr->pd->ctx->dev == d &&
           (mr->access & (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
                          IBV_ACCESS_REMOTE_ATOMIC));
    }
  }
  fake_leave();
  return n;
}

int fake_mw_live_count(void)
{
  int n = 0;
  fake_control_lock();
  for (struct fake_link *l = fab.mws.next; l != &fab.mws; l = l->next)
    n++;
  fake_leave();
  return n;
}
