/* SPDX-License-Identifier: MIT */
/* Settings read once from the environment, in hipObjInit(). An invalid value
 * keeps the default and prints one warning naming the variable. An empty
 * value counts as unset. Integers are strict decimal: digits only, no sign,
 * no blanks, in range. */
#ifndef HO_OPTIONS_H
#define HO_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

struct ho_options {
  unsigned max_transfers;       /* HIPOBJ_MAX_TRANSFERS: 16, 1..1024, per
                                   rail */
  unsigned stage_timeout_ms;    /* HIPOBJ_STAGE_TIMEOUT_MS: 30000, 1..86400000 */
  unsigned transfer_timeout_ms; /* HIPOBJ_TRANSFER_TIMEOUT_MS: 5000, 1..86400000 */
  unsigned transfer_max_ms;     /* HIPOBJ_TRANSFER_MAX_MS: 0 (four budgets:
                                   HIPOBJ_TRANSFER_TIMEOUT_MS plus 100 ms a
                                   MB, four times), 0..86400000: the latest
                                   a moving transfer's deadline moves to */
  unsigned max_connections;     /* HIPOBJ_MAX_CONNECTIONS: 0 (twice
                                   max_transfers), 1..4096; at least
                                   max_transfers are kept */
  unsigned max_rails;           /* HIPOBJ_MAX_RAILS: 0 (the rule's
                                   ceil(L/G)), 1..16: at most this many */
  unsigned failback_ms;         /* HIPOBJ_FAILBACK_MS: 5000, 1..86400000: a
                                   rail marked down is probed again after */
  unsigned idle_timeout_ms;     /* HIPOBJ_IDLE_TIMEOUT_MS: 30000, 1..86400000 */
  unsigned wait_timeout_ms;     /* HIPOBJ_WAIT_TIMEOUT_MS: 10000, 1..86400000:
                                   how long hipObjGet/Put wait for a free
                                   connection before hipObjBusy */
  unsigned retries;             /* HIPOBJ_RETRIES: 3, 0..10: a transfer that
                                   failed for a fabric reason is tried again
                                   this many times at most */
  unsigned stall_timeout_ms;    /* HIPOBJ_STALL_TIMEOUT_MS: 3000, 0..86400000
                                   (0: none): a GET's attempt fails when
                                   nothing came from the server this long */
  unsigned probe_interval_ms;   /* HIPOBJ_PROBE_INTERVAL_MS: 200, 0..86400000
                                   (0: none): while a final is awaited, a
                                   liveness probe this often */
  unsigned spin_us;             /* HIPOBJ_SPIN_US: auto (HO_SPIN_US_AUTO:
                                   0 on Soft-RoCE or 2 CPUs or fewer, else
                                   10), 0..1000000, or poll (HO_SPIN_US_POLL:
                                   never block): how long a wait polls
                                   before it blocks on the CQ's channel */
  /* Booleans: a value starting 0, n, N, f or F, or "off" in any case, is
   * false; any other non-empty value is true; empty is unset. */
  bool dmabuf;                  /* HIPOBJ_DMABUF: on */
  bool require_gpu_direct;      /* HIPOBJ_REQUIRE_GPU_DIRECT: off */
  bool rdma_debug;              /* HIPOBJ_RDMA_DEBUG: off */
  bool data_first;              /* HIPOBJ_DATA_FIRST: on: on a kept
                                   connection the window is bound before the
                                   request, so the server may move the
                                   payload before it answers (version 3) */
  bool scoped_tokens;           /* HIPOBJ_SCOPED_TOKENS: on: a memory window
                                   per transfer where the NIC binds them */
  bool require_scoped_tokens;   /* HIPOBJ_REQUIRE_SCOPED_TOKENS: off: on,
                                   init fails where windows cannot be used */
  char gpu_runtime[8];          /* HIPOBJ_GPU_RUNTIME: auto|hip|cuda|none */
};

/* A source of variables: getenv, or a table in tests. */
typedef const char *(*ho_getenv_fn)(const char *name, void *ctx);

void ho_options_defaults(struct ho_options *o);
/* Overlays the variables that get() returns on *o: a variable that is
 * unset, empty or invalid leaves its field as it was. */
void ho_options_parse(struct ho_options *o, ho_getenv_fn get, void *ctx);
/* The i-th variable of the table (0..): its name and its default as
 * text; false past the last. Pure: hipObjGetEnvVar(). */
bool ho_options_var(size_t i, const char **name, const char **shown);
/* ho_options_defaults(), then ho_options_parse() over getenv(). */
void ho_options_from_env(struct ho_options *o);

#endif
