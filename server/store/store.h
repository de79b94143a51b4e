/* SPDX-License-Identifier: MIT */
/* The object store as S3 sees it: buckets, objects with their ETag and
 * attributes, and multipart uploads. store.c keeps the index and its lock
 * and implements the S3 rules once; the bytes live in a backend reached
 * through struct hs_store_ops (store_ops.h): memory or a directory.
 *
 * Thread safety: every function may be called from any thread. A writer or
 * a reader is used by one thread at a time. A reader sees the object as it
 * was when it was opened, whatever happens to the key afterwards. An object
 * becomes visible only when its writer commits: never half-written. */
#ifndef HS_STORE_H
#define HS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "s3_limits.h"

#define HS_CONTENT_TYPE_MAX 256
#define HS_USER_META_MAX 2048 /* S3's limit on user metadata */
#define HS_UPLOAD_ID_LEN 32
/* The other headers an object keeps (Cache-Control, Content-Disposition,
 * Content-Encoding, Content-Language, Expires, and its checksum), in all;
 * what fits in the directory store's header beside the largest key, type
 * and metadata. */
#define HS_OBJ_HEADERS_MAX 640

/* What a PUT says about an object besides its bytes. */
struct hs_obj_attrs {
  char content_type[HS_CONTENT_TYPE_MAX]; /* "" for the default */
  /* user metadata as "name:value\n" lines, names lower-case without the
   * x-amz-meta- prefix */
  char meta[HS_USER_META_MAX + 1];
  /* the other headers kept, as "name:value\n" lines, names lower-case:
   * cache-control, content-disposition, content-encoding,
   * content-language, expires; x-amz-checksum-ALG and x-amz-checksum-type
   * (returned only when asked for) */
  char headers[HS_OBJ_HEADERS_MAX + 1];
};

struct hs_obj_info {
  uint64_t size;
  char etag[HS_ETAG_MAX];  /* without quotes */
  int64_t mtime;           /* seconds since the epoch */
  unsigned parts;          /* 0, or the part count of a multipart object */
  struct hs_obj_attrs attrs;
  unsigned tag_count;      /* the object's tags (hs_store_tags_get) */
};

/* What a conditional write or delete requires of the object it replaces
 * or removes: S3's If-Match and If-None-Match on PutObject, CopyObject,
 * CompleteMultipartUpload and DeleteObject, and DeleteObject's
 * x-amz-if-match-size and x-amz-if-match-last-modified-time. Checked under
 * the store's lock at the moment the change takes effect, so that of two
 * writers with If-None-Match: * one only succeeds. A write whose If-Match
 * finds no object gets HS_ERR_NO_KEY, a condition not met
 * HS_ERR_PRECONDITION; a delete that finds no object does nothing. */
struct hs_cond {
  const char *if_match;      /* an ETag list or "*"; NULL: none */
  const char *if_none_match; /* the same */
  bool has_size, has_mtime;  /* delete only */
  uint64_t size;
  int64_t mtime;
};

struct hs_store;
struct hs_writer;
struct hs_reader;

/* The system calls through which the directory backend makes its bytes
 * durable: the tests inject failures here. */
struct hs_store_sys {
  int (*fsync)(int fd);
  int (*close)(int fd);
};

struct hs_store_config {
  const char *data_dir;   /* NULL: in memory */
  uint64_t max_object_size;
  uint64_t min_part_size; /* every part but the last, at Complete */
  unsigned max_buckets;
  unsigned max_uploads;
  /* ETags random (unique per write) instead of the content's MD5, so that
   * writes are not limited by MD5's speed; see hs_writer_require_md5. */
  bool random_etags;
  /* The memory backend's total: the bytes of every object, part and write
   * in progress. An announced size (size_hint) is reserved before anything
   * is allocated; what does not fit is HS_ERR_STORE_FULL. 0: half the
   * machine's physical memory. */
  uint64_t max_memory;
  /* Multipart uploads without a new part for this long are aborted (by
   * hs_store_expire_uploads, which upload creation also runs). 0: never. */
  unsigned upload_expiry_s;
  const struct hs_store_sys *sys; /* NULL: fsync(2) and close(2) */
};

/* Opens the store; with a data_dir, loads what it holds (and removes
 * temporary files an earlier run left behind). Errors: HS_ERR_IO,
 * HS_ERR_NOMEM. */
enum hs_err hs_store_open(const struct hs_store_config *cfg,
                          struct hs_store **out);
/* Accepts NULL. No writer or reader may be open. */
void hs_store_close(struct hs_store *st);
const char *hs_store_kind(const struct hs_store *st);

/* Buckets. Errors: HS_ERR_BUCKET_EXISTS, HS_ERR_NO_BUCKET,
 * HS_ERR_BUCKET_NOT_EMPTY, HS_ERR_TOO_MANY, HS_ERR_IO. Deleting a bucket
 * aborts its multipart uploads. */
enum hs_err hs_store_bucket_create(struct hs_store *st, const char *bucket);
enum hs_err hs_store_bucket_delete(struct hs_store *st, const char *bucket);
enum hs_err hs_store_bucket_head(struct hs_store *st, const char *bucket);

struct hs_bucket_entry {
  char name[HS_BUCKET_MAX + 1];
  int64_t ctime;
};
/* All buckets by name; *out is malloc()ed (NULL when there are none). */
enum hs_err hs_store_bucket_list(struct hs_store *st,
                                 struct hs_bucket_entry **out, size_t *n);

/* A new object's bytes: hs_writer_write any number of times, then
 * hs_writer_commit or hs_writer_abort (exactly one of them; both free the
 * writer). size_hint is the expected size, 0 if unknown. */
enum hs_err hs_store_put(struct hs_store *st, const char *bucket,
                         const char *key, const struct hs_obj_attrs *attrs,
                         uint64_t size_hint, struct hs_writer **out);
/* Errors: HS_ERR_ENTITY_TOO_LARGE (past max_object_size), HS_ERR_IO,
 * HS_ERR_STORE_FULL (past max_memory). */
enum hs_err hs_writer_write(struct hs_writer *w, const void *p, size_t n);
uint64_t hs_writer_size(const struct hs_writer *w);
/* The attributes the object (or part) is committed with: until the commit,
 * the caller may add what only the payload tells (its checksum). */
struct hs_obj_attrs *hs_writer_attrs(struct hs_writer *w);
/* Computes the MD5 even with random_etags (to check a Content-MD5). Before
 * the first write; false after it (and nothing changes). */
bool hs_writer_require_md5(struct hs_writer *w);
/* Makes the object (or part) durable and visible. With content_md5, the
 * bytes must have that MD5 (HS_ERR_BAD_DIGEST otherwise; with random_etags,
 * hs_writer_require_md5 must have been called, HS_ERR_INTERNAL otherwise).
 * info may be NULL.
 * Other errors: HS_ERR_NO_BUCKET or HS_ERR_NO_UPLOAD (gone meanwhile),
 * HS_ERR_IO (nothing committed; or, when the directory's fsync after the
 * rename fails, visible but not known durable). The writer is freed in
 * every case. */
enum hs_err hs_writer_commit(struct hs_writer *w, const uint8_t *content_md5,
                             struct hs_obj_info *info);
/* Accepts NULL. */
void hs_writer_abort(struct hs_writer *w);
/* The tags the object is committed with ("key\tvalue\n" lines; NULL:
 * none). HS_ERR_NOMEM. */
enum hs_err hs_writer_set_tags(struct hs_writer *w, const char *tags);
/* Makes an object's commit conditional (a copy of c is kept): the commit
 * fails with c's error and publishes nothing. HS_ERR_NOMEM. */
enum hs_err hs_writer_set_cond(struct hs_writer *w, const struct hs_cond *c);
/* The condition checked now, against the object as it is (a quick answer
 * before a body is received; the commit checks again). */
enum hs_err hs_store_check_cond(struct hs_store *st, const char *bucket,
                                const char *key, const struct hs_cond *c);

/* An object's info and, unless out is NULL (HEAD), a reader of it.
 * Errors: HS_ERR_NO_BUCKET, HS_ERR_NO_KEY, HS_ERR_IO. */
enum hs_err hs_store_get(struct hs_store *st, const char *bucket,
                         const char *key, struct hs_obj_info *info,
                         struct hs_reader **out);
/* Exactly n bytes at off (within the object). Errors: HS_ERR_IO. */
enum hs_err hs_reader_read(struct hs_reader *r, uint64_t off, void *buf,
                           size_t n);
uint64_t hs_reader_size(const struct hs_reader *r);
/* Accepts NULL. */
void hs_reader_close(struct hs_reader *r);

/* Object tags: "key\tvalue\n" lines, in the order given ("" for none),
 * kept in the index with the object, replaced with it, and not in the
 * directory backend's files (they do not survive a restart). get: *out
 * malloc()ed; set: NULL or "" removes them. Errors: HS_ERR_NO_BUCKET,
 * HS_ERR_NO_KEY, HS_ERR_NOMEM. */
enum hs_err hs_store_tags_get(struct hs_store *st, const char *bucket,
                              const char *key, char **out);
enum hs_err hs_store_tags_set(struct hs_store *st, const char *bucket,
                              const char *key, const char *tags);

/* Removes the object, durably (the directory backend fsyncs the bucket's
 * directory); a missing key is not an error (S3 semantics).
 * Errors: HS_ERR_NO_BUCKET, HS_ERR_IO (removed, but not known durable). */
enum hs_err hs_store_delete(struct hs_store *st, const char *bucket,
                            const char *key);
/* The same, if the object meets c (NULL: always). */
enum hs_err hs_store_delete_if(struct hs_store *st, const char *bucket,
                               const char *key, const struct hs_cond *c);

/* Calls fn for each object whose key sorts after `from` (or equal to it, if
 * inclusive), in key order (bytes, unsigned), until fn returns false. The
 * entries are copied out in batches under the store's lock, and fn runs
 * without it: a long listing is not a snapshot, and fn may call the store.
 * info->attrs is not filled in. Errors: HS_ERR_NO_BUCKET, HS_ERR_NOMEM. */
typedef bool (*hs_list_fn)(void *ctx, const char *key,
                           const struct hs_obj_info *info);
enum hs_err hs_store_list(struct hs_store *st, const char *bucket,
                          const char *from, bool inclusive, hs_list_fn fn,
                          void *ctx);

/* Multipart uploads. Ids are HS_UPLOAD_ID_LEN hex digits. Errors:
 * HS_ERR_NO_BUCKET, HS_ERR_NO_UPLOAD (unknown id, or one for another
 * bucket or key), HS_ERR_TOO_MANY. */
enum hs_err hs_store_upload_create(struct hs_store *st, const char *bucket,
                                   const char *key,
                                   const struct hs_obj_attrs *attrs,
                                   char id[HS_UPLOAD_ID_LEN + 1]);
/* A writer for one part (1..10000); committing it replaces a part with the
 * same number. */
enum hs_err hs_store_upload_part(struct hs_store *st, const char *bucket,
                                 const char *key, const char *id,
                                 unsigned part, uint64_t size_hint,
                                 struct hs_writer **out);
/* Checks the list (ascending part numbers: HS_ERR_INVALID_PART_ORDER; each
 * part uploaded with that ETag: HS_ERR_INVALID_PART; every part but the
 * last at least min_part_size: HS_ERR_ENTITY_TOO_SMALL), then writes the
 * object from the parts in that order, with the multipart ETag and the
 * upload's attributes (plus add_headers, lines for attrs.headers, if not
 * NULL: its checksum), and ends the upload. A retry of a Complete that
 * succeeded gets its result again. With cond, the object it replaces must
 * meet it (checked first and again when the object is published; a
 * failed condition leaves the upload as it was). */
enum hs_err hs_store_upload_complete(struct hs_store *st, const char *bucket,
                                     const char *key, const char *id,
                                     const struct hs_part_ref *parts,
                                     size_t n, const char *add_headers,
                                     const struct hs_cond *cond,
                                     struct hs_obj_info *info);
/* The tags the completed object gets (as hs_store_tags_set's). */
enum hs_err hs_store_upload_tags(struct hs_store *st, const char *bucket,
                                 const char *key, const char *id,
                                 const char *tags);
/* The attributes an upload was created with. */
enum hs_err hs_store_upload_attrs(struct hs_store *st, const char *bucket,
                                  const char *key, const char *id,
                                  struct hs_obj_attrs *out);
enum hs_err hs_store_upload_abort(struct hs_store *st, const char *bucket,
                                  const char *key, const char *id);

struct hs_upload_entry {
  char id[HS_UPLOAD_ID_LEN + 1];
  char *key; /* malloc()ed */
  int64_t initiated;
};
/* The bucket's uploads in progress, by key then id; free with
 * hs_upload_list_free. */
enum hs_err hs_store_upload_list(struct hs_store *st, const char *bucket,
                                 struct hs_upload_entry **out, size_t *n);
void hs_upload_list_free(struct hs_upload_entry *l, size_t n);

#define HS_PART_CKSUM_MAX 128
struct hs_part_entry {
  unsigned number;
  uint64_t size;
  char etag[HS_ETAG_MAX];
  int64_t mtime;
  /* the part's attrs.headers: its checksum line, if it has one */
  char checksum[HS_PART_CKSUM_MAX];
};
/* The parts uploaded so far, by number; *out is malloc()ed. */
enum hs_err hs_store_part_list(struct hs_store *st, const char *bucket,
                               const char *key, const char *id,
                               struct hs_part_entry **out, size_t *n);

/* A multipart object's parts as it was completed (number, size, ETag,
 * checksum; *out malloc()ed, n 0 for an object of one piece or one whose
 * parts are not known: the index keeps them, the directory backend's files
 * do not). Errors: HS_ERR_NO_BUCKET, HS_ERR_NO_KEY, HS_ERR_NOMEM. */
enum hs_err hs_store_object_parts(struct hs_store *st, const char *bucket,
                                  const char *key,
                                  struct hs_part_entry **out, size_t *n);

struct hs_store_usage {
  uint64_t buckets, objects, bytes, uploads;
};
void hs_store_usage(struct hs_store *st, struct hs_store_usage *out);

/* Aborts the uploads whose last part (or creation) is upload_expiry_s or
 * more before now, as AbortMultipartUpload would; uploads being completed
 * are left alone. Returns how many. */
size_t hs_store_expire_uploads(struct hs_store *st, int64_t now);

#endif
