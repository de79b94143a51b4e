/* SPDX-License-Identifier: MIT */
/* hipobj-soak: one client process of the Soft-RoCE soak (tests/vm/cases/
 * t20_soak.sh) and of the fault cases (t21_faults.sh). STREAMS threads each
 * run TRANSFERS transfers, GET and PUT interleaved, 1 byte to 4 MiB,
 * alternating between the endpoints, every byte compared with what this
 * thread wrote, and the bytes around each range checked untouched after
 * every transfer, failed ones included. Only the public API and s3mini.
 *
 *   hipobj-soak ENDPOINTS STREAMS TRANSFERS SEED [steady] [window=FILE]
 *               [min-secs=S] [after=S] [rail-watch]
 *
 * ENDPOINTS is a comma-separated list. A failed transfer is counted as
 * "during a restart" (a window) when FILE (default /tmp/soak-restarting)
 * existed when it started or ended (the case creates it around a server
 * restart or a blackout of the fabric), unless it started after
 * /tmp/soak-back appeared (t20: the restarted server listens again); any
 * other failure fails the run.
 * With window=FILE, a failure inside the window must moreover be clean:
 * end within the documented bound (docs/protocol.md section 7:
 * HIPOBJ_TRANSFER_TIMEOUT_MS, default 5000, plus 100 ms per MB, plus
 * SLACK_MS for the S3 round trip), as hipObjRdmaError, or as
 * hipObjS3Error with HTTP 503 (the server had no RDMA slot: nothing
 * moved), or the run fails.
 * With min-secs=S, each stream goes on past TRANSFERS until S seconds
 * have passed since the start; with after=S, until S seconds after the
 * window closed (waiting at most 120 s for one to open and close).
 * With "steady", the process first makes one transfer per stream and
 * endpoint, then checks that the rest made no QP state transition on
 * either side (server stats, library info).
 * With "rail-watch", a thread reads hipObjGetInfo()'s railStats every
 * 20 ms while the streams run and prints each change of a rail's state or
 * mark count as it sees it: "soak: pid P: rail I NAME down at T s, marks
 * M, bytes B" (or "up at"), T the seconds since boot (CLOCK_BOOTTIME, as
 * /proc/uptime), B the bytes the rail had moved then.
 * Prints "soak: pid P: N transfers, F failed, R during restart, ..." and
 * "soak: pid P: latency ..." (successful transfers: p50, p99, max; the
 * longest failure and its bound; successes after a window closed); with
 * more than one rail, a line per rail: "soak: pid P: rail I NAME: state
 * up|down, marks M, transfers T, bytes B, failures F" (railStats, at the
 * end).
 * Exit 0, or 1 on any failure outside a window, a wrong byte, or a
 * failure inside a window that is not a clean one. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hipobj.h"
#include "s3mini.h"

#define MAX_EP 4
#define SLOTS 6
#define MAX_SIZE (4u << 20)
#define GUARD 64
#define SLACK_MS 5000 /* the S3 round trip around the RDMA, on a loaded VM */

static const char *mark = "/tmp/soak-restarting";
static int strict_window; /* window=FILE: failures inside must be clean */
static unsigned min_secs;  /* min-secs=S: go on past TRANSFERS until S s */
static unsigned after_secs; /* after=S: go on until S s after the window */
static uint64_t start_us;
static atomic_ullong closed_us; /* when a stream first saw the window closed */
static char *endpoints[MAX_EP];
static unsigned nep;
static unsigned seed0;
static atomic_ulong done, failed, restart_failed, bytes_moved, mismatched;
static atomic_ulong unclean, refused, after_window, window_seen;
static atomic_ullong worst_fail_us, worst_fail_bound_us;
static int rail_watch;          /* rail-watch: print the rails' changes */
static atomic_int watch_stop;

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
  uint32_t *lat_us; /* per successful transfer */
  unsigned nlat, cap;
  pthread_t t;
};

static uint64_t now_us(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* docs/protocol.md section 7: how long the client may wait for final. */
static uint64_t bound_us(size_t n)
{
  const char *v = getenv("HIPOBJ_TRANSFER_TIMEOUT_MS");
  uint64_t ms = v ? strtoull(v, NULL, 10) : 5000;
  return (ms + SLACK_MS) * 1000u + (uint64_t)n / 10u;
}

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

static int restarting(void) { return access(mark, F_OK) == 0; }
/* t20_soak: the restarted server listens again; a transfer started from
 * then on must succeed, even while the window is still open. */
static int back(void) { return access("/tmp/soak-back", F_OK) == 0; }

static void max_store(atomic_ullong *a, unsigned long long v)
{
  unsigned long long cur = atomic_load(a);
  while (v > cur && !atomic_compare_exchange_weak(a, &cur, v))
    ;
}

/* A failure inside the window is clean when it ends within its bound
 * and is hipObjRdmaError, or hipObjS3Error with HTTP 503: the server had
 * no RDMA slot free (--rdma-qps), nothing moved. */
static void window_failure(hipObjOpError_t e, long status, size_t n, uint64_t us, int op)
{
  atomic_fetch_add(&restart_failed, 1);
  if (!strict_window)
    return;
  uint64_t b = bound_us(n);
  if (us > atomic_load(&worst_fail_us)) {
    max_store(&worst_fail_us, us);
    atomic_store(&worst_fail_bound_us, b);
  }
  int is_refusal = e == hipObjS3Error && status == 503;
  atomic_fetch_add(&refused, (unsigned long)is_refusal);
  if ((e != hipObjRdmaError && !is_refusal) || us > b) {
    atomic_fetch_add(&unclean, 1);
    fprintf(stderr, "soak: %s of %zu bytes in the window: %s (HTTP %ld) after %llu ms "
                    "(want hipObjRdmaError or a 503 within %llu ms)\n",
            op == HIPOBJ_RDMA_OP_PUT ? "PUT" : "GET", n, hipObjGetErrorString(e), status,
            (unsigned long long)us / 1000, (unsigned long long)b / 1000);
  }
}

static hipObjOpError_t xfer(struct stream *s, unsigned ep, unsigned slot,
                            int op, size_t n, long *status)
{
  struct s3mini r = {0};
  r.endpoint = endpoints[ep];
  r.method = op == HIPOBJ_RDMA_OP_PUT ? "PUT" : "GET";
  /* the endpoint in the key: two endpoints may share one store (t41's
   * gateways) */
  snprintf(r.path, sizeof r.path, "/soak/s%u-p%d-t%u-e%u-%u", seed0,
           (int)getpid(), s->id, ep, slot);
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
  if (was_restarting)
    atomic_store(&window_seen, 1);
  int after = !was_restarting && atomic_load(&window_seen);
  if (after && atomic_load(&closed_us) == 0) {
    unsigned long long zero = 0;
    atomic_compare_exchange_strong(&closed_us, &zero, now_us());
  }
  memset(s->buf, 0xa5, GUARD);
  memset(s->buf + GUARD + n, 0xa5, GUARD);
  if (op == HIPOBJ_RDMA_OP_PUT)
    fill(s->buf + GUARD, n, seed);
  else
    memset(s->buf + GUARD, 0x5a, n);
  long status = 0;
  uint64_t t0 = now_us();
  hipObjOpError_t e = xfer(s, ep, slot, op, n, &status);
  uint64_t us = now_us() - t0;
  atomic_fetch_add(&done, 1);
  if (!guards_intact(s, n)) {
    atomic_fetch_add(&mismatched, 1);
    fprintf(stderr, "soak: %s of %zu bytes on %s (%s): a byte outside the range changed\n",
            op == HIPOBJ_RDMA_OP_PUT ? "PUT" : "GET", n, endpoints[ep],
            hipObjGetErrorString(e));
  }
  if (e != hipObjSuccess) {
    o->valid = 0; /* a failed PUT may or may not have landed */
    if (!started_back && (was_restarting || restarting())) {
      window_failure(e, status, n, us, op);
    } else {
      atomic_fetch_add(&failed, 1);
      fprintf(stderr, "soak: %s of %zu bytes on %s failed: %s (HTTP %ld) after %llu ms\n",
              op == HIPOBJ_RDMA_OP_PUT ? "PUT" : "GET", n, endpoints[ep],
              hipObjGetErrorString(e), status, (unsigned long long)us / 1000);
    }
    return;
  }
  if (s->nlat == s->cap) {
    uint32_t *p = realloc(s->lat_us, (s->cap * 2 + 64) * sizeof *p);
    if (p)
      s->lat_us = p, s->cap = s->cap * 2 + 64;
  }
  if (s->nlat < s->cap)
    s->lat_us[s->nlat++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
  atomic_fetch_add(&after_window, (unsigned long)after);
  atomic_fetch_add(&bytes_moved, n);
  if (op == HIPOBJ_RDMA_OP_PUT) {
    *o = (struct object){n, seed, 1};
    return;
  }
  uint8_t *want = malloc(n);
  fill(want, n, o->seed);
  if (memcmp(want, s->buf + GUARD, n) != 0) {
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

/* min-secs and after=: whether to go on past TRANSFERS. after= waits at
 * most 120 s for a window to open and close. */
static int more_time(void)
{
  uint64_t t = now_us() - start_us, closed = atomic_load(&closed_us);
  if (t < min_secs * 1000000ull)
    return 1;
  if (!after_secs)
    return 0;
  if (!closed)
    return t < 120000000ull;
  return now_us() - closed < after_secs * 1000000ull;
}

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
  while (i < s->transfers || more_time())
    one(s, i++);
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

static double boot_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *rail_state(uint32_t state)
{
  return state == hipObjRailUp ? "up" : state == hipObjRailDown ? "down" : "not-open";
}

static int rail_info(hipObjInfo_t *i)
{
  memset(i, 0, sizeof *i);
  i->size = sizeof *i;
  return hipObjGetInfo(i).opError == hipObjSuccess ? 0 : -1;
}

/* rail-watch: each change of a rail's state or mark count, when seen (a
 * mark and its return within one period show as the count moving). */
static void *watch_main(void *arg)
{
  (void)arg;
  static hipObjInfo_t i; /* only this thread uses it */
  uint32_t state[HIPOBJ_INFO_MAX_RAILS];
  uint64_t marks[HIPOBJ_INFO_MAX_RAILS] = {0};
  for (unsigned k = 0; k < HIPOBJ_INFO_MAX_RAILS; k++)
    state[k] = hipObjRailUp;
  while (!atomic_load(&watch_stop)) {
    if (rail_info(&i) == 0) {
      for (unsigned k = 0; k < i.railCount && k < HIPOBJ_INFO_MAX_RAILS; k++) {
        const hipObjRailStats_t *x = &i.railStats[k];
        if (x->state == state[k] && x->marksDown == marks[k])
          continue;
        state[k] = x->state, marks[k] = x->marksDown;
        printf("soak: pid %d: rail %u %s %s at %.2f s, marks %llu, bytes %llu\n",
               (int)getpid(), k, i.rails[k].name, rail_state(x->state), boot_s(),
               (unsigned long long)x->marksDown, (unsigned long long)x->bytes);
        fflush(stdout);
      }
    }
    usleep(20000);
  }
  return NULL;
}

static int run(struct stream *st, unsigned streams)
{
  long long t0 = 0;
  pthread_t watch;
  if (rail_watch && pthread_create(&watch, NULL, watch_main, NULL) != 0)
    rail_watch = 0;
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
  if (rail_watch) {
    atomic_store(&watch_stop, 1);
    pthread_join(watch, NULL);
  }
  if (!steady)
    return 0;
  long long t1 = stat_sum("qp_transitions");
  printf("soak: steady state: %lld server QP transitions in %lu transfers\n",
         t1 - t0, atomic_load(&done) - streams * nep);
  return t1 == t0 ? 0 : 1;
}

static int cmp_u32(const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* p50, p99 and max of the successful transfers, in ms. */
static void print_latency(const struct stream *st, unsigned streams)
{
  unsigned n = 0;
  for (unsigned k = 0; k < streams; k++)
    n += st[k].nlat;
  uint32_t *all = malloc(((size_t)n + 1) * sizeof *all);
  n = 0;
  for (unsigned k = 0; k < streams; k++)
    for (unsigned j = 0; j < st[k].nlat; j++)
      all[n++] = st[k].lat_us[j];
  qsort(all, n, sizeof *all, cmp_u32);
  printf("soak: pid %d: latency p50 %.1f ms, p99 %.1f ms, max %.1f ms; "
         "longest failure %.1f ms (bound %.1f ms); %lu after the window\n",
         (int)getpid(), n ? all[n / 2] / 1e3 : 0.0, n ? all[n * 99 / 100] / 1e3 : 0.0,
         n ? all[n - 1] / 1e3 : 0.0, atomic_load(&worst_fail_us) / 1e3,
         atomic_load(&worst_fail_bound_us) / 1e3, atomic_load(&after_window));
  free(all);
}

/* The library's retries by cause (docs/protocol.md, section 7): the
 * faults it absorbed. */
static void print_retries(void)
{
  hipObjInfo_t i;
  memset(&i, 0, sizeof i);
  i.size = sizeof i;
  if (hipObjGetInfo(&i).opError != hipObjSuccess)
    return;
  printf("soak: pid %d: retries: %llu fabric, %llu server rdma, %llu stalled, "
         "%llu kept broken; %llu kept connections replaced before use; "
         "probes: %llu sent, %llu failed\n",
         (int)getpid(), (unsigned long long)i.retriesFabric,
         (unsigned long long)i.retriesServerRdma,
         (unsigned long long)i.retriesStalled,
         (unsigned long long)i.retriesKeptBroken,
         (unsigned long long)i.keptBroken, (unsigned long long)i.probesSent,
         (unsigned long long)i.probesFailed);
}

/* With more than one rail: each rail's counters (railStats). */
static void print_rails(void)
{
  static hipObjInfo_t i;
  if (rail_info(&i) != 0 || i.railCount < 2)
    return;
  for (unsigned k = 0; k < i.railCount && k < HIPOBJ_INFO_MAX_RAILS; k++) {
    const hipObjRailStats_t *x = &i.railStats[k];
    printf("soak: pid %d: rail %u %s: state %s, marks %llu, transfers %llu, "
           "bytes %llu, failures %llu\n",
           (int)getpid(), k, i.rails[k].name, rail_state(x->state),
           (unsigned long long)x->marksDown, (unsigned long long)x->transfers,
           (unsigned long long)x->bytes, (unsigned long long)x->failures);
  }
}

static int parse_options(int argc, char **argv)
{
  for (int i = 5; i < argc; i++) {
    if (strcmp(argv[i], "steady") == 0)
      steady = 1;
    else if (strncmp(argv[i], "window=", 7) == 0 && argv[i][7])
      mark = argv[i] + 7, strict_window = 1;
    else if (strncmp(argv[i], "min-secs=", 9) == 0)
      min_secs = (unsigned)strtoul(argv[i] + 9, NULL, 10);
    else if (strncmp(argv[i], "after=", 6) == 0)
      after_secs = (unsigned)strtoul(argv[i] + 6, NULL, 10);
    else if (strcmp(argv[i], "rail-watch") == 0)
      rail_watch = 1;
    else
      return -1;
  }
  return 0;
}

int main(int argc, char **argv)
{
  if (argc < 5 || parse_options(argc, argv) != 0) {
    fprintf(stderr, "usage: %s ENDPOINTS STREAMS TRANSFERS SEED [steady] "
                    "[window=FILE] [min-secs=S] [after=S] [rail-watch]\n",
            argv[0]);
    return 2;
  }
  parse_endpoints(argv[1]);
  unsigned streams = (unsigned)atoi(argv[2]), per = (unsigned)atoi(argv[3]);
  seed0 = (unsigned)atoi(argv[4]);
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
    st[k].cap = per + 1;
    st[k].lat_us = calloc(st[k].cap, sizeof *st[k].lat_us);
    hipObjBufRegisterHost(st[k].buf, MAX_SIZE + 2 * GUARD);
  }
  start_us = now_us();
  int steady_rc = run(st, streams);
  print_latency(st, streams);
  for (unsigned k = 0; k < streams; k++) {
    hipObjBufDeregister(st[k].buf);
    free(st[k].buf);
    free(st[k].lat_us);
  }
  free(st);
  print_retries();
  print_rails();
  hipObjShutdown();
  printf("soak: pid %d: %lu transfers, %lu failed, %lu during restart, "
         "%lu wrong, %lu bytes verified or stored, %lu unclean in the window, "
         "%lu refused (503)\n",
         (int)getpid(), atomic_load(&done), atomic_load(&failed),
         atomic_load(&restart_failed), atomic_load(&mismatched),
         atomic_load(&bytes_moved), atomic_load(&unclean), atomic_load(&refused));
  return atomic_load(&failed) || atomic_load(&mismatched) || atomic_load(&unclean) ||
                 steady_rc
             ? 1
             : 0;
}
