/* SPDX-License-Identifier: MIT */
/* MD5 (ETags, Content-MD5), SHA-256 and HMAC-SHA256 (SigV4) through
 * OpenSSL's EVP interface, and the hex (src/common/hex.c) and base64 forms
 * S3 uses. */
#ifndef HS_HASH_H
#define HS_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hex.h"

#define HS_MD5_LEN 16
#define HS_SHA256_LEN 32

/* An incremental digest. hs_digest_new returns NULL when out of memory. */
struct hs_digest;
struct hs_digest *hs_digest_md5(void);
struct hs_digest *hs_digest_sha256(void);
struct hs_digest *hs_digest_sha1(void);
void hs_digest_update(struct hs_digest *d, const void *p, size_t n);
/* Writes the digest (16, 20 or 32 bytes) and frees d. */
void hs_digest_final(struct hs_digest *d, uint8_t *out);
/* Frees d without a result. Accepts NULL. */
void hs_digest_free(struct hs_digest *d);

void hs_md5(const void *p, size_t n, uint8_t out[HS_MD5_LEN]);
void hs_sha256(const void *p, size_t n, uint8_t out[HS_SHA256_LEN]);
void hs_hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen,
                    uint8_t out[HS_SHA256_LEN]);

/* Lower-case hex of n bytes into out (2n + 1 bytes): src/common/hex.h under
 * the server's name. */
static inline void hs_hex(const uint8_t *p, size_t n, char *out)
{
  ho_hex_encode(p, n, out);
}
/* Exactly 2n hex digits (either case) into n bytes. */
static inline bool hs_unhex(const char *s, size_t slen, uint8_t *out, size_t n)
{
  return ho_hex_decode(s, slen, out, n);
}
/* Standard base64 with padding of exactly n bytes expected. */
bool hs_base64_decode(const char *s, size_t slen, uint8_t *out, size_t n);
/* Constant-time comparison. */
bool hs_mem_equal(const void *a, const void *b, size_t n);

#endif
