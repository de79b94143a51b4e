/* SPDX-License-Identifier: MIT */
/* Which of a server's rails serves a new connection (src/server/
 * server_pick.c), over fabricated GIDs: the client's subnet first, then
 * the least busy, then the round robin. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "server_pick.h"

/* ::ffff:a.b.c.d */
static void v4(uint8_t g[16], uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
  memset(g, 0, 16);
  g[10] = g[11] = 0xff;
  g[12] = a;
  g[13] = b;
  g[14] = c;
  g[15] = d;
}

/* prefix:0:0:0:iid, the prefix's 8 bytes given as a 64-bit number */
static void v6(uint8_t g[16], uint64_t prefix, uint64_t iid)
{
  for (int i = 0; i < 8; i++) {
    g[i] = (uint8_t)(prefix >> (56 - 8 * i));
    g[8 + i] = (uint8_t)(iid >> (56 - 8 * i));
  }
}

static struct ho_pick_engine engine_v4(uint8_t c, uint8_t d, unsigned running)
{
  struct ho_pick_engine e = {.running = running};
  v4(e.gid, 10, 213, c, d);
  return e;
}

static void same_subnet_ipv4_is_a_slash_24(void **state)
{
  (void)state;
  uint8_t a[16], b[16];
  v4(a, 10, 213, 3, 1);
  v4(b, 10, 213, 3, 254);
  assert_true(ho_gid_same_subnet(a, b));
  v4(b, 10, 213, 4, 1); /* the third octet differs */
  assert_false(ho_gid_same_subnet(a, b));
  v4(b, 10, 214, 3, 1);
  assert_false(ho_gid_same_subnet(a, b));
  v4(b, 11, 213, 3, 1);
  assert_false(ho_gid_same_subnet(a, b));
}

static void same_subnet_ipv6_is_a_slash_64(void **state)
{
  (void)state;
  uint8_t a[16], b[16];
  v6(a, 0x20010db800000001ull, 7);
  v6(b, 0x20010db800000001ull, 0x0210189ffe010203ull);
  assert_true(ho_gid_same_subnet(a, b));
  v6(b, 0x20010db800000002ull, 7); /* the prefix's last byte */
  assert_false(ho_gid_same_subnet(a, b));
  v6(b, 0x30010db800000001ull, 7); /* its first */
  assert_false(ho_gid_same_subnet(a, b));
}

static void same_subnet_never_across_families_or_zero(void **state)
{
  (void)state;
  uint8_t a[16], b[16], zero[16] = {0};
  v4(a, 10, 0, 0, 1);
  /* an IPv6 GID whose first eight bytes are an IPv4-mapped GID's */
  v6(b, 0, 0x0001ffff0a000002ull);
  assert_false(ho_gid_same_subnet(a, b));
  assert_false(ho_gid_same_subnet(b, a));
  assert_false(ho_gid_same_subnet(zero, zero));
  assert_false(ho_gid_same_subnet(a, zero));
  assert_false(ho_gid_same_subnet(zero, a));
}

/* Two rails, 10.213.3.0/24 and 10.213.4.0/24: a client on either is
 * served by its own subnet's NIC, whatever the turn and however busy. */
static void pick_the_clients_subnet(void **state)
{
  (void)state;
  struct ho_pick_engine e[2] = {engine_v4(3, 2, 0), engine_v4(4, 2, 0)};
  uint8_t a[16], b[16];
  v4(a, 10, 213, 3, 1);
  v4(b, 10, 213, 4, 1);
  for (unsigned turn = 0; turn < 4; turn++) {
    assert_int_equal(ho_server_pick(e, 2, a, turn), 0);
    assert_int_equal(ho_server_pick(e, 2, b, turn), 1);
  }
  e[0].running = 9; /* the subnet wins over the load */
  assert_int_equal(ho_server_pick(e, 2, a, 1), 0);
  e[1].running = 16;
  assert_int_equal(ho_server_pick(e, 2, b, 0), 1);
}

/* Among the NICs on the client's subnet: the least busy. */
static void pick_the_least_busy_on_the_subnet(void **state)
{
  (void)state;
  struct ho_pick_engine e[4] = {engine_v4(4, 2, 0), engine_v4(3, 2, 5),
                                engine_v4(3, 3, 2), engine_v4(3, 4, 7)};
  uint8_t c[16];
  v4(c, 10, 213, 3, 1);
  for (unsigned turn = 0; turn < 8; turn++)
    assert_int_equal(ho_server_pick(e, 4, c, turn), 2);
}

/* Equals take turns; the turn may wrap. */
static void equals_take_turns(void **state)
{
  (void)state;
  struct ho_pick_engine e[3] = {engine_v4(4, 2, 0), engine_v4(3, 2, 1),
                                engine_v4(3, 3, 1)};
  uint8_t c[16];
  v4(c, 10, 213, 3, 1);
  static const uint32_t want[6] = {1, 1, 2, 1, 1, 2};
  for (unsigned turn = 0; turn < 6; turn++)
    assert_int_equal(ho_server_pick(e, 3, c, turn), want[turn]);
  /* UINT_MAX % 3 == 0: the turn starts at 0, then 1 */
  assert_int_equal(ho_server_pick(e, 3, c, UINT_MAX), 1);
  assert_int_equal(ho_server_pick(e, 3, c, UINT_MAX - 1), 2);
}

/* No NIC on the client's subnet (a routed client, a malformed token's
 * zero GID): the least busy, then in turn, as without rails. */
static void no_subnet_match(void **state)
{
  (void)state;
  struct ho_pick_engine e[2] = {engine_v4(3, 2, 0), engine_v4(4, 2, 0)};
  uint8_t c[16], zero[16] = {0};
  v4(c, 192, 168, 0, 1);
  for (unsigned turn = 0; turn < 4; turn++) {
    assert_int_equal(ho_server_pick(e, 2, c, turn), turn % 2);
    assert_int_equal(ho_server_pick(e, 2, zero, turn), turn % 2);
  }
  e[0].running = 1;
  assert_int_equal(ho_server_pick(e, 2, c, 0), 1);
  assert_int_equal(ho_server_pick(e, 2, c, 1), 1);
  assert_int_equal(ho_server_pick(e, 1, c, 7), 0); /* one NIC */
}

/* InfiniBand-like ports: every GID under the fabric's fe80::/64 prefix
 * (the same subnet); an IPv6 client on another /64 matches neither. */
static void ipv6_rails(void **state)
{
  (void)state;
  struct ho_pick_engine e[2] = {{.running = 0}, {.running = 0}};
  v6(e[0].gid, 0x20010db8000a0000ull, 2);
  v6(e[1].gid, 0x20010db8000b0000ull, 2);
  uint8_t c[16];
  v6(c, 0x20010db8000b0000ull, 0x99);
  for (unsigned turn = 0; turn < 4; turn++)
    assert_int_equal(ho_server_pick(e, 2, c, turn), 1);
  v6(e[0].gid, 0xfe80000000000000ull, 2);
  v6(e[1].gid, 0xfe80000000000000ull, 3);
  v6(c, 0xfe80000000000000ull, 9);
  assert_int_equal(ho_server_pick(e, 2, c, 0), 0);
  assert_int_equal(ho_server_pick(e, 2, c, 1), 1);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(same_subnet_ipv4_is_a_slash_24),
      cmocka_unit_test(same_subnet_ipv6_is_a_slash_64),
      cmocka_unit_test(same_subnet_never_across_families_or_zero),
      cmocka_unit_test(pick_the_clients_subnet),
      cmocka_unit_test(pick_the_least_busy_on_the_subnet),
      cmocka_unit_test(equals_take_turns),
      cmocka_unit_test(no_subnet_match),
      cmocka_unit_test(ipv6_rails),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
