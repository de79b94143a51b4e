/* SPDX-License-Identifier: MIT */
/* The store, on both backends (memory and directory): buckets, objects,
 * snapshots seen by open readers, listing order, multipart rules, limits,
 * crash leftovers and reload, and concurrent writers and readers. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hash.h"
#include "store/store.h"

struct fixture {
  char dir[256]; /* "" for the memory backend */
  struct hs_store_config cfg;
  struct hs_store *st;
};

static int setup_common(void **state, bool on_disk)
{
  struct fixture *f = calloc(1, sizeof *f);
  if (on_disk) {
    snprintf(f->dir, sizeof f->dir, "/tmp/hs-store-test-XXXXXX");
    if (!mkdtemp(f->dir))
      return -1;
  }
  f->cfg.data_dir = on_disk ? f->dir : NULL;
  f->cfg.max_object_size = 1u << 20;
  f->cfg.min_part_size = 100;
  f->cfg.max_buckets = 8;
  f->cfg.max_uploads = 4;
  f->cfg.upload_expiry_s = 100;
  if (hs_store_open(&f->cfg, &f->st))
    return -1;
  *state = f;
  return 0;
}

static int setup_mem(void **state) { return setup_common(state, false); }
static int setup_dir(void **state) { return setup_common(state, true); }

static void rm_tree(const char *path)
{
  DIR *d = opendir(path);
  if (!d) {
    unlink(path);
    return;
  }
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      continue;
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", path, e->d_name);
    rm_tree(p);
  }
  closedir(d);
  rmdir(path);
}

static int teardown(void **state)
{
  struct fixture *f = *state;
  hs_store_close(f->st);
  if (f->dir[0])
    rm_tree(f->dir);
  free(f);
  return 0;
}

static enum hs_err put(struct hs_store *st, const char *b, const char *k,
                       const void *data, size_t n, struct hs_obj_info *info)
{
  struct hs_writer *w;
  enum hs_err err = hs_store_put(st, b, k, NULL, n, &w);
  if (err)
    return err;
  if ((err = hs_writer_write(w, data, n))) {
    hs_writer_abort(w);
    return err;
  }
  return hs_writer_commit(w, NULL, info);
}

static void expect_bytes(struct hs_store *st, const char *b, const char *k,
                         const void *data, size_t n)
{
  struct hs_obj_info info;
  struct hs_reader *r;
  assert_int_equal(hs_store_get(st, b, k, &info, &r), HS_OK);
  assert_int_equal(info.size, n);
  char *got = malloc(n + 1);
  assert_int_equal(hs_reader_read(r, 0, got, n), HS_OK);
  assert_memory_equal(got, data, n);
  free(got);
  hs_reader_close(r);
}

static size_t count_tmp(const char *dir)
{
  size_t n = 0;
  DIR *d = opendir(dir);
  if (!d)
    return 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strncmp(e->d_name, ".tmp", 4))
      n++;
    if (e->d_name[0] != '.' && e->d_type == DT_DIR) {
      char p[1024];
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      n += count_tmp(p);
    }
  }
  closedir(d);
  return n;
}

/* ---- tests ---------------------------------------------------------------- */

static void buckets(void **state)
{
  struct fixture *f = *state;
  struct hs_store *st = f->st;
  assert_int_equal(hs_store_bucket_head(st, "one"), HS_ERR_NO_BUCKET);
  assert_int_equal(hs_store_bucket_create(st, "one"), HS_OK);
  assert_int_equal(hs_store_bucket_create(st, "one"), HS_ERR_BUCKET_EXISTS);
  assert_int_equal(hs_store_bucket_create(st, "abc"), HS_OK);
  struct hs_bucket_entry *l;
  size_t n;
  assert_int_equal(hs_store_bucket_list(st, &l, &n), HS_OK);
  assert_int_equal(n, 2);
  assert_string_equal(l[0].name, "abc");
  assert_string_equal(l[1].name, "one");
  free(l);
  assert_int_equal(put(st, "one", "k", "v", 1, NULL), HS_OK);
  assert_int_equal(hs_store_bucket_delete(st, "one"),
                   HS_ERR_BUCKET_NOT_EMPTY);
  assert_int_equal(hs_store_delete(st, "one", "k"), HS_OK);
  assert_int_equal(hs_store_delete(st, "one", "k"), HS_OK); /* idempotent */
  assert_int_equal(hs_store_bucket_delete(st, "one"), HS_OK);
  assert_int_equal(hs_store_bucket_delete(st, "one"), HS_ERR_NO_BUCKET);
  for (int i = 0; i < 7; i++) {
    char name[16];
    snprintf(name, sizeof name, "bkt%d", i);
    assert_int_equal(hs_store_bucket_create(st, name), i < 7 ? HS_OK : 0);
  }
  assert_int_equal(hs_store_bucket_create(st, "one-too-many"),
                   HS_ERR_TOO_MANY);
  assert_int_equal(put(st, "nope", "k", "v", 1, NULL), HS_ERR_NO_BUCKET);
}

static void objects(void **state)
{
  struct fixture *f = *state;
  struct hs_store *st = f->st;
  hs_store_bucket_create(st, "b");
  struct hs_obj_info info;
  assert_int_equal(put(st, "b", "k", "hello", 5, &info), HS_OK);
  assert_string_equal(info.etag, "5d41402abc4b2a76b9719d911017c592");
  assert_int_equal(info.size, 5);
  expect_bytes(st, "b", "k", "hello", 5);
  assert_int_equal(put(st, "b", "empty", "", 0, &info), HS_OK);
  assert_string_equal(info.etag, "d41d8cd98f00b204e9800998ecf8427e");
  expect_bytes(st, "b", "empty", "", 0);
  /* attributes */
  struct hs_obj_attrs a = {.content_type = "text/x", .meta = "m:v\n"};
  struct hs_writer *w;
  assert_int_equal(hs_store_put(st, "b", "attrs", &a, 0, &w), HS_OK);
  assert_int_equal(hs_writer_commit(w, NULL, NULL), HS_OK);
  assert_int_equal(hs_store_get(st, "b", "attrs", &info, NULL), HS_OK);
  assert_string_equal(info.attrs.content_type, "text/x");
  assert_string_equal(info.attrs.meta, "m:v\n");
  /* a reader sees the object as it was when opened */
  struct hs_reader *r;
  assert_int_equal(hs_store_get(st, "b", "k", &info, &r), HS_OK);
  assert_int_equal(put(st, "b", "k", "bye!!!", 6, NULL), HS_OK);
  char got[8];
  assert_int_equal(hs_reader_read(r, 0, got, 5), HS_OK);
  assert_memory_equal(got, "hello", 5);
  assert_int_equal(hs_reader_size(r), 5);
  assert_int_equal(hs_reader_read(r, 3, got, 3), HS_ERR_INTERNAL);
  hs_reader_close(r);
  expect_bytes(st, "b", "k", "bye!!!", 6);
  assert_int_equal(hs_store_get(st, "b", "k", &info, &r), HS_OK);
  assert_int_equal(hs_store_delete(st, "b", "k"), HS_OK);
  assert_int_equal(hs_reader_read(r, 0, got, 6), HS_OK);
  assert_memory_equal(got, "bye!!!", 6);
  hs_reader_close(r);
  assert_int_equal(hs_store_get(st, "b", "k", &info, NULL), HS_ERR_NO_KEY);
  assert_int_equal(hs_store_get(st, "x", "k", &info, NULL), HS_ERR_NO_BUCKET);
  /* an aborted write leaves nothing, not even a temporary file */
  assert_int_equal(hs_store_put(st, "b", "aborted", NULL, 0, &w), HS_OK);
  assert_int_equal(hs_writer_write(w, "partial", 7), HS_OK);
  hs_writer_abort(w);
  assert_int_equal(hs_store_get(st, "b", "aborted", &info, NULL),
                   HS_ERR_NO_KEY);
  if (f->dir[0])
    assert_int_equal(count_tmp(f->dir), 0);
  /* Content-MD5 */
  uint8_t md5[16];
  hs_md5("abc", 3, md5);
  assert_int_equal(hs_store_put(st, "b", "md5", NULL, 3, &w), HS_OK);
  hs_writer_write(w, "abd", 3);
  assert_int_equal(hs_writer_commit(w, md5, NULL), HS_ERR_BAD_DIGEST);
  assert_int_equal(hs_store_get(st, "b", "md5", &info, NULL), HS_ERR_NO_KEY);
  assert_int_equal(hs_store_put(st, "b", "md5", NULL, 3, &w), HS_OK);
  hs_writer_write(w, "abc", 3);
  assert_int_equal(hs_writer_commit(w, md5, NULL), HS_OK);
  /* the size limit, by hint and by bytes */
  assert_int_equal(hs_store_put(st, "b", "big", NULL, (1u << 20) + 1, &w),
                   HS_ERR_ENTITY_TOO_LARGE);
  assert_int_equal(hs_store_put(st, "b", "big", NULL, 0, &w), HS_OK);
  char *big = calloc(1, (1u << 20) + 1);
  assert_int_equal(hs_writer_write(w, big, 1u << 20), HS_OK);
  assert_int_equal(hs_writer_write(w, big, 1), HS_ERR_ENTITY_TOO_LARGE);
  hs_writer_abort(w);
  free(big);
  struct hs_store_usage u;
  hs_store_usage(st, &u);
  assert_int_equal(u.buckets, 1);
  assert_int_equal(u.objects, 3);
  assert_int_equal(u.bytes, 3);
}

struct collected {
  char keys[16][32];
  size_t n, stop_at;
};

static bool collect(void *ctx, const char *key, const struct hs_obj_info *i)
{
  struct collected *c = ctx;
  snprintf(c->keys[c->n++], 32, "%s", key);
  return c->n != c->stop_at;
}

struct counted {
  size_t n, stop_at;
  char last[16];
  bool ordered;
};

static bool count_keys(void *ctx, const char *key,
                       const struct hs_obj_info *info)
{
  struct counted *c = ctx;
  c->ordered = c->n == 0 || strcmp(c->last, key) < 0 ? (c->n == 0 || c->ordered)
                                                      : false;
  snprintf(c->last, sizeof c->last, "%s", key);
  c->n++;
  return c->n != c->stop_at;
}

static void listing(void **state)
{
  struct fixture *f = *state;
  struct hs_store *st = f->st;
  hs_store_bucket_create(st, "b");
  const char *keys[] = {"b", "a/2", "a", "\xc3\xa9", "a/1", "B", "z"};
  for (size_t i = 0; i < 7; i++)
    put(st, "b", keys[i], "x", 1, NULL);
  struct collected c = {.n = 0};
  assert_int_equal(hs_store_list(st, "b", "", false, collect, &c), HS_OK);
  assert_int_equal(c.n, 7);
  const char *want[] = {"B", "a", "a/1", "a/2", "b", "z", "\xc3\xa9"};
  for (size_t i = 0; i < 7; i++)
    assert_string_equal(c.keys[i], want[i]);
  c.n = 0;
  hs_store_list(st, "b", "a/1", false, collect, &c);
  assert_string_equal(c.keys[0], "a/2");
  c.n = 0;
  hs_store_list(st, "b", "a/1", true, collect, &c);
  assert_string_equal(c.keys[0], "a/1");
  c.n = 0;
  c.stop_at = 2;
  hs_store_list(st, "b", "", false, collect, &c);
  assert_int_equal(c.n, 2);
  assert_int_equal(hs_store_list(st, "x", "", false, collect, &c),
                   HS_ERR_NO_BUCKET);
  /* more than a batch: every key once, in order */
  hs_store_bucket_create(st, "many");
  for (int i = 0; i < 700; i++) {
    char k[16];
    snprintf(k, sizeof k, "k%04d", i);
    put(st, "many", k, "x", 1, NULL);
  }
  struct counted cn = {.n = 0};
  assert_int_equal(hs_store_list(st, "many", "", false, count_keys, &cn),
                   HS_OK);
  assert_int_equal(cn.n, 700);
  assert_true(cn.ordered);
  cn = (struct counted){.n = 0, .stop_at = 300};
  hs_store_list(st, "many", "k0100", true, count_keys, &cn);
  assert_int_equal(cn.n, 300);
  assert_string_equal(cn.last, "k0399");
}

static enum hs_err part(struct hs_store *st, const char *id, unsigned n,
                        const char *data, size_t len, char etag[HS_ETAG_MAX])
{
  struct hs_writer *w;
  struct hs_obj_info info;
  enum hs_err err = hs_store_upload_part(st, "b", "mp", id, n, len, &w);
  if (err)
    return err;
  hs_writer_write(w, data, len);
  err = hs_writer_commit(w, NULL, &info);
  if (!err && etag)
    memcpy(etag, info.etag, HS_ETAG_MAX);
  return err;
}

static void multipart(void **state)
{
  struct fixture *f = *state;
  struct hs_store *st = f->st;
  hs_store_bucket_create(st, "b");
  char id[HS_UPLOAD_ID_LEN + 1], id2[HS_UPLOAD_ID_LEN + 1];
  struct hs_obj_attrs a = {.content_type = "app/mp"};
  assert_int_equal(hs_store_upload_create(st, "b", "mp", &a, id), HS_OK);
  assert_int_equal(strlen(id), HS_UPLOAD_ID_LEN);
  assert_int_equal(hs_store_upload_create(st, "b", "mp", NULL, id2), HS_OK);
  assert_string_not_equal(id, id2);
  char p1[200], p2[50];
  memset(p1, '1', sizeof p1);
  memset(p2, '2', sizeof p2);
  char e1[HS_ETAG_MAX], e2[HS_ETAG_MAX], e3[HS_ETAG_MAX];
  assert_int_equal(part(st, id, 2, p2, sizeof p2, e2), HS_OK);
  assert_int_equal(part(st, id, 1, "small", 5, e1), HS_OK);
  assert_int_equal(part(st, id, 1, p1, sizeof p1, e1), HS_OK); /* replaced */
  assert_int_equal(part(st, id, 3, p2, 10, e3), HS_OK);
  assert_int_equal(part(st, "00000000000000000000000000000000", 1, "x", 1,
                        NULL),
                   HS_ERR_NO_UPLOAD);
  assert_int_equal(part(st, id, 0, "x", 1, NULL), HS_ERR_INVALID_ARGUMENT);
  assert_int_equal(part(st, id, 10001, "x", 1, NULL),
                   HS_ERR_INVALID_ARGUMENT);
  struct hs_part_entry *pl;
  size_t pn;
  assert_int_equal(hs_store_part_list(st, "b", "mp", id, &pl, &pn), HS_OK);
  assert_int_equal(pn, 3);
  assert_int_equal(pl[0].number, 1);
  assert_int_equal(pl[0].size, 200);
  free(pl);
  struct hs_obj_info info;
  struct hs_part_ref order[2] = {{2, ""}, {1, ""}};
  memcpy(order[0].etag, e2, HS_ETAG_MAX);
  memcpy(order[1].etag, e1, HS_ETAG_MAX);
  assert_int_equal(
      hs_store_upload_complete(st, "b", "mp", id, order, 2, NULL, NULL, &info),
      HS_ERR_INVALID_PART_ORDER);
  struct hs_part_ref wrong[2] = {{1, ""}, {2, ""}};
  memcpy(wrong[0].etag, e2, HS_ETAG_MAX);
  memcpy(wrong[1].etag, e2, HS_ETAG_MAX);
  assert_int_equal(
      hs_store_upload_complete(st, "b", "mp", id, wrong, 2, NULL, NULL, &info),
      HS_ERR_INVALID_PART);
  struct hs_part_ref small[2] = {{2, ""}, {3, ""}}; /* part 2: 50 < 100 */
  memcpy(small[0].etag, e2, HS_ETAG_MAX);
  memcpy(small[1].etag, e3, HS_ETAG_MAX);
  assert_int_equal(
      hs_store_upload_complete(st, "b", "mp", id, small, 2, NULL, NULL, &info),
      HS_ERR_ENTITY_TOO_SMALL);
  assert_int_equal(hs_store_upload_complete(st, "b", "other", id, small, 2,
                                            NULL, NULL, &info),
                   HS_ERR_NO_UPLOAD);
  /* parts 1 and 3 (skipping 2 is allowed) */
  struct hs_part_ref good[2] = {{1, ""}, {3, ""}};
  memcpy(good[0].etag, e1, HS_ETAG_MAX);
  memcpy(good[1].etag, e3, HS_ETAG_MAX);
  assert_int_equal(
      hs_store_upload_complete(st, "b", "mp", id, good, 2, NULL, NULL, &info),
      HS_OK);
  uint8_t md5s[32];
  hs_md5(p1, sizeof p1, md5s);
  hs_md5(p2, 10, md5s + 16);
  char want[HS_ETAG_MAX];
  hs_etag_multipart(md5s, 2, want);
  assert_string_equal(info.etag, want);
  assert_int_equal(info.size, 210);
  assert_int_equal(info.parts, 2);
  char all[210];
  memcpy(all, p1, 200);
  memcpy(all + 200, p2, 10);
  expect_bytes(st, "b", "mp", all, 210);
  assert_int_equal(hs_store_get(st, "b", "mp", &info, NULL), HS_OK);
  assert_string_equal(info.attrs.content_type, "app/mp");
  /* a retried Complete gets the same result (SDKs retry it); the upload
   * itself is gone: no parts, no other key */
  struct hs_obj_info again;
  assert_int_equal(
      hs_store_upload_complete(st, "b", "mp", id, good, 2, NULL, NULL, &again),
      HS_OK);
  assert_string_equal(again.etag, want);
  assert_int_equal(again.size, 210);
  assert_int_equal(hs_store_upload_complete(st, "b", "mp2", id, good, 2,
                                            NULL, NULL, &again),
                   HS_ERR_NO_UPLOAD);
  struct hs_writer *late;
  assert_int_equal(hs_store_upload_part(st, "b", "mp", id, 1, 0, &late),
                   HS_ERR_NO_UPLOAD);
  /* abort, and the limit on uploads */
  assert_int_equal(hs_store_upload_abort(st, "b", "mp", id2), HS_OK);
  assert_int_equal(hs_store_upload_abort(st, "b", "mp", id2),
                   HS_ERR_NO_UPLOAD);
  for (int i = 0; i < 4; i++)
    assert_int_equal(hs_store_upload_create(st, "b", "mp", NULL, id), HS_OK);
  assert_int_equal(hs_store_upload_create(st, "b", "mp", NULL, id),
                   HS_ERR_TOO_MANY);
  struct hs_upload_entry *ul;
  size_t un;
  assert_int_equal(hs_store_upload_list(st, "b", &ul, &un), HS_OK);
  assert_int_equal(un, 4);
  hs_upload_list_free(ul, un);
  /* deleting the bucket ends its uploads */
  hs_store_delete(st, "b", "mp");
  assert_int_equal(hs_store_bucket_delete(st, "b"), HS_OK);
  struct hs_store_usage u;
  hs_store_usage(st, &u);
  assert_int_equal(u.uploads, 0);
  if (f->dir[0])
    assert_int_equal(count_tmp(f->dir), 0);
}

/* The directory store across a restart, and what a crash leaves. */
static void reload(void **state)
{
  struct fixture *f = *state;
  struct hs_store *st = f->st;
  hs_store_bucket_create(st, "keep");
  hs_store_bucket_create(st, "empty");
  struct hs_obj_attrs a = {.content_type = "t/t", .meta = "x:1\n"};
  struct hs_writer *w;
  assert_int_equal(hs_store_put(st, "keep", "a/b", &a, 3, &w), HS_OK);
  hs_writer_write(w, "abc", 3);
  struct hs_obj_info before, after;
  assert_int_equal(hs_writer_commit(w, NULL, &before), HS_OK);
  put(st, "keep", "gone", "x", 1, NULL);
  hs_store_delete(st, "keep", "gone");
  char id[HS_UPLOAD_ID_LEN + 1];
  hs_store_upload_create(st, "keep", "u", NULL, id);
  hs_store_close(st);
  /* what a crash during a write leaves: a temporary file */
  char junk[512];
  snprintf(junk, sizeof junk, "%s/keep/.tmp-Ab12Cd", f->dir);
  FILE *fp = fopen(junk, "w");
  fputs("half", fp);
  fclose(fp);
  snprintf(junk, sizeof junk, "%s/keep/not-an-object", f->dir);
  fp = fopen(junk, "w");
  fputs("junk", fp);
  fclose(fp);
  assert_int_equal(hs_store_open(&f->cfg, &f->st), HS_OK);
  st = f->st;
  assert_int_equal(hs_store_get(st, "keep", "a/b", &after, NULL), HS_OK);
  assert_string_equal(after.etag, before.etag);
  assert_int_equal(after.size, 3);
  assert_int_equal(after.mtime, before.mtime);
  assert_string_equal(after.attrs.content_type, "t/t");
  assert_string_equal(after.attrs.meta, "x:1\n");
  expect_bytes(st, "keep", "a/b", "abc", 3);
  assert_int_equal(hs_store_get(st, "keep", "gone", &after, NULL),
                   HS_ERR_NO_KEY);
  assert_int_equal(hs_store_bucket_head(st, "empty"), HS_OK);
  assert_int_equal(count_tmp(f->dir), 0);
  struct hs_store_usage u;
  hs_store_usage(st, &u);
  assert_int_equal(u.uploads, 0);
  assert_int_equal(u.objects, 1);
}

struct race {
  struct hs_store *st;
  int id;
  unsigned bad;
};

/* Each writer writes objects whose bytes all equal its id; a reader must
 * never see a mix. */
static void *racer(void *arg)
{
  struct race *r = arg;
  char buf[4096];
  for (int i = 0; i < 150; i++) {
    if (r->id < 4) {
      memset(buf, 'A' + r->id, sizeof buf);
      size_t n = 1000 + (size_t)(i * 7 % 3000);
      if (put(r->st, "race", "k", buf, n, NULL))
        r->bad++;
    } else {
      struct hs_obj_info info;
      struct hs_reader *rd;
      if (hs_store_get(r->st, "race", "k", &info, &rd))
        continue;
      if (hs_reader_read(rd, 0, buf, info.size)) {
        r->bad++;
      } else {
        for (size_t k = 1; k < info.size; k++)
          if (buf[k] != buf[0])
            r->bad++;
        uint8_t md5[16];
        char e[HS_ETAG_MAX];
        hs_md5(buf, info.size, md5);
        hs_etag_from_md5(md5, e);
        if (strcmp(e, info.etag))
          r->bad++;
      }
      hs_reader_close(rd);
    }
  }
  return NULL;
}

static void concurrency(void **state)
{
  struct fixture *f = *state;
  hs_store_bucket_create(f->st, "race");
  pthread_t t[8];
  struct race r[8];
  for (int i = 0; i < 8; i++) {
    r[i] = (struct race){.st = f->st, .id = i};
    pthread_create(&t[i], NULL, racer, &r[i]);
  }
  for (int i = 0; i < 8; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(r[i].bad, 0);
  }
  if (f->dir[0])
    assert_int_equal(count_tmp(f->dir), 0);
}

/* --random-etags: unique ETags without MD5, unless a Content-MD5 needs it. */
static void random_etags(void **state)
{
  struct fixture *f = *state;
  hs_store_close(f->st);
  f->cfg.random_etags = true;
  assert_int_equal(hs_store_open(&f->cfg, &f->st), HS_OK);
  struct hs_store *st = f->st;
  hs_store_bucket_create(st, "b");
  struct hs_obj_info a, b;
  assert_int_equal(put(st, "b", "k", "same", 4, &a), HS_OK);
  assert_int_equal(put(st, "b", "k", "same", 4, &b), HS_OK);
  char e[HS_ETAG_MAX];
  assert_true(hs_etag_normalize(a.etag, strlen(a.etag), e));
  assert_string_not_equal(a.etag, b.etag);
  uint8_t md5[16];
  char hex[33];
  hs_md5("same", 4, md5);
  hs_hex(md5, 16, hex);
  assert_string_not_equal(a.etag, hex);
  struct hs_writer *w;
  assert_int_equal(hs_store_put(st, "b", "m", NULL, 4, &w), HS_OK);
  hs_writer_write(w, "same", 4);
  assert_false(hs_writer_require_md5(w)); /* too late */
  assert_int_equal(hs_writer_commit(w, md5, NULL), HS_ERR_INTERNAL);
  assert_int_equal(hs_store_put(st, "b", "m", NULL, 4, &w), HS_OK);
  assert_true(hs_writer_require_md5(w));
  hs_writer_write(w, "same", 4);
  assert_int_equal(hs_writer_commit(w, md5, &a), HS_OK);
  assert_string_equal(a.etag, hex);
  expect_bytes(st, "b", "m", "same", 4);
}

/* The memory backend's total cap: an announced size is refused before
 * anything is allocated, growth past it fails, and what is freed (a
 * delete, an abort, a replaced object) is available again. */
static void memory_cap(void **state)
{
  struct hs_store_config cfg = {.max_object_size = 1u << 20,
                                .max_buckets = 8,
                                .max_uploads = 4,
                                .max_memory = 10000};
  struct hs_store *st;
  assert_int_equal(hs_store_open(&cfg, &st), HS_OK);
  assert_int_equal(hs_store_bucket_create(st, "b"), HS_OK);
  static char data[20000];
  struct hs_writer *w;
  assert_int_equal(hs_store_put(st, "b", "big", NULL, 20000, &w),
                   HS_ERR_STORE_FULL);
  assert_int_equal(put(st, "b", "a", data, 6000, NULL), HS_OK);
  assert_int_equal(hs_store_put(st, "b", "c", NULL, 6000, &w),
                   HS_ERR_STORE_FULL);
  /* no size announced: the growth is refused */
  assert_int_equal(hs_store_put(st, "b", "c", NULL, 0, &w), HS_OK);
  enum hs_err err = HS_OK;
  for (int i = 0; i < 20 && !err; i++)
    err = hs_writer_write(w, data, 500);
  assert_int_equal(err, HS_ERR_STORE_FULL);
  hs_writer_abort(w);
  /* replacing an object frees the old bytes once the new ones are in */
  assert_int_equal(put(st, "b", "a", data, 4000, NULL), HS_OK);
  assert_int_equal(put(st, "b", "c", data, 6000, NULL), HS_OK);
  assert_int_equal(hs_store_delete(st, "b", "a"), HS_OK);
  assert_int_equal(put(st, "b", "d", data, 4000, NULL), HS_OK);
  expect_bytes(st, "b", "c", data, 6000);
  /* parts count too */
  char id[HS_UPLOAD_ID_LEN + 1];
  assert_int_equal(hs_store_upload_create(st, "b", "m", NULL, id), HS_OK);
  assert_int_equal(hs_store_upload_part(st, "b", "m", id, 1, 2000, &w),
                   HS_ERR_STORE_FULL);
  hs_store_close(st);
}

/* Multipart uploads left without activity for upload_expiry_s are aborted:
 * their parts are freed and their ids refused; active ones stay. */
static void upload_expiry(void **state)
{
  struct fixture *f = *state;
  struct hs_store *st = f->st;
  hs_store_bucket_create(st, "b");
  char old[HS_UPLOAD_ID_LEN + 1], fresh[HS_UPLOAD_ID_LEN + 1];
  assert_int_equal(hs_store_upload_create(st, "b", "k", NULL, old), HS_OK);
  struct hs_writer *w;
  assert_int_equal(hs_store_upload_part(st, "b", "k", old, 1, 5, &w), HS_OK);
  hs_writer_write(w, "hello", 5);
  assert_int_equal(hs_writer_commit(w, NULL, NULL), HS_OK);
  int64_t now = (int64_t)time(NULL);
  /* nothing is old enough yet */
  assert_int_equal(hs_store_expire_uploads(st, now + 50), 0);
  assert_int_equal(hs_store_expire_uploads(st, now + 101), 1);
  assert_int_equal(hs_store_upload_part(st, "b", "k", old, 2, 5, &w),
                   HS_ERR_NO_UPLOAD);
  struct hs_store_usage u;
  hs_store_usage(st, &u);
  assert_int_equal(u.uploads, 0);
  /* one without parts expires the same way */
  assert_int_equal(hs_store_upload_create(st, "b", "k", NULL, fresh), HS_OK);
  assert_int_equal(hs_store_expire_uploads(st, now + 99), 0);
  assert_int_equal(hs_store_expire_uploads(st, now + 101), 1);
  if (f->dir[0]) {
    char p[512];
    struct stat sb;
    snprintf(p, sizeof p, "%s/.uploads/%s", f->dir, old);
    assert_int_not_equal(stat(p, &sb), 0); /* its parts are gone */
  }
}

/* The directory backend's system calls, with failures injected. */
static struct {
  bool fail_dir_fsync;  /* fsync of a directory fails */
  bool fail_file_close; /* close of a regular file being written fails */
  unsigned dir_fsyncs;
} sys;

static bool is_dir(int fd)
{
  struct stat sb;
  return fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int sys_fsync(int fd)
{
  if (is_dir(fd)) {
    sys.dir_fsyncs++;
    if (sys.fail_dir_fsync) {
      errno = EIO;
      return -1;
    }
  }
  return fsync(fd);
}

static int sys_close(int fd)
{
  struct stat sb;
  bool file = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
              (fcntl(fd, F_GETFL) & O_ACCMODE) != O_RDONLY;
  int rc = close(fd);
  if (file && sys.fail_file_close) {
    errno = EIO; /* as NFS reports a failed write-back */
    return -1;
  }
  return rc;
}

static const struct hs_store_sys failing_sys = {.fsync = sys_fsync,
                                                .close = sys_close};

/* The directory store reports what it cannot make durable: a directory
 * fsync that fails, a close that fails; and a DELETE is made durable by a
 * directory fsync too. */
static void durability(void **state)
{
  struct fixture *f = *state;
  hs_store_close(f->st);
  f->cfg.sys = &failing_sys;
  assert_int_equal(hs_store_open(&f->cfg, &f->st), HS_OK);
  struct hs_store *st = f->st;
  memset(&sys, 0, sizeof sys);
  assert_int_equal(hs_store_bucket_create(st, "b"), HS_OK);
  assert_int_equal(put(st, "b", "k", "hello", 5, NULL), HS_OK);
  /* a DELETE fsyncs the bucket's directory */
  unsigned before = sys.dir_fsyncs;
  assert_int_equal(hs_store_delete(st, "b", "k"), HS_OK);
  assert_true(sys.dir_fsyncs > before);
  /* the directory fsync after a rename fails: the PUT fails */
  sys.fail_dir_fsync = true;
  assert_int_equal(put(st, "b", "k2", "hello", 5, NULL), HS_ERR_IO);
  assert_int_equal(put(st, "b", "k2", "hello", 5, NULL), HS_ERR_IO);
  sys.fail_dir_fsync = false;
  assert_int_equal(put(st, "b", "k3", "hello", 5, NULL), HS_OK);
  sys.fail_dir_fsync = true;
  assert_int_equal(hs_store_delete(st, "b", "k3"), HS_ERR_IO);
  sys.fail_dir_fsync = false;
  /* closing the written file fails: nothing is committed */
  sys.fail_file_close = true;
  assert_int_equal(put(st, "b", "k4", "hello", 5, NULL), HS_ERR_IO);
  sys.fail_file_close = false;
  struct hs_obj_info info;
  assert_int_equal(hs_store_get(st, "b", "k4", &info, NULL), HS_ERR_NO_KEY);
  assert_int_equal(count_tmp(f->dir), 0);
}

/* Conditional writes and deletes: checked when the change takes effect, so
 * of two writers opened with If-None-Match: * only the first to commit
 * wins, and a failed condition publishes nothing. */
static void conditions(void **state)
{
  struct fixture *f = *state;
  struct hs_store *st = f->st;
  hs_store_bucket_create(st, "b");
  struct hs_cond create = {.if_none_match = "*"};
  struct hs_writer *w1, *w2;
  assert_int_equal(hs_store_check_cond(st, "b", "k", &create), HS_OK);
  assert_int_equal(hs_store_put(st, "b", "k", NULL, 0, &w1), HS_OK);
  assert_int_equal(hs_store_put(st, "b", "k", NULL, 0, &w2), HS_OK);
  assert_int_equal(hs_writer_set_cond(w1, &create), HS_OK);
  assert_int_equal(hs_writer_set_cond(w2, &create), HS_OK);
  assert_int_equal(hs_writer_write(w1, "one", 3), HS_OK);
  assert_int_equal(hs_writer_write(w2, "two", 3), HS_OK);
  struct hs_obj_info info;
  assert_int_equal(hs_writer_commit(w1, NULL, &info), HS_OK);
  assert_int_equal(hs_writer_commit(w2, NULL, NULL), HS_ERR_PRECONDITION);
  expect_bytes(st, "b", "k", "one", 3);
  assert_int_equal(count_tmp(f->dir), 0);
  assert_int_equal(hs_store_check_cond(st, "b", "k", &create),
                   HS_ERR_PRECONDITION);
  /* If-Match: the ETag, any ("*"), another, or no object at all */
  struct hs_cond match = {.if_match = info.etag};
  struct hs_cond other = {.if_match = "\"0123456789abcdef0123456789abcdef\""};
  struct hs_cond any = {.if_match = "*"};
  assert_int_equal(hs_store_check_cond(st, "b", "k", &match), HS_OK);
  assert_int_equal(hs_store_check_cond(st, "b", "k", &any), HS_OK);
  assert_int_equal(hs_store_check_cond(st, "b", "k", &other),
                   HS_ERR_PRECONDITION);
  assert_int_equal(hs_store_check_cond(st, "b", "none", &any), HS_ERR_NO_KEY);
  assert_int_equal(hs_store_check_cond(st, "nob", "k", &any),
                   HS_ERR_NO_BUCKET);
  /* a delete: its conditions, and nothing to do without an object */
  struct hs_cond size = {.has_size = true, .size = 4};
  struct hs_cond mtime = {.has_mtime = true, .mtime = info.mtime - 1};
  assert_int_equal(hs_store_delete_if(st, "b", "k", &other),
                   HS_ERR_PRECONDITION);
  assert_int_equal(hs_store_delete_if(st, "b", "k", &size),
                   HS_ERR_PRECONDITION);
  assert_int_equal(hs_store_delete_if(st, "b", "k", &mtime),
                   HS_ERR_PRECONDITION);
  expect_bytes(st, "b", "k", "one", 3);
  size.size = 3;
  assert_int_equal(hs_store_delete_if(st, "b", "k", &size), HS_OK);
  assert_int_equal(hs_store_get(st, "b", "k", &info, NULL), HS_ERR_NO_KEY);
  assert_int_equal(hs_store_delete_if(st, "b", "k", &other), HS_OK);
}

#define BOTH(fn)                                                            \
  cmocka_unit_test_setup_teardown(fn, setup_mem, teardown),                 \
      cmocka_unit_test_setup_teardown(fn, setup_dir, teardown)

int main(void)
{
  const struct CMUnitTest tests[] = {
      BOTH(buckets),   BOTH(objects),     BOTH(listing),
      BOTH(multipart), BOTH(concurrency), BOTH(random_etags),
      BOTH(upload_expiry), BOTH(conditions),
      cmocka_unit_test_setup_teardown(reload, setup_dir, teardown),
      cmocka_unit_test(memory_cap),
      cmocka_unit_test_setup_teardown(durability, setup_dir, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
