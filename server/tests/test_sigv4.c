/* SPDX-License-Identifier: MIT */
/* SigV4 against the examples AWS publishes for S3 ("Signature Calculations
 * for the Authorization Header" and "Transfer Payload in Multiple Chunks"),
 * which botocore reproduces too, and the header and query parsers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "auth/sigv4.h"

#define AK "AKIAIOSFODNN7EXAMPLE"
#define SECRET "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define EMPTY_SHA                                                          \
  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define DATE "20130524T000000Z"

struct vec {
  const char *method;
  const char *path;
  const char *query;
  struct hs_kv headers[8];
  size_t nheaders;
  const char *auth;
  const char *payload;
};

static enum hs_err verify(const struct vec *v, const char *secret)
{
  struct hs_query q;
  assert_int_equal(hs_query_parse(v->query, strlen(v->query), &q), HS_OK);
  struct hs_headers h = {v->headers, v->nheaders};
  struct hs_sigv4_request r = {.method = v->method,
                               .path = {v->path, strlen(v->path)},
                               .query = &q,
                               .headers = &h};
  struct hs_sigv4_auth a;
  enum hs_err err;
  if (v->auth) {
    assert_int_equal(hs_sigv4_parse_header(v->auth, strlen(v->auth), &a),
                     HS_OK);
    err = hs_sigv4_verify(&r, &a, secret, DATE, v->payload);
  } else {
    assert_int_equal(hs_sigv4_parse_query(&q, &a), HS_OK);
    err = hs_sigv4_verify(&r, &a, secret, a.amz_date, "UNSIGNED-PAYLOAD");
  }
  hs_query_free(&q);
  return err;
}

static const struct vec get_object = {
    "GET",
    "/test.txt",
    "",
    {{"Host", "examplebucket.s3.amazonaws.com"},
     {"Range", "bytes=0-9"},
     {"x-amz-content-sha256", EMPTY_SHA},
     {"x-amz-date", DATE}},
    4,
    "AWS4-HMAC-SHA256 Credential=" AK "/20130524/us-east-1/s3/aws4_request,"
    "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature="
    "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
    EMPTY_SHA};

static const struct vec put_object = {
    "PUT",
    "/test%24file.text",
    "",
    {{"Host", "examplebucket.s3.amazonaws.com"},
     {"Date", "Fri, 24 May 2013 00:00:00 GMT"},
     {"x-amz-date", DATE},
     {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
     {"x-amz-content-sha256",
      "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072"}},
    5,
    "AWS4-HMAC-SHA256 Credential=" AK "/20130524/us-east-1/s3/aws4_request,"
    "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;"
    "x-amz-storage-class,Signature="
    "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd",
    "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072"};

static const struct vec get_lifecycle = {
    "GET",
    "/",
    "lifecycle",
    {{"Host", "examplebucket.s3.amazonaws.com"},
     {"x-amz-date", DATE},
     {"x-amz-content-sha256", EMPTY_SHA}},
    3,
    "AWS4-HMAC-SHA256 Credential=" AK "/20130524/us-east-1/s3/aws4_request,"
    "SignedHeaders=host;x-amz-content-sha256;x-amz-date,Signature="
    "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543",
    EMPTY_SHA};

static const struct vec list_objects = {
    "GET",
    "/",
    "max-keys=2&prefix=J",
    {{"Host", "examplebucket.s3.amazonaws.com"},
     {"x-amz-date", DATE},
     {"x-amz-content-sha256", EMPTY_SHA}},
    3,
    "AWS4-HMAC-SHA256 Credential=" AK "/20130524/us-east-1/s3/aws4_request,"
    "SignedHeaders=host;x-amz-content-sha256;x-amz-date,Signature="
    "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7",
    EMPTY_SHA};

static const struct vec presigned = {
    "GET",
    "/test.txt",
    "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=" AK
    "%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=" DATE
    "&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature="
    "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404",
    {{"Host", "examplebucket.s3.amazonaws.com"}},
    1,
    NULL,
    NULL};

static void aws_examples(void **state)
{
  assert_int_equal(verify(&get_object, SECRET), HS_OK);
  assert_int_equal(verify(&put_object, SECRET), HS_OK);
  assert_int_equal(verify(&get_lifecycle, SECRET), HS_OK);
  assert_int_equal(verify(&list_objects, SECRET), HS_OK);
  assert_int_equal(verify(&presigned, SECRET), HS_OK);
  assert_int_equal(verify(&get_object, "wrong"), HS_ERR_SIGNATURE);
  assert_int_equal(verify(&presigned, "wrong"), HS_ERR_SIGNATURE);
}

/* Signing a request for another server gives AWS's own signatures and
 * the Authorization header AWS shows; the canonical target is what the
 * canonical request spells (a bare name gets "=", the query is sorted). */
static void signing(void **state)
{
  const struct vec *vs[] = {&get_object, &put_object, &get_lifecycle,
                            &list_objects};
  for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
    const struct vec *v = vs[i];
    struct hs_query q;
    assert_int_equal(hs_query_parse(v->query, strlen(v->query), &q), HS_OK);
    struct hs_headers h = {(struct hs_kv *)v->headers, v->nheaders};
    struct hs_sigv4_request r = {.method = v->method,
                                 .path = {v->path, strlen(v->path)},
                                 .query = &q,
                                 .headers = &h};
    struct hs_sigv4_auth want, a = {0};
    assert_int_equal(hs_sigv4_parse_header(v->auth, strlen(v->auth), &want),
                     HS_OK);
    strcpy(a.access_key, AK);
    strcpy(a.date, "20130524");
    strcpy(a.region, "us-east-1");
    strcpy(a.service, "s3");
    strcpy(a.signed_headers, want.signed_headers);
    struct hs_buf out;
    hs_buf_init(&out, 0);
    assert_int_equal(hs_sigv4_sign(&r, &a, SECRET, DATE, v->payload, &out),
                     HS_OK);
    assert_memory_equal(a.signature, want.signature, HS_SHA256_LEN);
    struct hs_sigv4_auth back;
    assert_int_equal(hs_sigv4_parse_header(out.data, out.len, &back), HS_OK);
    assert_memory_equal(back.signature, want.signature, HS_SHA256_LEN);
    assert_string_equal(back.signed_headers, want.signed_headers);
    hs_buf_free(&out);
    hs_query_free(&q);
  }
  struct hs_query q;
  const char *raw = "uploads&prefix=a%2Fb c&max-keys=2";
  assert_int_equal(hs_query_parse(raw, strlen(raw), &q), HS_OK);
  struct hs_headers none = {NULL, 0};
  struct hs_sigv4_request r = {.method = "GET",
                               .path = {"/b/k%7e x", 9},
                               .query = &q,
                               .headers = &none};
  struct hs_buf t;
  hs_buf_init(&t, 0);
  assert_int_equal(hs_sigv4_canonical_target(&r, &t), HS_OK);
  assert_string_equal(hs_buf_cstr(&t),
                      "/b/k~%20x?max-keys=2&prefix=a%2Fb%20c&uploads=");
  hs_buf_free(&t);
  hs_query_free(&q);
}

/* Any change to what is signed breaks the signature. */
static void tampering(void **state)
{
  struct vec v = get_object;
  v.headers[1].value = "bytes=0-10";
  assert_int_equal(verify(&v, SECRET), HS_ERR_SIGNATURE);
  v = get_object;
  v.path = "/test.txu";
  assert_int_equal(verify(&v, SECRET), HS_ERR_SIGNATURE);
  v = get_object;
  v.method = "PUT";
  assert_int_equal(verify(&v, SECRET), HS_ERR_SIGNATURE);
  v = get_object;
  v.query = "x=1";
  assert_int_equal(verify(&v, SECRET), HS_ERR_SIGNATURE);
  v = list_objects;
  v.query = "prefix=J&max-keys=2"; /* order does not matter: sorted */
  assert_int_equal(verify(&v, SECRET), HS_OK);
  v.query = "prefix=J&max-keys=3";
  assert_int_equal(verify(&v, SECRET), HS_ERR_SIGNATURE);
  v = get_object;
  v.payload = "UNSIGNED-PAYLOAD";
  assert_int_equal(verify(&v, SECRET), HS_ERR_SIGNATURE);
  /* values are trimmed and inner blanks collapsed before signing */
  v = get_object;
  v.headers[1].value = "  bytes=0-9  ";
  assert_int_equal(verify(&v, SECRET), HS_OK);
  /* header names are case-insensitive */
  v = get_object;
  v.headers[0].name = "HOST";
  assert_int_equal(verify(&v, SECRET), HS_OK);
  /* a signed header that is missing */
  v = get_object;
  v.nheaders = 3;
  v.headers[1] = v.headers[3];
  struct hs_query q;
  hs_query_parse("", 0, &q);
  struct hs_headers h = {v.headers, v.nheaders};
  struct hs_sigv4_request r = {"GET", {"/test.txt", 9}, &q, &h};
  struct hs_sigv4_auth a;
  hs_sigv4_parse_header(v.auth, strlen(v.auth), &a);
  assert_int_equal(hs_sigv4_verify(&r, &a, SECRET, DATE, EMPTY_SHA),
                   HS_ERR_AUTH_HEADER);
  hs_query_free(&q);
}

static void header_parse(void **state)
{
  struct hs_sigv4_auth a;
  assert_int_equal(hs_sigv4_parse_header(get_object.auth,
                                         strlen(get_object.auth), &a),
                   HS_OK);
  assert_string_equal(a.access_key, AK);
  assert_string_equal(a.date, "20130524");
  assert_string_equal(a.region, "us-east-1");
  assert_string_equal(a.service, "s3");
  assert_true(hs_sigv4_signs(&a, "range"));
  assert_true(hs_sigv4_signs(&a, "host"));
  assert_false(hs_sigv4_signs(&a, "hos"));
  assert_false(hs_sigv4_signs(&a, "x-amz-rdma-token"));
  /* spaces after commas, parts in any order */
  const char *ok = "AWS4-HMAC-SHA256 Signature=f0e8bdb87c964420e857bd35b5d6"
                   "ed310bd44f0170aba48dd91039c6036bdb41, Credential=K/20130524"
                   "/r/s3/aws4_request, SignedHeaders=host";
  assert_int_equal(hs_sigv4_parse_header(ok, strlen(ok), &a), HS_OK);
  static const char *const bad[] = {
      "", "AWS4-HMAC-SHA256", "AWS4-HMAC-SHA256 ",
      "AWS AKIAIOSFODNN7EXAMPLE:frJIUN8DYpKDtOLCwo//yllqDzg=",
      "AWS4-HMAC-SHA1 Credential=K/20130524/r/s3/aws4_request, "
      "SignedHeaders=host, Signature=" EMPTY_SHA,
      "AWS4-HMAC-SHA256 Credential=K/20130524/r/s3/aws4_request, "
      "SignedHeaders=host",
      "AWS4-HMAC-SHA256 Credential=K/2013052/r/s3/aws4_request, "
      "SignedHeaders=host, Signature=" EMPTY_SHA,
      "AWS4-HMAC-SHA256 Credential=K/20130524/r/s3/aws5_request, "
      "SignedHeaders=host, Signature=" EMPTY_SHA,
      "AWS4-HMAC-SHA256 Credential=K/20130524/r/s3, "
      "SignedHeaders=host, Signature=" EMPTY_SHA,
      "AWS4-HMAC-SHA256 Credential=/20130524/r/s3/aws4_request, "
      "SignedHeaders=host, Signature=" EMPTY_SHA,
      "AWS4-HMAC-SHA256 Credential=K/20130524/r/s3/aws4_request/x, "
      "SignedHeaders=host, Signature=" EMPTY_SHA,
      "AWS4-HMAC-SHA256 Credential=K/20130524/r/s3/aws4_request, "
      "SignedHeaders=x-amz-date;host, Signature=" EMPTY_SHA,
      "AWS4-HMAC-SHA256 Credential=K/20130524/r/s3/aws4_request, "
      "SignedHeaders=host;host, Signature=" EMPTY_SHA,
      "AWS4-HMAC-SHA256 Credential=K/20130524/r/s3/aws4_request, "
      "SignedHeaders=Host, Signature=" EMPTY_SHA,
      "AWS4-HMAC-SHA256 Credential=K/20130524/r/s3/aws4_request, "
      "SignedHeaders=host;, Signature=" EMPTY_SHA,
      "AWS4-HMAC-SHA256 Credential=K/20130524/r/s3/aws4_request, "
      "SignedHeaders=host, Signature=abc",
      "AWS4-HMAC-SHA256 Credential=K/20130524/r/s3/aws4_request, "
      "SignedHeaders=host, Signature=" EMPTY_SHA ",",
      "AWS4-HMAC-SHA256 Credential=K/20130524/r/s3/aws4_request, "
      "SignedHeaders=host, Signature=" EMPTY_SHA ", Signature=" EMPTY_SHA,
      "AWS4-HMAC-SHA256 Credential=K/20130524/r/s3/aws4_request, "
      "SignedHeaders=host, Signature=" EMPTY_SHA ", Extra=1",
      "AWS4-HMAC-SHA256 Credential=K\x01/20130524/r/s3/aws4_request, "
      "SignedHeaders=host, Signature=" EMPTY_SHA,
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (hs_sigv4_parse_header(bad[i], strlen(bad[i]), &a) !=
        HS_ERR_AUTH_HEADER)
      fail_msg("accepted #%zu: %s", i, bad[i]);
}

static void query_parse(void **state)
{
  struct hs_query q;
  struct hs_sigv4_auth a;
  const char *bad[] = {
      "X-Amz-Algorithm=AWS4-HMAC-SHA256",
      "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=K%2F20130524%2Fr%2F"
      "s3%2Faws4_request&X-Amz-Date=2013-05-24&X-Amz-Expires=60&"
      "X-Amz-SignedHeaders=host&X-Amz-Signature=" EMPTY_SHA,
      "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=K%2F20130524%2Fr%2F"
      "s3%2Faws4_request&X-Amz-Date=" DATE "&X-Amz-Expires=60&"
      "X-Amz-SignedHeaders=host&X-Amz-Signature=" EMPTY_SHA
      "&X-Amz-Signature=" EMPTY_SHA,
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(hs_query_parse(bad[i], strlen(bad[i]), &q), HS_OK);
    if (hs_sigv4_parse_query(&q, &a) != HS_ERR_AUTH_HEADER)
      fail_msg("accepted #%zu", i);
    hs_query_free(&q);
  }
  /* X-Amz-Expires of 0, negative, over seven days, not a number: S3's
   * AuthorizationQueryParametersError */
  const char *expires[] = {"604801", "0", "-1", "", "1e3", "9999999"};
  for (size_t i = 0; i < sizeof expires / sizeof expires[0]; i++) {
    char s[512];
    snprintf(s, sizeof s,
             "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=K%%2F20130524"
             "%%2Fr%%2Fs3%%2Faws4_request&X-Amz-Date=" DATE "&X-Amz-Expires=%s"
             "&X-Amz-SignedHeaders=host&X-Amz-Signature=" EMPTY_SHA,
             expires[i]);
    assert_int_equal(hs_query_parse(s, strlen(s), &q), HS_OK);
    if (hs_sigv4_parse_query(&q, &a) != HS_ERR_AUTH_QUERY)
      fail_msg("X-Amz-Expires=%s", expires[i]);
    hs_query_free(&q);
  }
  int64_t t;
  assert_true(hs_sigv4_parse_time(DATE, &t));
  assert_int_equal(t, 1369353600);
  assert_false(hs_sigv4_parse_time("20130524T000000", &t));
  assert_false(hs_sigv4_parse_time("20131324T000000Z", &t));
  assert_false(hs_sigv4_parse_time("20130524T250000Z", &t));
}

/* The chunk signatures of the AWS example: 65536 + 1024 bytes of 'a'. */
static void chunk_signatures(void **state)
{
  struct hs_sigv4_auth a;
  memset(&a, 0, sizeof a);
  memcpy(a.date, "20130524", 9);
  memcpy(a.region, "us-east-1", 10);
  memcpy(a.service, "s3", 3);
  uint8_t key[32], prev[32], h[32], sig[32];
  hs_sigv4_signing_key(SECRET, &a, key);
  hs_unhex("4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9",
           64, prev, 32);
  static const char *const want[] = {
      "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
      "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
      "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"};
  const size_t sizes[] = {65536, 1024, 0};
  char *data = malloc(65536);
  memset(data, 'a', 65536);
  for (int i = 0; i < 3; i++) {
    char hex[65];
    hs_sha256(data, sizes[i], h);
    hs_sigv4_chunk_signature(key, &a, DATE, prev, h, sig);
    hs_hex(sig, 32, hex);
    assert_string_equal(hex, want[i]);
    memcpy(prev, sig, 32);
  }
  free(data);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(aws_examples), cmocka_unit_test(tampering),
      cmocka_unit_test(header_parse), cmocka_unit_test(query_parse),
      cmocka_unit_test(chunk_signatures), cmocka_unit_test(signing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
