/* SPDX-License-Identifier: MIT */
/* A stand-in libcuda.so.1 for test_cuda_stub: just enough of the driver API,
 * in host memory, to drive gpu_cuda.c's loader and its translations without
 * a GPU. STUB_CUDA_VERSION (default 12080) is what cuDriverGetVersion says,
 * which decides how the loader resolves entry points: cuGetProcAddress_v2
 * (12.0 and later), cuGetProcAddress (11.3 to 11.8) or dlsym (older). Built
 * with -DSTUB_OMIT_MEMCPY it lacks cuMemcpyAsync, as a broken install
 * would. Counters and the "device memory" are exported for the test. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>

#include "platform/cuda_abi.h"

#define API __attribute__((visibility("default")))

API unsigned char stub_device_memory[1 << 16] __attribute__((aligned(65536)));
API int stub_v1_calls;             /* cuGetProcAddress */
API int stub_v2_calls;             /* cuGetProcAddress_v2 */
API int stub_proc_address_version; /* the highest version asked for */
API int stub_flushes;
API int stub_ctx_pushes;
API unsigned long long stub_export_start, stub_export_size;

static __thread ho_cu_context current;
static struct CUctx_st {
  int unused;
} primary;

struct CUevent_st {
  int polls; /* NOT_READY answers left */
};

static int in_device(ho_cu_deviceptr p)
{
  uintptr_t b = (uintptr_t)stub_device_memory;
  return p >= b && p < b + sizeof stub_device_memory;
}

API ho_cu_result cuInit(unsigned int flags) { return HO_CUDA_SUCCESS; }

API ho_cu_result cuDriverGetVersion(int *version)
{
  const char *v = getenv("STUB_CUDA_VERSION");
  *version = v ? atoi(v) : 12080;
  return HO_CUDA_SUCCESS;
}

API ho_cu_result cuDeviceGetCount(int *count)
{
  *count = 1;
  return HO_CUDA_SUCCESS;
}

API ho_cu_result cuDeviceGet(ho_cu_device *dev, int ordinal)
{
  if (ordinal != 0)
    return HO_CUDA_ERROR_INVALID_DEVICE;
  *dev = 0;
  return HO_CUDA_SUCCESS;
}

API ho_cu_result cuDeviceGetPCIBusId(char *buf, int len, ho_cu_device dev)
{
  snprintf(buf, (size_t)len, "00000000:3B:00.0");
  return HO_CUDA_SUCCESS;
}

API ho_cu_result cuDevicePrimaryCtxRetain(ho_cu_context *ctx, ho_cu_device d)
{
  *ctx = &primary;
  return HO_CUDA_SUCCESS;
}

API ho_cu_result cuCtxGetCurrent(ho_cu_context *ctx)
{
  *ctx = current;
  return HO_CUDA_SUCCESS;
}

API ho_cu_result cuCtxGetDevice(ho_cu_device *dev)
{
  if (!current)
    return HO_CUDA_ERROR_INVALID_CONTEXT;
  *dev = 0;
  return HO_CUDA_SUCCESS;
}

API ho_cu_result cuCtxPushCurrent_v2(ho_cu_context ctx)
{
  current = ctx;
  __atomic_add_fetch(&stub_ctx_pushes, 1, __ATOMIC_SEQ_CST);
  return HO_CUDA_SUCCESS;
}

API ho_cu_result cuCtxPopCurrent_v2(ho_cu_context *ctx)
{
  *ctx = current;
  current = NULL;
  return HO_CUDA_SUCCESS;
}

API ho_cu_result cuPointerGetAttributes(unsigned int n,
                                        ho_cu_pointer_attribute *attrs,
                                        void **data, ho_cu_deviceptr ptr)
{
  for (unsigned int i = 0; i < n; i++) {
    switch (attrs[i]) {
    case HO_CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      *(unsigned int *)data[i] =
          in_device(ptr) ? HO_CU_MEMORYTYPE_DEVICE : HO_CU_MEMORYTYPE_UNKNOWN;
      break;
    case HO_CU_POINTER_ATTRIBUTE_IS_MANAGED:
      *(unsigned char *)data[i] = 0; /* a one-byte bool */
      break;
    case HO_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      *(int *)data[i] = in_device(ptr) ? 0 : -2;
      break;
    case HO_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
      *(ho_cu_deviceptr *)data[i] =
          in_device(ptr) ? (uintptr_t)stub_device_memory : 0;
      break;
    case HO_CU_POINTER_ATTRIBUTE_RANGE_SIZE:
      *(size_t *)data[i] = in_device(ptr) ? sizeof stub_device_memory : 0;
      break;
    default:
      return HO_CUDA_ERROR_INVALID_VALUE;
    }
  }
  return HO_CUDA_SUCCESS;
}

API ho_cu_result cuMemGetAddressRange_v2(ho_cu_deviceptr *base, size_t *size,
                                         ho_cu_deviceptr ptr)
{
  if (!in_device(ptr))
    return HO_CUDA_ERROR_NOT_FOUND;
  *base = (uintptr_t)stub_device_memory;
  *size = sizeof stub_device_memory;
  return HO_CUDA_SUCCESS;
}

API ho_cu_result cuMemHostAlloc(void **p, size_t size, unsigned int flags)
{
  if (!current)
    return HO_CUDA_ERROR_INVALID_CONTEXT;
  return posix_memalign(p, 4096, size) ? HO_CUDA_ERROR_OUT_OF_MEMORY
                                       : HO_CUDA_SUCCESS;
}

API ho_cu_result cuMemFreeHost(void *p)
{
  free(p);
  return HO_CUDA_SUCCESS;
}

#ifndef STUB_OMIT_MEMCPY
API ho_cu_result cuMemcpyAsync(ho_cu_deviceptr dst, ho_cu_deviceptr src,
                               size_t n, ho_cu_stream stream)
{
  if (!current)
    return HO_CUDA_ERROR_INVALID_CONTEXT;
  if (stream != HO_CU_STREAM_PER_THREAD)
    return HO_CUDA_ERROR_INVALID_VALUE;
  memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
  return HO_CUDA_SUCCESS;
}
#endif

API ho_cu_result cuStreamSynchronize(ho_cu_stream stream)
{
  return HO_CUDA_SUCCESS;
}

API ho_cu_result cuEventCreate(ho_cu_event *ev, unsigned int flags)
{
  if (flags != HO_CU_EVENT_DISABLE_TIMING)
    return HO_CUDA_ERROR_INVALID_VALUE;
  *ev = calloc(1, sizeof **ev);
  return *ev ? HO_CUDA_SUCCESS : HO_CUDA_ERROR_OUT_OF_MEMORY;
}

API ho_cu_result cuEventRecord(ho_cu_event ev, ho_cu_stream stream)
{
  ev->polls = 2;
  return HO_CUDA_SUCCESS;
}

API ho_cu_result cuEventQuery(ho_cu_event ev)
{
  if (ev->polls > 0) {
    ev->polls--;
    return HO_CUDA_ERROR_NOT_READY;
  }
  return HO_CUDA_SUCCESS;
}

API ho_cu_result cuEventDestroy_v2(ho_cu_event ev)
{
  free(ev);
  return HO_CUDA_SUCCESS;
}

API ho_cu_result cuMemGetHandleForAddressRange(void *handle,
                                               ho_cu_deviceptr ptr,
                                               size_t size, unsigned int type,
                                               unsigned long long flags)
{
  if (type != HO_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD || (ptr & 4095) ||
      (size & 4095) || !in_device(ptr) || !in_device(ptr + size - 1))
    return HO_CUDA_ERROR_INVALID_VALUE;
  stub_export_start = ptr;
  stub_export_size = size;
  *(int *)handle = eventfd(0, EFD_CLOEXEC);
  return HO_CUDA_SUCCESS;
}

API ho_cu_result cuFlushGPUDirectRDMAWrites(unsigned int target,
                                            unsigned int scope)
{
  if (!current || target != 0 || scope != 100)
    return HO_CUDA_ERROR_INVALID_VALUE;
  __atomic_add_fetch(&stub_flushes, 1, __ATOMIC_SEQ_CST);
  return HO_CUDA_SUCCESS;
}

/* cuGetProcAddress: the base name, at a version, to the entry with that ABI.
 * Versioned entries are the names above with their suffix. */
static ho_cu_result proc_address(const char *symbol, void **pfn, int version)
{
  static const char *const v2[] = {"cuMemGetAddressRange", "cuCtxPushCurrent",
                                   "cuCtxPopCurrent", "cuEventDestroy"};
  char name[128];
  snprintf(name, sizeof name, "%s", symbol);
  for (size_t i = 0; i < sizeof v2 / sizeof v2[0]; i++)
    if (strcmp(symbol, v2[i]) == 0)
      snprintf(name, sizeof name, "%s_v2", symbol);
  if (version > stub_proc_address_version)
    stub_proc_address_version = version;
  /* This library was opened RTLD_LOCAL: look in it, not globally. */
  Dl_info self;
  void *h = dladdr((void *)cuInit, &self)
                ? dlopen(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD)
                : NULL;
  *pfn = h ? dlsym(h, name) : NULL;
  if (h)
    dlclose(h);
  return *pfn ? HO_CUDA_SUCCESS : HO_CUDA_ERROR_NOT_FOUND;
}

API ho_cu_result cuGetProcAddress(const char *symbol, void **pfn, int version,
                                  uint64_t flags)
{
  int v = 0;
  cuDriverGetVersion(&v);
  if (v < 11030 || flags != HO_CU_GET_PROC_ADDRESS_LEGACY_STREAM)
    return HO_CUDA_ERROR_NOT_FOUND;
  __atomic_add_fetch(&stub_v1_calls, 1, __ATOMIC_SEQ_CST);
  return proc_address(symbol, pfn, version);
}

API ho_cu_result cuGetProcAddress_v2(const char *symbol, void **pfn,
                                     int version, uint64_t flags,
                                     unsigned int *status)
{
  int v = 0;
  cuDriverGetVersion(&v);
  if (v < 12000 || flags != HO_CU_GET_PROC_ADDRESS_LEGACY_STREAM)
    return HO_CUDA_ERROR_NOT_FOUND;
  __atomic_add_fetch(&stub_v2_calls, 1, __ATOMIC_SEQ_CST);
  ho_cu_result rc = proc_address(symbol, pfn, version);
  *status = rc == HO_CUDA_SUCCESS ? 0 : 1;
  return rc;
}
