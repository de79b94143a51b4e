/* SPDX-License-Identifier: MIT */
/* The token codec and the x-amz-rdma-reply parser (docs/protocol.md).
 * Pure functions: no state, no allocation. Outputs are written only on
 * success. */
#ifndef HO_RDMA_TOKEN_H
#define HO_RDMA_TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hipobj.h"

#define HO_TOKEN_BYTES 44
#define HO_TOKEN_HEX 88

enum ho_transport { HO_TRANSPORT_DC = 0, HO_TRANSPORT_RC = 1 };

struct ho_token {
  uint8_t transport;
  uint32_t qpn;
  uint8_t gid[16]; /* network order, as ibv_gid.raw */
  uint32_t rkey;
  uint64_t addr;
  uint64_t len;
  uint8_t port;
  uint16_t lid;
};

/* 88 lowercase hex digits and a NUL. */
void ho_token_encode(const struct ho_token *t, char out[HO_TOKEN_HEX + 1]);

/* Exactly 88 hex digits (either case), transport DC or RC. */
bool ho_token_decode(const char *hex, size_t len, struct ho_token *out);

/* The IPv4 address of an IPv4-mapped GID as a dotted quad; "" otherwise.
 * False only if buf is too small (16 bytes always suffice). */
bool ho_gid_ipv4(const uint8_t gid[16], char *buf, size_t len);

struct ho_reply {
  int status;            /* 100..599; ok is 200, err is 500 */
  bool has_peer;         /* the 200:<token> form */
  struct ho_token peer;  /* valid when has_peer */
  bool done;             /* done:<bytes>, status 200: the payload moved
                            before the answer (version 3) */
  bool rdma_failed;      /* rdma-failed, status 500: the server's RDMA
                            failed before the answer; nothing committed */
  uint64_t bytes;        /* valid when done */
};

/* Version 3 (docs/protocol.md, section 5): a client token's port byte
 * carries the data-first flag in its top bit: the client bound the
 * transfer's window on the connection the token proposes, so the server
 * may move the payload before it answers. */
#define HO_TOKEN_DATA_FIRST 0x80u
#define HO_REPLY_DONE HIPOBJ_RDMA_REPLY_DONE_PREFIX
#define HO_REPLY_RDMA_FAILED HIPOBJ_RDMA_REPLY_RDMA_FAILED

static inline bool ho_token_data_first(const struct ho_token *t)
{
  return (t->port & HO_TOKEN_DATA_FIRST) != 0;
}

/* Strict grammar: trailing NUL/CR/LF ignored, then exactly one of ok, err,
 * three digits 100..599, or 200:<88 hex digits with a valid transport>. */
bool ho_reply_parse(const char *s, size_t len, struct ho_reply *out);

/* 200, 204, 206. */
bool ho_status_is_success(int status);

/* ---- persistent connections (docs/protocol.md, section 5) -------------
 * In a client token the QP number's top byte is the reuse tag: 0 for a new
 * connection, else the tag of the connection the client proposes to ride;
 * the QP named is then that connection's spare, announced in its last ready
 * message. A server token's reserved rkey and length fields carry the
 * server's offer. */
static inline uint32_t ho_token_qpn(const struct ho_token *t)
{
  return t->qpn & 0xffffff;
}
static inline uint8_t ho_token_tag(const struct ho_token *t)
{
  return (uint8_t)(t->qpn >> 24);
}
/* A connection ID's tag: its top byte, never 0 for an ID a server draws. */
static inline uint8_t ho_conn_tag(uint64_t conn_id)
{
  return (uint8_t)(conn_id >> 56);
}

/* The offer's flags (its rkey field's third byte). */
#define HO_OFFER_PROBES 0x01u

struct ho_conn_offer {
  uint8_t version;  /* HO_PROTO_V1: both fields zero, a connection per
                       transfer; HO_PROTO_V2: the fields below */
  bool reuse;       /* the transfer rides the proposed connection */
  bool probes;      /* version 3: the server's QP acknowledges a zero-length
                       RDMA WRITE (a liveness probe); offered only to a
                       token that set the data-first bit */
  uint64_t conn_id; /* the connection's ID (ho_conn_tag() != 0) */
};

/* The fixed fields of a server token (the one in a 200:<token> reply):
 * transport RC, the QP number's top byte 0 (a server never tags), a port
 * number (not 0), and the LID as the client token's: 0 on RoCE (`roce`, the
 * client's port is Ethernet), a unicast LID (1..0xbfff) on InfiniBand. The
 * offer fields are checked by ho_offer_decode(). */
bool ho_server_token_ok(const struct ho_token *server, bool roce);

/* Strict: rkey and length both zero (version 1), or rkey bytes
 * {2, 0|1, 0, 0} with a connection ID whose tag is not 0 (version 2). */
bool ho_offer_decode(const struct ho_token *server, struct ho_conn_offer *out);
void ho_offer_encode(const struct ho_conn_offer *o, struct ho_token *server);

#endif
