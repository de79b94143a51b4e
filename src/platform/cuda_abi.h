/* SPDX-License-Identifier: MIT */
/* The part of the CUDA driver API (cuda.h) that gpu_cuda.c uses, declared
 * here so that the library builds without the CUDA toolkit and never links
 * libcuda. Values and prototypes are cuda.h's; tests/gpu/check_cuda_abi.c
 * compiles this header next to the real cuda.h and fails the build where
 * they differ. Opaque handles use cuda.h's own struct tags, so the types are
 * identical where both headers meet; enums are declared as unsigned int, the
 * type gcc and clang give cuda.h's enums. Private to src/platform. */
#ifndef HO_PLATFORM_CUDA_ABI_H
#define HO_PLATFORM_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef unsigned int ho_cu_result;          /* CUresult */
typedef int ho_cu_device;                   /* CUdevice */
typedef unsigned long long ho_cu_deviceptr; /* CUdeviceptr (64-bit hosts) */
typedef unsigned int ho_cu_pointer_attribute; /* CUpointer_attribute */
typedef struct CUctx_st *ho_cu_context;     /* CUcontext */
typedef struct CUstream_st *ho_cu_stream;   /* CUstream */
typedef struct CUevent_st *ho_cu_event;     /* CUevent */

/* CUresult */
#define HO_CUDA_SUCCESS 0u
#define HO_CUDA_ERROR_INVALID_VALUE 1u
#define HO_CUDA_ERROR_OUT_OF_MEMORY 2u
#define HO_CUDA_ERROR_NOT_INITIALIZED 3u
#define HO_CUDA_ERROR_NO_DEVICE 100u
#define HO_CUDA_ERROR_INVALID_DEVICE 101u
#define HO_CUDA_ERROR_INVALID_CONTEXT 201u
#define HO_CUDA_ERROR_NOT_FOUND 500u
#define HO_CUDA_ERROR_NOT_READY 600u
#define HO_CUDA_ERROR_NOT_SUPPORTED 801u

/* CUpointer_attribute */
#define HO_CU_POINTER_ATTRIBUTE_MEMORY_TYPE 2u
#define HO_CU_POINTER_ATTRIBUTE_IS_MANAGED 8u
#define HO_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL 9u
#define HO_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR 11u
#define HO_CU_POINTER_ATTRIBUTE_RANGE_SIZE 12u

/* CUmemorytype; 0 is what cuPointerGetAttributes reports for a pointer the
 * driver does not know. */
#define HO_CU_MEMORYTYPE_UNKNOWN 0u
#define HO_CU_MEMORYTYPE_HOST 1u
#define HO_CU_MEMORYTYPE_DEVICE 2u
#define HO_CU_MEMORYTYPE_ARRAY 3u
#define HO_CU_MEMORYTYPE_UNIFIED 4u

#define HO_CU_STREAM_PER_THREAD ((ho_cu_stream)0x2)
#define HO_CU_EVENT_DISABLE_TIMING 0x2u
#define HO_CU_MEMHOSTALLOC_PORTABLE 0x01u
#define HO_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD 0x1u
#define HO_CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX 0u
#define HO_CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER 100u
#define HO_CU_GET_PROC_ADDRESS_LEGACY_STREAM 0x1u

/* cuGetProcAddress: CUDA 11.3 to 11.8 export only the first form; CUDA 12
 * added a status argument under the name cuGetProcAddress_v2 and kept the
 * first form under the old name. cuuint64_t is uint64_t. */
typedef ho_cu_result (*ho_cu_fn_get_proc_address_v1)(const char *symbol,
                                                     void **pfn, int version,
                                                     uint64_t flags);
typedef ho_cu_result (*ho_cu_fn_get_proc_address_v2)(const char *symbol,
                                                     void **pfn, int version,
                                                     uint64_t flags,
                                                     unsigned int *status);

#define HO_CU_REQUIRED 1
#define HO_CU_OPTIONAL 0

/* Every driver entry point gpu_cuda.c calls, once:
 *   X(name, since, entry, need, params)
 * name   the symbol as cuGetProcAddress knows it (and cuda.h's macro name);
 * since  the CUDA version (1000 * major + 10 * minor) whose ABI of name the
 *        prototype describes: what cuGetProcAddress is asked for;
 * entry  the exported, versioned entry point with that ABI, for dlsym on
 *        drivers older than CUDA 11.3 (what cuda.h's macro expands to);
 * need   HO_CU_REQUIRED or HO_CU_OPTIONAL;
 * params the parameter list; every entry returns a CUresult. */
#define HO_CUDA_SYMBOLS(X)                                                     \
  X(cuInit, 2000, "cuInit", HO_CU_REQUIRED, (unsigned int flags))              \
  X(cuDriverGetVersion, 2020, "cuDriverGetVersion", HO_CU_REQUIRED,            \
    (int *version))                                                            \
  X(cuDeviceGetCount, 2000, "cuDeviceGetCount", HO_CU_REQUIRED, (int *count))  \
  X(cuDeviceGet, 2000, "cuDeviceGet", HO_CU_REQUIRED,                          \
    (ho_cu_device *dev, int ordinal))                                          \
  X(cuDeviceGetPCIBusId, 4010, "cuDeviceGetPCIBusId", HO_CU_REQUIRED,          \
    (char *bus_id, int len, ho_cu_device dev))                                 \
  X(cuDevicePrimaryCtxRetain, 7000, "cuDevicePrimaryCtxRetain",                \
    HO_CU_REQUIRED, (ho_cu_context *ctx, ho_cu_device dev))                    \
  X(cuCtxGetCurrent, 4000, "cuCtxGetCurrent", HO_CU_REQUIRED,                  \
    (ho_cu_context *ctx))                                                      \
  X(cuCtxGetDevice, 2000, "cuCtxGetDevice", HO_CU_REQUIRED,                    \
    (ho_cu_device *dev))                                                       \
  X(cuCtxPushCurrent, 4000, "cuCtxPushCurrent_v2", HO_CU_REQUIRED,             \
    (ho_cu_context ctx))                                                       \
  X(cuCtxPopCurrent, 4000, "cuCtxPopCurrent_v2", HO_CU_REQUIRED,               \
    (ho_cu_context *ctx))                                                      \
  X(cuPointerGetAttributes, 7000, "cuPointerGetAttributes", HO_CU_REQUIRED,    \
    (unsigned int count, ho_cu_pointer_attribute *attrs, void **data,          \
     ho_cu_deviceptr ptr))                                                     \
  X(cuMemGetAddressRange, 3020, "cuMemGetAddressRange_v2", HO_CU_REQUIRED,     \
    (ho_cu_deviceptr *base, size_t *size, ho_cu_deviceptr ptr))                \
  X(cuMemHostAlloc, 2020, "cuMemHostAlloc", HO_CU_REQUIRED,                    \
    (void **ptr, size_t size, unsigned int flags))                             \
  X(cuMemFreeHost, 2000, "cuMemFreeHost", HO_CU_REQUIRED, (void *ptr))         \
  X(cuMemcpyAsync, 4000, "cuMemcpyAsync", HO_CU_REQUIRED,                      \
    (ho_cu_deviceptr dst, ho_cu_deviceptr src, size_t n, ho_cu_stream stream)) \
  X(cuStreamSynchronize, 2000, "cuStreamSynchronize", HO_CU_REQUIRED,          \
    (ho_cu_stream stream))                                                     \
  X(cuEventCreate, 2000, "cuEventCreate", HO_CU_REQUIRED,                      \
    (ho_cu_event *ev, unsigned int flags))                                     \
  X(cuEventRecord, 2000, "cuEventRecord", HO_CU_REQUIRED,                      \
    (ho_cu_event ev, ho_cu_stream stream))                                     \
  X(cuEventQuery, 2000, "cuEventQuery", HO_CU_REQUIRED, (ho_cu_event ev))      \
  X(cuEventDestroy, 4000, "cuEventDestroy_v2", HO_CU_REQUIRED,                 \
    (ho_cu_event ev))                                                          \
  X(cuMemGetHandleForAddressRange, 11070, "cuMemGetHandleForAddressRange",     \
    HO_CU_OPTIONAL,                                                            \
    (void *handle, ho_cu_deviceptr ptr, size_t size, unsigned int type,        \
     unsigned long long flags))                                                \
  X(cuFlushGPUDirectRDMAWrites, 11030, "cuFlushGPUDirectRDMAWrites",           \
    HO_CU_OPTIONAL, (unsigned int target, unsigned int scope))

#define HO_CU_TYPEDEF(name, since, entry, need, params)                        \
  typedef ho_cu_result(*ho_cu_fn_##name) params;
HO_CUDA_SYMBOLS(HO_CU_TYPEDEF)
#undef HO_CU_TYPEDEF

#endif
