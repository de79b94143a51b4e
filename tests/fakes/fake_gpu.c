/* SPDX-License-Identifier: MIT */
/* The fake GPU runtime: see fake_gpu.h. Everything lives under one lock;
 * misuse that a real runtime would punish (freeing memory it doesn't own)
 * aborts, so the tests catch it. */
#include "fakes/fake_gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>

#include "common/thread_safety.h"

#define FK_PAGE 4096

struct fk_alloc {
  char *base;
  size_t size;
  enum ho_mem_kind kind;
  int dev;
  struct fk_alloc *next;
};

struct ho_gpu_event {
  unsigned polls_left; /* busy answers left before done */
  bool stalled;        /* its copy waits for fake_gpu_release_stalled() */
  bool destroyed;      /* destroyed while stalled: freed on release */
};

struct fk_copy {
  void *dst;
  const void *src;
  size_t n;
  struct ho_gpu_event *ev;
  struct fk_copy *next;
};

struct fk_fail {
  unsigned skip, count;
  hipObjOpError_t err;
  int native;
};

struct fk_state {
  int device_count;
  int current;
  char bus_ids[FAKE_GPU_MAX_DEVICES][32];
  bool stall;
  unsigned polls;
  bool dmabuf;
  struct fk_alloc *allocs;
  struct fk_copy *stalled, **stalled_tail;
  struct fk_fail fails[FAKE_GPU_ENTRY_COUNT];
  struct fake_gpu_counters c;
};

static ho_mutex fk_lock = HO_MUTEX_INIT;
static struct fk_state fk HO_GUARDED_BY(fk_lock) = {
  .device_count = 1,
  .bus_ids = {"0000:c1:00.0", "0000:c2:00.0", "0000:c3:00.0", "0000:c4:00.0",
              "0000:c5:00.0", "0000:c6:00.0", "0000:c7:00.0", "0000:c8:00.0"},
  .dmabuf = true,
  .stalled_tail = &fk.stalled,
};

static _Noreturn void fk_abort(const char *what, const void *p)
{
  fprintf(stderr, "fake_gpu: %s %p\n", what, p);
  abort();
}

/* Counts the call; true (with *err and *native set) if it is to fail. */
static bool injected(enum fake_gpu_entry e, hipObjOpError_t *err, int *native)
    HO_REQUIRES(fk_lock)
{
  struct fk_fail *f = &fk.fails[e];
  fk.c.calls[e]++;
  if (f->count == 0)
    return false;
  if (f->skip > 0) {
    f->skip--;
    return false;
  }
  f->count--;
  *err = f->err;
  if (native)
    *native = f->native;
  return true;
}

static struct fk_alloc *find_alloc(const void *p) HO_REQUIRES(fk_lock)
{
  const char *c = p;
  for (struct fk_alloc *a = fk.allocs; a; a = a->next)
    if (c >= a->base && (size_t)(c - a->base) < a->size)
      return a;
  return NULL;
}

static void *track(size_t size, enum ho_mem_kind kind, int dev)
    HO_REQUIRES(fk_lock)
{
  struct fk_alloc *a = calloc(1, sizeof *a);
  void *p = NULL;
  if (!a || size == 0 || posix_memalign(&p, FK_PAGE, size) != 0) {
    free(a);
    return NULL;
  }
  memset(p, 0, size);
  *a = (struct fk_alloc){p, size, kind, dev, fk.allocs};
  fk.allocs = a;
  return p;
}

/* Frees the allocation that starts at p; aborts if there is none of kind. */
static void untrack(void *p, bool pinned) HO_REQUIRES(fk_lock)
{
  for (struct fk_alloc **pp = &fk.allocs; *pp; pp = &(*pp)->next) {
    struct fk_alloc *a = *pp;
    if (a->base != p)
      continue;
    if ((a->kind == HO_MEM_HOST_PINNED) != pinned)
      break;
    *pp = a->next;
    free(a->base);
    free(a);
    return;
  }
  fk_abort(pinned ? "host_free of memory it did not allocate:"
                  : "fake_gpu_free of memory it did not allocate:", p);
}

/* ---- the ops ------------------------------------------------------------- */

#define FK_ENTER(entry)                                                        \
  hipObjOpError_t err_ = hipObjSuccess;                                        \
  ho_mutex_lock(&fk_lock);                                                     \
  if (injected(entry, &err_, native)) {                                        \
    ho_mutex_unlock(&fk_lock);                                                 \
    return err_;                                                               \
  }

static hipObjOpError_t fk_device_count(int *count, int *native)
{
  FK_ENTER(FAKE_GPU_DEVICE_COUNT);
  *count = fk.device_count;
  ho_mutex_unlock(&fk_lock);
  return hipObjSuccess;
}

static hipObjOpError_t fk_current_device(int *dev, int *native)
{
  FK_ENTER(FAKE_GPU_CURRENT_DEVICE);
  hipObjOpError_t e = fk.device_count > 0 ? hipObjSuccess : hipObjNotSupported;
  if (e == hipObjSuccess)
    *dev = fk.current;
  ho_mutex_unlock(&fk_lock);
  return e;
}

static hipObjOpError_t fk_pci_bus_id(int dev, char *buf, size_t len,
                                     int *native)
{
  FK_ENTER(FAKE_GPU_PCI_BUS_ID);
  hipObjOpError_t e = hipObjInvalidValue;
  if (dev >= 0 && dev < fk.device_count &&
      strlen(fk.bus_ids[dev]) < len) {
    memcpy(buf, fk.bus_ids[dev], strlen(fk.bus_ids[dev]) + 1);
    e = hipObjSuccess;
  }
  ho_mutex_unlock(&fk_lock);
  return e;
}

static hipObjOpError_t fk_classify(const void *ptr, enum ho_mem_kind *kind,
                                   int *dev, int *native)
{
  FK_ENTER(FAKE_GPU_CLASSIFY);
  struct fk_alloc *a = find_alloc(ptr);
  *kind = a ? a->kind : HO_MEM_HOST;
  *dev = a ? a->dev : -1;
  ho_mutex_unlock(&fk_lock);
  return hipObjSuccess;
}

static hipObjOpError_t fk_alloc_range(const void *ptr, uintptr_t *base,
                                      size_t *size, int *native)
{
  FK_ENTER(FAKE_GPU_ALLOC_RANGE);
  struct fk_alloc *a = find_alloc(ptr);
  if (a) {
    *base = (uintptr_t)a->base;
    *size = a->size;
  } else if (native) {
    *native = 1; /* the runtimes' "invalid value" */
  }
  ho_mutex_unlock(&fk_lock);
  return a ? hipObjSuccess : hipObjInvalidValue;
}

static hipObjOpError_t fk_host_alloc(size_t size, void **ptr, int *native)
{
  FK_ENTER(FAKE_GPU_HOST_ALLOC);
  void *p = size ? track(size, HO_MEM_HOST_PINNED, fk.current) : NULL;
  if (p) {
    fk.c.host_allocs++;
    *ptr = p;
  }
  ho_mutex_unlock(&fk_lock);
  return p ? hipObjSuccess : size ? hipObjInternalError : hipObjInvalidValue;
}

static void fk_host_free(void *ptr)
{
  if (!ptr)
    return;
  ho_mutex_lock(&fk_lock);
  untrack(ptr, true);
  fk.c.host_frees++;
  ho_mutex_unlock(&fk_lock);
}

static void perform(void *dst, const void *src, size_t n) HO_REQUIRES(fk_lock)
{
  if (n > 0)
    memmove(dst, src, n);
  fk.c.copies++;
  fk.c.copy_bytes += n;
}

static hipObjOpError_t fk_copy_async(void *dst, const void *src, size_t n,
                                     struct ho_gpu_event **ev, int *native)
{
  FK_ENTER(FAKE_GPU_COPY_ASYNC);
  struct ho_gpu_event *e = calloc(1, sizeof *e);
  struct fk_copy *c = fk.stall ? calloc(1, sizeof *c) : NULL;
  if (!e || (fk.stall && !c)) {
    free(e);
    free(c);
    ho_mutex_unlock(&fk_lock);
    return hipObjInternalError;
  }
  if (c) {
    *c = (struct fk_copy){dst, src, n, e, NULL};
    *fk.stalled_tail = c;
    fk.stalled_tail = &c->next;
    e->stalled = true;
  } else {
    perform(dst, src, n);
    e->polls_left = fk.polls;
  }
  fk.c.events_live++;
  *ev = e;
  ho_mutex_unlock(&fk_lock);
  return hipObjSuccess;
}

static hipObjOpError_t fk_event_query(struct ho_gpu_event *ev, int *native)
{
  FK_ENTER(FAKE_GPU_EVENT_QUERY);
  hipObjOpError_t e = hipObjSuccess;
  if (ev->stalled) {
    e = hipObjBusy;
  } else if (ev->polls_left > 0) {
    ev->polls_left--;
    e = hipObjBusy;
  }
  ho_mutex_unlock(&fk_lock);
  return e;
}

static void fk_event_destroy(struct ho_gpu_event *ev)
{
  if (!ev)
    return;
  ho_mutex_lock(&fk_lock);
  fk.c.events_live--;
  if (ev->stalled)
    ev->destroyed = true; /* the copy still runs; freed when released */
  else
    free(ev);
  ho_mutex_unlock(&fk_lock);
}

static hipObjOpError_t fk_export_dmabuf(const void *ptr, size_t size, int *fd,
                                        uint64_t *offset, int *native)
{
  FK_ENTER(FAKE_GPU_EXPORT_DMABUF);
  hipObjOpError_t e = hipObjSuccess;
  struct fk_alloc *a = find_alloc(ptr);
  int nat = 0;
  if (!fk.dmabuf) {
    e = hipObjNotSupported, nat = 801;
  } else if (!a || a->kind != HO_MEM_DEVICE || size == 0 ||
             size > a->size - (size_t)((const char *)ptr - a->base)) {
    e = hipObjInvalidValue, nat = 1;
  } else {
    int f = eventfd(0, EFD_CLOEXEC);
    if (f < 0) {
      e = hipObjInternalError;
    } else {
      *fd = f;
      *offset = (uint64_t)((const char *)ptr - a->base);
      fk.c.dmabuf_exports++;
    }
  }
  if (e != hipObjSuccess && nat && native)
    *native = nat;
  ho_mutex_unlock(&fk_lock);
  return e;
}

static hipObjOpError_t fk_flush_rdma_writes(int *native)
{
  FK_ENTER(FAKE_GPU_FLUSH_RDMA_WRITES);
  fk.c.flushes++;
  ho_mutex_unlock(&fk_lock);
  return hipObjSuccess;
}

const struct ho_gpu_ops fake_gpu_ops = {
    "fake",
    fk_device_count,
    fk_current_device,
    fk_pci_bus_id,
    fk_classify,
    fk_alloc_range,
    fk_host_alloc,
    fk_host_free,
    fk_copy_async,
    fk_event_query,
    fk_event_destroy,
    fk_export_dmabuf,
    fk_flush_rdma_writes,
};

/* ---- knobs ---------------------------------------------------------------- */

/* Detaches the stalled copies; performs them if `run`. */
static size_t drain_stalled(bool run) HO_REQUIRES(fk_lock)
{
  size_t n = 0;
  struct fk_copy *c = fk.stalled;
  fk.stalled = NULL;
  fk.stalled_tail = &fk.stalled;
  while (c) {
    struct fk_copy *next = c->next;
    if (run)
      perform(c->dst, c->src, c->n);
    if (c->ev->destroyed)
      free(c->ev);
    else
      c->ev->stalled = false;
    free(c);
    c = next;
    n++;
  }
  return n;
}

void fake_gpu_reset(void)
{
  ho_mutex_lock(&fk_lock);
  drain_stalled(false);
  while (fk.allocs) {
    struct fk_alloc *a = fk.allocs;
    fk.allocs = a->next;
    free(a->base);
    free(a);
  }
  fk.device_count = 1;
  fk.current = 0;
  for (int d = 0; d < FAKE_GPU_MAX_DEVICES; d++)
    snprintf(fk.bus_ids[d], sizeof fk.bus_ids[d], "0000:c%d:00.0", d + 1);
  fk.stall = false;
  fk.polls = 0;
  fk.dmabuf = true;
  memset(fk.fails, 0, sizeof fk.fails);
  uint64_t live = fk.c.events_live; /* events the caller still holds */
  memset(&fk.c, 0, sizeof fk.c);
  fk.c.events_live = live;
  ho_mutex_unlock(&fk_lock);
}

void fake_gpu_set_device_count(int n)
{
  ho_mutex_lock(&fk_lock);
  fk.device_count = n < 0 ? 0 : n > FAKE_GPU_MAX_DEVICES ? FAKE_GPU_MAX_DEVICES : n;
  ho_mutex_unlock(&fk_lock);
}

void fake_gpu_set_current_device(int dev)
{
  ho_mutex_lock(&fk_lock);
  fk.current = dev;
  ho_mutex_unlock(&fk_lock);
}

void fake_gpu_set_bus_id(int dev, const char *bus_id)
{
  if (dev < 0 || dev >= FAKE_GPU_MAX_DEVICES)
    return;
  ho_mutex_lock(&fk_lock);
  snprintf(fk.bus_ids[dev], sizeof fk.bus_ids[dev], "%s", bus_id);
  ho_mutex_unlock(&fk_lock);
}

void *fake_gpu_malloc_on(int dev, size_t size)
{
  ho_mutex_lock(&fk_lock);
  void *p = track(size, HO_MEM_DEVICE, dev);
  ho_mutex_unlock(&fk_lock);
  return p;
}

void *fake_gpu_malloc(size_t size)
{
  ho_mutex_lock(&fk_lock);
  void *p = track(size, HO_MEM_DEVICE, fk.current);
  ho_mutex_unlock(&fk_lock);
  return p;
}

void *fake_gpu_malloc_managed(size_t size)
{
  ho_mutex_lock(&fk_lock);
  void *p = track(size, HO_MEM_MANAGED, fk.current);
  ho_mutex_unlock(&fk_lock);
  return p;
}

void fake_gpu_free(void *ptr)
{
  if (!ptr)
    return;
  ho_mutex_lock(&fk_lock);
  untrack(ptr, false);
  ho_mutex_unlock(&fk_lock);
}

size_t fake_gpu_live_allocations(void)
{
  size_t n = 0;
  ho_mutex_lock(&fk_lock);
  for (struct fk_alloc *a = fk.allocs; a; a = a->next)
    n++;
  ho_mutex_unlock(&fk_lock);
  return n;
}

void fake_gpu_stall_copies(bool on)
{
  ho_mutex_lock(&fk_lock);
  fk.stall = on;
  ho_mutex_unlock(&fk_lock);
}

size_t fake_gpu_release_stalled(void)
{
  ho_mutex_lock(&fk_lock);
  size_t n = drain_stalled(true);
  ho_mutex_unlock(&fk_lock);
  return n;
}

size_t fake_gpu_stalled_copies(void)
{
  size_t n = 0;
  ho_mutex_lock(&fk_lock);
  for (struct fk_copy *c = fk.stalled; c; c = c->next)
    n++;
  ho_mutex_unlock(&fk_lock);
  return n;
}

void fake_gpu_set_copy_polls(unsigned polls)
{
  ho_mutex_lock(&fk_lock);
  fk.polls = polls;
  ho_mutex_unlock(&fk_lock);
}

void fake_gpu_set_dmabuf_supported(bool on)
{
  ho_mutex_lock(&fk_lock);
  fk.dmabuf = on;
  ho_mutex_unlock(&fk_lock);
}

void fake_gpu_fail(enum fake_gpu_entry entry, unsigned skip, unsigned count,
                   hipObjOpError_t err, int native)
{
  if ((unsigned)entry >= FAKE_GPU_ENTRY_COUNT)
    return;
  ho_mutex_lock(&fk_lock);
  fk.fails[entry] = (struct fk_fail){skip, count, err, native};
  ho_mutex_unlock(&fk_lock);
}

void fake_gpu_get_counters(struct fake_gpu_counters *out)
{
  ho_mutex_lock(&fk_lock);
  *out = fk.c;
  ho_mutex_unlock(&fk_lock);
}
