/* SPDX-License-Identifier: MIT */
/* The GPU runtime seam. Implementations: none (host only), hip, cuda, and
 * the fake in tests/fakes. Every entry returns a hipObjOpError_t and, where
 * the runtime reported an error, writes the runtime's own code to *native
 * (native may be NULL). Entries a runtime lacks return hipObjNotSupported. */
#ifndef HO_PLATFORM_GPU_H
#define HO_PLATFORM_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "hipobj.h"

enum ho_mem_kind {
  HO_MEM_HOST = 0,        /* not known to the runtime: pageable host */
  HO_MEM_HOST_PINNED = 1, /* runtime-allocated or registered host memory */
  HO_MEM_DEVICE = 2,      /* device memory */
  HO_MEM_MANAGED = 3      /* managed / unified memory: not supported */
};

struct ho_gpu_event; /* opaque, owned by the runtime implementation */

struct ho_gpu_ops {
  const char *name;
  hipObjOpError_t (*device_count)(int *count, int *native);
  hipObjOpError_t (*current_device)(int *dev, int *native);
  /* "0000:c1:00.0" style, lower case, NUL-terminated. */
  hipObjOpError_t (*pci_bus_id)(int dev, char *buf, size_t len, int *native);
  hipObjOpError_t (*classify)(const void *ptr, enum ho_mem_kind *kind,
                              int *dev, int *native);
  /* The allocation that contains ptr (device memory). */
  hipObjOpError_t (*alloc_range)(const void *ptr, uintptr_t *base,
                                 size_t *size, int *native);
  hipObjOpError_t (*host_alloc)(size_t size, void **ptr, int *native);
  void (*host_free)(void *ptr);
  /* Copy n bytes on the calling thread's stream (direction inferred from
   * the pointers) and record an event after it, returned in *ev. */
  hipObjOpError_t (*copy_async)(void *dst, const void *src, size_t n,
                                struct ho_gpu_event **ev, int *native);
  /* hipObjSuccess: done; hipObjBusy: still running; else the copy failed. */
  hipObjOpError_t (*event_query)(struct ho_gpu_event *ev, int *native);
  void (*event_destroy)(struct ho_gpu_event *ev);
  /* dma-buf fd covering [ptr, ptr+size); *offset is ptr's offset in it. The
   * caller closes the fd. */
  hipObjOpError_t (*export_dmabuf)(const void *ptr, size_t size, int *fd,
                                   uint64_t *offset, int *native);
  /* Make RDMA writes into device memory visible to the GPU (HIP: device
   * synchronize; CUDA: flush GPUDirect RDMA writes). */
  hipObjOpError_t (*flush_rdma_writes)(int *native);
};

/* Host-only: no devices; every pointer is host memory. */
extern const struct ho_gpu_ops ho_gpu_none_ops;

#endif
