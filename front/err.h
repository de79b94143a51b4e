/* SPDX-License-Identifier: MIT */
/* The test server's one error model. Every internal function that can fail
 * returns an enum hs_err; s3_error.c maps each value once to an S3 error
 * code, an HTTP status and a message. */
#ifndef HS_ERR_H
#define HS_ERR_H

enum hs_err {
  HS_OK = 0,
  HS_ERR_NOMEM,
  HS_ERR_IO,
  HS_ERR_INTERNAL,
  HS_ERR_INVALID_URI,
  HS_ERR_INVALID_ARGUMENT,
  HS_ERR_INVALID_BUCKET_NAME,
  HS_ERR_KEY_TOO_LONG,
  HS_ERR_NO_BUCKET,
  HS_ERR_NO_KEY,
  HS_ERR_BUCKET_EXISTS,
  HS_ERR_BUCKET_NOT_EMPTY,
  HS_ERR_NO_UPLOAD,
  HS_ERR_INVALID_PART,
  HS_ERR_INVALID_PART_ORDER,
  HS_ERR_ENTITY_TOO_SMALL,
  HS_ERR_ENTITY_TOO_LARGE,
  HS_ERR_HEADERS_TOO_LARGE,
  HS_ERR_INVALID_RANGE,
  HS_ERR_MALFORMED_XML,
  HS_ERR_BAD_DIGEST,
  HS_ERR_INVALID_DIGEST,
  HS_ERR_SHA256_MISMATCH,
  HS_ERR_INCOMPLETE_BODY,
  HS_ERR_MISSING_LENGTH,
  HS_ERR_PRECONDITION,
  HS_ERR_NOT_MODIFIED,
  HS_ERR_ACCESS_DENIED,
  HS_ERR_SIGNATURE,
  HS_ERR_UNKNOWN_ACCESS_KEY,
  HS_ERR_AUTH_HEADER,
  HS_ERR_TIME_SKEWED,
  HS_ERR_EXPIRED,
  HS_ERR_METHOD_NOT_ALLOWED,
  HS_ERR_NOT_IMPLEMENTED,
  HS_ERR_RDMA_TOKEN,
  HS_ERR_RDMA_DECLINED,
  HS_ERR_RDMA_UNSERVABLE,
  HS_ERR_RDMA_FAILED,
  HS_ERR_TOO_MANY,
  HS_ERR_SLOW_DOWN,
  HS_ERR_STORE_FULL,
  HS_ERR_INVALID_REQUEST,
  HS_ERR_AUTH_QUERY,
  HS_ERR_NO_VERSION,
  HS_ERR_UNAVAILABLE, /* a server behind this one cannot be reached */
  HS_ERR_INVALID_TAG,
  HS_ERR__COUNT
};

struct hs_buf;
/* The S3 error of each code (s3_error.c: the one table). */
unsigned hs_err_status(enum hs_err err);
const char *hs_err_code(enum hs_err err);
const char *hs_err_message(enum hs_err err);
/* Where an error happened, for its document; every field optional. */
struct hs_err_where {
  const char *bucket;   /* BucketName, if set and not empty */
  const char *key;      /* Key, key_len bytes */
  size_t key_len;
  const char *resource; /* Resource, resource_len bytes */
  size_t resource_len;
  const char *request_id;
};
/* The S3 error document: Code, Message (message, or the code's own), then
 * what `where` has, and RequestId. */
void hs_err_xml(struct hs_buf *b, enum hs_err err, const char *message,
                const struct hs_err_where *where);

#endif
