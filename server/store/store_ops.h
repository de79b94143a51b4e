/* SPDX-License-Identifier: MIT */
/* The store's seam: where an object's bytes live. store.c owns the index,
 * the lock and the S3 rules, and calls a backend through this table. Two
 * implementations: hs_store_mem_ops (memory) and hs_store_dir_ops (a
 * directory: temporary file, fsync, rename).
 *
 * A blob is one committed byte sequence (an object or a part). Calls marked
 * "locked" run under the store's lock and must be quick; the others run
 * without it, one thread per writer or reader. */
#ifndef HS_STORE_OPS_H
#define HS_STORE_OPS_H

#include "store.h"

struct hs_blob;
struct hs_blob_writer;
struct hs_blob_reader;

enum hs_blob_kind {
  HS_BLOB_OBJECT,
  HS_BLOB_PART,
  HS_BLOB_BUCKET /* for settle: the bucket itself */
};

struct hs_blob_name {
  enum hs_blob_kind kind;
  const char *bucket;    /* both kinds */
  const char *key;       /* object */
  const char *upload_id; /* part */
  unsigned part;         /* part */
};

/* Replay of what a backend holds, at open. */
struct hs_store_loader {
  void *ctx;
  enum hs_err (*bucket)(void *ctx, const char *bucket, int64_t ctime);
  /* The loader takes ownership of blob. */
  enum hs_err (*object)(void *ctx, const char *bucket, const char *key,
                        const struct hs_obj_info *info, struct hs_blob *blob);
};

struct hs_store_ops {
  const char *name;
  /* cfg->data_dir for the directory, cfg->max_memory for the memory. */
  enum hs_err (*open)(const struct hs_store_config *cfg,
                      const struct hs_store_loader *l, void **impl);
  void (*close)(void *impl);
  enum hs_err (*bucket_create)(void *impl, const char *bucket, int64_t *ctime);
  /* The bucket holds no objects; fails with HS_ERR_BUCKET_NOT_EMPTY if the
   * backend still has bytes in flight there. */
  enum hs_err (*bucket_remove)(void *impl, const char *bucket);
  enum hs_err (*upload_create)(void *impl, const char *id);
  /* The upload's parts were all dropped. */
  void (*upload_remove)(void *impl, const char *id);

  /* HS_ERR_STORE_FULL when size_hint does not fit (memory). */
  enum hs_err (*writer_open)(void *impl, const struct hs_blob_name *name,
                             uint64_t size_hint, struct hs_blob_writer **out);
  enum hs_err (*writer_write)(struct hs_blob_writer *w, const void *p,
                              size_t n);
  /* Makes the bytes and info durable, not yet visible. */
  enum hs_err (*writer_finish)(struct hs_blob_writer *w,
                               const struct hs_obj_info *info);
  /* Locked. Makes the blob visible under its name, replacing any blob of
   * that name, and frees the writer (also on failure). */
  enum hs_err (*writer_publish)(struct hs_blob_writer *w,
                                struct hs_blob **out);
  /* Discards the writer and what it wrote. */
  void (*writer_abort)(struct hs_blob_writer *w);
  /* Not locked, after a publish, a blob_unlink, bucket_create or
   * bucket_remove under this name: makes it durable (the directory backend
   * fsyncs the directory), so that the lock is never held across that
   * wait. HS_ERR_IO if it could not. */
  enum hs_err (*settle)(void *impl, const struct hs_blob_name *name);

  /* Locked. A reader of the blob's bytes as they are now. */
  enum hs_err (*reader_open)(struct hs_blob *b, struct hs_blob_reader **out);
  enum hs_err (*reader_read)(struct hs_blob_reader *r, uint64_t off, void *buf,
                             size_t n);
  void (*reader_close)(struct hs_blob_reader *r);

  /* Locked. The blob was deleted: remove its bytes (readers already open
   * keep theirs). Not called when a blob is replaced by another of the same
   * name. */
  void (*blob_unlink)(struct hs_blob *b);
  /* The index dropped its last reference. */
  void (*blob_free)(struct hs_blob *b);
};

extern const struct hs_store_ops hs_store_mem_ops;
extern const struct hs_store_ops hs_store_dir_ops;

#endif
