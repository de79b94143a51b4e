/* SPDX-License-Identifier: MIT */
/* The S3 request bodies the server reads: CompleteMultipartUpload and
 * Delete (DeleteObjects), and CreateBucketConfiguration (checked only).
 * Pure functions over hs_xml; outputs written only on success. */
#ifndef HS_S3_XML_H
#define HS_S3_XML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "s3_limits.h"

#define HS_MAX_DELETE 1000

/* <CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"..."</ETag>
 * </Part>...</CompleteMultipartUpload>: at least one part, at most
 * HS_MAX_PARTS, each with one PartNumber (1..10000, decimal) and one ETag
 * (hs_etag_normalize). Order is not checked here. *parts is malloc()ed.
 * Errors: HS_ERR_MALFORMED_XML, HS_ERR_NOMEM. */
enum hs_err hs_parse_complete(const char *body, size_t len,
                              struct hs_part_ref **parts, size_t *n);

enum hs_delete_version {
  HS_DEL_CURRENT,      /* no VersionId */
  HS_DEL_NULL_VERSION, /* VersionId null: an unversioned object's */
  HS_DEL_OTHER_VERSION /* another: there is none such here */
};

/* An object's conditions in DeleteObjects (S3's conditional deletes). */
struct hs_delete_cond {
  bool has_size, has_mtime;
  char *etag; /* malloc()ed; NULL: none */
  uint64_t size;
  int64_t mtime;
};

struct hs_delete_list {
  char **keys; /* n keys, each malloc()ed, NUL-terminated */
  enum hs_delete_version *versions; /* n */
  struct hs_delete_cond *conds;     /* n */
  size_t n;
  bool quiet;
};

/* <Delete><Quiet>true</Quiet><Object><Key>k</Key>[<VersionId>v</VersionId>]
 * [<ETag>e</ETag>][<LastModifiedTime>ISO 8601</LastModifiedTime>]
 * [<Size>n</Size>]</Object>...</Delete>: 1..HS_MAX_DELETE objects, keys
 * 1..1024 bytes without NUL. */
enum hs_err hs_parse_delete(const char *body, size_t len,
                            struct hs_delete_list *out);
void hs_delete_list_free(struct hs_delete_list *l);

/* An empty body or a well-formed CreateBucketConfiguration. */
enum hs_err hs_parse_create_bucket(const char *body, size_t len);

/* Object tags: at most HS_MAX_TAGS, each key 1..128 and value 0..256
 * characters of UTF-8 without control characters, keys unique; written as
 * "key\tvalue\n" lines in the order given, *out malloc()ed. From
 * PutObjectTagging's <Tagging><TagSet><Tag><Key/><Value/></Tag>...
 * </TagSet></Tagging>, or the x-amz-tagging header ("k=v&k2=v2",
 * URL-encoded). Errors: HS_ERR_MALFORMED_XML, HS_ERR_INVALID_TAG (its
 * message in *msg), HS_ERR_NOMEM. */
#define HS_MAX_TAGS 10
enum hs_err hs_parse_tagging(const char *body, size_t len, char **out,
                             const char **msg);
enum hs_err hs_parse_tagging_header(const char *v, char **out,
                                    const char **msg);

#endif
