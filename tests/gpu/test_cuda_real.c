/* SPDX-License-Identifier: MIT */
/* The CUDA runtime of the GPU seam on a real NVIDIA GPU. Memory comes from
 * the CUDA runtime API, as an application's would (cudaMalloc,
 * cudaMallocHost, cudaMallocManaged, and malloc), and every entry of the
 * seam is checked against it: classification, allocation ranges, dma-buf
 * export, copies with event polling, a copy held up behind a spinning kernel
 * (stall_kernel.cu) and then released, flushes, pinned host memory; several
 * from a thread that has no CUDA context of its own.
 *
 * Prints one line per check and "N passed, N failed, N skipped"; exits 0,
 * 1 on a failure, or 77 when there is no GPU (with the reason). */
#include <cuda_runtime_api.h>
#include <ctype.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "platform/gpu.h"

int ho_test_launch_spin(const volatile int *flag, long long max_cycles,
                        int *timed_out); /* stall_kernel.cu */

#define DEV_SIZE ((size_t)(1u << 20) + 100) /* not a multiple of a page */

static int passed, failed, skipped, failures_in_test;
static const struct ho_gpu_ops *g;

#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      printf("  line %d: expected %s\n", __LINE__, #cond);                     \
      failures_in_test++;                                                      \
    }                                                                          \
  } while (0)
#define EXPECT_OK(call)                                                        \
  do {                                                                         \
    hipObjOpError_t e_ = (call);                                               \
    if (e_ != hipObjSuccess) {                                                 \
      printf("  line %d: %s returned %d\n", __LINE__, #call, (int)e_);         \
      failures_in_test++;                                                      \
    }                                                                          \
  } while (0)

static void run(const char *name, void (*fn)(void))
{
  failures_in_test = 0;
  printf("---- %s\n", name);
  fflush(stdout);
  fn();
  if (failures_in_test < 0) {
    skipped++;
    printf("SKIP %s\n", name);
  } else if (failures_in_test) {
    failed++;
    printf("FAIL %s\n", name);
  } else {
    passed++;
    printf("PASS %s\n", name);
  }
  fflush(stdout);
}

static void skip_test(const char *why)
{
  printf("  %s\n", why);
  failures_in_test = -1000;
}

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Polls ev every 100 us until it is done, fails, or `seconds` pass. */
static hipObjOpError_t wait_event(struct ho_gpu_event *ev, double seconds,
                                  int *busy)
{
  double end = now_s() + seconds;
  hipObjOpError_t e;
  int n = 0;
  while ((e = g->event_query(ev, NULL)) == hipObjBusy && now_s() < end) {
    n++;
    usleep(100);
  }
  if (busy)
    *busy = n;
  return e;
}

/* Runs fn(arg) on a new thread, which starts with no CUDA context. */
static void on_fresh_thread(void *(*fn)(void *), void *arg)
{
  pthread_t t;
  if (pthread_create(&t, NULL, fn, arg) != 0) {
    printf("  pthread_create failed\n");
    failures_in_test++;
    return;
  }
  pthread_join(t, NULL);
}

/* ---- memory the application allocated ---------------------------------- */

static char *d_mem;     /* cudaMalloc */
static char *h_pinned;  /* cudaMallocHost */
static char *h_malloc;  /* malloc */
static char *u_managed; /* cudaMallocManaged */

static int alloc_all(void)
{
  if (cudaMalloc((void **)&d_mem, DEV_SIZE) != cudaSuccess ||
      cudaMallocHost((void **)&h_pinned, DEV_SIZE) != cudaSuccess ||
      cudaMallocManaged((void **)&u_managed, 1 << 20, cudaMemAttachGlobal) !=
          cudaSuccess || !(h_malloc = malloc(DEV_SIZE)))
    return -1;
  return 0;
}

/* ---- checks -------------------------------------------------------------- */

static void *current_device_thread(void *arg)
{
  int *dev = arg;
  if (g->current_device(dev, NULL) != hipObjSuccess)
    *dev = -2;
  return NULL;
}

static void t_devices(void)
{
  int count = 0, dev = -1, fresh = -1;
  char bus[32] = "", cuda_bus[32] = "";
  EXPECT_OK(g->device_count(&count, NULL));
  EXPECT(count >= 1);
  EXPECT_OK(g->current_device(&dev, NULL));
  EXPECT(dev == 0);
  on_fresh_thread(current_device_thread, &fresh);
  EXPECT(fresh == 0);
  EXPECT_OK(g->pci_bus_id(0, bus, sizeof bus, NULL));
  cudaDeviceGetPCIBusId(cuda_bus, sizeof cuda_bus, 0);
  for (char *c = cuda_bus; *c; c++)
    *c = (char)tolower((unsigned char)*c);
  printf("  %d device(s); device 0 at %s (CUDA runtime says %s)\n", count, bus,
         cuda_bus);
  EXPECT(strlen(bus) == 12);
  EXPECT(strcmp(bus, cuda_bus) == 0 || strstr(cuda_bus, bus + 5) != NULL);
  EXPECT(g->pci_bus_id(count, bus, sizeof bus, NULL) != hipObjSuccess);
}

struct kind_case {
  const char *what;
  const void *ptr;
  enum ho_mem_kind kind;
  int dev;
};

static int classify_all(const struct kind_case *cases, size_t n, bool quiet)
{
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    enum ho_mem_kind kind = (enum ho_mem_kind)-1;
    int dev = -9, native = 0;
    hipObjOpError_t e = g->classify(cases[i].ptr, &kind, &dev, &native);
    bool ok = e == hipObjSuccess && kind == cases[i].kind && dev == cases[i].dev;
    if (!quiet || !ok)
      printf("  %-22s -> error %d (native %d), kind %d, device %d%s\n",
             cases[i].what, (int)e, native, (int)kind, dev, ok ? "" : "  WRONG");
    bad += !ok;
  }
  return bad;
}

static struct kind_case kind_cases[7];
static size_t n_kind_cases;

static void *classify_thread(void *arg)
{
  int *bad = arg;
  *bad = classify_all(kind_cases, n_kind_cases, true);
  return NULL;
}

static void t_classify(void)
{
  int on_stack = 0, bad_fresh = -1;
  struct kind_case cases[] = {
      {"cudaMalloc", d_mem, HO_MEM_DEVICE, 0},
      {"cudaMalloc + 12345", d_mem + 12345, HO_MEM_DEVICE, 0},
      {"cudaMallocHost", h_pinned, HO_MEM_HOST_PINNED, 0},
      {"cudaMallocHost + 4097", h_pinned + 4097, HO_MEM_HOST_PINNED, 0},
      {"malloc", h_malloc, HO_MEM_HOST, -1},
      {"cudaMallocManaged", u_managed, HO_MEM_MANAGED, 0},
      {"stack", &on_stack, HO_MEM_HOST, -1},
  };
  memcpy(kind_cases, cases, sizeof cases);
  n_kind_cases = sizeof cases / sizeof cases[0];
  EXPECT(classify_all(cases, n_kind_cases, false) == 0);
  on_fresh_thread(classify_thread, &bad_fresh);
  printf("  from a thread with no context: %d wrong\n", bad_fresh);
  EXPECT(bad_fresh == 0);
}

static void t_alloc_range(void)
{
  uintptr_t base = 0;
  size_t size = 0;
  int native = 0;
  EXPECT_OK(g->alloc_range(d_mem + 4096 + 7, &base, &size, NULL));
  printf("  cudaMalloc(%zu): base %+td from the pointer, size %zu\n", DEV_SIZE,
         (char *)base - d_mem, size);
  EXPECT(base == (uintptr_t)d_mem);
  EXPECT(size >= DEV_SIZE);
  hipObjOpError_t e = g->alloc_range(h_pinned + 5, &base, &size, &native);
  printf("  cudaMallocHost: error %d (native %d), base %+td, size %zu\n",
         (int)e, native, (char *)base - h_pinned, size);
  native = 0;
  e = g->alloc_range(h_malloc, &base, &size, &native);
  printf("  malloc: error %d (native %d)\n", (int)e, native);
  EXPECT(e != hipObjSuccess);
}

static void describe_fd(int fd)
{
  char path[64], target[256] = "";
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(path, target, sizeof target - 1);
  if (n > 0)
    target[n] = '\0';
  printf("  fd %d -> %s\n", fd, target);
}

struct export_result {
  hipObjOpError_t e;
  int native, fd;
  uint64_t off;
};

static void *export_thread(void *arg)
{
  struct export_result *r = arg;
  r->e = g->export_dmabuf(d_mem + 8192 + 16, 4096, &r->fd, &r->off, &r->native);
  return NULL;
}

static void t_export_dmabuf(void)
{
  int fd = -1, native = 0;
  uint64_t off = 0;
  long page = sysconf(_SC_PAGESIZE);
  hipObjOpError_t e = g->export_dmabuf(d_mem + 4096 + 8, 100, &fd, &off, &native);
  printf("  [d+4104, +100): error %d (native %d), fd %d, offset %llu\n", (int)e,
         native, fd, (unsigned long long)off);
  if (e == hipObjNotSupported) {
    skip_test("dma-buf export is not supported by this driver/kernel");
    return;
  }
  EXPECT(e == hipObjSuccess);
  if (e != hipObjSuccess)
    return;
  EXPECT(fd >= 0);
  EXPECT(off == (uint64_t)((4096 + 8) % page));
  describe_fd(fd);
  close(fd);

  /* The whole allocation, whose size is not a multiple of a page. */
  fd = -1;
  e = g->export_dmabuf(d_mem, DEV_SIZE, &fd, &off, &native);
  printf("  whole allocation (%zu bytes): error %d (native %d), offset %llu\n",
         DEV_SIZE, (int)e, native, (unsigned long long)off);
  EXPECT(e == hipObjSuccess && off == 0);
  if (fd >= 0)
    close(fd);

  struct export_result r = {hipObjInternalError, 0, -1, 0};
  on_fresh_thread(export_thread, &r);
  printf("  from a thread with no context: error %d (native %d), offset %llu\n",
         (int)r.e, r.native, (unsigned long long)r.off);
  EXPECT(r.e == hipObjSuccess && r.off == (uint64_t)((8192 + 16) % page));
  if (r.fd >= 0)
    close(r.fd);
  e = g->export_dmabuf(h_malloc, 4096, &fd, &off, &native);
  printf("  malloc memory: error %d (native %d)\n", (int)e, native);
  EXPECT(e != hipObjSuccess);
}

static void fill(char *p, size_t n, unsigned seed)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (char)(i * 31 + seed);
}

/* Copies src to dst with the seam and waits; returns the busy polls. */
static int seam_copy(void *dst, const void *src, size_t n)
{
  struct ho_gpu_event *ev = NULL;
  int busy = -1;
  EXPECT_OK(g->copy_async(dst, src, n, &ev, NULL));
  if (!ev)
    return -1;
  EXPECT(wait_event(ev, 10.0, &busy) == hipObjSuccess);
  g->event_destroy(ev);
  return busy;
}

static void t_copies(void)
{
  char *back = malloc(DEV_SIZE);
  fill(h_pinned, DEV_SIZE, 1);
  int busy = seam_copy(d_mem, h_pinned, DEV_SIZE); /* pinned -> device */
  cudaMemcpy(back, d_mem, DEV_SIZE, cudaMemcpyDeviceToHost);
  EXPECT(memcmp(back, h_pinned, DEV_SIZE) == 0);
  printf("  pinned -> device: %d busy polls\n", busy);

  memset(h_malloc, 0, DEV_SIZE);
  busy = seam_copy(h_malloc, d_mem, DEV_SIZE); /* device -> pageable */
  EXPECT(memcmp(h_malloc, h_pinned, DEV_SIZE) == 0);
  printf("  device -> malloc: %d busy polls\n", busy);

  fill(h_malloc, 4096, 7);
  busy = seam_copy(d_mem + 100, h_malloc, 4096); /* pageable -> device */
  cudaMemcpy(back, d_mem + 100, 4096, cudaMemcpyDeviceToHost);
  EXPECT(memcmp(back, h_malloc, 4096) == 0);
  free(back);
}

struct query_result {
  struct ho_gpu_event *ev;
  hipObjOpError_t e;
};

static void *query_thread(void *arg)
{
  struct query_result *q = arg;
  q->e = g->event_query(q->ev, NULL);
  return NULL;
}

static void t_stalled_copy(void)
{
  volatile int *flag = NULL;
  int *timed_out = NULL;
  struct ho_gpu_event *ev = NULL;
  if (cudaHostAlloc((void **)&flag, sizeof *flag, cudaHostAllocMapped) !=
          cudaSuccess ||
      cudaHostAlloc((void **)&timed_out, sizeof *timed_out,
                    cudaHostAllocMapped) != cudaSuccess) {
    skip_test("cudaHostAlloc(mapped) failed");
    return;
  }
  *flag = 0;
  *timed_out = 0;
  fill(h_pinned, DEV_SIZE, 3);
  cudaMemcpy(d_mem, h_pinned, DEV_SIZE, cudaMemcpyHostToDevice);
  memset(h_pinned, 0xee, DEV_SIZE);

  /* ~20 s of GPU clock at most: the test releases it long before. */
  EXPECT(ho_test_launch_spin(flag, 40000000000LL, timed_out) == 0);
  EXPECT_OK(g->copy_async(h_pinned, d_mem, DEV_SIZE, &ev, NULL));
  int busy = 0;
  hipObjOpError_t e = wait_event(ev, 0.3, &busy);
  printf("  held for 0.3 s: %s after %d polls; first byte 0x%02x\n",
         e == hipObjBusy ? "busy" : "NOT busy", busy,
         (unsigned char)h_pinned[0]);
  EXPECT(e == hipObjBusy);
  EXPECT((unsigned char)h_pinned[0] == 0xee &&
         (unsigned char)h_pinned[DEV_SIZE - 1] == 0xee);
  struct query_result q = {ev, hipObjInternalError};
  on_fresh_thread(query_thread, &q);
  printf("  queried from a thread with no context: %d\n", (int)q.e);
  EXPECT(q.e == hipObjBusy);

  __atomic_store_n((int *)flag, 1, __ATOMIC_SEQ_CST); /* release the kernel */
  double t0 = now_s();
  e = wait_event(ev, 10.0, &busy);
  printf("  released: done in %.3f ms after %d polls; kernel timed out: %d\n",
         (now_s() - t0) * 1e3, busy, *timed_out);
  EXPECT(e == hipObjSuccess);
  EXPECT(*timed_out == 0);
  char *want = malloc(DEV_SIZE);
  fill(want, DEV_SIZE, 3);
  EXPECT(memcmp(h_pinned, want, DEV_SIZE) == 0);
  free(want);
  g->event_destroy(ev);
  cudaFreeHost((void *)flag);
  cudaFreeHost(timed_out);
}

static void t_host_alloc(void)
{
  void *p = NULL;
  enum ho_mem_kind kind = HO_MEM_HOST;
  int dev = -1;
  EXPECT_OK(g->host_alloc(DEV_SIZE, &p, NULL));
  if (!p)
    return;
  EXPECT(((uintptr_t)p & 4095) == 0);
  EXPECT_OK(g->classify(p, &kind, &dev, NULL));
  EXPECT(kind == HO_MEM_HOST_PINNED);
  fill(p, DEV_SIZE, 9);
  seam_copy(d_mem, p, DEV_SIZE);
  memset(p, 0, DEV_SIZE);
  seam_copy(p, d_mem, DEV_SIZE);
  char *want = malloc(DEV_SIZE);
  fill(want, DEV_SIZE, 9);
  EXPECT(memcmp(p, want, DEV_SIZE) == 0);
  free(want);
  g->host_free(p);
}

static void *flush_thread(void *arg)
{
  hipObjOpError_t *e = arg;
  *e = g->flush_rdma_writes(NULL);
  return NULL;
}

static void t_flush(void)
{
  int native = 0;
  hipObjOpError_t e = g->flush_rdma_writes(&native), fresh = hipObjInternalError;
  printf("  flush: error %d (native %d)\n", (int)e, native);
  EXPECT(e == hipObjSuccess);
  on_fresh_thread(flush_thread, &fresh);
  printf("  from a thread with no context: %d\n", (int)fresh);
  EXPECT(fresh == hipObjSuccess);
}

int main(void)
{
  int count = 0;
  cudaError_t ce = cudaGetDeviceCount(&count);
  if (ce != cudaSuccess || count == 0) {
    printf("SKIP: no CUDA device (%s)\n", cudaGetErrorString(ce));
    return 77;
  }
  hipObjOpError_t e = ho_gpu_cuda_load(&g);
  if (e != hipObjSuccess) {
    printf("FAIL: the CUDA runtime has a device but ho_gpu_cuda_load "
           "returned %d\n", (int)e);
    return 1;
  }
  cudaSetDevice(0);
  cudaFree(NULL); /* the runtime's primary context, current on this thread */
  if (alloc_all() != 0) {
    printf("FAIL: could not allocate test memory\n");
    return 1;
  }
  run("devices", t_devices);
  run("classify", t_classify);
  run("alloc_range", t_alloc_range);
  run("export_dmabuf", t_export_dmabuf);
  run("copies", t_copies);
  run("stalled_copy", t_stalled_copy);
  run("host_alloc", t_host_alloc);
  run("flush_rdma_writes", t_flush);
  cudaFree(d_mem);
  cudaFreeHost(h_pinned);
  cudaFree(u_managed);
  free(h_malloc);
  printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed ? 1 : 0;
}
