/* SPDX-License-Identifier: MIT */
/* The memory backend: a blob is a reference-counted byte array; readers
 * hold a reference, so a deleted or replaced object stays readable by
 * whoever opened it. Nothing survives the process.
 *
 * Every byte allocated for a blob is charged to the store's total
 * (max_memory) before it is allocated, and released when the blob is
 * freed: an announced size that does not fit is refused at once. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_ops.h"

/* Where to start when the announced size cannot be reserved at once. */
#define PREALLOC_MAX (64u << 20)

struct mem_store {
  atomic_uint_fast64_t used; /* bytes charged */
  uint64_t max;
};

struct hs_blob {
  atomic_uint refs;
  struct mem_store *m;
  uint8_t *data;
  uint64_t size;
  uint64_t charged; /* bytes of data charged to m */
};

struct hs_blob_writer {
  struct hs_blob *b;
};

struct hs_blob_reader {
  struct hs_blob *b;
};

/* Reserves n bytes of the total; false if they do not fit. */
static bool charge(struct mem_store *m, uint64_t n)
{
  uint_fast64_t used = atomic_load(&m->used);
  do {
    if (n > m->max - used)
      return false;
  } while (!atomic_compare_exchange_weak(&m->used, &used, used + n));
  return true;
}

static void uncharge(struct mem_store *m, uint64_t n)
{
  atomic_fetch_sub(&m->used, n);
}

static void blob_put(struct hs_blob *b)
{
  if (b && atomic_fetch_sub(&b->refs, 1) == 1) {
    uncharge(b->m, b->charged);
    free(b->data);
    free(b);
  }
}

/* Half the physical memory: the default total. */
static uint64_t default_max(void)
{
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || size <= 0)
    return 1ull << 30;
  return (uint64_t)pages * (uint64_t)size / 2;
}

static enum hs_err mem_open(const struct hs_store_config *cfg,
                            const struct hs_store_loader *l, void **impl)
{
  struct mem_store *m = calloc(1, sizeof *m);
  if (!m)
    return HS_ERR_NOMEM;
  atomic_init(&m->used, 0);
  m->max = cfg->max_memory ? cfg->max_memory : default_max();
  *impl = m;
  return HS_OK;
}

static void mem_close(void *impl) { free(impl); }

static enum hs_err mem_bucket_create(void *impl, const char *bucket,
                                     int64_t *ctime)
{
  return HS_OK;
}

static enum hs_err mem_bucket_remove(void *impl, const char *bucket)
{
  return HS_OK;
}

static enum hs_err mem_upload_create(void *impl, const char *id)
{
  return HS_OK;
}

static void mem_upload_remove(void *impl, const char *id) {}

/* Grows the blob's allocation to at least want bytes, charging the growth
 * first. */
static enum hs_err blob_reserve(struct hs_blob *b, uint64_t want)
{
  if (want <= b->charged)
    return HS_OK;
  if (want > SIZE_MAX)
    return HS_ERR_NOMEM;
  if (!charge(b->m, want - b->charged))
    return HS_ERR_STORE_FULL;
  uint8_t *d = realloc(b->data, (size_t)want);
  if (!d) {
    uncharge(b->m, want - b->charged);
    return HS_ERR_NOMEM;
  }
  b->data = d;
  b->charged = want;
  return HS_OK;
}

static enum hs_err mem_writer_open(void *impl, const struct hs_blob_name *name,
                                   uint64_t size_hint,
                                   struct hs_blob_writer **out)
{
  struct mem_store *m = impl;
  struct hs_blob_writer *w = calloc(1, sizeof *w);
  struct hs_blob *b = calloc(1, sizeof *b);
  enum hs_err err = HS_ERR_NOMEM;
  if (!w || !b)
    goto fail;
  atomic_init(&b->refs, 1);
  b->m = m;
  /* The announced size must fit in the total before anything is
   * allocated. Then the whole of it at once (only the pages written are
   * ever committed), so large uploads are not copied while they grow; a
   * smaller start if that much address space is refused. */
  if (size_hint > m->max - atomic_load(&m->used)) {
    err = HS_ERR_STORE_FULL;
    goto fail;
  }
  err = HS_OK;
  if (size_hint && (err = blob_reserve(b, size_hint)) == HS_ERR_NOMEM)
    err = blob_reserve(b, size_hint < PREALLOC_MAX ? size_hint
                                                   : PREALLOC_MAX);
  if (err)
    goto fail;
  w->b = b;
  *out = w;
  return HS_OK;
fail:
  free(b);
  free(w);
  return err;
}

static enum hs_err mem_writer_write(struct hs_blob_writer *w, const void *p,
                                    size_t n)
{
  struct hs_blob *b = w->b;
  if (n == 0)
    return HS_OK;
  if (n > SIZE_MAX - b->size)
    return HS_ERR_NOMEM;
  if (b->size + n > b->charged) {
    uint64_t cap = b->charged ? b->charged : 4096;
    while (cap < b->size + n)
      cap = cap > SIZE_MAX / 2 ? b->size + n : cap * 2;
    enum hs_err err = blob_reserve(b, cap);
    if (err == HS_ERR_STORE_FULL) /* doubling may not fit; the need may */
      err = blob_reserve(b, b->size + n);
    if (err)
      return err;
  }
  memcpy(b->data + b->size, p, n);
  b->size += n;
  return HS_OK;
}

static enum hs_err mem_writer_finish(struct hs_blob_writer *w,
                                     const struct hs_obj_info *info)
{
  return HS_OK;
}

static enum hs_err mem_writer_publish(struct hs_blob_writer *w,
                                      struct hs_blob **out)
{
  struct hs_blob *b = w->b;
  /* Give back what was reserved and not written. */
  if (b->charged > b->size && b->size) {
    uint8_t *d = realloc(b->data, (size_t)b->size);
    if (d) {
      b->data = d;
      uncharge(b->m, b->charged - b->size);
      b->charged = b->size;
    }
  }
  *out = b;
  free(w);
  return HS_OK;
}

static void mem_writer_abort(struct hs_blob_writer *w)
{
  if (!w)
    return;
  blob_put(w->b);
  free(w);
}

static enum hs_err mem_settle(void *impl, const struct hs_blob_name *name)
{
  return HS_OK;
}

static enum hs_err mem_reader_open(struct hs_blob *b,
                                   struct hs_blob_reader **out)
{
  struct hs_blob_reader *r = malloc(sizeof *r);
  if (!r)
    return HS_ERR_NOMEM;
  atomic_fetch_add(&b->refs, 1);
  r->b = b;
  *out = r;
  return HS_OK;
}

static enum hs_err mem_reader_read(struct hs_blob_reader *r, uint64_t off,
                                   void *buf, size_t n)
{
  if (off > r->b->size || n > r->b->size - off)
    return HS_ERR_IO;
  memcpy(buf, r->b->data + off, n);
  return HS_OK;
}

static void mem_reader_close(struct hs_blob_reader *r)
{
  if (!r)
    return;
  blob_put(r->b);
  free(r);
}

static void mem_blob_unlink(struct hs_blob *b) {}
static void mem_blob_free(struct hs_blob *b) { blob_put(b); }

const struct hs_store_ops hs_store_mem_ops = {
    .name = "memory",
    .open = mem_open,
    .close = mem_close,
    .bucket_create = mem_bucket_create,
    .bucket_remove = mem_bucket_remove,
    .upload_create = mem_upload_create,
    .upload_remove = mem_upload_remove,
    .writer_open = mem_writer_open,
    .writer_write = mem_writer_write,
    .writer_finish = mem_writer_finish,
    .writer_publish = mem_writer_publish,
    .writer_abort = mem_writer_abort,
    .settle = mem_settle,
    .reader_open = mem_reader_open,
    .reader_read = mem_reader_read,
    .reader_close = mem_reader_close,
    .blob_unlink = mem_blob_unlink,
    .blob_free = mem_blob_free,
};
