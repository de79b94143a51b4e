/* SPDX-License-Identifier: MIT */
/* PSN mode of the simulated RC fabric (fake_fabric_set_psn; semantics in
 * fake_verbs.h, "PSN MODE"). Requests and responses are packets
 * (struct fake_pkt) on the fabric's list, addressed by GID and QP number
 * and judged when they arrive by whatever QP has that number then, as a
 * NIC judges them: state, source address and PSN, never the sender's QP
 * number, which RC packets do not carry.
 *
 * The requester keeps its WRs in the send queue with the phases of
 * fake_verbs.c; a SENT WR waits for a response until its transport timer
 * (t_next). The responder answers each request with a response packet
 * that leaves after the ACK delay; a responder that leaves RTR/RTS before
 * then loses it. Everything runs under fake_lock. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fakes/fake_verbs_int.h"

#define FAKE_PSN_MASK 0xffffffu

enum fake_pkt_kind {
  FAKE_PKT_REQ,
  FAKE_PKT_ACK,
  FAKE_PKT_READ_RESP,
  FAKE_PKT_NAK_SEQ,
  FAKE_PKT_NAK_RNR,
  FAKE_PKT_NAK_ERR,
};

struct fake_pkt {
  struct fake_link link;
  enum fake_pkt_kind kind;
  uint64_t t_depart, t_arrive;
  struct fake_qp *holder; /* the responder, until the packet leaves */
  union ibv_gid sgid, dgid;
  enum fake_gid_type type;
  uint32_t dst_qpn, psn, npkts;
  struct fake_req rq; /* FAKE_PKT_REQ; rq.loc is unused */
  uint8_t rnr_timer;  /* FAKE_PKT_NAK_RNR */
  enum ibv_wc_status status; /* FAKE_PKT_NAK_ERR */
  uint8_t *data; /* SEND or WRITE payload, READ response; len rq.len */
};

/* a - b in the 24-bit PSN space: < 0 behind, > 0 ahead. */
static int32_t fake_psn_diff(uint32_t a, uint32_t b)
{
  return (int32_t)((a - b) << 8) >> 8;
}

static uint32_t fake_psn_add(uint32_t psn, uint32_t n)
{
  return (psn + n) & FAKE_PSN_MASK;
}

static uint32_t fake_swqe_last(const struct fake_swqe *w)
{
  return fake_psn_add(w->psn, w->npkts - 1);
}

/* ---- packets ------------------------------------------------------------ */

static void fake_pkt_free(struct fake_pkt *p)
{
  fake_list_del(&p->link);
  free(p->data);
  free(p);
}

/* Queues p by arrival time, after the packets due at the same time. */
static void fake_pkt_queue(struct fake_pkt *p) HO_REQUIRES(fake_lock)
{
  struct fake_link *at = fab.pkts.prev;
  while (at != &fab.pkts &&
         fake_container(at, struct fake_pkt, link)->t_arrive > p->t_arrive)
    at = at->prev;
  fake_list_add(at->next, &p->link);
}

static struct fake_pkt *fake_pkt_new(enum fake_pkt_kind kind, uint64_t len)
{
  struct fake_pkt *p = calloc(1, sizeof *p);
  if (!p)
    abort(); /* a test fake: out of memory is not a fabric event */
  fake_list_init(&p->link);
  p->kind = kind;
  if (len > 0 && !(p->data = malloc(len)))
    abort();
  return p;
}

/* Addresses p from qp's side of the connection: its sgid to its AV. */
static bool fake_pkt_address(struct fake_pkt *p, struct fake_qp *qp)
{
  const struct ibv_global_route *grh = &qp->attr.ah_attr.grh;
  struct fake_port *sp = fake_qp_port(qp);
  if (!sp || sp->state != IBV_PORT_ACTIVE ||
      grh->sgid_index >= FAKE_GID_TABLE_LEN ||
      sp->gid_type[grh->sgid_index] == FAKE_GID_NONE)
    return false;
  p->sgid = sp->gid[grh->sgid_index];
  p->type = sp->gid_type[grh->sgid_index];
  p->dgid = grh->dgid;
  p->dst_qpn = qp->attr.dest_qp_num;
  return true;
}

/* The QP that has p's destination number, on a port that is up and has
 * p's dgid, if its AV points back at p's source address; NULL: dropped. */
static struct fake_qp *fake_pkt_target(const struct fake_pkt *p)
    HO_REQUIRES(fake_lock)
{
  struct fake_qp *qp = fake_qp_by_num(p->dst_qpn);
  struct fake_port *pp = qp ? fake_qp_port(qp) : NULL;
  if (!pp || pp->state != IBV_PORT_ACTIVE ||
      !fake_port_has_gid(pp, &p->dgid, p->type))
    return NULL;
  if (memcmp(qp->attr.ah_attr.grh.dgid.raw, p->sgid.raw, 16) != 0)
    return NULL;
  return qp;
}

/* ---- the requester: sending ------------------------------------------- */

void fake_psn_assign(struct fake_qp *qp, struct fake_swqe *w)
{
  uint64_t mtu = 128u << (qp->attr.path_mtu ? qp->attr.path_mtu : 1);
  uint64_t n = w->len ? (w->len + mtu - 1) / mtu : 1;
  w->npkts = (uint32_t)n;
  w->psn = qp->sq_next_psn;
  qp->sq_next_psn = fake_psn_add(qp->sq_next_psn, w->npkts);
}

void fake_psn_transmit(struct fake_qp *qp, struct fake_swqe *w, uint64_t now)
    HO_REQUIRES(fake_lock)
{
  struct fake_span loc[FAKE_MAX_SGE], snap;
  struct fake_pkt *p;
  bool read = w->opcode == IBV_WR_RDMA_READ;
  int nloc = 0;
  w->t_next = fake_retry_at(qp, now);
  if (!fake_local_spans(qp, w, loc, &nloc)) {
    if (read)
      qp->reads_out--;
    fake_swqe_done(w, IBV_WC_LOC_PROT_ERR);
    return;
  }
  p = fake_pkt_new(FAKE_PKT_REQ, read ? 0 : w->len);
  if (!fake_pkt_address(p, qp) || fake_take_drop(qp->ctx->dev)) {
    fake_pkt_free(p); /* never linked: its link points at itself */
    return;
  }
  snap = (struct fake_span){p->data, read ? 0 : w->len};
  fake_copy(&snap, 1, loc, nloc, snap.len); /* the NIC reads it now */
  p->psn = w->psn;
  p->npkts = w->npkts;
  p->rq = (struct fake_req){.opcode = w->opcode, .raddr = w->raddr,
                            .len = w->len, .rkey = w->rkey, .imm = w->imm,
                            .src_qpn = qp->ibqp.qp_num,
                            .mtu = qp->attr.path_mtu,
                            .reads_out = qp->reads_out,
                            .src = qp->ctx->dev};
  p->t_depart = now;
  p->t_arrive = now + fake_delay_ns(qp->ctx->dev);
  fake_pkt_queue(p);
}

bool fake_psn_timer(struct fake_qp *qp, struct fake_swqe *w, uint64_t now)
    HO_REQUIRES(fake_lock)
{
  if (now < w->t_next)
    return false;
  fake_sq_untransmit_from(qp, 1);
  if (w->opcode == IBV_WR_RDMA_READ)
    qp->reads_out--;
  qp->ctx->dev->stats.requests_dropped++;
  qp->stats.drops++;
  w->phase = FAKE_WAIT;
  w->wait = FAKE_WAIT_ACK;
  fake_swqe_timer(qp, w, now); /* retransmits, or RETRY_EXC_ERR */
  return true;
}

/* ---- the responder ------------------------------------------------------ */

/* Queues a response of qp's responder; it leaves after the ACK delay, or
 * at once (a NAK that precedes the error state). */
static struct fake_pkt *fake_respond(struct fake_qp *qp,
                                     enum fake_pkt_kind kind, uint32_t psn,
                                     uint64_t now, bool at_once)
    HO_REQUIRES(fake_lock)
{
  struct fake_pkt *p = fake_pkt_new(kind, 0);
  if (!fake_pkt_address(p, qp)) {
    fake_pkt_free(p);
    return NULL;
  }
  p->psn = psn;
  p->t_depart = now + (at_once ? 0 : fab.ack_delay_ns);
  p->t_arrive = p->t_depart + fake_delay_ns(qp->ctx->dev);
  p->holder = p->t_depart > now ? qp : NULL;
  fake_pkt_queue(p);
  return p;
}

/* Answers an executed request: ACK, READ response (taking *rdata), RNR
 * NAK or error NAK. */
static void fake_answer(struct fake_qp *qp, const struct fake_pkt *req,
                        const struct fake_result *r, uint8_t **rdata,
                        uint64_t now) HO_REQUIRES(fake_lock)
{
  struct fake_pkt *p;
  if (r->kind == FAKE_R_OK && req->rq.opcode == IBV_WR_RDMA_READ) {
    if ((p = fake_respond(qp, FAKE_PKT_READ_RESP, req->psn, now, false))) {
      p->data = *rdata;
      p->rq.len = req->rq.len;
      *rdata = NULL;
    }
  } else if (r->kind == FAKE_R_OK) {
    fake_respond(qp, FAKE_PKT_ACK, fake_psn_add(req->psn, req->npkts - 1),
                 now, false);
  } else if (r->kind == FAKE_R_RNR) {
    if ((p = fake_respond(qp, FAKE_PKT_NAK_RNR, req->psn, now, false)))
      p->rnr_timer = r->rnr_timer;
  } else if ((p = fake_respond(qp, FAKE_PKT_NAK_ERR, req->psn, now, true))) {
    p->status = r->status;
  }
}

/* Executes an in-order request (or replays a READ: advance false). */
static void fake_respond_execute(struct fake_qp *qp, struct fake_pkt *req,
                                 uint64_t now, bool advance)
    HO_REQUIRES(fake_lock)
{
  bool read = req->rq.opcode == IBV_WR_RDMA_READ;
  uint8_t *rdata = read && req->rq.len ? malloc(req->rq.len) : NULL;
  struct fake_span span = {read ? rdata : req->data, req->rq.len};
  struct fake_req rq = req->rq;
  struct fake_result r;
  if (read && req->rq.len && !rdata)
    abort();
  rq.loc = &span;
  rq.nloc = 1;
  r = fake_execute(&rq, qp);
  if (r.kind == FAKE_R_OK && advance) {
    qp->epsn = fake_psn_add(req->psn, req->npkts);
    qp->ack_psn = qp->epsn;
  }
  fake_answer(qp, req, &r, &rdata, now);
  free(rdata);
  if (r.peer_err && r.peer_err->attr.qp_state != IBV_QPS_ERR)
    fake_qp_to_err(r.peer_err);
}

static void fake_count_dup(struct fake_qp *qp)
{
  qp->ctx->dev->stats.dup_requests++;
  qp->stats.dup_requests++;
}

/* A request behind the expected PSN: SEND and WRITE are acknowledged
 * again, with the PSN before the responder's ACK PSN, and not executed;
 * a READ is replayed (with rxe RESET semantics only one of this
 * connection: RESET freed the responder's READ resources). */
static void fake_respond_duplicate(struct fake_qp *qp, struct fake_pkt *req,
                                   uint64_t now) HO_REQUIRES(fake_lock)
{
  fake_count_dup(qp);
  if (req->rq.opcode != IBV_WR_RDMA_READ) {
    fake_respond(qp, FAKE_PKT_ACK, fake_psn_add(qp->ack_psn, FAKE_PSN_MASK),
                 now, false);
    return;
  }
  if (!fab.rxe_reset || fake_psn_diff(req->psn, qp->conn_psn) >= 0)
    fake_respond_execute(qp, req, now, false);
}

static void fake_on_request(struct fake_pkt *req, uint64_t now)
    HO_REQUIRES(fake_lock)
{
  struct fake_qp *qp = fake_pkt_target(req);
  int32_t d;
  if (!qp || (qp->attr.qp_state != IBV_QPS_RTR &&
              qp->attr.qp_state != IBV_QPS_RTS))
    return; /* dropped silently: the requester times out */
  d = fake_psn_diff(req->psn, qp->epsn);
  if (d < 0) {
    fake_respond_duplicate(qp, req, now);
  } else if (d > 0) {
    if (qp->sent_psn_nak)
      return; /* one NAK per gap */
    qp->sent_psn_nak = true;
    qp->ctx->dev->stats.seq_naks++;
    qp->stats.seq_naks++;
    fake_respond(qp, FAKE_PKT_NAK_SEQ, qp->epsn, now, false);
  } else {
    qp->sent_psn_nak = false;
    fake_respond_execute(qp, req, now, true);
  }
}

/* ---- the requester: responses ------------------------------------------ */

/* The WRs awaiting a response: [*first, *end) of the send queue, from the
 * first that is not DONE on while SENT. False if none. */
static bool fake_outstanding(struct fake_qp *qp, unsigned *first,
                             unsigned *end)
{
  unsigned i = 0;
  while (i < qp->sq_count && fake_sq_at(qp, i)->phase == FAKE_DONE)
    i++;
  *first = i;
  while (i < qp->sq_count && fake_sq_at(qp, i)->phase == FAKE_SENT)
    i++;
  *end = i;
  return *end > *first;
}

/* Whether psn lies within the PSNs outstanding (with rxe ACK semantics:
 * at or past the oldest one, however far). */
static bool fake_in_window(struct fake_qp *qp, unsigned first, unsigned end,
                           uint32_t psn) HO_REQUIRES(fake_lock)
{
  if (fake_psn_diff(psn, fake_sq_at(qp, first)->psn) < 0)
    return false;
  return fab.rxe_acks ||
         fake_psn_diff(psn, fake_swqe_last(fake_sq_at(qp, end - 1))) <= 0;
}

/* Retransmits from the i-th WR on (a NAK, or a READ answered by a later
 * PSN); counts against its retry_cnt as rxe does. */
static void fake_go_back(struct fake_qp *qp, unsigned i, uint64_t now)
    HO_REQUIRES(fake_lock)
{
  struct fake_swqe *w = fake_sq_at(qp, i);
  fake_sq_untransmit_from(qp, i + 1);
  if (w->opcode == IBV_WR_RDMA_READ)
    qp->reads_out--;
  w->phase = FAKE_WAIT;
  w->wait = FAKE_WAIT_ACK;
  fake_swqe_timer(qp, w, now);
}

static void fake_complete(struct fake_qp *qp, struct fake_swqe *w,
                          enum ibv_wc_status st)
{
  if (w->opcode == IBV_WR_RDMA_READ)
    qp->reads_out--;
  fake_swqe_done(w, st);
}

/* A READ's data arrives. */
static void fake_read_lands(struct fake_qp *qp, struct fake_swqe *w,
                            const struct fake_pkt *p) HO_REQUIRES(fake_lock)
{
  struct fake_span loc[FAKE_MAX_SGE], src = {p->data, p->rq.len};
  int n = 0;
  if (!fake_local_spans(qp, w, loc, &n)) {
    fake_complete(qp, w, IBV_WC_LOC_PROT_ERR);
    return;
  }
  fake_copy(loc, n, &src, 1, w->len);
  fake_complete(qp, w, IBV_WC_SUCCESS);
}

/* An RNR NAK for the i-th WR: it waits min_rnr_timer, those behind it
 * are sent again after it. */
static void fake_rnr_wait(struct fake_qp *qp, unsigned i, uint8_t timer,
                          uint64_t now) HO_REQUIRES(fake_lock)
{
  struct fake_swqe *w = fake_sq_at(qp, i);
  fake_sq_untransmit_from(qp, i + 1);
  if (w->opcode == IBV_WR_RDMA_READ)
    qp->reads_out--;
  w->phase = FAKE_WAIT;
  w->wait = FAKE_WAIT_RNR;
  w->t_next = now + fake_scaled(fake_rnr_us[timer & 31] * 1000ull);
  qp->ctx->dev->stats.rnr_events++;
  qp->stats.rnr_events++;
}

/* What the response does to the i-th outstanding WR; true: go on to the
 * next one (this one was acknowledged). */
static bool fake_apply(struct fake_qp *qp, unsigned i, const struct fake_pkt *p,
                       uint64_t now) HO_REQUIRES(fake_lock)
{
  struct fake_swqe *w = fake_sq_at(qp, i);
  bool read = w->opcode == IBV_WR_RDMA_READ;
  int32_t past_last = fake_psn_diff(p->psn, fake_swqe_last(w));
  int32_t past_first = fake_psn_diff(p->psn, w->psn);
  if (read && p->kind == FAKE_PKT_READ_RESP && past_first == 0) {
    fake_read_lands(qp, w, p);
    return false;
  }
  if (past_last > 0 || (past_last == 0 && p->kind == FAKE_PKT_ACK)) {
    if (read) { /* answered past a READ without its data: resend it */
      fake_go_back(qp, i, now);
      return false;
    }
    fake_complete(qp, w, IBV_WC_SUCCESS);
    return true;
  }
  if (past_first < 0 || p->kind == FAKE_PKT_ACK ||
      p->kind == FAKE_PKT_READ_RESP)
    return false;
  if (p->kind == FAKE_PKT_NAK_SEQ) {
    fake_go_back(qp, i, now);
  } else if (p->kind == FAKE_PKT_NAK_RNR) {
    fake_rnr_wait(qp, i, p->rnr_timer, now);
  } else {
    fake_complete(qp, w, p->status);
  }
  return false;
}

static void fake_count_stale(struct fake_qp *qp)
{
  qp->ctx->dev->stats.stale_responses++;
  qp->stats.stale_responses++;
}

static void fake_on_response(struct fake_pkt *p, uint64_t now)
    HO_REQUIRES(fake_lock)
{
  struct fake_qp *qp = fake_pkt_target(p);
  unsigned first, end, i;
  if (!qp)
    return;
  if (qp->attr.qp_state != IBV_QPS_RTS ||
      !fake_outstanding(qp, &first, &end) ||
      !fake_in_window(qp, first, end, p->psn)) {
    fake_count_stale(qp);
    return;
  }
  for (i = first; i < end && fake_apply(qp, i, p, now); i++)
    ;
  if (fake_sq_at(qp, first)->phase != FAKE_DONE)
    return;
  for (i = first; i < qp->sq_count; i++) { /* progress restarts the timer */
    struct fake_swqe *w = fake_sq_at(qp, i);
    if (w->phase == FAKE_SENT)
      w->t_next = fake_retry_at(qp, now);
  }
}

/* ---- the fabric --------------------------------------------------------- */

bool fake_psn_deliver(uint64_t now) HO_REQUIRES(fake_lock)
{
  bool any = false;
  unsigned budget = 100000;
  while (fab.pkts.next != &fab.pkts && budget-- > 0) {
    struct fake_pkt *p = fake_container(fab.pkts.next, struct fake_pkt, link);
    if (p->t_arrive > now)
      break;
    fake_list_del(&p->link);
    fake_list_init(&p->link);
    if (p->kind == FAKE_PKT_REQ)
      fake_on_request(p, now);
    else
      fake_on_response(p, now);
    fake_pkt_free(p);
    any = true;
  }
  return any;
}

void fake_psn_modified(struct fake_qp *qp, const struct ibv_qp_attr *a,
                       int mask, enum ibv_qp_state next)
    HO_REQUIRES(fake_lock)
{
  if (next == IBV_QPS_RESET) {
    fake_psn_qp_gone(qp);
    qp->sent_psn_nak = false;
    if (!fab.rxe_reset)
      qp->epsn = qp->ack_psn = qp->sq_next_psn = qp->conn_psn = 0;
  }
  if (mask & IBV_QP_RQ_PSN) {
    qp->epsn = qp->conn_psn = a->rq_psn;
    if (!fab.rxe_reset)
      qp->ack_psn = a->rq_psn;
  }
  if (mask & IBV_QP_SQ_PSN)
    qp->sq_next_psn = a->sq_psn;
}

void fake_psn_qp_gone(struct fake_qp *qp) HO_REQUIRES(fake_lock)
{
  uint64_t now = fake_now();
  struct fake_link *l = fab.pkts.next;
  while (l != &fab.pkts) {
    struct fake_pkt *p = fake_container(l, struct fake_pkt, link);
    l = l->next;
    if (p->holder != qp)
      continue;
    p->holder = NULL; /* departed: on the wire, whatever qp does */
    if (p->t_depart > now) {
      qp->ctx->dev->stats.acks_lost++;
      qp->stats.acks_lost++;
      fake_pkt_free(p);
    }
  }
}

void fake_psn_free_all(void) HO_REQUIRES(fake_lock)
{
  while (fab.pkts.next != &fab.pkts)
    fake_pkt_free(fake_container(fab.pkts.next, struct fake_pkt, link));
}
