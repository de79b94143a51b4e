/* SPDX-License-Identifier: MIT */
/* The CUDA runtime of the GPU seam: the driver API of libcuda.so.1, opened
 * with dlopen on first use and never linked. Entry points are resolved with
 * cuGetProcAddress at the ABI version cuda_abi.h names for each (CUDA 11.3
 * and later), else with dlsym of their versioned names. Works with drivers of
 * CUDA 11.3 and later; dma-buf export needs CUDA 11.7 and a driver and
 * kernel that support it, and falls back as the seam says where they don't.
 *
 * Contexts: driver calls need a current context on the calling thread. When
 * the thread has none, the primary context of the device concerned (the
 * owner of the pointer, else the first device whose memory classify has
 * seen, else device 0) is retained once and pushed, as the CUDA runtime API
 * does; memory from cudaMalloc() lives in those primary contexts. */
#include "platform/gpu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/thread_safety.h"
#include "platform/cuda_abi.h"
#include "platform/sonames.h"

#define CU_MAX_DEVICES 64

struct cu_api {
#define HO_CU_FIELD(name, since, entry, need, params) ho_cu_fn_##name name;
  HO_CUDA_SYMBOLS(HO_CU_FIELD)
#undef HO_CU_FIELD
};

struct cu_symbol {
  const char *name;
  const char *entry;
  int since;
  bool required;
  size_t offset;
};

static const struct cu_symbol cu_symbols[] = {
#define HO_CU_ENTRY(name, since, entry, need, params)                          \
  {#name, entry, since, need, offsetof(struct cu_api, name)},
    HO_CUDA_SYMBOLS(HO_CU_ENTRY)
#undef HO_CU_ENTRY
};

/* Written once, inside pthread_once, and read-only afterwards. */
static struct cu_api cu;
static hipObjOpError_t cu_loaded = hipObjNotSupported;
static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

static ho_mutex ctx_lock = HO_MUTEX_INIT;
static ho_cu_context primary[CU_MAX_DEVICES] HO_GUARDED_BY(ctx_lock);
static atomic_uint_least64_t seen_devices; /* bit d: classify saw device d */

/* ---- errors ------------------------------------------------------------- */

static hipObjOpError_t cu_error(ho_cu_result rc, int *native)
{
  if (rc == HO_CUDA_SUCCESS)
    return hipObjSuccess;
  if (native)
    *native = (int)rc;
  switch (rc) {
  case HO_CUDA_ERROR_NOT_READY:
    return hipObjBusy;
  case HO_CUDA_ERROR_INVALID_VALUE:
  case HO_CUDA_ERROR_INVALID_DEVICE:
  case HO_CUDA_ERROR_NOT_FOUND:
    return hipObjInvalidValue;
  case HO_CUDA_ERROR_NOT_SUPPORTED:
  case HO_CUDA_ERROR_NO_DEVICE:
    return hipObjNotSupported;
  default:
    return hipObjInternalError;
  }
}

static ho_cu_deviceptr cu_ptr(const void *p)
{
  return (ho_cu_deviceptr)(uintptr_t)p;
}

/* ---- contexts ----------------------------------------------------------- */

static ho_cu_result primary_ctx(int ordinal, ho_cu_context *out)
{
  ho_cu_result rc = HO_CUDA_SUCCESS;
  if (ordinal < 0 || ordinal >= CU_MAX_DEVICES)
    return HO_CUDA_ERROR_INVALID_DEVICE;
  ho_mutex_lock(&ctx_lock);
  if (!primary[ordinal]) {
    ho_cu_device dev = 0;
    rc = cu.cuDeviceGet(&dev, ordinal);
    if (rc == HO_CUDA_SUCCESS)
      rc = cu.cuDevicePrimaryCtxRetain(&primary[ordinal], dev);
  }
  *out = primary[ordinal];
  ho_mutex_unlock(&ctx_lock);
  return rc;
}

static int default_ordinal(void)
{
  uint64_t seen = atomic_load(&seen_devices);
  return seen ? __builtin_ctzll(seen) : 0;
}

/* Gives the calling thread a current context if it has none: the primary
 * context of `ordinal` (< 0: the default device). */
static ho_cu_result ensure_ctx(int ordinal)
{
  ho_cu_context cur = NULL, ctx = NULL;
  ho_cu_result rc = cu.cuCtxGetCurrent(&cur);
  if (rc != HO_CUDA_SUCCESS || cur)
    return rc;
  rc = primary_ctx(ordinal < 0 ? default_ordinal() : ordinal, &ctx);
  return rc == HO_CUDA_SUCCESS ? cu.cuCtxPushCurrent(ctx) : rc;
}

/* The ordinal of the device that owns or registered p, or -1. */
static int pointer_ordinal(const void *p)
{
  ho_cu_pointer_attribute attrs[2] = {HO_CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                      HO_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  unsigned int type = HO_CU_MEMORYTYPE_UNKNOWN;
  int ordinal = -1;
  void *data[2] = {&type, &ordinal};
  if (!p || cu.cuPointerGetAttributes(2, attrs, data, cu_ptr(p)) !=
                HO_CUDA_SUCCESS || type == HO_CU_MEMORYTYPE_UNKNOWN)
    return -1;
  return ordinal;
}

/* A context for work on a and b: the thread's own, else the primary context
 * of the device that owns a or b. */
static ho_cu_result ensure_ctx_for(const void *a, const void *b)
{
  ho_cu_context cur = NULL;
  ho_cu_result rc = cu.cuCtxGetCurrent(&cur);
  if (rc != HO_CUDA_SUCCESS || cur)
    return rc;
  int ordinal = pointer_ordinal(a);
  if (ordinal < 0)
    ordinal = pointer_ordinal(b);
  return ensure_ctx(ordinal);
}

static ho_cu_result ordinal_of(ho_cu_device dev, int *ordinal)
{
  int count = 0;
  ho_cu_result rc = cu.cuDeviceGetCount(&count);
  for (int i = 0; rc == HO_CUDA_SUCCESS && i < count; i++) {
    ho_cu_device d = 0;
    rc = cu.cuDeviceGet(&d, i);
    if (rc == HO_CUDA_SUCCESS && d == dev) {
      *ordinal = i;
      return HO_CUDA_SUCCESS;
    }
  }
  return rc == HO_CUDA_SUCCESS ? HO_CUDA_ERROR_INVALID_DEVICE : rc;
}

/* ---- devices ------------------------------------------------------------ */

static hipObjOpError_t cuda_device_count(int *count, int *native)
{
  int n = 0;
  ho_cu_result rc = cu.cuDeviceGetCount(&n);
  if (rc == HO_CUDA_ERROR_NO_DEVICE)
    n = 0, rc = HO_CUDA_SUCCESS;
  if (rc == HO_CUDA_SUCCESS)
    *count = n;
  return cu_error(rc, native);
}

static hipObjOpError_t cuda_current_device(int *dev, int *native)
{
  ho_cu_device d = 0;
  int ordinal = -1;
  ho_cu_result rc = ensure_ctx(0);
  if (rc == HO_CUDA_SUCCESS)
    rc = cu.cuCtxGetDevice(&d);
  if (rc == HO_CUDA_SUCCESS)
    rc = ordinal_of(d, &ordinal);
  if (rc == HO_CUDA_SUCCESS)
    *dev = ordinal;
  return cu_error(rc, native);
}

static hipObjOpError_t cuda_pci_bus_id(int dev, char *buf, size_t len,
                                       int *native)
{
  char raw[64] = "";
  ho_cu_device d = 0;
  ho_cu_result rc = cu.cuDeviceGet(&d, dev);
  if (rc == HO_CUDA_SUCCESS)
    rc = cu.cuDeviceGetPCIBusId(raw, (int)sizeof raw, d);
  if (rc != HO_CUDA_SUCCESS)
    return cu_error(rc, native);
  return ho_gpu_format_bus_id(raw, buf, len);
}

/* ---- pointers ----------------------------------------------------------- */

static hipObjOpError_t kind_of(unsigned int type, uint64_t managed,
                               enum ho_mem_kind *kind)
{
  if (managed || type == HO_CU_MEMORYTYPE_UNIFIED)
    *kind = HO_MEM_MANAGED;
  else if (type == HO_CU_MEMORYTYPE_UNKNOWN)
    *kind = HO_MEM_HOST;
  else if (type == HO_CU_MEMORYTYPE_HOST)
    *kind = HO_MEM_HOST_PINNED;
  else if (type == HO_CU_MEMORYTYPE_DEVICE)
    *kind = HO_MEM_DEVICE;
  else
    return hipObjNotSupported; /* arrays */
  return hipObjSuccess;
}

static ho_cu_result query_kind(const void *ptr, unsigned int *type,
                               uint64_t *managed, int *ordinal)
{
  ho_cu_pointer_attribute attrs[3] = {HO_CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                      HO_CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                      HO_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  /* IS_MANAGED is a boolean of unstated width: zeroed, any byte set. */
  void *data[3] = {type, managed, ordinal};
  return cu.cuPointerGetAttributes(3, attrs, data, cu_ptr(ptr));
}

static hipObjOpError_t cuda_classify(const void *ptr, enum ho_mem_kind *kind,
                                     int *dev, int *native)
{
  unsigned int type = HO_CU_MEMORYTYPE_UNKNOWN;
  uint64_t managed = 0;
  int ordinal = -1;
  ho_cu_result rc = query_kind(ptr, &type, &managed, &ordinal);
  if (rc == HO_CUDA_ERROR_INVALID_CONTEXT && ensure_ctx(-1) == HO_CUDA_SUCCESS)
    rc = query_kind(ptr, &type, &managed, &ordinal);
  if (rc == HO_CUDA_ERROR_INVALID_VALUE) /* older drivers: unknown pointer */
    type = HO_CU_MEMORYTYPE_UNKNOWN, rc = HO_CUDA_SUCCESS;
  if (rc != HO_CUDA_SUCCESS)
    return cu_error(rc, native);
  enum ho_mem_kind k = HO_MEM_HOST;
  hipObjOpError_t e = kind_of(type, managed, &k);
  if (e != hipObjSuccess)
    return e;
  if (k == HO_MEM_HOST)
    ordinal = -1;
  if (k == HO_MEM_DEVICE && ordinal >= 0 && ordinal < CU_MAX_DEVICES)
    atomic_fetch_or(&seen_devices, (uint64_t)1 << ordinal);
  *kind = k;
  *dev = ordinal;
  return hipObjSuccess;
}

static hipObjOpError_t cuda_alloc_range(const void *ptr, uintptr_t *base,
                                        size_t *size, int *native)
{
  ho_cu_pointer_attribute attrs[2] = {HO_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                      HO_CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  ho_cu_deviceptr start = 0;
  size_t len = 0;
  void *data[2] = {&start, &len};
  ho_cu_result rc = cu.cuPointerGetAttributes(2, attrs, data, cu_ptr(ptr));
  if (rc != HO_CUDA_SUCCESS || len == 0) {
    /* Drivers before CUDA 10.2 lack the range attributes. */
    rc = ensure_ctx_for(ptr, NULL);
    if (rc == HO_CUDA_SUCCESS)
      rc = cu.cuMemGetAddressRange(&start, &len, cu_ptr(ptr));
  }
  if (rc == HO_CUDA_SUCCESS && len == 0)
    rc = HO_CUDA_ERROR_INVALID_VALUE;
  if (rc != HO_CUDA_SUCCESS)
    return cu_error(rc, native);
  *base = (uintptr_t)start;
  *size = len;
  return hipObjSuccess;
}

/* ---- pinned host memory ------------------------------------------------- */

static hipObjOpError_t cuda_host_alloc(size_t size, void **ptr, int *native)
{
  void *p = NULL;
  if (size == 0)
    return hipObjInvalidValue;
  ho_cu_result rc = ensure_ctx(-1);
  if (rc == HO_CUDA_SUCCESS)
    rc = cu.cuMemHostAlloc(&p, size, HO_CU_MEMHOSTALLOC_PORTABLE);
  if (rc != HO_CUDA_SUCCESS)
    return cu_error(rc, native);
  *ptr = p;
  return hipObjSuccess;
}

static void cuda_host_free(void *ptr)
{
  if (!ptr)
    return;
  ho_cu_result rc = ensure_ctx(-1);
  if (rc == HO_CUDA_SUCCESS)
    rc = cu.cuMemFreeHost(ptr);
  if (rc != HO_CUDA_SUCCESS)
    ho_warn("cuMemFreeHost(%p) failed: CUDA error %u", ptr, rc);
}

/* ---- copies and events -------------------------------------------------- */

static hipObjOpError_t cuda_copy_async(void *dst, const void *src, size_t n,
                                       struct ho_gpu_event **ev, int *native)
{
  ho_cu_event e = NULL;
  ho_cu_result rc = ensure_ctx_for(dst, src);
  if (rc == HO_CUDA_SUCCESS)
    rc = cu.cuEventCreate(&e, HO_CU_EVENT_DISABLE_TIMING);
  if (rc != HO_CUDA_SUCCESS)
    return cu_error(rc, native);
  rc = cu.cuMemcpyAsync(cu_ptr(dst), cu_ptr(src), n, HO_CU_STREAM_PER_THREAD);
  if (rc == HO_CUDA_SUCCESS) {
    rc = cu.cuEventRecord(e, HO_CU_STREAM_PER_THREAD);
    if (rc != HO_CUDA_SUCCESS) /* untracked, so not left running */
      cu.cuStreamSynchronize(HO_CU_STREAM_PER_THREAD);
  }
  if (rc != HO_CUDA_SUCCESS) {
    cu.cuEventDestroy(e);
    return cu_error(rc, native);
  }
  *ev = (struct ho_gpu_event *)e;
  return hipObjSuccess;
}

static hipObjOpError_t cuda_event_query(struct ho_gpu_event *ev, int *native)
{
  ho_cu_result rc = cu.cuEventQuery((ho_cu_event)ev);
  if (rc == HO_CUDA_ERROR_INVALID_CONTEXT && ensure_ctx(-1) == HO_CUDA_SUCCESS)
    rc = cu.cuEventQuery((ho_cu_event)ev);
  return cu_error(rc, native);
}

static void cuda_event_destroy(struct ho_gpu_event *ev)
{
  if (!ev)
    return;
  ho_cu_result rc = cu.cuEventDestroy((ho_cu_event)ev);
  if (rc == HO_CUDA_ERROR_INVALID_CONTEXT && ensure_ctx(-1) == HO_CUDA_SUCCESS)
    rc = cu.cuEventDestroy((ho_cu_event)ev);
  if (rc != HO_CUDA_SUCCESS)
    ho_debug("cuEventDestroy failed: CUDA error %u", rc);
}

/* ---- GPU-direct ---------------------------------------------------------- */

static hipObjOpError_t cuda_export_dmabuf(const void *ptr, size_t size,
                                          int *fd, uint64_t *offset,
                                          int *native)
{
  long page = sysconf(_SC_PAGESIZE);
  uintptr_t mask = (uintptr_t)(page > 0 ? page : 4096) - 1;
  uintptr_t a = (uintptr_t)ptr;
  if (!cu.cuMemGetHandleForAddressRange)
    return hipObjNotSupported;
  if (size == 0 || a + size < a || a + size + mask < a + size)
    return hipObjInvalidValue;
  /* The driver wants the range aligned to the host page size. */
  uintptr_t start = a & ~mask, end = (a + size + mask) & ~mask;
  int handle = -1;
  ho_cu_result rc = ensure_ctx_for(ptr, NULL);
  if (rc == HO_CUDA_SUCCESS)
    rc = cu.cuMemGetHandleForAddressRange(&handle, (ho_cu_deviceptr)start,
                                          end - start,
                                          HO_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
                                          0);
  if (rc != HO_CUDA_SUCCESS)
    return cu_error(rc, native);
  *fd = handle;
  *offset = a - start;
  return hipObjSuccess;
}

static ho_cu_result flush_current(void)
{
  return cu.cuFlushGPUDirectRDMAWrites(
      HO_CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
      HO_CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER);
}

/* Flushes in ctx, pushed on the calling thread for the call. */
static ho_cu_result flush_in(ho_cu_context ctx)
{
  ho_cu_context popped = NULL;
  ho_cu_result rc = cu.cuCtxPushCurrent(ctx);
  if (rc != HO_CUDA_SUCCESS)
    return rc;
  rc = flush_current();
  cu.cuCtxPopCurrent(&popped);
  return rc;
}

static hipObjOpError_t cuda_flush_rdma_writes(int *native)
{
  ho_cu_context cur = NULL;
  if (!cu.cuFlushGPUDirectRDMAWrites)
    return hipObjNotSupported;
  ho_cu_result rc = ensure_ctx(-1);
  if (rc == HO_CUDA_SUCCESS)
    rc = cu.cuCtxGetCurrent(&cur);
  if (rc == HO_CUDA_SUCCESS)
    rc = flush_current();
  uint64_t seen = atomic_load(&seen_devices);
  for (int d = 0; rc == HO_CUDA_SUCCESS && seen; d++, seen >>= 1) {
    ho_cu_context ctx = NULL;
    if (!(seen & 1))
      continue;
    rc = primary_ctx(d, &ctx);
    if (rc == HO_CUDA_SUCCESS && ctx != cur)
      rc = flush_in(ctx);
  }
  return cu_error(rc, native);
}

static const struct ho_gpu_ops cuda_ops = {
    "cuda",
    cuda_device_count,
    cuda_current_device,
    cuda_pci_bus_id,
    cuda_classify,
    cuda_alloc_range,
    cuda_host_alloc,
    cuda_host_free,
    cuda_copy_async,
    cuda_event_query,
    cuda_event_destroy,
    cuda_export_dmabuf,
    cuda_flush_rdma_writes,
};

/* ---- loading ------------------------------------------------------------ */

struct cu_resolver {
  void *lib;
  ho_cu_fn_get_proc_address_v1 v1;
  ho_cu_fn_get_proc_address_v2 v2;
};

static void resolver_init(struct cu_resolver *r, void *lib)
{
  ho_cu_fn_cuDriverGetVersion get_version = NULL;
  void *sym = dlsym(lib, "cuDriverGetVersion");
  int version = 0;
  memset(r, 0, sizeof *r);
  r->lib = lib;
  memcpy(&get_version, &sym, sizeof sym);
  if (!get_version || get_version(&version) != HO_CUDA_SUCCESS)
    return;
  if (version >= 12000) {
    sym = dlsym(lib, "cuGetProcAddress_v2");
    memcpy(&r->v2, &sym, sizeof sym);
  }
  if (!r->v2 && version >= 11030) {
    sym = dlsym(lib, "cuGetProcAddress");
    memcpy(&r->v1, &sym, sizeof sym);
  }
}

static void *resolve(const struct cu_resolver *r, const struct cu_symbol *s)
{
  void *fn = NULL;
  unsigned int status = 0;
  if (r->v2 && r->v2(s->name, &fn, s->since,
                     HO_CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status) ==
                   HO_CUDA_SUCCESS && fn)
    return fn;
  fn = NULL;
  if (r->v1 && r->v1(s->name, &fn, s->since,
                     HO_CU_GET_PROC_ADDRESS_LEGACY_STREAM) == HO_CUDA_SUCCESS &&
      fn)
    return fn;
  return dlsym(r->lib, s->entry);
}

/* Fills cu; false, after one warning, if a required entry is missing. */
static bool resolve_all(void *lib)
{
  struct cu_resolver r;
  const char *missing = NULL;
  size_t n_missing = 0;
  resolver_init(&r, lib);
  for (size_t i = 0; i < sizeof cu_symbols / sizeof cu_symbols[0]; i++) {
    const struct cu_symbol *s = &cu_symbols[i];
    void *fn = resolve(&r, s);
    memcpy((char *)&cu + s->offset, &fn, sizeof fn);
    if (!fn && s->required && n_missing++ == 0)
      missing = s->entry;
  }
  if (n_missing)
    ho_warn("libcuda.so.1 is installed but lacks %s%s: CUDA is not used",
            missing, n_missing > 1 ? " and other entry points" : "");
  return n_missing == 0;
}

static void cuda_load_once(void)
{
  void *lib = dlopen(HO_CUDA_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    ho_debug("CUDA not used: %s", dlerror());
    return;
  }
  if (!resolve_all(lib)) {
    memset(&cu, 0, sizeof cu);
    dlclose(lib);
    return;
  }
  ho_cu_result rc = cu.cuInit(0);
  if (rc != HO_CUDA_SUCCESS) {
    ho_debug("CUDA not used: cuInit failed with CUDA error %u", rc);
    return; /* the driver stays loaded: unloading it after cuInit is unsafe */
  }
  cu_loaded = hipObjSuccess;
}

hipObjOpError_t ho_gpu_cuda_load(const struct ho_gpu_ops **out)
{
  pthread_once(&cu_once, cuda_load_once);
  if (cu_loaded != hipObjSuccess)
    return cu_loaded;
  *out = &cuda_ops;
  return hipObjSuccess;
}
