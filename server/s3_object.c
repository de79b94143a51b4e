/* SPDX-License-Identifier: MIT */
/* Object operations over HTTP: PutObject, CopyObject, GetObject (with
 * Range and conditions), HeadObject, DeleteObject. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "range.h"
#include "s3_internal.h"
#include "s3_xml.h"
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

/* x-amz-tagging of a PutObject or CopyObject (REPLACE): the new object's
 * tags, onto w. *msg: InvalidTag's message. */
static enum hs_err header_tags(const struct hs_op *op, struct hs_writer *w,
                               const char **msg)
{
  const char *v = hs_header_get(&op->req.headers, "x-amz-tagging");
  char *tags = NULL;
  enum hs_err err = v ? hs_parse_tagging_header(v, &tags, msg) : HS_OK;
  if (!err && tags)
    err = hs_writer_set_tags(w, tags);
  free(tags);
  return err;
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
  const char *msg = NULL;
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
    if (!err && !(err = put_cond(op)))
      err = header_tags(op, op->writer, &msg);
    if (err) {
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
                        : msg);
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

/* ?partNumber=N: the bytes of that part (a ranged GET of the object); an
 * object of one piece has one part, all of it. */
static enum hs_err part_range(struct hs_op *op, struct hs_get *g,
                              const char **msg)
{
  *msg = "Part number must be an integer between 1 and 10000, inclusive";
  if (hs_op_part_number(op))
    return HS_ERR_INVALID_ARGUMENT;
  *msg = "Cannot specify both Range header and partNumber query parameter";
  if (hs_header_get(&op->req.headers, "range"))
    return HS_ERR_INVALID_REQUEST;
  *msg = NULL;
  g->first = 0;
  g->count = g->info.size;
  if (g->info.parts == 0)
    return op->part_number == 1 ? HS_OK : HS_ERR_INVALID_PART;
  struct hs_part_entry *l = NULL;
  size_t n = 0;
  enum hs_err err = hs_store_object_parts(op->srv->store, op->bucket,
                                          op->key, &l, &n);
  if (!err && n == 0) {
    *msg = "The parts of this object were not kept (it was loaded from "
           "the data directory).";
    err = HS_ERR_NOT_IMPLEMENTED;
  }
  if (!err && op->part_number > n)
    err = HS_ERR_INVALID_PART;
  for (size_t i = 0; !err && i + 1 < op->part_number; i++)
    g->first += l[i].size;
  if (!err) {
    g->count = l[op->part_number - 1].size;
    g->partial = true;
    g->parts_count = (unsigned)n;
    memcpy(g->part_checksum, l[op->part_number - 1].checksum,
           sizeof g->part_checksum);
  }
  free(l);
  return err;
}

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
  if (hs_query_get(&op->query, "partNumber")) {
    const char *msg;
    if ((err = part_range(op, g, &msg))) {
      hs_reader_close(g->reader);
      g->reader = NULL;
      hs_op_error_msg(op, err, msg);
      return false;
    }
    return true;
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
  if (!g->partial) { /* a checksum is of the whole object */
    hs_op_checksum_headers(op, &g->info.attrs);
  } else if (g->parts_count) { /* a part's: its own, the object's type */
    struct hs_obj_attrs a;
    size_t tl;
    const char *t =
        hs_attr_line(g->info.attrs.headers, "x-amz-checksum-type", &tl);
    memset(&a, 0, sizeof a);
    memcpy(a.headers, g->part_checksum, strnlen(g->part_checksum,
                                                sizeof g->part_checksum));
    if (t)
      hs_attr_line_add(a.headers, sizeof a.headers, "x-amz-checksum-type", t,
                       tl);
    hs_op_checksum_headers(op, &a);
  }
  if (g->parts_count)
    hs_resp_headerf(&op->resp, "x-amz-mp-parts-count", "%u", g->parts_count);
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

/* x-amz-tagging-directive: COPY (the default) gives the copy the source's
 * tags, REPLACE those of x-amz-tagging (or none). */
static enum hs_err copy_tags(const struct hs_op *op,
                             const struct hs_copy_src *s, struct hs_writer *w,
                             const char **msg)
{
  const char *dir =
      hs_header_get(&op->req.headers, "x-amz-tagging-directive");
  if (dir && strcmp(dir, "REPLACE") == 0)
    return header_tags(op, w, msg);
  if (dir && strcmp(dir, "COPY") != 0) {
    *msg = "Unknown tagging directive.";
    return HS_ERR_INVALID_ARGUMENT;
  }
  char *tags = NULL;
  enum hs_err err = hs_store_tags_get(op->srv->store, s->bucket, s->key,
                                      &tags);
  if (!err && *tags)
    err = hs_writer_set_tags(w, tags);
  free(tags);
  return err == HS_ERR_NO_KEY ? HS_OK : err; /* gone meanwhile: none */
}

static void copy_end(struct hs_op *op)
{
  const char *msg = NULL;
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
  if (!err)
    err = copy_tags(op, &s, w, &msg);
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
  hs_op_error_msg(op, err, msg);
}

/* ---- tagging ------------------------------------------------------------ */

static void get_tagging_end(struct hs_op *op)
{
  char *tags = NULL;
  enum hs_err err = hs_store_tags_get(op->srv->store, op->bucket, op->key,
                                      &tags);
  if (err) {
    hs_op_error(op, err);
    return;
  }
  hs_op_xml_begin(op, 200);
  struct hs_buf *b = &op->resp.body;
  hs_buf_puts(b, "<Tagging xmlns=\"" S3_NS "\"><TagSet>");
  for (const char *l = tags; *l;) {
    const char *tab = strchr(l, '\t'), *nl = strchr(l, '\n');
    if (!tab || !nl || tab > nl)
      break;
    hs_buf_puts(b, "<Tag><Key>");
    hs_xml_escape(b, l, (size_t)(tab - l));
    hs_buf_puts(b, "</Key><Value>");
    hs_xml_escape(b, tab + 1, (size_t)(nl - tab - 1));
    hs_buf_puts(b, "</Value></Tag>");
    l = nl + 1;
  }
  hs_buf_puts(b, "</TagSet></Tagging>\n");
  free(tags);
}

static void put_tagging_end(struct hs_op *op)
{
  char *tags = NULL;
  const char *msg = NULL;
  enum hs_err err = hs_parse_tagging(hs_buf_cstr(&op->body), op->body.len,
                                     &tags, &msg);
  if (!err)
    err = hs_store_tags_set(op->srv->store, op->bucket, op->key, tags);
  free(tags);
  if (err) {
    hs_op_error_msg(op, err, msg);
    return;
  }
  op->resp.status = 200;
  op->done = true;
}

static void delete_tagging_end(struct hs_op *op)
{
  enum hs_err err = hs_store_tags_set(op->srv->store, op->bucket, op->key,
                                      NULL);
  if (err) {
    hs_op_error(op, err);
    return;
  }
  op->resp.status = 204;
  op->done = true;
}

/* ---- GetObjectAttributes ------------------------------------------------ */

/* Whether x-amz-object-attributes names attribute a. */
static bool asked(const char *list, const char *a)
{
  size_t n = strlen(a);
  for (const char *p = list; *p;) {
    while (*p == ' ' || *p == ',')
      p++;
    size_t k = strcspn(p, ", ");
    if (k == n && strncmp(p, a, n) == 0)
      return true;
    p += k;
  }
  return false;
}

/* The checksum elements of attribute lines (one part's or the object's). */
static void put_checksums(struct hs_buf *b, const char *lines, bool type)
{
  for (enum hs_cksum_alg a = HS_CK_CRC32; a <= HS_CK_SHA256; a++) {
    size_t vl, tl;
    const char *v = hs_attr_line(lines, hs_cksum_header(a), &vl);
    if (!v)
      continue;
    hs_buf_printf(b, "<Checksum%s>%.*s</Checksum%s>", hs_cksum_name(a),
                  (int)vl, v, hs_cksum_name(a));
    const char *t = hs_attr_line(lines, "x-amz-checksum-type", &tl);
    if (type && t)
      hs_buf_printf(b, "<ChecksumType>%.*s</ChecksumType>", (int)tl, t);
  }
}

/* ObjectParts: a page of max-parts (x-amz-max-parts, 1000) after
 * x-amz-part-number-marker. */
static enum hs_err put_parts(struct hs_op *op, const struct hs_obj_info *info)
{
  const char *mp = hs_header_get(&op->req.headers, "x-amz-max-parts");
  const char *pm = hs_header_get(&op->req.headers, "x-amz-part-number-marker");
  char *end;
  unsigned long max = mp ? strtoul(mp, &end, 10) : 1000;
  if (mp && (*mp < '0' || *mp > '9' || *end))
    return HS_ERR_INVALID_ARGUMENT;
  unsigned long marker = pm ? strtoul(pm, &end, 10) : 0;
  if (pm && (*pm < '0' || *pm > '9' || *end))
    return HS_ERR_INVALID_ARGUMENT;
  if (max > 1000)
    max = 1000;
  struct hs_part_entry *l = NULL;
  size_t n = 0;
  enum hs_err err = hs_store_object_parts(op->srv->store, op->bucket,
                                          op->key, &l, &n);
  if (err || info->parts == 0)
    return err;
  struct hs_buf *b = &op->resp.body;
  hs_buf_printf(b, "<ObjectParts><PartsCount>%u</PartsCount>"
                   "<PartNumberMarker>%lu</PartNumberMarker>",
                info->parts, marker);
  size_t shown = 0, i = 0;
  while (i < n && l[i].number <= marker)
    i++;
  unsigned last = 0;
  for (; i < n && shown < max; i++, shown++) {
    hs_buf_printf(b, "<Part><PartNumber>%u</PartNumber><Size>%llu</Size>",
                  l[i].number, (unsigned long long)l[i].size);
    put_checksums(b, l[i].checksum, false);
    hs_buf_puts(b, "</Part>");
    last = l[i].number;
  }
  hs_buf_printf(b, "<NextPartNumberMarker>%u</NextPartNumberMarker>"
                   "<MaxParts>%lu</MaxParts><IsTruncated>%s</IsTruncated>"
                   "</ObjectParts>",
                last, max, i < n ? "true" : "false");
  free(l);
  return HS_OK;
}

static void attributes_end(struct hs_op *op)
{
  const char *list =
      hs_header_get(&op->req.headers, "x-amz-object-attributes");
  struct hs_obj_info info;
  if (!list || !*list) {
    hs_op_error_msg(op, HS_ERR_INVALID_ARGUMENT,
                    "The x-amz-object-attributes header specifying the "
                    "attributes to be retrieved is either missing or "
                    "empty");
    return;
  }
  enum hs_err err =
      hs_store_get(op->srv->store, op->bucket, op->key, &info, NULL);
  if (!err)
    err = conditions(op, &info);
  if (err) {
    hs_op_error(op, err == HS_ERR_NOT_MODIFIED ? HS_ERR_PRECONDITION : err);
    return;
  }
  char date[40];
  hs_time_http(info.mtime, date);
  hs_resp_header(&op->resp, "Last-Modified", date);
  hs_op_xml_begin(op, 200);
  struct hs_buf *b = &op->resp.body;
  hs_buf_puts(b, "<GetObjectAttributesResponse xmlns=\"" S3_NS "\">");
  if (asked(list, "ETag"))
    hs_buf_printf(b, "<ETag>%s</ETag>", info.etag);
  if (asked(list, "Checksum") &&
      hs_attr_line(info.attrs.headers, "x-amz-checksum-type", &(size_t){0})) {
    hs_buf_puts(b, "<Checksum>");
    put_checksums(b, info.attrs.headers, true);
    hs_buf_puts(b, "</Checksum>");
  }
  if (asked(list, "ObjectParts") && (err = put_parts(op, &info))) {
    hs_op_resp_reset(op);
    hs_op_error(op, err);
    return;
  }
  if (asked(list, "StorageClass"))
    hs_buf_puts(b, "<StorageClass>STANDARD</StorageClass>");
  if (asked(list, "ObjectSize"))
    hs_buf_printf(b, "<ObjectSize>%llu</ObjectSize>",
                  (unsigned long long)info.size);
  hs_buf_puts(b, "</GetObjectAttributesResponse>\n");
}

/* ---- entry points ------------------------------------------------------- */

enum hs_step hs_s3_object_begin(struct hs_op *op)
{
  if (op->kind == HS_OP_PUT_OBJECT)
    return hs_op_body_to_writer(op);
  return HS_STEP_BODY; /* XML bodies: the rows' HS_S3_BODY */
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
  case HS_OP_PUT_OBJECT_TAGGING:
    put_tagging_end(op);
    break;
  case HS_OP_DELETE_OBJECT_TAGGING:
    delete_tagging_end(op);
    break;
  case HS_OP_GET_OBJECT_ATTRIBUTES:
    attributes_end(op);
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
