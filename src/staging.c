/* SPDX-License-Identifier: MIT */
#include "staging.h"

#include "common/clock.h"
#include "common/log.h"

/* Poll the copy's event until it is over or the deadline passes. Short
 * copies are seen within microseconds: the backoff spins before it sleeps. */
static hipObjOpError_t wait_event(const struct ho_gpu_ops *gpu,
                                  struct ho_gpu_event *ev, uint64_t deadline,
                                  int *native)
{
  unsigned round = 0;
  for (;;) {
    hipObjOpError_t e = gpu->event_query(ev, native);
    if (e != hipObjBusy)
      return e;
    if (ho_now_ns() >= deadline)
      return hipObjBusy;
    ho_backoff(&round, 1000);
  }
}

hipObjOpError_t ho_stage_copy(const struct ho_gpu_ops *gpu,
                              struct ho_abandoned *ab, struct ho_buf *b,
                              uint64_t offset, uint64_t size, int direction,
                              unsigned timeout_ms, int *native)
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
  uint64_t deadline = ho_now_ns() + (uint64_t)timeout_ms * 1000000u;
  e = direction == HIPOBJ_SYNC_TO_HOST
          ? gpu->copy_async(host, dev, size, &ev, native)
          : gpu->copy_async(dev, host, size, &ev, native);
  if (e != hipObjSuccess) {
    ho_abandoned_unreserve(ab, slot);
    return hipObjInternalError;
  }
  e = wait_event(gpu, ev, deadline, native);
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
