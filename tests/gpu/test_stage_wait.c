/* SPDX-License-Identifier: MIT */
/* How the staging copy's wait polls (src/staging.c), on the fake GPU runtime:
 * no GPU needed, so it runs in CI. On the H200 (docs/performance.md) copies
 * of 50 us to 1 ms lost up to half their speed because the wait began to
 * sleep after 128 polls (about 30 us) and every sleep costs the timer slack
 * (56 us there). Now it polls for the first millisecond.
 *
 * Nothing here reads the wall clock, so a loaded machine cannot fail it: the
 * wait runs on a virtual clock (ho_stage_copy_clocked) where a poll costs
 * 250 ns and a sleep what ho_backoff would sleep plus 56 us of slack, and
 * the checks count polls and sleeps:
 *
 *   seen_within_a_poll  a copy whose event needs 400 queries is seen at its
 *                       401st query without a single sleep (the old wait
 *                       slept from its 129th)
 *   sleeps_later        a copy that never ends is given up at its deadline,
 *                       not before and at most one sleep after; the first
 *                       sleep comes after the millisecond of polling, no
 *                       sleep is longer than 1/16 of the time waited or
 *                       1 ms, and far fewer queries are made than a busy
 *                       poll would make
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

/* ---- the virtual clock --------------------------------------------------- */

#define POLL_NS 250u     /* a spinning or yielding poll */
#define SLACK_NS 56000u  /* the timer slack every sleep costs (H200) */
#define WINDOW_NS 1000000u /* the wait polls this long before it sleeps */

struct vclock {
  uint64_t ns, start;
  uint64_t pauses, sleeps;
  uint64_t first_sleep_at; /* ns waited before the first sleep */
  bool over_budget;        /* a sleep over 1/16 of the wait, or over 1 ms */
};

static uint64_t v_now(void *ctx) { return ((struct vclock *)ctx)->ns; }

static void v_pause(void *ctx, unsigned *round, unsigned max_us)
{
  struct vclock *c = ctx;
  unsigned us = ho_backoff_sleep_us((*round)++, max_us);
  c->pauses++;
  if (us == 0) {
    c->ns += POLL_NS;
    return;
  }
  uint64_t waited_us = (c->ns - c->start) / 1000u;
  if (c->sleeps++ == 0)
    c->first_sleep_at = c->ns - c->start;
  if (us > 1000u || (us > 1u && us > waited_us / 16u))
    c->over_budget = true;
  c->ns += (uint64_t)us * 1000u + SLACK_NS;
}

static hipObjOpError_t copy_on(struct vclock *c, int direction,
                               unsigned timeout_ms)
{
  memset(c, 0, sizeof *c);
  c->ns = c->start = 1000000000u;
  const struct ho_stage_clock clk = {v_now, v_pause, c};
  return ho_stage_copy_clocked(&fake_gpu_ops, ab, &buf, 0, 4096, direction,
                               timeout_ms, NULL, &clk);
}

/* ---- the checks -------------------------------------------------------- */

static void seen_within_a_poll(void)
{
  struct vclock c;
  fake_gpu_set_copy_polls(400);
  uint64_t q0 = queries();
  EXPECT(copy_on(&c, HIPOBJ_SYNC_TO_DEVICE, 10000) == hipObjSuccess);
  uint64_t n = queries() - q0;
  printf("  a copy seen at query %llu, after %llu pauses and %llu sleeps\n",
         (unsigned long long)n, (unsigned long long)c.pauses,
         (unsigned long long)c.sleeps);
  EXPECT(n == 401);
  EXPECT(c.pauses == 400);
  EXPECT(c.sleeps == 0); /* the old wait: 272 sleeps of up to 1 ms */
}

static void sleeps_later(void)
{
  struct vclock c;
  fake_gpu_set_copy_polls(0);
  fake_gpu_stall_copies(true);
  uint64_t q0 = queries();
  hipObjOpError_t e = copy_on(&c, HIPOBJ_SYNC_TO_HOST, 200);
  uint64_t n = queries() - q0, dt = c.ns - c.start;
  printf("  a copy that never ends: %d after %.3f ms (virtual), %llu "
         "queries, %llu sleeps, the first after %.3f ms\n",
         (int)e, dt / 1e6, (unsigned long long)n,
         (unsigned long long)c.sleeps, c.first_sleep_at / 1e6);
  EXPECT(e == hipObjRdmaError); /* abandoned at its deadline */
  EXPECT(dt >= 200000000u);
  EXPECT(dt <= 200000000u + 1000000u + SLACK_NS); /* one sleep at most */
  EXPECT(c.sleeps > 0);
  EXPECT(c.first_sleep_at >= WINDOW_NS);
  EXPECT(!c.over_budget);
  EXPECT(n == c.pauses + 1);
  /* Polling all along would make 800000 queries (one every 250 ns). */
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
