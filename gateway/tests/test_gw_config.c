/* SPDX-License-Identifier: MIT */
/* hipobj-gateway's command line: required options, the server's shared
 * options validated by the server's parser, the keys from the environment,
 * and clear refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gw_config.h"

static enum hs_config_result parse(struct gw_config *c, char *err, size_t n,
                                   ...)
{
  char *argv[32] = {"hipobj-gateway"};
  int argc = 1;
  va_list ap;
  va_start(ap, n);
  for (char *a; (a = va_arg(ap, char *)) && argc < 31;)
    argv[argc++] = a;
  va_end(ap);
  struct hs_buf e;
  hs_buf_init(&e, 4096);
  enum hs_config_result r = gw_config_parse(argc, argv, c, &e);
  snprintf(err, n, "%s", hs_buf_cstr(&e));
  hs_buf_free(&e);
  return r;
}

#define BASE "--backend", "http://127.0.0.1:7480", "--access-key", "K", \
             "--secret-key", "S"

static void minimal(void **state)
{
  struct gw_config c;
  char err[256];
  assert_int_equal(parse(&c, err, sizeof err, BASE, NULL), HS_CONFIG_OK);
  assert_string_equal(c.backend.url, "http://127.0.0.1:7480");
  assert_null(c.backend.access_key);
  assert_string_equal(c.backend.region, "us-east-1");
  assert_string_equal(c.front.listen_host, "127.0.0.1");
  assert_int_equal(c.front.listen_port, 9000);
  assert_int_equal(c.front.rdma_qps, 16); /* the server's defaults */
}

static void shared_options(void **state)
{
  struct gw_config c;
  char err[256];
  assert_int_equal(parse(&c, err, sizeof err, BASE, "--listen", "[::1]:0",
                         "--rdma-qps", "4", "--rdma-chunk-size", "256K",
                         "--no-rdma", "--log-requests", "--backend-access-key",
                         "BK", "--backend-secret-key", "BS",
                         "--backend-region", "eu-1", "--backend-timeout",
                         "5", NULL),
                   HS_CONFIG_OK);
  assert_string_equal(c.front.listen_host, "::1");
  assert_int_equal(c.front.rdma_qps, 4);
  assert_int_equal(c.front.rdma_chunk_size, 256u << 10);
  assert_true(c.front.no_rdma && c.front.log_requests);
  assert_string_equal(c.backend.access_key, "BK");
  assert_string_equal(c.backend.region, "eu-1");
  assert_int_equal(c.backend.stall_timeout_s, 5);
}

static void refusals(void **state)
{
  struct gw_config c;
  char err[256];
  assert_int_equal(parse(&c, err, sizeof err, "--access-key", "K",
                         "--secret-key", "S", NULL),
                   HS_CONFIG_ERROR);
  assert_non_null(strstr(err, "--backend"));
  assert_int_equal(parse(&c, err, sizeof err, "--backend", "http://h", NULL),
                   HS_CONFIG_ERROR);
  assert_non_null(strstr(err, "--access-key"));
  assert_int_equal(parse(&c, err, sizeof err, BASE, "--rdma-qps", "0", NULL),
                   HS_CONFIG_ERROR);
  assert_non_null(strstr(err, "--rdma-qps"));
  /* a store option of the test server is not the gateway's */
  assert_int_equal(parse(&c, err, sizeof err, BASE, "--data-dir", "/x", NULL),
                   HS_CONFIG_ERROR);
  assert_non_null(strstr(err, "--data-dir"));
  assert_int_equal(parse(&c, err, sizeof err, BASE, "--backend-access-key",
                         "BK", NULL),
                   HS_CONFIG_ERROR);
  assert_int_equal(parse(&c, err, sizeof err, BASE, "--backend-timeout", "0",
                         NULL),
                   HS_CONFIG_ERROR);
  assert_int_equal(parse(&c, err, sizeof err, BASE, "extra", NULL),
                   HS_CONFIG_ERROR);
  assert_int_equal(parse(&c, err, sizeof err, "--help", NULL), HS_CONFIG_HELP);
}

/* Issue #22, 4: --nic takes the rails as a list, through the server's
 * parser, and says what is wrong with one it refuses. */
static void nic_list(void **state)
{
  struct gw_config c;
  char err[512];
  assert_int_equal(parse(&c, err, sizeof err, BASE, "--nic", "rxs0", NULL),
                   HS_CONFIG_OK);
  assert_string_equal(c.front.nic, "rxs0");
  assert_int_equal(parse(&c, err, sizeof err, BASE, "--nic", "rxs0,rxs1",
                         NULL),
                   HS_CONFIG_OK);
  assert_string_equal(c.front.nic, "rxs0,rxs1");
  assert_int_equal(parse(&c, err, sizeof err, BASE, "--nic", "rxs0,,rxs1",
                         NULL),
                   HS_CONFIG_ERROR);
  assert_non_null(strstr(err, "--nic"));
  assert_non_null(strstr(err, "an empty NIC name"));
  assert_int_equal(parse(&c, err, sizeof err, BASE, "--nic", "rxs0,rxs0",
                         NULL),
                   HS_CONFIG_ERROR);
  assert_non_null(strstr(err, "named twice"));
}

/* Issue #20: the stats' audience, sharing a store identity, the per-address
 * default and the head deadline. */
static void security_options(void **state)
{
  struct gw_config c;
  char err[256];
  assert_int_equal(parse(&c, err, sizeof err, BASE, NULL), HS_CONFIG_OK);
  assert_false(c.public_stats);
  assert_false(c.shared_store_identity);
  assert_int_equal(c.front.header_timeout_s, 30);
  assert_int_equal(hs_config_per_ip(&c.front), 1024 / 8);
  assert_int_equal(parse(&c, err, sizeof err, BASE, "--public-stats",
                         "--shared-store-identity", "--header-timeout", "5",
                         "--max-connections", "40", NULL),
                   HS_CONFIG_OK);
  assert_true(c.public_stats);
  assert_true(c.shared_store_identity);
  assert_int_equal(c.front.header_timeout_s, 5);
  assert_int_equal(hs_config_per_ip(&c.front), 5);
  assert_int_equal(parse(&c, err, sizeof err, BASE, "--max-connections-per-ip",
                         "0", NULL),
                   HS_CONFIG_OK);
  assert_int_equal(hs_config_per_ip(&c.front), 0); /* said: no limit */
  assert_int_equal(parse(&c, err, sizeof err, BASE, "--header-timeout", "0",
                         NULL),
                   HS_CONFIG_ERROR);
}

static void credentials(void **state)
{
  struct gw_config c;
  char err[256];
  assert_int_equal(parse(&c, err, sizeof err, "--backend", "http://h",
                         "--credentials", "/etc/users", NULL),
                   HS_CONFIG_OK);
  assert_string_equal(c.front.credentials_file, "/etc/users");
  assert_null(c.front.auth.access_key);
  assert_int_equal(parse(&c, err, sizeof err, BASE, "--credentials", "/x",
                         NULL),
                   HS_CONFIG_ERROR);
  assert_non_null(strstr(err, "exclude"));
}

static void environment(void **state)
{
  struct gw_config c;
  char err[256];
  setenv("HIPOBJ_GATEWAY_ACCESS_KEY", "EK", 1);
  setenv("HIPOBJ_GATEWAY_SECRET_KEY", "ES", 1);
  setenv("HIPOBJ_GATEWAY_BACKEND_ACCESS_KEY", "EBK", 1);
  setenv("HIPOBJ_GATEWAY_BACKEND_SECRET_KEY", "EBS", 1);
  assert_int_equal(parse(&c, err, sizeof err, "--backend", "http://h:1",
                         NULL),
                   HS_CONFIG_OK);
  assert_string_equal(c.front.auth.access_key, "EK");
  assert_string_equal(c.backend.secret_key, "EBS");
  unsetenv("HIPOBJ_GATEWAY_ACCESS_KEY");
  unsetenv("HIPOBJ_GATEWAY_SECRET_KEY");
  unsetenv("HIPOBJ_GATEWAY_BACKEND_ACCESS_KEY");
  unsetenv("HIPOBJ_GATEWAY_BACKEND_SECRET_KEY");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(minimal), cmocka_unit_test(shared_options),
      cmocka_unit_test(refusals), cmocka_unit_test(credentials),
      cmocka_unit_test(environment), cmocka_unit_test(security_options),
      cmocka_unit_test(nic_list)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
