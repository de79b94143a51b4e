/* SPDX-License-Identifier: MIT */
/* The server's side of the RDMA path, between the S3 layer and the public
 * server library (include/hipobj_server.h, docs/protocol.md), and its only
 * user here: opening the library (or finding that RDMA is not available),
 * and starting transfers whose payload comes from a store reader (GET) or
 * goes to a store writer (PUT, UploadPart) through the library's read and
 * write callbacks.
 *
 * A transfer answers first: hs_rdma_get/put return the reply header value
 * at once, and the bytes move on the library's thread once the client's
 * ready message arrives. A PUT's object is committed (visible) only when
 * every byte has arrived, before the client is told; otherwise it is
 * aborted. */
#ifndef HS_RDMA_H
#define HS_RDMA_H

#include <stdbool.h>
#include <stdint.h>

#include "hipobj_server.h"

#include "auth/checksum.h"
#include "buf.h"
#include "config.h"
#include "err.h"
#include "stats.h"
#include "store/store.h"

struct hs_rdma;
struct ho_platform;

/* How the server library is opened: hipObjServerOpen(), or in the tests a
 * server on the simulated fabric (ctx: what the opener needs). */
typedef hipObjServerStatus_t (*hs_rdma_opener)(const void *ctx,
                                               const hipObjServerConfig_t *cfg,
                                               hipObjServer_t **out);

/* "200:" and 88 hex digits, NUL */
#define HS_RDMA_REPLY_MAX 96

/* Opens the engine on cfg->nic (or the first device with an active port)
 * of the production platform. *out is NULL, with a one-line reason in why,
 * when RDMA is not available (--no-rdma, no libibverbs, no device, no
 * active port): the server then serves plain HTTP only. Fails (HS_ERR_IO,
 * reason in why) only when --nic names a device that cannot be used. */
enum hs_err hs_rdma_open(const struct hs_config *cfg, struct hs_stats *stats,
                         struct hs_rdma **out, struct hs_buf *why);
/* The same with another opener. */
enum hs_err hs_rdma_open_with(hs_rdma_opener open, const void *ctx,
                              const struct hs_config *cfg,
                              struct hs_stats *stats, struct hs_rdma **out,
                              struct hs_buf *why);
/* The same on a given platform (the tests' simulated fabric): defined by
 * the tests (tests/rdma_on.c), on the library's internal constructor. */
enum hs_err hs_rdma_open_on(const struct ho_platform *plat,
                            const struct hs_config *cfg,
                            struct hs_stats *stats, struct hs_rdma **out,
                            struct hs_buf *why);
/* Accepts NULL. Waits for the transfers in flight to end (each ends at the
 * latest at its timeouts). */
void hs_rdma_close(struct hs_rdma *r);
const char *hs_rdma_nic(const struct hs_rdma *r);
/* The library's server, for a program that starts its own transfers
 * (hipobj-gateway's backend-fed ones). */
hipObjServer_t *hs_rdma_library(struct hs_rdma *r);

/* The library's connection counters as a JSON object (the "connections"
 * member of /_hipobj/stats). */
void hs_rdma_stats_json(struct hs_rdma *r, struct hs_buf *out);

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
