/* SPDX-License-Identifier: MIT */
/* Which S3 operation a request is, and the operations' rows (s3_ops.h).
 * Pure functions. */
#include <string.h>
#include <strings.h>

#include "s3_ops.h"

/* Query parameters that name a sub-resource (an operation of its own)
 * rather than modify one. */
static const char *const subresources[] = {
    "accelerate", "acl", "analytics", "attributes", "cors", "delete",
    "encryption", "intelligent-tiering", "inventory", "legal-hold",
    "lifecycle", "location", "logging", "metrics", "notification",
    "object-lock", "ownershipControls", "partNumber", "policy",
    "policyStatus", "publicAccessBlock", "replication", "requestPayment",
    "restore", "retention", "select", "session", "tagging", "torrent",
    "uploadId", "uploads", "versionId", "versioning", "versions", "website"};

static bool has(const struct hs_query *q, const char *name)
{
  return hs_query_get(q, name) != NULL;
}

/* Whether the query names a sub-resource other than those allowed. */
static bool other_subresource(const struct hs_query *q,
                              const char *const *allowed, size_t n)
{
  for (size_t i = 0; i < sizeof subresources / sizeof subresources[0]; i++) {
    if (!has(q, subresources[i]))
      continue;
    /* buckets are never versioned: "null" names an object's one version */
    if (strcmp(subresources[i], "versionId") == 0 &&
        strcmp(hs_query_get(q, "versionId")->value, "null") == 0)
      continue;
    bool ok = false;
    for (size_t k = 0; k < n; k++)
      ok = ok || strcmp(allowed[k], subresources[i]) == 0;
    if (!ok)
      return true;
  }
  return false;
}

static enum hs_s3_kind route_service(const char *m)
{
  return strcmp(m, "GET") == 0 ? HS_OP_LIST_BUCKETS : HS_OP_METHOD_NOT_ALLOWED;
}

/* ?acl alone: GetBucketAcl or GetObjectAcl, PutBucketAcl or PutObjectAcl
 * (HS_OP_NOT_FOUND: not an ACL request). */
static enum hs_s3_kind route_acl(const char *m, const struct hs_query *q)
{
  static const char *const acl[] = {"acl"};
  if (!has(q, "acl"))
    return HS_OP_NOT_FOUND;
  if (other_subresource(q, acl, 1))
    return HS_OP_NOT_IMPLEMENTED;
  return strcmp(m, "GET") == 0   ? HS_OP_GET_ACL
         : strcmp(m, "PUT") == 0 ? HS_OP_PUT_ACL
                                 : HS_OP_METHOD_NOT_ALLOWED;
}

static enum hs_s3_kind route_bucket(const char *m, const struct hs_query *q)
{
  static const char *const none[] = {NULL};
  enum hs_s3_kind acl = route_acl(m, q);
  if (acl != HS_OP_NOT_FOUND)
    return acl;
  if (strcmp(m, "GET") == 0) {
    static const char *const ok[] = {"location", "versioning", "uploads",
                                     "versions"};
    if (other_subresource(q, ok, 4))
      return HS_OP_NOT_IMPLEMENTED;
    if (has(q, "versions"))
      return HS_OP_LIST_VERSIONS;
    if (has(q, "location"))
      return HS_OP_GET_LOCATION;
    if (has(q, "versioning"))
      return HS_OP_GET_VERSIONING;
    if (has(q, "uploads"))
      return HS_OP_LIST_UPLOADS;
    const struct hs_param *lt = hs_query_get(q, "list-type");
    if (lt && strcmp(lt->value, "2") == 0)
      return HS_OP_LIST_OBJECTS_V2;
    return lt ? HS_OP_NOT_IMPLEMENTED : HS_OP_LIST_OBJECTS;
  }
  if (strcmp(m, "HEAD") == 0)
    return HS_OP_HEAD_BUCKET;
  if (strcmp(m, "PUT") == 0)
    return other_subresource(q, none, 0) ? HS_OP_NOT_IMPLEMENTED
                                         : HS_OP_CREATE_BUCKET;
  if (strcmp(m, "DELETE") == 0)
    return other_subresource(q, none, 0) ? HS_OP_NOT_IMPLEMENTED
                                         : HS_OP_DELETE_BUCKET;
  if (strcmp(m, "POST") == 0) {
    static const char *const ok[] = {"delete"};
    if (has(q, "delete") && !other_subresource(q, ok, 1))
      return HS_OP_DELETE_OBJECTS;
    return HS_OP_NOT_IMPLEMENTED; /* browser-form uploads */
  }
  return HS_OP_METHOD_NOT_ALLOWED;
}

static enum hs_s3_kind route_object(const char *m, const struct hs_query *q,
                                    bool copy_source)
{
  static const char *const upload[] = {"uploadId", "partNumber"};
  static const char *const part[] = {"partNumber"};
  bool upload_id = has(q, "uploadId");
  enum hs_s3_kind acl = route_acl(m, q);
  if (acl != HS_OP_NOT_FOUND)
    return acl;
  if (has(q, "tagging")) {
    static const char *const tagging[] = {"tagging"};
    if (other_subresource(q, tagging, 1))
      return HS_OP_NOT_IMPLEMENTED;
    return strcmp(m, "GET") == 0      ? HS_OP_GET_OBJECT_TAGGING
           : strcmp(m, "PUT") == 0    ? HS_OP_PUT_OBJECT_TAGGING
           : strcmp(m, "DELETE") == 0 ? HS_OP_DELETE_OBJECT_TAGGING
                                      : HS_OP_METHOD_NOT_ALLOWED;
  }
  if (strcmp(m, "GET") == 0 && has(q, "attributes")) {
    static const char *const attributes[] = {"attributes"};
    return other_subresource(q, attributes, 1) ? HS_OP_NOT_IMPLEMENTED
                                               : HS_OP_GET_OBJECT_ATTRIBUTES;
  }
  if (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0) {
    /* partNumber alone: GetObject or HeadObject of one part */
    if (other_subresource(q, upload_id ? upload : part, 1))
      return HS_OP_NOT_IMPLEMENTED;
    if (upload_id)
      return strcmp(m, "GET") == 0 ? HS_OP_LIST_PARTS
                                   : HS_OP_METHOD_NOT_ALLOWED;
    return strcmp(m, "GET") == 0 ? HS_OP_GET_OBJECT : HS_OP_HEAD_OBJECT;
  }
  if (strcmp(m, "PUT") == 0) {
    if (upload_id && has(q, "partNumber") && !other_subresource(q, upload, 2))
      return copy_source ? HS_OP_UPLOAD_PART_COPY : HS_OP_UPLOAD_PART;
    if (other_subresource(q, upload, 0))
      return HS_OP_NOT_IMPLEMENTED;
    return copy_source ? HS_OP_COPY_OBJECT : HS_OP_PUT_OBJECT;
  }
  if (strcmp(m, "POST") == 0) {
    static const char *const ok[] = {"uploads", "uploadId"};
    if (other_subresource(q, ok, 2))
      return HS_OP_NOT_IMPLEMENTED;
    if (has(q, "uploads") && !upload_id)
      return HS_OP_CREATE_UPLOAD;
    if (upload_id && !has(q, "uploads"))
      return HS_OP_COMPLETE_UPLOAD;
    return HS_OP_METHOD_NOT_ALLOWED;
  }
  if (strcmp(m, "DELETE") == 0) {
    if (other_subresource(q, upload, upload_id ? 1 : 0))
      return HS_OP_NOT_IMPLEMENTED;
    return upload_id ? HS_OP_ABORT_UPLOAD : HS_OP_DELETE_OBJECT;
  }
  return HS_OP_METHOD_NOT_ALLOWED;
}

enum hs_s3_kind hs_s3_route(const char *method, bool has_bucket, bool has_key,
                            const struct hs_query *q, bool copy_source)
{
  if (!has_bucket)
    return has_key ? HS_OP_METHOD_NOT_ALLOWED : route_service(method);
  if (!has_key)
    return route_bucket(method, q);
  return route_object(method, q, copy_source);
}

#define ADMIN_PREFIX "/_hipobj/"

enum hs_s3_kind hs_admin_route(const char *method, const char *path,
                               size_t len)
{
  size_t pl = strlen(ADMIN_PREFIX);
  if (len < pl || memcmp(path, ADMIN_PREFIX, pl) != 0)
    return HS_OP_NOT_FOUND;
  const char *rest = path + pl;
  size_t rl = len - pl;
  const char *q = memchr(rest, '?', rl);
  if (q)
    rl = (size_t)(q - rest);
  bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
  if (rl == 5 && memcmp(rest, "stats", 5) == 0)
    return get ? HS_OP_ADMIN_STATS : HS_OP_METHOD_NOT_ALLOWED;
  if (rl == 6 && memcmp(rest, "health", 6) == 0)
    return get ? HS_OP_ADMIN_HEALTH : HS_OP_METHOD_NOT_ALLOWED;
  return HS_OP_NOT_IMPLEMENTED; /* an unknown admin resource: 404 */
}

const struct hs_s3_op hs_s3_ops[HS_OP__COUNT] = {
#define HS_S3_ROW(kind, name, flags, begin, end) {name, flags},
    HS_S3_OPS(HS_S3_ROW)
#undef HS_S3_ROW
};

const char *hs_s3_kind_name(enum hs_s3_kind k)
{
  return (unsigned)k < HS_OP__COUNT ? hs_s3_ops[k].name : "-";
}

bool hs_s3_token_route(enum hs_s3_kind k)
{
  return (unsigned)k < HS_OP__COUNT &&
         (hs_s3_ops[k].flags & HS_S3_PAYLOAD) != 0;
}

/* Headers that ask for what this server does not do. A value in `allowed`
 * asks for what it does anyway. */
static const struct {
  const char *prefix;
  const char *allowed[3];
} unsupported[] = {
    {"x-amz-server-side-encryption", {NULL}}, /* SSE-S3, SSE-KMS, SSE-C */
    {"x-amz-copy-source-server-side-encryption", {NULL}},
    /* the canned ACLs this server's one owner model honours: the owner
     * (every credential is it) has full control, nobody else has access */
    {"x-amz-acl", {"private", "bucket-owner-full-control",
                   "bucket-owner-read"}},
    {"x-amz-grant-", {NULL}},
    {"x-amz-object-lock-", {NULL}},
    {"x-amz-bucket-object-lock-", {NULL}},
    {"x-amz-website-redirect-location", {NULL}},
    {"x-amz-storage-class", {"STANDARD", "REDUCED_REDUNDANCY"}},
};

const char *hs_s3_unsupported_header(const struct hs_headers *h)
{
  for (size_t i = 0; i < h->n; i++) {
    const char *name = h->v[i].name, *value = h->v[i].value;
    for (size_t k = 0; k < sizeof unsupported / sizeof unsupported[0]; k++) {
      const char *p = unsupported[k].prefix;
      if (strncasecmp(name, p, strlen(p)) != 0)
        continue;
      const char *const *ok = unsupported[k].allowed;
      bool fine = false;
      for (size_t j = 0; j < 3 && ok[j]; j++)
        fine = fine || strcmp(value, ok[j]) == 0;
      if (!fine)
        return name;
    }
  }
  return NULL;
}
