/* SPDX-License-Identifier: MIT */
/* The rails' placement and health (src/railset.c), on a set of rails
 * with named devices and nothing behind them (placement and health touch
 * no verbs): the least loaded (bytes in flight and a fixed cost per
 * transfer), ties in turn; which failures mark a
 * rail down and which do not; a retry placed on a rail it has not failed
 * on; one probe per failback delay, never a retry; a rail back after a success; the marks
 * cleared when no rail is up; a single rail never marked. The clock is the
 * caller's (now_ns), so nothing sleeps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipobj.h"
#include "railset.h"

#define MS 1000000ull
#define FAILBACK (100 * MS)

struct fixture {
  struct ho_device dev[4];
  struct ho_railset s;
  int warnings;
  char log[2048];
};

static void on_log(void *ctx, hipObjLogLevel_t level, const char *message)
{
  struct fixture *f = ctx;
  if (level != hipObjLogWarning)
    return;
  f->warnings++;
  size_t n = strlen(f->log);
  snprintf(f->log + n, sizeof f->log - n, "%s\n", message);
}

/* n rails named r0.. with no pools: what ho_railset_open() makes, minus
 * the verbs. */
static void make(struct fixture *f, unsigned n)
{
  memset(&f->s, 0, sizeof f->s);
  atomic_init(&f->s.cursor, 0);
  f->s.failback_ns = FAILBACK;
  f->s.n = n;
  for (unsigned i = 0; i < n; i++) {
    snprintf(f->dev[i].name, sizeof f->dev[i].name, "r%u", i);
    struct ho_rail_rt *r = &f->s.rail[i];
    r->dev = &f->dev[i];
    atomic_init(&r->in_flight, 0);
    atomic_init(&r->in_flight_bytes, 0);
    atomic_init(&r->down, false);
    atomic_init(&r->down_ns, 0);
    atomic_init(&r->bytes, 0);
    atomic_init(&r->transfers, 0);
    atomic_init(&r->failures, 0);
    atomic_init(&r->marks, 0);
  }
}

static int setup(void **state)
{
  struct fixture *f = calloc(1, sizeof *f);
  if (!f)
    return -1;
  make(f, 2);
  if (hipObjSetLogCallback(on_log, f).opError != hipObjSuccess)
    return -1;
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  hipObjSetLogCallback(NULL, NULL);
  free(*state);
  return 0;
}

static bool is_down(struct fixture *f, unsigned i)
{
  return atomic_load(&f->s.rail[i].down);
}

/* A transfer placed and failed for `why` at time t: the rail it was on. */
static unsigned fail_one(struct fixture *f, uint32_t tried,
                         enum ho_retry_cause why, uint64_t t)
{
  unsigned r = ho_railset_pick(&f->s, tried, 0, t);
  ho_railset_done(&f->s, r, false, 0, why, t);
  return r;
}

/* One after another, transfers alternate; with one held, the next goes to
 * the other rail; counters follow. */
static void fewest_in_flight_then_in_turn(void **state)
{
  struct fixture *f = *state;
  unsigned seen[2] = {0, 0};
  for (int k = 0; k < 8; k++) {
    unsigned r = ho_railset_pick(&f->s, 0, 10, 1);
    seen[r]++;
    ho_railset_done(&f->s, r, true, 10, HO_RETRY_NONE, 1);
  }
  assert_int_equal(seen[0], 4);
  assert_int_equal(seen[1], 4);
  for (int k = 0; k < 8; k++) {
    unsigned held = ho_railset_pick(&f->s, 0, 10, 1);
    unsigned next = ho_railset_pick(&f->s, 0, 10, 1);
    assert_int_not_equal(held, next);
    ho_railset_done(&f->s, next, true, 10, HO_RETRY_NONE, 1);
    ho_railset_done(&f->s, held, true, 10, HO_RETRY_NONE, 1);
  }
  for (unsigned i = 0; i < 2; i++) {
    assert_int_equal(atomic_load(&f->s.rail[i].in_flight), 0);
    assert_int_equal(atomic_load(&f->s.rail[i].transfers), 12);
    assert_int_equal(atomic_load(&f->s.rail[i].bytes), 120);
  }
  assert_int_equal(f->warnings, 0);
}

/* The load is bytes, not a count: while a large transfer is in flight on
 * one rail, small ones go to the other until what they weigh there (their
 * bytes and HO_RAIL_XFER_COST each) passes it. Placing by count would send
 * the second small one onto the large one's rail (the byte shares of t23
 * drifted below 40% that way). */
static void bytes_in_flight_decide(void **state)
{
  struct fixture *f = *state;
  const uint64_t big = 1u << 20, small = 4096;
  unsigned b = ho_railset_pick(&f->s, 0, big, 1);
  const uint64_t big_load = big + HO_RAIL_XFER_COST;
  const unsigned fit = (unsigned)((big_load - 1) / (small + HO_RAIL_XFER_COST)) + 1;
  assert_int_equal(fit, 5); /* with a fixed cost of 256 KiB */
  for (unsigned k = 0; k < fit; k++)
    assert_int_equal(ho_railset_pick(&f->s, 0, small, 1), 1 - b);
  assert_int_equal(ho_railset_pick(&f->s, 0, small, 1), b); /* now lighter */
  assert_int_equal(atomic_load(&f->s.rail[b].in_flight_bytes), big + small);
  assert_int_equal(atomic_load(&f->s.rail[1 - b].in_flight_bytes), fit * small);
  for (unsigned k = 0; k < fit; k++)
    ho_railset_done(&f->s, 1 - b, true, small, HO_RETRY_NONE, 2);
  ho_railset_done(&f->s, b, true, small, HO_RETRY_NONE, 2);
  ho_railset_done(&f->s, b, false, big, HO_RETRY_NONE, 2);
  for (unsigned i = 0; i < 2; i++) {
    assert_int_equal(atomic_load(&f->s.rail[i].in_flight), 0);
    assert_int_equal(atomic_load(&f->s.rail[i].in_flight_bytes), 0);
  }
  /* Moved: what succeeded, not the failed large one. */
  assert_int_equal(atomic_load(&f->s.rail[b].bytes), small);
  assert_int_equal(atomic_load(&f->s.rail[1 - b].bytes), fit * small);
}

/* An error completion (retries exceeded, flushed, a failed probe), a
 * stall and the server's RDMA failure mark the rail, once, logged with
 * the reason; an answer, a local error and a broken kept connection do
 * not. */
static void what_marks_a_rail(void **state)
{
  struct fixture *f = *state;
  static const enum ho_retry_cause none[] = {HO_RETRY_NONE,
                                             HO_RETRY_KEPT_BROKEN};
  for (size_t k = 0; k < 2; k++) {
    unsigned r = fail_one(f, 0, none[k], 1);
    assert_false(is_down(f, r));
  }
  assert_int_equal(f->warnings, 0);
  static const struct {
    enum ho_retry_cause why;
    const char *reason;
  } marks[] = {{HO_RETRY_FABRIC, "an error completion"},
               {HO_RETRY_STALLED, "a stall"},
               {HO_RETRY_SERVER, "the server's RDMA failing on it"}};
  for (size_t k = 0; k < 3; k++) {
    make(f, 2);
    f->log[0] = '\0';
    f->warnings = 0;
    unsigned r = fail_one(f, 0, marks[k].why, 1);
    assert_true(is_down(f, r));
    assert_false(is_down(f, 1 - r));
    /* A second failure there (one in flight before the mark): the same
     * mark, not logged again. */
    ho_railset_done(&f->s, r, false, 0, marks[k].why, 2);
    atomic_fetch_add(&f->s.rail[r].in_flight, 1); /* balance the done */
    assert_int_equal(atomic_load(&f->s.rail[r].marks), 1);
    assert_int_equal(f->warnings, 1);
    char want[128];
    snprintf(want, sizeof want, "rail r%u marked down after %s", r,
             marks[k].reason);
    assert_non_null(strstr(f->log, want));
  }
}

/* A retry goes to a rail the transfer has not failed on, and only to an
 * up one; when every rail up has failed it, to one of those again. */
static void retry_on_another_rail(void **state)
{
  struct fixture *f = *state;
  make(f, 3);
  uint32_t tried = 0;
  unsigned a = fail_one(f, tried, HO_RETRY_KEPT_BROKEN, 1); /* no mark */
  tried |= 1u << a;
  assert_true(ho_railset_untried(&f->s, tried));
  unsigned b = fail_one(f, tried, HO_RETRY_FABRIC, 1); /* marked */
  assert_int_not_equal(a, b);
  tried |= 1u << b;
  assert_true(ho_railset_untried(&f->s, tried));
  unsigned c = fail_one(f, tried, HO_RETRY_KEPT_BROKEN, 1);
  assert_true(c != a && c != b);
  tried |= 1u << c;
  /* Every rail failed it: a rail up again (a or c, never the down b), and
   * the retry waits for its slot. */
  assert_false(ho_railset_untried(&f->s, tried));
  unsigned d = ho_railset_pick(&f->s, tried, 1, 1);
  assert_true(d == a || d == c);
  ho_railset_done(&f->s, d, true, 1, HO_RETRY_NONE, 1);
  /* New transfers avoid the down rail. */
  for (int k = 0; k < 6; k++) {
    unsigned r = ho_railset_pick(&f->s, 0, 1, 2);
    assert_int_not_equal(r, b);
    ho_railset_done(&f->s, r, true, 1, HO_RETRY_NONE, 2);
  }
}

/* After the failback delay one transfer (not a retry) probes a down rail,
 * the next not before another delay; a failed probe keeps it down (no new mark), a
 * good one brings it back, logged. */
static void probe_after_failback(void **state)
{
  struct fixture *f = *state;
  unsigned r = fail_one(f, 0, HO_RETRY_FABRIC, 1 * MS);
  const uint64_t t = 1 * MS + FAILBACK;
  assert_int_not_equal(ho_railset_pick(&f->s, 0, 1, t - 1), r);
  ho_railset_done(&f->s, 1 - r, true, 1, HO_RETRY_NONE, t);
  /* A retry (the other rail failed it) does not probe: it goes back to
   * the rail up. */
  unsigned retry = ho_railset_pick(&f->s, 1u << (1 - r), 1, t);
  assert_int_equal(retry, 1 - r);
  ho_railset_done(&f->s, retry, true, 1, HO_RETRY_NONE, t);
  unsigned p = ho_railset_pick(&f->s, 0, 0, t); /* the probe */
  assert_int_equal(p, r);
  unsigned q = ho_railset_pick(&f->s, 0, 1, t); /* not a second one */
  assert_int_not_equal(q, r);
  ho_railset_done(&f->s, q, true, 1, HO_RETRY_NONE, t);
  ho_railset_done(&f->s, p, false, 0, HO_RETRY_FABRIC, t + MS);
  assert_true(is_down(f, r));
  assert_int_equal(atomic_load(&f->s.rail[r].marks), 1);
  /* The next probe one delay after the failed one. */
  assert_int_not_equal(ho_railset_pick(&f->s, 0, 0, t + FAILBACK), r);
  p = ho_railset_pick(&f->s, 0, 5, t + MS + FAILBACK);
  assert_int_equal(p, r);
  ho_railset_done(&f->s, p, true, 5, HO_RETRY_NONE, t + 2 * FAILBACK);
  assert_false(is_down(f, r));
  assert_non_null(strstr(f->log, "rail r"));
  assert_non_null(strstr(f->log, " is back up"));
}

/* No rail up: the marks are cleared (logged once) and transfers placed
 * again. */
static void no_rail_up_clears_marks(void **state)
{
  struct fixture *f = *state;
  unsigned a = fail_one(f, 0, HO_RETRY_FABRIC, 1);
  unsigned b = fail_one(f, 0, HO_RETRY_STALLED, 1);
  assert_int_not_equal(a, b);
  assert_true(is_down(f, 0) && is_down(f, 1));
  assert_false(ho_railset_untried(&f->s, 0));
  unsigned r = ho_railset_pick(&f->s, 0, 1, 2);
  assert_true(r < 2);
  assert_false(is_down(f, 0) || is_down(f, 1));
  assert_non_null(strstr(f->log, "every rail is marked down"));
  ho_railset_done(&f->s, r, true, 1, HO_RETRY_NONE, 2);
}

/* With one rail, nothing is ever marked: there is nowhere else to go. */
static void single_rail_never_marked(void **state)
{
  struct fixture *f = *state;
  make(f, 1);
  for (int k = 0; k < 3; k++)
    assert_int_equal(fail_one(f, 0, HO_RETRY_FABRIC, 1), 0);
  assert_false(is_down(f, 0));
  assert_int_equal(atomic_load(&f->s.rail[0].failures), 3);
  assert_int_equal(f->warnings, 0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(fewest_in_flight_then_in_turn, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(bytes_in_flight_decide, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(what_marks_a_rail, setup, teardown),
      cmocka_unit_test_setup_teardown(retry_on_another_rail, setup, teardown),
      cmocka_unit_test_setup_teardown(probe_after_failback, setup, teardown),
      cmocka_unit_test_setup_teardown(no_rail_up_clears_marks, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(single_rail_never_marked, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
