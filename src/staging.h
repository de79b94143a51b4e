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

#endif
