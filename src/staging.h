/* SPDX-License-Identifier: MIT */
/* Staging copies between a device buffer and its pinned host staging
 * buffer, with a deadline. A copy that misses its deadline is handed to the
 * abandoned-copies list and reported as hipObjRdmaError. */
#ifndef HO_STAGING_H
#define HO_STAGING_H

#include "abandoned.h"
#include "buffer.h"

/* direction: HIPOBJ_SYNC_TO_HOST or HIPOBJ_SYNC_TO_DEVICE. The range must
 * have been checked. A buffer that is not staged needs no copy. */
hipObjOpError_t ho_stage_copy(const struct ho_gpu_ops *gpu,
                              struct ho_abandoned *ab, struct ho_buf *b,
                              uint64_t offset, uint64_t size, int direction,
                              unsigned timeout_ms, int *native);

/* The wait's clock: the time, and the pause between two polls that found
 * the copy running (ho_backoff, whose round it advances). ho_stage_copy
 * uses the real ones; tests/gpu/test_stage_wait.c counts polls and sleeps
 * on a virtual clock, so it checks the policy without timing anything. */
struct ho_stage_clock {
  uint64_t (*now_ns)(void *ctx);
  void (*pause)(void *ctx, unsigned *round, unsigned max_us);
  void *ctx;
};

/* ho_stage_copy on the given clock. */
hipObjOpError_t ho_stage_copy_clocked(const struct ho_gpu_ops *gpu,
                                      struct ho_abandoned *ab,
                                      struct ho_buf *b, uint64_t offset,
                                      uint64_t size, int direction,
                                      unsigned timeout_ms, int *native,
                                      const struct ho_stage_clock *clk);

#endif
