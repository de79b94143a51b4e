/* SPDX-License-Identifier: MIT */
/* Copies between host and device memory for the glue's plain-HTTP path
 * (hipObjS3DeviceOps_t), through the CUDA driver API (libcuda.so.1) or HIP
 * (libamdhip64), loaded with dlopen on the first device copy, never linked.
 * The library has its own loaders; this is the application's side, as the
 * hipobj command has one, on the same sonames (src/platform/sonames.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../../src/platform/sonames.h"
#include "hipobj_py.h"

typedef int cu_result;
typedef void *cu_context;
typedef unsigned long long cu_ptr;

#define CU_POINTER_ATTRIBUTE_CONTEXT 1
#define HIP_MEMCPY_DEFAULT 4

#define CUDA_SYMBOLS(X)                                                      \
  X(cuInit, cu_result, (unsigned))                                           \
  X(cuPointerGetAttribute, cu_result, (void *, int, cu_ptr))                 \
  X(cuCtxSetCurrent, cu_result, (cu_context))                                \
  X(cuMemcpyHtoD_v2, cu_result, (cu_ptr, const void *, size_t))             \
  X(cuMemcpyDtoH_v2, cu_result, (void *, cu_ptr, size_t))

#define HIP_SYMBOLS(X)                                                       \
  X(hipMemcpy, int, (void *, const void *, size_t, int))

#define FIELD(name, ret, args) ret(*name) args;

static struct {
  bool cuda, hip;
  struct {
    CUDA_SYMBOLS(FIELD)
  } cu;
  struct {
    HIP_SYMBOLS(FIELD)
  } hp;
} rt;

static pthread_once_t once = PTHREAD_ONCE_INIT;

static bool load_cuda(void)
{
  void *lib = dlopen(HO_CUDA_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return false;
#define LOAD(name, ret, args)                                                \
  if (!(*(void **)&rt.cu.name = dlsym(lib, #name)))                          \
    return false;
  CUDA_SYMBOLS(LOAD)
#undef LOAD
  return rt.cu.cuInit(0) == 0;
}

static bool load_hip(void)
{
  static const char *const names[] = HO_HIP_SONAMES;
  void *lib = NULL;
  for (size_t i = 0; !lib && i < sizeof names / sizeof *names; i++)
    lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return false;
#define LOAD(name, ret, args)                                                \
  if (!(*(void **)&rt.hp.name = dlsym(lib, #name)))                          \
    return false;
  HIP_SYMBOLS(LOAD)
#undef LOAD
  return true;
}

static void load(void)
{
  rt.cuda = load_cuda();
  if (!rt.cuda)
    rt.hip = load_hip();
}

/* CUDA: the copy runs in the context that owns the device pointer. */
static bool cuda_bind(const void *dev)
{
  cu_context ctx = NULL;
  return rt.cu.cuPointerGetAttribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT,
                                     (cu_ptr)(uintptr_t)dev) == 0 &&
         rt.cu.cuCtxSetCurrent(ctx) == 0;
}

static int to_device(void *ctx, void *dst, const void *src, size_t n)
{
  pthread_once(&once, load);
  if (rt.cuda)
    return cuda_bind(dst) &&
                   rt.cu.cuMemcpyHtoD_v2((cu_ptr)(uintptr_t)dst, src, n) == 0
               ? 0 : -1;
  if (rt.hip)
    return rt.hp.hipMemcpy(dst, src, n, HIP_MEMCPY_DEFAULT) == 0 ? 0 : -1;
  return -1;
}

static int to_host(void *ctx, void *dst, const void *src, size_t n)
{
  pthread_once(&once, load);
  if (rt.cuda)
    return cuda_bind(src) &&
                   rt.cu.cuMemcpyDtoH_v2(dst, (cu_ptr)(uintptr_t)src, n) == 0
               ? 0 : -1;
  if (rt.hip)
    return rt.hp.hipMemcpy(dst, src, n, HIP_MEMCPY_DEFAULT) == 0 ? 0 : -1;
  return -1;
}

void hp_gpu_device_ops(hipObjS3DeviceOps_t *ops)
{
  memset(ops, 0, sizeof *ops);
  ops->copyToDevice = to_device;
  ops->copyToHost = to_host;
}
