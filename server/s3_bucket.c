/* SPDX-License-Identifier: MIT */
/* Service and bucket operations: ListBuckets, CreateBucket, HeadBucket,
 * DeleteBucket, GetBucketLocation, GetBucketVersioning, DeleteObjects,
 * ListMultipartUploads; listing objects is in s3_list.c. */
#include <stdlib.h>
#include <string.h>

#include "s3_internal.h"
#include "s3_xml.h"
#include "xml.h"

#define S3_NS "http://s3.amazonaws.com/doc/2006-03-01/"
#define OWNER "<Owner><ID>hipobj</ID><DisplayName>hipobj</DisplayName></Owner>"

static void put_text(struct hs_buf *b, const char *tag, const char *s)
{
  hs_buf_printf(b, "<%s>", tag);
  hs_xml_escape(b, s, strlen(s));
  hs_buf_printf(b, "</%s>", tag);
}

void hs_s3_list_buckets(struct hs_op *op)
{
  struct hs_bucket_entry *l = NULL;
  size_t n = 0;
  enum hs_err err = hs_store_bucket_list(op->srv->store, &l, &n);
  if (err) {
    hs_op_error(op, err);
    return;
  }
  hs_op_xml_begin(op, 200);
  struct hs_buf *b = &op->resp.body;
  hs_buf_puts(b, "<ListAllMyBucketsResult xmlns=\"" S3_NS "\">" OWNER
                 "<Buckets>");
  for (size_t i = 0; i < n; i++) {
    char date[32];
    hs_time_iso8601(l[i].ctime, date);
    hs_buf_puts(b, "<Bucket>");
    put_text(b, "Name", l[i].name);
    hs_buf_printf(b, "<CreationDate>%s</CreationDate></Bucket>", date);
  }
  hs_buf_puts(b, "</Buckets></ListAllMyBucketsResult>\n");
  free(l);
}

static void create_bucket(struct hs_op *op)
{
  enum hs_err err = hs_parse_create_bucket(hs_buf_cstr(&op->body),
                                           op->body.len);
  if (!err)
    err = hs_store_bucket_create(op->srv->store, op->bucket);
  /* us-east-1's legacy rule: creating a bucket you own again succeeds
   * (every bucket here is the one owner's); other regions answer 409 */
  if (err == HS_ERR_BUCKET_EXISTS &&
      strcmp(op->srv->cfg->auth.region, "us-east-1") == 0)
    err = HS_OK;
  if (err) {
    hs_op_error(op, err);
    return;
  }
  hs_resp_headerf(&op->resp, "Location", "/%s", op->bucket);
  op->done = true;
}

static void simple(struct hs_op *op, enum hs_err err, unsigned status)
{
  if (err) {
    hs_op_error(op, err);
    return;
  }
  op->resp.status = status;
  op->done = true;
}

static void location(struct hs_op *op)
{
  enum hs_err err = hs_store_bucket_head(op->srv->store, op->bucket);
  if (err) {
    hs_op_error(op, err);
    return;
  }
  hs_op_xml_begin(op, 200);
  const char *region = op->srv->cfg->auth.region;
  /* us-east-1 is written as an empty constraint, as S3 does */
  if (strcmp(region, "us-east-1") == 0)
    region = "";
  hs_buf_puts(&op->resp.body, "<LocationConstraint xmlns=\"" S3_NS "\">");
  hs_xml_escape(&op->resp.body, region, strlen(region));
  hs_buf_puts(&op->resp.body, "</LocationConstraint>\n");
}

static void versioning(struct hs_op *op)
{
  enum hs_err err = hs_store_bucket_head(op->srv->store, op->bucket);
  if (err) {
    hs_op_error(op, err);
    return;
  }
  hs_op_xml_begin(op, 200);
  hs_buf_puts(&op->resp.body,
              "<VersioningConfiguration xmlns=\"" S3_NS "\"/>\n");
}

static void delete_objects(struct hs_op *op)
{
  struct hs_delete_list l;
  enum hs_err err = hs_store_bucket_head(op->srv->store, op->bucket);
  if (!err)
    err = hs_parse_delete(hs_buf_cstr(&op->body), op->body.len, &l);
  if (err) {
    hs_op_error(op, err);
    return;
  }
  hs_op_xml_begin(op, 200);
  struct hs_buf *b = &op->resp.body;
  hs_buf_puts(b, "<DeleteResult xmlns=\"" S3_NS "\">");
  for (size_t i = 0; i < l.n; i++) {
    /* buckets are never versioned: an object's one version is "null" */
    const struct hs_delete_cond *dc = &l.conds[i];
    struct hs_cond c = {.if_match = dc->etag,
                        .has_size = dc->has_size,
                        .size = dc->size,
                        .has_mtime = dc->has_mtime,
                        .mtime = dc->mtime};
    bool any = dc->etag || dc->has_size || dc->has_mtime;
    err = l.versions[i] == HS_DEL_OTHER_VERSION
              ? HS_ERR_NO_VERSION
              : hs_store_delete_if(op->srv->store, op->bucket, l.keys[i],
                                   any ? &c : NULL);
    if (!err && l.quiet)
      continue;
    hs_buf_puts(b, err ? "<Error>" : "<Deleted>");
    put_text(b, "Key", l.keys[i]);
    if (!err && l.versions[i] == HS_DEL_NULL_VERSION)
      put_text(b, "VersionId", "null");
    if (err) {
      put_text(b, "Code", hs_err_code(err));
      put_text(b, "Message", hs_err_message(err));
    }
    hs_buf_puts(b, err ? "</Error>" : "</Deleted>");
  }
  hs_buf_puts(b, "</DeleteResult>\n");
  hs_delete_list_free(&l);
}

/* ---- ACLs: what the one-owner model honours ------------------------------ */

/* The bucket, or the object when the request names a key. */
static enum hs_err acl_target(struct hs_op *op)
{
  struct hs_obj_info info;
  return op->key_len ? hs_store_get(op->srv->store, op->bucket, op->key,
                                    &info, NULL)
                     : hs_store_bucket_head(op->srv->store, op->bucket);
}

/* GetBucketAcl, GetObjectAcl: the owner (whom every credential is) has
 * full control, nobody else any access: what this server does. */
static void get_acl(struct hs_op *op)
{
  enum hs_err err = acl_target(op);
  if (err) {
    hs_op_error(op, err);
    return;
  }
  hs_op_xml_begin(op, 200);
  hs_buf_puts(&op->resp.body,
              "<AccessControlPolicy xmlns=\"" S3_NS "\">" OWNER
              "<AccessControlList><Grant><Grantee xmlns:xsi=\"http://www.w3."
              "org/2001/XMLSchema-instance\" xsi:type=\"CanonicalUser\">"
              "<ID>hipobj</ID><DisplayName>hipobj</DisplayName></Grantee>"
              "<Permission>FULL_CONTROL</Permission></Grant>"
              "</AccessControlList></AccessControlPolicy>\n");
}

/* PutBucketAcl, PutObjectAcl: a canned ACL the model honours (the others
 * and x-amz-grant-* are refused before, hs_s3_unsupported_header); an ACL
 * document, begin refuses. Nothing changes. */
static void put_acl(struct hs_op *op)
{
  enum hs_err err = acl_target(op);
  if (err) {
    hs_op_error(op, err);
    return;
  }
  op->resp.status = 200;
  op->done = true;
}

static void list_uploads(struct hs_op *op)
{
  struct hs_upload_entry *l = NULL;
  size_t n = 0;
  enum hs_err err = hs_store_upload_list(op->srv->store, op->bucket, &l, &n);
  if (err) {
    hs_op_error(op, err);
    return;
  }
  const struct hs_param *pp = hs_query_get(&op->query, "prefix");
  const char *prefix = pp ? pp->value : "";
  hs_op_xml_begin(op, 200);
  struct hs_buf *b = &op->resp.body;
  hs_buf_puts(b, "<ListMultipartUploadsResult xmlns=\"" S3_NS "\">");
  put_text(b, "Bucket", op->bucket);
  hs_buf_puts(b, "<KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker>");
  put_text(b, "Prefix", prefix);
  hs_buf_puts(b, "<MaxUploads>10000</MaxUploads><IsTruncated>false"
                 "</IsTruncated>");
  for (size_t i = 0; i < n; i++) {
    if (strncmp(l[i].key, prefix, strlen(prefix)) != 0)
      continue;
    char date[32];
    hs_time_iso8601(l[i].initiated, date);
    hs_buf_puts(b, "<Upload>");
    put_text(b, "Key", l[i].key);
    put_text(b, "UploadId", l[i].id);
    hs_buf_printf(b,
                  "<Initiator><ID>hipobj</ID><DisplayName>hipobj</DisplayName>"
                  "</Initiator>" OWNER "<StorageClass>STANDARD</StorageClass>"
                  "<Initiated>%s</Initiated></Upload>",
                  date);
  }
  hs_buf_puts(b, "</ListMultipartUploadsResult>\n");
  hs_upload_list_free(l, n);
}

enum hs_step hs_s3_bucket_begin(struct hs_op *op)
{
  if (op->kind == HS_OP_PUT_ACL &&
      (op->req.chunked || (op->req.has_length && op->req.content_length))) {
    hs_op_error_msg(op, HS_ERR_NOT_IMPLEMENTED,
                    "This server does not implement ACL documents: its one "
                    "owner has full control, nobody else any access; "
                    "x-amz-acl: private says so.");
    return HS_STEP_RESPOND;
  }
  return HS_STEP_BODY; /* XML bodies: the rows' HS_S3_BODY */
}

void hs_s3_bucket_end(struct hs_op *op)
{
  struct hs_store *st = op->srv->store;
  switch (op->kind) {
  case HS_OP_LIST_BUCKETS:
    hs_s3_list_buckets(op);
    break;
  case HS_OP_CREATE_BUCKET:
    create_bucket(op);
    break;
  case HS_OP_HEAD_BUCKET:
    simple(op, hs_store_bucket_head(st, op->bucket), 200);
    break;
  case HS_OP_DELETE_BUCKET:
    simple(op, hs_store_bucket_delete(st, op->bucket), 204);
    break;
  case HS_OP_LIST_OBJECTS:
    hs_s3_list_objects(op, false);
    break;
  case HS_OP_LIST_OBJECTS_V2:
    hs_s3_list_objects(op, true);
    break;
  case HS_OP_LIST_VERSIONS:
    hs_s3_list_versions(op);
    break;
  case HS_OP_GET_LOCATION:
    location(op);
    break;
  case HS_OP_GET_VERSIONING:
    versioning(op);
    break;
  case HS_OP_DELETE_OBJECTS:
    delete_objects(op);
    break;
  case HS_OP_LIST_UPLOADS:
    list_uploads(op);
    break;
  case HS_OP_GET_ACL:
    get_acl(op);
    break;
  case HS_OP_PUT_ACL:
    put_acl(op);
    break;
  default:
    hs_op_error(op, HS_ERR_NOT_IMPLEMENTED);
  }
}
