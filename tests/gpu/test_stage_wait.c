/* SPDX-License-Identifier: MIT */
/* How the staging copy's wait polls (src/staging.c), on the fake GPU runtime:
 * no GPU needed, so it runs in CI. On the H200 (docs/performance.md) copies
 * of 50 us to 1 ms lost up to half their speed because the wait began to
 * sleep after 128 polls (about 30 us) and every sleep costs the timer slack
 * (56 us there). Now it polls for the first millisecond:
 *
 *   seen_within_a_poll  a copy whose event needs 400 queries is seen within
 *                       the polling window (the old wait slept through about
 *                       130 ms of its backoff for it, timer slack or not)
 *   sleeps_later        a copy that never ends still sleeps after that
 *                       window: far fewer queries than a busy poll would make
 *                       until the deadline, which is kept
 *
 * Prints one line per check; exits 0, or 1 on a failure. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "abandoned.h"
#include "buffer.h"
#include "common/clock.h"
#include "fakes/fake_gpu.h"
#include "staging.h"

static int failed;

#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      printf("  line %d: expected %s\n", __LINE__, #cond);                     \
      failed = 1;                                                              \
    }                                                                          \
  } while (0)

static struct ho_abandoned *ab;
static struct ho_buf buf;

static uint64_t queries(void)
{
  struct fake_gpu_counters c;
  fake_gpu_get_counters(&c);
  return c.calls[FAKE_GPU_EVENT_QUERY];
}

static void seen_within_a_poll(void)
{
  /* Best of three, so a preempted run does not fail it. */
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 3; i++) {
    fake_gpu_set_copy_polls(400);
    uint64_t q0 = queries(), t0 = ho_now_ns();
    EXPECT(ho_stage_copy(&fake_gpu_ops, ab, &buf, 0, 4096,
                         HIPOBJ_SYNC_TO_DEVICE, 10000, NULL) == hipObjSuccess);
    uint64_t dt = ho_now_ns() - t0;
    EXPECT(queries() - q0 == 401);
    best = dt < best ? dt : best;
  }
  printf("  a copy seen at its 401st query: after %.3f ms (best of 3)\n",
         best / 1e6);
  EXPECT(best < 20000000u); /* the old backoff: over 100 ms */
}

static void sleeps_later(void)
{
  fake_gpu_set_copy_polls(0);
  fake_gpu_stall_copies(true);
  uint64_t q0 = queries(), t0 = ho_now_ns();
  hipObjOpError_t e = ho_stage_copy(&fake_gpu_ops, ab, &buf, 0, 4096,
                                    HIPOBJ_SYNC_TO_HOST, 200, NULL);
  uint64_t dt = ho_now_ns() - t0, n = queries() - q0;
  printf("  a copy that never ends: %d after %.1f ms and %llu queries\n",
         (int)e, dt / 1e6, (unsigned long long)n);
  EXPECT(e == hipObjRdmaError); /* abandoned at its deadline */
  EXPECT(dt >= 200000000u && dt < 400000000u);
  /* Polling all along would make one query every microsecond or less:
   * 200000 or more. */
  EXPECT(n < 60000);
  fake_gpu_stall_copies(false);
  EXPECT(fake_gpu_release_stalled() == 1);
  ho_abandoned_collect(ab, NULL);
  EXPECT(ho_abandoned_count(ab) == 0);
}

int main(void)
{
  fake_gpu_reset();
  void *dev = fake_gpu_malloc(4096), *host = NULL;
  if (!dev || fake_gpu_ops.host_alloc(4096, &host, NULL) != hipObjSuccess ||
      ho_abandoned_create(&fake_gpu_ops, &ab) != hipObjSuccess) {
    printf("FAIL: setup\n");
    return 1;
  }
  atomic_init(&buf.refs, 1);
  buf.addr = (uintptr_t)dev;
  buf.size = 4096;
  buf.kind = HO_BUF_STAGED;
  buf.staging = host;
  buf.token_addr = (uintptr_t)host;
  buf.gpu = &fake_gpu_ops;
  printf("---- seen_within_a_poll\n");
  seen_within_a_poll();
  printf("---- sleeps_later\n");
  sleeps_later();
  ho_abandoned_destroy(ab);
  fake_gpu_ops.host_free(host);
  fake_gpu_free(dev);
  fake_gpu_reset();
  printf("%s\n", failed ? "FAIL" : "PASS");
  return failed;
}
