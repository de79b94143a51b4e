/* SPDX-License-Identifier: MIT */
/* The server side of the hipObject RC protocol (docs/protocol.md), shared by
 * hipobj-test-server and by the tests' simulated peer. The HTTP layer calls
 * ho_engine_start() with the request's token; it answers with the reply
 * header value at once ("answer first") and moves the payload on a thread of
 * its own once the client's ready message arrives. */
#ifndef HO_ENGINE_H
#define HO_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/platform.h"
#include "rdma/protocol.h"
#include "rdma/token.h"

#define HO_ENGINE_REPLY_MAX (4 + HO_TOKEN_HEX + 1)

/* The most work requests one chunk moves as. */
#define HO_ENGINE_PIECES 64

struct ho_engine_config {
  const char *nic;            /* device name; NULL: as the library chooses */
  unsigned qps;               /* concurrent transfers (default 16) */
  unsigned max_connections;   /* connected QPs kept (default 1024); the
                                 least recently used idle one makes room */
  unsigned idle_timeout_ms;   /* retire connections idle this long (60000) */
  unsigned grace_ms;          /* keep retired QPs this long (2000) */
  size_t chunk_size;          /* bytes per work request (default 1 MiB) */
  unsigned depth;             /* work requests in flight (default 4) */
  size_t wr_size;             /* a chunk moves as RDMA WRITE or READ work
                                 requests of at most this many bytes (at
                                 most HO_ENGINE_PIECES per chunk); 0: 16 KiB
                                 on a software device (Soft-RoCE), else the
                                 whole chunk (docs/performance.md, "Faults:
                                 root causes") */
  uint8_t reads_out;          /* a PUT's READs in flight per connection; 0:
                                 2 on a software device, else as many as
                                 the device allows */
  int8_t pacing;              /* bytes in flight follow the device's retry
                                 counter (pace.h): 0 on a software device,
                                 1 on any device with the counter, -1
                                 never */
  unsigned moving;            /* transfers that hold a worker at once; the
                                 rest queue. 0: qps, and on a software
                                 device (Soft-RoCE, siw) at most
                                 HO_ENGINE_SOFT_PER_CPU per usable CPU,
                                 shared by the owner's software devices
                                 (ho_engine_share_cpus();
                                 docs/architecture.md, "Admission") */
  unsigned queue;             /* with every worker busy, starts that wait
                                 for one (default 4 x qps); beyond: busy */
  unsigned queue_wait_ms;     /* how long one waits (default 10000); then
                                 busy */
  unsigned ready_timeout_ms;  /* wait for ready (default 10000) */
  unsigned ready_grace_ms;    /* with every worker busy, a transfer still
                                 waiting for ready after this long is
                                 cancelled for a new one (default 1000) */
  unsigned rdma_timeout_ms;   /* wait for a completion (default 10000) */
  /* Test knobs: misbehave on purpose. */
  unsigned fault_skip_final;  /* the next N transfers move the data but
                                 never send final */
  bool fault_bad_cookie;      /* put a different cookie in final */
  bool fault_v1;              /* answer as a version-1 server: a new
                                 connection per transfer, offer fields 0 */
  bool data_first;            /* move the payload before the answer when a
                                 token says data first on a kept connection
                                 (docs/protocol.md, section 5, version 3) */
};

/* What the transfer reads from or writes to. Called on the engine's thread. */
struct ho_engine_io {
  /* GET: fill buf with n payload bytes starting at off. 0 on success. */
  int (*read)(void *ctx, uint64_t off, void *buf, size_t n);
  /* PUT: take n payload bytes starting at off. 0 on success. */
  int (*write)(void *ctx, uint64_t off, const void *buf, size_t n);
  /* Once. When the payload moved (status HO_FINAL_OK) it is called before
   * the final message is acknowledged: for a PUT, before final is sent,
   * commit the object and return 0, or non-zero if it could not be
   * committed (the final then says so); for a GET (whose final follows its
   * last WRITE on the wire) the return value is ignored. A final that is not acknowledged
   * afterwards fails the transfer in the engine's counters only. Otherwise
   * it is called at the end with the failure. After this call ctx is not
   * used again. */
  int (*finish)(void *ctx, int status, uint64_t bytes);
  void *ctx;
};

enum ho_engine_start_result {
  HO_ENGINE_STARTED = 0,   /* reply holds "200:<server token>"; or, data
                              first, the transfer ran and succeeded: reply
                              holds "done:<bytes>" */
  HO_ENGINE_BAD_TOKEN = 1, /* malformed token: answer 400, no reply header */
  HO_ENGINE_DECLINE = 2,   /* cannot serve it: answer with reply 501 */
  HO_ENGINE_BUSY = 3,      /* every QP is in use: answer 503 */
  HO_ENGINE_RAN_FAILED = 4 /* data first: the transfer ran and failed:
                              answer 500 with the reply ("rdma-failed", or
                              "500" when the store failed) */
};

/* Whether a start result means the transfer ran or runs (io.finish and
 * opts.done are called). */
static inline bool ho_engine_started(enum ho_engine_start_result r)
{
  return r == HO_ENGINE_STARTED || r == HO_ENGINE_RAN_FAILED;
}

/* Where the transfers' time went (docs/architecture.md, "Where a
 * transfer's time goes"): sums in nanoseconds over the transfers that
 * ended, counted before the done callback. `total` is admission plus the
 * run up to that callback, never the wait for ready (the client's); what
 * is not in one of the parts is the engine's own bookkeeping (locks,
 * counters, keeping or retiring the connection). */
struct ho_engine_times {
  uint64_t transfers;
  uint64_t admit;  /* the start on the caller's thread: the token decoded, a
                      worker and a connection claimed (a new QP connected),
                      the reply written */
  uint64_t post;   /* inside post_send (on Soft-RoCE the packets' work) */
  uint64_t wait;   /* waiting for completions */
  uint64_t io;     /* the read and write callbacks */
  uint64_t finish; /* io.finish: a PUT's commit */
  uint64_t total;
};

struct ho_engine_stats {
  uint64_t started, completed, failed, timed_out, bad_cookie;
  uint64_t final_failed; /* the final's send completion failed: counted in
                            failed too, and the connection retired */
  uint64_t ready_reclaimed; /* transfers cancelled after ready_grace_ms
                               without ready, to serve a new request */
  uint64_t rdma_failed; /* the payload's RDMA failed after ready (in
                           failed) */
  uint64_t readies_dispatched; /* readies the dispatcher woke a worker for */
  unsigned awaiting_ready;     /* transfers the dispatcher waits for now */
  uint64_t data_first;  /* transfers run before the answer (version 3) */
  uint64_t bytes_written, bytes_read; /* by RDMA WRITE (GET), READ (PUT),
                                         counted before final is sent */
  unsigned max_reads_in_flight;
  /* Connections (docs/protocol.md, section 5). */
  uint64_t conn_made, conn_reused;
  uint64_t retired_failure;  /* after a failed transfer */
  uint64_t retired_idle;     /* idle longer than idle_timeout_ms */
  uint64_t retired_evicted;  /* made room under max_connections */
  uint64_t retired_stale;    /* a token named its key as a new QP */
  uint64_t retired_one_shot; /* the client will not reuse it (version 1 or
                                no spare announced) */
  uint64_t qp_transitions;
  unsigned conn_live, conn_idle;
  /* The queue for workers: starts that waited, the most waiting at once,
   * those waiting now, and the starts refused busy because it was full or
   * the wait ran out. */
  uint64_t queued, queue_full, queue_timeouts;
  unsigned max_queued, queued_now;
  /* Pacing (pace.h): looks at the device's retry counter that found new
   * retries, and the window now (bytes in flight per transfer). */
  uint64_t pace_shrinks;
  uint64_t pace_window;
  bool paced;
  unsigned moving_max; /* transfers that may hold a worker at once */
  struct ho_engine_times times;
};

/* How a transfer ended, for ho_engine_xfer_opts.done. */
struct ho_engine_outcome {
  int status;          /* HO_FINAL_* the engine sent (or would have) */
  uint64_t bytes;      /* payload bytes moved */
  bool timed_out;      /* the client's ready never came */
  bool final_ok;       /* the final message was acknowledged */
  bool cancelled;      /* stopped by opts.cancel */
};

struct ho_engine;

/* What a transfer started with ho_engine_start_ex() may add to io. */
struct ho_engine_xfer_opts {
  /* Registered memory holding the payload: byte `off` of the transfer is at
   * base + off, in a region registered with ho_engine_reg() (lkey). Chunks
   * move straight between it and the client, and io.read and io.write are
   * not called (they may be NULL). base NULL: through the engine's chunk
   * buffers and io.read/io.write. */
  uint8_t *base;
  uint32_t lkey;
  /* Read by the engine's thread: once set, the transfer stops before its
   * next chunk (or as soon as ready arrives) and ends with a store-error
   * final. NULL: not cancellable. */
  const _Atomic bool *cancel;
  /* Once, on the engine's thread, after io.finish, with the outcome known
   * and the connection kept or retired; the transfer's slot is freed after
   * it returns. NULL: none. */
  void (*done)(void *ctx, const struct ho_engine_outcome *o);
};

hipObjOpError_t ho_engine_create(const struct ho_platform *plat,
                                 const struct ho_engine_config *cfg,
                                 struct ho_engine **out);
/* Waits for running transfers to end (they end at their timeouts). */
void ho_engine_destroy(struct ho_engine *e);
/* From now on every start is refused (busy): the owner is closing, and
 * once ho_engine_running() says 0 it stays 0. */
void ho_engine_refuse_new(struct ho_engine *e);

/* op: HIPOBJ_RDMA_OP_GET (server WRITEs `size` bytes) or HIPOBJ_RDMA_OP_PUT
 * (server READs `size` bytes). The token's length must equal size.
 * When ho_engine_started(result), io->finish will be called exactly once;
 * otherwise never. Data first (cfg.data_first, a token that says so, on a
 * kept connection): the transfer runs on the calling thread, and the call
 * returns when it has ended (io->finish and opts->done called). */
enum ho_engine_start_result ho_engine_start(struct ho_engine *e,
                                            const char *token, size_t token_len,
                                            int op, uint64_t size,
                                            const struct ho_engine_io *io,
                                            char reply[HO_ENGINE_REPLY_MAX]);

/* The same, with the options above (opts NULL: as ho_engine_start). */
enum ho_engine_start_result ho_engine_start_ex(
    struct ho_engine *e, const char *token, size_t token_len, int op,
    uint64_t size, const struct ho_engine_io *io,
    const struct ho_engine_xfer_opts *opts, char reply[HO_ENGINE_REPLY_MAX]);

/* Registers [addr, addr + len) with the engine's device for local access
 * (the source or sink of ho_engine_xfer_opts.base). *mr is the handle for
 * ho_engine_dereg(), *lkey the key to pass in the options. */
hipObjOpError_t ho_engine_reg(struct ho_engine *e, void *addr, size_t len,
                              void **mr, uint32_t *lkey);
/* 0 on success. */
int ho_engine_dereg(struct ho_engine *e, void *mr);

/* Whether the token proposes a connection this engine keeps (so that it,
 * and no other engine of the process, should serve it). A malformed token
 * is not ours. */
bool ho_engine_holds(struct ho_engine *e, const char *token, size_t token_len);
/* Transfers running now. */
unsigned ho_engine_running(struct ho_engine *e);

void ho_engine_get_stats(struct ho_engine *e, struct ho_engine_stats *out);

/* Admission on a software device, whose packets the host's CPUs move:
 * beyond a few transfers per CPU its QPs' ACKs come later than their
 * retry timer, the requester resends its window (go-back-N), and the
 * aggregate collapses (docs/performance.md, the scaling matrix). */
#define HO_ENGINE_SOFT_PER_CPU 4u
/* The transfers an engine lets hold a worker at once: `moving` when set
 * (at most qps), else qps, on a software device at most
 * HO_ENGINE_SOFT_PER_CPU x cpus / share (at least 1). */
unsigned ho_engine_moving_cap(unsigned qps, unsigned moving, bool soft,
                              long cpus, unsigned share);
bool ho_engine_is_soft(const struct ho_engine *e);
/* The owner opened `share` software devices: they share the host's CPUs
 * (recomputes the cap of an engine whose cfg.moving is 0). Only before
 * the first start. */
void ho_engine_share_cpus(struct ho_engine *e, unsigned share);
const char *ho_engine_device_name(const struct ho_engine *e);
/* The GID its QPs use (chosen at open, never changed), network order. */
void ho_engine_gid(const struct ho_engine *e, uint8_t out[16]);

#endif
