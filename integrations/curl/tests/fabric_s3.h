/* SPDX-License-Identifier: MIT */
/* A small in-process S3 responder whose RDMA side is the reference engine
 * (src/server) on the simulated fabric of tests/fakes: the glue's RDMA
 * path runs end to end in one process, over real HTTP on 127.0.0.1.
 * Path-style objects in memory, GET (Range), HEAD, PUT, DELETE, multipart
 * (create, UploadPart, ListParts, complete, abort). It can misbehave on
 * purpose (modes) and counts what moved how. */
#ifndef HO_S3_FABRIC_S3_H
#define HO_S3_FABRIC_S3_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine.h"

enum fabric_mode {
  FABRIC_NORMAL = 0,
  FABRIC_DECLINE,     /* token requests: 501, x-amz-rdma-reply: 501 */
  FABRIC_IGNORE,      /* the token is ignored: a plain answer, no reply */
  FABRIC_BAD_COUNT,   /* x-amz-rdma-bytes-transferred one too many */
  FABRIC_PLAIN_REPLY  /* x-amz-rdma-reply: 200 without a peer token */
};

struct fabric_counts {
  atomic_uint rdma_get, rdma_put, http_get, http_put, declined;
  atomic_uint list_parts, completes, aborts;
  atomic_uint_fast64_t rdma_bytes, http_bytes;
};

struct fabric_s3;

/* Listens on 127.0.0.1:0; *port gets the port. NULL on failure. */
struct fabric_s3 *fabric_s3_start(struct ho_engine *engine, int *port);
void fabric_s3_stop(struct fabric_s3 *f);
void fabric_s3_set_mode(struct fabric_s3 *f, enum fabric_mode m);
struct fabric_counts *fabric_s3_counts(struct fabric_s3 *f);
/* A copy of an object's bytes (path "/bucket/key" as sent, encoded);
 * false when there is none. *data is malloc()ed. */
bool fabric_s3_object(struct fabric_s3 *f, const char *path, uint8_t **data,
                      size_t *size);
/* The next n requests are answered 503 SlowDown (n 0: none); how many
 * were answered so. */
void fabric_s3_slow_down(struct fabric_s3 *f, unsigned n);
unsigned fabric_s3_slowed(struct fabric_s3 *f);
/* Multipart uploads not completed or aborted. */
unsigned fabric_s3_open_uploads(struct fabric_s3 *f);

#endif
