/* SPDX-License-Identifier: MIT */
/* The rails at run time (docs/architecture.md, "Rails"): for each rail
 * init chose (src/rails.h) its open device and connection pool, the
 * transfers in flight on it, whether it is up, and its counters. Rail 0's
 * device and pool are the instance's own (inst->dev, inst->pool), borrowed;
 * the others are the set's. A transfer is placed by ho_railset_pick() and
 * reported by ho_railset_done(), which keeps each rail's health: up, or
 * marked down until a probe succeeds or no rail is left up. Lock-free: counters and states are
 * atomics, the rails array is fixed once opened. */
#ifndef HO_RAILSET_H
#define HO_RAILSET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rails.h"
#include "rdma/pool.h"
#include "rdma/transport.h"
#include "stats.h"

struct ho_rail_rt {
  struct ho_device *dev;
  struct ho_pool *pool;
  bool owned;                 /* opened by the set (not rail 0) */
  atomic_uint in_flight;
  _Atomic uint64_t in_flight_bytes; /* the sizes of those in flight */
  atomic_bool down;           /* marked after a transport failure */
  _Atomic uint64_t down_ns;   /* when marked or last probed (ho_now_ns) */
  _Atomic uint64_t bytes;     /* moved by successful transfers */
  _Atomic uint64_t transfers; /* placed on it */
  _Atomic uint64_t failures;  /* that failed on it */
  _Atomic uint64_t marks;     /* times marked down */
};

struct ho_railset {
  unsigned n;                 /* rails open, >= 1 */
  struct ho_rail_rt rail[HO_MAX_RAILS];
  atomic_uint cursor;         /* round robin among equals */
  uint64_t failback_ns;       /* a down rail is probed after this */
};

/* How the rails other than rail 0 are opened: rail 0's connection
 * attributes, pool configuration and wait policy. */
struct ho_railset_config {
  const struct ho_conn_attr *attr;
  const struct ho_pool_config *pool;
  unsigned spin_us;     /* HIPOBJ_SPIN_US (ho_device_set_spin) */
  bool need_windows;    /* scoped tokens: every rail binds type-2 windows */
  unsigned failback_ms; /* HIPOBJ_FAILBACK_MS */
};

/* Rail 0 is (dev0, pool0); rails->rail[1..count) are opened as cfg says.
 * A rail that does not open, or (need_windows) cannot bind type-2 memory
 * windows, is left out with one warning. Never fails: rail 0 is always
 * there. */
void ho_railset_open(struct ho_railset *s, const struct ho_platform *plat,
                     const struct ho_rails *rails, struct ho_device *dev0,
                     struct ho_pool *pool0,
                     const struct ho_railset_config *cfg);
/* Closes the pools of rails 1 and on (waking waiters); rail 0's is the
 * instance's to close. */
void ho_railset_close(struct ho_railset *s);
/* Frees what the set opened. */
void ho_railset_destroy(struct ho_railset *s);

/* What a transfer in flight weighs on its rail beside its bytes: its
 * fixed cost (an HTTP round trip, a window bind) in bytes, so that many
 * small transfers count as load too. */
#define HO_RAIL_XFER_COST (256u << 10)

/* The rail for a transfer of `size` bytes (bit i of `tried`: rail i
 * failed it already). A first attempt (tried 0) takes a down rail whose
 * failback delay has passed (one transfer probes it, the next after
 * another delay; a retry never probes). Else, among the rails up and not
 * tried, the least loaded (the bytes in flight plus HO_RAIL_XFER_COST per
 * transfer in flight), ties in round-robin order; else the same among the
 * rails up; when no rail is up, every mark is cleared. Always a rail;
 * counted in flight there until ho_railset_done() with the same size. */
unsigned ho_railset_pick(struct ho_railset *s, uint32_t tried, uint64_t size,
                         uint64_t now_ns);

/* Whether a rail is up that `tried` does not name: ho_railset_pick()
 * places the retry there (it need not wait for its slot). */
bool ho_railset_untried(struct ho_railset *s, uint32_t tried);

/* The outcome of a transfer placed on rail i with `size` (its bytes,
 * counted as moved on success), which brings a down rail back (logged); on failure, why (its
 * retry cause). A transport failure on the rail's path marks it down
 * (logged once per mark, with the reason): an error completion (retries
 * exceeded, flushed, a failed liveness probe), a stall, the server's
 * report that its RDMA failed. HO_RETRY_NONE (an answer such as 501 or
 * 403, a bad token, a local error) and a kept connection found broken
 * mark nothing; nor does anything with a single rail. */
void ho_railset_done(struct ho_railset *s, unsigned i, bool success,
                     uint64_t size, enum ho_retry_cause why,
                     uint64_t now_ns);

/* What the counters of every rail's device and pool sum to. */
void ho_railset_pool_stats(struct ho_railset *s, struct ho_pool_stats *out);
uint64_t ho_railset_probes(struct ho_railset *s, bool failed);

#endif
