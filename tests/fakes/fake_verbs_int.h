/* SPDX-License-Identifier: MIT */
/* Internal to the simulated RC fabric (fake_verbs.c, fake_verbs_psn.c): the
 * objects behind the ibv_* structs handed out, the fabric, its lock, and
 * the functions the two files share. Not for tests: they use
 * fake_verbs.h. */
#ifndef HO_TESTS_FAKE_VERBS_INT_H
#define HO_TESTS_FAKE_VERBS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "common/thread_safety.h"
#include "fakes/fake_verbs.h"


#define FAKE_MAX_DEVICES 16
#define FAKE_RETRY_FOREVER 7
#define FAKE_MAX_MSG (1ull << 31)
#define FAKE_QPN_MASK 0xffffffu
#define FAKE_QP_ACCESS                                                      \
  (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
   IBV_ACCESS_REMOTE_ATOMIC)
#define FAKE_MR_ACCESS (FAKE_QP_ACCESS | IBV_ACCESS_MW_BIND)

/* ---- intrusive lists --------------------------------------------------- */

struct fake_link {
  struct fake_link *prev, *next;
};

static inline void fake_list_init(struct fake_link *h) { h->prev = h->next = h; }

static inline void fake_list_add(struct fake_link *h, struct fake_link *l)
{
  l->prev = h->prev;
  l->next = h;
  h->prev->next = l;
  h->prev = l;
}

static inline void fake_list_del(struct fake_link *l)
{
  l->prev->next = l->next;
  l->next->prev = l->prev;
  l->prev = l->next = l;
}

#define fake_container(ptr, type, member)                                   \
  ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* ---- objects ----------------------------------------------------------- */

struct fake_port {
  enum ibv_port_state state;
  enum ibv_mtu active_mtu;
  uint16_t lid;
  union ibv_gid gid[FAKE_GID_TABLE_LEN];
  enum fake_gid_type gid_type[FAKE_GID_TABLE_LEN];
};

/* Faults of a device, of the fabric (every device) or of a QP. */
struct fake_fault {
  unsigned drop_next;
  unsigned delay_ms;
  unsigned force_n;
  enum ibv_wc_status force_status;
  unsigned rtr_fail_n; /* modify_qp into RTR fails rtr_fail_n times */
  int rtr_fail_err;
};

struct fake_dev {
  struct ibv_device ibdev; /* first: the pointer handed out */
  struct fake_device_cfg cfg;
  struct fake_port port[FAKE_MAX_PORTS];
  struct fake_dev_stats stats;
  struct fake_fault fault;
  int index;
};

struct fake_ctx {
  struct ibv_context ibctx;
  struct fake_link link;
  struct fake_dev *dev;
  unsigned n_pd, n_cq, n_qp, n_ch;
};

struct fake_pd {
  struct ibv_pd ibpd;
  struct fake_link link;
  struct fake_ctx *ctx;
  unsigned n_mr, n_qp, n_mw;
};

struct fake_mr {
  struct ibv_mr ibmr;
  struct fake_link link;
  struct fake_pd *pd;
  int access;
  bool dmabuf;
  int fd;
  uint64_t offset;
};

struct fake_qp;

/* A type-2 memory window: valid (bound) over [addr, +len) of an MR with
 * `access`, reachable only through the QP it was bound on. */
struct fake_mw {
  struct ibv_mw ibmw;
  struct fake_link link;
  struct fake_pd *pd;
  uint32_t key_now; /* the key it answers to; ibmw.rkey is the consumer's */
  bool bound;
  struct fake_qp *qp;
  uint64_t addr, len;
  int access;
};

struct fake_cqe {
  struct ibv_wc wc;
  struct fake_qp *qp;
  unsigned release; /* SQ slots freed when polled (sq_release_on_poll) */
};

/* A completion channel: an eventfd (EFD_SEMAPHORE, one count per event)
 * as its fd; which CQs have events is kept on the CQs. */
struct fake_channel {
  struct ibv_comp_channel ibch;
  struct fake_link link;
  struct fake_ctx *ctx;
  unsigned n_cq;
};

struct fake_cq {
  struct ibv_cq ibcq;
  struct fake_link link;
  struct fake_ctx *ctx;
  struct fake_cqe *ring;
  int cap, head, count;
  unsigned n_qp;
  bool overflowed;
  struct fake_channel *ch; /* NULL: created without one */
  bool armed;              /* req_notify_cq: an event at the next push */
  unsigned events;         /* raised on ch, not read yet */
  unsigned unacked;        /* read, not acknowledged yet */
};

enum fake_phase { FAKE_QUEUED, FAKE_SENT, FAKE_WAIT, FAKE_DONE };
enum fake_wait { FAKE_WAIT_ACK, FAKE_WAIT_RNR };

struct fake_swqe {
  uint64_t wr_id;
  enum ibv_wr_opcode opcode;
  unsigned flags;
  bool signaled;
  uint32_t imm;
  uint64_t raddr;
  uint32_t rkey;
  int num_sge;
  struct ibv_sge *sge; /* the slot's array, max_send_sge long */
  uint8_t *inl;        /* the slot's inline buffer */
  uint32_t inl_len;
  uint64_t len; /* message length */
  struct ibv_mw *mw; /* IBV_WR_BIND_MW: the window, bound with rkey */
  uint32_t mw_old;   /* its ibmw.rkey when posted: must be its key now */
  struct ibv_mw_bind_info bind;
  uint32_t psn, npkts; /* PSN mode: first PSN, PSNs the message takes */
  enum fake_phase phase;
  enum fake_wait wait;
  uint64_t t_tx, t_arrive, t_next;
  int retries_left, rnr_left;
  enum ibv_wc_status status;
};

struct fake_rwqe {
  uint64_t wr_id;
  int num_sge;
  struct ibv_sge *sge;
};

struct fake_record {
  bool valid;
  struct ibv_qp_attr attr;
  int mask;
};

struct fake_qp {
  struct ibv_qp ibqp;
  struct fake_link link;
  struct fake_ctx *ctx;
  struct fake_pd *pd;
  struct fake_cq *scq, *rcq;
  struct ibv_qp_init_attr init;
  struct ibv_qp_attr attr;
  int set_mask;
  struct fake_record rec[IBV_QPS_ERR + 1];
  struct fake_swqe *sq;
  unsigned sq_head, sq_count, sq_held, sq_unsignaled;
  struct ibv_sge *sq_sge;
  uint8_t *sq_inl;
  struct fake_rwqe *rq;
  unsigned rq_head, rq_count;
  struct ibv_sge *rq_sge;
  unsigned reads_out;
  struct fake_qp_stats stats;
  struct fake_fault fault;
  /* PSN mode (fake_verbs_psn.c); kept apart from attr, which RESET zeroes */
  uint32_t sq_next_psn; /* requester: first PSN of the next message posted */
  uint32_t epsn;        /* responder: the PSN expected next */
  uint32_t ack_psn;     /* responder: one past the last PSN executed */
  uint32_t conn_psn;    /* responder: rq_psn of the last RTR */
  bool sent_psn_nak;    /* responder: NAKed a gap, silent until in order */
};

_Static_assert(offsetof(struct fake_dev, ibdev) == 0, "ibv struct first");
_Static_assert(offsetof(struct fake_ctx, ibctx) == 0, "ibv struct first");
_Static_assert(offsetof(struct fake_pd, ibpd) == 0, "ibv struct first");
_Static_assert(offsetof(struct fake_mr, ibmr) == 0, "ibv struct first");
_Static_assert(offsetof(struct fake_cq, ibcq) == 0, "ibv struct first");
_Static_assert(offsetof(struct fake_channel, ibch) == 0, "ibv struct first");
_Static_assert(offsetof(struct fake_mw, ibmw) == 0, "ibv struct first");
_Static_assert(offsetof(struct fake_qp, ibqp) == 0, "ibv struct first");

#define FAKE_VERB_LIST(X)                                                   \
  X(get_device_list) X(free_device_list) X(get_device_name) X(open_device)  \
  X(close_device) X(query_device) X(query_port) X(query_gid) X(alloc_pd)    \
  X(dealloc_pd) X(reg_mr) X(reg_dmabuf_mr) X(dereg_mr) X(create_cq)         \
  X(destroy_cq) X(create_qp) X(modify_qp) X(query_qp) X(destroy_qp)         \
  X(post_send) X(post_recv) X(poll_cq) X(alloc_mw) X(dealloc_mw)           \
  X(create_comp_channel) X(destroy_comp_channel) X(req_notify_cq)           \
  X(get_cq_event) X(ack_cq_events)

#define FAKE_VERB_ENUM(n) FV_##n,
enum fake_verb { FAKE_VERB_LIST(FAKE_VERB_ENUM) FV_COUNT };

struct fake_inject {
  unsigned skip, count;
  int err;
  unsigned long calls;
};

struct fake_fabric {
  bool ready;
  struct fake_dev *dev[FAKE_MAX_DEVICES];
  int n_dev;
  struct fake_link ctxs, pds, mrs, mws, cqs, qps, chans;
  int n_live;
  double scale;
  bool manual;
  uint64_t manual_now;
  int64_t offset; /* added to the monotonic clock when not manual */
  enum fake_retry_semantics retry;
  bool dmabuf, strict_mtu, sq_release_on_poll;
  bool psn, rxe_reset, rxe_acks; /* fake_fabric_set_psn() and friends */
  uint64_t ack_delay_ns;
  struct fake_link pkts; /* PSN mode: packets in flight, by t_arrive */
  struct fake_fault fault;
  struct fake_inject inject[FV_COUNT];
  uint32_t next_qpn, next_key, next_handle;
};

struct fake_span {
  uint8_t *p;
  uint64_t len;
};

/* A request as its responder executes it. */
struct fake_req {
  enum ibv_wr_opcode opcode;
  uint64_t raddr, len;
  uint32_t rkey, imm, src_qpn;
  enum ibv_mtu mtu;          /* the requester's path MTU */
  unsigned reads_out;        /* the requester's READs in flight */
  struct fake_dev *src;      /* the requester's device, for its counters */
  const struct fake_span *loc; /* payload (SEND, WRITE) or sink (READ) */
  int nloc;
};

enum fake_rkind { FAKE_R_OK, FAKE_R_FAIL, FAKE_R_DROP, FAKE_R_RNR };

struct fake_result {
  enum fake_rkind kind;
  enum ibv_wc_status status; /* FAKE_R_FAIL */
  uint8_t rnr_timer;         /* FAKE_R_RNR: the responder's min_rnr_timer */
  struct fake_qp *peer_err;  /* a responder to move to ERR */
};

extern ho_mutex fake_lock;
extern struct fake_fabric fab HO_GUARDED_BY(fake_lock);

/* ---- shared by fake_verbs.c and fake_verbs_psn.c ------------------------ */

extern const uint32_t fake_rnr_us[32];

uint64_t fake_now(void) HO_REQUIRES(fake_lock);
uint64_t fake_scaled(uint64_t ns) HO_REQUIRES(fake_lock);
uint64_t fake_retry_at(struct fake_qp *qp, uint64_t t_tx)
    HO_REQUIRES(fake_lock);
uint64_t fake_delay_ns(struct fake_dev *d) HO_REQUIRES(fake_lock);
struct fake_port *fake_qp_port(struct fake_qp *qp);
struct fake_qp *fake_qp_by_num(uint32_t qpn) HO_REQUIRES(fake_lock);
bool fake_port_has_gid(const struct fake_port *p, const union ibv_gid *gid,
                       enum fake_gid_type t);
bool fake_take_drop(struct fake_dev *d) HO_REQUIRES(fake_lock);
void fake_copy(const struct fake_span *dst, int nd,
               const struct fake_span *src, int ns, uint64_t limit);
bool fake_local_spans(struct fake_qp *qp, struct fake_swqe *w,
                      struct fake_span *out, int *n) HO_REQUIRES(fake_lock);
struct fake_result fake_execute(const struct fake_req *rq,
                                struct fake_qp *peer) HO_REQUIRES(fake_lock);
struct fake_swqe *fake_sq_at(struct fake_qp *qp, unsigned i);
void fake_sq_untransmit_from(struct fake_qp *qp, unsigned i);
void fake_swqe_done(struct fake_swqe *w, enum ibv_wc_status st);
void fake_swqe_timer(struct fake_qp *qp, struct fake_swqe *w, uint64_t now)
    HO_REQUIRES(fake_lock);
void fake_qp_to_err(struct fake_qp *qp) HO_REQUIRES(fake_lock);

/* ---- fake_verbs_psn.c: PSNs and responses as packets -------------------- */

/* The message's PSNs: one per path-MTU packet (a READ: per response
 * packet), at least one. Called when the WR is posted. */
void fake_psn_assign(struct fake_qp *qp, struct fake_swqe *w);
/* Puts w's request on the wire (fake_swqe_transmit did the rest). */
void fake_psn_transmit(struct fake_qp *qp, struct fake_swqe *w, uint64_t now)
    HO_REQUIRES(fake_lock);
/* The head is SENT: its transport timer, if due. True if it fired. */
bool fake_psn_timer(struct fake_qp *qp, struct fake_swqe *w, uint64_t now)
    HO_REQUIRES(fake_lock);
/* Delivers the packets due by now; true if any arrived. */
bool fake_psn_deliver(uint64_t now) HO_REQUIRES(fake_lock);
/* PSN bookkeeping of a successful modify_qp. */
void fake_psn_modified(struct fake_qp *qp, const struct ibv_qp_attr *a,
                       int mask, enum ibv_qp_state next)
    HO_REQUIRES(fake_lock);
/* qp left RTR/RTS (RESET, ERR) or is destroyed: the responses it has not
 * sent yet are lost, and no packet refers to it any more. */
void fake_psn_qp_gone(struct fake_qp *qp) HO_REQUIRES(fake_lock);
void fake_psn_free_all(void) HO_REQUIRES(fake_lock);

#endif
