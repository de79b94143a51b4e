/* SPDX-License-Identifier: MIT */
/* The messages of the D3 protocol (docs/protocol.md), sent as RC SENDs on
 * the connection the reply set up:
 *   ready  client -> server, after the client's QP reached RTS
 *   final  server -> client, after the payload moved (or did not)
 * Each is HO_MSG_SIZE bytes, little-endian, field by field. */
#ifndef HO_RDMA_PROTOCOL_H
#define HO_RDMA_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HO_MSG_SIZE 32
#define HO_PROTO_V1 1 /* one connection per transfer */
#define HO_PROTO_V2 2 /* persistent connections, the operation on the wire */
#define HO_PROTO_VERSION HO_PROTO_V2

enum ho_msg_type { HO_MSG_READY = 1, HO_MSG_FINAL = 2 };

/* Outcome in a final message. */
enum ho_final_status {
  HO_FINAL_OK = 0,          /* all bytes moved (and, for a PUT, committed) */
  HO_FINAL_BAD_COOKIE = 1,  /* ready carried the wrong cookie: nothing moved */
  HO_FINAL_RDMA_ERROR = 2,  /* the server's RDMA failed */
  HO_FINAL_STORE_ERROR = 3, /* the server could not read or commit the data */
  HO_FINAL_BAD_REQUEST = 4  /* ready's byte count or operation differs
                               from the request's */
};

/* The operation on the wire (version 2): what the server does. */
enum ho_wire_op { HO_WIRE_GET = 1 /* server WRITEs */, HO_WIRE_PUT = 2 /* READs */ };

struct ho_msg {
  uint8_t type;      /* enum ho_msg_type */
  uint8_t version;   /* HO_PROTO_V1 or HO_PROTO_V2 */
  uint16_t status;   /* final: enum ho_final_status; ready: 0 */
  uint64_t cookie;   /* the server's cookie from the reply token */
  uint64_t bytes;    /* final: bytes moved; ready: bytes expected */
  /* Version 2 only (zero in version 1): */
  uint32_t next_qpn; /* ready: the client QP that names this connection in
                        its next token; 0: the connection ends after this
                        transfer. final: 0 */
  uint8_t op;        /* enum ho_wire_op, in ready and in final */
};

/* The first PSN of each direction of a transfer's connection, from its
 * cookie (docs/protocol.md, "Packet sequence numbers"). */
enum ho_psn_dir { HO_PSN_CLIENT_TO_SERVER = 0, HO_PSN_SERVER_TO_CLIENT = 1 };
uint32_t ho_psn_from_cookie(uint64_t cookie, enum ho_psn_dir dir);

void ho_msg_encode(const struct ho_msg *m, uint8_t out[HO_MSG_SIZE]);
/* False unless len == HO_MSG_SIZE, the magic, version and type are valid and
 * the reserved bytes are zero: all of [24,32) in version 1; in version 2 a
 * valid op, next_qpn below 2^24 (0 in a final), [28,32) zero. */
bool ho_msg_decode(const uint8_t *buf, size_t len, struct ho_msg *out);

/* HIPOBJ_RDMA_OP_GET/PUT and the wire's operation. */
uint8_t ho_wire_op(int op);

#endif
