/* SPDX-License-Identifier: MIT */
/* hipobj-soak: one client process of the Soft-RoCE soak (tests/vm/cases/
 * t20_soak.sh). STREAMS threads each run TRANSFERS transfers, GET and PUT
 * interleaved, 1 byte to 4 MiB, alternating between the endpoints, every
 * byte compared with what this thread wrote, and the bytes around each
 * range checked untouched. Only the public API and s3mini.
 *
 *   hipobj-soak ENDPOINTS STREAMS TRANSFERS SEED [steady]
 *
 * ENDPOINTS is a comma-separated list. A failed transfer is counted as
 * "during a restart" when the file /tmp/soak-restarting existed when it
 * started or ended (the case creates it before it stops a server and
 * removes it once transfers in flight have failed), unless it started
 * after /tmp/soak-back appeared (the server was listening again): those,
 * and any other failure, fail the run. With "steady", the process first makes one
 * transfer per stream and endpoint, then checks that the rest made no QP
 * state transition on either side (server stats, library info).
 * Prints one line: "soak: N transfers, F failed, R during restart, ...".
 * Exit 0, or 1 on any failure outside a restart. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hipobj.h"
#include "s3mini.h"

#define MAX_EP 4
#define SLOTS 6
#define MAX_SIZE (4u << 20)
#define GUARD 64
#define MARK "/tmp/soak-restarting"
#define BACK "/tmp/soak-back"

static char *endpoints[MAX_EP];
static unsigned nep;
static unsigned seed0;
static atomic_ulong done, failed, restart_failed, bytes_moved, mismatched;

struct object { /* what this thread last stored under a key, per endpoint */
  size_t size;
  uint32_t seed;
  int valid;
};

struct stream {
  unsigned id, transfers;
  uint8_t *buf; /* GUARD + MAX_SIZE + GUARD, registered */
  struct object obj[MAX_EP][SLOTS];
  uint64_t rng;
  pthread_t t;
};

static uint64_t next(uint64_t *x)
{
  *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
  return *x;
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i < n; i++)
    p[i] = (uint8_t)next(&x);
}

/* Mostly small objects, some large: 1 B .. 4 MiB. */
static size_t pick_size(uint64_t *rng)
{
  unsigned r = next(rng) % 100;
  size_t cap = r < 1 ? MAX_SIZE : r < 5 ? (1u << 20) : r < 30 ? (64u << 10) : 4096;
  return 1 + next(rng) % cap;
}

static int restarting(void) { return access(MARK, F_OK) == 0; }
static int back(void) { return access(BACK, F_OK) == 0; }

static hipObjOpError_t xfer(struct stream *s, unsigned ep, unsigned slot,
                            int op, size_t n, long *status)
{
  struct s3mini r = {0};
  r.endpoint = endpoints[ep];
  r.method = op == HIPOBJ_RDMA_OP_PUT ? "PUT" : "GET";
  snprintf(r.path, sizeof r.path, "/soak/s%u-p%d-t%u-%u", seed0, (int)getpid(),
           s->id, slot);
  hipObjSetPeerHint(endpoints[ep]);
  hipObjError_t e = op == HIPOBJ_RDMA_OP_PUT
                        ? hipObjPut(NULL, s->buf, n, GUARD, &s3mini_ops, &r)
                        : hipObjGet(NULL, s->buf, n, GUARD, &s3mini_ops, &r);
  *status = r.status;
  s3mini_reset(&r);
  return e.opError;
}

static int guards_intact(const struct stream *s, size_t n)
{
  for (size_t i = 0; i < GUARD; i++)
    if (s->buf[i] != 0xa5 || s->buf[GUARD + n + i] != 0xa5)
      return 0;
  return 1;
}

static void one(struct stream *s, unsigned i)
{
  unsigned ep = (i + s->id) % nep, slot = (unsigned)(next(&s->rng) % SLOTS);
  struct object *o = &s->obj[ep][slot];
  int op = (!o->valid || next(&s->rng) % 2) ? HIPOBJ_RDMA_OP_PUT : HIPOBJ_RDMA_OP_GET;
  size_t n = op == HIPOBJ_RDMA_OP_PUT ? pick_size(&s->rng) : o->size;
  uint32_t seed = (uint32_t)next(&s->rng);
  int started_back = back(), was_restarting = restarting();
  memset(s->buf, 0xa5, GUARD);
  memset(s->buf + GUARD + n, 0xa5, GUARD);
  if (op == HIPOBJ_RDMA_OP_PUT)
    fill(s->buf + GUARD, n, seed);
  else
    memset(s->buf + GUARD, 0x5a, n);
  long status = 0;
  hipObjOpError_t e = xfer(s, ep, slot, op, n, &status);
  atomic_fetch_add(&done, 1);
  if (e != hipObjSuccess) {
    o->valid = 0; /* a failed PUT may or may not have landed */
    if (!started_back && (was_restarting || restarting())) {
      atomic_fetch_add(&restart_failed, 1);
    } else {
      atomic_fetch_add(&failed, 1);
      fprintf(stderr, "soak: %s of %zu bytes on %s failed: %s (HTTP %ld)\n",
              op == HIPOBJ_RDMA_OP_PUT ? "PUT" : "GET", n, endpoints[ep],
              hipObjGetErrorString(e), status);
    }
    return;
  }
  atomic_fetch_add(&bytes_moved, n);
  if (op == HIPOBJ_RDMA_OP_PUT) {
    *o = (struct object){n, seed, 1};
    return;
  }
  uint8_t *want = malloc(n);
  fill(want, n, o->seed);
  if (memcmp(want, s->buf + GUARD, n) != 0 || !guards_intact(s, n)) {
    atomic_fetch_add(&mismatched, 1);
    fprintf(stderr, "soak: GET of %zu bytes on %s: wrong bytes\n", n,
            endpoints[ep]);
  }
  free(want);
}

/* steady: every stream makes its first transfer to each endpoint, then
 * all wait while main reads the server's counters. */
static pthread_barrier_t warm, counted;
static int steady;

static void *stream_main(void *arg)
{
  struct stream *s = arg;
  unsigned i = 0;
  if (steady) {
    for (; i < nep; i++)
      one(s, i);
    pthread_barrier_wait(&warm);
    pthread_barrier_wait(&counted);
  }
  for (; i < s->transfers; i++)
    one(s, i);
  return NULL;
}

static long long stat_sum(const char *key)
{
  long long sum = 0;
  for (unsigned i = 0; i < nep; i++) {
    long long v = s3mini_stat(endpoints[i], "connections", key);
    sum += v > 0 ? v : 0;
  }
  return sum;
}

static void parse_endpoints(char *list)
{
  for (char *tok = strtok(list, ","); tok && nep < MAX_EP; tok = strtok(NULL, ","))
    endpoints[nep++] = tok;
}

static int run(struct stream *st, unsigned streams)
{
  long long t0 = 0;
  pthread_barrier_init(&warm, NULL, streams + 1);
  pthread_barrier_init(&counted, NULL, streams + 1);
  for (unsigned k = 0; k < streams; k++)
    pthread_create(&st[k].t, NULL, stream_main, &st[k]);
  if (steady) {
    pthread_barrier_wait(&warm);
    t0 = stat_sum("qp_transitions");
    pthread_barrier_wait(&counted);
  }
  for (unsigned k = 0; k < streams; k++)
    pthread_join(st[k].t, NULL);
  if (!steady)
    return 0;
  long long t1 = stat_sum("qp_transitions");
  printf("soak: steady state: %lld server QP transitions in %lu transfers\n",
         t1 - t0, atomic_load(&done) - streams * nep);
  return t1 == t0 ? 0 : 1;
}

int main(int argc, char **argv)
{
  if (argc < 5) {
    fprintf(stderr, "usage: %s ENDPOINTS STREAMS TRANSFERS SEED [steady]\n", argv[0]);
    return 2;
  }
  parse_endpoints(argv[1]);
  unsigned streams = (unsigned)atoi(argv[2]), per = (unsigned)atoi(argv[3]);
  seed0 = (unsigned)atoi(argv[4]);
  steady = argc > 5 && strcmp(argv[5], "steady") == 0;
  hipObjConfig_t cfg = {0};
  cfg.gpuDevice = -1;
  cfg.nicHint = getenv("RXE_DEV") ? getenv("RXE_DEV") : "rxe0";
  if (nep == 0 || streams == 0 || hipObjInit(&cfg).opError != hipObjSuccess) {
    fprintf(stderr, "soak: cannot start\n");
    return 1;
  }
  struct stream *st = calloc(streams, sizeof *st);
  for (unsigned k = 0; k < streams; k++) {
    st[k] = (struct stream){.id = k, .transfers = per,
                            .rng = seed0 * 7919ull + k * 104729ull + getpid()};
    st[k].buf = aligned_alloc(4096, MAX_SIZE + 2 * GUARD + 4096);
    hipObjBufRegisterHost(st[k].buf, MAX_SIZE + 2 * GUARD);
  }
  int steady_rc = run(st, streams);
  for (unsigned k = 0; k < streams; k++) {
    hipObjBufDeregister(st[k].buf);
    free(st[k].buf);
  }
  free(st);
  hipObjShutdown();
  printf("soak: pid %d: %lu transfers, %lu failed, %lu during restart, "
         "%lu wrong, %lu bytes verified or stored\n",
         (int)getpid(), atomic_load(&done), atomic_load(&failed),
         atomic_load(&restart_failed), atomic_load(&mismatched),
         atomic_load(&bytes_moved));
  return atomic_load(&failed) || atomic_load(&mismatched) || steady_rc ? 1 : 0;
}
