/* SPDX-License-Identifier: MIT */
/* The RDMA device and RC connections: QP state transitions, the message
 * slots of the D3 protocol, completion polling. Used by the library and by
 * the test server's engine. Not thread-safe per object: a connection is used
 * by one thread at a time (the pool's lease makes it so). */
#ifndef HO_RDMA_TRANSPORT_H
#define HO_RDMA_TRANSPORT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "platform/platform.h"
#include "rdma/protocol.h"
#include "rdma/token.h"

struct ho_device {
  const struct ho_verbs_ops *v;
  struct ibv_context *ctx;
  struct ibv_pd *pd;
  char name[HO_NIC_NAME_MAX];
  uint8_t port;
  int gid_index;
  union ibv_gid gid;
  enum ibv_mtu active_mtu;
  uint16_t lid;
  bool roce;               /* the port's link layer is Ethernet */
  uint32_t vendor_id;
  uint32_t vendor_part_id;
  int max_qp_rd_atom;      /* as responder */
  int max_qp_init_rd_atom; /* as initiator */
  bool mw_type2;           /* binds type-2 memory windows (device caps and
                              a window allocated and freed at open) */
  /* QP state transitions made through this device (every modify_qp that
   * changes a state): the cost that persistent connections avoid. */
  _Atomic uint64_t qp_transitions;
  /* The wait policy (ho_conn_wait; docs/architecture.md, "Wait policy"),
   * set before the device is shared: poll for spin_ns after the last
   * completion, then, if block, arm the CQ and block on its channel. */
  uint64_t spin_ns;
  bool block;
  /* Channels are fds: at most max_channels live at once (a quarter of
   * RLIMIT_NOFILE's soft limit, so that sockets keep theirs); beyond it a
   * connection's waits poll (ho_backoff). */
  unsigned max_channels;
  _Atomic unsigned channels;
  /* What the waits did through this device: CQs armed, completion events
   * woken by, blocks that ended without one (timeout or the sleep cap). */
  _Atomic uint64_t wait_arms;
  _Atomic uint64_t wait_events;
  _Atomic uint64_t wait_idle_wakes;
  /* Liveness probes posted, and those that failed (ho_conn_probe). */
  _Atomic uint64_t probes;
  _Atomic uint64_t probes_failed;
};

/* The default spin window: 0 on a software RDMA device (Soft-RoCE, whose
 * packet work needs the CPU a spinning thread takes) or with 2 CPUs or
 * fewer, else 10 us. */
unsigned ho_spin_us_default(bool soft, long cpus);
/* Whether the device is software RDMA (rxe, siw): by its name or rxe's
 * vendor ID. */
bool ho_device_is_soft(const struct ho_device *d);
/* The CPUs this process may run on (its affinity), else those online. */
long ho_usable_cpus(void);
/* The policy of HIPOBJ_SPIN_US (a number of microseconds, HO_SPIN_US_AUTO
 * or HO_SPIN_US_POLL, common/clock.h) for d, before d is shared. */
void ho_device_set_spin(struct ho_device *d, unsigned spin_us);

/* Open `name` on its first ACTIVE port and choose the GID (ho_select_gid).
 * Errors: NicNotFound (no such device, no active port), RdmaError. */
hipObjOpError_t ho_device_open(const struct ho_verbs_ops *v,
                               const struct ho_topology *topo,
                               const char *name, struct ho_device **out);
void ho_device_close(struct ho_device *d);

struct ho_conn_attr {
  uint32_t max_send_wr;
  uint32_t max_recv_wr;
  int qp_access;        /* qp_access_flags: what the peer may do to us */
  uint8_t reads_out;    /* RDMA READs we issue at once; 0: as many as the
                           device and the vendor's tuning allow */
};

/* A QP is connected once in its life: INIT -> RTS, then ERR when it is
 * retired. It is never recycled through RESET (docs/protocol.md, section 5):
 * late packets of its connection must die at a QP that still carries its
 * number, not reach a new connection. */
enum ho_conn_state { HO_CONN_INIT, HO_CONN_RTS, HO_CONN_BROKEN, HO_CONN_RETIRED };

/* wr_id values of the connection's own message work requests. */
#define HO_WRID_MSG_RECV 0x5245435600000000ull /* "RECV" */
#define HO_WRID_MSG_SEND 0x53454e4400000000ull /* "SEND" */
#define HO_WRID_MW_BIND 0x42494e4400000000ull  /* "BIND" */
#define HO_WRID_MW_INV 0x494e560000000000ull   /* "INV" */
#define HO_WRID_PROBE 0x50524f4245000000ull    /* "PROBE" */

struct ho_conn {
  struct ho_device *dev;
  struct ibv_cq *cq;
  struct ibv_comp_channel *ch; /* the CQ's, O_NONBLOCK; NULL: never blocks */
  bool armed;                  /* CQ armed, its event not read yet */
  unsigned unacked;            /* events read, not acknowledged yet */
  struct ibv_qp *qp;
  struct ibv_mr *msg_mr;
  uint8_t *msg;  /* [0, HO_MSG_SIZE) receive slot, then the send slot */
  enum ho_conn_state state;
  bool probe_pending; /* a liveness probe's completion is owed */
  uint8_t rd_atomic; /* outstanding READs we accept */
  uint8_t rd_out;    /* outstanding READs we issue */
  uint32_t peer_qpn; /* the QP it is connected to */
  uint64_t retired_ns; /* when it was retired (ho_now_ns clock) */
  struct ho_conn *next_retired; /* on its owner's retired list */
};

/* A CQ and an RC QP in INIT, and the registered message slots. */
hipObjOpError_t ho_conn_create(struct ho_device *d,
                               const struct ho_conn_attr *a,
                               struct ho_conn **out);
void ho_conn_destroy(struct ho_conn *c);

/* INIT -> RTR -> RTS aimed at the peer token's QP number, GID and LID, with
 * the port's active MTU and the vendor's retry settings. The token must be
 * RC and the QP fresh (INIT, never connected). sq_psn is the first PSN we
 * send, rq_psn the first we expect: the two sides derive them from the
 * cookie of the transfer that made the connection (ho_psn_from_cookie). */
hipObjOpError_t ho_conn_connect(struct ho_conn *c, const struct ho_token *peer,
                                uint32_t sq_psn, uint32_t rq_psn);

/* End the QP's connection for good: move it to ERR (flushing what is
 * posted) and drain its CQ. The caller keeps the QP for a grace period
 * (ho_retired_*) before destroying it, as TCP keeps TIME_WAIT, so that late
 * packets of the connection die here. */
void ho_conn_retire(struct ho_conn *c);

/* A list of retired connections waiting out their grace period. Not
 * thread-safe: its owner locks it. */
struct ho_retired {
  struct ho_conn *head, *tail;
  unsigned count;
};

/* Retire c (if it is not already) and append it to the list. */
void ho_retired_add(struct ho_retired *r, struct ho_conn *c, uint64_t now_ns);

/* Unlink the connections retired at least grace_ns before now (all of
 * them with grace_ns 0) and return them as a chain through next_retired,
 * for the caller to destroy outside its lock (ho_conn_destroy_chain). */
struct ho_conn *ho_retired_take_expired(struct ho_retired *r, uint64_t now_ns,
                                        uint64_t grace_ns);
void ho_conn_destroy_chain(struct ho_conn *c);

/* Post the receive for one protocol message into the receive slot. */
hipObjOpError_t ho_conn_post_msg_recv(struct ho_conn *c);

/* SEND one protocol message from the send slot (signalled). */
hipObjOpError_t ho_conn_send_msg(struct ho_conn *c, const struct ho_msg *m);

/* Poll up to n completions, without waiting. Returns the count, or -1. */
int ho_conn_poll(struct ho_conn *c, struct ibv_wc *wc, int n);

/* ---- the one wait: completions and messages ----------------------------
 * Every wait on a connection's CQ goes through ho_conn_wait(): the client's
 * wait for final and for an invalidation, the engine's waits for a
 * completion and for ready. It polls one completion at a time and hands
 * each to `take`; after an empty poll it spins for the device's spin_ns,
 * then arms the CQ, polls once more (a completion that came before the arm
 * raises no event), and blocks on the CQ's channel for at most
 * max_sleep_us at a time; without a channel (or with HIPOBJ_SPIN_US=poll)
 * it backs off instead (ho_backoff: spin, yield, then sleep at most
 * max_sleep_us). It ends when `take` says done or fails, when the deadline
 * (ho_now_ns clock) passes, or when *cancel (may be NULL) is set: both are
 * looked at after every empty poll, so a block never hides them for more
 * than max_sleep_us. The caller reports a timeout in its own words. */
enum ho_take { HO_TAKE_MORE, HO_TAKE_DONE, HO_TAKE_ERROR };
enum ho_wait_end {
  HO_WAIT_DONE,
  HO_WAIT_ERROR,     /* an error completion (reported), or polling failed */
  HO_WAIT_TIMEOUT,
  HO_WAIT_CANCELLED,
  HO_WAIT_MALFORMED, /* ho_conn_wait_final: a malformed message */
  HO_WAIT_STALLED    /* ho_conn_wait_final: nothing from the peer */
};
typedef enum ho_take (*ho_take_fn)(struct ho_conn *c, const struct ibv_wc *wc,
                                   void *arg);
enum ho_wait_end ho_conn_wait(struct ho_conn *c, uint64_t deadline_ns,
                              const atomic_bool *cancel, unsigned max_sleep_us,
                              ho_take_fn take, void *arg);

/* For a thread that waits on many connections at once (the server's
 * dispatcher, docs/architecture.md): the connection's completion channel
 * fd (-1: it has none, and must be polled), the CQ armed for its next
 * completion (false: no channel, or the arm failed), and the channel's
 * events read without blocking (true: there were some; acknowledged in
 * batches, as ho_conn_wait does). Then ho_conn_wait with deadline 0 polls
 * once. The arm must be followed by a poll: what came before it raises
 * no event. */
int ho_conn_channel_fd(const struct ho_conn *c);
bool ho_conn_arm(struct ho_conn *c);
bool ho_conn_take_events(struct ho_conn *c);

/* Report a failed completion once (work request, status and vendor error)
 * and mark the connection broken. */
void ho_conn_report_wc(struct ho_conn *c, const struct ibv_wc *wc);

/* Whether the connected QP is still usable (ibv_query_qp says RTS). A kept
 * connection can be moved to error between transfers without any
 * completion to tell (docs/performance.md, "Faults: root causes"). */
bool ho_conn_usable(struct ho_conn *c);

/* A liveness probe: a zero-length RDMA WRITE, signalled, which needs no
 * key and touches no memory (IBTA C9-88). The peer's QP acknowledges it
 * while it is in RTS; a peer QP in error (or destroyed) answers nothing,
 * so the probe fails once our retry budget is spent. The peer's QP must
 * grant IBV_ACCESS_REMOTE_WRITE (a server's offer says it does). Its
 * completion is taken by ho_conn_wait(): a failure ends the wait with
 * HO_WAIT_ERROR, whatever the caller waits for. */
hipObjOpError_t ho_conn_probe(struct ho_conn *c);

/* The bounds of the client's wait for final (ho_conn_wait_final). */
struct ho_final_bounds {
  uint64_t deadline_ns; /* in, out: moved later while the transfer moves */
  uint64_t limit_ns;    /* the deadline is never moved past it */
  uint64_t extend_ns;   /* one move: to now + extend_ns (0: never moved) */
  uint64_t stall_ns;    /* 0: no stall bound */
  uint64_t probe_ns;    /* 0: no liveness probes */
  unsigned slices;      /* the PSN must have moved in the deadline's last
                           1/slices of extend_ns (0, 1: since it was set) */
  unsigned moves;       /* out: how often the deadline moved */
};

/* The client's wait for final (ho_conn_wait_msg's sequence) with a stall
 * bound: HO_WAIT_STALLED when the QP's receive PSN (ibv_query_qp) has not
 * moved for b->stall_ns while nothing arrived: the peer has sent nothing
 * for that long, so a server whose RDMA failed is known without waiting
 * for the deadline (docs/protocol.md, section 7). With b->probe_ns, once
 * our send completed, a liveness probe (ho_conn_probe) every probe_ns
 * while no final came: a server whose QP gave up is known within
 * probe_ns plus our retry budget, for a PUT as for a GET. The deadline
 * follows progress: when it comes and the receive PSN (the server's
 * WRITEs of a GET, its READ requests of a PUT) moved in its last
 * 1/b->slices of b->extend_ns, it moves to now + b->extend_ns, at most to
 * b->limit_ns. A timeout is reported once, as by ho_conn_wait_msg(). */
enum ho_wait_end ho_conn_wait_final(struct ho_conn *c, bool *send_pending,
                                    struct ho_final_bounds *b,
                                    struct ho_msg *m);

/* Wait until the peer's message arrives in the receive slot and our own
 * send (if one is outstanding: *send_pending) completed, or the deadline
 * (ho_now_ns() clock) passes. Error completions are reported on stderr once
 * and fail with RdmaError. On success *m is the decoded message. */
hipObjOpError_t ho_conn_wait_msg(struct ho_conn *c, bool *send_pending,
                                 uint64_t deadline_ns, struct ho_msg *m);

/* The same with a cancel flag and the engine's sleep cap: the server's
 * wait for ready. HO_WAIT_DONE with *m a ready or a final. */
enum ho_wait_end ho_conn_wait_msg_ex(struct ho_conn *c, bool *send_pending,
                                     uint64_t deadline_ns,
                                     const atomic_bool *cancel,
                                     struct ho_msg *m);
/* ---- memory windows (docs/protocol.md, section 2) ----------------------
 * A type-2 window is bound on the connected QP that the server will use,
 * over exactly the transfer's range, before ready is sent: the bind is a
 * send-queue work request, so it takes effect before ready leaves. */

/* Post an (unsignalled) bind of mw over [addr, +len) of mr with `access`
 * (IBV_ACCESS_REMOTE_WRITE or _READ) under rkey. A failed bind is an error
 * completion that ho_conn_wait_msg() reports. */
hipObjOpError_t ho_conn_bind_window(struct ho_conn *c, struct ibv_mw *mw,
                                    uint32_t rkey, struct ibv_mr *mr,
                                    uint64_t addr, uint64_t len, int access);

/* As ho_conn_bind_window, signalled, and wait (until deadline_ns) for its
 * completion: a connection that cannot bind is broken (data first,
 * docs/protocol.md section 5). */
hipObjOpError_t ho_conn_bind_window_now(struct ho_conn *c, struct ibv_mw *mw,
                                        uint32_t rkey, struct ibv_mr *mr,
                                        uint64_t addr, uint64_t len,
                                        int access, uint64_t deadline_ns);

/* Invalidate the window rkey (IBV_WR_LOCAL_INV) and wait for it until
 * deadline_ns. RdmaError if it fails or times out (the QP is then broken). */
hipObjOpError_t ho_conn_invalidate(struct ho_conn *c, uint32_t rkey,
                                   uint64_t deadline_ns);

/* Without windows (docs/memory-windows.md): what the peer may do to us
 * through this connected QP, changed in place (RTS to RTS, the access
 * flags only: not a state transition). 0 grants nothing. */
hipObjOpError_t ho_conn_set_access(struct ho_conn *c, int access);

/* The token that names this connection (QP number, GID, LID, port). */
void ho_conn_token(const struct ho_conn *c, struct ho_token *t);

/* libibverbs' ibv_mtu as bytes. */
unsigned ho_mtu_bytes(enum ibv_mtu m);

#endif
