/* SPDX-License-Identifier: MIT */
/* The objects behind include/hipobj_server.h, shared by its files:
 *   server.c    the server: its engines (one per NIC), start, statistics;
 *   server_mem.c  registered memory;
 *   server_xfer.c transfer handles and the engine's callbacks;
 *   server_token.c the declines a token's shape decides.
 * Nothing here is exported: the version script keeps hipObjServer* only. */
#ifndef HO_SERVER_INTERNAL_H
#define HO_SERVER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/thread_safety.h"
#include "engine.h"
#include "hipobj_server.h"
#include "platform/platform.h"

/* The first released sizes of the size-first structs: a caller's size may
 * be larger (a newer header) or equal, never smaller. */
#define HO_SERVER_CONFIG_V0 64u
#define HO_SERVER_REQUEST_V0 96u
#define HO_SERVER_STATS_MIN 8u

/* Test seams: where a test may run its own code, so that a race of two
 * threads plays out the same way every time (test_server_api.c). */
enum ho_server_point {
  HO_SERVER_AT_DEREGISTER, /* obj: the memory, checked and about to go */
  HO_SERVER_AT_CLOSE,      /* obj: NULL; Close is about to wait */
};
typedef void (*ho_server_hook_fn)(void *arg, enum ho_server_point point,
                                  void *obj);

struct hipObjServer {
  struct ho_engine **engines;  /* [0, nengines) */
  char (*names)[HO_NIC_NAME_MAX];
  uint8_t (*gids)[16];         /* each engine's port GID (ho_engine_gid) */
  uint32_t nengines;
  atomic_uint next;            /* round robin over the engines */
  atomic_uint_fast64_t bad_tokens, declined, busy, cancelled;
  atomic_uint_fast64_t start_calls, start_ns; /* Starts that started */
  ho_mutex mu;
  struct hipObjServerMem *mems HO_GUARDED_BY(mu); /* registered, a list */
  bool dying HO_GUARDED_BY(mu);      /* Close began: Start refuses (Busy) */
  unsigned starting HO_GUARDED_BY(mu); /* Start calls past that check */
  ho_server_hook_fn hook;      /* tests only; set before any other call */
  void *hook_arg;
};

struct hipObjServerMem {
  hipObjServer_t *srv;
  uint8_t *addr;
  uint64_t len;
  bool owned;                  /* allocated by hipObjServerAlloc */
  void **mrs;                  /* one per engine */
  uint32_t *lkeys;
  atomic_uint users;           /* transfers using it: taken under srv->mu
                                  while !dying, dropped at any time */
  bool dying;                  /* under srv->mu: Deregister began; no new
                                  use (after a failed one, for good) */
  bool deregistering;          /* under srv->mu: a Deregister runs */
  struct hipObjServerMem *prev, *next; /* on srv->mems, under srv->mu */
};

struct hipObjServerTransfer {
  hipObjServer_t *srv;
  hipObjServerMem_t *mem;      /* holds a use while the transfer runs */
  uint64_t mem_offset;
  int op;
  uint64_t length;
  hipObjServerReadFn read;
  hipObjServerWriteFn write;
  hipObjServerCommitFn commit;
  void *io_arg;
  hipObjServerDoneFn done;
  void *done_arg;
  atomic_bool cancel;
  atomic_int refs;             /* the caller's and the engine's */
  ho_mutex mu;
  pthread_cond_t ended_cv;
  bool ended HO_GUARDED_BY(mu);
  hipObjServerStatus_t status HO_GUARDED_BY(mu);
  uint64_t bytes HO_GUARDED_BY(mu);
};

/* The test seam: a server on a given platform (the tests' simulated
 * fabric). hipObjServerOpen() is this on the production platform. */
hipObjServerStatus_t ho_server_open_on(const struct ho_platform *plat,
                                       const hipObjServerConfig_t *cfg,
                                       hipObjServer_t **out);

/* The test seam above: fn(arg, point, obj) at each point, or none. */
void ho_server_set_hook(hipObjServer_t *srv, ho_server_hook_fn fn, void *arg);
static inline void ho_server_hook(hipObjServer_t *srv,
                                  enum ho_server_point p, void *obj)
{
  if (srv->hook)
    srv->hook(srv->hook_arg, p, obj);
}

/* Copies a caller's size-first struct into a zeroed one of ours: Invalid
 * if smaller than min, NotSupported if it has non-zero bytes past ours. */
hipObjServerStatus_t ho_server_copy_in(void *dst, size_t dst_size,
                                       const void *src, uint32_t src_size,
                                       uint32_t min);

/* server_mem.c */
void ho_server_mem_free_all(hipObjServer_t *srv);
/* A use of mem for a transfer on srv, taken under srv->mu: InvalidValue
 * for another server's memory or memory being deregistered. */
hipObjServerStatus_t ho_server_mem_use(hipObjServer_t *srv,
                                       hipObjServerMem_t *mem)
    HO_REQUIRES(srv->mu);

/* server_xfer.c: a transfer for req, its engine io and options. */
hipObjServerTransfer_t *ho_xfer_new(hipObjServer_t *srv,
                                    const hipObjServerRequest_t *req,
                                    int refs);
void ho_xfer_engine_io(hipObjServerTransfer_t *x, struct ho_engine_io *io,
                       struct ho_engine_xfer_opts *xo, uint32_t engine);
/* A transfer that never started: drop it whole. */
void ho_xfer_discard(hipObjServerTransfer_t *x);

/* Whether a token is another protocol's (NVIDIA cuObject's descriptor,
 * bare or with ":ADDR:SIZE"): declined (501), so that its client falls
 * back to plain HTTP, never a malformed token (400). server_token.c. */
bool ho_server_foreign_token(const char *token, uint64_t length);

#endif
