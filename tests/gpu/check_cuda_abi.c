/* SPDX-License-Identifier: MIT */
/* src/platform/cuda_abi.h against the real cuda.h: every constant, type and
 * prototype the CUDA runtime of the seam declares for itself must be the
 * vendor's. Mismatches fail the build (static assertions); the versioned
 * entry-point names, which cuda.h gives as macros, are compared when it runs.
 * Built only where cuda.h is installed; needs no GPU and no libcuda. */
#include <cuda.h>
#include <stdio.h>
#include <string.h>

#include "platform/cuda_abi.h"

#define SAME_TYPE(a, b) __builtin_types_compatible_p(a, b)
#define CHECK_TYPE(mine, theirs)                                               \
  _Static_assert(SAME_TYPE(mine, theirs), #mine " is not " #theirs)
#define CHECK_VALUE(mine, theirs)                                              \
  _Static_assert((mine) == (theirs), #mine " != " #theirs)

/* 64-bit hosts only, as the library. */
_Static_assert(sizeof(void *) == 8, "64-bit only");

CHECK_TYPE(ho_cu_result, CUresult);
CHECK_TYPE(ho_cu_device, CUdevice);
CHECK_TYPE(ho_cu_deviceptr, CUdeviceptr);
CHECK_TYPE(ho_cu_pointer_attribute, CUpointer_attribute);
CHECK_TYPE(ho_cu_context, CUcontext);
CHECK_TYPE(ho_cu_stream, CUstream);
CHECK_TYPE(ho_cu_event, CUevent);
CHECK_TYPE(uint64_t, cuuint64_t);
CHECK_TYPE(unsigned int, CUmemRangeHandleType);
CHECK_TYPE(unsigned int, CUflushGPUDirectRDMAWritesTarget);
CHECK_TYPE(unsigned int, CUflushGPUDirectRDMAWritesScope);
CHECK_TYPE(unsigned int, CUdriverProcAddressQueryResult);
CHECK_TYPE(unsigned int, CUmemorytype);

CHECK_VALUE(HO_CUDA_SUCCESS, CUDA_SUCCESS);
CHECK_VALUE(HO_CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_VALUE);
CHECK_VALUE(HO_CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_OUT_OF_MEMORY);
CHECK_VALUE(HO_CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_NOT_INITIALIZED);
CHECK_VALUE(HO_CUDA_ERROR_NO_DEVICE, CUDA_ERROR_NO_DEVICE);
CHECK_VALUE(HO_CUDA_ERROR_INVALID_DEVICE, CUDA_ERROR_INVALID_DEVICE);
CHECK_VALUE(HO_CUDA_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_CONTEXT);
CHECK_VALUE(HO_CUDA_ERROR_NOT_FOUND, CUDA_ERROR_NOT_FOUND);
CHECK_VALUE(HO_CUDA_ERROR_NOT_READY, CUDA_ERROR_NOT_READY);
CHECK_VALUE(HO_CUDA_ERROR_NOT_SUPPORTED, CUDA_ERROR_NOT_SUPPORTED);
CHECK_VALUE(HO_CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            CU_POINTER_ATTRIBUTE_MEMORY_TYPE);
CHECK_VALUE(HO_CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_IS_MANAGED);
CHECK_VALUE(HO_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
            CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL);
CHECK_VALUE(HO_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
            CU_POINTER_ATTRIBUTE_RANGE_START_ADDR);
CHECK_VALUE(HO_CU_POINTER_ATTRIBUTE_RANGE_SIZE, CU_POINTER_ATTRIBUTE_RANGE_SIZE);
CHECK_VALUE(HO_CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_HOST);
CHECK_VALUE(HO_CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_DEVICE);
CHECK_VALUE(HO_CU_MEMORYTYPE_ARRAY, CU_MEMORYTYPE_ARRAY);
CHECK_VALUE(HO_CU_MEMORYTYPE_UNIFIED, CU_MEMORYTYPE_UNIFIED);
CHECK_VALUE(HO_CU_EVENT_DISABLE_TIMING, CU_EVENT_DISABLE_TIMING);
CHECK_VALUE(HO_CU_MEMHOSTALLOC_PORTABLE, CU_MEMHOSTALLOC_PORTABLE);
CHECK_VALUE(HO_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
            CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD);
CHECK_VALUE(HO_CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
            CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX);
CHECK_VALUE(HO_CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER,
            CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER);
CHECK_VALUE(HO_CU_GET_PROC_ADDRESS_LEGACY_STREAM,
            CU_GET_PROC_ADDRESS_LEGACY_STREAM);

/* cuGetProcAddress: cuda.h names the CUDA 12 form; the CUDA 11.3 form is
 * declared only inside the driver's own build, so it is spelled out here. */
CHECK_TYPE(ho_cu_fn_get_proc_address_v2, __typeof__(&cuGetProcAddress_v2));
typedef CUresult (*vendor_get_proc_address_v1)(const char *, void **, int,
                                               cuuint64_t);
CHECK_TYPE(ho_cu_fn_get_proc_address_v1, vendor_get_proc_address_v1);

/* Each prototype of the symbol list is the vendor's: `name` expands through
 * cuda.h's macros to the versioned entry point, whose prototype it takes. */
#define CHECK_PROTO(name, since, entry, need, params)                          \
  CHECK_TYPE(ho_cu_fn_##name, __typeof__(&name));
HO_CUDA_SYMBOLS(CHECK_PROTO)

/* ...and the entry the loader dlsyms is the one cuda.h maps name to. */
#define STR(x) #x
#define XSTR(x) STR(x)
struct entry_check {
  const char *name, *entry, *vendor;
};
#define ENTRY_CHECK(name, since, entry, need, params)                          \
  {#name, entry, XSTR(name)},
static const struct entry_check entries[] = {HO_CUDA_SYMBOLS(ENTRY_CHECK)};

int main(void)
{
  int bad = 0;
  size_t n = sizeof entries / sizeof entries[0];
  if (HO_CU_STREAM_PER_THREAD != CU_STREAM_PER_THREAD) { /* not a constant */
    printf("FAIL CU_STREAM_PER_THREAD\n");
    bad++;
  }
  for (size_t i = 0; i < n; i++) {
    if (strcmp(entries[i].entry, entries[i].vendor) != 0) {
      printf("FAIL %s: loader uses %s, cuda.h %s\n", entries[i].name,
             entries[i].entry, entries[i].vendor);
      bad++;
    }
  }
  printf("cuda_abi.h matches cuda.h (CUDA_VERSION %d): %zu entry points, "
         "%d mismatched\n", CUDA_VERSION, n, bad);
  printf("%zu passed, %d failed\n", n - (size_t)bad, bad);
  return bad ? 1 : 0;
}
