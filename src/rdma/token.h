/* SPDX-License-Identifier: MIT */
/* The token codec and the x-amz-rdma-reply parser (docs/protocol.md).
 * Pure functions: no state, no allocation. Outputs are written only on
 * success. */
#ifndef HO_RDMA_TOKEN_H
#define HO_RDMA_TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
};

/* Strict grammar: trailing NUL/CR/LF ignored, then exactly one of ok, err,
 * three digits 100..599, or 200:<88 hex digits with a valid transport>. */
bool ho_reply_parse(const char *s, size_t len, struct ho_reply *out);

/* 200, 204, 206. */
bool ho_status_is_success(int status);

#endif
