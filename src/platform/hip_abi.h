/* SPDX-License-Identifier: MIT */
/* The part of the HIP runtime API (hip_runtime_api.h) and of HSA's AMD
 * extensions (hsa_ext_amd.h) that gpu_hip.c uses, declared here so that the
 * library builds without ROCm and never links it. Values and prototypes are
 * the vendor's; tests/gpu/check_hip_abi.c compiles this header next to the
 * real ones and fails the build where they differ. Opaque handles use the
 * vendor's struct tags; enums are declared as unsigned int, the type gcc and
 * clang give them. Private to src/platform.
 *
 * Only calls whose ABI has not changed from ROCm 5.2 to ROCm 7 are used:
 * hipPointerGetAttribute (one attribute at a time) rather than
 * hipPointerGetAttributes, whose struct changed in ROCm 6. One value did
 * change: the hipMemoryType numbers that HIP_POINTER_ATTRIBUTE_MEMORY_TYPE
 * reports (ROCm 6 renumbered them to match CUDA), so both sets are here. */
#ifndef HO_PLATFORM_HIP_ABI_H
#define HO_PLATFORM_HIP_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef unsigned int ho_hip_error;             /* hipError_t */
typedef unsigned int ho_hip_pointer_attribute; /* hipPointer_attribute */
typedef unsigned int ho_hip_memcpy_kind;       /* hipMemcpyKind */
typedef struct ihipStream_t *ho_hip_stream;    /* hipStream_t */
typedef struct ihipEvent_t *ho_hip_event;      /* hipEvent_t */
typedef unsigned int ho_hsa_status;            /* hsa_status_t */

/* hipError_t */
#define HO_HIP_SUCCESS 0u
#define HO_HIP_ERROR_INVALID_VALUE 1u
#define HO_HIP_ERROR_OUT_OF_MEMORY 2u
#define HO_HIP_ERROR_NOT_INITIALIZED 3u
#define HO_HIP_ERROR_NO_DEVICE 100u
#define HO_HIP_ERROR_INVALID_DEVICE 101u
#define HO_HIP_ERROR_NOT_READY 600u
#define HO_HIP_ERROR_NOT_SUPPORTED 801u

#define HO_HSA_STATUS_SUCCESS 0u

/* hipPointer_attribute */
#define HO_HIP_POINTER_ATTRIBUTE_MEMORY_TYPE 2u
#define HO_HIP_POINTER_ATTRIBUTE_IS_MANAGED 8u
#define HO_HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL 9u

/* hipMemoryType up to ROCm 5.7 */
#define HO_HIP5_MEMORY_TYPE_HOST 0u
#define HO_HIP5_MEMORY_TYPE_DEVICE 1u
#define HO_HIP5_MEMORY_TYPE_ARRAY 2u
#define HO_HIP5_MEMORY_TYPE_UNIFIED 3u
/* hipMemoryType from ROCm 6.0 */
#define HO_HIP6_MEMORY_TYPE_UNREGISTERED 0u
#define HO_HIP6_MEMORY_TYPE_HOST 1u
#define HO_HIP6_MEMORY_TYPE_DEVICE 2u
#define HO_HIP6_MEMORY_TYPE_MANAGED 3u
#define HO_HIP6_MEMORY_TYPE_ARRAY 10u
#define HO_HIP6_MEMORY_TYPE_UNIFIED 11u

#define HO_HIP_MEMCPY_DEFAULT 4u
#define HO_HIP_STREAM_PER_THREAD ((ho_hip_stream)2)
#define HO_HIP_EVENT_DISABLE_TIMING 0x2u
#define HO_HIP_HOST_MALLOC_PORTABLE 0x1u

/* HIP_VERSION: 10000000 * major + 100000 * minor + patch. */
#define HO_HIP_VERSION_MAJOR(v) ((v) / 10000000)

#define HO_HIP_LIB 0 /* libamdhip64 */
#define HO_HSA_LIB 1 /* libhsa-runtime64.so.1 */
#define HO_HIP_REQUIRED 1
#define HO_HIP_OPTIONAL 0

/* Every HIP and HSA entry point gpu_hip.c calls, once:
 *   X(name, lib, need, ret, params)
 * lib HO_HIP_LIB or HO_HSA_LIB; need HO_HIP_REQUIRED or HO_HIP_OPTIONAL;
 * ret the return type (ho_hip_error or ho_hsa_status). hipHostMalloc and
 * hipHostAlloc are each optional, but gpu_hip.c needs one of them: ROCm
 * deprecates one or the other from release to release. */
#define HO_HIP_SYMBOLS(X)                                                      \
  X(hipInit, HO_HIP_LIB, HO_HIP_REQUIRED, ho_hip_error, (unsigned int flags))  \
  X(hipRuntimeGetVersion, HO_HIP_LIB, HO_HIP_REQUIRED, ho_hip_error,           \
    (int *version))                                                            \
  X(hipGetDeviceCount, HO_HIP_LIB, HO_HIP_REQUIRED, ho_hip_error, (int *count)) \
  X(hipGetDevice, HO_HIP_LIB, HO_HIP_REQUIRED, ho_hip_error, (int *dev))       \
  X(hipSetDevice, HO_HIP_LIB, HO_HIP_REQUIRED, ho_hip_error, (int dev))        \
  X(hipDeviceGetPCIBusId, HO_HIP_LIB, HO_HIP_REQUIRED, ho_hip_error,           \
    (char *bus_id, int len, int dev))                                          \
  X(hipPointerGetAttribute, HO_HIP_LIB, HO_HIP_REQUIRED, ho_hip_error,         \
    (void *data, ho_hip_pointer_attribute attr, void *ptr))                    \
  X(hipMemGetAddressRange, HO_HIP_LIB, HO_HIP_REQUIRED, ho_hip_error,          \
    (void **base, size_t *size, void *ptr))                                    \
  X(hipHostMalloc, HO_HIP_LIB, HO_HIP_OPTIONAL, ho_hip_error,                  \
    (void **ptr, size_t size, unsigned int flags))                             \
  X(hipHostAlloc, HO_HIP_LIB, HO_HIP_OPTIONAL, ho_hip_error,                   \
    (void **ptr, size_t size, unsigned int flags))                             \
  X(hipHostFree, HO_HIP_LIB, HO_HIP_REQUIRED, ho_hip_error, (void *ptr))       \
  X(hipMemcpyAsync, HO_HIP_LIB, HO_HIP_REQUIRED, ho_hip_error,                 \
    (void *dst, const void *src, size_t n, ho_hip_memcpy_kind kind,            \
     ho_hip_stream stream))                                                    \
  X(hipStreamSynchronize, HO_HIP_LIB, HO_HIP_REQUIRED, ho_hip_error,           \
    (ho_hip_stream stream))                                                    \
  X(hipEventCreateWithFlags, HO_HIP_LIB, HO_HIP_REQUIRED, ho_hip_error,        \
    (ho_hip_event *ev, unsigned int flags))                                    \
  X(hipEventRecord, HO_HIP_LIB, HO_HIP_REQUIRED, ho_hip_error,                 \
    (ho_hip_event ev, ho_hip_stream stream))                                   \
  X(hipEventQuery, HO_HIP_LIB, HO_HIP_REQUIRED, ho_hip_error, (ho_hip_event ev)) \
  X(hipEventDestroy, HO_HIP_LIB, HO_HIP_REQUIRED, ho_hip_error,                \
    (ho_hip_event ev))                                                         \
  X(hipDeviceSynchronize, HO_HIP_LIB, HO_HIP_REQUIRED, ho_hip_error, (void))   \
  X(hsa_amd_portable_export_dmabuf, HO_HSA_LIB, HO_HIP_OPTIONAL,               \
    ho_hsa_status,                                                             \
    (const void *ptr, size_t size, int *dmabuf, uint64_t *offset))

#define HO_HIP_TYPEDEF(name, lib, need, ret, params)                           \
  typedef ret(*ho_hip_fn_##name) params;
HO_HIP_SYMBOLS(HO_HIP_TYPEDEF)
#undef HO_HIP_TYPEDEF

#endif
