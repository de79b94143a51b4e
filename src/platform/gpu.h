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

/* Outputs are written only on success. Every entry may be called from any
 * thread; where a runtime binds state to the calling thread (CUDA's current
 * context, HIP's current device) the implementation makes the calling thread
 * usable itself (for CUDA: the primary context of the device concerned). */
struct ho_gpu_ops {
  const char *name; /* "none", "cuda", "hip", "fake" */
  /* Devices visible to the process; 0 is a valid answer. */
  hipObjOpError_t (*device_count)(int *count, int *native);
  /* The calling thread's current device (CUDA: of its current context, or
   * device 0, whose primary context is then made current). */
  hipObjOpError_t (*current_device)(int *dev, int *native);
  /* "0000:c1:00.0" style, lower case, NUL-terminated. */
  hipObjOpError_t (*pci_bus_id)(int dev, char *buf, size_t len, int *native);
  /* What ptr is. *dev is the owning device's ordinal, -1 for HO_MEM_HOST.
   * A pointer the runtime does not know is HO_MEM_HOST, not an error. */
  hipObjOpError_t (*classify)(const void *ptr, enum ho_mem_kind *kind,
                              int *dev, int *native);
  /* The allocation that contains ptr (device memory). */
  hipObjOpError_t (*alloc_range)(const void *ptr, uintptr_t *base,
                                 size_t *size, int *native);
  /* Pinned (page-locked) host memory, page aligned, for staging; released
   * with host_free (NULL is ignored). */
  hipObjOpError_t (*host_alloc)(size_t size, void **ptr, int *native);
  void (*host_free)(void *ptr);
  /* Copy n bytes on the calling thread's stream (direction inferred from
   * the pointers) and record an event after it, returned in *ev. The copy may
   * run after this returns: both buffers must stay valid until event_query
   * reports it done. The caller owns *ev and releases it with event_destroy,
   * which does not cancel the copy. */
  hipObjOpError_t (*copy_async)(void *dst, const void *src, size_t n,
                                struct ho_gpu_event **ev, int *native);
  /* hipObjSuccess: done; hipObjBusy: still running; else the copy failed.
   * Never waits. */
  hipObjOpError_t (*event_query)(struct ho_gpu_event *ev, int *native);
  void (*event_destroy)(struct ho_gpu_event *ev); /* NULL is ignored */
  /* dma-buf fd covering [ptr, ptr+size); *offset is ptr's offset in it. The
   * caller closes the fd. Device memory only. */
  hipObjOpError_t (*export_dmabuf)(const void *ptr, size_t size, int *fd,
                                   uint64_t *offset, int *native);
  /* Make RDMA writes into device memory visible to the GPU (HIP: device
   * synchronize; CUDA: flush GPUDirect RDMA writes), for every device whose
   * memory classify has reported, or the current device if none. */
  hipObjOpError_t (*flush_rdma_writes)(int *native);
};

/* Host-only: no devices; every pointer is host memory (HO_MEM_HOST, dev -1);
 * host_alloc is page-aligned malloc memory; copy_async copies at once and
 * returns an event that is already complete; device_count reports 0; the
 * other device entries return hipObjNotSupported. */
extern const struct ho_gpu_ops ho_gpu_none_ops;

/* The null table (gpu_none.c): every entry present and hipObjNotSupported
 * (host_free and event_destroy do nothing). A partial implementation or a
 * fake starts from it. Ops tables are initialised by position, so that a
 * missing entry is a compiler warning. */
extern const struct ho_gpu_ops ho_gpu_null_ops;

/* The production runtimes. Each loads its vendor library with dlopen (by
 * soname) on the first call, never unloads it, and hands every caller the same
 * table. Thread-safe.
 *   hipObjSuccess       *out is the runtime's table (it may still report no
 *                       device: ask device_count).
 *   hipObjNotSupported  quietly, when the library is not installed (for
 *                       HIP: or there is no /dev/kfd) or its driver does
 *                       not initialise; after one ho_warn line,
 *                       when it is installed but lacks a required symbol.
 * ho_gpu_cuda_load: libcuda.so.1, the CUDA driver API (gpu_cuda.c).
 * ho_gpu_hip_load: libamdhip64.so.{7,6,5} and, for dma-buf export,
 *                  libhsa-runtime64.so.1 (gpu_hip.c). */
hipObjOpError_t ho_gpu_cuda_load(const struct ho_gpu_ops **out);
hipObjOpError_t ho_gpu_hip_load(const struct ho_gpu_ops **out);

/* Rewrites a PCI address as a runtime prints it ("0000:C1:00.0",
 * "00000000:c1:00.0", "c1:00.0") in the form the seam promises:
 * "0000:c1:00.0", lower case. hipObjInvalidValue if raw is not a PCI address
 * or buf is too small (13 bytes suffice for a 16-bit domain). Pure. */
hipObjOpError_t ho_gpu_format_bus_id(const char *raw, char *buf, size_t len);

#endif
