/* SPDX-License-Identifier: MIT */
/* The RDMA device and RC connections: QP state transitions, the message
 * slots of the D3 protocol, completion polling. Used by the library and by
 * the test server's engine. Not thread-safe per object: a connection is used
 * by one thread at a time (the pool's lease makes it so). */
#ifndef HO_RDMA_TRANSPORT_H
#define HO_RDMA_TRANSPORT_H

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
  uint32_t vendor_id;
  uint32_t vendor_part_id;
  int max_qp_rd_atom;      /* as responder */
  int max_qp_init_rd_atom; /* as initiator */
};

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
};

enum ho_conn_state { HO_CONN_INIT, HO_CONN_RTS, HO_CONN_BROKEN };

/* wr_id values of the connection's own message work requests. */
#define HO_WRID_MSG_RECV 0x5245435600000000ull /* "RECV" */
#define HO_WRID_MSG_SEND 0x53454e4400000000ull /* "SEND" */

struct ho_conn {
  struct ho_device *dev;
  struct ibv_cq *cq;
  struct ibv_qp *qp;
  struct ibv_mr *msg_mr;
  uint8_t *msg;  /* [0, HO_MSG_SIZE) receive slot, then the send slot */
  enum ho_conn_state state;
  bool dirty;        /* work posted since the last reset: reset before reuse */
  uint8_t rd_atomic; /* outstanding READs we issue / accept */
};

/* A CQ and an RC QP in INIT, and the registered message slots. */
hipObjOpError_t ho_conn_create(struct ho_device *d,
                               const struct ho_conn_attr *a,
                               struct ho_conn **out);
void ho_conn_destroy(struct ho_conn *c);

/* INIT -> RTR -> RTS aimed at the peer token's QP number, GID and LID, with
 * the port's active MTU and the vendor's retry settings. The token must be
 * RC. sq_psn is the first PSN we send, rq_psn the first we expect: the two
 * sides derive them from the transfer's cookie (ho_psn_from_cookie), so a
 * reused QP never mistakes a late packet of its previous connection for one
 * of this connection. */
hipObjOpError_t ho_conn_connect(struct ho_conn *c, const struct ho_token *peer,
                                uint32_t sq_psn, uint32_t rq_psn);

/* Back to INIT for another peer: RESET, drain the CQ, INIT. */
hipObjOpError_t ho_conn_reset(struct ho_conn *c);

/* Post the receive for one protocol message into the receive slot. */
hipObjOpError_t ho_conn_post_msg_recv(struct ho_conn *c);

/* SEND one protocol message from the send slot (signalled). */
hipObjOpError_t ho_conn_send_msg(struct ho_conn *c, const struct ho_msg *m);

/* Poll up to n completions, without waiting. Returns the count, or -1. */
int ho_conn_poll(struct ho_conn *c, struct ibv_wc *wc, int n);

/* Wait until the peer's message arrives in the receive slot and our own
 * send (if one is outstanding: *send_pending) completed, or the deadline
 * (ho_now_ns() clock) passes. Error completions are reported on stderr once
 * and fail with RdmaError. On success *m is the decoded message. */
hipObjOpError_t ho_conn_wait_msg(struct ho_conn *c, bool *send_pending,
                                 uint64_t deadline_ns, struct ho_msg *m);

/* The token that names this connection (QP number, GID, LID, port). */
void ho_conn_token(const struct ho_conn *c, struct ho_token *t);

/* libibverbs' ibv_mtu as bytes. */
unsigned ho_mtu_bytes(enum ibv_mtu m);

#endif
