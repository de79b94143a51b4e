/* SPDX-License-Identifier: MIT */
/* The S3 operations both servers know, one row each (the shape of curl's
 * struct Curl_scheme), and the router that tells which one a request is
 * (s3_route.c, pure):
 *
 *   X(KIND, "Name", flags, begin, end)
 *
 * KIND is HS_OP_KIND; "Name" is the operation's name in the request log;
 * flags say what the servers do with it besides its handler:
 *   HS_S3_PAYLOAD  a token (x-amz-rdma-token) may carry its payload: the
 *                  RDMA path of both servers
 *   HS_S3_BODY     its request body is an XML document, buffered up to
 *                  --max-xml-size before the handler's end
 *   HS_S3_ADMIN    a /_hipobj/ resource of the server itself (admin.c)
 * begin and end are the test server's handlers (server/s3_internal.h):
 * only its expansion names them. Adding an operation is a row here, its
 * route in s3_route.c and its handler. The last three rows are the
 * router's other answers. */
#ifndef HS_S3_OPS_H
#define HS_S3_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include "headers.h"
#include "uri.h"

#define HS_S3_PAYLOAD 1u
#define HS_S3_BODY 2u
#define HS_S3_ADMIN 4u

#define HS_S3_OPS(X)                                                          \
  X(LIST_BUCKETS, "ListBuckets", 0, hs_s3_bucket_begin, hs_s3_bucket_end)     \
  X(CREATE_BUCKET, "CreateBucket", HS_S3_BODY, hs_s3_bucket_begin,            \
    hs_s3_bucket_end)                                                         \
  X(DELETE_BUCKET, "DeleteBucket", 0, hs_s3_bucket_begin, hs_s3_bucket_end)   \
  X(HEAD_BUCKET, "HeadBucket", 0, hs_s3_bucket_begin, hs_s3_bucket_end)       \
  X(LIST_OBJECTS, "ListObjects", 0, hs_s3_bucket_begin, hs_s3_bucket_end)     \
  X(LIST_OBJECTS_V2, "ListObjectsV2", 0, hs_s3_bucket_begin,                  \
    hs_s3_bucket_end)                                                         \
  X(GET_LOCATION, "GetBucketLocation", 0, hs_s3_bucket_begin,                 \
    hs_s3_bucket_end)                                                         \
  X(GET_VERSIONING, "GetBucketVersioning", 0, hs_s3_bucket_begin,             \
    hs_s3_bucket_end)                                                         \
  X(LIST_UPLOADS, "ListMultipartUploads", 0, hs_s3_bucket_begin,              \
    hs_s3_bucket_end)                                                         \
  X(DELETE_OBJECTS, "DeleteObjects", HS_S3_BODY, hs_s3_bucket_begin,          \
    hs_s3_bucket_end)                                                         \
  X(PUT_OBJECT, "PutObject", HS_S3_PAYLOAD, hs_s3_object_begin,               \
    hs_s3_object_end)                                                         \
  X(COPY_OBJECT, "CopyObject", 0, hs_s3_object_begin, hs_s3_object_end)       \
  X(GET_OBJECT, "GetObject", HS_S3_PAYLOAD, hs_s3_object_begin,               \
    hs_s3_object_end)                                                         \
  X(HEAD_OBJECT, "HeadObject", 0, hs_s3_object_begin, hs_s3_object_end)       \
  X(DELETE_OBJECT, "DeleteObject", 0, hs_s3_object_begin, hs_s3_object_end)   \
  X(CREATE_UPLOAD, "CreateMultipartUpload", 0, hs_s3_multipart_begin,         \
    hs_s3_multipart_end)                                                      \
  X(UPLOAD_PART, "UploadPart", HS_S3_PAYLOAD, hs_s3_multipart_begin,          \
    hs_s3_multipart_end)                                                      \
  X(COMPLETE_UPLOAD, "CompleteMultipartUpload", HS_S3_BODY,                   \
    hs_s3_multipart_begin, hs_s3_multipart_end)                               \
  X(ABORT_UPLOAD, "AbortMultipartUpload", 0, hs_s3_multipart_begin,           \
    hs_s3_multipart_end)                                                      \
  X(LIST_PARTS, "ListParts", 0, hs_s3_multipart_begin, hs_s3_multipart_end)   \
  X(UPLOAD_PART_COPY, "UploadPartCopy", 0, hs_s3_multipart_begin,             \
    hs_s3_multipart_end)                                                      \
  X(GET_OBJECT_TAGGING, "GetObjectTagging", 0, hs_s3_object_begin,            \
    hs_s3_object_end)                                                         \
  X(LIST_VERSIONS, "ListObjectVersions", 0, hs_s3_bucket_begin,               \
    hs_s3_bucket_end)                                                         \
  X(PUT_OBJECT_TAGGING, "PutObjectTagging", HS_S3_BODY, hs_s3_object_begin,   \
    hs_s3_object_end)                                                         \
  X(DELETE_OBJECT_TAGGING, "DeleteObjectTagging", 0, hs_s3_object_begin,      \
    hs_s3_object_end)                                                         \
  X(GET_OBJECT_ATTRIBUTES, "GetObjectAttributes", 0, hs_s3_object_begin,      \
    hs_s3_object_end)                                                         \
  X(GET_ACL, "GetAcl", 0, hs_s3_bucket_begin, hs_s3_bucket_end)               \
  X(PUT_ACL, "PutAcl", 0, hs_s3_bucket_begin, hs_s3_bucket_end)               \
  X(ADMIN_STATS, "AdminStats", HS_S3_ADMIN, hs_s3_bucket_begin,               \
    hs_s3_bucket_end)                                                         \
  X(ADMIN_HEALTH, "AdminHealth", HS_S3_ADMIN, hs_s3_bucket_begin,             \
    hs_s3_bucket_end)                                                         \
  X(NOT_FOUND, "-", 0, hs_s3_bucket_begin, hs_s3_bucket_end)                  \
  X(NOT_IMPLEMENTED, "NotImplemented", 0, hs_s3_bucket_begin,                 \
    hs_s3_bucket_end)                                                         \
  X(METHOD_NOT_ALLOWED, "MethodNotAllowed", 0, hs_s3_bucket_begin,            \
    hs_s3_bucket_end)

enum hs_s3_kind {
#define HS_S3_KIND(kind, name, flags, begin, end) HS_OP_##kind,
  HS_S3_OPS(HS_S3_KIND)
#undef HS_S3_KIND
  HS_OP__COUNT
};

struct hs_s3_op {
  const char *name;
  unsigned flags;
};

/* The rows' names and flags, by kind. */
extern const struct hs_s3_op hs_s3_ops[HS_OP__COUNT];

/* Which operation a request is: a pure function of the method, whether a
 * bucket and a key are present, the query and whether x-amz-copy-source is
 * present. Admin paths are decided before (hs_admin_route). */
enum hs_s3_kind hs_s3_route(const char *method, bool has_bucket, bool has_key,
                            const struct hs_query *q, bool copy_source);
/* A /_hipobj/ path: ADMIN_STATS, ADMIN_HEALTH, METHOD_NOT_ALLOWED (not
 * GET or HEAD), NOT_IMPLEMENTED (an unknown admin resource: 404), or
 * NOT_FOUND (not an admin path: an S3 request). */
enum hs_s3_kind hs_admin_route(const char *method, const char *path,
                               size_t len);
/* The row's name; "-" for no operation. */
const char *hs_s3_kind_name(enum hs_s3_kind k);
/* GetObject, PutObject, UploadPart (HS_S3_PAYLOAD): the routes whose
 * payload a token may carry (elsewhere a token header is ignored, and a
 * body is signed). */
bool hs_s3_token_route(enum hs_s3_kind k);
/* The first request header that asks for a feature this server does not
 * have (SSE of any kind, a canned ACL it cannot honour, grants, object
 * lock, website redirects, a storage class other than STANDARD or
 * REDUCED_REDUNDANCY), or NULL. Such a request gets 501 NotImplemented
 * rather than being carried out without what it asked for. */
const char *hs_s3_unsupported_header(const struct hs_headers *h);

#endif
