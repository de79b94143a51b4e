/* SPDX-License-Identifier: MIT */
/* The test server's RDMA transfers (the opener is the front's, rdma.h):
 * a payload that comes from a store reader (GET) or goes to a store writer
 * (PUT, UploadPart) through the library's read and write callbacks.
 *
 * A transfer answers first: hs_rdma_get/put return the reply header value
 * at once, and the bytes move on the library's thread once the client's
 * ready message arrives. A PUT's object is committed (visible) only when
 * every byte has arrived, before the client is told; otherwise it is
 * aborted. */
#ifndef HS_RDMA_STORE_H
#define HS_RDMA_STORE_H

#include <stdint.h>

#include "auth/checksum.h"
#include "rdma.h"
#include "store/store.h"

/* "200:" and 88 hex digits, NUL */
#define HS_RDMA_REPLY_MAX 96

enum hs_rdma_start {
  HS_RDMA_STARTED,  /* reply holds "200:<server token>" */
  HS_RDMA_BAD_TOKEN,/* malformed: 400, no reply header */
  HS_RDMA_DECLINED, /* cannot serve it: 501, reply 501 */
  HS_RDMA_BUSY      /* every server QP is in use: 503, reply 503 */
};

/* Moves [offset, offset + length) of the reader's object into the client's
 * buffer. Takes the reader in every case. */
enum hs_rdma_start hs_rdma_get(struct hs_rdma *r, const char *token,
                               struct hs_reader *reader, uint64_t offset,
                               uint64_t length, char reply[HS_RDMA_REPLY_MAX]);
/* What a PUT's payload must match before it is committed, as over HTTP.
 * Each is optional. */
struct hs_rdma_checks {
  const uint8_t *content_md5; /* Content-MD5 */
  const uint8_t *sha256;      /* x-amz-content-sha256, a hex digest */
  struct hs_cksum *cksum;     /* x-amz-checksum-*, with its expected value:
                                 hs_rdma_put takes it (*cksum is zeroed) */
};

/* Reads `size` bytes from the client's buffer into the writer, then
 * commits it if every check holds, or aborts it (the final message then
 * says store error). Takes the writer, and the checksum, in every case. */
enum hs_rdma_start hs_rdma_put(struct hs_rdma *r, const char *token,
                               struct hs_writer *w, uint64_t size,
                               const struct hs_rdma_checks *checks,
                               char reply[HS_RDMA_REPLY_MAX]);

#endif
