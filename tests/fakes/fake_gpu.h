/* SPDX-License-Identifier: MIT */
/* A fake GPU runtime: fake_gpu_ops implements the GPU seam in host memory.
 *
 * "Device memory" comes from fake_gpu_malloc() (host memory the fake tracks,
 * so classify and alloc_range know it), managed memory from
 * fake_gpu_malloc_managed(), pinned host memory from the ops' host_alloc.
 * Anything else is pageable host memory. Copies complete at once, or after a
 * number of event polls, or stall until the test releases them: a stalled
 * copy does its memcpy only when released, so a test sees the late write that
 * a real DMA engine would make. Any entry can be made to fail. Counters say
 * what the code under test did.
 *
 * The fake is process-wide and thread-safe. fake_gpu_reset() returns it to
 * its defaults: one device ("0000:c1:00.0"), current device 0, immediate
 * copies, dma-buf export supported, no failures, counters zero, and frees
 * everything it tracks (stalled copies are dropped, not performed). */
#ifndef HO_TESTS_FAKE_GPU_H
#define HO_TESTS_FAKE_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/gpu.h"

extern const struct ho_gpu_ops fake_gpu_ops;

void fake_gpu_reset(void);

/* ---- devices ------------------------------------------------------------ */
#define FAKE_GPU_MAX_DEVICES 8
void fake_gpu_set_device_count(int n); /* 0..FAKE_GPU_MAX_DEVICES */
void fake_gpu_set_current_device(int dev);
/* The bus id pci_bus_id reports for dev, verbatim (so a test can hand the
 * seam's callers any string). Default "0000:c1:00.0" for device 0 and
 * "0000:c<dev+1>:00.0" for the others. */
void fake_gpu_set_bus_id(int dev, const char *bus_id);

/* ---- memory -------------------------------------------------------------- */
/* Device memory of the current device / of dev; NULL if out of memory. The
 * memory is zero-filled, page aligned, and readable by the test. */
void *fake_gpu_malloc(size_t size);
void *fake_gpu_malloc_on(int dev, size_t size);
void *fake_gpu_malloc_managed(size_t size);
void fake_gpu_free(void *ptr); /* device or managed memory; NULL ignored */
/* Allocations the fake tracks now (device, managed and pinned host). */
size_t fake_gpu_live_allocations(void);

/* ---- copies -------------------------------------------------------------- */
/* While on, copy_async queues the copy instead of doing it; its event stays
 * busy until fake_gpu_release_stalled(). */
void fake_gpu_stall_copies(bool on);
/* Performs every stalled copy now (its memcpy reads the source as it is now)
 * and completes their events. Returns how many were released. */
size_t fake_gpu_release_stalled(void);
size_t fake_gpu_stalled_copies(void);
/* Events of later, unstalled copies report busy for this many queries before
 * they report done (the copy itself is done at once). Default 0. */
void fake_gpu_set_copy_polls(unsigned polls);

/* ---- dma-buf ------------------------------------------------------------- */
/* When off, export_dmabuf fails with hipObjNotSupported (native 801). When
 * on (the default) it returns a new eventfd for device memory, and *offset is
 * ptr's offset from the start of its allocation. */
void fake_gpu_set_dmabuf_supported(bool on);

/* ---- failures ------------------------------------------------------------ */
enum fake_gpu_entry {
  FAKE_GPU_DEVICE_COUNT,
  FAKE_GPU_CURRENT_DEVICE,
  FAKE_GPU_PCI_BUS_ID,
  FAKE_GPU_CLASSIFY,
  FAKE_GPU_ALLOC_RANGE,
  FAKE_GPU_HOST_ALLOC,
  FAKE_GPU_COPY_ASYNC,
  FAKE_GPU_EVENT_QUERY, /* the copy "failed" */
  FAKE_GPU_EXPORT_DMABUF,
  FAKE_GPU_FLUSH_RDMA_WRITES,
  FAKE_GPU_ENTRY_COUNT
};
/* The next `count` calls of entry fail with err and *native = native, after
 * `skip` calls that succeed. A later call for the same entry replaces it. */
void fake_gpu_fail(enum fake_gpu_entry entry, unsigned skip, unsigned count,
                   hipObjOpError_t err, int native);

/* ---- counters ------------------------------------------------------------ */
struct fake_gpu_counters {
  uint64_t calls[FAKE_GPU_ENTRY_COUNT]; /* every call, failed ones too */
  uint64_t copies;        /* copies performed (a stalled one when released) */
  uint64_t copy_bytes;    /* bytes those copies moved */
  uint64_t flushes;       /* successful flush_rdma_writes */
  uint64_t dmabuf_exports;
  uint64_t host_allocs;   /* successful host_alloc */
  uint64_t host_frees;
  uint64_t events_live;   /* created and not yet destroyed */
};
void fake_gpu_get_counters(struct fake_gpu_counters *out);

#endif
