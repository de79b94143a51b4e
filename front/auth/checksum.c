/* SPDX-License-Identifier: MIT */
#include "checksum.h"

#include <pthread.h>
#include <string.h>
#include <strings.h>

/* Reflected CRCs, one table each, built once. */
static uint32_t t32[256], t32c[256];
static uint64_t t64[256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void build_tables(void)
{
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t a = i, b = i;
    uint64_t c = i;
    for (int k = 0; k < 8; k++) {
      a = (a >> 1) ^ (a & 1 ? 0xEDB88320u : 0);
      b = (b >> 1) ^ (b & 1 ? 0x82F63B78u : 0);
      c = (c >> 1) ^ (c & 1 ? 0x9A6C9329AC4BC9B5ull : 0);
    }
    t32[i] = a;
    t32c[i] = b;
    t64[i] = c;
  }
}

uint32_t hs_crc32(uint32_t crc, const void *p, size_t n)
{
  pthread_once(&tables_once, build_tables);
  const uint8_t *b = p;
  crc = ~crc;
  while (n--)
    crc = (crc >> 8) ^ t32[(crc ^ *b++) & 0xff];
  return ~crc;
}

uint32_t hs_crc32c(uint32_t crc, const void *p, size_t n)
{
  pthread_once(&tables_once, build_tables);
  const uint8_t *b = p;
  crc = ~crc;
  while (n--)
    crc = (crc >> 8) ^ t32c[(crc ^ *b++) & 0xff];
  return ~crc;
}

uint64_t hs_crc64nvme(uint64_t crc, const void *p, size_t n)
{
  pthread_once(&tables_once, build_tables);
  const uint8_t *b = p;
  crc = ~crc;
  while (n--)
    crc = (crc >> 8) ^ t64[(crc ^ *b++) & 0xff];
  return ~crc;
}

static const struct {
  enum hs_cksum_alg alg;
  const char *header;
  const char *name;
  size_t len;
} algs[] = {
    {HS_CK_CRC32, "x-amz-checksum-crc32", "CRC32", 4},
    {HS_CK_CRC32C, "x-amz-checksum-crc32c", "CRC32C", 4},
    {HS_CK_CRC64NVME, "x-amz-checksum-crc64nvme", "CRC64NVME", 8},
    {HS_CK_SHA1, "x-amz-checksum-sha1", "SHA1", 20},
    {HS_CK_SHA256, "x-amz-checksum-sha256", "SHA256", 32},
};

enum hs_cksum_alg hs_cksum_alg_of_header(const char *name)
{
  for (size_t i = 0; i < sizeof algs / sizeof algs[0]; i++)
    if (strcasecmp(name, algs[i].header) == 0)
      return algs[i].alg;
  return HS_CK_NONE;
}

enum hs_cksum_alg hs_cksum_alg_of_name(const char *name)
{
  for (size_t i = 0; i < sizeof algs / sizeof algs[0]; i++)
    if (strcasecmp(name, algs[i].name) == 0)
      return algs[i].alg;
  return HS_CK_NONE;
}

/* ---- joining CRCs ---------------------------------------------------------
 * A reflected CRC of width w is a polynomial over GF(2) with x^0 in the top
 * bit. The CRC of A then B is the CRC of A multiplied by x^(8 len(B))
 * modulo the generator, plus the CRC of B (the pre- and post-inversions
 * cancel out). The power is built from x^(2^k), squared step by step. */

static uint64_t poly_of(enum hs_cksum_alg alg, unsigned *w)
{
  *w = alg == HS_CK_CRC64NVME ? 64 : 32;
  return alg == HS_CK_CRC32    ? 0xEDB88320u
         : alg == HS_CK_CRC32C ? 0x82F63B78u
                               : 0x9A6C9329AC4BC9B5ull;
}

/* a * b modulo the generator, reflected, width w. */
static uint64_t gf2_mul(uint64_t a, uint64_t b, uint64_t poly, unsigned w)
{
  uint64_t top = (uint64_t)1 << (w - 1), r = 0;
  for (uint64_t bit = top; bit; bit >>= 1) {
    if (a & bit)
      r ^= b;
    b = (b & 1) ? (b >> 1) ^ poly : b >> 1;
  }
  return r;
}

/* x^(8 n) modulo the generator. */
static uint64_t x_pow_bytes(uint64_t n, uint64_t poly, unsigned w)
{
  uint64_t r = (uint64_t)1 << (w - 1); /* x^0 (x^k is bit w - 1 - k) */
  uint64_t sq = (uint64_t)1 << (w - 9); /* x^8, then x^16, x^32, ... */
  for (; n; n >>= 1) {
    if (n & 1)
      r = gf2_mul(r, sq, poly, w);
    sq = gf2_mul(sq, sq, poly, w);
  }
  return r;
}

bool hs_crc_join(enum hs_cksum_alg alg, uint64_t a, uint64_t b,
                 uint64_t b_len, uint64_t *out)
{
  if (alg != HS_CK_CRC32 && alg != HS_CK_CRC32C && alg != HS_CK_CRC64NVME)
    return false;
  unsigned w;
  uint64_t poly = poly_of(alg, &w);
  *out = gf2_mul(x_pow_bytes(b_len, poly, w), a, poly, w) ^ b;
  return true;
}

const char *hs_cksum_header(enum hs_cksum_alg alg)
{
  for (size_t i = 0; i < sizeof algs / sizeof algs[0]; i++)
    if (algs[i].alg == alg)
      return algs[i].header;
  return "";
}

const char *hs_cksum_name(enum hs_cksum_alg alg)
{
  for (size_t i = 0; i < sizeof algs / sizeof algs[0]; i++)
    if (algs[i].alg == alg)
      return algs[i].name;
  return "";
}

size_t hs_cksum_len(enum hs_cksum_alg alg)
{
  for (size_t i = 0; i < sizeof algs / sizeof algs[0]; i++)
    if (algs[i].alg == alg)
      return algs[i].len;
  return 0;
}

enum hs_err hs_cksum_begin(struct hs_cksum *c, enum hs_cksum_alg alg)
{
  memset(c, 0, sizeof *c);
  c->alg = alg;
  if (alg == HS_CK_SHA1)
    c->d = hs_digest_sha1();
  else if (alg == HS_CK_SHA256)
    c->d = hs_digest_sha256();
  if ((alg == HS_CK_SHA1 || alg == HS_CK_SHA256) && !c->d)
    return HS_ERR_NOMEM;
  return HS_OK;
}

enum hs_err hs_cksum_expect(struct hs_cksum *c, const char *b64, size_t len)
{
  size_t n = hs_cksum_len(c->alg);
  if (!n || !hs_base64_decode(b64, len, c->expected, n))
    return HS_ERR_INVALID_DIGEST;
  c->have_expected = true;
  return HS_OK;
}

void hs_cksum_update(struct hs_cksum *c, const void *p, size_t n)
{
  switch (c->alg) {
  case HS_CK_CRC32: c->crc = hs_crc32((uint32_t)c->crc, p, n); break;
  case HS_CK_CRC32C: c->crc = hs_crc32c((uint32_t)c->crc, p, n); break;
  case HS_CK_CRC64NVME: c->crc = hs_crc64nvme(c->crc, p, n); break;
  case HS_CK_SHA1:
  case HS_CK_SHA256: hs_digest_update(c->d, p, n); break;
  default: break;
  }
}

void hs_cksum_final(struct hs_cksum *c, uint8_t out[HS_CKSUM_MAX])
{
  size_t n = hs_cksum_len(c->alg);
  if (c->d) {
    hs_digest_final(c->d, out);
    c->d = NULL;
    return;
  }
  for (size_t i = 0; i < n; i++)
    out[i] = (uint8_t)(c->crc >> (8 * (n - 1 - i)));
}

void hs_cksum_free(struct hs_cksum *c)
{
  hs_digest_free(c->d);
  c->d = NULL;
}

void hs_base64_encode(const uint8_t *p, size_t n, char *out)
{
  static const char a[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t o = 0;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16;
    if (i + 1 < n)
      v |= (uint32_t)p[i + 1] << 8;
    if (i + 2 < n)
      v |= p[i + 2];
    out[o++] = a[v >> 18];
    out[o++] = a[(v >> 12) & 63];
    out[o++] = i + 1 < n ? a[(v >> 6) & 63] : '=';
    out[o++] = i + 2 < n ? a[v & 63] : '=';
  }
  out[o] = '\0';
}

enum hs_err hs_cksum_trailer(struct hs_cksum *c, const char *line, size_t n)
{
  const char *colon = memchr(line, ':', n);
  char name[64];
  size_t nl = colon ? (size_t)(colon - line) : n;
  if (!colon || !c->alg || nl >= sizeof name)
    return HS_OK;
  memcpy(name, line, nl);
  name[nl] = '\0';
  if (hs_cksum_alg_of_header(name) != c->alg)
    return HS_OK;
  const char *v = colon + 1;
  size_t vl = n - nl - 1;
  while (vl && *v == ' ') {
    v++;
    vl--;
  }
  return hs_cksum_expect(c, v, vl);
}
