/* SPDX-License-Identifier: MIT */
/* The directory backend.
 *
 *   DIR/<bucket>/                  one directory per bucket
 *   DIR/<bucket>/<sha256(key)>.obj one file per object: a 4 KiB header
 *                                  (key, size, ETag, attributes), then data
 *   DIR/.uploads/<id>/<n>.part     multipart parts, same format
 *   .tmp-XXXXXX                    bytes on their way, beside their target
 *
 * A blob is written to a temporary file in its target's directory, fsynced,
 * and renamed over the target (the directory is fsynced after, outside the
 * store's lock), so a crash or an aborted transfer never leaves a
 * half-written object. Temporary files and
 * uploads left by an earlier run are removed at open. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hash.h"
#include "store_ops.h"
#include "uri.h" /* hs_bucket_name_valid, for directories found on open */

#define HDR_SIZE 4096
#define MAGIC "HSOBJ001"
#define UPLOADS ".uploads"
#define TMP_PREFIX ".tmp-"

struct dir_store {
  char root[PATH_MAX];
  struct hs_store_sys sys;
};

struct hs_blob {
  char path[PATH_MAX];
};

struct hs_blob_writer {
  struct dir_store *ds;
  int fd;
  char tmp[PATH_MAX];
  char final[PATH_MAX];
  char dir[PATH_MAX];
  char key[HS_KEY_MAX + 1];
  uint64_t size;
};

struct hs_blob_reader {
  int fd;
};

static void warn_path(const char *path, const char *why)
{
  fprintf(stderr, "hipobj-test-server: %s: %s\n", path, why);
}

static bool join(char out[PATH_MAX], const char *a, const char *b,
                 const char *c)
{
  int n = snprintf(out, PATH_MAX, "%s/%s%s%s", a, b, c ? "/" : "",
                   c ? c : "");
  return n > 0 && n < PATH_MAX;
}

/* ---- the header --------------------------------------------------------- */

static void put_le(uint8_t *p, uint64_t v, int n)
{
  for (int i = 0; i < n; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

/* magic 8 | size 8 | mtime 8 | parts 4 | key_len 2 | ctype_len 2 |
 * meta_len 2 | headers_len 2 | etag 40 | key | ctype | meta | headers
 * (headers_len was reserved, always 0, before objects kept headers) */
#define FIXED 76
_Static_assert(FIXED + HS_KEY_MAX + HS_CONTENT_TYPE_MAX - 1 +
                       HS_USER_META_MAX + HS_OBJ_HEADERS_MAX <=
                   HDR_SIZE,
               "the largest attributes fit in the header");

static void header_encode(uint8_t h[HDR_SIZE], const char *key,
                          const struct hs_obj_info *in)
{
  memset(h, 0, HDR_SIZE);
  size_t kl = strnlen(key, HS_KEY_MAX);
  size_t cl = strnlen(in->attrs.content_type, HS_CONTENT_TYPE_MAX - 1);
  size_t ml = strnlen(in->attrs.meta, HS_USER_META_MAX);
  size_t hl = strnlen(in->attrs.headers, HS_OBJ_HEADERS_MAX);
  memcpy(h, MAGIC, 8);
  put_le(h + 8, in->size, 8);
  put_le(h + 16, (uint64_t)in->mtime, 8);
  put_le(h + 24, in->parts, 4);
  put_le(h + 28, kl, 2);
  put_le(h + 30, cl, 2);
  put_le(h + 32, ml, 2);
  put_le(h + 34, hl, 2);
  memcpy(h + 36, in->etag, strnlen(in->etag, HS_ETAG_MAX - 1));
  memcpy(h + FIXED, key, kl);
  memcpy(h + FIXED + kl, in->attrs.content_type, cl);
  memcpy(h + FIXED + kl + cl, in->attrs.meta, ml);
  memcpy(h + FIXED + kl + cl + ml, in->attrs.headers, hl);
}

static bool header_decode(const uint8_t h[HDR_SIZE], char key[HS_KEY_MAX + 1],
                          struct hs_obj_info *out)
{
  if (memcmp(h, MAGIC, 8) != 0)
    return false;
  size_t kl = get_le(h + 28, 2), cl = get_le(h + 30, 2),
         ml = get_le(h + 32, 2), hl = get_le(h + 34, 2);
  if (kl > HS_KEY_MAX || cl >= HS_CONTENT_TYPE_MAX || ml > HS_USER_META_MAX ||
      hl > HS_OBJ_HEADERS_MAX ||
      memchr(h + 36, '\0', HS_ETAG_MAX) == NULL)
    return false;
  struct hs_obj_info in;
  memset(&in, 0, sizeof in);
  in.size = get_le(h + 8, 8);
  in.mtime = (int64_t)get_le(h + 16, 8);
  in.parts = (unsigned)get_le(h + 24, 4);
  memcpy(in.etag, h + 36, HS_ETAG_MAX);
  memcpy(key, h + FIXED, kl);
  key[kl] = '\0';
  memcpy(in.attrs.content_type, h + FIXED + kl, cl);
  memcpy(in.attrs.meta, h + FIXED + kl + cl, ml);
  memcpy(in.attrs.headers, h + FIXED + kl + cl + ml, hl);
  if (strlen(key) != kl)
    return false;
  *out = in;
  return true;
}

static void object_file(char out[65 + 4], const char *key)
{
  uint8_t d[HS_SHA256_LEN];
  hs_sha256(key, strlen(key), d);
  hs_hex(d, sizeof d, out);
  memcpy(out + 64, ".obj", 5);
}

/* ---- small file-system helpers ------------------------------------------ */

static int fsync_dir(const struct dir_store *ds, const char *dir)
{
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  int rc = ds->sys.fsync(fd);
  if (ds->sys.close(fd) != 0)
    rc = -1;
  if (rc != 0)
    warn_path(dir, "the directory could not be made durable (fsync)");
  return rc;
}

static bool write_all(int fd, const void *p, size_t n, off_t off)
{
  const uint8_t *b = p;
  while (n) {
    ssize_t w = pwrite(fd, b, n, off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    b += w;
    n -= (size_t)w;
    off += w;
  }
  return true;
}

static bool read_all(int fd, void *p, size_t n, off_t off)
{
  uint8_t *b = p;
  while (n) {
    ssize_t r = pread(fd, b, n, off);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return false;
    b += r;
    n -= (size_t)r;
    off += r;
  }
  return true;
}

/* Removes the files of a directory (not recursively), then the directory. */
static void remove_dir(const char *path)
{
  DIR *d = opendir(path);
  if (d) {
    struct dirent *e;
    char p[PATH_MAX];
    while ((e = readdir(d))) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
        continue;
      if (join(p, path, e->d_name, NULL))
        unlink(p);
    }
    closedir(d);
  }
  rmdir(path);
}

/* ---- open: load what the directory holds -------------------------------- */

static enum hs_err load_file(const char *bucket, const char *dir,
                             const char *name, const struct hs_store_loader *l)
{
  char path[PATH_MAX];
  if (!join(path, dir, name, NULL))
    return HS_OK;
  if (strncmp(name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0) {
    unlink(path); /* an earlier run's unfinished write */
    return HS_OK;
  }
  size_t n = strlen(name);
  if (n != 68 || strcmp(name + 64, ".obj") != 0) {
    warn_path(path, "not an object file, ignored");
    return HS_OK;
  }
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return HS_OK;
  uint8_t h[HDR_SIZE];
  char key[HS_KEY_MAX + 1], expect[69];
  struct hs_obj_info info;
  struct stat sb;
  bool ok = fstat(fd, &sb) == 0 && read_all(fd, h, HDR_SIZE, 0) &&
            header_decode(h, key, &info) &&
            (uint64_t)sb.st_size == HDR_SIZE + info.size;
  close(fd);
  if (ok) {
    object_file(expect, key);
    ok = strcmp(expect, name) == 0;
  }
  if (!ok) {
    warn_path(path, "damaged object file, ignored");
    return HS_OK;
  }
  struct hs_blob *b = malloc(sizeof *b);
  if (!b)
    return HS_ERR_NOMEM;
  memcpy(b->path, path, sizeof b->path);
  return l->object(l->ctx, bucket, key, &info, b);
}

static enum hs_err load_bucket(struct dir_store *ds, const char *name,
                               const struct hs_store_loader *l)
{
  char path[PATH_MAX];
  struct stat sb;
  if (!join(path, ds->root, name, NULL) || stat(path, &sb) != 0 ||
      !S_ISDIR(sb.st_mode))
    return HS_OK;
  enum hs_err err = l->bucket(l->ctx, name, (int64_t)sb.st_mtime);
  DIR *d = opendir(path);
  if (!d)
    return err ? err : HS_ERR_IO;
  struct dirent *e;
  while (!err && (e = readdir(d)))
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
      err = load_file(name, path, e->d_name, l);
  closedir(d);
  return err;
}

static enum hs_err dir_open(const struct hs_store_config *cfg,
                            const struct hs_store_loader *l, void **impl)
{
  const char *dir = cfg->data_dir;
  static const struct hs_store_sys real = {.fsync = fsync, .close = close};
  struct dir_store *ds = calloc(1, sizeof *ds);
  if (!ds)
    return HS_ERR_NOMEM;
  ds->sys = cfg->sys ? *cfg->sys : real;
  enum hs_err err = HS_ERR_IO;
  int n = snprintf(ds->root, sizeof ds->root, "%s", dir);
  if (n <= 0 || n >= (int)sizeof ds->root)
    goto fail;
  while (n > 1 && ds->root[n - 1] == '/')
    ds->root[--n] = '\0';
  if (mkdir(ds->root, 0755) != 0 && errno != EEXIST) {
    warn_path(ds->root, strerror(errno));
    goto fail;
  }
  char up[PATH_MAX];
  if (!join(up, ds->root, UPLOADS, NULL))
    goto fail;
  /* Uploads do not outlive the server: clear those of an earlier run. */
  DIR *d = opendir(up);
  if (d) {
    struct dirent *e;
    char p[PATH_MAX];
    while ((e = readdir(d)))
      if (e->d_name[0] != '.' && join(p, up, e->d_name, NULL))
        remove_dir(p);
    closedir(d);
  }
  if (mkdir(up, 0755) != 0 && errno != EEXIST) {
    warn_path(up, strerror(errno));
    goto fail;
  }
  d = opendir(ds->root);
  if (!d) {
    warn_path(ds->root, strerror(errno));
    goto fail;
  }
  struct dirent *e;
  err = HS_OK;
  while (!err && (e = readdir(d)))
    if (hs_bucket_name_valid(e->d_name))
      err = load_bucket(ds, e->d_name, l);
  closedir(d);
  if (err)
    goto fail;
  *impl = ds;
  return HS_OK;
fail:
  free(ds);
  return err;
}

static void dir_close(void *impl) { free(impl); }

static enum hs_err dir_bucket_create(void *impl, const char *bucket,
                                     int64_t *ctime)
{
  struct dir_store *ds = impl;
  char path[PATH_MAX];
  if (!join(path, ds->root, bucket, NULL))
    return HS_ERR_IO;
  if (mkdir(path, 0755) != 0 && errno != EEXIST)
    return HS_ERR_IO;
  return HS_OK;
}

static enum hs_err dir_bucket_remove(void *impl, const char *bucket)
{
  struct dir_store *ds = impl;
  char path[PATH_MAX];
  if (!join(path, ds->root, bucket, NULL))
    return HS_ERR_IO;
  if (rmdir(path) != 0 && errno != ENOENT)
    return errno == ENOTEMPTY || errno == EEXIST ? HS_ERR_BUCKET_NOT_EMPTY
                                                 : HS_ERR_IO;
  return HS_OK;
}

static enum hs_err dir_upload_create(void *impl, const char *id)
{
  struct dir_store *ds = impl;
  char path[PATH_MAX];
  if (!join(path, ds->root, UPLOADS, id) || mkdir(path, 0755) != 0)
    return HS_ERR_IO;
  return HS_OK;
}

static void dir_upload_remove(void *impl, const char *id)
{
  struct dir_store *ds = impl;
  char path[PATH_MAX];
  if (join(path, ds->root, UPLOADS, id))
    remove_dir(path);
}

/* ---- writers ------------------------------------------------------------ */

static enum hs_err dir_writer_open(void *impl, const struct hs_blob_name *name,
                                   uint64_t size_hint,
                                   struct hs_blob_writer **out)
{
  struct dir_store *ds = impl;
  struct hs_blob_writer *w = calloc(1, sizeof *w);
  if (!w)
    return HS_ERR_NOMEM;
  w->ds = ds;
  w->fd = -1;
  if (name->key) {
    size_t kl = strnlen(name->key, HS_KEY_MAX);
    memcpy(w->key, name->key, kl);
    w->key[kl] = '\0';
  }
  char file[72];
  bool ok;
  if (name->kind == HS_BLOB_OBJECT) {
    object_file(file, name->key);
    ok = join(w->dir, ds->root, name->bucket, NULL);
  } else {
    snprintf(file, sizeof file, "%u.part", name->part);
    ok = join(w->dir, ds->root, UPLOADS, name->upload_id);
  }
  ok = ok && join(w->final, w->dir, file, NULL) &&
       join(w->tmp, w->dir, TMP_PREFIX "XXXXXX", NULL);
  if (!ok) {
    free(w);
    return HS_ERR_IO;
  }
  w->fd = mkostemp(w->tmp, O_CLOEXEC);
  if (w->fd < 0) {
    enum hs_err err = errno == ENOENT ? (name->kind == HS_BLOB_OBJECT
                                             ? HS_ERR_NO_BUCKET
                                             : HS_ERR_NO_UPLOAD)
                                      : HS_ERR_IO;
    free(w);
    return err;
  }
  *out = w;
  return HS_OK;
}

static enum hs_err dir_writer_write(struct hs_blob_writer *w, const void *p,
                                    size_t n)
{
  if (!write_all(w->fd, p, n, (off_t)(HDR_SIZE + w->size)))
    return HS_ERR_IO;
  w->size += n;
  return HS_OK;
}

static enum hs_err dir_writer_finish(struct hs_blob_writer *w,
                                     const struct hs_obj_info *info)
{
  uint8_t h[HDR_SIZE];
  header_encode(h, w->key, info);
  if (!write_all(w->fd, h, sizeof h, 0) || w->ds->sys.fsync(w->fd) != 0)
    return HS_ERR_IO;
  /* close can report a write-back that failed (NFS, quotas) */
  int rc = w->ds->sys.close(w->fd);
  w->fd = -1;
  return rc == 0 ? HS_OK : HS_ERR_IO;
}

static void writer_free(struct hs_blob_writer *w)
{
  if (w->fd >= 0)
    close(w->fd);
  free(w);
}

static enum hs_err dir_writer_publish(struct hs_blob_writer *w,
                                      struct hs_blob **out)
{
  struct hs_blob *b = malloc(sizeof *b);
  enum hs_err err = HS_ERR_NOMEM;
  if (!b)
    goto fail;
  err = HS_ERR_IO;
  if (rename(w->tmp, w->final) != 0)
    goto fail;
  memcpy(b->path, w->final, sizeof b->path);
  writer_free(w);
  *out = b;
  return HS_OK;
fail:
  free(b);
  unlink(w->tmp);
  writer_free(w);
  return err;
}

static void dir_writer_abort(struct hs_blob_writer *w)
{
  if (!w)
    return;
  unlink(w->tmp);
  writer_free(w);
}

static enum hs_err dir_settle(void *impl, const struct hs_blob_name *name)
{
  struct dir_store *ds = impl;
  char path[PATH_MAX];
  bool ok;
  switch (name->kind) {
  case HS_BLOB_OBJECT: ok = join(path, ds->root, name->bucket, NULL); break;
  case HS_BLOB_PART: ok = join(path, ds->root, UPLOADS, name->upload_id); break;
  default:
    ok = snprintf(path, sizeof path, "%s", ds->root) < (int)sizeof path;
  }
  return ok && fsync_dir(ds, path) == 0 ? HS_OK : HS_ERR_IO;
}

/* ---- readers, blobs ----------------------------------------------------- */

static enum hs_err dir_reader_open(struct hs_blob *b,
                                   struct hs_blob_reader **out)
{
  struct hs_blob_reader *r = malloc(sizeof *r);
  if (!r)
    return HS_ERR_NOMEM;
  r->fd = open(b->path, O_RDONLY | O_CLOEXEC);
  if (r->fd < 0) {
    free(r);
    return HS_ERR_IO;
  }
  *out = r;
  return HS_OK;
}

static enum hs_err dir_reader_read(struct hs_blob_reader *r, uint64_t off,
                                   void *buf, size_t n)
{
  return read_all(r->fd, buf, n, (off_t)(HDR_SIZE + off)) ? HS_OK : HS_ERR_IO;
}

static void dir_reader_close(struct hs_blob_reader *r)
{
  if (!r)
    return;
  close(r->fd);
  free(r);
}

static void dir_blob_unlink(struct hs_blob *b) { unlink(b->path); }
static void dir_blob_free(struct hs_blob *b) { free(b); }

const struct hs_store_ops hs_store_dir_ops = {
    .name = "directory",
    .open = dir_open,
    .close = dir_close,
    .bucket_create = dir_bucket_create,
    .bucket_remove = dir_bucket_remove,
    .upload_create = dir_upload_create,
    .upload_remove = dir_upload_remove,
    .writer_open = dir_writer_open,
    .writer_write = dir_writer_write,
    .writer_finish = dir_writer_finish,
    .writer_publish = dir_writer_publish,
    .writer_abort = dir_writer_abort,
    .settle = dir_settle,
    .reader_open = dir_reader_open,
    .reader_read = dir_reader_read,
    .reader_close = dir_reader_close,
    .blob_unlink = dir_blob_unlink,
    .blob_free = dir_blob_free,
};
