/* SPDX-License-Identifier: MIT */
/* The server's pure parsers: request target, percent decoding, bucket
 * names, query strings, Range, ETags, aws-chunked, sizes and addresses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "auth/awschunk.h"
#include "auth/checksum.h"
#include "config.h"
#include "etag.h"
#include "range.h"
#include "s3_internal.h"
#include "uri.h"

/* ---- target, path, query ------------------------------------------------ */

static void target_split(void **state)
{
  struct hs_span p, q;
  assert_true(hs_target_split("/b/k?x=1&y", 10, &p, &q));
  assert_int_equal(p.len, 4);
  assert_memory_equal(p.p, "/b/k", 4);
  assert_int_equal(q.len, 5);
  assert_memory_equal(q.p, "x=1&y", 5);
  assert_true(hs_target_split("/b/k", 4, &p, &q));
  assert_int_equal(q.len, 0);
  assert_true(hs_target_split("/b/k?", 5, &p, &q));
  assert_int_equal(p.len, 4);
  assert_int_equal(q.len, 0);
  /* the first '?' splits; later ones belong to the query */
  assert_true(hs_target_split("/k??a", 5, &p, &q));
  assert_int_equal(p.len, 2);
  assert_int_equal(q.len, 2);
  assert_false(hs_target_split("", 0, &p, &q));
  assert_false(hs_target_split("b/k", 3, &p, &q));
  assert_false(hs_target_split("http://h/b", 10, &p, &q));
  assert_false(hs_target_split("/a b", 4, &p, &q));
  assert_false(hs_target_split("/a#b", 4, &p, &q));
  assert_false(hs_target_split("/a\x01", 3, &p, &q));
  assert_false(hs_target_split("/a\0b", 4, &p, &q));
}

static void pct_decode(void **state)
{
  char out[32];
  size_t n;
  assert_true(hs_pct_decode("a%20b%2Fc%2fd+e", 15, false, out, sizeof out, &n));
  assert_string_equal(out, "a b/c/d+e");
  assert_int_equal(n, 9);
  assert_true(hs_pct_decode("a+b", 3, true, out, sizeof out, &n));
  assert_string_equal(out, "a b");
  assert_true(hs_pct_decode("%C3%A9", 6, false, out, sizeof out, &n));
  assert_string_equal(out, "\xc3\xa9");
  assert_true(hs_pct_decode("", 0, false, out, sizeof out, &n));
  assert_int_equal(n, 0);
  static const char *const bad[] = {"%", "%2", "%zz", "%g0", "a%00b",
                                    "%C3", "%C3%28", "%ED%A0%80", "%F5%80%80%80",
                                    "%C0%AF", "%E0%80%AF"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_false(hs_pct_decode(bad[i], strlen(bad[i]), false, out, sizeof out,
                               &n));
  /* exactly fits, one byte too many */
  assert_true(hs_pct_decode("abc", 3, false, out, 4, &n));
  assert_false(hs_pct_decode("abcd", 4, false, out, 4, &n));
}

static void bucket_names(void **state)
{
  static const char *const good[] = {"abc", "my-bucket", "a.b.c", "0123",
                                     "a-b.c-d",
                                     ("x23456789012345678901234567890"
                                      "1234567890123456789012345678901")};
  static const char *const bad[] = {"ab", "ABC", "a_b", "-abc", "abc-",
                                    ".abc", "abc.", "a..b", "a.-b", "a-.b",
                                    "192.168.1.1", "_hipobj", "a b",
                                    ("x234567890123456789012345678901234567890"
                                     "123456789012345678901234")};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
    assert_true(hs_bucket_name_valid(good[i]));
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_false(hs_bucket_name_valid(bad[i]));
}

static void path_parse(void **state)
{
  char b[HS_BUCKET_MAX + 1], k[HS_KEY_MAX + 1];
  size_t kl;
  assert_int_equal(hs_path_parse("/", 1, b, k, &kl), HS_OK);
  assert_string_equal(b, "");
  assert_int_equal(kl, 0);
  assert_int_equal(hs_path_parse("/bkt", 4, b, k, &kl), HS_OK);
  assert_string_equal(b, "bkt");
  assert_int_equal(kl, 0);
  assert_int_equal(hs_path_parse("/bkt/", 5, b, k, &kl), HS_OK);
  assert_int_equal(kl, 0);
  const char *p = "/bkt/a/b%20c/%2F/";
  assert_int_equal(hs_path_parse(p, strlen(p), b, k, &kl), HS_OK);
  assert_string_equal(k, "a/b c///");
  assert_int_equal(kl, 8);
  assert_int_equal(hs_path_parse("/bkt/%zz", 8, b, k, &kl),
                   HS_ERR_INVALID_URI);
  assert_int_equal(hs_path_parse("/bkt/a%00", 9, b, k, &kl),
                   HS_ERR_INVALID_URI);
  assert_int_equal(hs_path_parse("/b%2Fc/k", 8, b, k, &kl),
                   HS_ERR_INVALID_URI);
  /* 1024 bytes is the limit; 1025 is too long, encoded or not */
  char longp[4000] = "/bkt/";
  memset(longp + 5, 'k', 1024);
  assert_int_equal(hs_path_parse(longp, 5 + 1024, b, k, &kl), HS_OK);
  assert_int_equal(kl, 1024);
  memset(longp + 5, 'k', 1025);
  assert_int_equal(hs_path_parse(longp, 5 + 1025, b, k, &kl),
                   HS_ERR_KEY_TOO_LONG);
  for (int i = 0; i < 1025; i++)
    memcpy(longp + 5 + 3 * i, "%41", 3);
  assert_int_equal(hs_path_parse(longp, 5 + 3 * 1025, b, k, &kl),
                   HS_ERR_KEY_TOO_LONG);
  char longb[80] = "/";
  memset(longb + 1, 'b', 64);
  assert_int_equal(hs_path_parse(longb, 65, b, k, &kl), HS_ERR_INVALID_URI);
}

static void query_parse(void **state)
{
  struct hs_query q;
  const char *s = "list-type=2&prefix=a%2Fb+c&delimiter=&uploads&&x=%3D=";
  assert_int_equal(hs_query_parse(s, strlen(s), &q), HS_OK);
  assert_int_equal(q.n, 5);
  assert_string_equal(hs_query_get(&q, "list-type")->value, "2");
  assert_string_equal(hs_query_get(&q, "prefix")->value, "a/b c");
  assert_true(hs_query_get(&q, "delimiter")->has_value);
  assert_string_equal(hs_query_get(&q, "delimiter")->value, "");
  assert_false(hs_query_get(&q, "uploads")->has_value);
  assert_string_equal(hs_query_get(&q, "x")->value, "==");
  assert_null(hs_query_get(&q, "missing"));
  hs_query_free(&q);
  assert_int_equal(hs_query_parse("", 0, &q), HS_OK);
  assert_int_equal(q.n, 0);
  hs_query_free(&q);
  assert_int_equal(hs_query_parse("a=%zz", 5, &q), HS_ERR_INVALID_URI);
  assert_int_equal(hs_query_parse("=v", 2, &q), HS_ERR_INVALID_ARGUMENT);
  char many[1024] = "";
  for (int i = 0; i < 65; i++)
    strcat(many, "a=1&");
  assert_int_equal(hs_query_parse(many, strlen(many), &q),
                   HS_ERR_INVALID_ARGUMENT);
}

static void uri_encode(void **state)
{
  struct hs_buf b;
  hs_buf_init(&b, 0);
  hs_uri_encode(&b, "a b/c~d_e.f-g+h%\xc3\xa9", 18, true);
  assert_string_equal(hs_buf_cstr(&b), "a%20b/c~d_e.f-g%2Bh%25%C3%A9");
  hs_buf_free(&b);
  hs_uri_encode(&b, "a/b", 3, false);
  assert_string_equal(hs_buf_cstr(&b), "a%2Fb");
  hs_buf_free(&b);
}

/* ---- Range -------------------------------------------------------------- */

struct rcase {
  const char *h;
  uint64_t size;
  enum hs_range_result r;
  uint64_t first, count;
};

static void range_parse(void **state)
{
  static const struct rcase cases[] = {
      {"bytes=0-0", 10, HS_RANGE_OK, 0, 1},
      {"bytes=2-4", 10, HS_RANGE_OK, 2, 3},
      {"bytes=2-", 10, HS_RANGE_OK, 2, 8},
      {"bytes=-3", 10, HS_RANGE_OK, 7, 3},
      {"bytes=-30", 10, HS_RANGE_OK, 0, 10},
      {"bytes=5-100", 10, HS_RANGE_OK, 5, 5},
      {"Bytes=1-1", 10, HS_RANGE_OK, 1, 1},
      {"bytes= 1-2 ", 10, HS_RANGE_OK, 1, 2},
      {"bytes=0-99999999999999999999999", 10, HS_RANGE_OK, 0, 10},
      {"bytes=9-9", 10, HS_RANGE_OK, 9, 1},
      {"bytes=10-", 10, HS_RANGE_UNSATISFIABLE, 0, 0},
      {"bytes=10-20", 10, HS_RANGE_UNSATISFIABLE, 0, 0},
      {"bytes=-0", 10, HS_RANGE_UNSATISFIABLE, 0, 0},
      {"bytes=0-", 0, HS_RANGE_UNSATISFIABLE, 0, 0},
      {"bytes=-5", 0, HS_RANGE_UNSATISFIABLE, 0, 0},
      {"bytes=99999999999999999999999-", 10, HS_RANGE_UNSATISFIABLE, 0, 0},
      {"bytes=5-4", 10, HS_RANGE_IGNORE, 0, 0},
      {"bytes=1-2,4-5", 10, HS_RANGE_IGNORE, 0, 0},
      {"bytes=-", 10, HS_RANGE_IGNORE, 0, 0},
      {"bytes=", 10, HS_RANGE_IGNORE, 0, 0},
      {"bytes=a-b", 10, HS_RANGE_IGNORE, 0, 0},
      {"bytes=--1", 10, HS_RANGE_IGNORE, 0, 0},
      {"bytes=1-2-3", 10, HS_RANGE_IGNORE, 0, 0},
      {"bytes=+1-2", 10, HS_RANGE_IGNORE, 0, 0},
      {"items=0-1", 10, HS_RANGE_IGNORE, 0, 0},
      {"bytes 0-1", 10, HS_RANGE_IGNORE, 0, 0},
      {"", 10, HS_RANGE_IGNORE, 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint64_t f = 77, c = 77;
    const struct rcase *k = &cases[i];
    enum hs_range_result r = hs_range_parse(k->h, strlen(k->h), k->size, &f, &c);
    if (r != k->r)
      fail_msg("%s (size %llu): %d, want %d", k->h,
               (unsigned long long)k->size, r, k->r);
    if (r == HS_RANGE_OK) {
      assert_int_equal(f, k->first);
      assert_int_equal(c, k->count);
    } else {
      assert_int_equal(f, 77); /* outputs untouched */
      assert_int_equal(c, 77);
    }
  }
  /* the largest object: no overflow at the top */
  uint64_t f, c;
  assert_int_equal(hs_range_parse("bytes=-1", 8, UINT64_MAX, &f, &c),
                   HS_RANGE_OK);
  assert_int_equal(f, UINT64_MAX - 1);
  assert_int_equal(hs_range_parse("bytes=0-", 8, UINT64_MAX, &f, &c),
                   HS_RANGE_OK);
  assert_int_equal(c, UINT64_MAX);
}

/* ---- ETags -------------------------------------------------------------- */

static void etags(void **state)
{
  uint8_t md5[16];
  char e[HS_ETAG_MAX];
  hs_md5("", 0, md5);
  hs_etag_from_md5(md5, e);
  assert_string_equal(e, "d41d8cd98f00b204e9800998ecf8427e");
  /* two parts "a" and "b": md5(md5("a") || md5("b")) "-2" */
  uint8_t two[32];
  hs_md5("a", 1, two);
  hs_md5("b", 1, two + 16);
  hs_etag_multipart(two, 2, e);
  uint8_t d[16];
  hs_md5(two, 32, d);
  char hex[33];
  hs_hex(d, 16, hex);
  assert_memory_equal(e, hex, 32);
  assert_string_equal(e + 32, "-2");
  assert_true(hs_etag_normalize("\"D41D8CD98F00B204E9800998ECF8427E\"", 34, e));
  assert_string_equal(e, "d41d8cd98f00b204e9800998ecf8427e");
  assert_true(hs_etag_normalize("d41d8cd98f00b204e9800998ecf8427e-10000", 38,
                                e));
  static const char *const bad[] = {"", "\"\"", "abc",
                                    "d41d8cd98f00b204e9800998ecf8427",
                                    "d41d8cd98f00b204e9800998ecf8427g",
                                    "d41d8cd98f00b204e9800998ecf8427e-",
                                    "d41d8cd98f00b204e9800998ecf8427e-1x",
                                    "d41d8cd98f00b204e9800998ecf8427e-123456",
                                    "d41d8cd98f00b204e9800998ecf8427e0"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_false(hs_etag_normalize(bad[i], strlen(bad[i]), e));
  uint8_t b64[16];
  assert_true(hs_base64_decode("1B2M2Y8AsgTpgAmY7PhCfg==", 24, b64, 16));
  assert_memory_equal(b64, md5, 16);
  assert_false(hs_base64_decode("1B2M2Y8AsgTpgAmY7PhCfg=", 23, b64, 16));
  assert_false(hs_base64_decode("1B2M2Y8AsgTpgAmY7PhCfh==", 24, b64, 16));
  assert_false(hs_base64_decode("1B2M2Y8AsgTpgAmY7PhC!g==", 24, b64, 16));
}

/* ---- aws-chunked --------------------------------------------------------- */

struct sink {
  char data[4096];
  size_t n;
  unsigned chunks;
  unsigned sigs;
  unsigned trailers;
  enum hs_err fail_at_chunk;
};

static enum hs_err sink_data(void *ctx, const char *p, size_t n)
{
  struct sink *s = ctx;
  assert_true(s->n + n <= sizeof s->data);
  memcpy(s->data + s->n, p, n);
  s->n += n;
  return HS_OK;
}

static enum hs_err sink_end(void *ctx, uint64_t size, const char *sig)
{
  struct sink *s = ctx;
  s->chunks++;
  s->sigs += sig != NULL;
  return s->fail_at_chunk && s->chunks == 2 ? s->fail_at_chunk : HS_OK;
}

static enum hs_err sink_trailer(void *ctx, const char *l, size_t n)
{
  ((struct sink *)ctx)->trailers++;
  return HS_OK;
}

static const char SIG64[] =
    "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648";

static void awschunk(void **state)
{
  char body[512];
  snprintf(body, sizeof body,
           "5;chunk-signature=%s\r\nhello\r\n6;chunk-signature=%s\r\n world"
           "\r\n0;chunk-signature=%s\r\n\r\n",
           SIG64, SIG64, SIG64);
  size_t len = strlen(body);
  /* fed whole, and one byte at a time */
  for (int mode = 0; mode < 2; mode++) {
    struct sink s = {.n = 0};
    struct hs_awschunk_cbs cbs = {&s, sink_data, sink_end, sink_trailer};
    struct hs_awschunk c;
    hs_awschunk_init(&c);
    if (mode == 0) {
      assert_int_equal(hs_awschunk_feed(&c, body, len, &cbs), HS_OK);
    } else {
      for (size_t i = 0; i < len; i++)
        assert_int_equal(hs_awschunk_feed(&c, body + i, 1, &cbs), HS_OK);
    }
    assert_true(hs_awschunk_done(&c));
    assert_int_equal(s.n, 11);
    assert_memory_equal(s.data, "hello world", 11);
    assert_int_equal(s.chunks, 3);
    assert_int_equal(s.sigs, 3);
    /* nothing may follow */
    assert_int_equal(hs_awschunk_feed(&c, "x", 1, &cbs),
                     HS_ERR_INVALID_ARGUMENT);
  }
  /* unsigned, with a trailer */
  const char *t = "3\r\nabc\r\n0\r\nx-amz-checksum-crc32:AAAA\r\n\r\n";
  struct sink s = {.n = 0};
  struct hs_awschunk_cbs cbs = {&s, sink_data, sink_end, sink_trailer};
  struct hs_awschunk c;
  hs_awschunk_init(&c);
  assert_int_equal(hs_awschunk_feed(&c, t, strlen(t), &cbs), HS_OK);
  assert_true(hs_awschunk_done(&c));
  assert_int_equal(s.trailers, 1);
  assert_int_equal(s.sigs, 0);
  /* incomplete is not done */
  hs_awschunk_init(&c);
  assert_int_equal(hs_awschunk_feed(&c, t, strlen(t) - 2, &cbs), HS_OK);
  assert_false(hs_awschunk_done(&c));
  /* malformed framing */
  static const char *const bad[] = {
      "x\r\n", "3\nabc\r\n", "3\r\nabcd\r\n", "3;foo=bar\r\n",
      "3;chunk-signature=abc\r\n", "11111111111111111\r\n",
      "0\r\nno-colon\r\n\r\n", "3\r\nabc\r\r"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    hs_awschunk_init(&c);
    assert_int_equal(hs_awschunk_feed(&c, bad[i], strlen(bad[i]), &cbs),
                     HS_ERR_INVALID_ARGUMENT);
    /* and stays failed */
    assert_int_equal(hs_awschunk_feed(&c, "0\r\n\r\n", 5, &cbs),
                     HS_ERR_INVALID_ARGUMENT);
  }
  /* a callback's error stops the parser with that error */
  s.fail_at_chunk = HS_ERR_SIGNATURE;
  s.chunks = 0;
  s.n = 0;
  hs_awschunk_init(&c);
  assert_int_equal(hs_awschunk_feed(&c, body, len, &cbs), HS_ERR_SIGNATURE);
  /* a line longer than the limit */
  char longl[HS_AWSCHUNK_LINE_MAX + 10];
  memset(longl, '0', sizeof longl);
  hs_awschunk_init(&c);
  assert_int_equal(hs_awschunk_feed(&c, longl, sizeof longl, &cbs),
                   HS_ERR_INVALID_ARGUMENT);
}

/* ---- flexible checksums ------------------------------------------------ */

static void checksums(void **state)
{
  /* the catalogue's check values, over "123456789" */
  assert_int_equal(hs_crc32(0, "123456789", 9), 0xCBF43926u);
  assert_int_equal(hs_crc32c(0, "123456789", 9), 0xE3069283u);
  assert_true(hs_crc64nvme(0, "123456789", 9) == 0xAE8B14860A799888ull);
  /* incremental equals whole */
  assert_int_equal(hs_crc32(hs_crc32(0, "1234", 4), "56789", 5), 0xCBF43926u);
  /* joined from the parts' CRCs (a multipart object's full-object CRC),
   * at every cut, empty parts included */
  for (size_t cut = 0; cut <= 9; cut++) {
    const char *s = "123456789";
    size_t rest = 9 - cut;
    uint64_t j;
    assert_true(hs_crc_join(HS_CK_CRC32, hs_crc32(0, s, cut),
                            hs_crc32(0, s + cut, rest), rest, &j));
    assert_true(j == 0xCBF43926u);
    assert_true(hs_crc_join(HS_CK_CRC32C, hs_crc32c(0, s, cut),
                            hs_crc32c(0, s + cut, rest), rest, &j));
    assert_true(j == 0xE3069283u);
    assert_true(hs_crc_join(HS_CK_CRC64NVME, hs_crc64nvme(0, s, cut),
                            hs_crc64nvme(0, s + cut, rest), rest, &j));
    assert_true(j == 0xAE8B14860A799888ull);
  }
  uint64_t j;
  assert_false(hs_crc_join(HS_CK_SHA256, 0, 0, 0, &j));
  char b64[64];
  hs_base64_encode((const uint8_t *)"\xcb\xf4\x39\x26", 4, b64);
  assert_string_equal(b64, "y/Q5Jg==");
  hs_base64_encode((const uint8_t *)"ab", 2, b64);
  assert_string_equal(b64, "YWI=");
  hs_base64_encode((const uint8_t *)"abc", 3, b64);
  assert_string_equal(b64, "YWJj");
  assert_int_equal(hs_cksum_alg_of_header("X-Amz-Checksum-CRC32"),
                   HS_CK_CRC32);
  assert_int_equal(hs_cksum_alg_of_header("x-amz-checksum-crc64nvme"),
                   HS_CK_CRC64NVME);
  assert_int_equal(hs_cksum_alg_of_header("x-amz-checksum-md5"), HS_CK_NONE);
  static const struct {
    enum hs_cksum_alg alg;
    const char *b64;
  } ok[] = {{HS_CK_CRC32, "y/Q5Jg=="},
            {HS_CK_CRC32C, "4waSgw=="},
            {HS_CK_CRC64NVME, "rosUhgp5mIg="},
            {HS_CK_SHA1, "98O8HYCOBHMq32eZZczDTKeuNEE="},
            {HS_CK_SHA256, "FeKw08M4keuw8e9gnsQZQgwg4yDOlMZfvIwzEkSOsiU="}};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    struct hs_cksum c;
    assert_int_equal(hs_cksum_begin(&c, ok[i].alg), HS_OK);
    assert_int_equal(hs_cksum_expect(&c, ok[i].b64, strlen(ok[i].b64)),
                     HS_OK);
    hs_cksum_update(&c, "12345", 5);
    hs_cksum_update(&c, "6789", 4);
    uint8_t got[HS_CKSUM_MAX];
    hs_cksum_final(&c, got);
    assert_memory_equal(got, c.expected, hs_cksum_len(ok[i].alg));
    hs_cksum_free(&c);
  }
  struct hs_cksum c;
  hs_cksum_begin(&c, HS_CK_CRC32);
  assert_int_equal(hs_cksum_expect(&c, "y/Q5", 4), HS_ERR_INVALID_DIGEST);
  assert_int_equal(hs_cksum_expect(&c, "not base64", 10),
                   HS_ERR_INVALID_DIGEST);
  hs_cksum_free(&c);
}

/* ---- sizes, addresses, dates --------------------------------------------- */

/* The rule itself is tested in tests/unit/test_common.c; here, that the
 * options follow it ("5Mi" was refused once) and counts take no unit. */
static void sizes(void **state)
{
  struct hs_config c;
  struct hs_buf err;
  hs_buf_init(&err, 0);
  char *a1[] = {"x", "--min-part-size", "5Mi", "--max-object-size", "1GiB",
                "--rdma-chunk-size", "64k", NULL};
  assert_int_equal(hs_config_parse(7, a1, &c, &err), HS_CONFIG_OK);
  assert_int_equal(c.min_part_size, 5u << 20);
  assert_int_equal(c.max_object_size, 1ull << 30);
  assert_int_equal(c.rdma_chunk_size, 64u << 10);
  char *a2[] = {"x", "--max-connections", "1K", NULL};
  assert_int_equal(hs_config_parse(3, a2, &c, &err), HS_CONFIG_ERROR);
  hs_buf_free(&err);
  char *a3[] = {"x", "--max-object-size", "-1", NULL};
  assert_int_equal(hs_config_parse(3, a3, &c, &err), HS_CONFIG_ERROR);
  hs_buf_free(&err);
}

static void listen_addresses(void **state)
{
  char h[256];
  uint16_t p;
  assert_true(hs_parse_listen("127.0.0.1:9000", h, &p));
  assert_string_equal(h, "127.0.0.1");
  assert_int_equal(p, 9000);
  assert_true(hs_parse_listen("[::1]:0", h, &p));
  assert_string_equal(h, "::1");
  assert_int_equal(p, 0);
  assert_true(hs_parse_listen(":8080", h, &p));
  assert_string_equal(h, "127.0.0.1");
  assert_true(hs_parse_listen("localhost:65535", h, &p));
  static const char *const bad[] = {"127.0.0.1", "127.0.0.1:", "::1:80",
                                    "[::1]80", "h:65536", "h:8K", "h:-1",
                                    "[::1:80"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_false(hs_parse_listen(bad[i], h, &p));
}

static void config_parse(void **state)
{
  struct hs_config c;
  struct hs_buf err;
  hs_buf_init(&err, 0);
  char *a1[] = {"x", "--listen", "[::1]:0", "--data-dir", "/tmp/d",
                "--access-key", "K", "--secret-key", "S", "--decline-rdma",
                "--max-object-size", "1G", "--min-part-size", "0",
                "--max-clock-skew", "0", "--log-requests", NULL};
  assert_int_equal(hs_config_parse(17, a1, &c, &err), HS_CONFIG_OK);
  assert_string_equal(c.listen_host, "::1");
  assert_string_equal(c.data_dir, "/tmp/d");
  assert_string_equal(c.auth.access_key, "K");
  assert_true(c.decline_rdma && c.log_requests);
  assert_int_equal(c.max_object_size, 1ull << 30);
  assert_int_equal(c.min_part_size, 0);
  assert_int_equal(c.auth.max_clock_skew_s, 0);
  char *a2[] = {"x", NULL};
  assert_int_equal(hs_config_parse(1, a2, &c, &err), HS_CONFIG_OK);
  assert_string_equal(c.listen_host, "127.0.0.1");
  assert_int_equal(c.listen_port, 9000);
  assert_null(c.data_dir);
  assert_int_equal(c.max_object_size, 5ull << 30);
  assert_int_equal(c.min_part_size, 5u << 20);
  char *a3[] = {"x", "--help", NULL};
  assert_int_equal(hs_config_parse(2, a3, &c, &err), HS_CONFIG_HELP);
  char *a4[] = {"x", "--access-key", "K", NULL};
  unsetenv("HIPOBJ_TEST_SERVER_SECRET_KEY");
  assert_int_equal(hs_config_parse(3, a4, &c, &err), HS_CONFIG_ERROR);
  assert_non_null(strstr(hs_buf_cstr(&err), "go together"));
  hs_buf_free(&err);
  char *a5[] = {"x", "--max-object-size", "huge", NULL};
  assert_int_equal(hs_config_parse(3, a5, &c, &err), HS_CONFIG_ERROR);
  assert_non_null(strstr(hs_buf_cstr(&err), "--max-object-size"));
  hs_buf_free(&err);
  char *a6[] = {"x", "--no-such-option", NULL};
  assert_int_equal(hs_config_parse(2, a6, &c, &err), HS_CONFIG_ERROR);
  hs_buf_free(&err);
  char *a7[] = {"x", "stray", NULL};
  assert_int_equal(hs_config_parse(2, a7, &c, &err), HS_CONFIG_ERROR);
  hs_buf_free(&err);
  char *a8[] = {"x", "--listen", "nope", NULL};
  assert_int_equal(hs_config_parse(3, a8, &c, &err), HS_CONFIG_ERROR);
  hs_buf_free(&err);
  setenv("HIPOBJ_TEST_SERVER_ACCESS_KEY", "EK", 1);
  setenv("HIPOBJ_TEST_SERVER_SECRET_KEY", "ES", 1);
  assert_int_equal(hs_config_parse(1, a2, &c, &err), HS_CONFIG_OK);
  assert_string_equal(c.auth.access_key, "EK");
  assert_string_equal(c.auth.secret_key, "ES");
  unsetenv("HIPOBJ_TEST_SERVER_ACCESS_KEY");
  unsetenv("HIPOBJ_TEST_SERVER_SECRET_KEY");
}

/* Issue #22, 4: --nic a,b: a rail each; an empty name, one named twice,
 * one too long and too many are refused with the reason; --nic a as
 * before. */
static void nic_lists(void **state)
{
  struct hs_config c;
  struct hs_buf err;
  hs_buf_init(&err, 0);
  char *a1[] = {"x", "--nic", "rxs0", NULL};
  assert_int_equal(hs_config_parse(3, a1, &c, &err), HS_CONFIG_OK);
  assert_string_equal(c.nic, "rxs0");
  char names[HS_MAX_NICS][HS_NIC_NAME_MAX];
  assert_int_equal(hs_nic_list(c.nic, names, NULL), 1);
  assert_string_equal(names[0], "rxs0");
  char *a2[] = {"x", "--nic", "rxs0,rxs1", NULL};
  assert_int_equal(hs_config_parse(3, a2, &c, &err), HS_CONFIG_OK);
  assert_int_equal(hs_nic_list(c.nic, names, NULL), 2);
  assert_string_equal(names[0], "rxs0");
  assert_string_equal(names[1], "rxs1");
  char *a3[] = {"x", NULL};
  assert_int_equal(hs_config_parse(1, a3, &c, &err), HS_CONFIG_OK);
  assert_null(c.nic);
  /* refused, each with its reason */
  static const struct {
    const char *list, *why;
  } bad[] = {{"", "an empty NIC name"},
             {",rxs0", "an empty NIC name (name 1"},
             {"rxs0,", "an empty NIC name (name 2"},
             {"rxs0,,rxs1", "an empty NIC name (name 2"},
             {"rxs0,rxs1,rxs0", "a NIC named twice (name 3"},
             {"a23456789012345678901234567890123456789012345678901234567890"
              "1234",
              "a NIC name too long"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *a[] = {"x", "--nic", (char *)bad[i].list, NULL};
    hs_buf_free(&err);
    hs_buf_init(&err, 0);
    assert_int_equal(hs_config_parse(3, a, &c, &err), HS_CONFIG_ERROR);
    assert_non_null(strstr(hs_buf_cstr(&err), "invalid value for --nic: "));
    assert_non_null(strstr(hs_buf_cstr(&err), bad[i].why));
    assert_int_equal(hs_nic_list(bad[i].list, names, NULL), -1);
  }
  /* 63 bytes is a name; HS_MAX_NICS names are a list, one more is not */
  assert_int_equal(hs_nic_list("a2345678901234567890123456789012345678901234"
                               "5678901234567890123",
                               names, NULL),
                   1);
  char many[HS_MAX_NICS * 4 + 8] = "";
  for (int i = 0; i < HS_MAX_NICS; i++)
    snprintf(many + strlen(many), sizeof many - strlen(many), "%sn%d",
             i ? "," : "", i);
  assert_int_equal(hs_nic_list(many, names, NULL), HS_MAX_NICS);
  assert_string_equal(names[HS_MAX_NICS - 1], "n63");
  strcat(many, ",n64");
  char *a4[] = {"x", "--nic", many, NULL};
  hs_buf_free(&err);
  hs_buf_init(&err, 0);
  assert_int_equal(hs_config_parse(3, a4, &c, &err), HS_CONFIG_ERROR);
  assert_non_null(strstr(hs_buf_cstr(&err), "more NICs than"));
  hs_buf_free(&err);
}

static void dates(void **state)
{
  char s[40];
  hs_time_http(784111777, s);
  assert_string_equal(s, "Sun, 06 Nov 1994 08:49:37 GMT");
  int64_t t;
  assert_true(hs_time_parse_http(s, &t));
  assert_int_equal(t, 784111777);
  hs_time_iso8601(784111777, s);
  assert_string_equal(s, "1994-11-06T08:49:37.000Z");
  assert_false(hs_time_parse_http("Sunday, 06-Nov-94 08:49:37 GMT", &t));
  assert_false(hs_time_parse_http("Sun, 06 Foo 1994 08:49:37 GMT", &t));
  assert_false(hs_time_parse_http("Sun, 06 Nov 1994 25:49:37 GMT", &t));
  assert_false(hs_time_parse_http("", &t));
  /* ISO 8601, as S3's XML writes it, with or without a fraction */
  t = 0;
  assert_true(hs_time_parse_iso8601(s, strlen(s), &t));
  assert_int_equal(t, 784111777);
  t = 0;
  assert_true(hs_time_parse_iso8601("1994-11-06T08:49:37Z", 20, &t));
  assert_int_equal(t, 784111777);
  static const char *const bad[] = {
      "1994-11-06T08:49:37", "1994-11-06 08:49:37Z", "1994-13-06T08:49:37Z",
      "1994-11-06T08:49:37.Z0", "1994-11-06T08:49:37+01:00", ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_false(hs_time_parse_iso8601(bad[i], strlen(bad[i]), &t));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(target_split),  cmocka_unit_test(pct_decode),
      cmocka_unit_test(bucket_names),  cmocka_unit_test(path_parse),
      cmocka_unit_test(query_parse),   cmocka_unit_test(uri_encode),
      cmocka_unit_test(range_parse),   cmocka_unit_test(etags),
      cmocka_unit_test(awschunk),      cmocka_unit_test(checksums),
      cmocka_unit_test(sizes),
      cmocka_unit_test(listen_addresses), cmocka_unit_test(config_parse),
      cmocka_unit_test(nic_lists),
      cmocka_unit_test(dates),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
