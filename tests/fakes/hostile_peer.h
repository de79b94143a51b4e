/* SPDX-License-Identifier: MIT */
/* A hostile S3 server for the hostile-server suite: hipObjOps_t callbacks
 * that answer a token with a connection of their own (a QP on the server
 * NIC, connected to the token's QP, a version-2 offer) and a thread that
 * waits for ready and then attacks: shifts the address, moves more than the
 * length, serves a GET token as a PUT, writes after final, replays the
 * previous transfer's token, or never sends final. Works on any verbs
 * table: the simulated fabric (tests/unit/test_scoped.c) or Soft-RoCE
 * (tests/vm/vmprobe.c). One request at a time. */
#ifndef HO_TESTS_HOSTILE_PEER_H
#define HO_TESTS_HOSTILE_PEER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "hipobj.h"
#include "rdma/transport.h"

#define HOSTILE_MEM (64u << 10) /* the server's side of the payload */

enum attack {
  A_NONE,        /* honest */
  A_SHIFT,       /* GET: writes 4096 bytes before the token's address */
  A_LONGER,      /* GET: writes the length and 4096 bytes more */
  A_AS_PUT,      /* GET token: reads the buffer instead (a PUT) */
  A_AFTER_FINAL, /* GET: final OK, then writes again once the client returned */
  A_REPLAY,      /* GET: writes under the previous transfer's token */
  A_NO_FINAL,    /* GET: writes, never sends final, writes again later */
  /* PUT tokens (hostile_put): */
  A_PUT_LONGER,      /* reads the length and 4096 bytes more */
  A_PUT_SHIFT,       /* reads 4096 bytes before the token's address */
  A_PUT_WRITE,       /* writes into the buffer the client uploads from */
  A_PUT_AFTER_FINAL, /* final OK, then reads again once the client returned */
};

struct hostile {
  struct ho_device *dev;
  struct ho_conn *conn;
  uint8_t *mem; /* HOSTILE_MEM bytes, registered */
  struct ibv_mr *mr;
  enum attack attack;
  bool put; /* hostile_put: the token is a PUT's */
  bool op_in_final_honest; /* final names the operation it really did */
  struct ho_token client, old;
  bool have_old;
  uint64_t cookie;
  char reply[4 + HO_TOKEN_HEX + 1];
  pthread_t th;
  bool running;
  atomic_bool client_returned;
  atomic_bool attempt_over; /* the library gave this attempt up (a retry
                               begins): as final for what waits for the
                               client to return */
  enum ibv_wc_status attack_status, late_status;
};

extern const hipObjOps_t hostile_ops; /* ctx: struct hostile */

/* Open the server NIC `nic` through v and register the payload memory. */
int hostile_open(struct hostile *h, const struct ho_verbs_ops *v,
                 const struct ho_topology *topo, const char *nic);
void hostile_close(struct hostile *h);

/* One GET of size bytes at off of buf through h with attack a: fills the
 * server's memory with (i * 7 + 1), runs the transfer, tells the thread
 * the client returned, joins it, and keeps the token for A_REPLAY. */
hipObjOpError_t hostile_get(struct hostile *h, void *buf, size_t size,
                            off_t off, enum attack a, bool honest_op);
/* One PUT of size bytes at off of buf with attack a (A_NONE or A_PUT_*):
 * what the server read lands in h->mem; the server's memory is filled with
 * 0x5a first (A_PUT_WRITE writes it into the client's buffer). */
hipObjOpError_t hostile_put(struct hostile *h, const void *buf, size_t size,
                            off_t off, enum attack a);

#endif
