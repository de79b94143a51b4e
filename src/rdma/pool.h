/* SPDX-License-Identifier: MIT */
/* The connection pool: a fixed set of RC connections made at init and leased
 * one per transfer. A lease returns its connection reset to INIT. */
#ifndef HO_RDMA_POOL_H
#define HO_RDMA_POOL_H

#include <stdbool.h>

#include "rdma/transport.h"

struct ho_pool;

struct ho_lease {
  struct ho_pool *pool;
  unsigned slot;
  bool counted; /* counted in the thread's lease count */
  struct ho_conn *conn;
};

/* n connections with attributes a; fewer is a failure. */
hipObjOpError_t ho_pool_create(struct ho_device *d, const struct ho_conn_attr *a,
                               unsigned n, struct ho_pool **out);
/* Closes the pool first; no lease may be outstanding. */
void ho_pool_destroy(struct ho_pool *p);

/* Lease a connection. With none free: hipObjBusy if `wait` is false or this
 * thread already holds a counted lease (it could be waiting for its own);
 * otherwise wait. hipObjNotInitialized once the pool is closed;
 * hipObjRdmaError if no connection is left at all. `count` says whether the
 * lease counts towards this thread's leases (transfers through callbacks);
 * leases that may end on another thread (application-driven tokens) do not. */
hipObjOpError_t ho_pool_acquire(struct ho_pool *p, bool wait, bool count,
                                struct ho_lease *out);

/* End a lease: a connection that left INIT is reset, or replaced if it
 * cannot be, or dropped if that fails too. */
void ho_pool_release(struct ho_lease *l);

/* Wake every waiter with hipObjNotInitialized; later acquires fail too. */
void ho_pool_close(struct ho_pool *p);

/* For tests: connections alive and free. */
void ho_pool_counts(struct ho_pool *p, unsigned *live, unsigned *free_count);

#endif
