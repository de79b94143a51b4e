/* SPDX-License-Identifier: MIT */
/* Host or GPU buffers for get and put, and the files at the other end. */
#ifndef HIPOBJ_TOOL_BUFFER_H
#define HIPOBJ_TOOL_BUFFER_H

#include <stdbool.h>
#include <stddef.h>

#include "gpu.h"

struct tool_buf {
  void *p;
  size_t size;
  struct tool_gpu *gpu; /* NULL: host memory */
  size_t mapped;        /* host: the mapping's length */
};

/* size bytes of host memory (gpu NULL) or of the GPU's memory. */
bool tool_buf_alloc(struct tool_buf *b, struct tool_gpu *gpu, size_t size);
void tool_buf_free(struct tool_buf *b);
/* Writes the first n bytes to path ("-": stdout). */
bool tool_buf_save(const struct tool_buf *b, size_t n, const char *path,
                   char *why, size_t why_len);
/* Reads path ("-": stdin) into a new buffer of its size. */
bool tool_buf_load(struct tool_buf *b, struct tool_gpu *gpu, const char *path,
                   char *why, size_t why_len);

#endif
