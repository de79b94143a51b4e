/* SPDX-License-Identifier: MIT */
/* Pacing (src/server/pace.h): the window a software device's transfers
 * keep in flight, driven by its retry counter, read through a topology
 * whose counter the test moves. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "pace.h"

#define MS (1000ull * 1000)
#define MAX (4u << 20)

static unsigned long long counter;
static bool counter_fails;
static unsigned reads;
static char asked[64];

static hipObjOpError_t test_hw_counter(const struct ho_topology *t,
                                       const char *nic, int port,
                                       const char *name,
                                       unsigned long long *out)
{
  (void)t;
  reads++;
  snprintf(asked, sizeof asked, "%s/%d/%s", nic, port, name);
  if (counter_fails)
    return hipObjNotSupported;
  *out = counter;
  return hipObjSuccess;
}

static struct ho_topology_ops ops;
static struct ho_topology topo = {.ops = &ops};

static int setup(void **state)
{
  (void)state;
  ops = ho_topology_null_ops;
  ops.hw_counter = test_hw_counter;
  counter = 100;
  counter_fails = false;
  reads = 0;
  return 0;
}

/* A hardware NIC, or a software device without the counter: never paced. */
static void not_paced(void **state)
{
  (void)state;
  struct ho_pace p;
  ho_pace_init(&p, &topo, "mlx5_0", 1, false, 4096, MAX);
  assert_false(p.on);
  assert_false(ho_pace_troubled(&p, 4096));
  counter = 200;
  assert_int_equal(ho_pace_window(&p, 50 * MS), MAX);
  assert_int_equal(reads, 0);
  counter_fails = true;
  ho_pace_init(&p, &topo, "rxe0", 1, true, 4096, MAX);
  assert_false(p.on);
  assert_int_equal(ho_pace_window(&p, 50 * MS), MAX);
  struct ho_topology null_topo = {.ops = &ho_topology_null_ops};
  ho_pace_init(&p, &null_topo, "rxe0", 1, true, 4096, MAX);
  assert_false(p.on);
  ho_pace_init(&p, NULL, "rxe0", 1, true, 4096, MAX);
  assert_false(p.on);
}

/* A fabric that never retries keeps the whole pipeline; each look that
 * finds new retries halves the window, down to two MTUs; looks that find
 * none after a window of traffic double it back. (Halving, not a cut to
 * two MTUs at once: on Soft-RoCE over lo one bulk stream makes retries at
 * one look in four, and the cut cost it 14-20 points of ib_write_bw;
 * docs/performance.md, "What pacing costs a clean fabric".) */
static void retries_shrink_quiet_grows(void **state)
{
  (void)state;
  struct ho_pace p;
  ho_pace_init(&p, &topo, "rxe0", 1, true, 4096, MAX);
  assert_true(p.on);
  assert_string_equal(asked, "rxe0/1/" HO_PACE_COUNTER);
  uint64_t t = 1000 * MS;
  assert_int_equal(ho_pace_window(&p, t), MAX);
  counter += 3;
  /* within the interval nobody looks */
  unsigned r = reads;
  assert_int_equal(ho_pace_window(&p, t + 1 * MS), MAX);
  assert_int_equal(reads, r);
  t += HO_PACE_LOOK_NS;
  assert_int_equal(ho_pace_window(&p, t), MAX / 2);
  assert_int_equal(atomic_load(&p.shrinks), 1);
  assert_true(ho_pace_troubled(&p, MAX / 2));
  /* still retrying: halves at every look, down to the floor, no lower */
  size_t want = MAX / 2;
  unsigned shrinks = 1;
  for (int i = 0; i < 12; i++) {
    counter++;
    t += HO_PACE_LOOK_NS;
    want = want / 2 < 8192 ? 8192 : want / 2;
    assert_int_equal(ho_pace_window(&p, t), want);
    assert_int_equal(atomic_load(&p.shrinks), ++shrinks);
  }
  assert_int_equal(want, 8192);
  /* quiet but idle: an idle device does not grow the window back */
  for (int i = 0; i < 5; i++) {
    t += HO_PACE_LOOK_NS;
    assert_int_equal(ho_pace_window(&p, t), 8192);
  }
  /* quiet, less than a window posted: no growth either */
  ho_pace_posted(&p, 8191);
  t += HO_PACE_LOOK_NS;
  assert_int_equal(ho_pace_window(&p, t), 8192);
  assert_true(ho_pace_troubled(&p, 8192));
  /* quiet with a window of traffic per look: doubles per look, up to the
   * pipeline, never past it */
  for (int i = 0; i < 12; i++) {
    ho_pace_posted(&p, want);
    t += HO_PACE_LOOK_NS;
    want = want * 2 > MAX ? MAX : want * 2;
    assert_int_equal(ho_pace_window(&p, t), want);
  }
  assert_int_equal(want, MAX);
  assert_false(ho_pace_troubled(&p, want));
  assert_int_equal(atomic_load(&p.shrinks), shrinks);
}

/* A counter that cannot be read keeps the window as it is. */
static void unreadable_counter_keeps_window(void **state)
{
  (void)state;
  struct ho_pace p;
  ho_pace_init(&p, &topo, "rxe0", 1, true, 1024, MAX);
  counter++;
  assert_int_equal(ho_pace_window(&p, 1000 * MS), MAX / 2);
  counter_fails = true;
  assert_int_equal(ho_pace_window(&p, 2000 * MS), MAX / 2);
  counter_fails = false;
  ho_pace_posted(&p, MAX / 2);
  assert_int_equal(ho_pace_window(&p, 3000 * MS), MAX);
}

/* A pipeline smaller than two MTUs: the floor is the pipeline. */
static void tiny_pipeline(void **state)
{
  (void)state;
  struct ho_pace p;
  ho_pace_init(&p, &topo, "rxe0", 1, true, 4096, 4096);
  counter++;
  assert_int_equal(ho_pace_window(&p, 1000 * MS), 4096);
}

/* A transfer's posts read the window as it is (ho_pace_current): they
 * never look, however long since the last look (a look is a sysfs read
 * on their path). The engine's dispatcher looks (ho_pace_window) and
 * knows when the next look is due. */
static void current_never_looks(void **state)
{
  (void)state;
  struct ho_pace p;
  ho_pace_init(&p, &topo, "rxe0", 1, true, 4096, MAX);
  unsigned r = reads;
  counter += 3;
  uint64_t t = 1000 * MS;
  assert_int_equal(ho_pace_current(&p), MAX);
  assert_int_equal(reads, r);
  assert_int_equal(atomic_load(&p.shrinks), 0);
  /* the dispatcher's look finds the retries */
  assert_int_equal(ho_pace_window(&p, t), MAX / 2);
  assert_int_equal(reads, r + 1);
  assert_int_equal(ho_pace_next_look(&p), t + HO_PACE_LOOK_NS);
  /* the posts take the cut window as it is */
  counter += 3;
  assert_int_equal(ho_pace_current(&p), MAX / 2);
  assert_int_equal(reads, r + 1);
  /* not paced: the whole pipeline, no look */
  ho_pace_init(&p, &topo, "mlx5_0", 1, false, 4096, MAX);
  r = reads;
  assert_int_equal(ho_pace_current(&p), MAX);
  assert_int_equal(reads, r);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(not_paced, setup),
      cmocka_unit_test_setup(retries_shrink_quiet_grows, setup),
      cmocka_unit_test_setup(unreadable_counter_keeps_window, setup),
      cmocka_unit_test_setup(tiny_pipeline, setup),
      cmocka_unit_test_setup(current_never_looks, setup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
