/* SPDX-License-Identifier: MIT */
/* The servers' own resources, outside S3's name space (a bucket name
 * cannot start with '_'), answered the same by both: GET (or HEAD)
 * /_hipobj/stats, the JSON counters; /_hipobj/health, "ok"; another
 * method 405; an unknown /_hipobj/ resource 404. They need no signature:
 * they reveal no data, only counts (the gateway serves its counters to its
 * own host only, unless told otherwise). */
#ifndef HS_ADMIN_H
#define HS_ADMIN_H

#include "message.h"
#include "rdma.h"
#include "s3_ops.h"
#include "stats.h"

struct hs_admin {
  struct hs_stats *stats;
  struct hs_rdma *rdma; /* NULL: no connection counters */
  /* more members of the stats object ("store":{...} for the test
   * server, "gateway":{...} for the gateway), or NULL */
  void (*members)(void *ctx, struct hs_buf *out);
  void *ctx;
};

/* Answers the admin request k (hs_admin_route(), not HS_OP_NOT_FOUND) in
 * r; w names the error document's resource and request id. */
void hs_admin_answer(struct hs_response *r, enum hs_s3_kind k,
                     const struct hs_admin *a, const struct hs_err_where *w,
                     bool head);

#endif
