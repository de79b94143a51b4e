/* SPDX-License-Identifier: MIT */
/* Object operations over HTTP: PutObject, CopyObject, GetObject (with
 * Range and conditions), HeadObject, DeleteObject. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "range.h"
#include "s3_internal.h"
#include "xml.h"

#define S3_NS "http://s3.amazonaws.com/doc/2006-03-01/"
#define COPY_CHUNK (1u << 20)

/* The size the client announced for the payload. */
static uint64_t size_hint(const struct hs_op *op)
{
  const char *d =
      hs_header_get(&op->req.headers, "x-amz-decoded-content-length");
  if (hs_auth_streaming(&op->auth) && d)
    return strtoull(d, NULL, 10);
  return op->req.has_length ? op->req.content_length : 0;
}

enum hs_err hs_op_write_cond(const struct hs_op *op, struct hs_cond *c,
                             bool *any)
{
  const struct hs_headers *h = &op->req.headers;
  memset(c, 0, sizeof *c);
  c->if_match = hs_header_get(h, "if-match");
  c->if_none_match = hs_header_get(h, "if-none-match");
  if (op->kind == HS_OP_DELETE_OBJECT) {
    const char *size = hs_header_get(h, "x-amz-if-match-size");
    const char *t = hs_header_get(h, "x-amz-if-match-last-modified-time");
    if (size) {
      char *end;
      c->size = strtoull(size, &end, 10);
      if (*size < '0' || *size > '9' || *end)
        return HS_ERR_INVALID_ARGUMENT;
      c->has_size = true;
    }
    if (t && !hs_time_parse_http(t, &c->mtime))
      return HS_ERR_INVALID_ARGUMENT;
    c->has_mtime = t != NULL;
  }
  *any = c->if_match || c->if_none_match || c->has_size || c->has_mtime;
  return HS_OK;
}

/* PutObject's conditions: checked now (no body is received for a write
 * that cannot succeed) and by the store at the commit. */
static enum hs_err put_cond(struct hs_op *op)
{
  struct hs_cond c;
  bool any;
  enum hs_err err = hs_op_write_cond(op, &c, &any);
  if (err || !any)
    return err;
  err = hs_store_check_cond(op->srv->store, op->bucket, op->key, &c);
  return err ? err : hs_writer_set_cond(op->writer, &c);
}

bool hs_op_open_writer(struct hs_op *op, uint64_t size)
{
  struct hs_obj_attrs attrs;
  enum hs_err err = HS_OK;
  if (size > op->srv->cfg->max_object_size)
    err = HS_ERR_ENTITY_TOO_LARGE;
  else if (op->kind == HS_OP_UPLOAD_PART) {
    err = hs_op_part_args(op);
    if (!err)
      err = hs_store_upload_part(op->srv->store, op->bucket, op->key,
                                 op->upload_id, op->part_number, size,
                                 &op->writer);
  } else if (!(err = hs_op_attrs(op, &attrs))) {
    err = hs_store_put(op->srv->store, op->bucket, op->key, &attrs, size,
                       &op->writer);
    if (!err && (err = put_cond(op))) {
      hs_writer_abort(op->writer);
      op->writer = NULL;
    }
  }
  if (err) {
    hs_op_error_msg(op, err,
                    err == HS_ERR_INVALID_ARGUMENT &&
                            op->kind == HS_OP_UPLOAD_PART
                        ? "Part number must be an integer between 1 and "
                          "10000, inclusive"
                        : NULL);
    return false;
  }
  if (op->has_content_md5)
    hs_writer_require_md5(op->writer);
  return true;
}

enum hs_step hs_op_body_to_writer(struct hs_op *op)
{
  if (!hs_op_open_writer(op, size_hint(op)))
    return HS_STEP_RESPOND;
  op->body_mode = HS_BODY_WRITER;
  op->body_limit = op->srv->cfg->max_object_size;
  return HS_STEP_BODY;
}

void hs_op_commit_writer(struct hs_op *op)
{
  struct hs_obj_info info;
  struct hs_writer *w = op->writer;
  op->writer = NULL;
  enum hs_err err = hs_writer_commit(
      w, op->has_content_md5 ? op->content_md5 : NULL, &info);
  if (err) {
    hs_op_error(op, err);
    return;
  }
  hs_stat_add(&op->srv->stats->http_objects_in, 1);
  hs_resp_headerf(&op->resp, "ETag", "\"%s\"", info.etag);
  op->done = true;
}

/* ---- conditions --------------------------------------------------------- */

/* The conditions of a GET or HEAD ("if-"), or of a copy's source
 * ("x-amz-copy-source-if-"), with S3's precedence: If-Match decides over
 * If-Unmodified-Since, If-None-Match over If-Modified-Since. A GET that is
 * not modified gets 304; a copy, 412. */
static enum hs_err conditions_of(const struct hs_op *op, const char *prefix,
                                 const struct hs_obj_info *info,
                                 enum hs_err not_modified)
{
  const struct hs_headers *h = &op->req.headers;
  char n[4][64];
  snprintf(n[0], sizeof n[0], "%smatch", prefix);
  snprintf(n[1], sizeof n[1], "%sunmodified-since", prefix);
  snprintf(n[2], sizeof n[2], "%snone-match", prefix);
  snprintf(n[3], sizeof n[3], "%smodified-since", prefix);
  const char *im = hs_header_get(h, n[0]);
  const char *ius = hs_header_get(h, n[1]);
  const char *inm = hs_header_get(h, n[2]);
  const char *ims = hs_header_get(h, n[3]);
  int64_t t;
  if (im && !hs_etag_listed(im, info->etag))
    return HS_ERR_PRECONDITION;
  if (!im && ius && hs_time_parse_http(ius, &t) && info->mtime > t)
    return HS_ERR_PRECONDITION;
  if (inm && hs_etag_listed(inm, info->etag))
    return not_modified;
  if (!inm && ims && hs_time_parse_http(ims, &t) && info->mtime <= t)
    return not_modified;
  return HS_OK;
}

static enum hs_err conditions(const struct hs_op *op,
                              const struct hs_obj_info *info)
{
  return conditions_of(op, "if-", info, HS_ERR_NOT_MODIFIED);
}

/* ---- GET and HEAD ------------------------------------------------------- */

bool hs_op_get_prepare(struct hs_op *op, bool reader, struct hs_get *g)
{
  memset(g, 0, sizeof *g);
  struct hs_obj_info *info = &g->info;
  enum hs_err err = hs_op_check_overrides(op);
  if (!err)
    err = hs_store_get(op->srv->store, op->bucket, op->key, info,
                       reader ? &g->reader : NULL);
  if (!err)
    err = conditions(op, info);
  if (err) {
    hs_reader_close(g->reader);
    g->reader = NULL;
    hs_op_error(op, err);
    if (err == HS_ERR_NOT_MODIFIED) {
      char date[40];
      hs_time_http(info->mtime, date);
      hs_resp_headerf(&op->resp, "ETag", "\"%s\"", info->etag);
      hs_resp_header(&op->resp, "Last-Modified", date);
    }
    return false;
  }
  const char *range = hs_header_get(&op->req.headers, "range");
  enum hs_range_result rr =
      range ? hs_range_parse(range, strlen(range), info->size, &g->first,
                             &g->count)
            : HS_RANGE_IGNORE;
  if (rr == HS_RANGE_UNSATISFIABLE) {
    hs_reader_close(g->reader);
    g->reader = NULL;
    hs_op_error(op, HS_ERR_INVALID_RANGE);
    hs_resp_headerf(&op->resp, "Content-Range", "bytes */%llu",
                    (unsigned long long)info->size);
    return false;
  }
  g->partial = rr == HS_RANGE_OK;
  if (!g->partial) {
    g->first = 0;
    g->count = info->size;
  }
  return true;
}

void hs_op_get_headers(struct hs_op *op, const struct hs_get *g)
{
  hs_op_object_headers(op, &g->info);
  if (!g->partial) /* a checksum is of the whole object */
    hs_op_checksum_headers(op, &g->info.attrs);
  op->resp.status = g->partial ? 206 : 200;
  if (g->partial)
    hs_resp_headerf(&op->resp, "Content-Range", "bytes %llu-%llu/%llu",
                    (unsigned long long)g->first,
                    (unsigned long long)(g->first + g->count - 1),
                    (unsigned long long)g->info.size);
}

/* A store reader as the response's source: [first, first + count), read
 * in order. */
struct reader_src {
  struct hs_reader *r;
  uint64_t pos; /* the next byte */
};

static long reader_src_read(void *ctx, char *buf, size_t max)
{
  struct reader_src *s = ctx;
  if (hs_reader_read(s->r, s->pos, buf, max))
    return -1;
  s->pos += max;
  return (long)max;
}

static void reader_src_close(void *ctx)
{
  struct reader_src *s = ctx;
  hs_reader_close(s->r);
  free(s);
}

static bool respond_with_reader(struct hs_op *op, struct hs_get *g)
{
  struct reader_src *s = malloc(sizeof *s);
  if (!s) {
    hs_reader_close(g->reader);
    hs_op_error(op, HS_ERR_NOMEM);
    return false;
  }
  *s = (struct reader_src){g->reader, g->first};
  op->resp.source = (struct hs_source){reader_src_read, reader_src_close, s};
  op->resp.length = g->count;
  return true;
}

static void get_end(struct hs_op *op, bool head)
{
  struct hs_get g;
  if (!hs_op_get_prepare(op, !head, &g))
    return;
  hs_op_get_headers(op, &g);
  if (head) {
    op->resp.head = true;
    op->resp.head_length = g.count;
  } else if (respond_with_reader(op, &g)) {
    hs_stat_add(&op->srv->stats->http_objects_out, 1);
  } else {
    return;
  }
  op->done = true;
}

/* ---- COPY --------------------------------------------------------------- */

/* x-amz-copy-source: "[/]bucket/key", percent-encoded; no versionId. */
static enum hs_err copy_source(const struct hs_op *op,
                               char bucket[HS_BUCKET_MAX + 1],
                               char key[HS_KEY_MAX + 1])
{
  const char *s = hs_header_get(&op->req.headers, "x-amz-copy-source");
  size_t n = strlen(s);
  if (memchr(s, '?', n))
    return HS_ERR_NOT_IMPLEMENTED; /* ?versionId= */
  struct hs_buf path;
  hs_buf_init(&path, HS_KEY_MAX * 3 + HS_BUCKET_MAX + 2);
  if (s[0] != '/')
    hs_buf_putc(&path, '/');
  hs_buf_append(&path, s, n);
  size_t klen;
  enum hs_err err =
      path.failed ? HS_ERR_INVALID_ARGUMENT
                  : hs_path_parse(hs_buf_cstr(&path), path.len, bucket, key,
                                  &klen);
  hs_buf_free(&path);
  if (err)
    return HS_ERR_INVALID_ARGUMENT;
  if (!hs_bucket_name_valid(bucket) || klen == 0)
    return HS_ERR_INVALID_ARGUMENT;
  return HS_OK;
}

enum hs_err hs_copy_bytes(struct hs_reader *r, struct hs_writer *w,
                          uint64_t first, uint64_t count)
{
  uint8_t *buf = malloc(COPY_CHUNK);
  if (!buf)
    return HS_ERR_NOMEM;
  enum hs_err err = HS_OK;
  for (uint64_t done = 0; done < count && !err;) {
    size_t n = count - done < COPY_CHUNK ? (size_t)(count - done) : COPY_CHUNK;
    err = hs_reader_read(r, first + done, buf, n);
    if (!err)
      err = hs_writer_write(w, buf, n);
    done += n;
  }
  free(buf);
  return err;
}

enum hs_err hs_op_copy_open(struct hs_op *op, struct hs_copy_src *s)
{
  memset(s, 0, sizeof *s);
  enum hs_err err = copy_source(op, s->bucket, s->key);
  if (!err)
    err = hs_store_get(op->srv->store, s->bucket, s->key, &s->info,
                       &s->reader);
  if (!err)
    err = conditions_of(op, "x-amz-copy-source-if-", &s->info,
                        HS_ERR_PRECONDITION);
  if (err) {
    hs_reader_close(s->reader);
    s->reader = NULL;
  }
  return err;
}

/* Removes the checksum lines (the copy of a multipart object is one
 * piece: a COMPOSITE checksum, of its parts, is not its own). */
static void drop_checksum(struct hs_obj_attrs *a)
{
  char *w = a->headers;
  for (const char *l = a->headers; *l;) {
    const char *nl = strchr(l, '\n');
    size_t n = nl ? (size_t)(nl - l) + 1 : strlen(l);
    if (strncmp(l, "x-amz-checksum-", 15) != 0) {
      memmove(w, l, n);
      w += n;
    }
    l += n;
  }
  *w = '\0';
}

/* The checksum lines of from (the source's) appended to to's, unless they
 * are COMPOSITE. They fit: hs_op_attrs leaves room for them. */
static void keep_checksum(struct hs_obj_attrs *to,
                          const struct hs_obj_attrs *from)
{
  size_t tl;
  const char *t = hs_attr_line(from->headers, "x-amz-checksum-type", &tl);
  if (t && tl == 9 && memcmp(t, "COMPOSITE", 9) == 0)
    return;
  for (const char *l = from->headers; *l;) {
    const char *nl = strchr(l, '\n');
    if (!nl)
      break;
    if (strncmp(l, "x-amz-checksum-", 15) == 0) {
      size_t used = strlen(to->headers), n = (size_t)(nl - l) + 1;
      if (n < sizeof to->headers - used) {
        memcpy(to->headers + used, l, n);
        to->headers[used + n] = '\0';
      }
    }
    l = nl + 1;
  }
}

/* S3 refuses a copy onto itself that changes nothing. */
static bool changes_nothing(const struct hs_op *op, const char *dir,
                            const struct hs_copy_src *s)
{
  return strcmp(s->bucket, op->bucket) == 0 && strcmp(s->key, op->key) == 0 &&
         !(dir && strcmp(dir, "REPLACE") == 0) &&
         !hs_header_get(&op->req.headers, "x-amz-storage-class");
}

static void copy_end(struct hs_op *op)
{
  struct hs_copy_src s;
  struct hs_obj_info info;
  struct hs_writer *w = NULL;
  struct hs_obj_attrs attrs;
  enum hs_err err = hs_op_copy_open(op, &s);
  struct hs_reader *r = s.reader;
  const struct hs_obj_info src = s.info;
  if (err)
    goto fail;
  const char *dir =
      hs_header_get(&op->req.headers, "x-amz-metadata-directive");
  if (changes_nothing(op, dir, &s)) {
    hs_reader_close(r);
    hs_op_error_msg(op, HS_ERR_INVALID_REQUEST,
                    "This copy request is illegal because it is trying to "
                    "copy an object to itself without changing the "
                    "object's metadata, storage class, website redirect "
                    "location or encryption attributes.");
    return;
  }
  if (dir && strcmp(dir, "REPLACE") == 0) {
    if ((err = hs_op_attrs(op, &attrs)))
      goto fail;
  } else if (dir && strcmp(dir, "COPY") != 0) {
    err = HS_ERR_INVALID_ARGUMENT;
    goto fail;
  } else {
    attrs = src.attrs;
    drop_checksum(&attrs);
  }
  keep_checksum(&attrs, &src.attrs); /* the bytes are the same */
  struct hs_cond cond;
  bool any;
  err = hs_op_write_cond(op, &cond, &any);
  if (!err && any)
    err = hs_store_check_cond(op->srv->store, op->bucket, op->key, &cond);
  if (!err)
    err = hs_store_put(op->srv->store, op->bucket, op->key, &attrs,
                       src.size, &w);
  if (!err && any)
    err = hs_writer_set_cond(w, &cond);
  if (err)
    goto fail;
  err = hs_copy_bytes(r, w, 0, src.size);
  hs_reader_close(r);
  r = NULL;
  if (err)
    goto fail;
  err = hs_writer_commit(w, NULL, &info);
  w = NULL;
  if (err)
    goto fail;
  char date[32];
  hs_time_iso8601(info.mtime, date);
  hs_op_xml_begin(op, 200);
  hs_buf_printf(&op->resp.body,
                "<CopyObjectResult xmlns=\"" S3_NS "\"><LastModified>%s"
                "</LastModified><ETag>&quot;%s&quot;</ETag>"
                "</CopyObjectResult>\n",
                date, info.etag);
  return;
fail:
  hs_writer_abort(w);
  hs_reader_close(r);
  hs_op_error(op, err);
}

/* ---- tagging ------------------------------------------------------------ */

/* GetObjectTagging: objects here never have tags (setting them is 501), so
 * an existing object's TagSet is empty. Clients ask before they copy. */
static void get_tagging_end(struct hs_op *op)
{
  struct hs_obj_info info;
  enum hs_err err =
      hs_store_get(op->srv->store, op->bucket, op->key, &info, NULL);
  if (err) {
    hs_op_error(op, err);
    return;
  }
  hs_op_xml_begin(op, 200);
  hs_buf_puts(&op->resp.body, "<Tagging xmlns=\"" S3_NS "\"><TagSet/>"
                              "</Tagging>\n");
}

/* ---- entry points ------------------------------------------------------- */

enum hs_step hs_s3_object_begin(struct hs_op *op)
{
  if (op->kind == HS_OP_PUT_OBJECT)
    return hs_op_body_to_writer(op);
  return HS_STEP_BODY;
}

void hs_s3_object_end(struct hs_op *op)
{
  switch (op->kind) {
  case HS_OP_PUT_OBJECT:
    hs_op_commit_writer(op);
    break;
  case HS_OP_COPY_OBJECT:
    copy_end(op);
    break;
  case HS_OP_GET_OBJECT:
    get_end(op, false);
    break;
  case HS_OP_HEAD_OBJECT:
    get_end(op, true);
    break;
  case HS_OP_GET_OBJECT_TAGGING:
    get_tagging_end(op);
    break;
  case HS_OP_DELETE_OBJECT: {
    struct hs_cond c;
    bool any;
    enum hs_err err = hs_op_write_cond(op, &c, &any);
    if (!err)
      err = hs_store_delete_if(op->srv->store, op->bucket, op->key,
                               any ? &c : NULL);
    if (err) {
      hs_op_error(op, err);
      return;
    }
    op->resp.status = 204;
    op->done = true;
    break;
  }
  default:
    hs_op_error(op, HS_ERR_INTERNAL);
  }
}
