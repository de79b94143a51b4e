/* SPDX-License-Identifier: MIT */
/* The additional checksums of S3 ("flexible checksums"): a request may say
 * x-amz-checksum-ALG: <base64 of the big-endian digest> in a header, or in
 * an aws-chunked trailer announced by x-amz-trailer. ALG is crc32, crc32c,
 * crc64nvme, sha1 or sha256. The server computes the named checksum over
 * the payload and refuses a mismatch before anything is committed. */
#ifndef HS_CHECKSUM_H
#define HS_CHECKSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "hash.h"

enum hs_cksum_alg {
  HS_CK_NONE,
  HS_CK_CRC32,
  HS_CK_CRC32C,
  HS_CK_CRC64NVME,
  HS_CK_SHA1,
  HS_CK_SHA256
};

#define HS_CKSUM_MAX 32 /* bytes of the largest digest */

struct hs_cksum {
  enum hs_cksum_alg alg;
  uint64_t crc;
  struct hs_digest *d;
  bool have_expected;
  uint8_t expected[HS_CKSUM_MAX];
};

/* "x-amz-checksum-crc32" (any case) and the like; HS_CK_NONE otherwise. */
enum hs_cksum_alg hs_cksum_alg_of_header(const char *name);
/* "CRC32" (any case) and the like, as x-amz-checksum-algorithm names it;
 * HS_CK_NONE otherwise. */
enum hs_cksum_alg hs_cksum_alg_of_name(const char *name);
/* The header name of an algorithm, lower-case. */
const char *hs_cksum_header(enum hs_cksum_alg alg);
/* "CRC32", for messages. */
const char *hs_cksum_name(enum hs_cksum_alg alg);
size_t hs_cksum_len(enum hs_cksum_alg alg);

/* Starts computing alg. Errors: HS_ERR_NOMEM. */
enum hs_err hs_cksum_begin(struct hs_cksum *c, enum hs_cksum_alg alg);
/* The value the client gave (base64). Error: HS_ERR_INVALID_DIGEST. */
enum hs_err hs_cksum_expect(struct hs_cksum *c, const char *b64, size_t len);
void hs_cksum_update(struct hs_cksum *c, const void *p, size_t n);
/* One aws-chunked trailer line ("name:value"): when it is c's checksum,
 * its value becomes the expected one (hs_cksum_expect); other lines are
 * ignored. */
enum hs_err hs_cksum_trailer(struct hs_cksum *c, const char *line, size_t n);
/* The digest (big-endian for the CRCs) into out[hs_cksum_len]; the
 * computation ends. */
void hs_cksum_final(struct hs_cksum *c, uint8_t out[HS_CKSUM_MAX]);
/* Accepts a zeroed struct. */
void hs_cksum_free(struct hs_cksum *c);

/* The CRC (CRC32, CRC32C or CRC64NVME) of A followed by B, from A's, B's
 * and B's length: a multipart object's full-object checksum from its parts'.
 * False for another algorithm. */
bool hs_crc_join(enum hs_cksum_alg alg, uint64_t a, uint64_t b,
                 uint64_t b_len, uint64_t *out);

/* One-shot CRCs, for tests. */
uint32_t hs_crc32(uint32_t crc, const void *p, size_t n);
uint32_t hs_crc32c(uint32_t crc, const void *p, size_t n);
uint64_t hs_crc64nvme(uint64_t crc, const void *p, size_t n);

/* Standard base64 with padding. out needs 4 * ((n + 2) / 3) + 1 bytes. */
void hs_base64_encode(const uint8_t *p, size_t n, char *out);

#endif
