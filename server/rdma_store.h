/* SPDX-License-Identifier: MIT */
/* The test server's RDMA transfers (the opener is the front's, rdma.h):
 * a payload that comes from a store reader (GET) or goes to a store writer
 * (PUT, UploadPart) through the library's read and write callbacks.
 *
 * A transfer answers first: hs_rdma_get/put return the library's answer
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

/* Moves [offset, offset + length) of the reader's object into the client's
 * buffer. Takes the reader in every case. The status and rep are
 * hipObjServerStart()'s (NoMemory also before it): hs_rdma_answer()
 * turns them into the HTTP answer. */
hipObjServerStatus_t hs_rdma_get(struct hs_rdma *r, const char *token,
                                 struct hs_reader *reader, uint64_t offset,
                                 uint64_t length, hipObjServerReply_t *rep);
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
hipObjServerStatus_t hs_rdma_put(struct hs_rdma *r, const char *token,
                                 struct hs_writer *w, uint64_t size,
                                 const struct hs_rdma_checks *checks,
                                 hipObjServerReply_t *rep);

#endif
