/* SPDX-License-Identifier: MIT */
/* Transfer counters of an instance, for hipObjGetInfo(). Lock-free: each
 * counter is a relaxed atomic, read one by one. New counters are added here
 * and appended to hipObjInfo_t (include/hipobj.h). */
#ifndef HO_STATS_H
#define HO_STATS_H

#include <stdatomic.h>
#include <stdint.h>

#include "hipobj.h"

/* Why a transfer was tried again (docs/protocol.md, section 7). */
enum ho_retry_cause {
  HO_RETRY_NONE = -1,   /* not a fabric failure: not retried */
  HO_RETRY_FABRIC = 0,  /* an error completion or a failed verbs call
                           (a connect whose path did not resolve) */
  HO_RETRY_SERVER,      /* final says the server's RDMA failed */
  HO_RETRY_STALLED,     /* nothing from the server for the stall bound */
  HO_RETRY_KEPT_BROKEN, /* a kept connection failed before ready arrived */
  HO_RETRY_CAUSES
};

struct ho_stats {
  atomic_uint_fast64_t transfers;
  atomic_uint_fast64_t succeeded;
  atomic_uint_fast64_t bytes_get;
  atomic_uint_fast64_t bytes_put;
  atomic_uint_fast64_t failures[HIPOBJ_INFO_MAX_ERRORS];
  atomic_uint_fast64_t retries[HO_RETRY_CAUSES];
  atomic_uint_fast64_t deadline_moves;
};

/* One transfer returned with e: op is HIPOBJ_RDMA_OP_GET or _PUT, size its
 * bytes (counted only on success). MT-Safe. */
void ho_stats_transfer(struct ho_stats *s, int op, uint64_t size,
                       hipObjOpError_t e);

/* A transfer is tried again for `why`. MT-Safe. */
void ho_stats_retry(struct ho_stats *s, enum ho_retry_cause why);

/* A transfer's deadline moved n times, the transfer still moving. */
void ho_stats_deadline_moves(struct ho_stats *s, unsigned n);

/* Copies the counters into their fields of *out. MT-Safe. */
void ho_stats_read(struct ho_stats *s, hipObjInfo_t *out);

#endif
