/* SPDX-License-Identifier: MIT */
/* The simulated protocol peer: the reference server engine
 * (src/server) on the simulated fabric, serving one in-memory object,
 * and the hipObjOps_t callbacks an application would implement with its S3
 * client. Tests run whole GET and PUT sequences in one process with it. */
#ifndef HO_TESTS_SIM_PEER_H
#define HO_TESTS_SIM_PEER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "hipobj.h"

struct sim_peer {
  struct ho_engine *engine;
  uint8_t *object;  /* the object's bytes */
  size_t object_size;
  atomic_uint puts_committed;
  unsigned commit_delay_ms; /* a slow store: each PUT's commit waits so long */
  unsigned chunk_delay_ms;  /* a slow store: each chunk read or written
                               waits so long (a transfer that moves slowly) */
};

/* An engine on the world's server NIC, with cfg (NULL: defaults). */
int sim_peer_create(struct sim_peer *p, const struct ho_platform *plat,
                    const struct ho_engine_config *cfg, size_t object_size);
void sim_peer_destroy(struct sim_peer *p);

/* How the application side of one request behaves. */
enum sim_mode {
  SIM_NORMAL = 0,
  SIM_DECLINE,          /* the server answers 501 */
  SIM_NO_REPLY_HEADER,  /* a response without x-amz-rdma-reply */
  SIM_PLAIN_OK,         /* reply "200" without a peer token */
  SIM_MALFORMED_REPLY,  /* reply "okay" */
  SIM_SEND_FAILS,       /* the S3 request fails */
  SIM_LONG_REPLY,       /* recvReply claims more bytes than the buffer */
};

/* One request: ctx for hipObjGet/Put. */
struct sim_request {
  struct sim_peer *peer;
  int op;               /* HIPOBJ_RDMA_OP_GET or _PUT */
  uint64_t object_off;  /* where in the object the range starts */
  uint64_t size;        /* bytes the server moves */
  enum sim_mode mode;
  /* Filled in by the callbacks. */
  int start_result;     /* enum ho_engine_start_result */
  char token[HO_TOKEN_HEX + 1];
  char reply[HO_ENGINE_REPLY_MAX];
  /* A callback may run a nested call (for reentrancy tests). */
  void (*on_send)(struct sim_request *r);
  /* May rewrite the engine's reply before the client sees it (a hostile or
   * broken server). */
  void (*on_reply)(struct sim_request *r);
  void *user;
};

extern const hipObjOps_t sim_ops;

void sim_request_init(struct sim_request *r, struct sim_peer *p, int op,
                      uint64_t object_off, uint64_t size);

#endif
