/* SPDX-License-Identifier: MIT */
/* AWS Signature Version 4 as S3 uses it: the Authorization header form and
 * the presigned query form, parsed by pure functions; the canonical
 * request, the string to sign and the signature, computed with OpenSSL.
 * Secrets and signatures are never logged. */
#ifndef HS_SIGV4_H
#define HS_SIGV4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"
#include "hash.h"
#include "headers.h"
#include "uri.h"

#define HS_SIGV4_ALGORITHM "AWS4-HMAC-SHA256"
#define HS_SIGV4_KEY_MAX 128
#define HS_SIGV4_SIGNED_MAX 1024
#define HS_UNSIGNED_PAYLOAD "UNSIGNED-PAYLOAD"
/* The SHA-256 of no bytes, in hex: the payload hash of a request without a
 * body. */
#define HS_EMPTY_SHA256                                                       \
  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

struct hs_sigv4_auth {
  char access_key[HS_SIGV4_KEY_MAX + 1];
  char date[9];      /* YYYYMMDD of the credential scope */
  char region[64];
  char service[32];
  char signed_headers[HS_SIGV4_SIGNED_MAX + 1]; /* "host;x-amz-date" */
  uint8_t signature[HS_SHA256_LEN];
  bool presigned;
  char amz_date[17]; /* YYYYMMDDTHHMMSSZ: X-Amz-Date (presigned) */
  uint32_t expires;  /* X-Amz-Expires (presigned), seconds */
};

/* "AWS4-HMAC-SHA256 Credential=K/D/R/S/aws4_request, SignedHeaders=a;b,
 * Signature=<64 hex>": the three parts once each, in any order.
 * SignedHeaders must be lower-case, sorted and without duplicates.
 * Error: HS_ERR_AUTH_HEADER. */
enum hs_err hs_sigv4_parse_header(const char *s, size_t len,
                                  struct hs_sigv4_auth *out);

/* The presigned form: X-Amz-Algorithm, X-Amz-Credential, X-Amz-Date,
 * X-Amz-Expires (1..604800), X-Amz-SignedHeaders, X-Amz-Signature.
 * Errors: HS_ERR_AUTH_QUERY (X-Amz-Expires), HS_ERR_AUTH_HEADER (the
 * rest). */
enum hs_err hs_sigv4_parse_query(const struct hs_query *q,
                                 struct hs_sigv4_auth *out);

/* Whether `name` (lower-case) is among the signed headers. */
bool hs_sigv4_signs(const struct hs_sigv4_auth *a, const char *name);

/* YYYYMMDDTHHMMSSZ to seconds since the epoch; false if malformed. */
bool hs_sigv4_parse_time(const char *s, int64_t *out);

struct hs_sigv4_request {
  const char *method;
  struct hs_span path; /* raw, as received */
  const struct hs_query *query;
  const struct hs_headers *headers;
};

/* The canonical request. The path is decoded and re-encoded (S3 does not
 * normalise it); the query is re-encoded and sorted (X-Amz-Signature left
 * out when presigned); each signed header's values are trimmed, inner
 * blanks collapsed, repeated fields joined with ','. Errors:
 * HS_ERR_AUTH_HEADER (a signed header is missing), HS_ERR_INVALID_URI,
 * HS_ERR_NOMEM. */
enum hs_err hs_sigv4_canonical_request(const struct hs_sigv4_request *r,
                                       const struct hs_sigv4_auth *a,
                                       const char *payload_hash,
                                       struct hs_buf *out);

/* kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" secret, date), region), service),
 * "aws4_request"). */
void hs_sigv4_signing_key(const char *secret, const struct hs_sigv4_auth *a,
                          uint8_t key[HS_SHA256_LEN]);

/* The signature of a request: HS_OK if it matches a->signature,
 * HS_ERR_SIGNATURE if not, or the canonical request's errors. amz_date is
 * the request's time (x-amz-date, or X-Amz-Date when presigned). */
enum hs_err hs_sigv4_verify(const struct hs_sigv4_request *r,
                            const struct hs_sigv4_auth *a, const char *secret,
                            const char *amz_date, const char *payload_hash);

/* Signs a request for another server (hipobj-gateway's backend): the
 * caller sets a->access_key, date (YYYYMMDD of amz_date), region, service
 * and signed_headers (each must be among r->headers); a->signature and the
 * Authorization header's value (appended to `authorization`) come out.
 * Errors: those of the canonical request. */
enum hs_err hs_sigv4_sign(const struct hs_sigv4_request *r,
                          struct hs_sigv4_auth *a, const char *secret,
                          const char *amz_date, const char *payload_hash,
                          struct hs_buf *authorization);

/* r's path and query as the canonical request spells them ("/b/k?a=1&b="):
 * a request sent with this target is canonicalised the same way by any
 * server, whatever it does with a raw target. Errors: HS_ERR_INVALID_URI,
 * HS_ERR_NOMEM. */
enum hs_err hs_sigv4_canonical_target(const struct hs_sigv4_request *r,
                                      struct hs_buf *out);

/* The signature of one aws-chunked chunk (STREAMING-AWS4-HMAC-SHA256-PAYLOAD):
 * the string to sign is "AWS4-HMAC-SHA256-PAYLOAD", the date, the scope,
 * the previous signature, the hash of "" and the chunk's hash. */
void hs_sigv4_chunk_signature(const uint8_t key[HS_SHA256_LEN],
                              const struct hs_sigv4_auth *a,
                              const char *amz_date,
                              const uint8_t prev[HS_SHA256_LEN],
                              const uint8_t chunk_hash[HS_SHA256_LEN],
                              uint8_t out[HS_SHA256_LEN]);

#endif
