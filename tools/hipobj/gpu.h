/* SPDX-License-Identifier: MIT */
/* The GPU memory the command needs for --gpu N: device buffers, pinned host
 * bounce buffers and copies between them, through the CUDA driver API
 * (libcuda.so.1) or HIP (libamdhip64), loaded with dlopen. Never linked.
 * The library has its own loaders (src/platform/); this is the
 * application's side, as any application of hipObject has one. */
#ifndef HIPOBJ_TOOL_GPU_H
#define HIPOBJ_TOOL_GPU_H

#include <stdbool.h>
#include <stddef.h>

#include "hipobj_s3.h"

struct tool_gpu;

/* Loads a runtime: "auto" (CUDA, then HIP: the first that reports a
 * device), "cuda", "hip". NULL and a reason in why when none works. */
struct tool_gpu *tool_gpu_open(const char *which, char *why, size_t why_len);
void tool_gpu_close(struct tool_gpu *g);

const char *tool_gpu_runtime(const struct tool_gpu *g); /* "CUDA", "HIP" */
int tool_gpu_count(const struct tool_gpu *g);
/* Name and PCI bus id of a device; false on failure. */
bool tool_gpu_describe(struct tool_gpu *g, int ordinal, char *name,
                       size_t name_len, char *bus, size_t bus_len);
/* Makes `ordinal` the device of the calling thread (and of later copies). */
bool tool_gpu_select(struct tool_gpu *g, int ordinal);

void *tool_gpu_alloc(struct tool_gpu *g, size_t n);
void tool_gpu_free(struct tool_gpu *g, void *p);
bool tool_gpu_to_device(struct tool_gpu *g, void *dst, const void *src,
                        size_t n);
bool tool_gpu_to_host(struct tool_gpu *g, void *dst, const void *src,
                      size_t n);

/* hipObjS3DeviceOps_t on this runtime (pinned bounce buffers, copies from
 * any thread). */
void tool_gpu_device_ops(struct tool_gpu *g, hipObjS3DeviceOps_t *ops);

/* Whether a library by this soname loads; for `hipobj info`. */
bool tool_lib_present(const char *soname);
/* Whether a loaded library exports a symbol. */
bool tool_lib_has(const char *soname, const char *symbol);

#endif
