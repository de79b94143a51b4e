/* SPDX-License-Identifier: MIT */
/* The HIP runtime of the GPU seam: libamdhip64 by soname, newest first
 * (libamdhip64.so.7, .6, .5), and libhsa-runtime64.so.1 for
 * hsa_amd_portable_export_dmabuf, each opened with dlopen on first use and
 * never linked, and only where the KFD driver's /dev/kfd exists.
 *
 * Supported: ROCm 5.2 to 7.x (libamdhip64.so.5 from ROCm 5.2, .so.6 from
 * ROCm 6, .so.7 from ROCm 7). Every entry point used has kept its ABI across
 * those releases (hip_abi.h says which were avoided and why); the one value
 * that changed, the hipMemoryType numbering, is chosen by
 * hipRuntimeGetVersion(). dma-buf export needs an HSA runtime that has
 * hsa_amd_portable_export_dmabuf (ROCm 5.6 and later) and a kernel driver
 * that supports it; without them export_dmabuf returns hipObjNotSupported.
 *
 * Devices: HIP's current device is per thread. A copy is enqueued on the
 * device that owns the device-side pointer, switching the calling thread's
 * current device for the call only. */
#include "platform/gpu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "platform/hip_abi.h"
#include "platform/sonames.h"

#define HIP_MAX_DEVICES 64

struct hip_api {
#define HO_HIP_FIELD(name, lib, need, ret, params) ho_hip_fn_##name name;
  HO_HIP_SYMBOLS(HO_HIP_FIELD)
#undef HO_HIP_FIELD
};

struct hip_symbol {
  const char *name;
  int lib;
  bool required;
  size_t offset;
};

static const struct hip_symbol hip_symbols[] = {
#define HO_HIP_ENTRY(name, lib, need, ret, params)                             \
  {#name, lib, need, offsetof(struct hip_api, name)},
    HO_HIP_SYMBOLS(HO_HIP_ENTRY)
#undef HO_HIP_ENTRY
};

static const char *const hip_sonames[] = HO_HIP_SONAMES;

/* Written once, inside pthread_once, and read-only afterwards. */
static struct hip_api hip;
static int rocm_major; /* selects the hipMemoryType numbering */
static hipObjOpError_t hip_loaded = hipObjNotSupported;
static pthread_once_t hip_once = PTHREAD_ONCE_INIT;

static atomic_uint_least64_t seen_devices; /* bit d: classify saw device d */

/* ---- errors ------------------------------------------------------------- */

static hipObjOpError_t hip_error(ho_hip_error rc, int *native)
{
  if (rc == HO_HIP_SUCCESS)
    return hipObjSuccess;
  if (native)
    *native = (int)rc;
  switch (rc) {
  case HO_HIP_ERROR_NOT_READY:
    return hipObjBusy;
  case HO_HIP_ERROR_INVALID_VALUE:
  case HO_HIP_ERROR_INVALID_DEVICE:
    return hipObjInvalidValue;
  case HO_HIP_ERROR_NOT_SUPPORTED:
  case HO_HIP_ERROR_NO_DEVICE:
    return hipObjNotSupported;
  default:
    return hipObjInternalError;
  }
}

static void *mut(const void *p) { return (void *)(uintptr_t)p; }

/* ---- devices ------------------------------------------------------------ */

static hipObjOpError_t hip_device_count(int *count, int *native)
{
  int n = 0;
  ho_hip_error rc = hip.hipGetDeviceCount(&n);
  if (rc == HO_HIP_ERROR_NO_DEVICE)
    n = 0, rc = HO_HIP_SUCCESS;
  if (rc == HO_HIP_SUCCESS)
    *count = n;
  return hip_error(rc, native);
}

static hipObjOpError_t hip_current_device(int *dev, int *native)
{
  int d = 0;
  ho_hip_error rc = hip.hipGetDevice(&d);
  if (rc == HO_HIP_SUCCESS)
    *dev = d;
  return hip_error(rc, native);
}

static hipObjOpError_t hip_pci_bus_id(int dev, char *buf, size_t len,
                                      int *native)
{
  char raw[64] = "";
  ho_hip_error rc = hip.hipDeviceGetPCIBusId(raw, (int)sizeof raw, dev);
  if (rc != HO_HIP_SUCCESS)
    return hip_error(rc, native);
  return ho_gpu_format_bus_id(raw, buf, len);
}

/* Runs with dev current on the calling thread, then restores the thread's
 * device. */
struct dev_switch {
  int saved;
  bool switched;
};

static ho_hip_error switch_to(int dev, struct dev_switch *s)
{
  s->switched = false;
  ho_hip_error rc = hip.hipGetDevice(&s->saved);
  if (rc != HO_HIP_SUCCESS || dev < 0 || dev == s->saved)
    return rc;
  rc = hip.hipSetDevice(dev);
  s->switched = rc == HO_HIP_SUCCESS;
  return rc;
}

static void switch_back(const struct dev_switch *s)
{
  if (s->switched)
    hip.hipSetDevice(s->saved);
}

/* ---- pointers ----------------------------------------------------------- */

static hipObjOpError_t kind_of(unsigned int type, bool managed,
                               enum ho_mem_kind *kind)
{
  if (managed) {
    *kind = HO_MEM_MANAGED;
    return hipObjSuccess;
  }
  if (rocm_major >= 6) {
    switch (type) {
    case HO_HIP6_MEMORY_TYPE_UNREGISTERED: *kind = HO_MEM_HOST; break;
    case HO_HIP6_MEMORY_TYPE_HOST: *kind = HO_MEM_HOST_PINNED; break;
    case HO_HIP6_MEMORY_TYPE_DEVICE: *kind = HO_MEM_DEVICE; break;
    case HO_HIP6_MEMORY_TYPE_MANAGED:
    case HO_HIP6_MEMORY_TYPE_UNIFIED: *kind = HO_MEM_MANAGED; break;
    default: return hipObjNotSupported; /* arrays */
    }
    return hipObjSuccess;
  }
  switch (type) {
  case HO_HIP5_MEMORY_TYPE_HOST: *kind = HO_MEM_HOST_PINNED; break;
  case HO_HIP5_MEMORY_TYPE_DEVICE: *kind = HO_MEM_DEVICE; break;
  case HO_HIP5_MEMORY_TYPE_UNIFIED: *kind = HO_MEM_MANAGED; break;
  default: return hipObjNotSupported; /* arrays */
  }
  return hipObjSuccess;
}

static hipObjOpError_t hip_classify(const void *ptr, enum ho_mem_kind *kind,
                                    int *dev, int *native)
{
  unsigned int type = 0;
  uint64_t managed = 0; /* a bool in ROCm: zeroed, any byte set */
  int ordinal = -1;
  ho_hip_error rc =
      hip.hipPointerGetAttribute(&type, HO_HIP_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                 mut(ptr));
  if (rc == HO_HIP_ERROR_INVALID_VALUE) { /* not HIP's: pageable host memory */
    *kind = HO_MEM_HOST;
    *dev = -1;
    return hipObjSuccess;
  }
  if (rc != HO_HIP_SUCCESS)
    return hip_error(rc, native);
  if (hip.hipPointerGetAttribute(&managed, HO_HIP_POINTER_ATTRIBUTE_IS_MANAGED,
                                 mut(ptr)) != HO_HIP_SUCCESS)
    managed = 0;
  if (hip.hipPointerGetAttribute(&ordinal,
                                 HO_HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 mut(ptr)) != HO_HIP_SUCCESS)
    ordinal = -1;
  enum ho_mem_kind k = HO_MEM_HOST;
  hipObjOpError_t e = kind_of(type, managed != 0, &k);
  if (e != hipObjSuccess)
    return e;
  if (k == HO_MEM_HOST)
    ordinal = -1;
  if (k == HO_MEM_DEVICE && ordinal >= 0 && ordinal < HIP_MAX_DEVICES)
    atomic_fetch_or(&seen_devices, (uint64_t)1 << ordinal);
  *kind = k;
  *dev = ordinal;
  return hipObjSuccess;
}

static hipObjOpError_t hip_alloc_range(const void *ptr, uintptr_t *base,
                                       size_t *size, int *native)
{
  void *start = NULL;
  size_t len = 0;
  ho_hip_error rc = hip.hipMemGetAddressRange(&start, &len, mut(ptr));
  if (rc == HO_HIP_SUCCESS && len == 0)
    rc = HO_HIP_ERROR_INVALID_VALUE;
  if (rc != HO_HIP_SUCCESS)
    return hip_error(rc, native);
  *base = (uintptr_t)start;
  *size = len;
  return hipObjSuccess;
}

/* The device that owns p if it is device memory, else -1. */
static int device_of(const void *p)
{
  unsigned int type = 0;
  int ordinal = -1;
  unsigned int device_type =
      rocm_major >= 6 ? HO_HIP6_MEMORY_TYPE_DEVICE : HO_HIP5_MEMORY_TYPE_DEVICE;
  if (!p ||
      hip.hipPointerGetAttribute(&type, HO_HIP_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                 mut(p)) != HO_HIP_SUCCESS ||
      type != device_type ||
      hip.hipPointerGetAttribute(&ordinal,
                                 HO_HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 mut(p)) != HO_HIP_SUCCESS)
    return -1;
  return ordinal;
}

/* ---- pinned host memory ------------------------------------------------- */

static hipObjOpError_t hip_host_alloc(size_t size, void **ptr, int *native)
{
  void *p = NULL;
  if (size == 0)
    return hipObjInvalidValue;
  ho_hip_error rc =
      hip.hipHostMalloc
          ? hip.hipHostMalloc(&p, size, HO_HIP_HOST_MALLOC_PORTABLE)
          : hip.hipHostAlloc(&p, size, HO_HIP_HOST_MALLOC_PORTABLE);
  if (rc != HO_HIP_SUCCESS)
    return hip_error(rc, native);
  *ptr = p;
  return hipObjSuccess;
}

static void hip_host_free(void *ptr)
{
  if (!ptr)
    return;
  ho_hip_error rc = hip.hipHostFree(ptr);
  if (rc != HO_HIP_SUCCESS)
    ho_warn("hipHostFree(%p) failed: HIP error %u", ptr, rc);
}

/* ---- copies and events -------------------------------------------------- */

static ho_hip_error enqueue_copy(void *dst, const void *src, size_t n,
                                 ho_hip_event *out)
{
  ho_hip_event e = NULL;
  ho_hip_error rc = hip.hipEventCreateWithFlags(&e, HO_HIP_EVENT_DISABLE_TIMING);
  if (rc != HO_HIP_SUCCESS)
    return rc;
  rc = hip.hipMemcpyAsync(dst, src, n, HO_HIP_MEMCPY_DEFAULT,
                          HO_HIP_STREAM_PER_THREAD);
  if (rc == HO_HIP_SUCCESS) {
    rc = hip.hipEventRecord(e, HO_HIP_STREAM_PER_THREAD);
    if (rc != HO_HIP_SUCCESS) /* untracked, so not left running */
      hip.hipStreamSynchronize(HO_HIP_STREAM_PER_THREAD);
  }
  if (rc != HO_HIP_SUCCESS) {
    hip.hipEventDestroy(e);
    return rc;
  }
  *out = e;
  return HO_HIP_SUCCESS;
}

static hipObjOpError_t hip_copy_async(void *dst, const void *src, size_t n,
                                      struct ho_gpu_event **ev, int *native)
{
  struct dev_switch sw;
  ho_hip_event e = NULL;
  int dev = device_of(dst);
  if (dev < 0)
    dev = device_of(src);
  ho_hip_error rc = switch_to(dev, &sw);
  if (rc == HO_HIP_SUCCESS)
    rc = enqueue_copy(dst, src, n, &e);
  switch_back(&sw);
  if (rc != HO_HIP_SUCCESS)
    return hip_error(rc, native);
  *ev = (struct ho_gpu_event *)e;
  return hipObjSuccess;
}

static hipObjOpError_t hip_event_query(struct ho_gpu_event *ev, int *native)
{
  return hip_error(hip.hipEventQuery((ho_hip_event)ev), native);
}

static void hip_event_destroy(struct ho_gpu_event *ev)
{
  if (ev && hip.hipEventDestroy((ho_hip_event)ev) != HO_HIP_SUCCESS)
    ho_debug("hipEventDestroy failed");
}

/* ---- GPU-direct ---------------------------------------------------------- */

static hipObjOpError_t hip_export_dmabuf(const void *ptr, size_t size, int *fd,
                                         uint64_t *offset, int *native)
{
  int handle = -1;
  uint64_t off = 0;
  if (!hip.hsa_amd_portable_export_dmabuf)
    return hipObjNotSupported;
  if (size == 0)
    return hipObjInvalidValue;
  ho_hsa_status st = hip.hsa_amd_portable_export_dmabuf(ptr, size, &handle,
                                                        &off);
  if (st != HO_HSA_STATUS_SUCCESS) {
    if (native)
      *native = (int)st;
    return hipObjNotSupported;
  }
  *fd = handle;
  *offset = off;
  return hipObjSuccess;
}

static ho_hip_error sync_device(int dev)
{
  struct dev_switch sw;
  ho_hip_error rc = switch_to(dev, &sw);
  if (rc == HO_HIP_SUCCESS)
    rc = hip.hipDeviceSynchronize();
  switch_back(&sw);
  return rc;
}

static hipObjOpError_t hip_flush_rdma_writes(int *native)
{
  uint64_t seen = atomic_load(&seen_devices);
  if (!seen)
    return hip_error(hip.hipDeviceSynchronize(), native);
  ho_hip_error rc = HO_HIP_SUCCESS;
  for (int d = 0; rc == HO_HIP_SUCCESS && seen; d++, seen >>= 1)
    if (seen & 1)
      rc = sync_device(d);
  return hip_error(rc, native);
}

static const struct ho_gpu_ops hip_ops = {
    "hip",
    hip_device_count,
    hip_current_device,
    hip_pci_bus_id,
    hip_classify,
    hip_alloc_range,
    hip_host_alloc,
    hip_host_free,
    hip_copy_async,
    hip_event_query,
    hip_event_destroy,
    hip_export_dmabuf,
    hip_flush_rdma_writes,
};

/* ---- loading ------------------------------------------------------------ */

/* Fills hip from the two libraries (hsa may be NULL); false, after one
 * warning, if a required entry is missing. */
static bool resolve_all(void *libs[2], const char *soname)
{
  const char *missing = NULL;
  size_t n_missing = 0;
  for (size_t i = 0; i < sizeof hip_symbols / sizeof hip_symbols[0]; i++) {
    const struct hip_symbol *s = &hip_symbols[i];
    void *fn = libs[s->lib] ? dlsym(libs[s->lib], s->name) : NULL;
    memcpy((char *)&hip + s->offset, &fn, sizeof fn);
    if (!fn && s->required && n_missing++ == 0)
      missing = s->name;
  }
  if (!hip.hipHostMalloc && !hip.hipHostAlloc && n_missing++ == 0)
    missing = "hipHostMalloc";
  if (n_missing)
    ho_warn("%s is installed but lacks %s%s: HIP is not used", soname,
            missing, n_missing > 1 ? " and other entry points" : "");
  return n_missing == 0;
}

static void *open_hip(const char **soname)
{
  for (size_t i = 0; i < sizeof hip_sonames / sizeof hip_sonames[0]; i++) {
    void *lib = dlopen(hip_sonames[i], RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      *soname = hip_sonames[i];
      return lib;
    }
  }
  ho_debug("HIP not used: no libamdhip64.so.{7,6,5}");
  return NULL;
}

static void hip_load_once(void)
{
  const char *soname = NULL;
  /* Every ROCm GPU is reached through the KFD driver. Without it there is
   * nothing to find, and loading libamdhip64 (large, with threads and
   * allocations of its own) would be cost for nothing. */
  if (access("/dev/kfd", F_OK) != 0) {
    ho_debug("HIP not used: no /dev/kfd");
    return;
  }
  void *libs[2] = {open_hip(&soname), NULL};
  if (!libs[HO_HIP_LIB])
    return;
  /* Loaded by libamdhip64 already; only the dma-buf export comes from it. */
  libs[HO_HSA_LIB] = dlopen(HO_HSA_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!resolve_all(libs, soname)) {
    memset(&hip, 0, sizeof hip);
    return; /* left loaded: its constructors have run */
  }
  ho_hip_error rc = hip.hipInit(0);
  if (rc != HO_HIP_SUCCESS) {
    ho_debug("HIP not used: hipInit failed with HIP error %u", rc);
    return;
  }
  int version = 0;
  if (hip.hipRuntimeGetVersion(&version) == HO_HIP_SUCCESS && version > 0)
    rocm_major = HO_HIP_VERSION_MAJOR(version);
  else /* the soname's number is the major release */
    rocm_major = soname[strlen(soname) - 1] - '0';
  hip_loaded = hipObjSuccess;
}

hipObjOpError_t ho_gpu_hip_load(const struct ho_gpu_ops **out)
{
  pthread_once(&hip_once, hip_load_once);
  if (hip_loaded != hipObjSuccess)
    return hip_loaded;
  *out = &hip_ops;
  return hipObjSuccess;
}
