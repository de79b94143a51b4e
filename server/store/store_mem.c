/* SPDX-License-Identifier: MIT */
/* The memory backend: a blob is a reference-counted byte array; readers
 * hold a reference, so a deleted or replaced object stays readable by
 * whoever opened it. Nothing survives the process. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "store_ops.h"

/* Where to start when the announced size cannot be reserved at once. */
#define PREALLOC_MAX (64u << 20)

struct hs_blob {
  atomic_uint refs;
  uint8_t *data;
  uint64_t size;
};

struct hs_blob_writer {
  struct hs_blob *b;
  uint64_t cap;
};

struct hs_blob_reader {
  struct hs_blob *b;
};

static void blob_put(struct hs_blob *b)
{
  if (b && atomic_fetch_sub(&b->refs, 1) == 1) {
    free(b->data);
    free(b);
  }
}

static enum hs_err mem_open(const char *dir, const struct hs_store_loader *l,
                            void **impl)
{
  static int token;
  *impl = &token; /* no state */
  return HS_OK;
}

static void mem_close(void *impl) {}

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

static enum hs_err mem_writer_open(void *impl, const struct hs_blob_name *name,
                                   uint64_t size_hint,
                                   struct hs_blob_writer **out)
{
  struct hs_blob_writer *w = calloc(1, sizeof *w);
  struct hs_blob *b = calloc(1, sizeof *b);
  if (!w || !b)
    goto fail;
  /* The whole announced size first (only the pages written are ever
   * committed), so large uploads are not copied while they grow; a smaller
   * start if that much address space is refused. */
  uint64_t cap = size_hint;
  if (cap && !(b->data = malloc((size_t)cap))) {
    cap = size_hint < PREALLOC_MAX ? size_hint : PREALLOC_MAX;
    if (!(b->data = malloc((size_t)cap)))
      goto fail;
  }
  atomic_init(&b->refs, 1);
  w->b = b;
  w->cap = cap;
  *out = w;
  return HS_OK;
fail:
  free(b);
  free(w);
  return HS_ERR_NOMEM;
}

static enum hs_err mem_writer_write(struct hs_blob_writer *w, const void *p,
                                    size_t n)
{
  struct hs_blob *b = w->b;
  if (n == 0)
    return HS_OK;
  if (n > SIZE_MAX - b->size)
    return HS_ERR_NOMEM;
  if (b->size + n > w->cap) {
    uint64_t cap = w->cap ? w->cap : 4096;
    while (cap < b->size + n)
      cap = cap > SIZE_MAX / 2 ? b->size + n : cap * 2;
    uint8_t *d = realloc(b->data, (size_t)cap);
    if (!d)
      return HS_ERR_NOMEM;
    b->data = d;
    w->cap = cap;
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
  *out = w->b;
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

static void mem_settle(void *impl, const struct hs_blob_name *name) {}

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
