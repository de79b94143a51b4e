/* SPDX-License-Identifier: MIT */
#include "buffer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "memlock.h"
#include "common/thread_safety.h"

#define MR_ACCESS_UNSCOPED \
  (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE)
/* Scoped tokens: only a window bound over a transfer's range grants remote
 * access (docs/protocol.md, section 2). */
#define MR_ACCESS_SCOPED (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND)

struct ho_buffers {
  const struct ho_platform *plat;
  struct ho_device *dev;
  struct ho_device *rail_dev[HO_MAX_RAILS]; /* [0] is dev */
  struct ho_options opts;
  int mr_access;
  ho_rwlock rw;
  /* Sorted by addr. */
  struct ho_buf *entries[HIPOBJ_MAX_BUFFERS] HO_GUARDED_BY(rw);
  unsigned count HO_GUARDED_BY(rw);
};

hipObjOpError_t ho_buffers_create(const struct ho_platform *plat,
                                  struct ho_device *dev,
                                  const struct ho_options *opts, bool scoped,
                                  struct ho_buffers **out)
{
  struct ho_buffers *m = calloc(1, sizeof *m);
  if (!m)
    return hipObjInternalError;
  m->plat = plat;
  m->dev = dev;
  m->rail_dev[0] = dev;
  m->opts = *opts;
  m->mr_access = scoped ? MR_ACCESS_SCOPED : MR_ACCESS_UNSCOPED;
  ho_rwlock_init(&m->rw);
  *out = m;
  return hipObjSuccess;
}

void ho_buf_get(struct ho_buf *b) { atomic_fetch_add(&b->refs, 1); }

static void buf_release(struct ho_buf *b)
{
  for (unsigned i = 1; i < HO_MAX_RAILS; i++) {
    struct ibv_mr *mr = atomic_load(&b->rail_mr[i]);
    if (mr)
      b->verbs->dereg_mr(mr);
  }
  if (b->mr)
    b->verbs->dereg_mr(b->mr);
  if (b->staging)
    b->gpu->host_free(b->staging);
  free(b);
}

void ho_buf_put(struct ho_buf *b)
{
  if (b && atomic_fetch_sub(&b->refs, 1) == 1)
    buf_release(b);
}

bool ho_buf_range_ok(const struct ho_buf *b, uint64_t offset, uint64_t size)
{
  return offset <= b->size && size <= b->size - offset;
}

void ho_buffers_destroy(struct ho_buffers *m)
{
  if (!m)
    return;
  ho_wrlock(&m->rw);
  for (unsigned i = 0; i < m->count; i++)
    ho_buf_put(m->entries[i]);
  m->count = 0;
  ho_wrunlock(&m->rw);
  ho_rwlock_destroy(&m->rw);
  free(m);
}

/* Index of addr, or where it would go (*found false). */
static unsigned search(struct ho_buffers *m, uintptr_t addr, bool *found)
    HO_REQUIRES_SHARED(m->rw)
{
  unsigned lo = 0, hi = m->count;
  while (lo < hi) {
    unsigned mid = lo + (hi - lo) / 2;
    if (m->entries[mid]->addr < addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  *found = lo < m->count && m->entries[lo]->addr == addr;
  return lo;
}

struct ho_buf *ho_buffers_find(struct ho_buffers *m, const void *ptr)
{
  bool found;
  struct ho_buf *b = NULL;
  ho_rdlock(&m->rw);
  unsigned i = search(m, (uintptr_t)ptr, &found);
  if (found) {
    b = m->entries[i];
    ho_buf_get(b);
  }
  ho_rdunlock(&m->rw);
  return b;
}

unsigned ho_buffers_count(struct ho_buffers *m)
{
  ho_rdlock(&m->rw);
  unsigned n = m->count;
  ho_rdunlock(&m->rw);
  return n;
}

static hipObjOpError_t precheck(struct ho_buffers *m, uintptr_t addr)
{
  bool found;
  hipObjOpError_t err = hipObjSuccess;
  ho_rdlock(&m->rw);
  search(m, addr, &found);
  if (found)
    err = hipObjBufAlreadyRegistered;
  else if (m->count == HIPOBJ_MAX_BUFFERS)
    err = hipObjSizeTooLarge;
  ho_rdunlock(&m->rw);
  return err;
}

static hipObjOpError_t insert(struct ho_buffers *m, struct ho_buf *b)
{
  bool found;
  hipObjOpError_t err = hipObjSuccess;
  ho_wrlock(&m->rw);
  unsigned i = search(m, b->addr, &found);
  if (found) {
    err = hipObjBufAlreadyRegistered;
  } else if (m->count == HIPOBJ_MAX_BUFFERS) {
    err = hipObjSizeTooLarge;
  } else {
    memmove(&m->entries[i + 1], &m->entries[i],
            (m->count - i) * sizeof m->entries[0]);
    m->entries[i] = b;
    m->count++;
  }
  ho_wrunlock(&m->rw);
  return err;
}

static bool try_dmabuf(struct ho_buffers *m, struct ho_buf *b, int *native)
{
  const struct ho_verbs_ops *v = m->plat->verbs;
  int fd = -1;
  uint64_t off = 0;
  if (!m->opts.dmabuf || !v->reg_dmabuf_mr)
    return false;
  hipObjOpError_t e = m->plat->gpu->export_dmabuf((void *)b->addr, b->size,
                                                  &fd, &off, native);
  if (e != hipObjSuccess) {
    ho_debug("dma-buf export of %p failed (error %d, runtime error %d)",
             (void *)b->addr, (int)e, native ? *native : 0);
    return false;
  }
  b->mr = v->reg_dmabuf_mr(m->dev->pd, off, b->size, b->addr, fd, m->mr_access);
  int saved = errno;
  close(fd); /* the MR holds its own reference */
  if (!b->mr)
    ho_debug("ibv_reg_dmabuf_mr of %p failed: %s", (void *)b->addr,
             strerror(saved));
  b->dmabuf = b->mr != NULL;
  return b->mr != NULL;
}

/* An MR over host memory at addr (the buffer's or its staging buffer)
 * pins its pages: they must fit under RLIMIT_MEMLOCK. */
static hipObjOpError_t check_memlock(struct ho_buffers *m,
                                     const struct ho_buf *b, uintptr_t addr,
                                     const char *kind)
{
  char what[96];
  snprintf(what, sizeof what, "registering buffer %p (%zu bytes, %s)",
           (void *)b->addr, b->size, kind);
  return ho_memlock_check(m->plat->topo, ho_memlock_span(addr, b->size),
                          what);
}

static hipObjOpError_t register_staged(struct ho_buffers *m, struct ho_buf *b,
                                       int *native)
{
  if (m->opts.require_gpu_direct) {
    ho_warn("buffer %p cannot be registered GPU-direct, and "
            "HIPOBJ_REQUIRE_GPU_DIRECT forbids staging", (void *)b->addr);
    return hipObjDmabufNotSupported;
  }
  hipObjOpError_t e = m->plat->gpu->host_alloc(b->size, &b->staging, native);
  if (e != hipObjSuccess)
    return e == hipObjNotSupported ? hipObjDmabufNotSupported : hipObjInternalError;
  e = check_memlock(m, b, (uintptr_t)b->staging, "its staging buffer");
  if (e != hipObjSuccess)
    return e;
  b->mr = m->plat->verbs->reg_mr(m->dev->pd, b->staging, b->size, m->mr_access);
  if (!b->mr)
    return hipObjRdmaError;
  ho_warn("buffer %p (%zu bytes) is not GPU-direct: transfers are staged "
          "through pinned host memory", (void *)b->addr, b->size);
  b->kind = HO_BUF_STAGED;
  b->token_addr = (uintptr_t)b->staging;
  return hipObjSuccess;
}

static hipObjOpError_t register_device(struct ho_buffers *m, struct ho_buf *b,
                                       int *native)
{
  uintptr_t base = 0;
  size_t len = 0;
  hipObjOpError_t e = m->plat->gpu->alloc_range((void *)b->addr, &base, &len,
                                                native);
  if (e != hipObjSuccess)
    return hipObjInvalidValue;
  if (b->addr < base || b->addr - base > len || b->size > len - (b->addr - base))
    return hipObjInvalidValue; /* the range spans allocations */
  b->kind = HO_BUF_DIRECT;
  if (try_dmabuf(m, b, native))
    return hipObjSuccess;
  b->mr = m->plat->verbs->reg_mr(m->dev->pd, (void *)b->addr, b->size, m->mr_access);
  if (b->mr)
    return hipObjSuccess;
  return register_staged(m, b, native);
}

static hipObjOpError_t register_memory(struct ho_buffers *m, struct ho_buf *b,
                                       bool host_only, int *native)
{
  enum ho_mem_kind kind = HO_MEM_HOST;
  int dev = -1;
  hipObjOpError_t e = m->plat->gpu->classify((void *)b->addr, &kind, &dev, native);
  if (e != hipObjSuccess && e != hipObjNotSupported)
    return e;
  if (e == hipObjNotSupported)
    kind = HO_MEM_HOST;
  if (kind == HO_MEM_MANAGED)
    return hipObjNotSupported;
  if (kind == HO_MEM_DEVICE)
    return host_only ? hipObjInvalidValue : register_device(m, b, native);
  b->kind = HO_BUF_HOST;
  e = check_memlock(m, b, b->addr, "host memory");
  if (e != hipObjSuccess)
    return e;
  b->mr = m->plat->verbs->reg_mr(m->dev->pd, (void *)b->addr, b->size, m->mr_access);
  return b->mr ? hipObjSuccess : hipObjRdmaError;
}

hipObjOpError_t ho_buffers_register(struct ho_buffers *m, void *ptr,
                                    size_t size, bool host_only, int *native)
{
  if (!ptr || size == 0)
    return hipObjInvalidValue;
  if ((uint64_t)size > HIPOBJ_MAX_BUFFER_SIZE)
    return hipObjSizeTooLarge;
  if ((uintptr_t)ptr > UINTPTR_MAX - size)
    return hipObjInvalidValue;
  hipObjOpError_t e = precheck(m, (uintptr_t)ptr);
  if (e != hipObjSuccess)
    return e;
  struct ho_buf *b = calloc(1, sizeof *b);
  if (!b)
    return hipObjInternalError;
  atomic_init(&b->refs, 1);
  b->addr = (uintptr_t)ptr;
  b->size = size;
  b->token_addr = (uintptr_t)ptr;
  b->verbs = m->plat->verbs;
  b->gpu = m->plat->gpu;
  e = register_memory(m, b, host_only, native);
  if (e == hipObjSuccess)
    e = insert(m, b);
  if (e != hipObjSuccess)
    buf_release(b);
  return e;
}

hipObjOpError_t ho_buffers_deregister(struct ho_buffers *m, void *ptr)
{
  bool found;
  struct ho_buf *b = NULL;
  hipObjOpError_t err = hipObjBufNotRegistered;
  ho_wrlock(&m->rw);
  unsigned i = search(m, (uintptr_t)ptr, &found);
  if (found) {
    b = m->entries[i];
    /* Copies are only taken under the rw, so this cannot miss one. */
    if (atomic_load(&b->refs) > 1) {
      err = hipObjBusy;
      b = NULL;
    } else {
      memmove(&m->entries[i], &m->entries[i + 1],
              (m->count - i - 1) * sizeof m->entries[0]);
      m->count--;
      err = hipObjSuccess;
    }
  }
  ho_wrunlock(&m->rw);
  ho_buf_put(b);
  return err;
}

/* ---- rails ---------------------------------------------------------------- */

void ho_buffers_set_rail(struct ho_buffers *m, unsigned i,
                         struct ho_device *dev)
{
  if (i > 0 && i < HO_MAX_RAILS)
    m->rail_dev[i] = dev;
}

/* An MR over the buffer on pd, by the path its first registration took. */
static struct ibv_mr *register_on(struct ho_buffers *m, const struct ho_buf *b,
                                  struct ibv_pd *pd, int *native)
{
  const struct ho_verbs_ops *v = m->plat->verbs;
  if (b->kind == HO_BUF_STAGED)
    return v->reg_mr(pd, b->staging, b->size, m->mr_access);
  if (b->kind != HO_BUF_DIRECT || !b->dmabuf)
    return v->reg_mr(pd, (void *)b->addr, b->size, m->mr_access);
  int fd = -1;
  uint64_t off = 0;
  if (m->plat->gpu->export_dmabuf((void *)b->addr, b->size, &fd, &off,
                                  native) != hipObjSuccess)
    return NULL;
  struct ibv_mr *mr =
      v->reg_dmabuf_mr(pd, off, b->size, b->addr, fd, m->mr_access);
  close(fd);
  return mr;
}

hipObjOpError_t ho_buf_rail_mr(struct ho_buffers *m, struct ho_buf *b,
                               unsigned i, struct ibv_mr **out, int *native)
{
  if (i == 0) {
    *out = b->mr;
    return hipObjSuccess;
  }
  if (i >= HO_MAX_RAILS || !m->rail_dev[i])
    return hipObjInvalidValue;
  struct ibv_mr *mr = atomic_load(&b->rail_mr[i]);
  if (mr) {
    *out = mr;
    return hipObjSuccess;
  }
  if (b->kind != HO_BUF_DIRECT) {
    char kind[HO_NIC_NAME_MAX + 16];
    snprintf(kind, sizeof kind, "again on rail %s", m->rail_dev[i]->name);
    hipObjOpError_t e = check_memlock(
        m, b, b->kind == HO_BUF_STAGED ? (uintptr_t)b->staging : b->addr,
        kind);
    if (e != hipObjSuccess)
      return e;
  }
  mr = register_on(m, b, m->rail_dev[i]->pd, native);
  if (!mr) {
    ho_warn("buffer %p cannot be registered on rail %s", (void *)b->addr,
            m->rail_dev[i]->name);
    return hipObjRdmaError;
  }
  struct ibv_mr *none = NULL;
  if (!atomic_compare_exchange_strong(&b->rail_mr[i], &none, mr)) {
    m->plat->verbs->dereg_mr(mr); /* another transfer made it first */
    mr = none;
  }
  *out = mr;
  return hipObjSuccess;
}
