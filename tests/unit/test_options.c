/* SPDX-License-Identifier: MIT */
/* ho_options: defaults, every variable's valid, boundary, invalid and
 * hostile values, and the one-warning-line rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "hipobj.h"
#include "options.h"

/* ---- a variable table as the environment ------------------------------ */

struct var {
  const char *name;
  const char *value;
};

struct env {
  struct var vars[8];
  size_t n;
  unsigned lookups;
};

static const char *env_get(const char *name, void *ctx)
{
  struct env *e = ctx;
  e->lookups++;
  for (size_t i = 0; i < e->n; i++)
    if (strcmp(e->vars[i].name, name) == 0)
      return e->vars[i].value;
  return NULL;
}

/* ---- stderr capture ---------------------------------------------------- */

struct capture {
  FILE *file;
  int saved;
  char text[8192];
  size_t lines;
};

static void capture_begin(struct capture *c)
{
  fflush(stderr);
  c->file = tmpfile();
  assert_non_null(c->file);
  c->saved = dup(STDERR_FILENO);
  assert_true(c->saved >= 0);
  assert_true(dup2(fileno(c->file), STDERR_FILENO) >= 0);
}

static void capture_end(struct capture *c)
{
  fflush(stderr);
  assert_true(dup2(c->saved, STDERR_FILENO) >= 0);
  close(c->saved);
  rewind(c->file);
  size_t n = fread(c->text, 1, sizeof c->text - 1, c->file);
  c->text[n] = '\0';
  fclose(c->file);
  c->lines = 0;
  for (size_t i = 0; i < n; i++)
    c->lines += c->text[i] == '\n';
}

/* Parses one variable from defaults and captures what was printed. */
static struct ho_options parse_one(const char *name, const char *value,
                                   struct capture *c)
{
  struct env e = {.vars = {{name, value}}, .n = 1};
  struct ho_options o;
  ho_options_defaults(&o);
  capture_begin(c);
  ho_options_parse(&o, env_get, &e);
  capture_end(c);
  return o;
}

static void expect_quiet(const struct capture *c)
{
  if (c->lines != 0 || c->text[0])
    fail_msg("unexpected output: %s", c->text);
}

static void expect_one_warning(const struct capture *c, const char *name,
                               const char *using)
{
  if (c->lines != 1)
    fail_msg("%zu lines, expected 1: %s", c->lines, c->text);
  assert_non_null(strstr(c->text, name));
  assert_non_null(strstr(c->text, using));
  assert_non_null(strstr(c->text, "warning"));
  for (const char *p = c->text; *p; p++)
    if ((unsigned char)*p < 0x20 && *p != '\n')
      fail_msg("control byte 0x%02x in warning", (unsigned char)*p);
}

/* ---- defaults ----------------------------------------------------------- */

static void assert_defaults(const struct ho_options *o)
{
  assert_int_equal(o->max_transfers, 16);
  assert_int_equal(o->stage_timeout_ms, 30000);
  assert_int_equal(o->transfer_timeout_ms, 5000);
  assert_int_equal(o->transfer_max_ms, 0);
  assert_int_equal(o->max_connections, 0); /* twice max_transfers */
  assert_int_equal(o->max_rails, 0);       /* the rails rule's count */
  assert_int_equal(o->failback_ms, 5000);
  assert_int_equal(o->idle_timeout_ms, 30000);
  assert_int_equal(o->wait_timeout_ms, 10000);
  assert_int_equal(o->retries, 3);
  assert_int_equal(o->stall_timeout_ms, 3000);
  assert_int_equal(o->probe_interval_ms, 200);
  assert_int_equal(o->spin_us, HO_SPIN_US_AUTO);
  assert_true(o->dmabuf);
  assert_false(o->require_gpu_direct);
  assert_false(o->rdma_debug);
  assert_true(o->scoped_tokens);
  assert_true(o->data_first);
  assert_false(o->require_scoped_tokens);
  assert_string_equal(o->gpu_runtime, "auto");
}

static void test_defaults(void **state)
{
  (void)state;
  struct ho_options o;
  memset(&o, 0xa5, sizeof o);
  ho_options_defaults(&o);
  assert_defaults(&o);
}

static void test_nothing_set_is_quiet(void **state)
{
  (void)state;
  struct env e = {.n = 0};
  struct ho_options o;
  ho_options_defaults(&o);
  struct capture c;
  capture_begin(&c);
  ho_options_parse(&o, env_get, &e);
  capture_end(&c);
  expect_quiet(&c);
  assert_defaults(&o);
  assert_int_equal(e.lookups, 20); /* each variable read once */
}

static void test_null_arguments(void **state)
{
  (void)state;
  ho_options_defaults(NULL);
  ho_options_parse(NULL, env_get, NULL);
  struct ho_options o;
  ho_options_defaults(&o);
  ho_options_parse(&o, NULL, NULL);
  assert_defaults(&o);
}

/* ---- integers ----------------------------------------------------------- */

struct int_case {
  const char *value;
  unsigned expect;
};

static void check_int_valid(const char *name, const struct int_case *cases,
                            size_t n, size_t offset)
{
  for (size_t i = 0; i < n; i++) {
    struct capture c;
    struct ho_options o = parse_one(name, cases[i].value, &c);
    expect_quiet(&c);
    unsigned got;
    memcpy(&got, (const char *)&o + offset, sizeof got);
    if (got != cases[i].expect)
      fail_msg("%s=\"%s\": got %u, expected %u", name, cases[i].value, got,
               cases[i].expect);
  }
}

/* Values that every integer variable must reject. */
static const char *const hostile_ints[] = {
    " 5", "5 ", "\t5", "5\n", "+5", "-5", "-0", "5x", "x5", "0x10", "010x",
    "1e3", "5.0", "5,0", "1_000", "\xd9\xa1", /* Arabic-Indic one */
    "18446744073709551615",                    /* ULLONG_MAX */
    "18446744073709551616",                    /* ULLONG_MAX + 1 */
    "99999999999999999999999999999999999999", "4294967296", /* 2^32 */
    "4294967297", /* 2^32 + 1: wraps to 1 if cast too early */
    "4294968320", /* 2^32 + 1024 */
    "-18446744073709551615", /* strtoull would negate this to 1 */
    "0", "00",
};

static void check_int_invalid(const char *name, const char *const *values,
                              size_t n, const char *using)
{
  for (size_t i = 0; i < n; i++) {
    struct capture c;
    struct ho_options o = parse_one(name, values[i], &c);
    expect_one_warning(&c, name, using);
    struct ho_options d;
    ho_options_defaults(&d);
    if (memcmp(&o, &d, sizeof o) != 0)
      fail_msg("%s=\"%s\" changed the options", name, values[i]);
  }
}

static void test_max_transfers_valid(void **state)
{
  (void)state;
  static const struct int_case ok[] = {
      {"1", 1}, {"2", 2}, {"16", 16}, {"1023", 1023}, {"1024", 1024},
      {"0016", 16}, {"0000000000000000000000000000000000001", 1},
  };
  check_int_valid("HIPOBJ_MAX_TRANSFERS", ok, sizeof ok / sizeof ok[0],
                  offsetof(struct ho_options, max_transfers));
}

static void test_max_transfers_invalid(void **state)
{
  (void)state;
  static const char *const bad[] = {"1025", "65536", "4294967295"};
  check_int_invalid("HIPOBJ_MAX_TRANSFERS", bad, sizeof bad / sizeof bad[0],
                    "using 16");
  check_int_invalid("HIPOBJ_MAX_TRANSFERS", hostile_ints,
                    sizeof hostile_ints / sizeof hostile_ints[0],
                    "using 16");
}

static void test_stage_timeout(void **state)
{
  (void)state;
  static const struct int_case ok[] = {
      {"1", 1}, {"30000", 30000}, {"86399999", 86399999},
      {"86400000", 86400000},
  };
  check_int_valid("HIPOBJ_STAGE_TIMEOUT_MS", ok, sizeof ok / sizeof ok[0],
                  offsetof(struct ho_options, stage_timeout_ms));
  static const char *const bad[] = {"86400001", "4294967295", "864000000"};
  check_int_invalid("HIPOBJ_STAGE_TIMEOUT_MS", bad,
                    sizeof bad / sizeof bad[0], "using 30000");
  check_int_invalid("HIPOBJ_STAGE_TIMEOUT_MS", hostile_ints,
                    sizeof hostile_ints / sizeof hostile_ints[0],
                    "using 30000");
}

static void test_transfer_timeout(void **state)
{
  (void)state;
  static const struct int_case ok[] = {
      {"1", 1}, {"5000", 5000}, {"86400000", 86400000},
  };
  check_int_valid("HIPOBJ_TRANSFER_TIMEOUT_MS", ok, sizeof ok / sizeof ok[0],
                  offsetof(struct ho_options, transfer_timeout_ms));
  static const char *const bad[] = {"86400001", "4294967296"};
  check_int_invalid("HIPOBJ_TRANSFER_TIMEOUT_MS", bad,
                    sizeof bad / sizeof bad[0], "using 5000");
  check_int_invalid("HIPOBJ_TRANSFER_TIMEOUT_MS", hostile_ints,
                    sizeof hostile_ints / sizeof hostile_ints[0],
                    "using 5000");
}

static void test_wait_timeout(void **state)
{
  (void)state;
  static const struct int_case ok[] = {{"1", 1}, {"250", 250}, {"86400000", 86400000}};
  check_int_valid("HIPOBJ_WAIT_TIMEOUT_MS", ok, sizeof ok / sizeof ok[0],
                  offsetof(struct ho_options, wait_timeout_ms));
  static const char *const bad[] = {"0", "86400001"};
  check_int_invalid("HIPOBJ_WAIT_TIMEOUT_MS", bad, sizeof bad / sizeof bad[0],
                    "using 10000");
}

static void test_retries(void **state)
{
  (void)state;
  static const struct int_case ok[] = {{"0", 0}, {"1", 1}, {"10", 10}};
  check_int_valid("HIPOBJ_RETRIES", ok, sizeof ok / sizeof ok[0],
                  offsetof(struct ho_options, retries));
  static const char *const bad[] = {"11", "-1", "3x"};
  check_int_invalid("HIPOBJ_RETRIES", bad, sizeof bad / sizeof bad[0],
                    "using 3");
}

static void test_stall_timeout(void **state)
{
  (void)state;
  static const struct int_case ok[] = {{"0", 0}, {"500", 500}, {"86400000", 86400000}};
  check_int_valid("HIPOBJ_STALL_TIMEOUT_MS", ok, sizeof ok / sizeof ok[0],
                  offsetof(struct ho_options, stall_timeout_ms));
  static const char *const bad[] = {"86400001", "2s"};
  check_int_invalid("HIPOBJ_STALL_TIMEOUT_MS", bad, sizeof bad / sizeof bad[0],
                    "using 3000");
}

static void test_transfer_max(void **state)
{
  (void)state;
  static const struct int_case ok[] = {{"0", 0}, {"60000", 60000}, {"86400000", 86400000}};
  check_int_valid("HIPOBJ_TRANSFER_MAX_MS", ok, sizeof ok / sizeof ok[0],
                  offsetof(struct ho_options, transfer_max_ms));
  static const char *const bad[] = {"86400001", "1m", "-1"};
  check_int_invalid("HIPOBJ_TRANSFER_MAX_MS", bad, sizeof bad / sizeof bad[0],
                    "using 0");
}

static void test_probe_interval(void **state)
{
  (void)state;
  static const struct int_case ok[] = {{"0", 0}, {"50", 50}, {"86400000", 86400000}};
  check_int_valid("HIPOBJ_PROBE_INTERVAL_MS", ok, sizeof ok / sizeof ok[0],
                  offsetof(struct ho_options, probe_interval_ms));
  static const char *const bad[] = {"86400001", "1s", "-5"};
  check_int_invalid("HIPOBJ_PROBE_INTERVAL_MS", bad, sizeof bad / sizeof bad[0],
                    "using 200");
}

static void test_spin_us(void **state)
{
  (void)state;
  static const struct int_case ok[] = {
      {"0", 0}, {"10", 10}, {"1000000", 1000000}};
  check_int_valid("HIPOBJ_SPIN_US", ok, sizeof ok / sizeof ok[0],
                  offsetof(struct ho_options, spin_us));
  static const struct {
    const char *v;
    unsigned want;
  } words[] = {{"auto", HO_SPIN_US_AUTO}, {"poll", HO_SPIN_US_POLL}};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
    struct capture c;
    struct ho_options o = parse_one("HIPOBJ_SPIN_US", words[i].v, &c);
    expect_quiet(&c);
    assert_int_equal(o.spin_us, words[i].want);
  }
  static const char *const bad[] = {"1000001", "-1", "10us", "Poll", "auto "};
  check_int_invalid("HIPOBJ_SPIN_US", bad, sizeof bad / sizeof bad[0],
                    "using auto");
}

static void test_max_rails(void **state)
{
  (void)state;
  static const struct int_case ok[] = {{"1", 1}, {"2", 2}, {"16", 16}};
  check_int_valid("HIPOBJ_MAX_RAILS", ok, sizeof ok / sizeof ok[0],
                  offsetof(struct ho_options, max_rails));
  static const char *const bad[] = {"0", "17", "4294967296"};
  check_int_invalid("HIPOBJ_MAX_RAILS", bad, sizeof bad / sizeof bad[0],
                    "using 0");
  check_int_invalid("HIPOBJ_MAX_RAILS", hostile_ints,
                    sizeof hostile_ints / sizeof hostile_ints[0], "using 0");
}

static void test_failback(void **state)
{
  (void)state;
  static const struct int_case ok[] = {{"1", 1}, {"250", 250},
                                       {"86400000", 86400000}};
  check_int_valid("HIPOBJ_FAILBACK_MS", ok, sizeof ok / sizeof ok[0],
                  offsetof(struct ho_options, failback_ms));
  static const char *const bad[] = {"0", "86400001", "5s"};
  check_int_invalid("HIPOBJ_FAILBACK_MS", bad, sizeof bad / sizeof bad[0],
                    "using 5000");
  check_int_invalid("HIPOBJ_FAILBACK_MS", hostile_ints,
                    sizeof hostile_ints / sizeof hostile_ints[0],
                    "using 5000");
}

/* An invalid value keeps what the struct held, and says so. */
static void test_invalid_keeps_current_value(void **state)
{
  (void)state;
  struct env e = {.vars = {{"HIPOBJ_MAX_TRANSFERS", "many"}}, .n = 1};
  struct ho_options o;
  ho_options_defaults(&o);
  o.max_transfers = 7;
  struct capture c;
  capture_begin(&c);
  ho_options_parse(&o, env_get, &e);
  capture_end(&c);
  expect_one_warning(&c, "HIPOBJ_MAX_TRANSFERS", "using 7");
  assert_int_equal(o.max_transfers, 7);
}

/* An empty value is the same as an unset one, for every variable. */
static void test_empty_is_unset(void **state)
{
  (void)state;
  static const char *const names[] = {
      "HIPOBJ_MAX_TRANSFERS", "HIPOBJ_STAGE_TIMEOUT_MS",
      "HIPOBJ_TRANSFER_TIMEOUT_MS", "HIPOBJ_DMABUF",
      "HIPOBJ_REQUIRE_GPU_DIRECT", "HIPOBJ_RDMA_DEBUG", "HIPOBJ_GPU_RUNTIME"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    struct capture c;
    struct ho_options o = parse_one(names[i], "", &c);
    expect_quiet(&c);
    assert_defaults(&o);
  }
}

/* ---- booleans ------------------------------------------------------------ */

struct bool_case {
  const char *value;
  bool expect;
};

static void check_bools(const char *name, const struct bool_case *cases,
                        size_t n, size_t offset)
{
  for (size_t i = 0; i < n; i++) {
    struct capture c;
    struct ho_options o = parse_one(name, cases[i].value, &c);
    expect_quiet(&c);
    bool got;
    memcpy(&got, (const char *)&o + offset, sizeof got);
    if (got != cases[i].expect)
      fail_msg("%s=\"%s\": got %d", name, cases[i].value, got);
  }
}

static void test_dmabuf(void **state)
{
  (void)state;
  static const struct bool_case cases[] = {
      {"0", false},  {"n", false},   {"N", false},    {"no", false},
      {"No", false}, {"never", false}, {"0x1", false}, {"1", true},
      {"y", true},   {"yes", true},  {"on", true},    {"off", false},
      {"OFF", false}, {"false", false}, {"F", false},
      {" 0", true},  {"\x01", true},
  };
  check_bools("HIPOBJ_DMABUF", cases, sizeof cases / sizeof cases[0],
              offsetof(struct ho_options, dmabuf));
}

static void test_require_gpu_direct(void **state)
{
  (void)state;
  static const struct bool_case cases[] = {
      {"0", false}, {"n", false},  {"N", false},    {"no", false},
      {"off", false}, {"false", false},
      {"1", true},  {"y", true},   {"yes", true},   {"true", true},
      {"x", true},  {" n", true},  {"\xff", true},
  };
  check_bools("HIPOBJ_REQUIRE_GPU_DIRECT", cases,
              sizeof cases / sizeof cases[0],
              offsetof(struct ho_options, require_gpu_direct));
}

static void test_rdma_debug(void **state)
{
  (void)state;
  static const struct bool_case cases[] = {
      {"0", false}, {"00", false}, {"0n", false}, {"1", true},
      {"y", true},  {"n", false},  {"N", false},  {"no", false},
      {"off", false}, {"on", true},
  };
  check_bools("HIPOBJ_RDMA_DEBUG", cases, sizeof cases / sizeof cases[0],
              offsetof(struct ho_options, rdma_debug));
}

static void test_scoped_tokens(void **state)
{
  (void)state;
  static const struct bool_case cases[] = {
      {"0", false}, {"off", false}, {"1", true}, {"on", true}, {"n", false},
  };
  check_bools("HIPOBJ_SCOPED_TOKENS", cases, sizeof cases / sizeof cases[0],
              offsetof(struct ho_options, scoped_tokens));
  check_bools("HIPOBJ_REQUIRE_SCOPED_TOKENS", cases,
              sizeof cases / sizeof cases[0],
              offsetof(struct ho_options, require_scoped_tokens));
}

/* ---- the GPU runtime ----------------------------------------------------- */

static void test_gpu_runtime_valid(void **state)
{
  (void)state;
  static const char *const ok[] = {"auto", "hip", "cuda", "none"};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    struct capture c;
    struct ho_options o = parse_one("HIPOBJ_GPU_RUNTIME", ok[i], &c);
    expect_quiet(&c);
    assert_string_equal(o.gpu_runtime, ok[i]);
  }
}

static void test_gpu_runtime_invalid(void **state)
{
  (void)state;
  static const char *const bad[] = {
      "HIP",   "Cuda",  "cuda ", " hip", "cud", "cudax", "none\n",
      "autoauto", "hipcuda", "rocm", "0", "auto\x1b[2J", "nonenonenone",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct capture c;
    struct ho_options o = parse_one("HIPOBJ_GPU_RUNTIME", bad[i], &c);
    expect_one_warning(&c, "HIPOBJ_GPU_RUNTIME", "using auto");
    assert_string_equal(o.gpu_runtime, "auto");
  }
}

/* ---- hostile values in warnings ------------------------------------------ */

static void test_warning_is_one_bounded_line(void **state)
{
  (void)state;
  static char huge[100001];
  memset(huge, '9', sizeof huge - 1);
  huge[50] = '\n';
  struct capture c;
  parse_one("HIPOBJ_MAX_TRANSFERS", huge, &c);
  expect_one_warning(&c, "HIPOBJ_MAX_TRANSFERS", "using 16");
  assert_true(strlen(c.text) < 300);

  parse_one("HIPOBJ_GPU_RUNTIME", "\n\r\x1b[31mhip\"\\\n", &c);
  expect_one_warning(&c, "HIPOBJ_GPU_RUNTIME", "using auto");
  assert_null(strchr(c.text, '\x1b'));
  assert_null(strchr(c.text, '\r'));
}

static void test_every_variable_invalid(void **state)
{
  (void)state;
  struct env e = {
      .vars = {{"HIPOBJ_MAX_TRANSFERS", "0"},
               {"HIPOBJ_STAGE_TIMEOUT_MS", "-1"},
               {"HIPOBJ_TRANSFER_TIMEOUT_MS", "1h"},
               {"HIPOBJ_GPU_RUNTIME", "opencl"}},
      .n = 4};
  struct ho_options o;
  ho_options_defaults(&o);
  struct capture c;
  capture_begin(&c);
  ho_options_parse(&o, env_get, &e);
  capture_end(&c);
  assert_int_equal(c.lines, 4);
  assert_defaults(&o);
}

static void test_every_variable_valid(void **state)
{
  (void)state;
  struct env e = {
      .vars = {{"HIPOBJ_MAX_TRANSFERS", "64"},
               {"HIPOBJ_STAGE_TIMEOUT_MS", "1000"},
               {"HIPOBJ_TRANSFER_TIMEOUT_MS", "2500"},
               {"HIPOBJ_DMABUF", "no"},
               {"HIPOBJ_REQUIRE_GPU_DIRECT", "1"},
               {"HIPOBJ_RDMA_DEBUG", "1"},
               {"HIPOBJ_GPU_RUNTIME", "cuda"}},
      .n = 7};
  struct ho_options o;
  ho_options_defaults(&o);
  struct capture c;
  capture_begin(&c);
  ho_options_parse(&o, env_get, &e);
  capture_end(&c);
  expect_quiet(&c);
  assert_int_equal(o.max_transfers, 64);
  assert_int_equal(o.stage_timeout_ms, 1000);
  assert_int_equal(o.transfer_timeout_ms, 2500);
  assert_false(o.dmabuf);
  assert_true(o.require_gpu_direct);
  assert_true(o.rdma_debug);
  assert_string_equal(o.gpu_runtime, "cuda");
}

static void test_from_env(void **state)
{
  (void)state;
  setenv("HIPOBJ_MAX_TRANSFERS", "3", 1);
  setenv("HIPOBJ_GPU_RUNTIME", "none", 1);
  setenv("HIPOBJ_DMABUF", "0", 1);
  struct ho_options o;
  memset(&o, 0xa5, sizeof o);
  ho_options_from_env(&o);
  unsetenv("HIPOBJ_MAX_TRANSFERS");
  unsetenv("HIPOBJ_GPU_RUNTIME");
  unsetenv("HIPOBJ_DMABUF");
  assert_int_equal(o.max_transfers, 3);
  assert_string_equal(o.gpu_runtime, "none");
  assert_false(o.dmabuf);
  assert_int_equal(o.stage_timeout_ms, 30000);

  ho_options_from_env(&o); /* starts again from the defaults */
  assert_defaults(&o);
}

/* hipObjGetEnvVar() lists the library's own table: every variable it
 * names is one the parser reads (a value unlike the default changes the
 * options), none twice, the two that `hipobj info` once left out among
 * them, and the list ends. */
static void test_env_var_list(void **state)
{
  (void)state;
  const char *names[32], *dflt;
  uint32_t n = 0;
  while (n < 32 && hipObjGetEnvVar(n, &names[n], &dflt).opError ==
                       hipObjSuccess) {
    const char *v = !strcmp(dflt, "on")     ? "0"
                    : !strcmp(dflt, "off")  ? "1"
                    : !strcmp(dflt, "auto") ? "none"
                                            : "7";
    struct capture c;
    struct ho_options d, o = parse_one(names[n], v, &c);
    expect_quiet(&c);
    ho_options_defaults(&d);
    if (memcmp(&o, &d, sizeof o) == 0)
      fail_msg("%s=%s changes nothing", names[n], v);
    for (uint32_t k = 0; k < n; k++)
      assert_string_not_equal(names[k], names[n]);
    n++;
  }
  assert_int_equal(n, 20);
  bool conns = false, idle = false;
  for (uint32_t k = 0; k < n; k++) {
    conns |= !strcmp(names[k], "HIPOBJ_MAX_CONNECTIONS");
    idle |= !strcmp(names[k], "HIPOBJ_IDLE_TIMEOUT_MS");
  }
  assert_true(conns && idle);
  assert_int_equal(hipObjGetEnvVar(0, NULL, &dflt).opError,
                   hipObjInvalidValue);
  assert_int_equal(hipObjGetEnvVar(0, &names[0], NULL).opError,
                   hipObjInvalidValue);
}

int main(void)
{
  static const char *const vars[] = {
      "HIPOBJ_MAX_TRANSFERS", "HIPOBJ_STAGE_TIMEOUT_MS",
      "HIPOBJ_TRANSFER_TIMEOUT_MS", "HIPOBJ_DMABUF",
      "HIPOBJ_REQUIRE_GPU_DIRECT", "HIPOBJ_RDMA_DEBUG", "HIPOBJ_GPU_RUNTIME"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
    unsetenv(vars[i]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),
      cmocka_unit_test(test_nothing_set_is_quiet),
      cmocka_unit_test(test_null_arguments),
      cmocka_unit_test(test_max_transfers_valid),
      cmocka_unit_test(test_max_transfers_invalid),
      cmocka_unit_test(test_stage_timeout),
      cmocka_unit_test(test_transfer_timeout),
      cmocka_unit_test(test_transfer_max),
      cmocka_unit_test(test_wait_timeout),
      cmocka_unit_test(test_retries),
      cmocka_unit_test(test_stall_timeout),
      cmocka_unit_test(test_probe_interval),
      cmocka_unit_test(test_max_rails),
      cmocka_unit_test(test_failback),
      cmocka_unit_test(test_spin_us),
      cmocka_unit_test(test_scoped_tokens),
      cmocka_unit_test(test_invalid_keeps_current_value),
      cmocka_unit_test(test_empty_is_unset),
      cmocka_unit_test(test_dmabuf),
      cmocka_unit_test(test_require_gpu_direct),
      cmocka_unit_test(test_rdma_debug),
      cmocka_unit_test(test_gpu_runtime_valid),
      cmocka_unit_test(test_gpu_runtime_invalid),
      cmocka_unit_test(test_warning_is_one_bounded_line),
      cmocka_unit_test(test_every_variable_invalid),
      cmocka_unit_test(test_every_variable_valid),
      cmocka_unit_test(test_from_env),
      cmocka_unit_test(test_env_var_list),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
