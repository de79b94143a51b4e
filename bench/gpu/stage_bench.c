/* SPDX-License-Identifier: MIT */
/* Staging throughput on a real NVIDIA GPU: the library's staging copy
 * (ho_stage_copy(), as hipObjGet/hipObjPut/hipObjBufSync run it on a staged
 * buffer: reserve an abandoned-list slot, cuMemcpyAsync on the calling
 * thread's per-thread stream, an event, the polling wait) against plain
 * cudaMemcpyAsync + cudaStreamSynchronize on cudaStreamPerThread, between the
 * same pinned host buffer (the library's own host_alloc, as staging uses)
 * and the same cudaMalloc buffer, in the same run.
 *
 *   stage_bench [--min BYTES] [--max BYTES] [--bytes-per-point BYTES]
 *
 * For each size (powers of two, 4 KiB to 1 GiB by default) and direction
 * (to device: staging -> GPU, as after a GET; to host: GPU -> staging, as
 * before a PUT) it times every copy of both methods, interleaved and
 * alternating which goes first, after three warm-up copies of each. It
 * prints one row per size and direction: GB/s of each (bytes over the sum of
 * the copies' times, 1 GB = 1e9 bytes), their ratio, and per-copy latency
 * (median and 99th percentile, microseconds). Then what the polling's steps
 * cost on this machine, and whether the goals hold: at least 90% of
 * cudaMemcpyAsync from 64 MiB up; small copies not rounded up by the
 * polling (4 KiB: median within 50 us of cudaMemcpyAsync's, and the 99th
 * percentile under 1 ms).
 *
 * Exit status: 0 (whether or not the goals hold: this is a measurement),
 * 1 when something failed, 77 without a GPU. */
#include <cuda_runtime_api.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "abandoned.h"
#include "buffer.h"
#include "common/clock.h"
#include "platform/gpu.h"
#include "staging.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define GiB ((size_t)1 << 30)
#define WARMUP 3
#define MIN_REPS 5
#define MAX_REPS 2000

static const struct ho_gpu_ops *g;
static struct ho_abandoned *ab;
static struct ho_buf buf; /* a staged buffer: addr on the GPU, staging pinned */

static int cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static bool lib_copy(size_t n, int dir)
{
  int native = 0;
  hipObjOpError_t e = ho_stage_copy(g, ab, &buf, 0, n, dir, 60000, &native);
  if (e != hipObjSuccess) {
    fprintf(stderr, "ho_stage_copy(%zu, %d): error %d, native %d\n", n, dir,
            (int)e, native);
    return false;
  }
  return true;
}

static bool cuda_copy(size_t n, int dir)
{
  cudaError_t ce =
      dir == HIPOBJ_SYNC_TO_DEVICE
          ? cudaMemcpyAsync((void *)buf.addr, buf.staging, n,
                            cudaMemcpyHostToDevice, cudaStreamPerThread)
          : cudaMemcpyAsync(buf.staging, (void *)buf.addr, n,
                            cudaMemcpyDeviceToHost, cudaStreamPerThread);
  if (ce == cudaSuccess)
    ce = cudaStreamSynchronize(cudaStreamPerThread);
  if (ce != cudaSuccess) {
    fprintf(stderr, "cudaMemcpyAsync(%zu): %s\n", n, cudaGetErrorString(ce));
    return false;
  }
  return true;
}

struct stats {
  double gbps;          /* bytes over the sum of the copies' times */
  double p50_us, p99_us, max_us;
};

static void summarize(const uint64_t *ns, unsigned reps, size_t n,
                      struct stats *s)
{
  uint64_t *sorted = malloc(reps * sizeof *sorted);
  uint64_t sum = 0;
  for (unsigned i = 0; i < reps; i++)
    sum += ns[i];
  memcpy(sorted, ns, reps * sizeof *sorted);
  qsort(sorted, reps, sizeof *sorted, cmp_u64);
  s->gbps = (double)n * reps / (double)sum;
  s->p50_us = sorted[reps / 2] / 1e3;
  s->p99_us = sorted[(reps * 99) / 100 < reps ? (reps * 99) / 100 : reps - 1] / 1e3;
  s->max_us = sorted[reps - 1] / 1e3;
  free(sorted);
}

/* Both methods for one size and direction, interleaved. */
static bool measure(size_t n, int dir, unsigned reps, struct stats *lib,
                    struct stats *cuda)
{
  uint64_t *t_lib = calloc(reps, sizeof *t_lib);
  uint64_t *t_cuda = calloc(reps, sizeof *t_cuda);
  bool ok = t_lib && t_cuda;
  for (int i = 0; ok && i < WARMUP; i++)
    ok = lib_copy(n, dir) && cuda_copy(n, dir);
  for (unsigned i = 0; ok && i < reps; i++) {
    for (int k = 0; ok && k < 2; k++) {
      bool lib_now = (k == 0) == (i % 2 == 0);
      uint64_t t0 = ho_now_ns();
      ok = lib_now ? lib_copy(n, dir) : cuda_copy(n, dir);
      uint64_t dt = ho_now_ns() - t0;
      (lib_now ? t_lib : t_cuda)[i] = dt;
    }
  }
  if (ok) {
    summarize(t_lib, reps, n, lib);
    summarize(t_cuda, reps, n, cuda);
  }
  free(t_lib);
  free(t_cuda);
  return ok;
}

static void size_name(size_t n, char *out, size_t len)
{
  if (n >= GiB && n % GiB == 0)
    snprintf(out, len, "%zu GiB", n / GiB);
  else if (n >= MiB && n % MiB == 0)
    snprintf(out, len, "%zu MiB", n / MiB);
  else
    snprintf(out, len, "%zu KiB", n / KiB);
}

/* What the wait's steps cost here: a query of a finished event, a
 * sched_yield, a 1 us nanosleep (as ho_backoff's first sleeps). */
static void polling_costs(void)
{
  struct ho_gpu_event *ev = NULL;
  enum { N = 20000, S = 200 };
  if (g->copy_async((void *)buf.addr, buf.staging, 4096, &ev, NULL) !=
      hipObjSuccess)
    return;
  while (g->event_query(ev, NULL) == hipObjBusy)
    ;
  uint64_t t0 = ho_now_ns();
  for (int i = 0; i < N; i++)
    g->event_query(ev, NULL);
  double q = (double)(ho_now_ns() - t0) / N;
  g->event_destroy(ev);
  t0 = ho_now_ns();
  for (int i = 0; i < N; i++)
    sched_yield();
  double y = (double)(ho_now_ns() - t0) / N;
  t0 = ho_now_ns();
  for (int i = 0; i < S; i++) {
    struct timespec ts = {0, 1000};
    nanosleep(&ts, NULL);
  }
  double sl = (double)(ho_now_ns() - t0) / S;
  /* copy_async + event_destroy alone: what the library adds per copy
   * before it polls (event creation, the copy's and the event's enqueue). */
  uint64_t enq = 0;
  for (int i = 0; i < S; i++) {
    uint64_t a = ho_now_ns();
    if (g->copy_async((void *)buf.addr, buf.staging, 4096, &ev, NULL) !=
        hipObjSuccess)
      return;
    enq += ho_now_ns() - a;
    while (g->event_query(ev, NULL) == hipObjBusy)
      ;
    g->event_destroy(ev);
  }
  printf("\npolling costs here: event query (done) %.0f ns; sched_yield %.0f "
         "ns; nanosleep(1 us) %.1f us; copy_async of 4 KiB (event create, "
         "copy, record) %.1f us\n", q, y, sl / 1e3, (double)enq / S / 1e3);
  printf("ho_backoff: 64 polls spin (~%.0f us with a query each), 64 yield "
         "(~%.0f us), then sleeps of 1 us (%.0f us each here) doubling every "
         "16 polls up to 1 ms\n", 64 * q / 1e3, 64 * (q + y) / 1e3, sl / 1e3);
}

static size_t parse_size(const char *s)
{
  char *end = NULL;
  unsigned long long v = strtoull(s, &end, 0);
  if (end && (*end == 'K' || *end == 'k'))
    v <<= 10;
  else if (end && (*end == 'M' || *end == 'm'))
    v <<= 20;
  else if (end && (*end == 'G' || *end == 'g'))
    v <<= 30;
  return (size_t)v;
}

int main(int argc, char **argv)
{
  size_t min = 4 * KiB, max = GiB, per_point = GiB;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--min") == 0)
      min = parse_size(argv[i + 1]);
    else if (strcmp(argv[i], "--max") == 0)
      max = parse_size(argv[i + 1]);
    else if (strcmp(argv[i], "--bytes-per-point") == 0)
      per_point = parse_size(argv[i + 1]);
    else {
      fprintf(stderr, "usage: %s [--min N] [--max N] [--bytes-per-point N]\n",
              argv[0]);
      return 2;
    }
  }
  if (min < 1 || max < min || max > ((size_t)4 << 30)) {
    fprintf(stderr, "bad sizes\n");
    return 2;
  }
  int count = 0, drv = 0, rt = 0;
  cudaError_t ce = cudaGetDeviceCount(&count);
  if (ce != cudaSuccess || count == 0) {
    printf("SKIP: no CUDA device (%s)\n", cudaGetErrorString(ce));
    return 77;
  }
  if (ho_gpu_cuda_load(&g) != hipObjSuccess) {
    printf("FAIL: ho_gpu_cuda_load\n");
    return 1;
  }
  cudaSetDevice(0);
  cudaFree(NULL);
  struct cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  printf("stage_bench: %s (%04x:%02x:%02x), CUDA driver API %d.%d, runtime "
         "%d.%d\n", prop.name, prop.pciDomainID, prop.pciBusID,
         prop.pciDeviceID, drv / 1000, drv % 1000 / 10, rt / 1000,
         rt % 1000 / 10);

  void *dev = NULL, *pinned = NULL;
  if (cudaMalloc(&dev, max) != cudaSuccess ||
      g->host_alloc(max, &pinned, NULL) != hipObjSuccess ||
      ho_abandoned_create(g, &ab) != hipObjSuccess) {
    printf("FAIL: could not allocate %zu bytes on the GPU and pinned\n", max);
    return 1;
  }
  memset(pinned, 0x3c, max); /* touch every page before timing */
  cudaMemset(dev, 0, max);
  cudaDeviceSynchronize();
  atomic_init(&buf.refs, 1);
  buf.addr = (uintptr_t)dev;
  buf.size = max;
  buf.kind = HO_BUF_STAGED;
  buf.staging = pinned;
  buf.token_addr = (uintptr_t)pinned;
  buf.gpu = g;

  /* The copies move the right bytes (both directions, the largest size). */
  {
    size_t n = max < 64 * MiB ? max : 64 * MiB;
    uint8_t *p = pinned, *back = malloc(n);
    for (size_t i = 0; i < n; i++)
      p[i] = (uint8_t)(i * 7 + (i >> 16));
    bool ok = back && lib_copy(n, HIPOBJ_SYNC_TO_DEVICE) &&
              cudaMemcpy(back, dev, n, cudaMemcpyDeviceToHost) == cudaSuccess &&
              memcmp(back, p, n) == 0;
    ok = ok && cudaMemset(dev, 0x5b, n) == cudaSuccess &&
         cudaDeviceSynchronize() == cudaSuccess &&
         lib_copy(n, HIPOBJ_SYNC_TO_HOST);
    for (size_t i = 0; ok && i < n; i++)
      ok = p[i] == 0x5b;
    free(back);
    printf("bytes checked both ways over %zu MiB: %s\n", n / MiB,
           ok ? "right" : "WRONG");
    if (!ok)
      return 1;
  }

  printf("\n%-9s %-9s %9s %9s %6s %9s %9s %9s %9s %5s\n", "size", "direction",
         "lib GB/s", "cuda GB/s", "ratio", "lib p50", "cuda p50", "lib p99",
         "cuda p99", "reps");
  printf("%-9s %-9s %9s %9s %6s %9s %9s %9s %9s %5s\n", "", "", "", "", "",
         "us", "us", "us", "us", "");
  double worst_big = 1e9;
  char worst_at[48] = "";
  struct stats small_lib[2], small_cuda[2];
  bool have_small = false;
  for (size_t n = min; n <= max; n *= 2) {
    size_t r = per_point / n;
    unsigned reps = r < MIN_REPS ? MIN_REPS : r > MAX_REPS ? MAX_REPS : (unsigned)r;
    char name[32];
    size_name(n, name, sizeof name);
    for (int dir = HIPOBJ_SYNC_TO_DEVICE; dir >= HIPOBJ_SYNC_TO_HOST; dir--) {
      struct stats l, c;
      if (!measure(n, dir, reps, &l, &c)) {
        printf("FAIL: copies of %zu bytes\n", n);
        return 1;
      }
      double ratio = l.gbps / c.gbps;
      const char *dname = dir == HIPOBJ_SYNC_TO_DEVICE ? "to device" : "to host";
      printf("%-9s %-9s %9.2f %9.2f %6.3f %9.1f %9.1f %9.1f %9.1f %5u\n",
             name, dname, l.gbps, c.gbps, ratio, l.p50_us, c.p50_us, l.p99_us,
             c.p99_us, reps);
      fflush(stdout);
      if (n >= 64 * MiB && ratio < worst_big) {
        worst_big = ratio;
        snprintf(worst_at, sizeof worst_at, "%s %s", name, dname);
      }
      if (n == 4 * KiB) {
        small_lib[dir] = l;
        small_cuda[dir] = c;
        have_small = true;
      }
    }
  }
  polling_costs();
  printf("\ngoal 1, at least 90%% of cudaMemcpyAsync from 64 MiB up: ");
  if (worst_at[0])
    printf("%s (lowest ratio %.3f, %s)\n", worst_big >= 0.9 ? "met" : "NOT met",
           worst_big, worst_at);
  else
    printf("not measured (--max below 64 MiB)\n");
  printf("goal 2, 4 KiB copies not rounded up by the polling: ");
  if (have_small) {
    bool met = true;
    for (int d = 0; d < 2; d++)
      met = met && small_lib[d].p50_us <= small_cuda[d].p50_us + 50 &&
            small_lib[d].p99_us < 1000;
    printf("%s (median %.1f / %.1f us to device / to host, against %.1f / "
           "%.1f; p99 %.1f / %.1f us; max %.1f / %.1f us)\n",
           met ? "met" : "NOT met", small_lib[1].p50_us, small_lib[0].p50_us,
           small_cuda[1].p50_us, small_cuda[0].p50_us, small_lib[1].p99_us,
           small_lib[0].p99_us, small_lib[1].max_us, small_lib[0].max_us);
  } else {
    printf("not measured (--min above 4 KiB)\n");
  }
  ho_abandoned_destroy(ab);
  g->host_free(pinned);
  cudaFree(dev);
  return 0;
}
