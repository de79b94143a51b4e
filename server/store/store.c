/* SPDX-License-Identifier: MIT */
/* The index (buckets, objects, uploads) under one lock, and the S3 rules.
 * Bytes go through the backend's ops table. */
#include "store.h"

#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/thread_safety.h"
#include "hash.h"
#include "store_ops.h"

#define COPY_CHUNK (1u << 20)
/* Completed uploads remembered, so that a retried CompleteMultipartUpload
 * (SDKs retry it) gets the same result: the last DONE_MAX, for DONE_TTL_S. */
#define DONE_MAX 1024
#define DONE_TTL_S 900

struct entry {
  char *key; /* objects; NULL for parts */
  struct hs_blob *blob;
  struct hs_obj_info info;
  char *tags; /* NULL: none (hs_store_tags_get) */
  /* a multipart object's parts, as completed (hs_store_object_parts);
   * NULL when not known (loaded from a directory) */
  struct hs_part_entry *parts;
};

struct bucket {
  char name[HS_BUCKET_MAX + 1];
  int64_t ctime;
  struct entry **objs; /* sorted by key */
  size_t n, cap;
};

struct part {
  unsigned number;
  struct entry *e;
};

struct upload {
  char id[HS_UPLOAD_ID_LEN + 1];
  char bucket[HS_BUCKET_MAX + 1];
  char *key;
  struct hs_obj_attrs attrs;
  int64_t initiated;
  int64_t touched; /* creation or the last part: for expiry */
  struct part *parts; /* sorted by number */
  size_t n, cap;
  char *tags; /* the object's, from CreateMultipartUpload; NULL: none */
  bool completing; /* invisible to part uploads and aborts meanwhile */
};

/* An upload completed: its id, where, and the result. */
struct done_upload {
  char id[HS_UPLOAD_ID_LEN + 1];
  char bucket[HS_BUCKET_MAX + 1];
  char *key;
  int64_t when;
  struct hs_obj_info info;
};

struct hs_store {
  const struct hs_store_ops *ops;
  void *impl;
  struct hs_store_config cfg;
  ho_mutex lock;
  struct bucket **buckets HO_GUARDED_BY(lock); /* sorted by name */
  size_t nbuckets HO_GUARDED_BY(lock);
  struct upload **uploads HO_GUARDED_BY(lock);
  size_t nuploads HO_GUARDED_BY(lock);
  struct done_upload *done HO_GUARDED_BY(lock); /* DONE_MAX, a ring */
  size_t done_next HO_GUARDED_BY(lock);
};

struct hs_writer {
  struct hs_store *st;
  struct hs_blob_writer *bw;
  struct hs_digest *md5;
  uint64_t size;
  enum hs_blob_kind kind;
  char bucket[HS_BUCKET_MAX + 1];
  char *key;
  char id[HS_UPLOAD_ID_LEN + 1];
  unsigned part;
  struct hs_obj_attrs attrs;
  char *tags; /* the object's: given to its entry at the commit */
  bool has_cond;
  struct hs_cond cond; /* its strings are the writer's copies */
};

struct hs_reader {
  struct hs_store *st;
  struct hs_blob_reader *br;
  uint64_t size;
};

static int64_t now_s(void) { return (int64_t)time(NULL); }

/* ---- sorted arrays ---------------------------------------------------- */

static bool grow(void **arr, size_t *cap, size_t n, size_t elem)
{
  if (n < *cap)
    return true;
  size_t c = *cap ? *cap * 2 : 8;
  void *p = realloc(*arr, c * elem);
  if (!p)
    return false;
  *arr = p;
  *cap = c;
  return true;
}

/* Index of the first object whose key is >= key (or > key if after). */
static size_t obj_lower(const struct bucket *b, const char *key, bool after)
{
  size_t lo = 0, hi = b->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(b->objs[mid]->key, key);
    if (c < 0 || (after && c == 0))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static struct entry *obj_find(const struct bucket *b, const char *key,
                              size_t *pos)
{
  size_t i = obj_lower(b, key, false);
  if (pos)
    *pos = i;
  return i < b->n && strcmp(b->objs[i]->key, key) == 0 ? b->objs[i] : NULL;
}

static struct bucket *bucket_find(struct hs_store *st, const char *name,
                                  size_t *pos) HO_REQUIRES(st->lock)
{
  size_t lo = 0, hi = st->nbuckets;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (strcmp(st->buckets[mid]->name, name) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (pos)
    *pos = lo;
  return lo < st->nbuckets && strcmp(st->buckets[lo]->name, name) == 0
             ? st->buckets[lo]
             : NULL;
}

static struct upload *upload_find(struct hs_store *st, const char *bucket,
                                  const char *key, const char *id,
                                  size_t *pos) HO_REQUIRES(st->lock)
{
  for (size_t i = 0; i < st->nuploads; i++) {
    struct upload *u = st->uploads[i];
    if (strcmp(u->id, id) == 0 && strcmp(u->bucket, bucket) == 0 &&
        strcmp(u->key, key) == 0) {
      if (pos)
        *pos = i;
      return u;
    }
  }
  return NULL;
}

static void entry_free(struct hs_store *st, struct entry *e, bool unlink)
{
  if (!e)
    return;
  if (unlink)
    st->ops->blob_unlink(e->blob);
  st->ops->blob_free(e->blob);
  free(e->tags);
  free(e->parts);
  free(e->key);
  free(e);
}

/* The listing entry of part e, number n. */
static void part_entry_of(const struct entry *e, unsigned n,
                          struct hs_part_entry *out)
{
  out->number = n;
  out->size = e->info.size;
  out->mtime = e->info.mtime;
  memcpy(out->etag, e->info.etag, sizeof out->etag);
  const char *h = e->info.attrs.headers;
  size_t hl = strnlen(h, sizeof out->checksum - 1);
  memcpy(out->checksum, h, hl);
  out->checksum[hl] = '\0';
}

/* The number of tags in "key\tvalue\n" lines. */
static unsigned tag_count(const char *tags)
{
  unsigned n = 0;
  for (const char *p = tags; p && *p; p++)
    n += *p == '\n';
  return n;
}

/* e's tags become t (owned; NULL: none). */
static void entry_set_tags(struct entry *e, char *t)
{
  free(e->tags);
  e->tags = t && *t ? t : NULL;
  if (t && !*t)
    free(t);
  e->info.tag_count = tag_count(e->tags);
}

static struct entry *entry_new(const char *key, struct hs_blob *blob,
                               const struct hs_obj_info *info)
{
  struct entry *e = calloc(1, sizeof *e);
  if (!e)
    return NULL;
  if (key && !(e->key = strdup(key))) {
    free(e);
    return NULL;
  }
  e->blob = blob;
  e->info = *info;
  return e;
}

/* Puts e into b under e->key, replacing an older entry (its bytes were
 * replaced by the backend's publish: no unlink). */
static enum hs_err obj_insert(struct hs_store *st, struct bucket *b,
                              struct entry *e) HO_REQUIRES(st->lock)
{
  size_t pos;
  struct entry *old = obj_find(b, e->key, &pos);
  if (old) {
    b->objs[pos] = e;
    entry_free(st, old, false);
    return HS_OK;
  }
  if (!grow((void **)&b->objs, &b->cap, b->n, sizeof *b->objs))
    return HS_ERR_NOMEM;
  memmove(b->objs + pos + 1, b->objs + pos, (b->n - pos) * sizeof *b->objs);
  b->objs[pos] = e;
  b->n++;
  return HS_OK;
}

static void upload_free(struct hs_store *st, struct upload *u, bool unlink)
{
  for (size_t i = 0; i < u->n; i++)
    entry_free(st, u->parts[i].e, unlink);
  if (unlink)
    st->ops->upload_remove(st->impl, u->id);
  free(u->parts);
  free(u->tags);
  free(u->key);
  free(u);
}

static void upload_remove_at(struct hs_store *st, size_t i)
    HO_REQUIRES(st->lock)
{
  struct upload *u = st->uploads[i];
  st->uploads[i] = st->uploads[--st->nuploads];
  upload_free(st, u, true);
}

/* ---- buckets ---------------------------------------------------------- */

static enum hs_err bucket_add(struct hs_store *st, const char *name,
                              int64_t ctime, size_t pos) HO_REQUIRES(st->lock)
{
  struct bucket *b = calloc(1, sizeof *b);
  if (!b)
    return HS_ERR_NOMEM;
  struct bucket **arr =
      realloc(st->buckets, (st->nbuckets + 1) * sizeof *st->buckets);
  if (!arr) {
    free(b);
    return HS_ERR_NOMEM;
  }
  st->buckets = arr;
  memmove(arr + pos + 1, arr + pos, (st->nbuckets - pos) * sizeof *arr);
  size_t n = strnlen(name, HS_BUCKET_MAX);
  memcpy(b->name, name, n);
  b->name[n] = '\0';
  b->ctime = ctime;
  arr[pos] = b;
  st->nbuckets++;
  return HS_OK;
}

static void bucket_free(struct hs_store *st, struct bucket *b)
{
  for (size_t i = 0; i < b->n; i++)
    entry_free(st, b->objs[i], false);
  free(b->objs);
  free(b);
}

/* ---- open / close ----------------------------------------------------- */

static enum hs_err load_bucket(void *ctx, const char *name, int64_t ctime)
    HO_NO_TSA
{
  struct hs_store *st = ctx;
  size_t pos;
  if (bucket_find(st, name, &pos))
    return HS_OK;
  return bucket_add(st, name, ctime, pos);
}

static enum hs_err load_object(void *ctx, const char *bucket, const char *key,
                               const struct hs_obj_info *info,
                               struct hs_blob *blob) HO_NO_TSA
{
  struct hs_store *st = ctx;
  struct bucket *b = bucket_find(st, bucket, NULL);
  struct entry *e = b ? entry_new(key, blob, info) : NULL;
  if (!e) {
    st->ops->blob_free(blob);
    return b ? HS_ERR_NOMEM : HS_ERR_NO_BUCKET;
  }
  enum hs_err err = obj_insert(st, b, e);
  if (err)
    entry_free(st, e, false);
  return err;
}

enum hs_err hs_store_open(const struct hs_store_config *cfg,
                          struct hs_store **out)
{
  struct hs_store *st = calloc(1, sizeof *st);
  if (!st)
    return HS_ERR_NOMEM;
  st->cfg = *cfg;
  st->ops = cfg->data_dir ? &hs_store_dir_ops : &hs_store_mem_ops;
  ho_mutex_init(&st->lock);
  struct done_upload *done = calloc(DONE_MAX, sizeof *done);
  if (!done) {
    ho_mutex_destroy(&st->lock);
    free(st);
    return HS_ERR_NOMEM;
  }
  struct hs_store_loader loader = {
      .ctx = st, .bucket = load_bucket, .object = load_object};
  ho_mutex_lock(&st->lock);
  st->done = done;
  enum hs_err err = st->ops->open(cfg, &loader, &st->impl);
  ho_mutex_unlock(&st->lock);
  if (err) {
    hs_store_close(st);
    return err;
  }
  *out = st;
  return HS_OK;
}

void hs_store_close(struct hs_store *st)
{
  if (!st)
    return;
  ho_mutex_lock(&st->lock);
  for (size_t i = 0; i < st->nuploads; i++)
    upload_free(st, st->uploads[i], true);
  free(st->uploads);
  for (size_t i = 0; i < st->nbuckets; i++)
    bucket_free(st, st->buckets[i]);
  free(st->buckets);
  st->uploads = NULL;
  st->buckets = NULL;
  st->nuploads = st->nbuckets = 0;
  for (size_t i = 0; st->done && i < DONE_MAX; i++)
    free(st->done[i].key);
  free(st->done);
  st->done = NULL;
  ho_mutex_unlock(&st->lock);
  if (st->impl)
    st->ops->close(st->impl);
  ho_mutex_destroy(&st->lock);
  free(st);
}

const char *hs_store_kind(const struct hs_store *st) { return st->ops->name; }

static enum hs_err settle_bucket(struct hs_store *st, const char *name)
{
  struct hs_blob_name n = {.kind = HS_BLOB_BUCKET, .bucket = name};
  return st->ops->settle(st->impl, &n);
}

enum hs_err hs_store_bucket_create(struct hs_store *st, const char *name)
{
  enum hs_err err;
  size_t pos;
  ho_mutex_lock(&st->lock);
  if (bucket_find(st, name, &pos)) {
    err = HS_ERR_BUCKET_EXISTS;
  } else if (st->cfg.max_buckets && st->nbuckets >= st->cfg.max_buckets) {
    err = HS_ERR_TOO_MANY;
  } else {
    int64_t ctime = now_s();
    err = st->ops->bucket_create(st->impl, name, &ctime);
    if (!err) {
      err = bucket_add(st, name, ctime, pos);
      if (err)
        st->ops->bucket_remove(st->impl, name);
    }
  }
  ho_mutex_unlock(&st->lock);
  if (!err)
    err = settle_bucket(st, name);
  return err;
}

enum hs_err hs_store_bucket_delete(struct hs_store *st, const char *name)
{
  enum hs_err err = HS_OK;
  size_t pos;
  ho_mutex_lock(&st->lock);
  struct bucket *b = bucket_find(st, name, &pos);
  if (!b) {
    err = HS_ERR_NO_BUCKET;
    goto out;
  }
  if (b->n) {
    err = HS_ERR_BUCKET_NOT_EMPTY;
    goto out;
  }
  for (size_t i = 0; i < st->nuploads; i++) {
    if (strcmp(st->uploads[i]->bucket, name) == 0 &&
        st->uploads[i]->completing) {
      err = HS_ERR_BUCKET_NOT_EMPTY;
      goto out;
    }
  }
  err = st->ops->bucket_remove(st->impl, name);
  if (err)
    goto out;
  for (size_t i = st->nuploads; i-- > 0;)
    if (strcmp(st->uploads[i]->bucket, name) == 0)
      upload_remove_at(st, i);
  memmove(st->buckets + pos, st->buckets + pos + 1,
          (st->nbuckets - pos - 1) * sizeof *st->buckets);
  st->nbuckets--;
  bucket_free(st, b);
out:
  ho_mutex_unlock(&st->lock);
  if (!err)
    err = settle_bucket(st, name);
  return err;
}

enum hs_err hs_store_bucket_head(struct hs_store *st, const char *name)
{
  ho_mutex_lock(&st->lock);
  bool found = bucket_find(st, name, NULL) != NULL;
  ho_mutex_unlock(&st->lock);
  return found ? HS_OK : HS_ERR_NO_BUCKET;
}

enum hs_err hs_store_bucket_list(struct hs_store *st,
                                 struct hs_bucket_entry **out, size_t *n)
{
  enum hs_err err = HS_OK;
  ho_mutex_lock(&st->lock);
  struct hs_bucket_entry *l = NULL;
  if (st->nbuckets) {
    l = calloc(st->nbuckets, sizeof *l);
    if (!l) {
      err = HS_ERR_NOMEM;
      goto out;
    }
  }
  for (size_t i = 0; i < st->nbuckets; i++) {
    memcpy(l[i].name, st->buckets[i]->name, sizeof l[i].name);
    l[i].ctime = st->buckets[i]->ctime;
  }
  *out = l;
  *n = st->nbuckets;
out:
  ho_mutex_unlock(&st->lock);
  return err;
}

/* ---- writers ---------------------------------------------------------- */

static enum hs_err writer_new(struct hs_store *st,
                              const struct hs_blob_name *name,
                              const struct hs_obj_attrs *attrs,
                              uint64_t size_hint, struct hs_writer **out)
{
  struct hs_writer *w = calloc(1, sizeof *w);
  if (!w)
    return HS_ERR_NOMEM;
  enum hs_err err = HS_ERR_NOMEM;
  w->st = st;
  w->kind = name->kind;
  w->part = name->part;
  memcpy(w->bucket, name->bucket, strnlen(name->bucket, HS_BUCKET_MAX));
  if (name->upload_id)
    memcpy(w->id, name->upload_id,
           strnlen(name->upload_id, HS_UPLOAD_ID_LEN));
  if (attrs)
    w->attrs = *attrs;
  if (!(w->key = strdup(name->key ? name->key : "")))
    goto fail;
  if (!st->cfg.random_etags && !(w->md5 = hs_digest_md5()))
    goto fail;
  if (size_hint > st->cfg.max_object_size) {
    err = HS_ERR_ENTITY_TOO_LARGE;
    goto fail;
  }
  err = st->ops->writer_open(st->impl, name, size_hint, &w->bw);
  if (err)
    goto fail;
  *out = w;
  return HS_OK;
fail:
  hs_digest_free(w->md5);
  free(w->key);
  free(w);
  return err;
}

static void writer_free(struct hs_writer *w)
{
  hs_digest_free(w->md5);
  free(w->tags);
  free((char *)w->cond.if_match);
  free((char *)w->cond.if_none_match);
  free(w->key);
  free(w);
}

/* Whether the object e (NULL: there is none) meets c, for a write or a
 * delete (hs_cond). */
static enum hs_err cond_check(const struct hs_cond *c, const struct entry *e,
                              bool del)
{
  if (!c)
    return HS_OK;
  if (!e)
    return c->if_match && !del ? HS_ERR_NO_KEY : HS_OK;
  if (c->if_match && !hs_etag_listed(c->if_match, e->info.etag))
    return HS_ERR_PRECONDITION;
  if (c->if_none_match && hs_etag_listed(c->if_none_match, e->info.etag))
    return HS_ERR_PRECONDITION;
  if ((c->has_size && e->info.size != c->size) ||
      (c->has_mtime && e->info.mtime != c->mtime))
    return HS_ERR_PRECONDITION;
  return HS_OK;
}

enum hs_err hs_writer_set_cond(struct hs_writer *w, const struct hs_cond *c)
{
  w->cond = *c;
  w->cond.if_match = c->if_match ? strdup(c->if_match) : NULL;
  w->cond.if_none_match = c->if_none_match ? strdup(c->if_none_match) : NULL;
  w->has_cond = true;
  if ((c->if_match && !w->cond.if_match) ||
      (c->if_none_match && !w->cond.if_none_match))
    return HS_ERR_NOMEM;
  return HS_OK;
}

enum hs_err hs_writer_set_tags(struct hs_writer *w, const char *tags)
{
  free(w->tags);
  w->tags = NULL;
  if (tags && !(w->tags = strdup(tags)))
    return HS_ERR_NOMEM;
  return HS_OK;
}

enum hs_err hs_store_tags_get(struct hs_store *st, const char *bucket,
                              const char *key, char **out)
{
  enum hs_err err = HS_OK;
  char *t = NULL;
  ho_mutex_lock(&st->lock);
  struct bucket *b = bucket_find(st, bucket, NULL);
  struct entry *e = b ? obj_find(b, key, NULL) : NULL;
  if (!e)
    err = b ? HS_ERR_NO_KEY : HS_ERR_NO_BUCKET;
  else if (!(t = strdup(e->tags ? e->tags : "")))
    err = HS_ERR_NOMEM;
  ho_mutex_unlock(&st->lock);
  *out = t;
  return err;
}

enum hs_err hs_store_tags_set(struct hs_store *st, const char *bucket,
                              const char *key, const char *tags)
{
  char *t = tags ? strdup(tags) : NULL;
  if (tags && !t)
    return HS_ERR_NOMEM;
  enum hs_err err = HS_OK;
  ho_mutex_lock(&st->lock);
  struct bucket *b = bucket_find(st, bucket, NULL);
  struct entry *e = b ? obj_find(b, key, NULL) : NULL;
  if (!e) {
    err = b ? HS_ERR_NO_KEY : HS_ERR_NO_BUCKET;
    free(t);
  } else {
    entry_set_tags(e, t);
  }
  ho_mutex_unlock(&st->lock);
  return err;
}

enum hs_err hs_store_object_parts(struct hs_store *st, const char *bucket,
                                  const char *key,
                                  struct hs_part_entry **out, size_t *n)
{
  enum hs_err err = HS_OK;
  struct hs_part_entry *l = NULL;
  size_t k = 0;
  ho_mutex_lock(&st->lock);
  struct bucket *b = bucket_find(st, bucket, NULL);
  struct entry *e = b ? obj_find(b, key, NULL) : NULL;
  if (!e) {
    err = b ? HS_ERR_NO_KEY : HS_ERR_NO_BUCKET;
  } else if (e->parts && e->info.parts) {
    if ((l = malloc(e->info.parts * sizeof *l))) {
      k = e->info.parts;
      memcpy(l, e->parts, k * sizeof *l);
    } else {
      err = HS_ERR_NOMEM;
    }
  }
  ho_mutex_unlock(&st->lock);
  *out = l;
  *n = k;
  return err;
}

enum hs_err hs_store_upload_tags(struct hs_store *st, const char *bucket,
                                 const char *key, const char *id,
                                 const char *tags)
{
  char *t = tags ? strdup(tags) : NULL;
  if (tags && !t)
    return HS_ERR_NOMEM;
  ho_mutex_lock(&st->lock);
  struct upload *u = upload_find(st, bucket, key, id, NULL);
  if (u) {
    free(u->tags);
    u->tags = t;
  } else {
    free(t);
  }
  ho_mutex_unlock(&st->lock);
  return u ? HS_OK : HS_ERR_NO_UPLOAD;
}

enum hs_err hs_store_check_cond(struct hs_store *st, const char *bucket,
                                const char *key, const struct hs_cond *c)
{
  ho_mutex_lock(&st->lock);
  struct bucket *b = bucket_find(st, bucket, NULL);
  enum hs_err err = b ? cond_check(c, obj_find(b, key, NULL), false)
                      : HS_ERR_NO_BUCKET;
  ho_mutex_unlock(&st->lock);
  return err;
}

enum hs_err hs_store_put(struct hs_store *st, const char *bucket,
                         const char *key, const struct hs_obj_attrs *attrs,
                         uint64_t size_hint, struct hs_writer **out)
{
  if (hs_store_bucket_head(st, bucket))
    return HS_ERR_NO_BUCKET;
  struct hs_blob_name name = {
      .kind = HS_BLOB_OBJECT, .bucket = bucket, .key = key};
  return writer_new(st, &name, attrs, size_hint, out);
}

enum hs_err hs_writer_write(struct hs_writer *w, const void *p, size_t n)
{
  if (n > w->st->cfg.max_object_size - w->size)
    return HS_ERR_ENTITY_TOO_LARGE;
  if (n == 0)
    return HS_OK;
  enum hs_err err = w->st->ops->writer_write(w->bw, p, n);
  if (err)
    return err;
  if (w->md5)
    hs_digest_update(w->md5, p, n);
  w->size += n;
  return HS_OK;
}

uint64_t hs_writer_size(const struct hs_writer *w) { return w->size; }

struct hs_obj_attrs *hs_writer_attrs(struct hs_writer *w) { return &w->attrs; }

bool hs_writer_require_md5(struct hs_writer *w)
{
  if (w->md5)
    return true;
  if (w->size)
    return false;
  return (w->md5 = hs_digest_md5()) != NULL;
}

void hs_writer_abort(struct hs_writer *w)
{
  if (!w)
    return;
  w->st->ops->writer_abort(w->bw);
  writer_free(w);
}

static enum hs_err publish_object(struct hs_store *st, struct hs_writer *w,
                                  const struct hs_obj_info *info)
    HO_REQUIRES(st->lock)
{
  struct bucket *b = bucket_find(st, w->bucket, NULL);
  if (!b) {
    st->ops->writer_abort(w->bw);
    return HS_ERR_NO_BUCKET;
  }
  enum hs_err err = cond_check(w->has_cond ? &w->cond : NULL,
                               obj_find(b, w->key, NULL), false);
  if (err) {
    st->ops->writer_abort(w->bw);
    return err;
  }
  struct hs_blob *blob;
  err = st->ops->writer_publish(w->bw, &blob);
  if (err)
    return err;
  struct entry *e = entry_new(w->key, blob, info);
  if (e) {
    entry_set_tags(e, w->tags);
    w->tags = NULL;
  }
  if (!e || (err = obj_insert(st, b, e))) {
    /* The bytes are in place but unindexed: remove them. */
    st->ops->blob_unlink(blob);
    if (e)
      entry_free(st, e, false);
    else
      st->ops->blob_free(blob);
    return err ? err : HS_ERR_NOMEM;
  }
  return HS_OK;
}

static enum hs_err publish_part(struct hs_store *st, struct hs_writer *w,
                                const struct hs_obj_info *info)
    HO_REQUIRES(st->lock)
{
  struct upload *u = upload_find(st, w->bucket, w->key, w->id, NULL);
  if (!u || u->completing) {
    st->ops->writer_abort(w->bw);
    return HS_ERR_NO_UPLOAD;
  }
  size_t pos = 0;
  while (pos < u->n && u->parts[pos].number < w->part)
    pos++;
  bool replace = pos < u->n && u->parts[pos].number == w->part;
  if (!replace && !grow((void **)&u->parts, &u->cap, u->n, sizeof *u->parts)) {
    st->ops->writer_abort(w->bw);
    return HS_ERR_NOMEM;
  }
  struct entry *e = calloc(1, sizeof *e);
  if (!e) {
    st->ops->writer_abort(w->bw);
    return HS_ERR_NOMEM;
  }
  enum hs_err err = st->ops->writer_publish(w->bw, &e->blob);
  if (err) {
    free(e);
    return err;
  }
  e->info = *info;
  if (replace) {
    entry_free(st, u->parts[pos].e, false);
  } else {
    memmove(u->parts + pos + 1, u->parts + pos,
            (u->n - pos) * sizeof *u->parts);
    u->n++;
  }
  u->parts[pos].number = w->part;
  u->parts[pos].e = e;
  u->touched = now_s();
  return HS_OK;
}

enum hs_err hs_writer_commit(struct hs_writer *w, const uint8_t *content_md5,
                             struct hs_obj_info *info)
{
  struct hs_store *st = w->st;
  uint8_t md5[HS_MD5_LEN];
  bool have_md5 = w->md5 != NULL;
  if (have_md5)
    hs_digest_final(w->md5, md5);
  else if (RAND_bytes(md5, sizeof md5) != 1) /* random_etags */
    memset(md5, 0, sizeof md5);
  w->md5 = NULL;
  struct hs_obj_info in = {.size = w->size, .mtime = now_s(), .parts = 0};
  in.attrs = w->attrs;
  hs_etag_from_md5(md5, in.etag);
  enum hs_err err;
  if (content_md5 && !have_md5) {
    err = HS_ERR_INTERNAL;
    goto abort;
  }
  if (content_md5 && !hs_mem_equal(md5, content_md5, HS_MD5_LEN)) {
    err = HS_ERR_BAD_DIGEST;
    goto abort;
  }
  err = st->ops->writer_finish(w->bw, &in);
  if (err)
    goto abort;
  ho_mutex_lock(&st->lock);
  if (w->kind == HS_BLOB_OBJECT)
    err = publish_object(st, w, &in);
  else
    err = publish_part(st, w, &in);
  ho_mutex_unlock(&st->lock);
  if (!err) {
    /* visible now; if not durable, the client must not be told it is */
    struct hs_blob_name name = {.kind = w->kind, .bucket = w->bucket,
                                .key = w->key, .upload_id = w->id,
                                .part = w->part};
    err = st->ops->settle(st->impl, &name);
  }
  /* the backend writer is gone either way */
  writer_free(w);
  if (!err && info)
    *info = in;
  return err;
abort:
  hs_writer_abort(w);
  return err;
}

/* ---- readers ---------------------------------------------------------- */

enum hs_err hs_store_get(struct hs_store *st, const char *bucket,
                         const char *key, struct hs_obj_info *info,
                         struct hs_reader **out)
{
  enum hs_err err = HS_OK;
  struct hs_reader *r = NULL;
  if (out && !(r = calloc(1, sizeof *r)))
    return HS_ERR_NOMEM;
  ho_mutex_lock(&st->lock);
  struct bucket *b = bucket_find(st, bucket, NULL);
  struct entry *e = b ? obj_find(b, key, NULL) : NULL;
  if (!e) {
    err = b ? HS_ERR_NO_KEY : HS_ERR_NO_BUCKET;
    goto out;
  }
  if (r) {
    err = st->ops->reader_open(e->blob, &r->br);
    if (err)
      goto out;
    r->st = st;
    r->size = e->info.size;
  }
  *info = e->info;
out:
  ho_mutex_unlock(&st->lock);
  if (err) {
    free(r);
    return err;
  }
  if (out)
    *out = r;
  return HS_OK;
}

enum hs_err hs_reader_read(struct hs_reader *r, uint64_t off, void *buf,
                           size_t n)
{
  if (off > r->size || n > r->size - off)
    return HS_ERR_INTERNAL;
  return n ? r->st->ops->reader_read(r->br, off, buf, n) : HS_OK;
}

uint64_t hs_reader_size(const struct hs_reader *r) { return r->size; }

void hs_reader_close(struct hs_reader *r)
{
  if (!r)
    return;
  r->st->ops->reader_close(r->br);
  free(r);
}

/* ---- delete, list ------------------------------------------------------ */

enum hs_err hs_store_delete(struct hs_store *st, const char *bucket,
                            const char *key)
{
  return hs_store_delete_if(st, bucket, key, NULL);
}

enum hs_err hs_store_delete_if(struct hs_store *st, const char *bucket,
                               const char *key, const struct hs_cond *c)
{
  enum hs_err err = HS_OK;
  bool removed = false;
  ho_mutex_lock(&st->lock);
  struct bucket *b = bucket_find(st, bucket, NULL);
  size_t pos;
  struct entry *e = b ? obj_find(b, key, &pos) : NULL;
  if (!b) {
    err = HS_ERR_NO_BUCKET;
  } else if ((err = cond_check(c, e, true))) {
    /* the object stays */
  } else if (e) {
    memmove(b->objs + pos, b->objs + pos + 1,
            (b->n - pos - 1) * sizeof *b->objs);
    b->n--;
    entry_free(st, e, true);
    removed = true;
  }
  ho_mutex_unlock(&st->lock);
  if (removed) {
    struct hs_blob_name name = {
        .kind = HS_BLOB_OBJECT, .bucket = bucket, .key = key};
    err = st->ops->settle(st->impl, &name);
  }
  return err;
}

#define LIST_BATCH 256

struct list_item {
  char *key;
  struct hs_obj_info info; /* without attrs */
};

/* Up to LIST_BATCH entries from `from` on, copied under the lock. */
static enum hs_err list_batch(struct hs_store *st, const char *bucket,
                              const char *from, bool inclusive,
                              struct list_item *items, size_t *n)
{
  enum hs_err err = HS_OK;
  size_t k = 0;
  ho_mutex_lock(&st->lock);
  struct bucket *b = bucket_find(st, bucket, NULL);
  if (!b) {
    err = HS_ERR_NO_BUCKET;
    goto out;
  }
  for (size_t i = obj_lower(b, from, !inclusive); i < b->n && k < LIST_BATCH;
       i++, k++) {
    const struct entry *e = b->objs[i];
    if (!(items[k].key = strdup(e->key))) {
      err = HS_ERR_NOMEM;
      break;
    }
    memset(&items[k].info, 0, sizeof items[k].info);
    items[k].info.size = e->info.size;
    items[k].info.mtime = e->info.mtime;
    items[k].info.parts = e->info.parts;
    memcpy(items[k].info.etag, e->info.etag, sizeof items[k].info.etag);
  }
out:
  ho_mutex_unlock(&st->lock);
  *n = k;
  return err;
}

enum hs_err hs_store_list(struct hs_store *st, const char *bucket,
                          const char *from, bool inclusive, hs_list_fn fn,
                          void *ctx)
{
  struct list_item *items = malloc(LIST_BATCH * sizeof *items);
  char *cursor = strdup(from ? from : "");
  enum hs_err err = HS_ERR_NOMEM;
  if (!items || !cursor)
    goto out;
  for (bool more = true; more;) {
    size_t n;
    err = list_batch(st, bucket, cursor, inclusive, items, &n);
    for (size_t i = 0; i < n && !err && more; i++)
      more = fn(ctx, items[i].key, &items[i].info);
    more = more && !err && n == LIST_BATCH;
    if (more) {
      free(cursor);
      cursor = items[n - 1].key; /* the next batch starts after it */
      items[n - 1].key = NULL;
      inclusive = false;
    }
    for (size_t i = 0; i < n; i++)
      free(items[i].key);
  }
out:
  free(cursor);
  free(items);
  return err;
}

/* ---- multipart --------------------------------------------------------- */

static bool uploads_reserve(struct hs_store *st) HO_REQUIRES(st->lock)
{
  struct upload **p =
      realloc(st->uploads, (st->nuploads + 1) * sizeof *st->uploads);
  if (!p)
    return false;
  st->uploads = p;
  return true;
}

enum hs_err hs_store_upload_create(struct hs_store *st, const char *bucket,
                                   const char *key,
                                   const struct hs_obj_attrs *attrs,
                                   char id[HS_UPLOAD_ID_LEN + 1])
{
  struct upload *u = calloc(1, sizeof *u);
  if (!u)
    return HS_ERR_NOMEM;
  enum hs_err err = HS_ERR_NOMEM;
  uint8_t rnd[HS_UPLOAD_ID_LEN / 2];
  if (!(u->key = strdup(key)))
    goto fail;
  if (RAND_bytes(rnd, sizeof rnd) != 1) {
    err = HS_ERR_INTERNAL;
    goto fail;
  }
  hs_hex(rnd, sizeof rnd, u->id);
  memcpy(u->bucket, bucket, strnlen(bucket, HS_BUCKET_MAX));
  if (attrs)
    u->attrs = *attrs;
  u->initiated = u->touched = now_s();
  hs_store_expire_uploads(st, u->initiated);
  ho_mutex_lock(&st->lock);
  if (!bucket_find(st, bucket, NULL))
    err = HS_ERR_NO_BUCKET;
  else if (st->cfg.max_uploads && st->nuploads >= st->cfg.max_uploads)
    err = HS_ERR_TOO_MANY;
  else if (!uploads_reserve(st))
    err = HS_ERR_NOMEM;
  else
    err = st->ops->upload_create(st->impl, u->id);
  if (!err)
    st->uploads[st->nuploads++] = u;
  ho_mutex_unlock(&st->lock);
  if (err)
    goto fail;
  memcpy(id, u->id, HS_UPLOAD_ID_LEN + 1);
  return HS_OK;
fail:
  free(u->key);
  free(u);
  return err;
}

enum hs_err hs_store_upload_part(struct hs_store *st, const char *bucket,
                                 const char *key, const char *id,
                                 unsigned part, uint64_t size_hint,
                                 struct hs_writer **out)
{
  if (part < 1 || part > HS_MAX_PARTS)
    return HS_ERR_INVALID_ARGUMENT;
  ho_mutex_lock(&st->lock);
  struct upload *u = upload_find(st, bucket, key, id, NULL);
  enum hs_err err = HS_OK;
  if (!bucket_find(st, bucket, NULL))
    err = HS_ERR_NO_BUCKET;
  else if (!u || u->completing)
    err = HS_ERR_NO_UPLOAD;
  else
    u->touched = now_s();
  ho_mutex_unlock(&st->lock);
  if (err)
    return err;
  struct hs_blob_name name = {.kind = HS_BLOB_PART,
                              .bucket = bucket,
                              .key = key,
                              .upload_id = id,
                              .part = part};
  return writer_new(st, &name, NULL, size_hint, out);
}

/* Checks the client's list against the upload and collects the parts'
 * entries in list order. */
static enum hs_err check_parts(struct hs_store *st, const struct upload *u,
                               const struct hs_part_ref *parts, size_t n,
                               struct entry **es, uint64_t *total)
{
  for (size_t i = 1; i < n; i++)
    if (parts[i].number <= parts[i - 1].number)
      return HS_ERR_INVALID_PART_ORDER;
  size_t j = 0;
  for (size_t i = 0; i < n; i++) {
    while (j < u->n && u->parts[j].number < parts[i].number)
      j++;
    if (j == u->n || u->parts[j].number != parts[i].number ||
        strcmp(u->parts[j].e->info.etag, parts[i].etag) != 0)
      return HS_ERR_INVALID_PART;
    es[i] = u->parts[j].e;
  }
  uint64_t sum = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t sz = es[i]->info.size;
    if (i + 1 < n && sz < st->cfg.min_part_size)
      return HS_ERR_ENTITY_TOO_SMALL;
    if (sz > st->cfg.max_object_size - sum)
      return HS_ERR_ENTITY_TOO_LARGE;
    sum += sz;
  }
  *total = sum;
  return HS_OK;
}

static enum hs_err copy_blob(struct hs_store *st, struct entry *e,
                             struct hs_blob_writer *bw, uint8_t *buf)
{
  struct hs_blob_reader *br;
  ho_mutex_lock(&st->lock);
  enum hs_err err = st->ops->reader_open(e->blob, &br);
  ho_mutex_unlock(&st->lock);
  if (err)
    return err;
  for (uint64_t off = 0; off < e->info.size && !err;) {
    size_t n = e->info.size - off < COPY_CHUNK ? (size_t)(e->info.size - off)
                                               : COPY_CHUNK;
    err = st->ops->reader_read(br, off, buf, n);
    if (!err)
      err = st->ops->writer_write(bw, buf, n);
    off += n;
  }
  st->ops->reader_close(br);
  return err;
}

/* Writes the object from the parts; the upload is marked completing, so
 * its parts cannot change meanwhile. */
static enum hs_err assemble(struct hs_store *st, const struct upload *u,
                            struct entry **es, size_t n, uint64_t total,
                            struct hs_blob_writer **out)
{
  struct hs_blob_name name = {
      .kind = HS_BLOB_OBJECT, .bucket = u->bucket, .key = u->key};
  uint8_t *buf = malloc(COPY_CHUNK);
  if (!buf)
    return HS_ERR_NOMEM;
  struct hs_blob_writer *bw = NULL;
  enum hs_err err = st->ops->writer_open(st->impl, &name, total, &bw);
  if (err) {
    free(buf);
    return err;
  }
  for (size_t i = 0; i < n && !err; i++)
    err = copy_blob(st, es[i], bw, buf);
  free(buf);
  if (err) {
    st->ops->writer_abort(bw);
    return err;
  }
  *out = bw;
  return HS_OK;
}

/* Remembers a completed upload's result (best effort: without memory, a
 * retry gets NoSuchUpload as before). */
static void done_record(struct hs_store *st, const struct upload *u,
                        const struct hs_obj_info *info) HO_REQUIRES(st->lock)
{
  char *key = strdup(u->key);
  if (!key)
    return;
  struct done_upload *d = &st->done[st->done_next];
  st->done_next = (st->done_next + 1) % DONE_MAX;
  free(d->key);
  memcpy(d->id, u->id, sizeof d->id);
  memcpy(d->bucket, u->bucket, sizeof d->bucket);
  d->key = key;
  d->when = now_s();
  d->info = *info;
}

/* The result of upload id, completed lately for this bucket and key. */
static const struct done_upload *done_find(struct hs_store *st,
                                           const char *bucket,
                                           const char *key, const char *id)
    HO_REQUIRES(st->lock)
{
  int64_t now = now_s();
  for (size_t i = 0; i < DONE_MAX; i++) {
    const struct done_upload *d = &st->done[i];
    if (d->key && now - d->when < DONE_TTL_S && strcmp(d->id, id) == 0 &&
        strcmp(d->bucket, bucket) == 0 && strcmp(d->key, key) == 0)
      return d;
  }
  return NULL;
}

enum hs_err hs_store_upload_attrs(struct hs_store *st, const char *bucket,
                                  const char *key, const char *id,
                                  struct hs_obj_attrs *out)
{
  ho_mutex_lock(&st->lock);
  struct upload *u = upload_find(st, bucket, key, id, NULL);
  if (u)
    *out = u->attrs;
  ho_mutex_unlock(&st->lock);
  return u ? HS_OK : HS_ERR_NO_UPLOAD;
}

enum hs_err hs_store_upload_complete(struct hs_store *st, const char *bucket,
                                     const char *key, const char *id,
                                     const struct hs_part_ref *parts,
                                     size_t n, const char *add_headers,
                                     const struct hs_cond *cond,
                                     struct hs_obj_info *info)
{
  struct entry **es = calloc(n ? n : 1, sizeof *es);
  uint8_t *md5s = malloc((n ? n : 1) * HS_MD5_LEN);
  enum hs_err err = HS_ERR_NOMEM;
  if (!es || !md5s)
    goto out_free;
  uint64_t total = 0;
  ho_mutex_lock(&st->lock);
  struct upload *u = upload_find(st, bucket, key, id, NULL);
  const struct done_upload *done = u ? NULL : done_find(st, bucket, key, id);
  struct bucket *b = bucket_find(st, bucket, NULL);
  if (!b) {
    err = HS_ERR_NO_BUCKET;
  } else if (done) { /* a retry: the same result */
    if (info)
      *info = done->info;
    ho_mutex_unlock(&st->lock);
    err = HS_OK;
    goto out_free;
  } else if (!u || u->completing) {
    err = HS_ERR_NO_UPLOAD;
  } else if (n == 0) {
    err = HS_ERR_MALFORMED_XML;
  } else if (!(err = cond_check(cond, obj_find(b, key, NULL), false))) {
    err = check_parts(st, u, parts, n, es, &total);
  }
  if (!err)
    u->completing = true;
  ho_mutex_unlock(&st->lock);
  if (err)
    goto out_free;

  struct hs_obj_info in = {.size = total, .mtime = now_s(), .parts = 0};
  in.attrs = u->attrs;
  if (add_headers) {
    size_t used = strlen(in.attrs.headers);
    size_t al = strnlen(add_headers, HS_OBJ_HEADERS_MAX);
    if (al > HS_OBJ_HEADERS_MAX - used)
      err = HS_ERR_INTERNAL;
    else
      memcpy(in.attrs.headers + used, add_headers, al + 1);
  }
  for (size_t i = 0; i < n; i++)
    if (!hs_unhex(es[i]->info.etag, 32, md5s + i * HS_MD5_LEN, HS_MD5_LEN))
      err = HS_ERR_INTERNAL;
  hs_etag_multipart(md5s, n, in.etag);
  in.parts = (unsigned)n;
  /* the parts as the object keeps them (GetObject ?partNumber=) */
  struct hs_part_entry *pl = calloc(n, sizeof *pl);
  if (!pl)
    err = HS_ERR_NOMEM;
  for (size_t i = 0; pl && i < n; i++)
    part_entry_of(es[i], parts[i].number, &pl[i]);
  struct hs_blob_writer *bw = NULL;
  if (!err)
    err = assemble(st, u, es, n, total, &bw);
  if (!err && (err = st->ops->writer_finish(bw, &in)))
    st->ops->writer_abort(bw);

  ho_mutex_lock(&st->lock);
  size_t pos = 0;
  /* still there: a completing upload cannot be aborted or removed */
  if (upload_find(st, bucket, key, id, &pos) != u && !err) {
    st->ops->writer_abort(bw);
    err = HS_ERR_INTERNAL;
  }
  b = bucket_find(st, bucket, NULL);
  if (!err && !b) {
    st->ops->writer_abort(bw);
    err = HS_ERR_NO_BUCKET;
  }
  /* the object may have changed while the parts were assembled */
  if (!err && (err = cond_check(cond, obj_find(b, key, NULL), false)))
    st->ops->writer_abort(bw);
  if (!err) {
    struct hs_blob *blob;
    err = st->ops->writer_publish(bw, &blob);
    struct entry *e = err ? NULL : entry_new(key, blob, &in);
    if (e) {
      entry_set_tags(e, u->tags);
      u->tags = NULL;
      in.tag_count = e->info.tag_count;
      e->parts = pl;
      pl = NULL;
    }
    if (!err && (!e || obj_insert(st, b, e))) {
      st->ops->blob_unlink(blob);
      if (e)
        entry_free(st, e, false);
      else
        st->ops->blob_free(blob);
      err = HS_ERR_NOMEM;
    }
  }
  if (err) {
    u->completing = false;
  } else {
    done_record(st, u, &in);
    upload_remove_at(st, pos);
  }
  ho_mutex_unlock(&st->lock);
  if (!err) {
    struct hs_blob_name name = {
        .kind = HS_BLOB_OBJECT, .bucket = bucket, .key = key};
    err = st->ops->settle(st->impl, &name);
  }
  if (!err && info)
    *info = in;
  free(pl);
out_free:
  free(es);
  free(md5s);
  return err;
}

enum hs_err hs_store_upload_abort(struct hs_store *st, const char *bucket,
                                  const char *key, const char *id)
{
  enum hs_err err = HS_OK;
  size_t pos;
  ho_mutex_lock(&st->lock);
  struct upload *u = upload_find(st, bucket, key, id, &pos);
  if (!bucket_find(st, bucket, NULL))
    err = HS_ERR_NO_BUCKET;
  else if (!u || u->completing)
    err = HS_ERR_NO_UPLOAD;
  else
    upload_remove_at(st, pos);
  ho_mutex_unlock(&st->lock);
  return err;
}

size_t hs_store_expire_uploads(struct hs_store *st, int64_t now)
{
  int64_t ttl = st->cfg.upload_expiry_s;
  size_t n = 0;
  if (!ttl)
    return 0;
  ho_mutex_lock(&st->lock);
  for (size_t i = st->nuploads; i-- > 0;) {
    struct upload *u = st->uploads[i];
    if (!u->completing && u->touched <= now - ttl) {
      upload_remove_at(st, i);
      n++;
    }
  }
  ho_mutex_unlock(&st->lock);
  return n;
}

static int upload_entry_cmp(const void *x, const void *y)
{
  const struct hs_upload_entry *a = x, *b = y;
  int c = strcmp(a->key, b->key);
  return c ? c : strcmp(a->id, b->id);
}

void hs_upload_list_free(struct hs_upload_entry *l, size_t n)
{
  for (size_t i = 0; l && i < n; i++)
    free(l[i].key);
  free(l);
}

enum hs_err hs_store_upload_list(struct hs_store *st, const char *bucket,
                                 struct hs_upload_entry **out, size_t *n)
{
  enum hs_err err = HS_OK;
  struct hs_upload_entry *l = NULL;
  size_t k = 0;
  ho_mutex_lock(&st->lock);
  if (!bucket_find(st, bucket, NULL)) {
    err = HS_ERR_NO_BUCKET;
    goto out;
  }
  if (st->nuploads && !(l = calloc(st->nuploads, sizeof *l))) {
    err = HS_ERR_NOMEM;
    goto out;
  }
  for (size_t i = 0; i < st->nuploads; i++) {
    const struct upload *u = st->uploads[i];
    if (strcmp(u->bucket, bucket) != 0 || u->completing)
      continue;
    if (!(l[k].key = strdup(u->key))) {
      err = HS_ERR_NOMEM;
      goto out;
    }
    memcpy(l[k].id, u->id, sizeof l[k].id);
    l[k].initiated = u->initiated;
    k++;
  }
out:
  ho_mutex_unlock(&st->lock);
  if (err) {
    hs_upload_list_free(l, k);
    return err;
  }
  if (k)
    qsort(l, k, sizeof *l, upload_entry_cmp);
  *out = l;
  *n = k;
  return HS_OK;
}

enum hs_err hs_store_part_list(struct hs_store *st, const char *bucket,
                               const char *key, const char *id,
                               struct hs_part_entry **out, size_t *n)
{
  enum hs_err err = HS_OK;
  struct hs_part_entry *l = NULL;
  size_t k = 0;
  ho_mutex_lock(&st->lock);
  struct upload *u = upload_find(st, bucket, key, id, NULL);
  if (!bucket_find(st, bucket, NULL)) {
    err = HS_ERR_NO_BUCKET;
  } else if (!u || u->completing) {
    err = HS_ERR_NO_UPLOAD;
  } else if (u->n && !(l = calloc(u->n, sizeof *l))) {
    err = HS_ERR_NOMEM;
  } else {
    for (; k < u->n; k++)
      part_entry_of(u->parts[k].e, u->parts[k].number, &l[k]);
  }
  ho_mutex_unlock(&st->lock);
  if (err)
    return err;
  *out = l;
  *n = k;
  return HS_OK;
}

void hs_store_usage(struct hs_store *st, struct hs_store_usage *out)
{
  struct hs_store_usage u = {0};
  ho_mutex_lock(&st->lock);
  u.buckets = st->nbuckets;
  u.uploads = st->nuploads;
  for (size_t i = 0; i < st->nbuckets; i++) {
    u.objects += st->buckets[i]->n;
    for (size_t j = 0; j < st->buckets[i]->n; j++)
      u.bytes += st->buckets[i]->objs[j]->info.size;
  }
  ho_mutex_unlock(&st->lock);
  *out = u;
}
