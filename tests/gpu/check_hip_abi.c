/* SPDX-License-Identifier: MIT */
/* src/platform/hip_abi.h against the installed ROCm headers
 * (hip/hip_runtime_api.h, hsa/hsa_ext_amd.h): the constants, types and
 * prototypes the HIP runtime of the seam declares for itself must be the
 * vendor's (static assertions). When it runs, it also checks that the
 * installed libamdhip64 exports every entry point the loader needs. Built
 * only where the headers are installed (Debian: libamdhip64-dev); needs no
 * GPU. hipMemoryType is checked against whichever numbering the headers
 * have (ROCm 5 or ROCm 6 and later). */
#include <dlfcn.h>
/* Some entries are deprecated in some ROCm release or other; that is why the
 * loader takes either of hipHostMalloc and hipHostAlloc. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdio.h>
#include <string.h>

#include "platform/hip_abi.h"

#define SAME_TYPE(a, b) __builtin_types_compatible_p(a, b)
#define CHECK_TYPE(mine, theirs)                                               \
  _Static_assert(SAME_TYPE(mine, theirs), #mine " is not " #theirs)
#define CHECK_VALUE(mine, theirs)                                              \
  _Static_assert((mine) == (theirs), #mine " != " #theirs)

CHECK_TYPE(ho_hip_error, hipError_t);
CHECK_TYPE(ho_hip_pointer_attribute, hipPointer_attribute);
CHECK_TYPE(ho_hip_memcpy_kind, hipMemcpyKind);
CHECK_TYPE(ho_hip_stream, hipStream_t);
CHECK_TYPE(ho_hip_event, hipEvent_t);
CHECK_TYPE(ho_hsa_status, hsa_status_t);
CHECK_TYPE(void *, hipDeviceptr_t);

CHECK_VALUE(HO_HIP_SUCCESS, hipSuccess);
CHECK_VALUE(HO_HIP_ERROR_INVALID_VALUE, hipErrorInvalidValue);
CHECK_VALUE(HO_HIP_ERROR_OUT_OF_MEMORY, hipErrorOutOfMemory);
CHECK_VALUE(HO_HIP_ERROR_NOT_INITIALIZED, hipErrorNotInitialized);
CHECK_VALUE(HO_HIP_ERROR_NO_DEVICE, hipErrorNoDevice);
CHECK_VALUE(HO_HIP_ERROR_INVALID_DEVICE, hipErrorInvalidDevice);
CHECK_VALUE(HO_HIP_ERROR_NOT_READY, hipErrorNotReady);
CHECK_VALUE(HO_HIP_ERROR_NOT_SUPPORTED, hipErrorNotSupported);
CHECK_VALUE(HO_HSA_STATUS_SUCCESS, HSA_STATUS_SUCCESS);
CHECK_VALUE(HO_HIP_POINTER_ATTRIBUTE_MEMORY_TYPE,
            HIP_POINTER_ATTRIBUTE_MEMORY_TYPE);
CHECK_VALUE(HO_HIP_POINTER_ATTRIBUTE_IS_MANAGED,
            HIP_POINTER_ATTRIBUTE_IS_MANAGED);
CHECK_VALUE(HO_HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
            HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL);
CHECK_VALUE(HO_HIP_MEMCPY_DEFAULT, hipMemcpyDefault);
CHECK_VALUE(HO_HIP_EVENT_DISABLE_TIMING, hipEventDisableTiming);
CHECK_VALUE(HO_HIP_HOST_MALLOC_PORTABLE, hipHostMallocPortable);

#if HIP_VERSION_MAJOR >= 6
CHECK_VALUE(HO_HIP6_MEMORY_TYPE_UNREGISTERED, hipMemoryTypeUnregistered);
CHECK_VALUE(HO_HIP6_MEMORY_TYPE_HOST, hipMemoryTypeHost);
CHECK_VALUE(HO_HIP6_MEMORY_TYPE_DEVICE, hipMemoryTypeDevice);
CHECK_VALUE(HO_HIP6_MEMORY_TYPE_MANAGED, hipMemoryTypeManaged);
CHECK_VALUE(HO_HIP6_MEMORY_TYPE_ARRAY, hipMemoryTypeArray);
CHECK_VALUE(HO_HIP6_MEMORY_TYPE_UNIFIED, hipMemoryTypeUnified);
#else
CHECK_VALUE(HO_HIP5_MEMORY_TYPE_HOST, hipMemoryTypeHost);
CHECK_VALUE(HO_HIP5_MEMORY_TYPE_DEVICE, hipMemoryTypeDevice);
CHECK_VALUE(HO_HIP5_MEMORY_TYPE_ARRAY, hipMemoryTypeArray);
CHECK_VALUE(HO_HIP5_MEMORY_TYPE_UNIFIED, hipMemoryTypeUnified);
#endif
CHECK_VALUE(HO_HIP_VERSION_MAJOR(HIP_VERSION), HIP_VERSION_MAJOR);

/* Prototypes. hsa_amd_portable_export_dmabuf is in ROCm 5.6 and later;
 * CMake says whether these headers declare it. */
#define CHECK_PROTO(name, lib, need, ret, params)                              \
  CHECK_PROTO_##lib(name)
#define CHECK_PROTO_HO_HIP_LIB(name) CHECK_TYPE(ho_hip_fn_##name, __typeof__(&name));
#ifdef HO_HAVE_HSA_EXPORT_DMABUF
#define CHECK_PROTO_HO_HSA_LIB(name) CHECK_TYPE(ho_hip_fn_##name, __typeof__(&name));
#else
#define CHECK_PROTO_HO_HSA_LIB(name)
#endif
HO_HIP_SYMBOLS(CHECK_PROTO)

struct entry {
  const char *name;
  int lib, required;
};
#define ENTRY(name, lib, need, ret, params) {#name, lib, need},
static const struct entry entries[] = {HO_HIP_SYMBOLS(ENTRY)};

int main(void)
{
  static const char *const sonames[] = {"libamdhip64.so.7", "libamdhip64.so.6",
                                        "libamdhip64.so.5"};
  void *libs[2] = {NULL, dlopen("libhsa-runtime64.so.1", RTLD_LAZY)};
  const char *soname = NULL;
  size_t n = sizeof entries / sizeof entries[0], ok = 0;
  int bad = 0;
  for (size_t i = 0; i < 3 && !libs[0]; i++)
    if ((libs[0] = dlopen(sonames[i], RTLD_LAZY)))
      soname = sonames[i];
  printf("hip_abi.h matches the ROCm %d.%d headers\n", HIP_VERSION_MAJOR,
         HIP_VERSION_MINOR);
  if (!libs[0]) {
    printf("no libamdhip64 to check the entry points against\n");
    printf("%zu passed, 0 failed\n", n);
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    void *fn = libs[entries[i].lib] ? dlsym(libs[entries[i].lib], entries[i].name)
                                    : NULL;
    if (fn || !entries[i].required)
      ok++;
    else
      bad++;
    printf("%s %s%s\n", fn ? "found  " : entries[i].required ? "MISSING" : "absent ",
           entries[i].name, entries[i].required ? "" : " (optional)");
  }
  printf("%s: %zu entry points, %d required missing\n", soname, n, bad);
  printf("%zu passed, %d failed\n", ok, bad);
  return bad ? 1 : 0;
}
