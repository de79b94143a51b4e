/* SPDX-License-Identifier: MIT */
/* Request authentication and payload integrity for one request: SigV4 when
 * the server has credentials (header or presigned form), and the
 * x-amz-content-sha256 contract in every case (a hex digest is checked
 * against the body; STREAMING-* bodies are aws-chunked, their chunk
 * signatures checked). A request is never committed before its signature
 * and its payload hash are verified. */
#ifndef HS_AUTH_H
#define HS_AUTH_H

#include <stdbool.h>
#include <stdint.h>

#include "auth_config.h"
#include "hash.h"
#include "sigv4.h"

enum hs_payload {
  HS_PAYLOAD_UNSIGNED,  /* UNSIGNED-PAYLOAD, or nothing said (anonymous) */
  HS_PAYLOAD_SHA256,    /* a hex digest the body must match */
  HS_PAYLOAD_DEFERRED,  /* signed, no x-amz-content-sha256: the signature
                           is checked with the body's digest at the end */
  HS_PAYLOAD_STREAMING, /* STREAMING-AWS4-HMAC-SHA256-PAYLOAD */
  HS_PAYLOAD_STREAMING_UNSIGNED /* STREAMING-UNSIGNED-PAYLOAD-TRAILER */
};

struct hs_auth {
  bool checked;  /* a signature was required (credentials configured) */
  enum hs_payload payload;
  uint8_t expected[HS_SHA256_LEN];
  struct hs_digest *sha;       /* the whole payload (SHA256, DEFERRED) */
  struct hs_digest *chunk_sha; /* the current chunk (STREAMING, checked) */
  struct hs_sigv4_auth sig;
  const char *secret; /* the signer's (cfg's, or its credentials') */
  char amz_date[17];
  uint8_t key[HS_SHA256_LEN];  /* signing key, for chunk signatures */
  uint8_t prev[HS_SHA256_LEN]; /* the previous chunk's signature */
  char detail[160]; /* why an error, when its code does not say it all */
};

/* Headers that must be signed when present, because they change what a
 * request does: host, every x-amz-* (as AWS requires), Content-MD5 and
 * Range (with a presigned URL, only host and x-amz-*: its users add Range
 * themselves). Content-Type need not be (curl sends one it does not
 * sign). */
bool hs_auth_must_sign(const char *name);

/* With the request's headers: decides the payload mode and checks the
 * signature when it does not depend on the body. Errors (one per cause):
 * HS_ERR_ACCESS_DENIED (anonymous, a required header unsigned, a date
 * missing), HS_ERR_UNKNOWN_ACCESS_KEY, HS_ERR_AUTH_HEADER (also another
 * region's credential),
 * HS_ERR_TIME_SKEWED, HS_ERR_EXPIRED, HS_ERR_SIGNATURE,
 * HS_ERR_INVALID_ARGUMENT (a bad x-amz-content-sha256),
 * HS_ERR_NOT_IMPLEMENTED (a STREAMING variant not supported), HS_ERR_NOMEM. */
enum hs_err hs_auth_begin(struct hs_auth *a,
                          const struct hs_auth_config *cfg,
                          const struct hs_sigv4_request *r, int64_t now);
bool hs_auth_streaming(const struct hs_auth *a);
/* Decoded payload bytes, in order. */
void hs_auth_payload(struct hs_auth *a, const void *p, size_t n);
/* The end of an aws-chunked chunk; sig_hex may be NULL. */
enum hs_err hs_auth_chunk_end(struct hs_auth *a, const char *sig_hex);
/* The request has no HTTP body, or its payload travels by RDMA
 * (rdma: it carries x-amz-rdma-token): a deferred signature is checked now,
 * over the empty payload's SHA-256, so nothing is done for a request whose
 * signature waits for a body that never comes. An RDMA request's payload
 * cannot be aws-chunked: STREAMING-* is HS_ERR_INVALID_ARGUMENT. Errors:
 * HS_ERR_SIGNATURE, HS_ERR_INVALID_ARGUMENT, the canonical request's. */
enum hs_err hs_auth_no_body(struct hs_auth *a,
                            const struct hs_auth_config *cfg,
                            const struct hs_sigv4_request *r, bool rdma);
/* The whole body was received. HS_ERR_SHA256_MISMATCH, HS_ERR_SIGNATURE. */
enum hs_err hs_auth_end(struct hs_auth *a,
                        const struct hs_auth_config *cfg,
                        const struct hs_sigv4_request *r);
/* Accepts a zeroed struct. */
void hs_auth_free(struct hs_auth *a);

#endif
