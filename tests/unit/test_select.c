/* SPDX-License-Identifier: MIT */
/* NIC and GID selection over hand-made tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "rdma/select.h"

/* ---- GIDs --------------------------------------------------------------- */

#define V1 HO_GID_ROCE_V1
#define V2 HO_GID_ROCE_V2
#define IB HO_GID_IB
#define UNK HO_GID_UNKNOWN

static const uint8_t link_local[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0,
                                       0x02, 0x10, 0x18, 0xff, 0xfe, 1, 2, 3};
static const uint8_t v4_mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0,
                                      0, 0, 0xff, 0xff, 10, 0, 0, 7};
static const uint8_t global[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0,
                                   0, 0, 0, 0, 0, 0, 0, 7};
static const uint8_t zero[16];

static struct ho_gid_entry gid(int index, const uint8_t raw[16],
                               enum ho_gid_type type)
{
  struct ho_gid_entry e = {.index = index, .type = type};
  memcpy(e.raw, raw, 16);
  return e;
}

/* What bnxt_re shows on a port with an IPv6 link-local, an IPv4 and a
 * global IPv6 address: each address twice, RoCE v1 then v2. */
static void bnxt_table(struct ho_gid_entry t[6])
{
  t[0] = gid(0, link_local, V1);
  t[1] = gid(1, link_local, V2);
  t[2] = gid(2, v4_mapped, V1);
  t[3] = gid(3, v4_mapped, V2);
  t[4] = gid(4, global, V1);
  t[5] = gid(5, global, V2);
}

static void test_gid_bnxt_prefers_v2_ipv4(void **state)
{
  (void)state;
  struct ho_gid_entry t[6];
  bnxt_table(t);
  assert_int_equal(ho_select_gid(t, 6), 3);
}

/* Take the best entry away, again and again: the full preference order. */
static void test_gid_order_by_removal(void **state)
{
  (void)state;
  struct ho_gid_entry t[6];
  bnxt_table(t);
  static const int expected[] = {3, 5, 1, 2, 4, 0};
  for (size_t k = 0; k < 6; k++) {
    int got = ho_select_gid(t, 6);
    assert_int_equal(got, expected[k]);
    t[got].type = UNK; /* removed */
  }
  assert_int_equal(ho_select_gid(t, 6), 0); /* no candidate */
}

/* Every ordered pair of classes, at both relative positions: the better
 * class wins whichever index it has. Catches an inverted order. */
static void test_gid_pairwise_order(void **state)
{
  (void)state;
  const struct {
    const uint8_t *raw;
    enum ho_gid_type type;
  } best_first[] = {
      {v4_mapped, V2}, {global, V2}, {link_local, V2}, {global, V1},
      {link_local, V1},
  };
  size_t n = sizeof best_first / sizeof best_first[0];
  for (size_t a = 0; a < n; a++) {
    for (size_t b = a + 1; b < n; b++) {
      struct ho_gid_entry t[2] = {gid(4, best_first[a].raw, best_first[a].type),
                                  gid(9, best_first[b].raw, best_first[b].type)};
      assert_int_equal(ho_select_gid(t, 2), 4);
      t[0].index = 9;
      t[1].index = 4;
      assert_int_equal(ho_select_gid(t, 2), 9);
    }
  }
}

static void test_gid_zero_and_unknown_skipped(void **state)
{
  (void)state;
  struct ho_gid_entry t[] = {
      gid(0, zero, V2),          /* unconfigured, though v2 */
      gid(1, v4_mapped, UNK),    /* best address, unknown type */
      gid(2, global, UNK),
      gid(3, link_local, V1),    /* the only candidate */
      gid(4, zero, V1),
  };
  assert_int_equal(ho_select_gid(t, 5), 3);
}

static void test_gid_ties_to_lowest_index(void **state)
{
  (void)state;
  struct ho_gid_entry t[] = {
      gid(7, v4_mapped, V2), gid(3, v4_mapped, V2), gid(5, v4_mapped, V2),
      gid(1, global, V2),
  };
  assert_int_equal(ho_select_gid(t, 4), 3);
}

static void test_gid_no_candidate(void **state)
{
  (void)state;
  struct ho_gid_entry t[] = {gid(2, zero, V2), gid(5, global, UNK),
                             gid(6, v4_mapped, (enum ho_gid_type)99)};
  assert_int_equal(ho_select_gid(t, 3), 0);
  assert_int_equal(ho_select_gid(t, 0), 0);
  assert_int_equal(ho_select_gid(NULL, 4), 0);
}

static void test_gid_negative_index_skipped(void **state)
{
  (void)state;
  struct ho_gid_entry t[] = {gid(-1, v4_mapped, V2), gid(6, global, V1)};
  assert_int_equal(ho_select_gid(t, 2), 6);
}

/* An InfiniBand port's GIDs: no RoCE candidate, so IB ranks last, global
 * before link-local, ties to the lowest index. */
static void test_gid_infiniband(void **state)
{
  (void)state;
  struct ho_gid_entry t[] = {gid(0, link_local, IB), gid(1, global, IB),
                             gid(2, global, IB)};
  assert_int_equal(ho_select_gid(t, 3), 1);
  struct ho_gid_entry u[] = {gid(0, link_local, IB), gid(1, link_local, V1)};
  assert_int_equal(ho_select_gid(u, 2), 1);
}

/* Link-local is fe80::/10, not just fe80::/16. */
static void test_gid_link_local_prefix(void **state)
{
  (void)state;
  uint8_t febf[16];
  memcpy(febf, link_local, 16);
  febf[1] = 0xbf; /* still fe80::/10 */
  uint8_t fec0[16];
  memcpy(fec0, link_local, 16);
  fec0[1] = 0xc0; /* outside: counts as global */
  struct ho_gid_entry t[] = {gid(0, febf, V2), gid(1, fec0, V2)};
  assert_int_equal(ho_select_gid(t, 2), 1);
  /* ::ffff:0:0/96 only: ::fffe:... is no IPv4-mapped address. */
  uint8_t near[16];
  memcpy(near, v4_mapped, 16);
  near[11] = 0xfe;
  struct ho_gid_entry u[] = {gid(0, near, V2), gid(1, v4_mapped, V2)};
  assert_int_equal(ho_select_gid(u, 2), 1);
}

/* ---- bus-id distance ---------------------------------------------------- */

static void test_distance(void **state)
{
  (void)state;
  assert_int_equal(ho_bus_id_distance("0000:c1:00.0", "0000:c1:00.0"), 0);
  /* The function is ignored. */
  assert_int_equal(ho_bus_id_distance("0000:c1:00.0", "0000:c1:00.1"), 0);
  assert_int_equal(ho_bus_id_distance("0000:c1:00.0", "0000:c1:01.0"), 1);
  assert_int_equal(ho_bus_id_distance("0000:c1:00.0", "0000:c2:00.0"), 4);
  assert_int_equal(ho_bus_id_distance("0000:c1:00.0", "0000:41:00.0"), 5);
  assert_int_equal(ho_bus_id_distance("0000:c1:00.0", "0001:c1:00.0"), 7);
  /* Symmetric. */
  assert_int_equal(ho_bus_id_distance("0000:41:00.0", "0000:c1:00.0"), 5);
}

static void test_distance_spellings(void **state)
{
  (void)state;
  /* Upper case (as CUDA prints it), an 8-digit domain, no domain. */
  assert_int_equal(ho_bus_id_distance("0000:C1:00.0", "0000:c1:00.0"), 0);
  assert_int_equal(ho_bus_id_distance("00000000:c1:00.0", "0000:c1:00.0"), 0);
  assert_int_equal(ho_bus_id_distance("c1:00.0", "0000:c1:00.3"), 0);
  assert_int_equal(ho_bus_id_distance("10000:c1:00.0", "0000:c1:00.0"), 11);
}

static void test_distance_unknown(void **state)
{
  (void)state;
  assert_int_equal(ho_bus_id_distance(NULL, "0000:c1:00.0"), SIZE_MAX);
  assert_int_equal(ho_bus_id_distance("0000:c1:00.0", NULL), SIZE_MAX);
  assert_int_equal(ho_bus_id_distance("", "0000:c1:00.0"), SIZE_MAX);
  assert_int_equal(ho_bus_id_distance("0000:c1:00.0", ""), SIZE_MAX);
  char huge[300];
  memset(huge, 'a', sizeof huge - 1);
  huge[sizeof huge - 1] = '\0';
  assert_true(ho_bus_id_distance(huge, "0000:c1:00.0") < SIZE_MAX);
  assert_true(ho_bus_id_distance("....", ":::") < SIZE_MAX);
}

/* ---- NIC selection ------------------------------------------------------ */

static struct ho_nic_info nic(const char *name, const char *bus, int port)
{
  struct ho_nic_info n = {.numa_node = -1, .active_port = port};
  strcpy(n.name, name);
  strcpy(n.bus_id, bus);
  return n;
}

static hipObjOpError_t pick(const struct ho_nic_info *nics, size_t n,
                            const char *gpu, const char *hint,
                            char out[HO_NIC_NAME_MAX])
{
  memset(out, 'X', HO_NIC_NAME_MAX);
  return ho_select_nic(nics, n, gpu, hint, out);
}

static void assert_untouched(const char out[HO_NIC_NAME_MAX])
{
  for (size_t i = 0; i < HO_NIC_NAME_MAX; i++)
    assert_int_equal(out[i], 'X');
}

static void test_nic_closest(void **state)
{
  (void)state;
  struct ho_nic_info t[] = {nic("mlx5_0", "0000:41:00.0", 1),
                            nic("mlx5_1", "0000:c1:00.0", 1),
                            nic("mlx5_2", "0000:81:00.0", 1)};
  char out[HO_NIC_NAME_MAX];
  assert_int_equal(pick(t, 3, "0000:c2:00.0", NULL, out), hipObjSuccess);
  assert_string_equal(out, "mlx5_1");
  assert_int_equal(pick(t, 3, "0000:42:00.0", "", out), hipObjSuccess);
  assert_string_equal(out, "mlx5_0");
  assert_int_equal(pick(t, 3, "0000:81:00.0", NULL, out), hipObjSuccess);
  assert_string_equal(out, "mlx5_2");
}

static void test_nic_function_ignored(void **state)
{
  (void)state;
  struct ho_nic_info t[] = {nic("bnxt_re0", "0000:c1:01.0", 1),
                            nic("bnxt_re1", "0000:c1:00.1", 1)};
  char out[HO_NIC_NAME_MAX];
  assert_int_equal(pick(t, 2, "0000:c1:00.0", NULL, out), hipObjSuccess);
  assert_string_equal(out, "bnxt_re1");
}

static void test_nic_tie_goes_to_first(void **state)
{
  (void)state;
  struct ho_nic_info t[] = {nic("ionic_1", "0000:c1:00.0", 1),
                            nic("ionic_0", "0000:c1:00.1", 1),
                            nic("ionic_2", "0000:c1:00.2", 1)};
  char out[HO_NIC_NAME_MAX];
  assert_int_equal(pick(t, 3, "0000:c1:00.0", NULL, out), hipObjSuccess);
  assert_string_equal(out, "ionic_1");
}

static void test_nic_inactive_and_unknown_skipped(void **state)
{
  (void)state;
  struct ho_nic_info t[] = {nic("near_down", "0000:c1:00.0", 0),
                            nic("no_bus", "", 1),
                            nic("far_up", "0000:01:00.0", 2)};
  char out[HO_NIC_NAME_MAX];
  assert_int_equal(pick(t, 3, "0000:c1:00.0", NULL, out), hipObjSuccess);
  assert_string_equal(out, "far_up");
}

static void test_nic_allow_list(void **state)
{
  (void)state;
  struct ho_nic_info t[] = {nic("mlx5_0", "0000:41:00.0", 1),
                            nic("mlx5_1", "0000:c1:00.0", 1),
                            nic("mlx5_2", "0000:c2:00.0", 1)};
  char out[HO_NIC_NAME_MAX];
  /* The closest is not allowed. */
  assert_int_equal(pick(t, 3, "0000:c1:00.0", "mlx5_0", out), hipObjSuccess);
  assert_string_equal(out, "mlx5_0");
  /* Closest among the allowed, with blanks and empty names in the list. */
  assert_int_equal(pick(t, 3, "0000:c1:00.0", " mlx5_0 ,, mlx5_2\t", out),
                   hipObjSuccess);
  assert_string_equal(out, "mlx5_2");
  /* Names match whole, not as prefixes. */
  assert_int_equal(pick(t, 3, "0000:c1:00.0", "mlx5_0,mlx5", out),
                   hipObjSuccess);
  assert_string_equal(out, "mlx5_0");
}

/* A hint naming no listed NIC is opened as given, even with a GPU. */
static void test_nic_hint_when_nothing_matches(void **state)
{
  (void)state;
  struct ho_nic_info t[] = {nic("mlx5_0", "0000:41:00.0", 1)};
  char out[HO_NIC_NAME_MAX];
  assert_int_equal(pick(t, 1, "0000:c1:00.0", "rxe0,mlx5_9", out),
                   hipObjSuccess);
  assert_string_equal(out, "rxe0");
}

static void test_nic_no_gpu_with_hint(void **state)
{
  (void)state;
  struct ho_nic_info t[] = {nic("mlx5_0", "0000:41:00.0", 1),
                            nic("rxe0", "", 1)};
  char out[HO_NIC_NAME_MAX];
  assert_int_equal(pick(t, 2, NULL, " ,rxe0,mlx5_0", out), hipObjSuccess);
  assert_string_equal(out, "rxe0");
  assert_int_equal(pick(t, 2, "", "mlx5_0", out), hipObjSuccess);
  assert_string_equal(out, "mlx5_0");
  /* GPU-less hosts need no device list at all. */
  assert_int_equal(pick(NULL, 0, NULL, "rxe0", out), hipObjSuccess);
  assert_string_equal(out, "rxe0");
}

static void test_nic_no_gpu_no_hint(void **state)
{
  (void)state;
  struct ho_nic_info t[] = {nic("mlx5_0", "0000:41:00.0", 1)};
  char out[HO_NIC_NAME_MAX];
  assert_int_equal(pick(t, 1, NULL, NULL, out), hipObjNicNotFound);
  assert_untouched(out);
  assert_int_equal(pick(t, 1, "", "", out), hipObjNicNotFound);
  assert_untouched(out);
  assert_int_equal(pick(t, 1, NULL, " , ,", out), hipObjNicNotFound);
  assert_untouched(out);
}

static void test_nic_no_active_nic(void **state)
{
  (void)state;
  struct ho_nic_info t[] = {nic("mlx5_0", "0000:c1:00.0", 0),
                            nic("mlx5_1", "0000:c2:00.0", 0)};
  char out[HO_NIC_NAME_MAX];
  assert_int_equal(pick(t, 2, "0000:c1:00.0", NULL, out), hipObjNicNotFound);
  assert_untouched(out);
  assert_int_equal(pick(NULL, 0, "0000:c1:00.0", NULL, out),
                   hipObjNicNotFound);
  assert_untouched(out);
  /* With a hint, the hint is opened as given. */
  assert_int_equal(pick(t, 2, "0000:c1:00.0", "mlx5_1", out), hipObjSuccess);
  assert_string_equal(out, "mlx5_1");
}

static void test_nic_bad_hint_name(void **state)
{
  (void)state;
  char longname[HO_NIC_NAME_MAX + 8];
  memset(longname, 'n', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  char out[HO_NIC_NAME_MAX];
  assert_int_equal(pick(NULL, 0, NULL, longname, out), hipObjNicNotFound);
  assert_untouched(out);
  /* The longest name that fits. */
  longname[HO_NIC_NAME_MAX - 1] = '\0';
  assert_int_equal(pick(NULL, 0, NULL, longname, out), hipObjSuccess);
  assert_string_equal(out, longname);
}

static void test_nic_invalid_arguments(void **state)
{
  (void)state;
  char out[HO_NIC_NAME_MAX];
  struct ho_nic_info t[] = {nic("mlx5_0", "0000:41:00.0", 1)};
  assert_int_equal(ho_select_nic(t, 1, "0000:41:00.0", NULL, NULL),
                   hipObjInvalidValue);
  assert_int_equal(pick(NULL, 3, "0000:41:00.0", "x", out),
                   hipObjInvalidValue);
  assert_untouched(out);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gid_bnxt_prefers_v2_ipv4),
      cmocka_unit_test(test_gid_order_by_removal),
      cmocka_unit_test(test_gid_pairwise_order),
      cmocka_unit_test(test_gid_zero_and_unknown_skipped),
      cmocka_unit_test(test_gid_ties_to_lowest_index),
      cmocka_unit_test(test_gid_no_candidate),
      cmocka_unit_test(test_gid_negative_index_skipped),
      cmocka_unit_test(test_gid_infiniband),
      cmocka_unit_test(test_gid_link_local_prefix),
      cmocka_unit_test(test_distance),
      cmocka_unit_test(test_distance_spellings),
      cmocka_unit_test(test_distance_unknown),
      cmocka_unit_test(test_nic_closest),
      cmocka_unit_test(test_nic_function_ignored),
      cmocka_unit_test(test_nic_tie_goes_to_first),
      cmocka_unit_test(test_nic_inactive_and_unknown_skipped),
      cmocka_unit_test(test_nic_allow_list),
      cmocka_unit_test(test_nic_hint_when_nothing_matches),
      cmocka_unit_test(test_nic_no_gpu_with_hint),
      cmocka_unit_test(test_nic_no_gpu_no_hint),
      cmocka_unit_test(test_nic_no_active_nic),
      cmocka_unit_test(test_nic_bad_hint_name),
      cmocka_unit_test(test_nic_invalid_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
