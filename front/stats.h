/* SPDX-License-Identifier: MIT */
/* Counters a test reads to tell which path moved the bytes: requests by
 * method and status class, object bytes over HTTP and over RDMA, RDMA
 * requests declined or failed. Lock-free (relaxed atomics); read as JSON at
 * GET /_hipobj/stats and, optionally, written to a file. */
#ifndef HS_STATS_H
#define HS_STATS_H

#include <stdatomic.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

enum hs_method { HS_M_GET, HS_M_HEAD, HS_M_PUT, HS_M_POST, HS_M_DELETE,
                 HS_M_OTHER, HS_M_COUNT };

struct hs_stats {
  int64_t started; /* seconds since the epoch */
  atomic_uint_fast64_t requests[HS_M_COUNT];
  atomic_uint_fast64_t status[6]; /* by status / 100 */
  atomic_uint_fast64_t http_bytes_in;   /* object bytes received in bodies */
  atomic_uint_fast64_t http_bytes_out;  /* object bytes sent in bodies */
  atomic_uint_fast64_t http_objects_in; /* PUT and UploadPart committed */
  atomic_uint_fast64_t http_objects_out; /* GET bodies (or ranges) started */
  atomic_uint_fast64_t rdma_requests;   /* requests carrying a token */
  atomic_uint_fast64_t rdma_get;        /* transfers started, by kind */
  atomic_uint_fast64_t rdma_put;        /* (PutObject and UploadPart) */
  atomic_uint_fast64_t rdma_bytes_in;  /* moved by RDMA READ (PUT) */
  atomic_uint_fast64_t rdma_bytes_out; /* moved by RDMA WRITE (GET) */
  atomic_uint_fast64_t rdma_completed; /* transfers whose bytes all moved */
  atomic_uint_fast64_t rdma_declined;  /* answered 501 */
  atomic_uint_fast64_t rdma_bad_tokens; /* answered 400 */
  atomic_uint_fast64_t rdma_failures;  /* accepted, then failed */
  atomic_uint_fast64_t auth_failures;
  atomic_uint_fast64_t aborted_bodies; /* uploads cut short by the client */
};

void hs_stats_init(struct hs_stats *s);
enum hs_method hs_method_of(const char *method);

static inline void hs_stat_add(atomic_uint_fast64_t *c, uint64_t n)
{
  atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/* One JSON object; conns (a JSON object, the RDMA connection counters) and
 * more (more members, `"store":{...}` for the test server's store) may be
 * NULL. */
void hs_stats_json(const struct hs_stats *s, const char *conns,
                   const char *more, struct hs_buf *out);
/* Writes the JSON to path through a temporary file and a rename. */
enum hs_err hs_stats_write_file(const char *path, const struct hs_stats *s,
                                const char *more);

#endif
