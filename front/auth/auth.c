/* SPDX-License-Identifier: MIT */
#include "auth.h"

#include "credentials.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define STREAMING_SIGNED "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
#define STREAMING_UNSIGNED "STREAMING-UNSIGNED-PAYLOAD-TRAILER"

static enum hs_err payload_mode(struct hs_auth *a, const struct hs_headers *h)
{
  if (hs_header_count(h, "x-amz-content-sha256") > 1)
    return HS_ERR_INVALID_ARGUMENT;
  const char *v = hs_header_get(h, "x-amz-content-sha256");
  if (!v) {
    a->payload = HS_PAYLOAD_UNSIGNED;
  } else if (strcmp(v, HS_UNSIGNED_PAYLOAD) == 0) {
    a->payload = HS_PAYLOAD_UNSIGNED;
  } else if (strcmp(v, STREAMING_SIGNED) == 0) {
    a->payload = HS_PAYLOAD_STREAMING;
  } else if (strcmp(v, STREAMING_UNSIGNED) == 0) {
    a->payload = HS_PAYLOAD_STREAMING_UNSIGNED;
  } else if (strncmp(v, "STREAMING-", 10) == 0) {
    return HS_ERR_NOT_IMPLEMENTED;
  } else if (hs_unhex(v, strlen(v), a->expected, sizeof a->expected)) {
    a->payload = HS_PAYLOAD_SHA256;
    if (!(a->sha = hs_digest_sha256()))
      return HS_ERR_NOMEM;
  } else {
    return HS_ERR_INVALID_ARGUMENT;
  }
  return HS_OK;
}

static enum hs_err parse_credentials(struct hs_auth *a,
                                     const struct hs_sigv4_request *r)
{
  const char *h = hs_header_get(r->headers, "authorization");
  if (h) {
    if (hs_header_count(r->headers, "authorization") > 1)
      return HS_ERR_AUTH_HEADER;
    enum hs_err err = hs_sigv4_parse_header(h, strlen(h), &a->sig);
    if (err)
      return err;
    if (hs_header_count(r->headers, "x-amz-date") != 1)
      return HS_ERR_ACCESS_DENIED;
    const char *d = hs_header_get(r->headers, "x-amz-date");
    int64_t t;
    if (!hs_sigv4_parse_time(d, &t))
      return HS_ERR_ACCESS_DENIED;
    memcpy(a->amz_date, d, 17);
    return HS_OK;
  }
  if (hs_query_get(r->query, "X-Amz-Algorithm")) {
    enum hs_err err = hs_sigv4_parse_query(r->query, &a->sig);
    if (err == HS_ERR_AUTH_QUERY)
      snprintf(a->detail, sizeof a->detail,
               "X-Amz-Expires must be a whole number of seconds from 1 to "
               "604800 (seven days).");
    if (err)
      return err;
    memcpy(a->amz_date, a->sig.amz_date, 17);
    return HS_OK;
  }
  return HS_ERR_ACCESS_DENIED;
}

bool hs_auth_must_sign(const char *name)
{
  return strcasecmp(name, "host") == 0 ||
         strncasecmp(name, "x-amz-", 6) == 0 ||
         strcasecmp(name, "content-md5") == 0 ||
         strcasecmp(name, "range") == 0;
}

/* Every header present that must be signed is. A presigned URL is handed
 * to clients that add Range (and Content-MD5) themselves, as AWS allows:
 * there only x-amz-* must be. */
static enum hs_err unsigned_headers(struct hs_auth *a,
                                    const struct hs_headers *h)
{
  for (size_t i = 0; i < h->n; i++) {
    char name[HS_SIGV4_SIGNED_MAX + 1]; /* any name a signature can list */
    size_t n = strlen(h->v[i].name);
    if (!hs_auth_must_sign(h->v[i].name) ||
        (a->sig.presigned && strncasecmp(h->v[i].name, "x-amz-", 6) != 0 &&
         strcasecmp(h->v[i].name, "host") != 0))
      continue;
    for (size_t k = 0; k < n && k < sizeof name - 1; k++) {
      char c = h->v[i].name[k];
      name[k] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    name[n < sizeof name - 1 ? n : sizeof name - 1] = '\0';
    if (n >= sizeof name || !hs_sigv4_signs(&a->sig, name)) {
      snprintf(a->detail, sizeof a->detail,
               "There were headers present in the request which were not "
               "signed: %.60s", name);
      return HS_ERR_ACCESS_DENIED;
    }
  }
  return HS_OK;
}

/* Scope, signed headers and time. */
static enum hs_err check_request(struct hs_auth *a,
                                 const struct hs_auth_config *cfg,
                                 const struct hs_sigv4_request *r, int64_t now)
{
  if (cfg->credentials)
    a->secret = hs_credentials_secret(cfg->credentials, a->sig.access_key);
  else if (strcmp(a->sig.access_key, cfg->access_key) == 0)
    a->secret = cfg->secret_key;
  if (!a->secret)
    return HS_ERR_UNKNOWN_ACCESS_KEY;
  if (strcmp(a->sig.service, "s3") != 0)
    return HS_ERR_AUTH_HEADER;
  /* The scope's date must be the request's: nothing else can match. */
  if (memcmp(a->amz_date, a->sig.date, 8) != 0)
    return HS_ERR_SIGNATURE;
  const char *region = cfg->region ? cfg->region : "us-east-1";
  if (strcmp(a->sig.region, region) != 0) {
    snprintf(a->detail, sizeof a->detail,
             "The authorization header is malformed; the region '%.40s' is "
             "wrong; expecting '%.40s'", a->sig.region, region);
    return HS_ERR_AUTH_HEADER;
  }
  if (!hs_sigv4_signs(&a->sig, "host") ||
      (!a->sig.presigned && !hs_sigv4_signs(&a->sig, "x-amz-date")))
    return HS_ERR_ACCESS_DENIED;
  enum hs_err err = unsigned_headers(a, r->headers);
  if (err)
    return err;
  int64_t t;
  hs_sigv4_parse_time(a->amz_date, &t);
  int64_t skew = cfg->max_clock_skew_s;
  if (a->sig.presigned) {
    if (now > t + (int64_t)a->sig.expires)
      return HS_ERR_EXPIRED;
    if (skew && t > now + skew)
      return HS_ERR_TIME_SKEWED;
  } else if (skew && (t > now + skew || t < now - skew)) {
    return HS_ERR_TIME_SKEWED;
  }
  return HS_OK;
}

static const char *canonical_payload(const struct hs_auth *a,
                                     const struct hs_sigv4_request *r)
{
  const char *v = hs_header_get(r->headers, "x-amz-content-sha256");
  if (a->sig.presigned)
    return v ? v : HS_UNSIGNED_PAYLOAD;
  return v;
}

enum hs_err hs_auth_begin(struct hs_auth *a,
                          const struct hs_auth_config *cfg,
                          const struct hs_sigv4_request *r, int64_t now)
{
  memset(a, 0, sizeof *a);
  enum hs_err err = payload_mode(a, r->headers);
  if (err)
    return err;
  if (!cfg->access_key && !cfg->credentials)
    return HS_OK; /* anonymous server: every request is accepted */
  a->checked = true;
  if ((err = parse_credentials(a, r)) || (err = check_request(a, cfg, r, now)))
    return err;
  const char *ph = canonical_payload(a, r);
  if (!ph) {
    /* Nothing says what the payload is: sign with its digest, at the end. */
    a->payload = HS_PAYLOAD_DEFERRED;
    return (a->sha = hs_digest_sha256()) ? HS_OK : HS_ERR_NOMEM;
  }
  err = hs_sigv4_verify(r, &a->sig, a->secret, a->amz_date, ph);
  if (err)
    return err;
  if (a->payload == HS_PAYLOAD_STREAMING) {
    hs_sigv4_signing_key(a->secret, &a->sig, a->key);
    memcpy(a->prev, a->sig.signature, sizeof a->prev);
    if (!(a->chunk_sha = hs_digest_sha256()))
      return HS_ERR_NOMEM;
  }
  return HS_OK;
}

bool hs_auth_streaming(const struct hs_auth *a)
{
  return a->payload == HS_PAYLOAD_STREAMING ||
         a->payload == HS_PAYLOAD_STREAMING_UNSIGNED;
}

void hs_auth_payload(struct hs_auth *a, const void *p, size_t n)
{
  if (a->sha)
    hs_digest_update(a->sha, p, n);
  if (a->chunk_sha)
    hs_digest_update(a->chunk_sha, p, n);
}

enum hs_err hs_auth_chunk_end(struct hs_auth *a, const char *sig_hex)
{
  if (!a->chunk_sha)
    return HS_OK; /* unsigned chunks, or an anonymous server */
  uint8_t h[HS_SHA256_LEN], want[HS_SHA256_LEN], got[HS_SHA256_LEN];
  hs_digest_final(a->chunk_sha, h);
  a->chunk_sha = hs_digest_sha256();
  if (!a->chunk_sha)
    return HS_ERR_NOMEM;
  if (!sig_hex || !hs_unhex(sig_hex, 64, got, sizeof got))
    return HS_ERR_SIGNATURE;
  hs_sigv4_chunk_signature(a->key, &a->sig, a->amz_date, a->prev, h, want);
  if (!hs_mem_equal(want, got, sizeof want))
    return HS_ERR_SIGNATURE;
  memcpy(a->prev, want, sizeof a->prev);
  return HS_OK;
}

enum hs_err hs_auth_no_body(struct hs_auth *a,
                            const struct hs_auth_config *cfg,
                            const struct hs_sigv4_request *r, bool rdma)
{
  if (rdma && hs_auth_streaming(a))
    return HS_ERR_INVALID_ARGUMENT;
  if (a->payload != HS_PAYLOAD_DEFERRED)
    return HS_OK;
  hs_digest_free(a->sha);
  a->sha = NULL;
  a->payload = HS_PAYLOAD_UNSIGNED; /* settled: nothing more to check */
  return hs_sigv4_verify(r, &a->sig, a->secret, a->amz_date,
                         HS_EMPTY_SHA256);
}

enum hs_err hs_auth_end(struct hs_auth *a,
                        const struct hs_auth_config *cfg,
                        const struct hs_sigv4_request *r)
{
  if (!a->sha)
    return HS_OK;
  uint8_t h[HS_SHA256_LEN];
  hs_digest_final(a->sha, h);
  a->sha = NULL;
  if (a->payload == HS_PAYLOAD_SHA256)
    return hs_mem_equal(h, a->expected, sizeof h) ? HS_OK
                                                  : HS_ERR_SHA256_MISMATCH;
  char hex[2 * HS_SHA256_LEN + 1];
  hs_hex(h, sizeof h, hex);
  return hs_sigv4_verify(r, &a->sig, a->secret, a->amz_date, hex);
}

void hs_auth_free(struct hs_auth *a)
{
  hs_digest_free(a->sha);
  hs_digest_free(a->chunk_sha);
  a->sha = NULL;
  a->chunk_sha = NULL;
}
