/* SPDX-License-Identifier: MIT */
/* The servers' side of the RDMA path on the public server library
 * (include/hipobj_server.h, docs/protocol.md): opening the library (or
 * finding that RDMA is not available), its counters, and the library's
 * answer as an HTTP one. What moves the payload is each server's: the test
 * server's store (server/rdma_store.c), the gateway's backend
 * (gateway/rdma_path.c). */
#ifndef HS_RDMA_H
#define HS_RDMA_H

#include <stdbool.h>
#include <stdint.h>

#include "hipobj_server.h"

#include "buf.h"
#include "config.h"
#include "err.h"
#include "message.h"
#include "stats.h"

struct hs_rdma;
struct ho_platform;

/* How the server library is opened: hipObjServerOpen(), or in the tests a
 * server on the simulated fabric (ctx: what the opener needs). */
typedef hipObjServerStatus_t (*hs_rdma_opener)(const void *ctx,
                                               const hipObjServerConfig_t *cfg,
                                               hipObjServer_t **out);

/* Opens the engines on cfg->nic's devices, a rail each (or on the first
 * device with an active port)
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
/* The NICs open, comma-separated, as the library opened them. */
const char *hs_rdma_nic(const struct hs_rdma *r);
/* The library's server, for a program that starts its own transfers
 * (hipobj-gateway's backend-fed ones). */
hipObjServer_t *hs_rdma_library(struct hs_rdma *r);
/* The counters the transfers add to. */
struct hs_stats *hs_rdma_stats(struct hs_rdma *r);

/* The library's connection counters as a JSON object (the "connections"
 * member of /_hipobj/stats). */
void hs_rdma_stats_json(struct hs_rdma *r, struct hs_buf *out);
/* Each NIC's (a rail's) counters as the "nics" member of /_hipobj/stats:
 * "nics":[{"name":..,"transfers":..,"bytes":..,"failed":..,"live":..}],
 * in the order the NICs were opened. */
void hs_rdma_nics_json(struct hs_rdma *r, struct hs_buf *out);

/* The callbacks of a streamed transfer (hipObjServerRequest_t's): read for
 * a GET, write (and commit) for a PUT; arg is their ioArg and doneArg. */
struct hs_rdma_io {
  hipObjServerReadFn read;
  hipObjServerWriteFn write;
  hipObjServerCommitFn commit;
  hipObjServerDoneFn done;
  void *arg;
};

/* Starts the transfer of `length` bytes that `token` asks for (a GET when
 * io->read is set, else a PUT): hipObjServerStart()'s status, reply (rep,
 * cleared first) and handle (xfer, may be NULL). */
hipObjServerStatus_t hs_rdma_start(struct hs_rdma *r, const char *token,
                                   uint64_t length,
                                   const struct hs_rdma_io *io,
                                   hipObjServerReply_t *rep,
                                   hipObjServerTransfer_t **xfer);

/* Where a server's answer to a token request goes: the response, the
 * counters, what the error document names, and whether it is a HEAD. */
struct hs_rdma_answer {
  struct hs_response *resp;
  struct hs_stats *stats;
  const struct hs_err_where *where;
  bool head;
};

/* The one HTTP answer of both servers to a token request, from the
 * library's status (hipObjServerStart, hipObjServerParseToken) and reply:
 *   Success   x-amz-rdma-reply and x-amz-rdma-bytes-transferred (the
 *             status and the other headers are the caller's); true;
 *   BadToken  400 InvalidArgument, no reply header (counted bad_tokens);
 *   Busy, NoMemory  503 SlowDown, x-amz-rdma-reply: 503;
 *   else      declined: 501 NotImplemented (decline: its code, message:
 *             its message, or the code's), x-amz-rdma-reply: 501
 *             (counted declined), so that the client falls back to HTTP.
 * decline and message are also the servers' own declines (no device,
 * --decline-rdma, a length that is not the payload's): hs_rdma_decline. */
bool hs_rdma_answer(const struct hs_rdma_answer *a, hipObjServerStatus_t st,
                    const hipObjServerReply_t *rep, enum hs_err decline,
                    const char *message);
void hs_rdma_decline(const struct hs_rdma_answer *a, enum hs_err decline,
                     const char *message);
/* The decline of a token whose length is not the number of bytes to
 * move. */
void hs_rdma_mismatch(const struct hs_rdma_answer *a, uint64_t token_len,
                      uint64_t bytes);

#endif
