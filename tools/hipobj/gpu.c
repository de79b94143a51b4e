/* SPDX-License-Identifier: MIT */
/* GPU memory for the command, through dlopen. Each runtime's symbols are
 * listed once (an X-macro) and expanded into the table and the loader. */
#include "gpu.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/platform/sonames.h"

/* ---- CUDA driver API --------------------------------------------------- */

typedef int cu_result;
typedef int cu_device;
typedef void *cu_context;
typedef unsigned long long cu_ptr;

#define CUDA_SYMBOLS(X)                                                      \
  X(cuInit, cu_result, (unsigned))                                           \
  X(cuDeviceGetCount, cu_result, (int *))                                    \
  X(cuDeviceGet, cu_result, (cu_device *, int))                              \
  X(cuDeviceGetName, cu_result, (char *, int, cu_device))                    \
  X(cuDeviceGetPCIBusId, cu_result, (char *, int, cu_device))                \
  X(cuDevicePrimaryCtxRetain, cu_result, (cu_context *, cu_device))          \
  X(cuDevicePrimaryCtxRelease_v2, cu_result, (cu_device))                    \
  X(cuCtxSetCurrent, cu_result, (cu_context))                                \
  X(cuMemAlloc_v2, cu_result, (cu_ptr *, size_t))                            \
  X(cuMemFree_v2, cu_result, (cu_ptr))                                       \
  X(cuMemcpyHtoD_v2, cu_result, (cu_ptr, const void *, size_t))             \
  X(cuMemcpyDtoH_v2, cu_result, (void *, cu_ptr, size_t))                   \
  X(cuMemHostAlloc, cu_result, (void **, size_t, unsigned))                  \
  X(cuMemFreeHost, cu_result, (void *))

/* ---- HIP ---------------------------------------------------------------- */

typedef int hip_error;

#define HIP_SYMBOLS(X)                                                       \
  X(hipGetDeviceCount, hip_error, (int *))                                   \
  X(hipSetDevice, hip_error, (int))                                          \
  X(hipDeviceGetName, hip_error, (char *, int, int))                         \
  X(hipDeviceGetPCIBusId, hip_error, (char *, int, int))                     \
  X(hipMalloc, hip_error, (void **, size_t))                                 \
  X(hipFree, hip_error, (void *))                                            \
  X(hipMemcpy, hip_error, (void *, const void *, size_t, int))               \
  X(hipHostMalloc, hip_error, (void **, size_t, unsigned))                   \
  X(hipHostFree, hip_error, (void *))

#define HIP_MEMCPY_HTOD 1
#define HIP_MEMCPY_DTOH 2

#define FIELD(name, ret, args) ret(*name) args;

struct tool_gpu {
  const char *runtime;
  void *lib;
  bool cuda;
  int device;        /* the selected ordinal */
  cu_context ctx;    /* CUDA: the selected device's primary context */
  bool ctx_retained;
  struct {
    CUDA_SYMBOLS(FIELD)
  } cu;
  struct {
    HIP_SYMBOLS(FIELD)
  } hip;
};

/* The library's list: the command finds HIP wherever the library does. */
static const char *const hip_names[] = HO_HIP_SONAMES;

static bool load_cuda(struct tool_gpu *g, char *why, size_t len)
{
  g->lib = dlopen(HO_CUDA_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!g->lib) {
    snprintf(why, len, "%s not found", HO_CUDA_SONAME);
    return false;
  }
#define LOAD(name, ret, args)                                                \
  if (!(*(void **)&g->cu.name = dlsym(g->lib, #name))) {                     \
    snprintf(why, len, "%s lacks %s", HO_CUDA_SONAME, #name);                \
    return false;                                                            \
  }
  CUDA_SYMBOLS(LOAD)
#undef LOAD
  int n = 0;
  if (g->cu.cuInit(0) != 0 || g->cu.cuDeviceGetCount(&n) != 0 || n < 1) {
    snprintf(why, len, "CUDA reports no device");
    return false;
  }
  g->cuda = true;
  g->runtime = "CUDA";
  return true;
}

static bool load_hip(struct tool_gpu *g, char *why, size_t len)
{
  for (size_t i = 0; !g->lib && i < sizeof hip_names / sizeof *hip_names; i++)
    g->lib = dlopen(hip_names[i], RTLD_NOW | RTLD_LOCAL);
  if (!g->lib) {
    snprintf(why, len, "libamdhip64 not found");
    return false;
  }
#define LOAD(name, ret, args)                                                \
  if (!(*(void **)&g->hip.name = dlsym(g->lib, #name))) {                    \
    snprintf(why, len, "libamdhip64 lacks %s", #name);                       \
    return false;                                                            \
  }
  HIP_SYMBOLS(LOAD)
#undef LOAD
  int n = 0;
  if (g->hip.hipGetDeviceCount(&n) != 0 || n < 1) {
    snprintf(why, len, "HIP reports no device");
    return false;
  }
  g->runtime = "HIP";
  return true;
}

static void unload(struct tool_gpu *g)
{
  if (g->lib)
    dlclose(g->lib);
  memset(g, 0, sizeof *g);
}

struct tool_gpu *tool_gpu_open(const char *which, char *why, size_t len)
{
  char w1[128] = "", w2[128] = "";
  struct tool_gpu *g = calloc(1, sizeof *g);
  if (!g) {
    snprintf(why, len, "out of memory");
    return NULL;
  }
  bool any = !which || !strcmp(which, "auto");
  if ((any || !strcmp(which, "cuda")) && load_cuda(g, w1, sizeof w1))
    return g;
  unload(g);
  if ((any || !strcmp(which, "hip")) && load_hip(g, w2, sizeof w2))
    return g;
  unload(g);
  free(g);
  snprintf(why, len, "no GPU runtime with a device (%s%s%s)", w1,
           w1[0] && w2[0] ? "; " : "", w2);
  return NULL;
}

void tool_gpu_close(struct tool_gpu *g)
{
  if (!g)
    return;
  if (g->ctx_retained) {
    cu_device d = 0;
    if (g->cu.cuDeviceGet(&d, g->device) == 0)
      g->cu.cuDevicePrimaryCtxRelease_v2(d);
  }
  unload(g);
  free(g);
}

const char *tool_gpu_runtime(const struct tool_gpu *g)
{
  return g ? g->runtime : "none";
}

int tool_gpu_count(const struct tool_gpu *g)
{
  int n = 0;
  if (g && g->cuda)
    g->cu.cuDeviceGetCount(&n);
  else if (g)
    g->hip.hipGetDeviceCount(&n);
  return n;
}

bool tool_gpu_describe(struct tool_gpu *g, int ordinal, char *name,
                       size_t name_len, char *bus, size_t bus_len)
{
  int nl = name_len > 256 ? 256 : (int)name_len;
  int bl = bus_len > 64 ? 64 : (int)bus_len;
  if (!g->cuda)
    return g->hip.hipDeviceGetName(name, nl, ordinal) == 0 &&
           g->hip.hipDeviceGetPCIBusId(bus, bl, ordinal) == 0;
  cu_device d = 0;
  return g->cu.cuDeviceGet(&d, ordinal) == 0 &&
         g->cu.cuDeviceGetName(name, nl, d) == 0 &&
         g->cu.cuDeviceGetPCIBusId(bus, bl, d) == 0;
}

bool tool_gpu_select(struct tool_gpu *g, int ordinal)
{
  if (ordinal < 0 || ordinal >= tool_gpu_count(g))
    return false;
  g->device = ordinal;
  if (!g->cuda)
    return g->hip.hipSetDevice(ordinal) == 0;
  cu_device d = 0;
  if (g->cu.cuDeviceGet(&d, ordinal) != 0 ||
      g->cu.cuDevicePrimaryCtxRetain(&g->ctx, d) != 0)
    return false;
  g->ctx_retained = true;
  return g->cu.cuCtxSetCurrent(g->ctx) == 0;
}

/* Every thread that copies must have the device current. */
static bool bind_thread(struct tool_gpu *g)
{
  return g->cuda ? g->cu.cuCtxSetCurrent(g->ctx) == 0
                 : g->hip.hipSetDevice(g->device) == 0;
}

void *tool_gpu_alloc(struct tool_gpu *g, size_t n)
{
  if (!bind_thread(g))
    return NULL;
  if (g->cuda) {
    cu_ptr p = 0;
    return g->cu.cuMemAlloc_v2(&p, n) == 0 ? (void *)(uintptr_t)p : NULL;
  }
  void *p = NULL;
  return g->hip.hipMalloc(&p, n) == 0 ? p : NULL;
}

void tool_gpu_free(struct tool_gpu *g, void *p)
{
  if (!p || !bind_thread(g))
    return;
  if (g->cuda)
    g->cu.cuMemFree_v2((cu_ptr)(uintptr_t)p);
  else
    g->hip.hipFree(p);
}

bool tool_gpu_to_device(struct tool_gpu *g, void *dst, const void *src,
                        size_t n)
{
  if (!bind_thread(g))
    return false;
  if (g->cuda)
    return g->cu.cuMemcpyHtoD_v2((cu_ptr)(uintptr_t)dst, src, n) == 0;
  return g->hip.hipMemcpy(dst, src, n, HIP_MEMCPY_HTOD) == 0;
}

bool tool_gpu_to_host(struct tool_gpu *g, void *dst, const void *src,
                      size_t n)
{
  if (!bind_thread(g))
    return false;
  if (g->cuda)
    return g->cu.cuMemcpyDtoH_v2(dst, (cu_ptr)(uintptr_t)src, n) == 0;
  return g->hip.hipMemcpy(dst, src, n, HIP_MEMCPY_DTOH) == 0;
}

static int ops_to_device(void *ctx, void *dst, const void *src, size_t n)
{
  return tool_gpu_to_device(ctx, dst, src, n) ? 0 : -1;
}

static int ops_to_host(void *ctx, void *dst, const void *src, size_t n)
{
  return tool_gpu_to_host(ctx, dst, src, n) ? 0 : -1;
}

static void *ops_alloc_host(void *ctx, size_t n)
{
  struct tool_gpu *g = ctx;
  void *p = NULL;
  if (!bind_thread(g))
    return NULL;
  if (g->cuda)
    return g->cu.cuMemHostAlloc(&p, n, 0) == 0 ? p : NULL;
  return g->hip.hipHostMalloc(&p, n, 0) == 0 ? p : NULL;
}

static void ops_free_host(void *ctx, void *p)
{
  struct tool_gpu *g = ctx;
  if (!p || !bind_thread(g))
    return;
  if (g->cuda)
    g->cu.cuMemFreeHost(p);
  else
    g->hip.hipHostFree(p);
}

void tool_gpu_device_ops(struct tool_gpu *g, hipObjS3DeviceOps_t *ops)
{
  memset(ops, 0, sizeof *ops);
  ops->copyToDevice = ops_to_device;
  ops->copyToHost = ops_to_host;
  ops->allocHost = ops_alloc_host;
  ops->freeHost = ops_free_host;
  ops->ctx = g;
}

bool tool_lib_present(const char *soname)
{
  void *h = dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
  if (h)
    dlclose(h);
  return h != NULL;
}

bool tool_lib_has(const char *soname, const char *symbol)
{
  void *h = dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
  bool has = h && dlsym(h, symbol) != NULL;
  if (h)
    dlclose(h);
  return has;
}
