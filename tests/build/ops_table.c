/* SPDX-License-Identifier: MIT */
/* Built by the ops_table_* tests only, with -Wextra -Werror: a GPU ops table
 * initialised by position compiles when every entry is there, and fails when
 * one is missing (-DMISSING_ENTRY). That warning is why every ops table is
 * initialised by position (src/platform/null_ops.c). */
#include "platform/gpu.h"

static hipObjOpError_t flush(int *native)
{
  (void)native;
  return hipObjNotSupported;
}

const struct ho_gpu_ops table_under_test = {
    "test",
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
#ifndef MISSING_ENTRY
    flush,
#endif
};
