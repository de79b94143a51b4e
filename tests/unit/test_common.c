/* SPDX-License-Identifier: MIT */
/* The shared helpers of src/common: hex both ways, sizes and counts. The
 * library, the test server, the S3 glue and the hipobj command all use
 * these, so one rule is checked here for all of them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/hex.h"
#include "common/size.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void hex_digits(void **state)
{
  (void)state;
  const char *digits = "0123456789abcdef";
  for (int i = 0; i < 16; i++) {
    assert_int_equal(ho_hex_digit(digits[i]), i);
    if (i >= 10)
      assert_int_equal(ho_hex_digit((char)(digits[i] - 'a' + 'A')), i);
  }
  /* Every other byte is no digit, including the neighbours of the ranges
   * and bytes with the high bit set. */
  for (int c = -128; c < 128; c++) {
    bool digit = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
                 (c >= 'A' && c <= 'F');
    if (!digit)
      assert_int_equal(ho_hex_digit((char)c), -1);
  }
}

static void hex_round_trip(void **state)
{
  (void)state;
  uint8_t all[256], back[256];
  char text[2 * sizeof all + 1];
  for (size_t i = 0; i < sizeof all; i++)
    all[i] = (uint8_t)i;
  ho_hex_encode(all, sizeof all, text);
  assert_int_equal(strlen(text), 2 * sizeof all);
  assert_memory_equal(text, "000102", 6);
  assert_string_equal(text + 2 * 250, "fafbfcfdfeff");
  assert_true(ho_hex_decode(text, strlen(text), back, sizeof back));
  assert_memory_equal(all, back, sizeof all);

  ho_hex_encode(all, 0, text);
  assert_string_equal(text, "");
  uint8_t one;
  assert_true(ho_hex_decode("Af", 2, &one, 1));
  assert_int_equal(one, 0xaf);
}

static void hex_refusals(void **state)
{
  (void)state;
  uint8_t out[4] = {1, 2, 3, 4};
  const uint8_t untouched[4] = {1, 2, 3, 4};
  /* Wrong length, odd length, a bad digit anywhere (also the last), NULL. */
  assert_false(ho_hex_decode("0011223", 7, out, 4));
  assert_false(ho_hex_decode("0011223344", 10, out, 4));
  assert_false(ho_hex_decode("001122", 6, out, 4));
  assert_false(ho_hex_decode("001", 3, out, 1));
  assert_false(ho_hex_decode("0g112233", 8, out, 4));
  assert_false(ho_hex_decode("0011223x", 8, out, 4));
  assert_false(ho_hex_decode("00 12233", 8, out, 4));
  assert_false(ho_hex_decode("001122\0" "3", 8, out, 4));
  assert_false(ho_hex_decode(NULL, 8, out, 4));
  assert_memory_equal(out, untouched, sizeof out);
}

struct size_case {
  const char *text;
  uint64_t value;
};

static void sizes_accepted(void **state)
{
  (void)state;
  static const struct size_case ok[] = {
      {"0", 0},
      {"1", 1},
      {"007", 7},
      {"64K", 64ull << 10},
      {"64k", 64ull << 10},
      {"64Ki", 64ull << 10},
      {"64KiB", 64ull << 10},
      {"64KB", 64ull << 10},
      {"64kib", 64ull << 10},
      {"5M", 5ull << 20},
      {"5Mi", 5ull << 20},
      {"5MiB", 5ull << 20},
      {"5mB", 5ull << 20},
      {"5G", 5ull << 30},
      {"5g", 5ull << 30},
      {"1T", 1ull << 40},
      {"1TiB", 1ull << 40},
      {"0T", 0},
      {"16777215T", 16777215ull << 40},
      {"18446744073709551615", UINT64_MAX},
  };
  for (size_t i = 0; i < COUNT(ok); i++) {
    uint64_t v = 12345;
    if (!ho_parse_size(ok[i].text, &v))
      fail_msg("\"%s\" refused", ok[i].text);
    if (v != ok[i].value)
      fail_msg("\"%s\" is %llu, not %llu", ok[i].text,
               (unsigned long long)v, (unsigned long long)ok[i].value);
  }
}

static void sizes_refused(void **state)
{
  (void)state;
  static const char *const bad[] = {
      "", "K", "Ki", "B", "-1", "+1", " 5", "5 ", "5 M", "1.5M", "5X",
      "5B", "5i", "5iB", "5MM", "5MiBB", "5MB2", "5Bi", "0x10", "1e3",
      "18446744073709551616", "99999999999999999999", "16777216T",
      "17179869184G"};
  for (size_t i = 0; i < COUNT(bad); i++) {
    uint64_t v = 12345;
    if (ho_parse_size(bad[i], &v))
      fail_msg("\"%s\" accepted", bad[i]);
    assert_int_equal(v, 12345); /* untouched */
  }
  uint64_t v = 12345;
  assert_false(ho_parse_size(NULL, &v));
}

static void counts(void **state)
{
  (void)state;
  uint64_t v = 12345;
  assert_true(ho_parse_uint("0", 10, &v));
  assert_int_equal(v, 0);
  assert_true(ho_parse_uint("65535", 65535, &v));
  assert_int_equal(v, 65535);
  assert_true(ho_parse_uint("18446744073709551615", UINT64_MAX, &v));
  assert_int_equal(v, UINT64_MAX);
  static const char *const bad[] = {"", "65536", "1K", "-1", "+1", " 1",
                                    "1 ", "0x1", "18446744073709551616"};
  for (size_t i = 0; i < COUNT(bad); i++) {
    v = 12345;
    if (ho_parse_uint(bad[i], 65535, &v))
      fail_msg("\"%s\" accepted", bad[i]);
    assert_int_equal(v, 12345);
  }
  assert_false(ho_parse_uint(NULL, 1, &v));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(hex_digits),     cmocka_unit_test(hex_round_trip),
      cmocka_unit_test(hex_refusals),   cmocka_unit_test(sizes_accepted),
      cmocka_unit_test(sizes_refused),  cmocka_unit_test(counts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
