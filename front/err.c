/* SPDX-License-Identifier: MIT */
/* The one table from enum hs_err to an S3 error: status, code, message. */
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "buf.h"
#include "xml.h"

struct err_row {
  unsigned status;
  const char *code;
  const char *message;
};

static const struct err_row rows[HS_ERR__COUNT] = {
    [HS_OK] = {200, "OK", "OK"},
    [HS_ERR_NOMEM] = {503, "SlowDown",
                      "The server is out of memory; reduce your request rate."},
    [HS_ERR_IO] = {500, "InternalError",
                   "The server could not read or write its storage."},
    [HS_ERR_INTERNAL] = {500, "InternalError",
                         "We encountered an internal error. Please try again."},
    [HS_ERR_INVALID_URI] = {400, "InvalidURI",
                            "Couldn't parse the specified URI."},
    [HS_ERR_INVALID_ARGUMENT] = {400, "InvalidArgument", "Invalid Argument"},
    [HS_ERR_INVALID_BUCKET_NAME] = {400, "InvalidBucketName",
                                    "The specified bucket is not valid."},
    [HS_ERR_KEY_TOO_LONG] = {400, "KeyTooLongError", "Your key is too long."},
    [HS_ERR_NO_BUCKET] = {404, "NoSuchBucket",
                          "The specified bucket does not exist."},
    [HS_ERR_NO_KEY] = {404, "NoSuchKey", "The specified key does not exist."},
    [HS_ERR_BUCKET_EXISTS] = {409, "BucketAlreadyOwnedByYou",
                              "Your previous request to create the named "
                              "bucket succeeded and you already own it."},
    [HS_ERR_BUCKET_NOT_EMPTY] = {409, "BucketNotEmpty",
                                 "The bucket you tried to delete is not "
                                 "empty."},
    [HS_ERR_NO_UPLOAD] = {404, "NoSuchUpload",
                          "The specified multipart upload does not exist. "
                          "The upload ID might be invalid, or the multipart "
                          "upload might have been aborted or completed."},
    [HS_ERR_INVALID_PART] = {400, "InvalidPart",
                             "One or more of the specified parts could not be "
                             "found. The part might not have been uploaded, "
                             "or the specified entity tag might not have "
                             "matched the part's entity tag."},
    [HS_ERR_INVALID_PART_ORDER] = {400, "InvalidPartOrder",
                                   "The list of parts was not in ascending "
                                   "order. The parts list must be specified "
                                   "in order by part number."},
    [HS_ERR_ENTITY_TOO_SMALL] = {400, "EntityTooSmall",
                                 "Your proposed upload is smaller than the "
                                 "minimum allowed object size."},
    [HS_ERR_ENTITY_TOO_LARGE] = {413, "EntityTooLarge",
                                 "Your proposed upload exceeds the maximum "
                                 "allowed object size."},
    [HS_ERR_HEADERS_TOO_LARGE] = {431, "RequestHeaderSectionTooLarge",
                                  "Your request header section exceeds the "
                                  "maximum allowed size."},
    [HS_ERR_INVALID_RANGE] = {416, "InvalidRange",
                              "The requested range is not satisfiable"},
    [HS_ERR_MALFORMED_XML] = {400, "MalformedXML",
                              "The XML you provided was not well-formed or "
                              "did not validate against our published "
                              "schema."},
    [HS_ERR_BAD_DIGEST] = {400, "BadDigest",
                           "The Content-MD5 you specified did not match what "
                           "we received."},
    [HS_ERR_INVALID_DIGEST] = {400, "InvalidDigest",
                               "The Content-MD5 you specified is not valid."},
    [HS_ERR_SHA256_MISMATCH] = {400, "XAmzContentSHA256Mismatch",
                                "The provided 'x-amz-content-sha256' header "
                                "does not match what was computed."},
    [HS_ERR_INCOMPLETE_BODY] = {400, "IncompleteBody",
                                "You did not provide the number of bytes "
                                "specified by the Content-Length HTTP "
                                "header."},
    [HS_ERR_MISSING_LENGTH] = {411, "MissingContentLength",
                               "You must provide the Content-Length HTTP "
                               "header."},
    [HS_ERR_PRECONDITION] = {412, "PreconditionFailed",
                             "At least one of the preconditions you "
                             "specified did not hold."},
    [HS_ERR_NOT_MODIFIED] = {304, "NotModified", "Not Modified"},
    [HS_ERR_ACCESS_DENIED] = {403, "AccessDenied", "Access Denied"},
    [HS_ERR_SIGNATURE] = {403, "SignatureDoesNotMatch",
                          "The request signature we calculated does not "
                          "match the signature you provided. Check your key "
                          "and signing method."},
    [HS_ERR_UNKNOWN_ACCESS_KEY] = {403, "InvalidAccessKeyId",
                                   "The AWS Access Key Id you provided does "
                                   "not exist in our records."},
    [HS_ERR_AUTH_HEADER] = {400, "AuthorizationHeaderMalformed",
                            "The authorization header or query parameters "
                            "are malformed."},
    [HS_ERR_TIME_SKEWED] = {403, "RequestTimeTooSkewed",
                            "The difference between the request time and "
                            "the server's time is too large."},
    [HS_ERR_EXPIRED] = {403, "AccessDenied", "Request has expired"},
    [HS_ERR_METHOD_NOT_ALLOWED] = {405, "MethodNotAllowed",
                                   "The specified method is not allowed "
                                   "against this resource."},
    [HS_ERR_NOT_IMPLEMENTED] = {501, "NotImplemented",
                                "A header or query you provided implies "
                                "functionality that is not implemented."},
    [HS_ERR_RDMA_TOKEN] = {400, "InvalidArgument",
                           "The x-amz-rdma-token header is malformed: it must "
                           "be exactly 88 hex digits with a DC or RC "
                           "transport byte."},
    [HS_ERR_RDMA_DECLINED] = {501, "NotImplemented",
                              "This server declines RDMA; use plain HTTP."},
    [HS_ERR_RDMA_UNSERVABLE] = {501, "NotImplemented",
                                "This server cannot serve this RDMA token; "
                                "use plain HTTP."},
    [HS_ERR_RDMA_FAILED] = {500, "InternalError",
                            "The RDMA transfer could not be set up."},
    [HS_ERR_TOO_MANY] = {400, "TooManyBuckets",
                         "You have attempted to create more buckets than "
                         "allowed."},
    [HS_ERR_SLOW_DOWN] = {503, "SlowDown", "Please reduce your request rate."},
    [HS_ERR_STORE_FULL] = {503, "SlowDown",
                           "The server's memory store is full "
                           "(--max-memory): delete objects, or retry "
                           "later."},
    [HS_ERR_INVALID_REQUEST] = {400, "InvalidRequest",
                                "The request is not valid."},
    [HS_ERR_AUTH_QUERY] = {400, "AuthorizationQueryParametersError",
                           "The query parameters of this presigned URL are "
                           "not valid."},
    [HS_ERR_NO_VERSION] = {404, "NoSuchVersion",
                           "The specified version does not exist."},
    [HS_ERR_UNAVAILABLE] = {503, "ServiceUnavailable",
                            "The storage behind this endpoint cannot be "
                            "reached; try again later."},
    [HS_ERR_INVALID_TAG] = {400, "InvalidTag",
                            "The tag provided was not a valid tag."},
};

static const struct err_row *row(enum hs_err err)
{
  static const struct err_row fallback = {500, "InternalError",
                                          "Internal error"};
  if ((unsigned)err >= HS_ERR__COUNT || !rows[err].code)
    return &fallback;
  return &rows[err];
}

unsigned hs_err_status(enum hs_err err) { return row(err)->status; }
const char *hs_err_code(enum hs_err err) { return row(err)->code; }
const char *hs_err_message(enum hs_err err) { return row(err)->message; }

static void element(struct hs_buf *b, const char *name, const char *v,
                    size_t n)
{
  if (!v || !n)
    return;
  hs_buf_printf(b, "<%s>", name);
  hs_xml_escape(b, v, n);
  hs_buf_printf(b, "</%s>", name);
}

void hs_err_xml(struct hs_buf *b, enum hs_err err, const char *message,
                const struct hs_err_where *w)
{
  const struct err_row *e = row(err);
  hs_buf_puts(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>");
  hs_buf_puts(b, e->code);
  hs_buf_puts(b, "</Code>");
  const char *m = message ? message : e->message;
  element(b, "Message", m, strlen(m));
  element(b, "BucketName", w->bucket, w->bucket ? strlen(w->bucket) : 0);
  element(b, "Key", w->key, w->key_len);
  element(b, "Resource", w->resource, w->resource_len);
  hs_buf_printf(b, "<RequestId>%s</RequestId></Error>\n", w->request_id);
}
