/* SPDX-License-Identifier: MIT */
#include "staging.h"

#include "common/clock.h"
#include "common/log.h"

/* How long a wait polls (spinning, then yielding) before it sleeps. Any
 * sleep costs the timer slack, 50 us by default on Linux (nanosleep(1 us)
 * took 56 us on the H200 machine, docs/performance.md), so sleeping after
 * ho_backoff's 128 polls (about 30 us there) cost copies of 50 us to 1 ms up
 * to half their speed. */
#define STAGE_POLL_NS 1000000u

/* Poll the copy's event until it is over or the deadline passes. Copies of
 * up to a millisecond are seen within a poll. After that the backoff sleeps,
 * for at most a sixteenth of the time waited so far (and at most 1 ms), so a
 * copy is seen within about 6% of its duration plus one timer slack. */
static hipObjOpError_t wait_event(const struct ho_gpu_ops *gpu,
                                  struct ho_gpu_event *ev, uint64_t deadline,
                                  int *native,
                                  const struct ho_stage_clock *clk)
{
  unsigned round = 0;
  uint64_t start = clk->now_ns(clk->ctx);
  for (;;) {
    hipObjOpError_t e = gpu->event_query(ev, native);
    if (e != hipObjBusy)
      return e;
    uint64_t now = clk->now_ns(clk->ctx);
    if (now >= deadline)
      return hipObjBusy;
    uint64_t waited_us = (now - start) / 1000u;
    if (waited_us < STAGE_POLL_NS / 1000u && round >= 128)
      round = 64; /* stay in ho_backoff's yielding polls */
    uint64_t max_us = waited_us / 16u;
    clk->pause(clk->ctx, &round,
               max_us > 1000u ? 1000u : max_us ? (unsigned)max_us : 1u);
  }
}

static uint64_t real_now_ns(void *ctx) { return ho_now_ns(); }

static void real_pause(void *ctx, unsigned *round, unsigned max_us)
{
  ho_backoff(round, max_us);
}

static const struct ho_stage_clock real_clock = {real_now_ns, real_pause,
                                                 NULL};

hipObjOpError_t ho_stage_copy(const struct ho_gpu_ops *gpu,
                              struct ho_abandoned *ab, struct ho_buf *b,
                              uint64_t offset, uint64_t size, int direction,
                              unsigned timeout_ms, int *native)
{
  return ho_stage_copy_clocked(gpu, ab, b, offset, size, direction,
                               timeout_ms, native, &real_clock);
}

hipObjOpError_t ho_stage_copy_clocked(const struct ho_gpu_ops *gpu,
                                      struct ho_abandoned *ab,
                                      struct ho_buf *b, uint64_t offset,
                                      uint64_t size, int direction,
                                      unsigned timeout_ms, int *native,
                                      const struct ho_stage_clock *clk)
{
  if (b->kind != HO_BUF_STAGED || size == 0)
    return hipObjSuccess;
  struct ho_abandoned_slot *slot = NULL;
  hipObjOpError_t e = ho_abandoned_reserve(ab, &slot);
  if (e != hipObjSuccess)
    return e;
  uint8_t *dev = (uint8_t *)b->addr + offset;
  uint8_t *host = (uint8_t *)b->staging + offset;
  struct ho_gpu_event *ev = NULL;
  uint64_t deadline = clk->now_ns(clk->ctx) + (uint64_t)timeout_ms * 1000000u;
  e = direction == HIPOBJ_SYNC_TO_HOST
          ? gpu->copy_async(host, dev, size, &ev, native)
          : gpu->copy_async(dev, host, size, &ev, native);
  if (e != hipObjSuccess) {
    ho_abandoned_unreserve(ab, slot);
    return hipObjInternalError;
  }
  e = wait_event(gpu, ev, deadline, native, clk);
  if (e == hipObjBusy) {
    ho_warn("staging copy of %llu bytes for buffer %p missed its deadline "
            "(%u ms): abandoned", (unsigned long long)size, (void *)b->addr,
            timeout_ms);
    ho_abandoned_add(ab, slot, ev, b);
    return hipObjRdmaError;
  }
  gpu->event_destroy(ev);
  ho_abandoned_unreserve(ab, slot);
  return e == hipObjSuccess ? hipObjSuccess : hipObjInternalError;
}
