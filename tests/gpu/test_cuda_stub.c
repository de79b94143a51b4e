/* SPDX-License-Identifier: MIT */
/* gpu_cuda.c against a stand-in libcuda.so.1 (stub_cuda.c, found through
 * LD_LIBRARY_PATH): how the loader resolves entry points on drivers of each
 * age (STUB_EXPECT=v2: cuGetProcAddress_v2, CUDA 12 and later; v1:
 * cuGetProcAddress, 11.3 to 11.8; dlsym: older), the one warning for an
 * install that lacks an entry point (STUB_EXPECT=missing), and the
 * translations no GPU is needed for: bus ids, pointer kinds, the page-aligned
 * dma-buf range and its offset, busy events, contexts made current on
 * threads that have none. Prints "N passed, N failed". */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platform/gpu.h"

static int passed, failed;
static const struct ho_gpu_ops *g;
static void *stub;

static void check(bool ok, const char *what)
{
  printf("%s %s\n", ok ? "PASS" : "FAIL", what);
  ok ? passed++ : failed++;
}

static int stub_int(const char *name)
{
  int *p = dlsym(stub, name);
  return p ? __atomic_load_n(p, __ATOMIC_SEQ_CST) : -1;
}

static unsigned long long stub_u64(const char *name)
{
  unsigned long long *p = dlsym(stub, name);
  return p ? *p : 0;
}

/* ho_gpu_cuda_load with stderr captured into text. */
static hipObjOpError_t load_capturing(char *text, size_t len)
{
  FILE *tmp = tmpfile();
  fflush(stderr);
  int saved = dup(2);
  dup2(fileno(tmp), 2);
  hipObjOpError_t e = ho_gpu_cuda_load(&g);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(tmp);
  size_t n = fread(text, 1, len - 1, tmp);
  text[n] = '\0';
  fclose(tmp);
  return e;
}

static int count_lines(const char *s)
{
  int n = 0;
  for (; *s; s++)
    n += *s == '\n';
  return n;
}

static void *fresh_copy(void *arg)
{
  unsigned char *dev = arg;
  char host[64];
  struct ho_gpu_event *ev = NULL;
  int busy = 0;
  memset(host, 0x5a, sizeof host);
  if (g->copy_async(dev, host, sizeof host, &ev, NULL) != hipObjSuccess)
    return NULL;
  hipObjOpError_t e;
  while ((e = g->event_query(ev, NULL)) == hipObjBusy)
    busy++;
  g->event_destroy(ev);
  void *p = NULL;
  bool pinned = g->host_alloc(8192, &p, NULL) == hipObjSuccess;
  g->host_free(p);
  return e == hipObjSuccess && busy == 2 && dev[63] == 0x5a && pinned ? dev
                                                                      : NULL;
}

static void check_ops(void)
{
  unsigned char *dev = dlsym(stub, "stub_device_memory");
  int n = 0, d = -1;
  char bus[32] = "";
  check(g->device_count(&n, NULL) == hipObjSuccess && n == 1, "device_count");
  check(g->current_device(&d, NULL) == hipObjSuccess && d == 0 &&
            stub_int("stub_ctx_pushes") == 1,
        "current_device makes the primary context current");
  check(g->pci_bus_id(0, bus, sizeof bus, NULL) == hipObjSuccess &&
            strcmp(bus, "0000:3b:00.0") == 0,
        "pci_bus_id: \"00000000:3B:00.0\" becomes \"0000:3b:00.0\"");

  enum ho_mem_kind kind = HO_MEM_HOST;
  int native = 0;
  char *heap = malloc(64);
  check(g->classify(dev + 100, &kind, &d, NULL) == hipObjSuccess &&
            kind == HO_MEM_DEVICE && d == 0,
        "classify: device memory");
  check(g->classify(heap, &kind, &d, NULL) == hipObjSuccess &&
            kind == HO_MEM_HOST && d == -1,
        "classify: unknown memory is host memory");
  uintptr_t base = 0;
  size_t size = 0;
  check(g->alloc_range(dev + 5000, &base, &size, NULL) == hipObjSuccess &&
            base == (uintptr_t)dev && size == 1 << 16,
        "alloc_range");
  check(g->alloc_range(heap, &base, &size, &native) == hipObjInvalidValue &&
            native == 500,
        "alloc_range of host memory: invalid, with the driver's error");

  int fd = -1;
  uint64_t off = 0;
  check(g->export_dmabuf(dev + 4096 + 8, 100, &fd, &off, NULL) ==
                hipObjSuccess &&
            fd >= 0 && off == 8 && stub_u64("stub_export_start") ==
                                       (uintptr_t)dev + 4096 &&
            stub_u64("stub_export_size") == 4096,
        "export_dmabuf: one page, offset 8");
  close(fd);
  check(g->export_dmabuf(dev + 4000, 200, &fd, &off, NULL) == hipObjSuccess &&
            off == 4000 && stub_u64("stub_export_start") == (uintptr_t)dev &&
            stub_u64("stub_export_size") == 8192,
        "export_dmabuf: a range across a page boundary takes both pages");
  close(fd);
  native = 0;
  check(g->export_dmabuf(heap, 64, &fd, &off, &native) == hipObjInvalidValue &&
            native == 1,
        "export_dmabuf of host memory fails with the driver's error");
  free(heap);

  pthread_t t;
  void *ret = NULL;
  pthread_create(&t, NULL, fresh_copy, dev);
  pthread_join(t, &ret);
  check(ret == dev, "a thread with no context: copy, busy twice, done; "
                    "pinned memory");
  check(g->flush_rdma_writes(NULL) == hipObjSuccess &&
            stub_int("stub_flushes") >= 1,
        "flush_rdma_writes");
}

int main(void)
{
  const char *mode = getenv("STUB_EXPECT");
  char text[1024];
  if (!mode) {
    printf("SKIP: run by ctest, with STUB_EXPECT and LD_LIBRARY_PATH set\n");
    return 77;
  }
  hipObjOpError_t e = load_capturing(text, sizeof text);
  /* The loader closes a library it rejects: open it again to look. */
  stub = dlopen("libcuda.so.1", RTLD_NOW);
  check(stub && dlsym(stub, "stub_device_memory"),
        "the stand-in libcuda.so.1 is the one loaded");
  if (!stub) {
    printf("%d passed, %d failed\n", passed, failed);
    return 1;
  }
  if (strcmp(mode, "missing") == 0) {
    check(e == hipObjNotSupported, "a missing entry point: not supported");
    check(count_lines(text) == 1 && strstr(text, "cuMemcpyAsync"),
          "one warning line that names it");
    printf("     it said: %s", text);
    check(load_capturing(text, sizeof text) == hipObjNotSupported &&
              text[0] == '\0',
          "said once: a second load is quiet");
  } else {
    check(e == hipObjSuccess && text[0] == '\0', "loads, quietly");
    int v1 = stub_int("stub_v1_calls"), v2 = stub_int("stub_v2_calls");
    printf("     cuGetProcAddress: %d calls, _v2: %d calls, highest version "
           "asked %d\n", v1, v2, stub_int("stub_proc_address_version"));
    if (strcmp(mode, "v2") == 0)
      check(v2 >= 20 && v1 == 0, "resolved with cuGetProcAddress_v2");
    else if (strcmp(mode, "v1") == 0)
      check(v1 >= 20 && v2 == 0, "resolved with cuGetProcAddress");
    else
      check(v1 == 0 && v2 == 0, "resolved with dlsym");
    if (strcmp(mode, "dlsym") != 0)
      check(stub_int("stub_proc_address_version") == 11070,
            "each entry asked for at its own ABI version (at most 11.7)");
    if (e == hipObjSuccess)
      check_ops();
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
