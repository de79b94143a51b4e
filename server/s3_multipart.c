/* SPDX-License-Identifier: MIT */
/* Multipart uploads: CreateMultipartUpload, UploadPart,
 * CompleteMultipartUpload, AbortMultipartUpload, ListParts. */
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
static enum hs_err part_number(struct hs_op *op)
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
  enum hs_err err = part_number(op);
  return err ? err : upload_id(op);
}

static void create_end(struct hs_op *op)
{
  struct hs_obj_attrs attrs;
  char id[HS_UPLOAD_ID_LEN + 1];
  enum hs_err err = hs_op_attrs(op, &attrs);
  if (!err)
    err = hs_store_upload_create(op->srv->store, op->bucket, op->key, &attrs,
                                 id);
  if (err) {
    hs_op_error(op, err == HS_ERR_TOO_MANY ? HS_ERR_SLOW_DOWN : err);
    return;
  }
  hs_op_xml_begin(op, 200);
  struct hs_buf *b = &op->resp.body;
  hs_buf_puts(b, "<InitiateMultipartUploadResult xmlns=\"" S3_NS "\">");
  put_text(b, "Bucket", op->bucket);
  put_text(b, "Key", op->key);
  put_text(b, "UploadId", id);
  hs_buf_puts(b, "</InitiateMultipartUploadResult>\n");
}

static void complete_end(struct hs_op *op)
{
  struct hs_part_ref *parts = NULL;
  size_t n = 0;
  struct hs_obj_info info;
  enum hs_err err = upload_id(op);
  if (!err)
    err = hs_parse_complete(hs_buf_cstr(&op->body), op->body.len, &parts, &n);
  if (!err)
    err = hs_store_upload_complete(op->srv->store, op->bucket, op->key,
                                   op->upload_id, parts, n, &info);
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
  hs_buf_puts(b, "</CompleteMultipartUploadResult>\n");
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
                  "</Size></Part>",
                  l[i].number, date, l[i].etag, (unsigned long long)l[i].size);
  }
  hs_buf_puts(b, "</ListPartsResult>\n");
  free(l);
}

enum hs_step hs_s3_multipart_begin(struct hs_op *op)
{
  switch (op->kind) {
  case HS_OP_UPLOAD_PART:
    return hs_op_body_to_writer(op);
  case HS_OP_COMPLETE_UPLOAD:
    op->body_mode = HS_BODY_BUFFER;
    op->body_limit = op->srv->cfg->max_xml_size;
    return HS_STEP_BODY;
  default:
    return HS_STEP_BODY;
  }
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
