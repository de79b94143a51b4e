/* SPDX-License-Identifier: MIT */
/* Multipart uploads: CreateMultipartUpload, UploadPart, UploadPartCopy,
 * CompleteMultipartUpload, AbortMultipartUpload, ListParts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3_internal.h"
#include "s3_xml.h"
#include "xml.h"

#define S3_NS "http://s3.amazonaws.com/doc/2006-03-01/"

static void put_text(struct hs_buf *b, const char *tag, const char *s)
{
  hs_buf_printf(b, "<%s>", tag);
  hs_xml_escape(b, s, strlen(s));
  hs_buf_printf(b, "</%s>", tag);
}

/* uploadId: HS_UPLOAD_ID_LEN hex digits; anything else cannot exist. */
static enum hs_err upload_id(struct hs_op *op)
{
  const struct hs_param *p = hs_query_get(&op->query, "uploadId");
  if (!p || strlen(p->value) != HS_UPLOAD_ID_LEN)
    return HS_ERR_NO_UPLOAD;
  for (const char *c = p->value; *c; c++)
    if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
      return HS_ERR_NO_UPLOAD;
  op->upload_id = p->value;
  return HS_OK;
}

/* partNumber: 1..10000 in decimal, nothing else. */
enum hs_err hs_op_part_number(struct hs_op *op)
{
  const struct hs_param *p = hs_query_get(&op->query, "partNumber");
  const char *v = p ? p->value : "";
  size_t n = strlen(v);
  if (n == 0 || n > 5)
    return HS_ERR_INVALID_ARGUMENT;
  unsigned x = 0;
  for (size_t i = 0; i < n; i++) {
    if (v[i] < '0' || v[i] > '9')
      return HS_ERR_INVALID_ARGUMENT;
    x = x * 10 + (unsigned)(v[i] - '0');
  }
  if (x < 1 || x > HS_MAX_PARTS)
    return HS_ERR_INVALID_ARGUMENT;
  op->part_number = x;
  return HS_OK;
}

enum hs_err hs_op_part_args(struct hs_op *op)
{
  enum hs_err err = hs_op_part_number(op);
  return err ? err : upload_id(op);
}

/* x-amz-checksum-algorithm and x-amz-checksum-type of a new upload, kept
 * in its attributes as lines of those names; S3's defaults and rules: a
 * CRC64NVME checksum is of the full object, a SHA one composite (of the
 * parts' checksums). */
static enum hs_err checksum_algorithm(const struct hs_op *op,
                                      struct hs_obj_attrs *a,
                                      const char **msg)
{
  const char *name = hs_header_get(&op->req.headers,
                                   "x-amz-checksum-algorithm");
  const char *type = hs_header_get(&op->req.headers, "x-amz-checksum-type");
  if (!name) {
    *msg = "x-amz-checksum-type needs x-amz-checksum-algorithm.";
    return type ? HS_ERR_INVALID_REQUEST : HS_OK;
  }
  enum hs_cksum_alg alg = hs_cksum_alg_of_name(name);
  *msg = "Checksum algorithm provided is unsupported.";
  if (alg == HS_CK_NONE)
    return HS_ERR_INVALID_REQUEST;
  bool sha = alg == HS_CK_SHA1 || alg == HS_CK_SHA256;
  if (!type)
    type = alg == HS_CK_CRC64NVME ? "FULL_OBJECT" : "COMPOSITE";
  *msg = "The checksum type is not valid for this algorithm.";
  if (!(strcmp(type, "COMPOSITE") == 0 && alg != HS_CK_CRC64NVME) &&
      !(strcmp(type, "FULL_OBJECT") == 0 && !sha))
    return HS_ERR_INVALID_REQUEST;
  const char *canon = hs_cksum_name(alg);
  if (!hs_attr_line_add(a->headers, sizeof a->headers,
                        "x-amz-checksum-algorithm", canon, strlen(canon)) ||
      !hs_attr_line_add(a->headers, sizeof a->headers, "x-amz-checksum-type",
                        type, strlen(type)))
    return HS_ERR_INTERNAL;
  return HS_OK;
}

static void create_end(struct hs_op *op)
{
  struct hs_obj_attrs attrs;
  char id[HS_UPLOAD_ID_LEN + 1];
  const char *msg = NULL;
  enum hs_err err = hs_op_attrs(op, &attrs);
  if (!err && (err = checksum_algorithm(op, &attrs, &msg))) {
    hs_op_error_msg(op, err, msg);
    return;
  }
  const char *tv = hs_header_get(&op->req.headers, "x-amz-tagging");
  char *tags = NULL;
  if (!err && tv && (err = hs_parse_tagging_header(tv, &tags, &msg))) {
    hs_op_error_msg(op, err, msg);
    return;
  }
  if (!err)
    err = hs_store_upload_create(op->srv->store, op->bucket, op->key, &attrs,
                                 id);
  if (!err && tags &&
      (err = hs_store_upload_tags(op->srv->store, op->bucket, op->key, id,
                                  tags)))
    hs_store_upload_abort(op->srv->store, op->bucket, op->key, id);
  free(tags);
  if (err) {
    hs_op_error(op, err == HS_ERR_TOO_MANY ? HS_ERR_SLOW_DOWN : err);
    return;
  }
  size_t al, tl;
  const char *alg = hs_attr_line(attrs.headers, "x-amz-checksum-algorithm",
                                 &al);
  const char *type = hs_attr_line(attrs.headers, "x-amz-checksum-type", &tl);
  if (alg && type) {
    hs_resp_headerf(&op->resp, "x-amz-checksum-algorithm", "%.*s", (int)al,
                    alg);
    hs_resp_headerf(&op->resp, "x-amz-checksum-type", "%.*s", (int)tl, type);
  }
  hs_op_xml_begin(op, 200);
  struct hs_buf *b = &op->resp.body;
  hs_buf_puts(b, "<InitiateMultipartUploadResult xmlns=\"" S3_NS "\">");
  put_text(b, "Bucket", op->bucket);
  put_text(b, "Key", op->key);
  put_text(b, "UploadId", id);
  hs_buf_puts(b, "</InitiateMultipartUploadResult>\n");
}

/* One part's checksum of alg, as stored with it, decoded. */
static bool part_digest(const struct hs_part_entry *p, enum hs_cksum_alg alg,
                        uint8_t d[HS_CKSUM_MAX])
{
  size_t vl;
  const char *v = hs_attr_line(p->checksum, hs_cksum_header(alg), &vl);
  return v && hs_base64_decode(v, vl, d, hs_cksum_len(alg));
}

static uint64_t crc_of(const uint8_t *d, size_t len)
{
  uint64_t v = 0;
  for (size_t i = 0; i < len; i++)
    v = v << 8 | d[i];
  return v;
}

/* The object's checksum from the listed parts' (l, by number), each of
 * alg: COMPOSITE, the checksum of their checksums and "-N"; FULL_OBJECT,
 * their CRCs joined. False if a part has none (or is not in l). */
static bool join_parts(enum hs_cksum_alg alg, bool full,
                       const struct hs_part_ref *parts, size_t n,
                       const struct hs_part_entry *l, size_t ln, char *b64,
                       size_t b64_max)
{
  struct hs_cksum c;
  uint8_t d[HS_CKSUM_MAX];
  size_t len = hs_cksum_len(alg), j = 0;
  uint64_t crc = 0;
  bool ok = hs_cksum_begin(&c, alg) == HS_OK;
  for (size_t i = 0; i < n && ok; i++) {
    while (j < ln && l[j].number < parts[i].number)
      j++;
    ok = j < ln && l[j].number == parts[i].number &&
         strcmp(l[j].etag, parts[i].etag) == 0 && part_digest(&l[j], alg, d);
    if (ok && full)
      ok = hs_crc_join(alg, crc, crc_of(d, len), l[j].size, &crc);
    else if (ok)
      hs_cksum_update(&c, d, len);
  }
  if (ok && full) {
    for (size_t i = 0; i < len; i++)
      d[i] = (uint8_t)(crc >> (8 * (len - 1 - i)));
    hs_base64_encode(d, len, b64);
  } else if (ok) {
    hs_cksum_final(&c, d);
    hs_base64_encode(d, len, b64);
    size_t used = strlen(b64);
    snprintf(b64 + used, b64_max - used, "-%zu", n);
  }
  hs_cksum_free(&c);
  return ok;
}

/* The checksum a completed upload gets, as a line for its attributes ("" if
 * none): with CreateMultipartUpload's x-amz-checksum-algorithm, when every
 * listed part has a checksum of it. */
static void upload_checksum(struct hs_op *op, const struct hs_part_ref *parts,
                            size_t n, char line[HS_PART_CKSUM_MAX])
{
  struct hs_obj_attrs a;
  struct hs_part_entry *l = NULL;
  size_t ln = 0, al, tl;
  line[0] = '\0';
  if (hs_store_upload_attrs(op->srv->store, op->bucket, op->key,
                            op->upload_id, &a))
    return;
  const char *an = hs_attr_line(a.headers, "x-amz-checksum-algorithm", &al);
  const char *tn = hs_attr_line(a.headers, "x-amz-checksum-type", &tl);
  char name[16], b64[64];
  if (!an || !tn || al >= sizeof name)
    return;
  snprintf(name, sizeof name, "%.*s", (int)al, an);
  enum hs_cksum_alg alg = hs_cksum_alg_of_name(name);
  bool full = tl == 11 && memcmp(tn, "FULL_OBJECT", 11) == 0;
  if (hs_store_part_list(op->srv->store, op->bucket, op->key, op->upload_id,
                         &l, &ln))
    return;
  if (join_parts(alg, full, parts, n, l, ln, b64, sizeof b64))
    snprintf(line, HS_PART_CKSUM_MAX, "%s:%s\n", hs_cksum_header(alg), b64);
  free(l);
}

/* The object's checksum elements of CompleteMultipartUploadResult. */
static void put_checksum(struct hs_buf *b, const struct hs_obj_attrs *a)
{
  for (enum hs_cksum_alg alg = HS_CK_CRC32; alg <= HS_CK_SHA256; alg++) {
    size_t vl, tl;
    const char *v = hs_attr_line(a->headers, hs_cksum_header(alg), &vl);
    const char *t = hs_attr_line(a->headers, "x-amz-checksum-type", &tl);
    if (!v)
      continue;
    hs_buf_printf(b, "<Checksum%s>%.*s</Checksum%s>", hs_cksum_name(alg),
                  (int)vl, v, hs_cksum_name(alg));
    if (t)
      hs_buf_printf(b, "<ChecksumType>%.*s</ChecksumType>", (int)tl, t);
  }
}

/* A part sent again while an earlier send of it was still arriving is
 * listed by a client once per send, with the same number: such a run names
 * one part, the one the upload kept (the last to complete), so the entry
 * with its ETag stays (or the last, which Complete then refuses as
 * InvalidPart). */
static void merge_resent(struct hs_op *op, struct hs_part_ref *parts,
                         size_t *n)
{
  struct hs_part_entry *l = NULL;
  size_t ln = 0, out = 0;
  if (hs_store_part_list(op->srv->store, op->bucket, op->key, op->upload_id,
                         &l, &ln))
    return;
  for (size_t i = 0; i < *n;) {
    size_t end = i, keep = i;
    while (end < *n && parts[end].number == parts[i].number)
      end++;
    keep = end - 1;
    for (size_t j = 0; j < ln; j++)
      if (l[j].number == parts[i].number)
        for (size_t k = i; k < end; k++)
          if (strcmp(parts[k].etag, l[j].etag) == 0)
            keep = k;
    parts[out++] = parts[keep];
    i = end;
  }
  *n = out;
  free(l);
}

/* x-amz-checksum-ALG on CompleteMultipartUpload: the object's checksum as
 * the client computed it ("B64" or "B64-N"), which must be the one the
 * parts give (line, "" for none). */
static bool checksum_matches(const struct hs_op *op, const char *line)
{
  const struct hs_headers *h = &op->req.headers;
  for (size_t i = 0; i < h->n; i++) {
    enum hs_cksum_alg a = hs_cksum_alg_of_header(h->v[i].name);
    if (a == HS_CK_NONE)
      continue;
    size_t vl, gl;
    const char *got = hs_attr_line(line, hs_cksum_header(a), &gl);
    const char *v = h->v[i].value, *dash = strchr(v, '-');
    vl = dash ? (size_t)(dash - v) : strlen(v);
    const char *gdash = got ? memchr(got, '-', gl) : NULL;
    if (gdash)
      gl = (size_t)(gdash - got);
    if (!got || gl != vl || memcmp(got, v, vl) != 0)
      return false;
  }
  return true;
}

static void complete_end(struct hs_op *op)
{
  struct hs_part_ref *parts = NULL;
  size_t n = 0;
  struct hs_obj_info info;
  char cksum[HS_PART_CKSUM_MAX] = "";
  struct hs_cond cond;
  bool any;
  enum hs_err err = upload_id(op);
  if (!err)
    err = hs_op_write_cond(op, &cond, &any);
  if (!err)
    err = hs_parse_complete(hs_buf_cstr(&op->body), op->body.len, &parts, &n);
  if (!err) {
    merge_resent(op, parts, &n);
    upload_checksum(op, parts, n, cksum);
    struct hs_obj_attrs a; /* a retry after success: its result again */
    bool live = hs_store_upload_attrs(op->srv->store, op->bucket, op->key,
                                      op->upload_id, &a) == HS_OK;
    if (live && !checksum_matches(op, cksum)) {
      free(parts);
      hs_op_error_msg(op, HS_ERR_BAD_DIGEST,
                      "The checksum you specified did not match the "
                      "checksum of the parts.");
      return;
    }
  }
  if (!err)
    err = hs_store_upload_complete(op->srv->store, op->bucket, op->key,
                                   op->upload_id, parts, n, cksum,
                                   any ? &cond : NULL, &info);
  free(parts);
  if (err) {
    hs_op_error(op, err);
    return;
  }
  hs_op_xml_begin(op, 200);
  struct hs_buf *b = &op->resp.body;
  const char *host = hs_header_get(&op->req.headers, "host");
  hs_buf_puts(b, "<CompleteMultipartUploadResult xmlns=\"" S3_NS "\">");
  hs_buf_puts(b, "<Location>http://");
  if (!host)
    host = "localhost";
  hs_xml_escape(b, host, strlen(host));
  hs_xml_escape(b, op->path.p, op->path.len);
  hs_buf_puts(b, "</Location>");
  put_text(b, "Bucket", op->bucket);
  put_text(b, "Key", op->key);
  hs_buf_printf(b, "<ETag>&quot;%s&quot;</ETag>", info.etag);
  put_checksum(b, &info.attrs);
  hs_buf_puts(b, "</CompleteMultipartUploadResult>\n");
}

/* x-amz-copy-source-range: "bytes=FIRST-LAST", both within the source;
 * without it, the whole source. */
static enum hs_err copy_range(const struct hs_op *op, uint64_t size,
                              uint64_t *first, uint64_t *count)
{
  const char *v = hs_header_get(&op->req.headers, "x-amz-copy-source-range");
  if (!v) {
    *first = 0;
    *count = size;
    return HS_OK;
  }
  uint64_t n[2] = {0, 0};
  const char *p = v;
  if (strncmp(p, "bytes=", 6) != 0)
    return HS_ERR_INVALID_ARGUMENT;
  p += 6;
  for (int i = 0; i < 2; i++) {
    const char *d = p;
    for (; *p >= '0' && *p <= '9'; p++) {
      if (p - d >= 19)
        return HS_ERR_INVALID_ARGUMENT;
      n[i] = n[i] * 10 + (uint64_t)(*p - '0');
    }
    if (p == d || *p != (i ? '\0' : '-'))
      return HS_ERR_INVALID_ARGUMENT;
    p++;
  }
  if (n[0] > n[1] || n[1] >= size)
    return HS_ERR_INVALID_ARGUMENT;
  *first = n[0];
  *count = n[1] - n[0] + 1;
  return HS_OK;
}

/* UploadPartCopy: the part's bytes from an object (or a range of it). */
static void part_copy_end(struct hs_op *op)
{
  struct hs_copy_src s = {.reader = NULL};
  struct hs_writer *w = NULL;
  struct hs_obj_info info;
  uint64_t first = 0, count = 0;
  enum hs_err err = hs_op_part_args(op);
  if (!err)
    err = hs_op_copy_open(op, &s);
  if (!err && copy_range(op, s.info.size, &first, &count)) {
    char m[160];
    snprintf(m, sizeof m, "Range specified is not valid for source object "
                          "of size: %llu", (unsigned long long)s.info.size);
    hs_reader_close(s.reader);
    hs_op_error_msg(op, HS_ERR_INVALID_ARGUMENT, m);
    return;
  }
  if (!err && count > op->srv->cfg->max_object_size)
    err = HS_ERR_ENTITY_TOO_LARGE;
  if (!err)
    err = hs_store_upload_part(op->srv->store, op->bucket, op->key,
                               op->upload_id, op->part_number, count, &w);
  if (!err)
    err = hs_copy_bytes(s.reader, w, first, count);
  hs_reader_close(s.reader);
  if (!err) {
    err = hs_writer_commit(w, NULL, &info);
    w = NULL;
  }
  if (err) {
    hs_writer_abort(w);
    hs_op_error(op, err);
    return;
  }
  char date[32];
  hs_time_iso8601(info.mtime, date);
  hs_op_xml_begin(op, 200);
  hs_buf_printf(&op->resp.body,
                "<CopyPartResult xmlns=\"" S3_NS "\"><LastModified>%s"
                "</LastModified><ETag>&quot;%s&quot;</ETag></CopyPartResult>\n",
                date, info.etag);
}

static void abort_end(struct hs_op *op)
{
  enum hs_err err = upload_id(op);
  if (!err)
    err = hs_store_upload_abort(op->srv->store, op->bucket, op->key,
                                op->upload_id);
  if (err) {
    hs_op_error(op, err);
    return;
  }
  op->resp.status = 204;
  op->done = true;
}

static void list_parts_end(struct hs_op *op)
{
  struct hs_part_entry *l = NULL;
  size_t n = 0;
  enum hs_err err = upload_id(op);
  if (!err)
    err = hs_store_part_list(op->srv->store, op->bucket, op->key,
                             op->upload_id, &l, &n);
  if (err) {
    hs_op_error(op, err);
    return;
  }
  hs_op_xml_begin(op, 200);
  struct hs_buf *b = &op->resp.body;
  hs_buf_puts(b, "<ListPartsResult xmlns=\"" S3_NS "\">");
  put_text(b, "Bucket", op->bucket);
  put_text(b, "Key", op->key);
  put_text(b, "UploadId", op->upload_id);
  hs_buf_puts(b, "<PartNumberMarker>0</PartNumberMarker>"
                 "<MaxParts>10000</MaxParts><IsTruncated>false</IsTruncated>"
                 "<StorageClass>STANDARD</StorageClass>");
  for (size_t i = 0; i < n; i++) {
    char date[32];
    hs_time_iso8601(l[i].mtime, date);
    hs_buf_printf(b,
                  "<Part><PartNumber>%u</PartNumber><LastModified>%s"
                  "</LastModified><ETag>&quot;%s&quot;</ETag><Size>%llu"
                  "</Size>",
                  l[i].number, date, l[i].etag, (unsigned long long)l[i].size);
    for (enum hs_cksum_alg a = HS_CK_CRC32; a <= HS_CK_SHA256; a++) {
      size_t vl;
      const char *v = hs_attr_line(l[i].checksum, hs_cksum_header(a), &vl);
      if (v)
        hs_buf_printf(b, "<Checksum%s>%.*s</Checksum%s>", hs_cksum_name(a),
                      (int)vl, v, hs_cksum_name(a));
    }
    hs_buf_puts(b, "</Part>");
  }
  hs_buf_puts(b, "</ListPartsResult>\n");
  free(l);
}

enum hs_step hs_s3_multipart_begin(struct hs_op *op)
{
  if (op->kind == HS_OP_UPLOAD_PART)
    return hs_op_body_to_writer(op);
  return HS_STEP_BODY; /* XML bodies: the rows' HS_S3_BODY */
}

void hs_s3_multipart_end(struct hs_op *op)
{
  switch (op->kind) {
  case HS_OP_CREATE_UPLOAD:
    create_end(op);
    break;
  case HS_OP_UPLOAD_PART:
    hs_op_commit_writer(op);
    break;
  case HS_OP_UPLOAD_PART_COPY:
    part_copy_end(op);
    break;
  case HS_OP_COMPLETE_UPLOAD:
    complete_end(op);
    break;
  case HS_OP_ABORT_UPLOAD:
    abort_end(op);
    break;
  case HS_OP_LIST_PARTS:
    list_parts_end(op);
    break;
  default:
    hs_op_error(op, HS_ERR_INTERNAL);
  }
}
