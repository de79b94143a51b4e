/* SPDX-License-Identifier: MIT */
/* The host-only GPU runtime, for GPU-less hosts and host buffers: no devices,
 * every pointer is pageable host memory, staging copies are plain memcpy.
 * Also the seam's null table, whose entries all say "not supported" (most
 * are the host-only runtime's own), and the seam's one shared helper,
 * ho_gpu_format_bus_id(), since this file is always built. */
#include "platform/gpu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/hex.h"

/* The one event every copy returns: copies are finished when they return. */
struct ho_gpu_event {
  int unused;
};
static struct ho_gpu_event done_event;

static hipObjOpError_t none_device_count(int *count, int *native)
{
  *count = 0;
  return hipObjSuccess;
}

static hipObjOpError_t none_current_device(int *dev, int *native)
{
  return hipObjNotSupported;
}

static hipObjOpError_t none_pci_bus_id(int dev, char *buf, size_t len,
                                       int *native)
{
  return hipObjNotSupported;
}

static hipObjOpError_t none_classify(const void *ptr, enum ho_mem_kind *kind,
                                     int *dev, int *native)
{
  *kind = HO_MEM_HOST;
  *dev = -1;
  return hipObjSuccess;
}

static hipObjOpError_t none_alloc_range(const void *ptr, uintptr_t *base,
                                        size_t *size, int *native)
{
  return hipObjNotSupported;
}

static hipObjOpError_t none_host_alloc(size_t size, void **ptr, int *native)
{
  long page = sysconf(_SC_PAGESIZE);
  void *p = NULL;
  if (size == 0)
    return hipObjInvalidValue;
  int rc = posix_memalign(&p, page > 0 ? (size_t)page : 4096, size);
  if (rc != 0) {
    if (native)
      *native = rc;
    return rc == ENOMEM ? hipObjInternalError : hipObjInvalidValue;
  }
  *ptr = p;
  return hipObjSuccess;
}

static void none_host_free(void *ptr) { free(ptr); }

static hipObjOpError_t none_copy_async(void *dst, const void *src, size_t n,
                                       struct ho_gpu_event **ev, int *native)
{
  if (n > 0)
    memmove(dst, src, n);
  *ev = &done_event;
  return hipObjSuccess;
}

static hipObjOpError_t none_event_query(struct ho_gpu_event *ev, int *native)
{
  return ev == &done_event ? hipObjSuccess : hipObjInvalidValue;
}

static void none_event_destroy(struct ho_gpu_event *ev) {}

static hipObjOpError_t none_export_dmabuf(const void *ptr, size_t size,
                                          int *fd, uint64_t *offset,
                                          int *native)
{
  return hipObjNotSupported;
}

static hipObjOpError_t none_flush_rdma_writes(int *native)
{
  return hipObjNotSupported;
}

const struct ho_gpu_ops ho_gpu_none_ops = {
    "none",
    none_device_count,
    none_current_device,
    none_pci_bus_id,
    none_classify,
    none_alloc_range,
    none_host_alloc,
    none_host_free,
    none_copy_async,
    none_event_query,
    none_event_destroy,
    none_export_dmabuf,
    none_flush_rdma_writes,
};

/* ---- the null table: "not supported" everywhere ----------------------- */

static hipObjOpError_t null_device_count(int *count, int *native)
{
  return hipObjNotSupported;
}

static hipObjOpError_t null_classify(const void *ptr, enum ho_mem_kind *kind,
                                     int *dev, int *native)
{
  return hipObjNotSupported;
}

static hipObjOpError_t null_host_alloc(size_t size, void **ptr, int *native)
{
  return hipObjNotSupported;
}

static void null_host_free(void *ptr) {}

static hipObjOpError_t null_copy_async(void *dst, const void *src, size_t n,
                                       struct ho_gpu_event **ev, int *native)
{
  return hipObjNotSupported;
}

static hipObjOpError_t null_event_query(struct ho_gpu_event *ev, int *native)
{
  return hipObjNotSupported;
}

const struct ho_gpu_ops ho_gpu_null_ops = {
    "null",
    null_device_count,
    none_current_device,
    none_pci_bus_id,
    null_classify,
    none_alloc_range,
    null_host_alloc,
    null_host_free,
    null_copy_async,
    null_event_query,
    none_event_destroy,
    none_export_dmabuf,
    none_flush_rdma_writes,
};

/* Parses 1 to max_digits hex digits followed by `end` ('\0': the end of the
 * string). Returns a pointer to that terminator, or NULL. */
static const char *parse_hex_field(const char *s, int max_digits, char end,
                                   unsigned long *out)
{
  unsigned long v = 0;
  int n = 0;
  for (int d; (d = ho_hex_digit(s[n])) >= 0; n++) {
    if (n == max_digits)
      return NULL;
    v = v * 16 + (unsigned long)d;
  }
  if (n == 0 || s[n] != end)
    return NULL;
  *out = v;
  return s + n;
}

hipObjOpError_t ho_gpu_format_bus_id(const char *raw, char *buf, size_t len)
{
  unsigned long f[4] = {0, 0, 0, 0}; /* domain, bus, device, function */
  const char *p = raw;
  if (!raw || !buf)
    return hipObjInvalidValue;
  /* With a domain there are two colons before the dot. */
  const char *colon = strchr(raw, ':');
  if (colon && strchr(colon + 1, ':')) {
    if (!(p = parse_hex_field(p, 8, ':', &f[0])))
      return hipObjInvalidValue;
    p++;
  }
  if (!(p = parse_hex_field(p, 2, ':', &f[1])) ||
      !(p = parse_hex_field(p + 1, 2, '.', &f[2])) ||
      !parse_hex_field(p + 1, 1, '\0', &f[3]) || f[2] > 0x1f || f[3] > 7)
    return hipObjInvalidValue;
  int n = snprintf(buf, len, "%04lx:%02lx:%02lx.%lx", f[0], f[1], f[2], f[3]);
  return n > 0 && (size_t)n < len ? hipObjSuccess : hipObjInvalidValue;
}
