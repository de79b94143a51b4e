/* SPDX-License-Identifier: MIT */
/* The connection pool: persistent RC connections to servers, leased one per
 * transfer (docs/protocol.md, section 5; docs/architecture.md).
 *
 * A link is one persistent connection: a connected QP (or none yet) and a
 * spare, a fresh QP that the next token names. A transfer on a link either
 * rides its connected QP (the server recognised the proposal) or connects
 * the spare (a new connection, which replaces the old one). A QP is
 * connected once in its life; when its connection ends it is retired (ERR)
 * and destroyed after a grace period, never reset for another peer. */
#ifndef HO_RDMA_POOL_H
#define HO_RDMA_POOL_H

#include <stdbool.h>

#include "rdma/transport.h"

struct ho_pool;

struct ho_link {
  struct ho_conn *qp;    /* connected (RTS), or NULL */
  struct ho_conn *spare; /* fresh (INIT): the QP the next token names */
  uint64_t id;           /* the server's connection ID; 0 without qp */
  uint64_t peer;         /* the peer hint the connection was made for */
  uint64_t last_used_ns;
  bool persistent;       /* the server speaks version 2: keep the connection */
  bool leased;
  /* The link's type-2 memory window (scoped tokens), made on first use. */
  struct ibv_mw *mw;
  uint32_t mw_rkey;      /* the key it was last bound with (or allocated) */
  bool mw_bound;         /* a bind was posted and not yet invalidated */
  bool mw_keep_key;      /* the next bind reuses mw_rkey: a token names it */
  struct ho_conn *mw_qp; /* the QP it is bound on, while mw_bound */
};

struct ho_lease {
  struct ho_pool *pool;
  struct ho_link *link;
  bool counted; /* counted in the thread's lease count */
  bool failed;  /* the transfer failed: retire every QP the lease named */
  bool move_failed; /* ho_lease_connect: the window bound on the kept QP
                       could not be invalidated there to move (that QP
                       broke after the bind) */
  bool connect_failed; /* ho_lease_connect: the spare did not connect to
                          the server's QP (its path did not resolve) */
};

struct ho_pool_config {
  unsigned max_leases;      /* concurrent transfers (HIPOBJ_MAX_TRANSFERS) */
  unsigned max_connections; /* links kept, idle ones included (>= leases) */
  unsigned idle_timeout_ms; /* retire connections idle this long */
  unsigned wait_timeout_ms; /* an acquire waits at most this long (0: 10 s) */
  unsigned grace_ms;        /* keep retired QPs this long before destroying */
};

/* Counters since the pool was created. */
struct ho_pool_stats {
  uint64_t connections_made;   /* new connections (a spare connected) */
  uint64_t connections_reused; /* transfers that rode an existing connection */
  uint64_t retired_failure;    /* after a failed transfer */
  uint64_t retired_idle;       /* idle longer than idle_timeout_ms */
  uint64_t retired_evicted;    /* made room for a connection to another peer */
  uint64_t retired_replaced;   /* the server did not recognise it (restart,
                                  eviction, another server) */
  uint64_t retired_one_shot;   /* a version-1 server's connection */
  uint64_t kept_broken;        /* a kept connection found in error before a
                                  transfer (ho_lease_check_kept) */
  uint64_t data_first;         /* transfers whose payload moved before the
                                  server's answer (version 3) */
  uint64_t qp_transitions;     /* the device's QP state changes */
  uint64_t windows_bound;      /* memory windows bound for transfers */
  unsigned live, idle, retired_waiting;
};

/* Creates the first max_leases spares (fewer is a failure). */
hipObjOpError_t ho_pool_create(struct ho_device *d, const struct ho_conn_attr *a,
                               const struct ho_pool_config *cfg,
                               struct ho_pool **out);
/* Closes the pool first; no lease may be outstanding. */
void ho_pool_destroy(struct ho_pool *p);

/* Lease a link, preferring an idle connection made for `peer` (a hint:
 * 0 is a peer like any other), then an empty link, then the least recently
 * used connection to another peer (retired). The link has a spare. With
 * every lease taken: hipObjBusy if `wait` is false or this thread already
 * holds a counted lease; otherwise wait, at most cfg.wait_timeout_ms, then
 * hipObjBusy. hipObjNotInitialized once the pool
 * is closed; hipObjRdmaError if no spare QP can be made. `count` says
 * whether the lease counts towards this thread's leases (transfers through
 * callbacks); leases that may end on another thread (application-driven
 * tokens) do not. */
hipObjOpError_t ho_pool_acquire(struct ho_pool *p, bool wait, bool count,
                                uint64_t peer, struct ho_lease *out);

/* Before a token proposes the lease's kept connection: if its QP is no
 * longer RTS (rxe moves a responder to error on a stray request, with no
 * completion to tell), retire it so the token asks for a new connection.
 * False when it did. */
bool ho_lease_check_kept(struct ho_lease *l);

/* The lease's kept connection (connected, version 2 or later), or NULL. */
struct ho_conn *ho_lease_kept(const struct ho_lease *l);

/* Retire the lease's kept connection, found broken before its transfer
 * (counted in kept_broken), and free the window it may hold: the token
 * then asks for a new connection. */
void ho_lease_drop_kept(struct ho_lease *l);

/* Data first (docs/protocol.md, section 5): bind the link's window on the
 * kept connection, before the request leaves, over [addr, +len) of mr
 * with `access`, signalled, and wait for it until deadline_ns; the token
 * then names this key (ho_lease_window_rkey). RdmaError: the connection
 * is broken (ho_lease_drop_kept). */
hipObjOpError_t ho_lease_prebind_window(struct ho_lease *l, struct ibv_mr *mr,
                                        uint64_t addr, uint64_t len,
                                        int access, uint64_t deadline_ns);

/* A transfer's payload moved before the answer on the kept connection:
 * counted (in connections_reused too). */
void ho_lease_count_data_first(struct ho_lease *l);

/* The QP number (with the reuse tag in its top byte) for the lease's token. */
uint32_t ho_lease_token_qpn(const struct ho_lease *l);

/* Apply the server's offer (from the reply's token): ride the connected QP
 * (reuse: the ID must be the link's) or connect the spare to the server's
 * QP with the cookie's PSNs; a window bound on the old connection before
 * the request is invalidated first (until deadline_ns), and the next bind
 * reuses its key, which the token named. *out is the QP to send ready on.
 * Errors: RdmaError (the offer contradicts the proposal, the window
 * cannot be moved (move_failed), or the connect failed (connect_failed)). */
hipObjOpError_t ho_lease_connect(struct ho_lease *l, const struct ho_token *srv,
                                 const struct ho_conn_offer *offer,
                                 uint64_t cookie, uint64_t deadline_ns,
                                 struct ho_conn **out);

/* The spare QP to announce in ready (made now if the link has none), or 0
 * when the connection ends after this transfer. */
uint32_t ho_lease_next_qpn(struct ho_lease *l);

/* Scoped tokens (docs/protocol.md, section 2): the rkey the lease's token
 * names, that of the link's window (made now if needed) with its next key,
 * or the key it is bound with (data first); 0 if no window can be made. */
uint32_t ho_lease_window_rkey(struct ho_lease *l);

/* Bind the link's window on c (the connected QP the offer named) over
 * [addr, +len) of mr with `access`, under ho_lease_window_rkey()'s key;
 * nothing to do if it was bound on c before the request (data first). */
hipObjOpError_t ho_lease_bind_window(struct ho_lease *l, struct ho_conn *c,
                                     struct ibv_mr *mr, uint64_t addr,
                                     uint64_t len, int access);

/* After final: close the window with a local invalidation, waited for
 * until deadline_ns. RdmaError if it cannot be (the lease then fails, and
 * ho_pool_release frees the window). Not a send with invalidate from the
 * server: Soft-RoCE does not report it in the completion, and a local
 * invalidation of a window already invalidated crashes its kernel
 * (docs/memory-windows.md). */
hipObjOpError_t ho_lease_close_window(struct ho_lease *l, struct ho_conn *c,
                                      uint64_t deadline_ns);

/* End a lease. l->failed retires every QP the lease named; a connection of
 * a version-1 server is retired too; otherwise it stays for the next
 * transfer. A window still bound (a failed transfer) is freed after the
 * QPs are retired, which invalidates it: no window outlives its lease. */
void ho_pool_release(struct ho_lease *l);

/* Wake every waiter with hipObjNotInitialized; later acquires fail too. */
void ho_pool_close(struct ho_pool *p);

void ho_pool_get_stats(struct ho_pool *p, struct ho_pool_stats *out);

#endif
