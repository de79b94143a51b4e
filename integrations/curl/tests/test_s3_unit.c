/* SPDX-License-Identifier: MIT */
/* The glue's pure parts, without a server: configuration against a table
 * environment, URLs and their encoding, XML bodies, error messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"

/* ---- configuration ------------------------------------------------------ */

struct env {
  const char *names[8];
  const char *values[8];
};

static const char *table_env(const char *name, void *ctx)
{
  const struct env *e = ctx;
  for (int i = 0; i < 8 && e->names[i]; i++)
    if (!strcmp(e->names[i], name))
      return e->values[i];
  return NULL;
}

static void config_defaults(void **state)
{
  struct ho_s3_settings s;
  struct env e = {{NULL}, {NULL}};
  char err[200] = "";
  assert_int_equal(ho_s3_settings_resolve(NULL, table_env, &e, &s, err,
                                          sizeof err), hipObjS3Ok);
  assert_string_equal(s.region, "us-east-1");
  assert_string_equal(s.endpoint, "https://s3.us-east-1.amazonaws.com");
  assert_false(s.sign);
  assert_int_equal(s.part_size, HIPOBJ_S3_DEFAULT_PART_SIZE);
  assert_int_equal(s.concurrency, HIPOBJ_S3_DEFAULT_CONCURRENCY);
  assert_int_equal(s.gpu_device, -1);
}

static void config_environment(void **state)
{
  struct ho_s3_settings s;
  struct env e = {{"AWS_REGION", "AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID",
                   "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"},
                  {"eu-west-1", "http://127.0.0.1:9000///", "AK", "SK",
                   "TOKEN"}};
  char err[200];
  assert_int_equal(ho_s3_settings_resolve(NULL, table_env, &e, &s, err,
                                          sizeof err), hipObjS3Ok);
  assert_string_equal(s.region, "eu-west-1");
  assert_string_equal(s.endpoint, "http://127.0.0.1:9000");
  assert_string_equal(s.access_key, "AK");
  assert_string_equal(s.session_token, "TOKEN");
  assert_true(s.sign);
  assert_false(s.has_nic_hint);
  struct env n = {{"HIPOBJ_NIC"}, {"rxe0"}};
  assert_int_equal(ho_s3_settings_resolve(NULL, table_env, &n, &s, err,
                                          sizeof err), hipObjS3Ok);
  assert_true(s.has_nic_hint);
  assert_string_equal(s.nic_hint, "rxe0");
}

static void config_arguments_win(void **state)
{
  struct ho_s3_settings s;
  struct env e = {{"AWS_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3",
                   "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"},
                  {"eu-west-1", "http://a:1", "http://b:2", "AK", "SK"}};
  hipObjS3Config_t cfg;
  char err[200];
  hipObjS3ConfigInit(&cfg);
  assert_int_equal(ho_s3_settings_resolve(&cfg, table_env, &e, &s, err,
                                          sizeof err), hipObjS3Ok);
  assert_string_equal(s.endpoint, "http://b:2"); /* _S3 first */
  cfg.region = "ap-south-1";
  cfg.endpoint = "https://example.com:8443/";
  cfg.accessKey = "K2";
  cfg.secretKey = "S2";
  cfg.partSize = 5 << 20;
  cfg.concurrency = 8;
  assert_int_equal(ho_s3_settings_resolve(&cfg, table_env, &e, &s, err,
                                          sizeof err), hipObjS3Ok);
  assert_string_equal(s.region, "ap-south-1");
  assert_string_equal(s.endpoint, "https://example.com:8443");
  assert_string_equal(s.access_key, "K2");
  assert_int_equal(s.part_size, 5 << 20);
  assert_int_equal(s.concurrency, 8);
  cfg.flags = HIPOBJ_S3_NO_ENV | HIPOBJ_S3_ANONYMOUS;
  assert_int_equal(ho_s3_settings_resolve(&cfg, table_env, &e, &s, err,
                                          sizeof err), hipObjS3Ok);
  assert_false(s.sign);
}

static void expect_bad(hipObjS3Config_t *cfg, const char *fragment)
{
  struct ho_s3_settings s;
  struct env e = {{NULL}, {NULL}};
  char err[200] = "";
  assert_int_equal(ho_s3_settings_resolve(cfg, table_env, &e, &s, err,
                                          sizeof err),
                   hipObjS3InvalidArgument);
  assert_non_null(strstr(err, fragment));
}

static void config_rejects(void **state)
{
  hipObjS3Config_t cfg;
  hipObjS3DeviceOps_t half = {0};
  hipObjS3ConfigInit(&cfg);
  cfg.endpoint = "ftp://x";
  expect_bad(&cfg, "endpoint");
  cfg.endpoint = "http://";
  expect_bad(&cfg, "endpoint");
  cfg.endpoint = "http://h:1/?q";
  expect_bad(&cfg, "endpoint");
  cfg.endpoint = NULL;
  cfg.region = "us:east";
  expect_bad(&cfg, "region");
  cfg.region = NULL;
  cfg.accessKey = "AK";
  expect_bad(&cfg, "both");
  cfg.accessKey = NULL;
  cfg.partSize = HIPOBJ_MAX_BUFFER_SIZE + 1;
  expect_bad(&cfg, "4 GiB");
  cfg.partSize = 0;
  cfg.concurrency = HIPOBJ_S3_MAX_CONCURRENCY + 1;
  expect_bad(&cfg, "concurrency");
  cfg.concurrency = 0;
  cfg.flags = HIPOBJ_S3_NO_RDMA | HIPOBJ_S3_REQUIRE_RDMA;
  expect_bad(&cfg, "contradict");
  cfg.flags = 0x100;
  expect_bad(&cfg, "flags");
  cfg.flags = 0;
  cfg.deviceOps = &half;
  expect_bad(&cfg, "deviceOps");
}

/* ---- URLs ----------------------------------------------------------------- */

static void uri_encoding(void **state)
{
  char out[64];
  assert_true(ho_s3_uri_encode("a b+c/d~e_f.g-h", 15, true, out, sizeof out));
  assert_string_equal(out, "a%20b%2Bc/d~e_f.g-h");
  assert_true(ho_s3_uri_encode("a/b", 3, false, out, sizeof out));
  assert_string_equal(out, "a%2Fb");
  assert_true(ho_s3_uri_encode("\xc3\xa9=&", 4, true, out, sizeof out));
  assert_string_equal(out, "%C3%A9%3D%26");
  assert_false(ho_s3_uri_encode("   ", 3, true, out, 9)); /* needs 10 */
  assert_true(ho_s3_uri_encode("   ", 3, true, out, 10));
}

static void object_urls(void **state)
{
  struct ho_s3_settings s;
  char url[128];
  memset(&s, 0, sizeof s);
  snprintf(s.endpoint, sizeof s.endpoint, "%s", "http://127.0.0.1:9000");
  assert_true(ho_s3_object_url(&s, "b", "k/x y", NULL, url, sizeof url));
  assert_string_equal(url, "http://127.0.0.1:9000/b/k/x%20y");
  assert_true(ho_s3_object_url(&s, "b", "k", "uploads=", url, sizeof url));
  assert_string_equal(url, "http://127.0.0.1:9000/b/k?uploads=");
  assert_false(ho_s3_object_url(&s, "b", "k", NULL, url, 20));
}

static void s3_urls(void **state)
{
  char b[16], k[16];
  assert_int_equal(hipObjS3ParseUrl("s3://bkt/a/b", b, sizeof b, k, sizeof k),
                   hipObjS3Ok);
  assert_string_equal(b, "bkt");
  assert_string_equal(k, "a/b");
  assert_int_equal(hipObjS3ParseUrl("S3://bkt", b, sizeof b, k, sizeof k),
                   hipObjS3Ok);
  assert_string_equal(k, "");
  snprintf(b, sizeof b, "%s", "untouched");
  assert_int_equal(hipObjS3ParseUrl("s3:///k", b, sizeof b, k, sizeof k),
                   hipObjS3InvalidArgument);
  assert_int_equal(hipObjS3ParseUrl("http://b/k", b, sizeof b, k, sizeof k),
                   hipObjS3InvalidArgument);
  assert_int_equal(hipObjS3ParseUrl("s3://..", b, sizeof b, k, sizeof k),
                   hipObjS3InvalidArgument);
  assert_int_equal(hipObjS3ParseUrl("s3://b/0123456789abcdef", b, sizeof b, k,
                                    sizeof k), hipObjS3InvalidArgument);
  assert_string_equal(b, "untouched"); /* outputs only on success */
}

/* ---- XML and messages ---------------------------------------------------- */

static void xml_text(void **state)
{
  const char body[] = "<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code>"
                      "<Message>a &lt;b&gt; &amp; &quot;c&quot;\x01</Message>"
                      "</Error>";
  char out[64];
  assert_true(ho_s3_xml_text(body, sizeof body - 1, "Code", out, sizeof out));
  assert_string_equal(out, "NoSuchKey");
  assert_true(ho_s3_xml_text(body, sizeof body - 1, "Message", out,
                             sizeof out));
  assert_string_equal(out, "a <b> & \"c\" ");
  assert_false(ho_s3_xml_text(body, sizeof body - 1, "Key", out, sizeof out));
  assert_false(ho_s3_xml_text(body, sizeof body - 1, "Code", out, 5));
  assert_false(ho_s3_xml_text("<Code>open", 10, "Code", out, sizeof out));
  assert_false(ho_s3_xml_text(NULL, 0, "Code", out, sizeof out));
}

static void xml_repeated(void **state)
{
  const char body[] = "<L><Part><N>1</N></Part><Part><N>2</N></Part></L>";
  const char *t;
  size_t n, pos = 0;
  char out[8];
  int count = 0;
  while (ho_s3_xml_span(body, sizeof body - 1, &pos, "Part", &t, &n)) {
    assert_true(ho_s3_xml_text(t, n, "N", out, sizeof out));
    assert_int_equal(strtol(out, NULL, 10), ++count);
  }
  assert_int_equal(count, 2);
}

static hipObjS3Status_t failure(long status, const char *body, bool sign,
                                hipObjS3Result_t *res)
{
  struct ho_s3_settings s;
  struct ho_s3_target t = {"GET", "bkt", "key"};
  memset(&s, 0, sizeof s);
  snprintf(s.endpoint, sizeof s.endpoint, "%s", "http://e");
  snprintf(s.region, sizeof s.region, "%s", "us-east-1");
  s.sign = sign;
  memset(res, 0, sizeof *res);
  return ho_s3_http_failure(&s, &t, status, body, body ? strlen(body) : 0,
                            res);
}

#define ERR(code) "<Error><Code>" code "</Code><Message>m</Message></Error>"

static void messages(void **state)
{
  hipObjS3Result_t r;
  assert_int_equal(failure(404, ERR("NoSuchKey"), false, &r),
                   hipObjS3NoSuchKey);
  assert_non_null(strstr(r.message, "s3://bkt/key does not exist"));
  assert_string_equal(r.s3Code, "NoSuchKey");
  assert_int_equal(failure(404, ERR("NoSuchBucket"), false, &r),
                   hipObjS3NoSuchBucket);
  assert_non_null(strstr(r.message, "bucket 'bkt' does not exist"));
  assert_int_equal(failure(403, ERR("SignatureDoesNotMatch"), true, &r),
                   hipObjS3AccessDenied);
  assert_non_null(strstr(r.message, "AWS_SECRET_ACCESS_KEY"));
  assert_int_equal(failure(403, ERR("InvalidAccessKeyId"), true, &r),
                   hipObjS3AccessDenied);
  assert_non_null(strstr(r.message, "AWS_ACCESS_KEY_ID"));
  assert_int_equal(failure(403, ERR("AccessDenied"), false, &r),
                   hipObjS3AccessDenied);
  assert_non_null(strstr(r.message, "wants signed requests"));
  assert_int_equal(failure(403, ERR("RequestTimeTooSkewed"), true, &r),
                   hipObjS3AccessDenied);
  assert_non_null(strstr(r.message, "clock"));
  assert_int_equal(failure(416, NULL, false, &r), hipObjS3InvalidRange);
  assert_int_equal(failure(404, NULL, false, &r), hipObjS3NoSuchKey);
  assert_int_equal(failure(503, ERR("SlowDown"), false, &r),
                   hipObjS3HttpError);
  assert_non_null(strstr(r.message, "busy"));
  assert_int_equal(failure(500, ERR("InternalError"), false, &r),
                   hipObjS3HttpError);
  assert_non_null(strstr(r.message, "HTTP 500 InternalError: m"));
  assert_int_equal(r.httpStatus, 500);
}

static void curl_failures(void **state)
{
  struct ho_s3_settings s;
  hipObjS3Result_t r;
  memset(&s, 0, sizeof s);
  snprintf(s.endpoint, sizeof s.endpoint, "%s", "http://127.0.0.1:1");
  assert_int_equal(ho_s3_curl_failure(&s, CURLE_COULDNT_CONNECT, "refused",
                                      &r), hipObjS3ConnectFailed);
  assert_non_null(strstr(r.message, "is the server running"));
  assert_int_equal(ho_s3_curl_failure(&s, CURLE_RECV_ERROR, "", &r),
                   hipObjS3HttpError);
}

static void status_strings(void **state)
{
  for (int i = 0; i <= hipObjS3DeviceCopyFailed; i++)
    assert_string_not_equal(hipObjS3StatusString((hipObjS3Status_t)i),
                            "unknown status");
  assert_string_equal(hipObjS3StatusString((hipObjS3Status_t)999),
                      "unknown status");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(config_defaults),
      cmocka_unit_test(config_environment),
      cmocka_unit_test(config_arguments_win),
      cmocka_unit_test(config_rejects),
      cmocka_unit_test(uri_encoding),
      cmocka_unit_test(object_urls),
      cmocka_unit_test(s3_urls),
      cmocka_unit_test(xml_text),
      cmocka_unit_test(xml_repeated),
      cmocka_unit_test(messages),
      cmocka_unit_test(curl_failures),
      cmocka_unit_test(status_strings),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
