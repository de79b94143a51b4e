/* SPDX-License-Identifier: MIT */
/* S3's limits on names and parts, and a reference to one part: what the
 * request parsers (uri.c, s3_xml.c) and the store (store/) both need, kept
 * below both so that neither includes the other. */
#ifndef HS_S3_LIMITS_H
#define HS_S3_LIMITS_H

#include "etag.h"

#define HS_BUCKET_MAX 63   /* bytes of a bucket name */
#define HS_KEY_MAX 1024    /* bytes of a key, decoded */
#define HS_MAX_PARTS 10000 /* parts of a multipart upload */

/* One part of CompleteMultipartUpload. */
struct hs_part_ref {
  unsigned number; /* 1..HS_MAX_PARTS */
  char etag[HS_ETAG_MAX];
};

#endif
