/* SPDX-License-Identifier: MIT */
/* hipObject end to end on a real NVIDIA GPU: the library with its real CUDA
 * runtime (gpu_cuda.c, libcuda through dlopen), the simulated RC fabric
 * (fake_verbs_ops) and the simulated peer (the reference engine, sim_peer),
 * in one process. Memory comes from the CUDA runtime API, as an
 * application's would.
 *
 *   classify     hipObjBufRegister on cudaMalloc, cudaMallocHost, malloc and
 *                managed memory (and the refusals for device memory)
 *   staged_get   device memory the fabric "cannot reach" (reg_mr fails once,
 *                as on a NIC without peer memory): the server RDMA-writes the
 *                staging buffer, the library copies it to the GPU
 *   staged_put   the library copies the GPU's bytes to staging, the server
 *                RDMA-reads them
 *   stalled_copy a kernel spinning on a flag in mapped host memory holds the
 *                calling thread's per-thread stream, so the library's staging
 *                copy misses HIPOBJ_STAGE_TIMEOUT_MS: abandoned, the buffer
 *                busy, and released once the flag is set and the copy lands
 *   shutdown_leak a copy still stalled at hipObjShutdown() is leaked with its
 *                staging memory, which the late copy then writes
 *
 * Bytes are checked where they land (cudaMemcpy from the GPU, the peer's
 * object) and against what moved them (the server NIC's counters and the
 * engine's). Prints one line per check and "N passed, N failed, N skipped";
 * exits 0, 1 on a failure, 77 when there is no GPU (with the reason). */
#include <cuda_runtime_api.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fakes/fake_verbs.h"
#include "fakes/sim_peer.h"
#include "fakes/world.h"
#include "hipobj.h"
#include "instance.h"
#include "platform/gpu.h"

int ho_test_launch_spin(const volatile int *flag, long long max_cycles,
                        int *timed_out); /* stall_kernel.cu */

#define BUF_SIZE ((size_t)8 << 20)            /* the registered GPU buffer */
#define OBJ_SIZE (((size_t)16 << 20) + 4099)  /* the peer's object */
#define STAGE_TIMEOUT_MS 250u

static int passed, failed, skipped, failures_in_test;
static const struct ho_gpu_ops *g;
static struct world w;
static struct sim_peer peer;

#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      printf("  line %d: expected %s\n", __LINE__, #cond);                     \
      failures_in_test++;                                                      \
    }                                                                          \
  } while (0)
#define EXPECT_ERR(call, want)                                                 \
  do {                                                                         \
    hipObjError_t e_ = (call);                                                 \
    if (e_.opError != (want)) {                                                \
      printf("  line %d: %s returned %d (%s, native %d), expected %s\n",       \
             __LINE__, #call, (int)e_.opError,                                 \
             hipObjGetErrorString(e_.opError), e_.hipError, #want);            \
      failures_in_test++;                                                      \
    }                                                                          \
  } while (0)
#define EXPECT_CUDA(call)                                                      \
  do {                                                                         \
    cudaError_t c_ = (call);                                                   \
    if (c_ != cudaSuccess) {                                                   \
      printf("  line %d: %s: %s\n", __LINE__, #call, cudaGetErrorString(c_));  \
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

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (uint8_t)(i * 131u + seed + (i >> 12));
}

/* The entry registered at p (a new reference), from the current instance. */
static struct ho_buf *entry(const void *p)
{
  struct ho_instance *inst = ho_instance_get();
  if (!inst)
    return NULL;
  struct ho_buf *b = ho_buffers_find(inst->buffers, p);
  ho_instance_put(inst);
  return b;
}

static const char *kind_name(int kind)
{
  switch (kind) {
  case HO_BUF_HOST: return "host";
  case HO_BUF_DIRECT: return "direct";
  case HO_BUF_STAGED: return "staged";
  default: return "?";
  }
}

static unsigned abandoned_count(void)
{
  struct ho_instance *inst = ho_instance_get();
  if (!inst)
    return 0;
  unsigned n = ho_abandoned_count(inst->abandoned);
  ho_instance_put(inst);
  return n;
}

/* Whether an abandoned copy of p still runs (collecting finished ones). */
static bool abandoned_busy(const void *p)
{
  struct ho_instance *inst = ho_instance_get();
  struct ho_buf *b = inst ? ho_buffers_find(inst->buffers, p) : NULL;
  bool busy = b && ho_abandoned_busy(inst->abandoned, b);
  ho_buf_put(b);
  if (inst)
    ho_instance_put(inst);
  return busy;
}

struct counts {
  struct fake_dev_stats nic; /* the server's NIC */
  struct ho_engine_stats eng;
};

static void counts(struct counts *c)
{
  memset(c, 0, sizeof *c);
  fake_device_stats(WORLD_SERVER_NIC, &c->nic);
  ho_engine_get_stats(peer.engine, &c->eng);
}

static hipObjError_t xfer(int op, void *buf, size_t n, off_t off,
                          uint64_t object_off)
{
  struct sim_request r;
  sim_request_init(&r, &peer, op, object_off, n);
  return op == HIPOBJ_RDMA_OP_GET ? hipObjGet(NULL, buf, n, off, &sim_ops, &r)
                                  : hipObjPut(NULL, buf, n, off, &sim_ops, &r);
}

/* Registers p staged: the direct registration's reg_mr fails as on a NIC
 * that cannot reach GPU memory (the fabric has no dma-buf by default). */
static hipObjOpError_t register_staged(void *p, size_t n)
{
  fake_verb_fail("reg_mr", 0, 1, EFAULT);
  hipObjError_t e = hipObjBufRegister(p, n);
  fake_verb_fail("reg_mr", 0, 0, 0);
  return e.opError;
}

/* ---- memory the application allocated ---------------------------------- */

static uint8_t *d_buf;   /* cudaMalloc(BUF_SIZE) */
static uint8_t *h_check; /* malloc(BUF_SIZE): what the GPU holds, read back */
static uint8_t *h_want;  /* malloc(BUF_SIZE) */

/* Reads the whole GPU buffer back into h_check. */
static void read_back(void)
{
  memset(h_check, 0, BUF_SIZE);
  EXPECT_CUDA(cudaMemcpy(h_check, d_buf, BUF_SIZE, cudaMemcpyDeviceToHost));
}

/* ---- checks -------------------------------------------------------------- */

static void t_init(void)
{
  struct ho_instance *inst = ho_instance_get();
  EXPECT(inst != NULL);
  if (!inst)
    return;
  printf("  runtime %s, GPU %d at %s, NIC %s\n", inst->plat.gpu->name,
         inst->config.gpu, inst->config.gpu_bus_id, inst->config.nic);
  EXPECT(strcmp(inst->plat.gpu->name, "cuda") == 0);
  EXPECT(inst->config.gpu == 0);
  EXPECT(strlen(inst->config.gpu_bus_id) == 12);
  EXPECT(strcmp(inst->config.nic, WORLD_CLIENT_NIC) == 0);
  ho_instance_put(inst);
}

/* What hipObjBufRegister makes of p; deregisters it again. */
static hipObjOpError_t register_outcome(const char *what, void *p, size_t n,
                                        int *kind, bool *dmabuf)
{
  hipObjError_t e = hipObjBufRegister(p, n);
  *kind = -1;
  *dmabuf = false;
  struct ho_buf *b = e.opError == hipObjSuccess ? entry(p) : NULL;
  if (b) {
    *kind = (int)b->kind;
    *dmabuf = b->dmabuf;
    if (b->kind != HO_BUF_STAGED && b->token_addr != (uintptr_t)p) {
      printf("  %s: token address is not the buffer's\n", what);
      failures_in_test++;
    }
    ho_buf_put(b);
  }
  printf("  %-34s -> %-24s %s%s\n", what, hipObjGetErrorString(e.opError),
         b ? kind_name(*kind) : "", *dmabuf ? " (dma-buf MR)" : "");
  if (e.opError == hipObjSuccess)
    EXPECT_ERR(hipObjBufDeregister(p), hipObjSuccess);
  return e.opError;
}

static void t_classify(void)
{
  uint8_t *pinned = NULL, *managed = NULL, *pageable = malloc(BUF_SIZE);
  int kind;
  bool dmabuf;
  EXPECT_CUDA(cudaMallocHost((void **)&pinned, BUF_SIZE));
  EXPECT_CUDA(cudaMallocManaged((void **)&managed, 1 << 20, cudaMemAttachGlobal));
  if (!pinned || !managed || !pageable) {
    failures_in_test++;
    goto out;
  }
  /* cudaMalloc: GPU-direct. The fabric refuses dma-buf (as rxe), so the
   * library exports one (a real fd from the driver), fails to register it,
   * closes it, and registers the memory plainly. */
  EXPECT(register_outcome("cudaMalloc", d_buf, BUF_SIZE, &kind, &dmabuf) ==
         hipObjSuccess);
  EXPECT(kind == HO_BUF_DIRECT && !dmabuf);
  /* With dma-buf on the fabric the driver's fd is registered (registration
   * only: the fake fabric would treat the IOVA as host memory). */
  fake_fabric_set_dmabuf(true);
  EXPECT(register_outcome("cudaMalloc, fabric with dma-buf", d_buf + 4096,
                          BUF_SIZE - 4096, &kind, &dmabuf) == hipObjSuccess);
  fake_fabric_set_dmabuf(false);
  EXPECT(kind == HO_BUF_DIRECT);
  if (!dmabuf)
    printf("  (dma-buf export not available here: plain MR)\n");
  /* The NIC cannot reach GPU memory: staged. */
  hipObjOpError_t e = register_staged(d_buf, BUF_SIZE);
  struct ho_buf *b = e == hipObjSuccess ? entry(d_buf) : NULL;
  printf("  %-34s -> %-24s %s\n", "cudaMalloc, reg_mr refused",
         hipObjGetErrorString(e), b ? kind_name((int)b->kind) : "");
  EXPECT(b && b->kind == HO_BUF_STAGED && b->staging &&
         b->token_addr == (uintptr_t)b->staging);
  if (b) {
    enum ho_mem_kind sk = HO_MEM_HOST;
    int sdev = -2;
    EXPECT(g->classify(b->staging, &sk, &sdev, NULL) == hipObjSuccess);
    EXPECT(sk == HO_MEM_HOST_PINNED); /* the staging buffer is pinned */
    ho_buf_put(b);
    EXPECT_ERR(hipObjBufDeregister(d_buf), hipObjSuccess);
  }
  EXPECT(register_outcome("cudaMallocHost", pinned, BUF_SIZE, &kind,
                          &dmabuf) == hipObjSuccess);
  EXPECT(kind == HO_BUF_HOST);
  EXPECT(register_outcome("malloc", pageable, BUF_SIZE, &kind, &dmabuf) ==
         hipObjSuccess);
  EXPECT(kind == HO_BUF_HOST);
  EXPECT(register_outcome("cudaMallocManaged", managed, 1 << 20, &kind,
                          &dmabuf) == hipObjNotSupported);
  /* Device memory: within one allocation, and not as host memory. */
  EXPECT(register_outcome("cudaMalloc, past its allocation", d_buf + 4096,
                          BUF_SIZE, &kind, &dmabuf) == hipObjInvalidValue);
  hipObjError_t he = hipObjBufRegisterHost(d_buf, 4096);
  printf("  %-34s -> %s\n", "cudaMalloc as host memory",
         hipObjGetErrorString(he.opError));
  EXPECT(he.opError == hipObjInvalidValue);
out:
  cudaFreeHost(pinned);
  cudaFree(managed);
  free(pageable);
}

/* A staged GET of n bytes of the object from object_off into the buffer at
 * off; the rest of the buffer must keep `old`. */
static void staged_get(size_t n, off_t off, uint64_t object_off, uint8_t old)
{
  struct counts c0, c1;
  EXPECT_CUDA(cudaMemset(d_buf, old, BUF_SIZE));
  EXPECT_CUDA(cudaDeviceSynchronize());
  counts(&c0);
  double t0 = now_s();
  EXPECT_ERR(xfer(HIPOBJ_RDMA_OP_GET, d_buf, n, off, object_off), hipObjSuccess);
  double dt = now_s() - t0;
  counts(&c1);
  read_back();
  size_t bad = 0, outside = 0;
  for (size_t i = 0; i < n; i++)
    bad += h_check[(size_t)off + i] != peer.object[object_off + i];
  for (size_t i = 0; i < BUF_SIZE; i++)
    if (i < (size_t)off || i >= (size_t)off + n)
      outside += h_check[i] != old;
  uint64_t wrote = c1.nic.bytes_written - c0.nic.bytes_written;
  uint64_t eng = c1.eng.bytes_written - c0.eng.bytes_written;
  printf("  GET %zu bytes -> GPU+%lld: server NIC wrote %llu, engine %llu; "
         "%zu wrong bytes in range, %zu changed outside (%.1f ms)\n", n,
         (long long)off, (unsigned long long)wrote, (unsigned long long)eng,
         bad, outside, dt * 1e3);
  EXPECT(wrote == n && eng == n);
  EXPECT(bad == 0 && outside == 0);
}

struct thread_get {
  hipObjError_t e;
  size_t n;
};

static void *get_thread(void *arg)
{
  struct thread_get *t = arg;
  t->e = xfer(HIPOBJ_RDMA_OP_GET, d_buf, t->n, 0, 0);
  return NULL;
}

static void t_staged_get(void)
{
  EXPECT(register_staged(d_buf, BUF_SIZE) == hipObjSuccess);
  struct ho_buf *b = entry(d_buf);
  EXPECT(b && b->kind == HO_BUF_STAGED);
  ho_buf_put(b);
  staged_get(BUF_SIZE, 0, 4099, 0xee);           /* the whole buffer */
  staged_get(1000003, 12345, 7777777, 0x11);      /* unaligned, inside */
  staged_get(4096, BUF_SIZE - 4096, 123, 0x22);   /* one page at the end */
  /* From a thread that has no CUDA context: the runtime finds the device
   * that owns the buffer. */
  struct thread_get t = {{hipObjInternalError, 0}, 65536};
  pthread_t th;
  EXPECT_CUDA(cudaMemset(d_buf, 0x33, BUF_SIZE));
  EXPECT_CUDA(cudaDeviceSynchronize());
  if (pthread_create(&th, NULL, get_thread, &t) == 0) {
    pthread_join(th, NULL);
    read_back();
    printf("  GET from a thread with no context: %s, bytes %s\n",
           hipObjGetErrorString(t.e.opError),
           memcmp(h_check, peer.object, t.n) == 0 ? "right" : "WRONG");
    EXPECT(t.e.opError == hipObjSuccess);
    EXPECT(memcmp(h_check, peer.object, t.n) == 0);
    EXPECT(h_check[t.n] == 0x33);
  } else {
    failures_in_test++;
  }
}

static void t_staged_put(void)
{
  struct counts c0, c1;
  struct ho_buf *b = entry(d_buf);
  EXPECT(b && b->kind == HO_BUF_STAGED);
  if (!b)
    return;
  /* The GPU holds h_want; staging holds something else, so only the
   * library's device-to-staging copy can put the right bytes there. */
  fill(h_want, BUF_SIZE, 5);
  EXPECT_CUDA(cudaMemcpy(d_buf, h_want, BUF_SIZE, cudaMemcpyHostToDevice));
  memset(b->staging, 0xa5, BUF_SIZE);
  const struct { size_t n; off_t off; uint64_t object_off; } cases[] = {
      {BUF_SIZE, 0, 0},
      {777777, 4097, 9999999},
      {4096, 0, OBJ_SIZE - 4096},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t n = cases[i].n;
    memset(peer.object + cases[i].object_off, 0, n);
    unsigned puts = atomic_load(&peer.puts_committed);
    counts(&c0);
    double t0 = now_s();
    EXPECT_ERR(xfer(HIPOBJ_RDMA_OP_PUT, d_buf, n, cases[i].off,
                    cases[i].object_off), hipObjSuccess);
    double dt = now_s() - t0;
    counts(&c1);
    uint64_t read = c1.nic.bytes_read - c0.nic.bytes_read;
    uint64_t eng = c1.eng.bytes_read - c0.eng.bytes_read;
    size_t bad = 0;
    for (size_t j = 0; j < n; j++)
      bad += peer.object[cases[i].object_off + j] != h_want[cases[i].off + j];
    printf("  PUT %zu bytes from GPU+%lld: server NIC read %llu, engine %llu, "
           "committed %u; %zu wrong bytes in the object (%.1f ms)\n", n,
           (long long)cases[i].off, (unsigned long long)read,
           (unsigned long long)eng, atomic_load(&peer.puts_committed) - puts,
           bad, dt * 1e3);
    EXPECT(read == n && eng == n);
    EXPECT(atomic_load(&peer.puts_committed) == puts + 1);
    EXPECT(bad == 0);
  }
  /* hipObjBufSync, as an application driving tokens would call it. */
  memset(b->staging, 0, BUF_SIZE);
  EXPECT_ERR(hipObjBufSync(d_buf, 300001, 5, HIPOBJ_SYNC_TO_HOST), hipObjSuccess);
  EXPECT(memcmp((uint8_t *)b->staging + 5, h_want + 5, 300001) == 0);
  EXPECT(((uint8_t *)b->staging)[4] == 0 &&
         ((uint8_t *)b->staging)[300006] == 0);
  fill(b->staging, BUF_SIZE, 9);
  EXPECT_ERR(hipObjBufSync(d_buf, BUF_SIZE, 0, HIPOBJ_SYNC_TO_DEVICE),
             hipObjSuccess);
  read_back();
  EXPECT(memcmp(h_check, b->staging, BUF_SIZE) == 0);
  printf("  hipObjBufSync to host and to device: bytes %s\n",
         failures_in_test ? "WRONG" : "right");
  ho_buf_put(b);
}

/* Mapped host memory for the spinning kernel. */
struct stall {
  volatile int *flag;
  int *timed_out;
};

static bool stall_begin(struct stall *s)
{
  s->flag = NULL;
  s->timed_out = NULL;
  if (cudaHostAlloc((void **)&s->flag, sizeof *s->flag, cudaHostAllocMapped) !=
          cudaSuccess ||
      cudaHostAlloc((void **)&s->timed_out, sizeof *s->timed_out,
                    cudaHostAllocMapped) != cudaSuccess)
    return false;
  *s->flag = 0;
  *s->timed_out = 0;
  /* ~20 s of GPU clock at most: released long before. The kernel goes on
   * this thread's per-thread stream, which the library's copy uses too. */
  return ho_test_launch_spin(s->flag, 40000000000LL, s->timed_out) == 0;
}

static void stall_release(struct stall *s)
{
  __atomic_store_n((int *)s->flag, 1, __ATOMIC_SEQ_CST);
}

static void stall_free(struct stall *s)
{
  cudaFreeHost((void *)s->flag);
  cudaFreeHost(s->timed_out);
}

static void t_stalled_copy(void)
{
  struct stall s;
  struct ho_buf *b = entry(d_buf);
  EXPECT(b && b->kind == HO_BUF_STAGED);
  if (!b)
    return;
  uint8_t *staging = b->staging;
  ho_buf_put(b);
  fill(h_want, BUF_SIZE, 77);
  EXPECT_CUDA(cudaMemcpy(d_buf, h_want, BUF_SIZE, cudaMemcpyHostToDevice));
  memset(staging, 0x5a, BUF_SIZE);
  if (!stall_begin(&s)) {
    printf("  could not start the spinning kernel\n");
    failures_in_test++;
    return;
  }
  /* The copy waits behind the kernel and misses its deadline. */
  double t0 = now_s();
  hipObjError_t e = hipObjBufSync(d_buf, BUF_SIZE, 0, HIPOBJ_SYNC_TO_HOST);
  double waited = now_s() - t0;
  printf("  hipObjBufSync behind the kernel: %s after %.0f ms (timeout %u ms); "
         "%u abandoned\n", hipObjGetErrorString(e.opError), waited * 1e3,
         STAGE_TIMEOUT_MS, abandoned_count());
  EXPECT(e.opError == hipObjRdmaError);
  EXPECT(waited * 1e3 >= STAGE_TIMEOUT_MS * 0.99 &&
         waited * 1e3 < STAGE_TIMEOUT_MS + 1000);
  EXPECT(abandoned_count() == 1);
  EXPECT(staging[0] == 0x5a && staging[BUF_SIZE - 1] == 0x5a);
  /* While it may still run, the buffer is busy for everything. */
  char *tok = NULL;
  EXPECT_ERR(hipObjBufSync(d_buf, 16, 0, HIPOBJ_SYNC_TO_DEVICE), hipObjBusy);
  EXPECT_ERR(hipObjBufSync(d_buf, 16, 0, HIPOBJ_SYNC_TO_HOST), hipObjBusy);
  EXPECT_ERR(xfer(HIPOBJ_RDMA_OP_GET, d_buf, 4096, 0, 0), hipObjBusy);
  EXPECT_ERR(xfer(HIPOBJ_RDMA_OP_PUT, d_buf, 4096, 0, 0), hipObjBusy);
  EXPECT_ERR(hipObjGetRdmaToken(d_buf, 64, HIPOBJ_RDMA_OP_GET, &tok), hipObjBusy);
  EXPECT_ERR(hipObjBufDeregister(d_buf), hipObjBusy);
  usleep(100 * 1000);
  EXPECT(abandoned_busy(d_buf)); /* still held after another 100 ms */
  EXPECT(staging[0] == 0x5a);
  printf("  while stalled: sync, GET, PUT, token and deregister are busy%s\n",
         failures_in_test ? " (NOT all)" : "");
  /* Release the kernel: the abandoned copy runs and lands in staging. */
  stall_release(&s);
  t0 = now_s();
  bool busy = true;
  while ((busy = abandoned_busy(d_buf)) && now_s() - t0 < 10.0)
    usleep(200);
  printf("  released: the abandoned copy was over after %.2f ms; kernel timed "
         "out: %d; %u abandoned\n", (now_s() - t0) * 1e3, *s.timed_out,
         abandoned_count());
  EXPECT(!busy);
  EXPECT(*s.timed_out == 0);
  EXPECT(abandoned_count() == 0);
  EXPECT(memcmp(staging, h_want, BUF_SIZE) == 0); /* the late copy's bytes */
  stall_free(&s);
  /* The buffer works again, and deregisters. */
  staged_get(65536, 4096, 31, 0x44);
  EXPECT_ERR(hipObjBufDeregister(d_buf), hipObjSuccess);
  printf("  then: GET ok, deregistered: %s\n", failures_in_test ? "NO" : "yes");
}

static void t_shutdown_leak(void)
{
  struct stall s;
  EXPECT(register_staged(d_buf, BUF_SIZE) == hipObjSuccess);
  struct ho_buf *b = entry(d_buf);
  EXPECT(b && b->kind == HO_BUF_STAGED);
  if (!b)
    return;
  uint8_t *staging = b->staging;
  ho_buf_put(b);
  fill(h_want, BUF_SIZE, 99);
  EXPECT_CUDA(cudaMemcpy(d_buf, h_want, BUF_SIZE, cudaMemcpyHostToDevice));
  memset(staging, 0x5a, BUF_SIZE);
  if (!stall_begin(&s)) {
    failures_in_test++;
    return;
  }
  EXPECT_ERR(hipObjBufSync(d_buf, BUF_SIZE, 0, HIPOBJ_SYNC_TO_HOST),
             hipObjRdmaError);
  EXPECT_ERR(hipObjShutdown(), hipObjSuccess); /* warns: leaked on purpose */
  stall_release(&s);
  EXPECT_CUDA(cudaStreamSynchronize(cudaStreamPerThread));
  /* The staging memory was not freed under the copy, which wrote it. */
  bool landed = memcmp(staging, h_want, BUF_SIZE) == 0;
  printf("  shut down with the copy stalled; released: the late copy %s the "
         "leaked staging buffer; kernel timed out: %d\n",
         landed ? "wrote" : "did NOT write", *s.timed_out);
  EXPECT(landed);
  EXPECT(*s.timed_out == 0);
  stall_free(&s);
}

int main(void)
{
  int count = 0;
  cudaError_t ce = cudaGetDeviceCount(&count);
  if (ce != cudaSuccess || count == 0) {
    printf("SKIP: no CUDA device (%s)\n", cudaGetErrorString(ce));
    return 77;
  }
  if (ho_gpu_cuda_load(&g) != hipObjSuccess) {
    printf("FAIL: the CUDA runtime has a device but ho_gpu_cuda_load failed\n");
    return 1;
  }
  cudaSetDevice(0);
  cudaFree(NULL); /* the runtime's primary context, current on this thread */
  if (cudaMalloc((void **)&d_buf, BUF_SIZE) != cudaSuccess ||
      !(h_check = malloc(BUF_SIZE)) || !(h_want = malloc(BUF_SIZE))) {
    printf("FAIL: could not allocate test memory\n");
    return 1;
  }
  if (world_create(&w, g) != 0) {
    printf("FAIL: world_create\n");
    return 1;
  }
  w.opts.stage_timeout_ms = STAGE_TIMEOUT_MS;
  w.opts.transfer_timeout_ms = 10000;
  hipObjOpError_t e = world_init(&w, WORLD_CLIENT_NIC);
  if (e != hipObjSuccess) {
    printf("FAIL: ho_init_with on the simulated fabric with CUDA: %s\n",
           hipObjGetErrorString(e));
    return 1;
  }
  if (sim_peer_create(&peer, &w.plat, NULL, OBJ_SIZE) != 0) {
    printf("FAIL: sim_peer_create\n");
    return 1;
  }
  fill(peer.object, OBJ_SIZE, 1);
  run("init", t_init);
  run("classify", t_classify);
  run("staged_get", t_staged_get);
  run("staged_put", t_staged_put);
  run("stalled_copy", t_stalled_copy);
  run("shutdown_leak", t_shutdown_leak);
  struct ho_instance *inst = ho_instance_get();
  if (inst) { /* shutdown_leak failed before its shutdown */
    ho_instance_put(inst);
    hipObjShutdown();
  }
  sim_peer_destroy(&peer);
  world_destroy(&w);
  cudaFree(d_buf);
  free(h_check);
  free(h_want);
  printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed ? 1 : 0;
}
