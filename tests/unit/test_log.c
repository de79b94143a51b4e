/* SPDX-License-Identifier: MIT */
/* hipObjSetLogCallback(): warnings reach the callback and nothing reaches
 * stderr; NULL restores stderr with the "hipobj: " prefix; a callback
 * cannot replace itself; and once the call that replaces a callback
 * returns, the old one is never running, even with other threads logging
 * all the while. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/log.h"
#include "hipobj.h"
#include "options.h"

struct seen {
  int count;
  hipObjLogLevel_t level;
  char last[512];
};

static void record(void *ctx, hipObjLogLevel_t level, const char *message)
{
  struct seen *s = ctx;
  s->count++;
  s->level = level;
  snprintf(s->last, sizeof s->last, "%s", message);
}

static const char *bad_env(const char *name, void *ctx)
{
  (void)ctx;
  return strcmp(name, "HIPOBJ_MAX_TRANSFERS") == 0 ? "lots" : NULL;
}

/* Parses options with an invalid HIPOBJ_MAX_TRANSFERS (one warning) while
 * stderr goes to a file; returns what stderr received. */
static char *warn_with_stderr_captured(void)
{
  char path[] = "/tmp/hipobj-test-log.XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  fflush(stderr);
  int saved = dup(2);
  assert_true(saved >= 0);
  assert_int_equal(dup2(fd, 2), 2);
  struct ho_options o;
  ho_options_defaults(&o);
  ho_options_parse(&o, bad_env, NULL);
  fflush(stderr);
  assert_int_equal(dup2(saved, 2), 2);
  close(saved);
  static char out[1024];
  ssize_t n = pread(fd, out, sizeof out - 1, 0);
  out[n > 0 ? n : 0] = '\0';
  close(fd);
  unlink(path);
  return out;
}

static void callback_gets_warnings_not_stderr(void **state)
{
  (void)state;
  struct seen s = {0};
  assert_int_equal(hipObjSetLogCallback(record, &s).opError, hipObjSuccess);
  const char *err = warn_with_stderr_captured();
  assert_string_equal(err, "");
  assert_int_equal(s.count, 1);
  assert_int_equal(s.level, hipObjLogWarning);
  assert_non_null(strstr(s.last, "HIPOBJ_MAX_TRANSFERS"));
  assert_null(strstr(s.last, "hipobj:")); /* no prefix, no newline */
  assert_null(strchr(s.last, '\n'));

  ho_log_set_debug(true);
  ho_debug("a debug line %d", 7);
  ho_log_set_debug(false);
  ho_debug("not shown");
  assert_int_equal(s.count, 2);
  assert_int_equal(s.level, hipObjLogDebug);
  assert_string_equal(s.last, "a debug line 7");

  /* Back to stderr. */
  assert_int_equal(hipObjSetLogCallback(NULL, NULL).opError, hipObjSuccess);
  err = warn_with_stderr_captured();
  assert_int_equal(s.count, 2);
  assert_true(strncmp(err, "hipobj: warning: HIPOBJ_MAX_TRANSFERS", 37) == 0);
  assert_int_equal(err[strlen(err) - 1], '\n');
}

static hipObjOpError_t inner_result = hipObjSuccess;

static void replaces_itself(void *ctx, hipObjLogLevel_t level,
                            const char *message)
{
  (void)level;
  (void)message;
  inner_result = hipObjSetLogCallback(NULL, NULL).opError;
  (*(int *)ctx)++;
}

static void callback_cannot_replace_itself(void **state)
{
  (void)state;
  int calls = 0;
  assert_int_equal(hipObjSetLogCallback(replaces_itself, &calls).opError,
                   hipObjSuccess);
  ho_warn("one");
  assert_int_equal(calls, 1);
  assert_int_equal(inner_result, hipObjBusy);
  ho_warn("two"); /* still installed */
  assert_int_equal(calls, 2);
  assert_int_equal(hipObjSetLogCallback(NULL, NULL).opError, hipObjSuccess);
}

/* ---- replacing while other threads log ------------------------------ */

struct retiring {
  atomic_bool retired; /* set once hipObjSetLogCallback returned */
  atomic_int calls;
  atomic_int late;     /* calls seen running after retirement */
};

static void slow_old(void *ctx, hipObjLogLevel_t level, const char *message)
{
  (void)level;
  (void)message;
  struct retiring *r = ctx;
  if (atomic_load(&r->retired))
    atomic_fetch_add(&r->late, 1);
  atomic_fetch_add(&r->calls, 1);
  usleep(200); /* widen the window a replacement must wait out */
  if (atomic_load(&r->retired))
    atomic_fetch_add(&r->late, 1);
}

static void count_new(void *ctx, hipObjLogLevel_t level, const char *message)
{
  (void)level;
  (void)message;
  atomic_fetch_add((atomic_int *)ctx, 1);
}

static atomic_bool stop;

static void *logger(void *arg)
{
  (void)arg;
  while (!atomic_load(&stop))
    ho_warn("busy");
  return NULL;
}

static void replacement_waits_for_running_calls(void **state)
{
  (void)state;
  enum { THREADS = 4, ROUNDS = 20 };
  pthread_t t[THREADS];
  atomic_int fresh = 0;
  atomic_store(&stop, false);
  for (int round = 0; round < ROUNDS; round++) {
    struct retiring *r = calloc(1, sizeof *r);
    assert_non_null(r);
    assert_int_equal(hipObjSetLogCallback(slow_old, r).opError, hipObjSuccess);
    if (round == 0)
      for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, logger, NULL), 0);
    while (atomic_load(&r->calls) < 3)
      usleep(50);
    assert_int_equal(hipObjSetLogCallback(count_new, &fresh).opError,
                     hipObjSuccess);
    atomic_store(&r->retired, true);
    usleep(1000);
    assert_int_equal(atomic_load(&r->late), 0);
    free(r); /* the old context may be freed now */
  }
  atomic_store(&stop, true);
  for (int i = 0; i < THREADS; i++)
    pthread_join(t[i], NULL);
  assert_true(atomic_load(&fresh) > 0);
  assert_int_equal(hipObjSetLogCallback(NULL, NULL).opError, hipObjSuccess);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(callback_gets_warnings_not_stderr),
      cmocka_unit_test(callback_cannot_replace_itself),
      cmocka_unit_test(replacement_waits_for_running_calls),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
