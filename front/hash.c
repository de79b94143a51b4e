/* SPDX-License-Identifier: MIT */
#include "hash.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

struct hs_digest {
  EVP_MD_CTX *ctx;
};

static struct hs_digest *digest_new(const EVP_MD *md)
{
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  if (!ctx)
    return NULL;
  if (EVP_DigestInit_ex(ctx, md, NULL) != 1) {
    EVP_MD_CTX_free(ctx);
    return NULL;
  }
  /* The context pointer is the handle; no wrapper allocation needed. */
  return (struct hs_digest *)ctx;
}

struct hs_digest *hs_digest_md5(void) { return digest_new(EVP_md5()); }
struct hs_digest *hs_digest_sha256(void) { return digest_new(EVP_sha256()); }
struct hs_digest *hs_digest_sha1(void) { return digest_new(EVP_sha1()); }

void hs_digest_update(struct hs_digest *d, const void *p, size_t n)
{
  if (n)
    EVP_DigestUpdate((EVP_MD_CTX *)d, p, n);
}

void hs_digest_final(struct hs_digest *d, uint8_t *out)
{
  unsigned len = 0;
  EVP_DigestFinal_ex((EVP_MD_CTX *)d, out, &len);
  EVP_MD_CTX_free((EVP_MD_CTX *)d);
}

void hs_digest_free(struct hs_digest *d)
{
  EVP_MD_CTX_free((EVP_MD_CTX *)d);
}

void hs_md5(const void *p, size_t n, uint8_t out[HS_MD5_LEN])
{
  unsigned len = 0;
  EVP_Digest(p, n, out, &len, EVP_md5(), NULL);
}

void hs_sha256(const void *p, size_t n, uint8_t out[HS_SHA256_LEN])
{
  unsigned len = 0;
  EVP_Digest(p, n, out, &len, EVP_sha256(), NULL);
}

void hs_hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen,
                    uint8_t out[HS_SHA256_LEN])
{
  unsigned len = 0;
  HMAC(EVP_sha256(), key, (int)klen, msg, mlen, out, &len);
}

static int b64val(char c)
{
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+')
    return 62;
  if (c == '/')
    return 63;
  return -1;
}

bool hs_base64_decode(const char *s, size_t slen, uint8_t *out, size_t n)
{
  if (slen != (n + 2) / 3 * 4)
    return false;
  size_t pad = n % 3 ? 3 - n % 3 : 0;
  uint8_t tmp[64];
  if (n > sizeof tmp)
    return false;
  size_t o = 0;
  for (size_t i = 0; i < slen; i += 4) {
    uint32_t v = 0;
    for (size_t k = 0; k < 4; k++) {
      char c = s[i + k];
      int d;
      if (c == '=' && i + 4 == slen && k >= 4 - pad)
        d = 0;
      else if ((d = b64val(c)) < 0)
        return false;
      v = v << 6 | (uint32_t)d;
    }
    for (int k = 2; k >= 0; k--) {
      uint8_t byte = (uint8_t)(v >> (8 * k));
      if (o < n)
        tmp[o++] = byte;
      else if (byte != 0)
        return false; /* non-canonical trailing bits */
    }
  }
  for (size_t i = 0; i < n; i++)
    out[i] = tmp[i];
  return true;
}

bool hs_mem_equal(const void *a, const void *b, size_t n)
{
  return CRYPTO_memcmp(a, b, n) == 0;
}
