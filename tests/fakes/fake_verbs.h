/* SPDX-License-Identifier: MIT */
/* The simulated RC fabric: a first-class fake of the verbs seam
 * (struct ho_verbs_ops) for hermetic tests.
 *
 * WHAT IT IS
 * One process-wide fabric holds devices ("fake_cli0", "fake_srv0", ...),
 * each with ports, a GID table and counters. All devices can reach each
 * other by GID. Objects handed out are real libibverbs structs
 * (ibv_device, ibv_context, ibv_pd, ibv_mr, ibv_cq, ibv_qp) with their
 * public fields filled in; private state lives in wrapper structs. The
 * contexts' ops.post_send / post_recv / poll_cq point at the fake too, so
 * the inline ibv_post_send() of <infiniband/verbs.h> also works.
 *
 * SEMANTICS (as a NIC, and as measured on Soft-RoCE, see lab/rxe-vm)
 * - QPs are RC only, with the IBTA state machine through modify_qp
 *   (RESET->INIT->RTR->RTS, any->RESET, any->ERR, INIT->INIT, RTS->RTS).
 *   Missing required or unexpected attribute masks and out-of-range values
 *   are EINVAL. On Ethernet ports the AV must be global (is_global = 1),
 *   with ah_attr.port_num the QP's port and a non-empty sgid_index entry;
 *   path_mtu must not exceed the port's active_mtu (see
 *   fake_fabric_set_strict_mtu).
 *   RESET clears both queues and removes the QP's entries from its CQs
 *   (as mlx5 does) and zeroes its attributes.
 * - A request goes to the QP whose number is the sender's dest_qp_num on the
 *   device whose port has the sender's dgid (same GID type as the sender's
 *   sgid). The responder must be in RTR or RTS, connected back to the
 *   sender's QP number and sgid, and both ports ACTIVE; otherwise the
 *   request is dropped silently (the responder sends nothing, as rxe).
 * - A dropped request is retried after each retry period
 *   (4.096 us * 2^timeout * time scale; timeout 0 = never). After retry_cnt
 *   retries the WR fails with IBV_WC_RETRY_EXC_ERR and the QP goes to ERR.
 *   retry_cnt 7 retries forever (rxe) unless FAKE_RETRY_IBTA is selected.
 *   If the responder reaches RTR meanwhile, the next retry succeeds.
 * - SEND / SEND_WITH_IMM / RDMA_WRITE_WITH_IMM with no posted receive: RNR;
 *   retried after the responder's min_rnr_timer (IBTA table, times the time
 *   scale) rnr_retry times (7 = forever), then IBV_WC_RNR_RETRY_EXC_ERR.
 *   A WRITE_WITH_IMM that hits RNR has already placed all but its last
 *   path-MTU packet (as rxe).
 * - Errors: bad rkey, range or missing remote access -> requester
 *   IBV_WC_REM_ACCESS_ERR, responder QP -> ERR. Receive buffer too small ->
 *   responder IBV_WC_LOC_LEN_ERR, requester IBV_WC_REM_INV_REQ_ERR. Bad
 *   receive SGE -> responder IBV_WC_LOC_PROT_ERR, requester
 *   IBV_WC_REM_OP_ERR. More READs in flight than the responder's
 *   max_dest_rd_atomic -> IBV_WC_REM_INV_REQ_ERR. Bad local lkey, range or
 *   access (a READ sink needs LOCAL_WRITE) -> IBV_WC_LOC_PROT_ERR. A READ on
 *   a QP with max_rd_atomic 0 -> IBV_WC_LOC_QP_OP_ERR (fake policy). Every
 *   error completion moves its QP to ERR.
 * - A QP in ERR completes every outstanding and newly posted WR with
 *   IBV_WC_WR_FLUSH_ERR (post_* still return 0). Posting sends below RTS or
 *   receives in RESET is EINVAL (as rxe).
 * - Completions: signaled sends (or sq_sig_all) give one CQE with opcode,
 *   byte_len (message length), wr_id and qp_num; error completions are
 *   always reported. Receives give IBV_WC_RECV or
 *   IBV_WC_RECV_RDMA_WITH_IMM, wc_flags IBV_WC_GRH (| IBV_WC_WITH_IMM with
 *   imm_data), src_qp. One-sided ops give nothing at the responder.
 *   Operations on one QP are delivered and completed in posting order.
 * - A CQ that overflows is broken: poll_cq returns -EOVERFLOW from then on
 *   and fake_cq_overflowed() says so.
 * - Limits: max_send_wr / max_recv_wr (ENOMEM when full), max_*_sge and
 *   max_inline_data (EINVAL). RDMA READs in flight per QP are capped by
 *   max_rd_atomic (the rest wait; IBV_SEND_FENCE waits for all of them);
 *   fake_qp_stats() reports the maximum seen.
 * - reg_dmabuf_mr: by default NULL with errno EOPNOTSUPP (as rxe). Enabled
 *   with fake_fabric_set_dmabuf(true), `iova` is taken as the host address
 *   of the memory (fake GPU memory lives on the host) and fd must be >= 0.
 * - Return conventions are libibverbs': NULL + errno, an errno value, or
 *   for poll_cq a negative value; close_device and query_gid return -1
 *   with errno (as their man pages say). Destroy functions check that the
 *   object is live (EINVAL otherwise) and unused (EBUSY: a PD with MRs or
 *   QPs, a CQ with QPs, a context with PDs, CQs or QPs).
 *
 * MEMORY WINDOWS (type 2, as IBTA's type 2B; a device without
 * fake_device_cfg.mem_windows refuses alloc_mw with EOPNOTSUPP and does not
 * report IBV_DEVICE_MEM_WINDOW_TYPE_2B)
 * - alloc_mw(pd, IBV_MW_TYPE_2) gives an unbound window with an rkey whose
 *   top 24 bits are its index; type 1 is EOPNOTSUPP. dealloc_mw unbinds.
 *   A PD with windows cannot be deallocated (EBUSY).
 * - IBV_WR_BIND_MW (post_send, RTS) binds wr.bind_mw.mw over bind_info's
 *   [addr, +length) of bind_info.mr with bind_info.mw_access_flags, under
 *   wr.bind_mw.rkey (same top 24 bits as the window's, the low byte the
 *   consumer's). It fails with IBV_WC_MW_BIND_ERR (the QP to ERR) unless
 *   the window is unbound and of the QP's PD, the MR is live, of the PD,
 *   registered with IBV_ACCESS_MW_BIND, covers the range, and (for remote
 *   write) has local write. Binding is local: it completes in order with
 *   the QP's other WRs and moves nothing on the wire. As rxe (which names
 *   the window to the kernel by it), the window's ibmw.rkey when the bind
 *   is posted must be its current key, and a type-2 bind does not update
 *   it: the consumer sets mw->rkey to the new key itself.
 * - Remote READ/WRITE under a window's rkey need the window bound, through
 *   the QP it was bound on, within its range, with the access; otherwise
 *   IBV_WC_REM_ACCESS_ERR as for an MR (counted in remote_access_errors).
 * - IBV_WR_LOCAL_INV (invalidate_rkey) unbinds a window bound on the
 *   device, of the QP's PD; a key that names no bound window fails with
 *   IBV_WC_LOC_PROT_ERR. IBV_WR_SEND_WITH_INV unbinds the responder's
 *   window named by invalidate_rkey when the SEND lands (it must be bound
 *   and of the responder QP's PD, else the receive fails with
 *   IBV_WC_LOC_PROT_ERR and the requester gets IBV_WC_REM_OP_ERR); the
 *   receive completion has IBV_WC_WITH_INV and invalidated_rkey.
 * - A window's QP being destroyed unbinds it.
 *
 * PSN MODE (fake_fabric_set_psn; off by default, and then none of this)
 * - Each message takes one PSN per path-MTU packet (a READ: per response
 *   packet), at least one, from the QP's sq_psn (set at RTS) on, assigned
 *   when posted. The responder expects rq_psn (set at RTR) and advances by
 *   what it executes. fake_qp_psn() shows the three PSNs; query_qp reports
 *   the live rq_psn and sq_psn (as rxe_qp_to_attr does). A message
 *   travels as one packet that carries its first PSN: it is executed or
 *   refused whole (a fake simplification), and a replayed READ counts its
 *   bytes again.
 * - Requests and responses are packets in flight, addressed by GID and QP
 *   number. On arrival the QP that has that number then judges them: a
 *   request needs RTR or RTS, a response RTS, and the QP's AV must point
 *   at the packet's source GID (RC packets carry no source QP number, so
 *   a packet of an old connection reaches a new one; rxe_recv.c
 *   check_addr checks addresses only). Otherwise it is dropped.
 * - The responder: a request at the expected PSN is executed and answered
 *   by an ACK of its last PSN (a READ by its data); one behind it
 *   (duplicate) is not executed again but ACKed with the PSN before the
 *   responder's ACK PSN, except a READ, which is replayed; one ahead gets
 *   one NAK (sequence error, with the expected PSN) until a request in
 *   order arrives. No receive: RNR NAK. Remote errors: a NAK with the
 *   error, then the responder goes to ERR.
 * - A response leaves its responder after the ACK delay
 *   (fake_fabric_set_ack_delay_ns; error NAKs at once) and travels with
 *   the responder device's delivery delay, so delays count both ways. A
 *   responder QP that leaves RTR/RTS (RESET, ERR, destroy) before its
 *   response leaves loses it (acks_lost); the requester times out and
 *   retransmits (retry_cnt), as with a dropped request.
 * - The requester takes a response whose PSN lies within the PSNs it has
 *   outstanding (others are stale_responses and dropped): an ACK
 *   completes every WR up to its PSN (a READ without its data is sent
 *   again); a sequence NAK completes those before it and resends from its
 *   PSN (counting against retry_cnt, as rxe does); an RNR NAK waits
 *   min_rnr_timer; an error NAK completes the WR with that error. A
 *   transport timeout resends everything outstanding (go-back-N). Progress
 *   restarts the timer.
 * - Soft-RoCE facts, each its own setting:
 *   fake_fabric_set_rxe_reset: rxe_qp_reset() (rxe_qp.c) clears msn,
 *   opcodes, sent_psn_nak and the READ resources, but not resp.ack_psn,
 *   and RTR sets only resp.psn from rq_psn (rxe_qp_from_attr); after
 *   RESET and reconnection a duplicate is ACKed with the previous
 *   connection's last PSN (duplicate_request() in rxe_resp.c: ack_psn - 1)
 *   and a duplicate READ from before the RESET finds no resource and is
 *   dropped. Off, RESET clears the PSNs and RTR sets the ACK PSN too.
 *   fake_fabric_set_rxe_acks: rxe's completer (check_psn() in rxe_comp.c)
 *   takes a response past the oldest outstanding WR's last PSN as
 *   acknowledging it, with no upper bound at the PSNs sent: a stale ACK
 *   can complete a WR its responder never saw.
 *
 * PROGRESS
 * No threads. Work is done eagerly in post_send (a request with no delay is
 * delivered before post_send returns) and every entry point of
 * fake_verbs_ops (and fake_fabric_progress()) advances retries, delays and
 * RNR timers. Polling a CQ in a loop is enough for everything to finish.
 *
 * TIME
 * The real monotonic clock, or a manual clock (fake_fabric_set_manual_clock)
 * that only fake_fabric_advance_ns() moves. Retry and RNR periods are
 * multiplied by the time scale (1.0 by default: timeout 14 is 67.1 ms).
 * Delivery delays are not scaled. Timers fire lazily: a retry happens at
 * the first entry point called after its time, and the next period starts
 * then; with the manual clock, advance one period at a time to see each
 * retry.
 *
 * THREAD SAFETY
 * Everything here and in fake_verbs_ops is thread-safe: one mutex guards the
 * fabric and is never held while sleeping. fake_fabric_reset() frees every
 * object of the fabric: no other thread may use fabric objects during it,
 * and none may be used after it.
 *
 * The control API returns 0 or an errno value (ENODEV: no such device or
 * port, EINVAL: bad argument or object not live) unless it says otherwise.
 */
#ifndef HO_TESTS_FAKE_VERBS_H
#define HO_TESTS_FAKE_VERBS_H

#include <stdbool.h>
#include <stdint.h>

#include "platform/verbs.h"

extern const struct ho_verbs_ops fake_verbs_ops;

/* ---- fabric ---------------------------------------------------------- */

enum fake_retry_semantics {
  FAKE_RETRY_RXE,  /* retry_cnt 7 retries forever (the default) */
  FAKE_RETRY_IBTA, /* retry_cnt 7 means 7 retries */
};

/* Frees every device and object, clears faults, counters and settings:
 * time scale 1.0, real clock, rxe retry semantics, dma-buf unsupported,
 * strict MTU on, SQ slots released at completion, PSN mode and the rxe
 * settings off, no ACK delay. No devices remain. */
void fake_fabric_reset(void);

/* Runs the fabric at the current time: retries, delayed deliveries, RNR. */
void fake_fabric_progress(void);

/* Multiplies retry (timeout) and RNR periods; > 0. 0.001 makes timeout 14
 * 67 us. Applies to timers armed after the call. EINVAL if scale <= 0. */
int fake_fabric_set_time_scale(double scale);

/* Manual clock on: time stands still at its current value until
 * fake_fabric_advance_ns(). Off: the real monotonic clock again. */
void fake_fabric_set_manual_clock(bool on);

/* Moves the manual clock forward by ns and runs the fabric; EINVAL when the
 * manual clock is off. */
int fake_fabric_advance_ns(uint64_t ns);

/* The fabric's clock in ns (manual or monotonic). */
uint64_t fake_fabric_now_ns(void);

void fake_fabric_set_retry_semantics(enum fake_retry_semantics s);

/* Whether reg_dmabuf_mr is supported (false by default, as rxe). */
void fake_fabric_set_dmabuf(bool supported);

/* Strict MTU (default on): modify_qp to RTR with path_mtu above the port's
 * active_mtu is EINVAL. */
void fake_fabric_set_strict_mtu(bool on);

/* mlx5-like SQ accounting (default off: rxe frees a slot at completion).
 * On: the slot of an unsignaled WR is freed only when a later signaled
 * completion of the QP is polled, so a QP that never signals fills up. */
void fake_fabric_set_sq_release_on_poll(bool on);

/* ---- a connection's packets (all off by default; see PSN MODE above) -- */

/* PSN mode: requests carry PSNs, responses are packets of their own. */
void fake_fabric_set_psn(bool on);

/* PSN mode: fabric time (not scaled) a response waits at its responder
 * before it leaves; 0 (the default): at once. */
void fake_fabric_set_ack_delay_ns(uint64_t ns);

/* PSN mode: RESET keeps the responder's ACK PSN and RTR does not set it,
 * and READs from before a RESET are not replayed (Soft-RoCE). */
void fake_fabric_set_rxe_reset(bool on);

/* PSN mode: the requester takes an ACK past its oldest outstanding WR as
 * acknowledging it however far past the PSNs it sent (Soft-RoCE). */
void fake_fabric_set_rxe_acks(bool on);

/* All four at once: PSN mode with rxe's RESET and ACK handling and the
 * given ACK delay (on), or all off and no delay (off). */
void fake_fabric_set_soft_roce(bool on, uint64_t ack_delay_ns);

/* Objects alive (contexts + PDs + MRs + CQs + QPs); 0 after a clean test. */
int fake_fabric_live_objects(void);

/* ---- devices and ports ------------------------------------------------ */

enum fake_gid_type {
  FAKE_GID_NONE = 0, /* empty entry: query_gid gives the zero GID */
  FAKE_GID_IB,
  FAKE_GID_ROCE_V1,
  FAKE_GID_ROCE_V2,
};

#define FAKE_MAX_PORTS 4
#define FAKE_GID_TABLE_LEN 16
#define FAKE_MAX_SGE 32

struct fake_device_cfg {
  uint32_t vendor_id;      /* default 0x15b3 */
  uint32_t vendor_part_id; /* default 4129 */
  int max_qp_rd_atom;      /* responder reads (max_dest_rd_atomic); 16 */
  int max_qp_init_rd_atom; /* initiator reads (max_rd_atomic); 16 */
  int max_qp_wr;           /* 4096 */
  int max_sge;             /* 16, at most FAKE_MAX_SGE */
  int max_cqe;             /* 65536 */
  uint32_t max_inline;     /* max_inline_data; 256 */
  uint8_t phys_port_cnt;   /* 1, at most FAKE_MAX_PORTS */
  enum ibv_mtu active_mtu; /* every port; IBV_MTU_1024 */
  uint16_t lid;            /* 0 (RoCE) */
  /* IPv4 address (host byte order) of the default GIDs; 0: 10.0.0.<n>
   * with n the device's 1-based position in the fabric. */
  uint32_t ipv4;
  bool mem_windows;        /* type-2 memory windows; true */
};

/* Fills cfg with the defaults above. */
void fake_device_cfg_default(struct fake_device_cfg *cfg);

/* Adds a device (cfg NULL: defaults). Every port starts ACTIVE, link layer
 * Ethernet, with the GID table of an mlx5 RoCE port:
 *   [0] fe80::<n> RoCE v1   [1] fe80::<n> RoCE v2
 *   [2] ::ffff:<ipv4> RoCE v1   [3] ::ffff:<ipv4> RoCE v2
 * EEXIST: name taken; ENOSPC: fabric full; EINVAL: bad name or cfg. */
int fake_device_add(const char *name, const struct fake_device_cfg *cfg);

/* Port state, IBV_PORT_ACTIVE or IBV_PORT_DOWN. Traffic through a port
 * that is not ACTIVE is dropped (and retried). */
int fake_port_set_state(const char *dev, uint8_t port,
                        enum ibv_port_state state);

/* The port's active_mtu (max_mtu stays IBV_MTU_4096). */
int fake_port_set_mtu(const char *dev, uint8_t port, enum ibv_mtu mtu);

/* GID table entry `index`; type FAKE_GID_NONE empties it (gid ignored). */
int fake_gid_set(const char *dev, uint8_t port, int index,
                 const union ibv_gid *gid, enum fake_gid_type type);

/* Type of entry `index`, FAKE_GID_NONE for an empty or invalid one. */
enum fake_gid_type fake_gid_type(const char *dev, uint8_t port, int index);

/* First index of the given type whose GID is IPv4-mapped (ipv4 true) or not;
 * -1 if none. */
int fake_gid_find(const char *dev, uint8_t port, enum fake_gid_type type,
                  bool ipv4);

/* Counters of one device. "Requester" counts are for requests its QPs
 * issued; "responder" counts for requests that reached its QPs. */
struct fake_dev_stats {
  uint64_t bytes_written;  /* requester: RDMA WRITE (incl. imm) bytes placed */
  uint64_t bytes_read;     /* requester: RDMA READ bytes fetched */
  uint64_t bytes_sent;     /* requester: SEND (incl. imm) bytes delivered */
  uint64_t bytes_received; /* responder: bytes placed by peers' WRITE/SEND */
  uint64_t bytes_served;   /* responder: bytes read by peers' READ */
  uint64_t requests;       /* requester: attempts, first tries and retries */
  uint64_t wrs_posted;     /* requester: work requests posted, by opcode:
                              [0] RDMA WRITE, [1] RDMA READ, [2] the rest */
  uint64_t wrs_by_op[3];
  uint64_t max_reads_out;  /* requester: the most RDMA READs one QP had on
                              the wire at once */
  uint64_t requests_dropped; /* requester: attempts that got no answer */
  uint64_t retries;        /* requester: retransmissions after a timeout */
  uint64_t rnr_events;     /* requester: RNR NAKs received */
  uint64_t cq_overflows;   /* CQEs lost to a full CQ of this device */
  /* PSN mode only (fake_fabric_set_psn): */
  uint64_t dup_requests;   /* responder: requests behind the expected PSN */
  uint64_t seq_naks;       /* responder: NAK sequence errors sent */
  uint64_t acks_lost;      /* responder: responses lost before they left */
  uint64_t stale_responses; /* requester: responses matching nothing */
  /* Memory windows, and what the responder refused: */
  uint64_t mw_binds;       /* windows bound by this device's QPs */
  uint64_t mw_invalidations; /* windows unbound by LOCAL_INV or SEND_WITH_INV */
  uint64_t remote_access_errors; /* responder: READ/WRITE refused (rkey,
                                    range, access, window's QP) */
  /* Completion channels (an eventfd per channel, one count per event): */
  uint64_t cq_arms;        /* req_notify_cq calls on this device's CQs */
  uint64_t cq_events;      /* events raised: a push into an armed CQ */
  uint64_t cq_acks_bad;    /* ack_cq_events of more than were read */
  uint64_t cq_destroy_unacked; /* destroy_cq refused: events unacknowledged
                                  (libibverbs would hang) */
};

int fake_device_stats(const char *dev, struct fake_dev_stats *out);

/* ---- fault injection ------------------------------------------------- */

/* Fails calls of the verb named as in struct ho_verbs_ops ("reg_mr",
 * "modify_qp", "post_send", ...): lets `skip` calls through, then fails the
 * next `count` with err (NULL + errno, the errno value, -1 + errno or
 * -err for poll_cq, as the verb reports errors). count 0 clears.
 * free_device_list, get_device_name and ack_cq_events cannot fail.
 * EINVAL: unknown name. */
int fake_verb_fail(const char *verb, unsigned skip, unsigned count, int err);

/* Calls of a verb since the reset (for fail-each-call-in-turn loops);
 * 0 for an unknown name. */
unsigned long fake_verb_calls(const char *verb);

/* The next n modify_qp calls moving one of dev's QPs into RTR fail with
 * err, as rxe's address resolution does when the route to the peer is
 * gone (its link down: ETIMEDOUT, ENETUNREACH). n 0 clears. EINVAL: no
 * name, or n > 0 and err <= 0; ENODEV: no such device. */
int fake_device_fail_connect(const char *dev, unsigned n, int err);

/* Drops the next n requests sent by dev's QPs (dev NULL: by any QP). A
 * drop costs a retry period, so retries may recover it. */
int fake_device_drop_next(const char *dev, unsigned n);

/* Delays delivery of requests sent by dev's QPs by ms of fabric time
 * (dev NULL: a fabric-wide delay, added to each device's own). Applies to
 * requests sent after the call. */
int fake_device_set_delay_ms(const char *dev, unsigned ms);

/* The next n work completions (send or receive, signaled or not) of dev's
 * QPs (dev NULL: of any QP) complete with `status` instead of success; the
 * QP then goes to ERR. The data has already moved, as when a NIC reports
 * an error after placement. */
int fake_device_force_error(const char *dev, unsigned n,
                            enum ibv_wc_status status);

/* Same for one QP. */
int fake_qp_force_error(struct ibv_qp *qp, unsigned n,
                        enum ibv_wc_status status);

/* ---- inspection -------------------------------------------------------- */

/* The QP's current attributes (every field modify_qp recorded since the
 * last RESET) and, in *set_mask, the union of the masks that set them.
 * set_mask may be NULL. */
int fake_qp_attrs(struct ibv_qp *qp, struct ibv_qp_attr *attr, int *set_mask);

/* The attributes and mask of the last modify_qp that moved the QP into
 * state `to` (kept across RESET). ENOENT if it never entered that state. */
int fake_qp_transition(struct ibv_qp *qp, enum ibv_qp_state to,
                       struct ibv_qp_attr *attr, int *mask);

struct fake_qp_stats {
  unsigned sq_outstanding;   /* send WRs posted and not yet completed */
  unsigned rq_posted;        /* receive WRs waiting */
  unsigned reads_in_flight;  /* RDMA READs issued and not yet answered */
  unsigned max_reads_in_flight; /* maximum of the above since creation */
  uint64_t retries;          /* retransmissions after a timeout */
  uint64_t rnr_events;       /* RNR NAKs received */
  uint64_t drops;            /* attempts that got no answer */
  /* PSN mode only, as in struct fake_dev_stats: */
  uint64_t dup_requests, seq_naks, acks_lost, stale_responses;
};

int fake_qp_stats(struct ibv_qp *qp, struct fake_qp_stats *out);

/* PSN mode: the QP's next send PSN (sq_psn from RTS, advanced by each
 * message posted), the PSN its responder expects next (rq_psn from RTR,
 * advanced by each request executed) and its responder's ACK PSN (one past
 * the last PSN executed; duplicates are acknowledged with ack - 1). */
struct fake_qp_psn {
  uint32_t sq_next, expected, ack;
};

int fake_qp_psn(struct ibv_qp *qp, struct fake_qp_psn *out);

/* Whether the CQ overflowed (false for a CQ that is not live). */
bool fake_cq_overflowed(struct ibv_cq *cq);

/* CQEs waiting in the CQ; -1 if not live. */
int fake_cq_depth(struct ibv_cq *cq);

/* Access flags of a live MR, -1 otherwise. */
int fake_mr_access(struct ibv_mr *mr);

/* Windows of the device that are bound now (-1: no such device). */
int fake_mw_bound_count(const char *dev);

/* Live MRs of dev that grant any remote access; -1: no such device. */
int fake_mr_remote_count(const char *dev);

/* Windows alive on the whole fabric. */
int fake_mw_live_count(void);

#endif
