/* SPDX-License-Identifier: MIT */
#include "server_pick.h"

#include <string.h>

static const uint8_t v4_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

static bool is_ipv4(const uint8_t g[16])
{
  return memcmp(g, v4_prefix, sizeof v4_prefix) == 0;
}

static bool is_zero(const uint8_t g[16])
{
  static const uint8_t zero[16];
  return memcmp(g, zero, sizeof zero) == 0;
}

bool ho_gid_same_subnet(const uint8_t a[16], const uint8_t b[16])
{
  if (is_zero(a) || is_zero(b) || is_ipv4(a) != is_ipv4(b))
    return false;
  if (is_ipv4(a))
    return memcmp(a + 12, b + 12, 3) == 0; /* a /24 */
  return memcmp(a, b, 8) == 0;             /* a /64 */
}

/* Whether engine x is a better choice than engine y for the client. */
static bool better(const struct ho_pick_engine *x,
                   const struct ho_pick_engine *y, const uint8_t client[16])
{
  bool xs = ho_gid_same_subnet(x->gid, client);
  bool ys = ho_gid_same_subnet(y->gid, client);
  if (xs != ys)
    return xs;
  return x->running < y->running;
}

uint32_t ho_server_pick(const struct ho_pick_engine *e, uint32_t n,
                        const uint8_t client_gid[16], unsigned turn)
{
  uint32_t start = turn % n;
  uint32_t best = start;
  for (uint32_t k = 1; k < n; k++) {
    uint32_t i = (start + k) % n;
    if (better(&e[i], &e[best], client_gid))
      best = i;
  }
  return best;
}
