/* SPDX-License-Identifier: MIT */
/* Credentials files: users found by access key, comments and blank lines
 * skipped, malformed lines refused with their number, a file others can
 * read refused; and SigV4 with several users (each signs with its own
 * secret, an unknown key is InvalidAccessKeyId, one user's secret does not
 * sign for another). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "auth/auth.h"
#include "auth/credentials.h"
#include "config.h"

static enum hs_err parse(const char *text, struct hs_credentials **c,
                         char *why, size_t n)
{
  struct hs_buf w;
  hs_buf_init(&w, 0);
  enum hs_err err = hs_credentials_parse(text, strlen(text), c, &w);
  snprintf(why, n, "%s", hs_buf_cstr(&w));
  hs_buf_free(&w);
  return err;
}

static void users(void **state)
{
  struct hs_credentials *c = NULL;
  char why[200];
  assert_int_equal(parse("# team keys\n\nALICE a/secret+1\r\n  BOB\tb2  \n",
                         &c, why, sizeof why),
                   HS_OK);
  assert_int_equal(hs_credentials_count(c), 2);
  assert_string_equal(hs_credentials_secret(c, "ALICE"), "a/secret+1");
  assert_string_equal(hs_credentials_secret(c, "BOB"), "b2");
  assert_null(hs_credentials_secret(c, "CAROL"));
  assert_null(hs_credentials_secret(c, "alice"));
  hs_credentials_free(c);
}

static void refusals(void **state)
{
  struct hs_credentials *c = NULL;
  char why[200];
  assert_int_equal(parse("A s\nB\n", &c, why, sizeof why),
                   HS_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(why, "line 2"));
  assert_int_equal(parse("A s t\n", &c, why, sizeof why),
                   HS_ERR_INVALID_ARGUMENT);
  assert_int_equal(parse("A s\nA t\n", &c, why, sizeof why),
                   HS_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(why, "twice"));
  assert_int_equal(parse("# nobody\n\n", &c, why, sizeof why),
                   HS_ERR_INVALID_ARGUMENT);
  char longkey[200];
  memset(longkey, 'K', 129);
  strcpy(longkey + 129, " s\n");
  assert_int_equal(parse(longkey, &c, why, sizeof why),
                   HS_ERR_INVALID_ARGUMENT);
}

static void file_mode(void **state)
{
  char path[] = "/tmp/hipobj-creds-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, "K S\n", 4), 4);
  close(fd);
  struct hs_credentials *c = NULL;
  struct hs_buf why;
  hs_buf_init(&why, 0);
  chmod(path, 0644);
  assert_int_equal(hs_credentials_load(path, &c, &why), HS_ERR_IO);
  assert_non_null(strstr(hs_buf_cstr(&why), "chmod 600"));
  hs_buf_free(&why);
  chmod(path, 0600);
  assert_int_equal(hs_credentials_load(path, &c, &why), HS_OK);
  assert_string_equal(hs_credentials_secret(c, "K"), "S");
  hs_credentials_free(c);
  unlink(path);
  assert_int_equal(hs_credentials_load(path, &c, &why), HS_ERR_IO);
  hs_buf_free(&why);
}

/* CRED-1: a FIFO is refused at once (no hang: the alarm fails the test),
 * a file owned by someone else is refused, and so is an access key that
 * no Authorization header can carry. */
static void cred1(void **state)
{
  char dir[] = "/tmp/hipobj-creds-dir-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char fifo[64];
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  struct hs_credentials *c = NULL;
  struct hs_buf why;
  hs_buf_init(&why, 0);
  alarm(10);
  assert_int_equal(hs_credentials_load(fifo, &c, &why), HS_ERR_IO);
  alarm(0);
  assert_non_null(strstr(hs_buf_cstr(&why), "not a regular file"));
  unlink(fifo);
  hs_buf_free(&why);
  char path[64];
  snprintf(path, sizeof path, "%s/users", dir);
  int fd = open(path, O_CREAT | O_WRONLY | O_EXCL, 0600);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, "K S\n", 4), 4);
  close(fd);
  if (geteuid() == 0) {
    assert_int_equal(chown(path, 1, 1), 0);
    assert_int_equal(hs_credentials_load(path, &c, &why), HS_ERR_IO);
    assert_non_null(strstr(hs_buf_cstr(&why), "owned by"));
    hs_buf_free(&why);
  } else {
    printf("cred1: not root, a file of another owner cannot be made: the "
           "owner check is untested here\n");
  }
  unlink(path);
  rmdir(dir);
  char w[200];
  const char *bad[] = {"A/B s\n", "A,B s\n", "A;B s\n", "A\"B s\n",
                       "A\x01B s\n", "A\xc3\xa9 s\n"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(parse(bad[i], &c, w, sizeof w), HS_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(w, "access key"));
  }
  assert_int_equal(parse("AKIA-x_y.z~1+2= s\n", &c, w, sizeof w), HS_OK);
  hs_credentials_free(c);
}

/* GW-2: a line maps a client's key pair to a store identity; users who
 * would act as one store identity are found. */
static void store_identities(void **state)
{
  struct hs_credentials *c = NULL;
  char w[200];
  assert_int_equal(parse("ALICE as SA ss\nBOB bs SB sb\n", &c, w, sizeof w),
                   HS_OK);
  const char *k = NULL, *sec = NULL;
  assert_true(hs_credentials_store(c, "ALICE", &k, &sec));
  assert_string_equal(k, "SA");
  assert_string_equal(sec, "ss");
  assert_true(hs_credentials_store(c, "BOB", &k, &sec));
  assert_string_equal(k, "SB");
  assert_false(hs_credentials_store(c, "CAROL", &k, &sec));
  assert_true(hs_credentials_has_store(c));
  struct hs_buf why;
  hs_buf_init(&why, 0);
  assert_false(hs_credentials_shared(c, "DEFAULT", &why));
  assert_false(hs_credentials_shared(c, NULL, &why));
  hs_credentials_free(c);
  /* sharing: two without their own (the default, or anonymous), one with
   * the default's key, two with the same */
  const char *shared[] = {"A a\nB b\n", "A a\nB b DEFAULT d\n",
                          "A a S s\nB b S t\n"};
  for (size_t i = 0; i < 3; i++) {
    assert_int_equal(parse(shared[i], &c, w, sizeof w), HS_OK);
    hs_buf_free(&why);
    assert_true(hs_credentials_shared(c, "DEFAULT", &why));
    assert_non_null(strstr(hs_buf_cstr(&why), "users A and B"));
    hs_credentials_free(c);
  }
  assert_int_equal(parse("A a\nB b\n", &c, w, sizeof w), HS_OK);
  assert_true(hs_credentials_shared(c, NULL, &why)); /* both anonymous */
  assert_false(hs_credentials_has_store(c));
  hs_credentials_free(c);
  assert_int_equal(parse("A a\nB b SB sb\n", &c, w, sizeof w), HS_OK);
  assert_false(hs_credentials_shared(c, "DEFAULT", &why)); /* one each */
  hs_credentials_free(c);
  hs_buf_free(&why);
  /* malformed store identities */
  const char *bad[] = {"A a S\n", "A a S s x\n", "A a S/x s\n"};
  for (size_t i = 0; i < 3; i++)
    assert_int_equal(parse(bad[i], &c, w, sizeof w), HS_ERR_INVALID_ARGUMENT);
}

/* A GET signed by `key` with `secret`, checked by a server with users. */
static enum hs_err check(const struct hs_credentials *users, const char *key,
                         const char *secret)
{
  struct hs_config cfg;
  hs_config_defaults(&cfg);
  cfg.auth.credentials = users;
  cfg.auth.max_clock_skew_s = 0;
  struct hs_kv kv[3] = {{"host", "h:1"},
                        {"x-amz-content-sha256", HS_EMPTY_SHA256},
                        {"x-amz-date", "20261202T000000Z"}};
  struct hs_headers h = {kv, 3};
  struct hs_query q = {0};
  struct hs_sigv4_request r = {.method = "GET", .path = {"/b/k", 4},
                               .query = &q, .headers = &h};
  struct hs_sigv4_auth a = {0};
  snprintf(a.access_key, sizeof a.access_key, "%s", key);
  strcpy(a.date, "20261202");
  strcpy(a.region, "us-east-1");
  strcpy(a.service, "s3");
  strcpy(a.signed_headers, "host;x-amz-content-sha256;x-amz-date");
  struct hs_buf auth;
  hs_buf_init(&auth, 0);
  assert_int_equal(hs_sigv4_sign(&r, &a, secret, "20261202T000000Z",
                                 HS_EMPTY_SHA256, &auth),
                   HS_OK);
  struct hs_kv kv2[4] = {kv[0], kv[1], kv[2], {"authorization", auth.data}};
  struct hs_headers h2 = {kv2, 4};
  r.headers = &h2;
  struct hs_auth st;
  enum hs_err err = hs_auth_begin(&st, &cfg.auth, &r, 0);
  hs_auth_free(&st);
  hs_buf_free(&auth);
  return err;
}

static void several_users_sign(void **state)
{
  struct hs_credentials *c = NULL;
  char why[200];
  assert_int_equal(parse("ALICE as\nBOB bs\n", &c, why, sizeof why), HS_OK);
  assert_int_equal(check(c, "ALICE", "as"), HS_OK);
  assert_int_equal(check(c, "BOB", "bs"), HS_OK);
  assert_int_equal(check(c, "BOB", "as"), HS_ERR_SIGNATURE);
  assert_int_equal(check(c, "CAROL", "cs"), HS_ERR_UNKNOWN_ACCESS_KEY);
  hs_credentials_free(c);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(users), cmocka_unit_test(refusals),
      cmocka_unit_test(file_mode), cmocka_unit_test(several_users_sign),
      cmocka_unit_test(cred1), cmocka_unit_test(store_identities)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
