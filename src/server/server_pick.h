/* SPDX-License-Identifier: MIT */
/* Which of a server's engines (one per NIC, a rail each) serves a client
 * that asks for a new connection: pure functions over what the server
 * knows of its engines, so that the tests can feed them any GIDs. */
#ifndef HO_SERVER_PICK_H
#define HO_SERVER_PICK_H

#include <stdbool.h>
#include <stdint.h>

/* What the choice looks at in one engine. */
struct ho_pick_engine {
  uint8_t gid[16];  /* its port's GID (the one its QPs use), network order */
  unsigned running; /* transfers in flight on it */
};

/* Whether two GIDs are on the same subnet: both IPv4-mapped
 * (::ffff:a.b.c.d, RoCE v2) and in the same /24, or neither and with the
 * same /64 prefix. The netmask is not known here (verbs do not report
 * it): /24 and /64 are the common ones. An all-zero GID matches nothing. */
bool ho_gid_same_subnet(const uint8_t a[16], const uint8_t b[16]);

/* The engine in [0, n) to try first for a client whose token names
 * client_gid: one on the client's subnet (ho_gid_same_subnet) before any
 * other, then the fewest transfers in flight, then the first from
 * turn % n on (the caller advances turn per call: the round robin among
 * equals). n > 0. */
uint32_t ho_server_pick(const struct ho_pick_engine *e, uint32_t n,
                        const uint8_t client_gid[16], unsigned turn);

#endif
