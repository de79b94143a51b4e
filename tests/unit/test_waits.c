/* SPDX-License-Identifier: MIT */
/* The one wait primitive's hybrid policy (ho_conn_wait; docs/architecture.md,
 * "Wait policy") on the simulated fabric, whose completion channels are
 * eventfds: a completion that arrives while the wait spins, one that
 * arrives after the CQ is armed (the wait sleeps in the channel and the
 * event wakes it), and one that arrives between the last empty poll and the
 * arm (no event is raised: only the poll after the arm finds it). The
 * deadline and the cancel flag end a blocked wait as they ended a polling
 * one; events are acknowledged, so the CQ can be destroyed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "fakes/fake_verbs.h"
#include "fakes/world.h"
#include "rdma/transport.h"

#define MS 1000000ull
/* A block that no event ends lasts this long: a wait that returns much
 * sooner was woken by its completion (or found it by polling). */
#define LONG_SLEEP_US 5000000u

struct fixture {
  struct world w;
  struct ho_verbs_ops hooked; /* the waiter's table: req_notify_cq hooked */
  struct ho_device *dw, *dp;  /* the waiter's device, the peer's */
  struct ho_conn *a, *b;      /* a waits, b sends */
};

static struct fixture *cur; /* for the hook */
static atomic_int hook_sends; /* sends the next req_notify_cq makes first */

/* req_notify_cq that first lets the peer's message land in the CQ: the
 * completion arrives after the wait's empty poll and before its arm. */
static int hooked_notify(struct ibv_cq *cq, int solicited_only)
{
  if (atomic_exchange(&hook_sends, 0) > 0) {
    struct ho_msg m;
    memset(&m, 0, sizeof m);
    assert_int_equal(ho_conn_send_msg(cur->b, &m), hipObjSuccess);
    fake_fabric_progress();
  }
  return fake_verbs_ops.req_notify_cq(cq, solicited_only);
}

static int setup(void **state)
{
  struct fixture *f = calloc(1, sizeof *f);
  if (!f || world_create(&f->w, NULL) != 0)
    return -1;
  f->hooked = fake_verbs_ops;
  f->hooked.req_notify_cq = hooked_notify;
  if (ho_device_open(&f->hooked, &f->w.topo, WORLD_CLIENT_NIC, &f->dw) !=
          hipObjSuccess ||
      ho_device_open(&fake_verbs_ops, &f->w.topo, WORLD_SERVER_NIC, &f->dp) !=
          hipObjSuccess)
    return -1;
  ho_device_set_spin(f->dw, 0);
  struct ho_conn_attr attr = {
      .max_send_wr = 8, .max_recv_wr = 8, .qp_access = 0};
  if (ho_conn_create(f->dw, &attr, &f->a) != hipObjSuccess ||
      ho_conn_create(f->dp, &attr, &f->b) != hipObjSuccess)
    return -1;
  struct ho_token ta, tb;
  ho_conn_token(f->a, &ta);
  ho_conn_token(f->b, &tb);
  if (ho_conn_connect(f->a, &tb, 0, 0) != hipObjSuccess ||
      ho_conn_connect(f->b, &ta, 0, 0) != hipObjSuccess)
    return -1;
  atomic_store(&hook_sends, 0);
  cur = f;
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  struct fixture *f = *state;
  ho_conn_destroy(f->a);
  ho_conn_destroy(f->b);
  struct fake_dev_stats s;
  assert_int_equal(fake_device_stats(WORLD_CLIENT_NIC, &s), 0);
  assert_int_equal(s.cq_destroy_unacked, 0); /* every event acknowledged */
  assert_int_equal(s.cq_acks_bad, 0);
  ho_device_close(f->dw);
  ho_device_close(f->dp);
  assert_int_equal(fake_fabric_live_objects(), 0);
  world_destroy(&f->w);
  free(f);
  cur = NULL;
  return 0;
}

/* Done at the message's receive completion. */
static enum ho_take take_recv(struct ho_conn *c, const struct ibv_wc *wc,
                              void *arg)
{
  (void)c;
  (void)arg;
  if (wc->status != IBV_WC_SUCCESS)
    return HO_TAKE_ERROR;
  return wc->wr_id == HO_WRID_MSG_RECV ? HO_TAKE_DONE : HO_TAKE_MORE;
}

struct later {
  struct fixture *f;
  unsigned delay_ms;
  atomic_bool *cancel; /* set instead of sending, if not NULL */
};

static void *send_later(void *arg)
{
  struct later *l = arg;
  usleep(l->delay_ms * 1000u);
  if (l->cancel) {
    atomic_store(l->cancel, true);
    return NULL;
  }
  struct ho_msg m;
  memset(&m, 0, sizeof m);
  if (ho_conn_send_msg(l->f->b, &m) != hipObjSuccess)
    abort();
  return NULL;
}

static uint64_t arms(const struct fixture *f)
{
  return atomic_load(&f->dw->wait_arms);
}

static uint64_t events(const struct fixture *f)
{
  return atomic_load(&f->dw->wait_events);
}

/* Waits for one message sent `delay_ms` from now by another thread. */
static enum ho_wait_end wait_for_send(struct fixture *f, unsigned delay_ms,
                                      uint64_t *took_ns)
{
  assert_int_equal(ho_conn_post_msg_recv(f->a), hipObjSuccess);
  struct later l = {f, delay_ms, NULL};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, send_later, &l), 0);
  uint64_t t0 = ho_now_ns();
  enum ho_wait_end r = ho_conn_wait(f->a, t0 + 10000 * MS, NULL,
                                    LONG_SLEEP_US, take_recv, NULL);
  *took_ns = ho_now_ns() - t0;
  pthread_join(t, NULL);
  return r;
}

static void spin_defaults(void **state)
{
  (void)state;
  assert_int_equal(ho_spin_us_default(true, 64), 0);  /* Soft-RoCE */
  assert_int_equal(ho_spin_us_default(false, 2), 0);  /* 2 CPUs */
  assert_int_equal(ho_spin_us_default(false, 1), 0);
  assert_int_equal(ho_spin_us_default(false, 3), 10); /* a NIC */
  assert_int_equal(ho_spin_us_default(false, 128), 10);
  struct fixture *f = *state;
  ho_device_set_spin(f->dw, 25);
  assert_true(f->dw->block);
  assert_int_equal(f->dw->spin_ns, 25000);
  ho_device_set_spin(f->dw, HO_SPIN_US_POLL);
  assert_false(f->dw->block);
  ho_device_set_spin(f->dw, HO_SPIN_US_AUTO);
  assert_true(f->dw->block);
  assert_false(ho_device_is_soft(f->dw)); /* fake_cli0, a ConnectX's ID */
  assert_non_null(f->a->ch); /* made while block was on */
}

/* The completion lands while the wait spins: no arm, no event. */
static void completion_during_spin(void **state)
{
  struct fixture *f = *state;
  ho_device_set_spin(f->dw, HO_SPIN_US_MAX); /* a second of spinning */
  uint64_t took;
  assert_int_equal(wait_for_send(f, 20, &took), HO_WAIT_DONE);
  assert_true(took < 900 * MS);
  assert_int_equal(arms(f), 0);
  assert_int_equal(events(f), 0);
}

/* The completion lands after the arm: the event wakes the blocked wait
 * long before its sleep cap. */
static void completion_after_arm(void **state)
{
  struct fixture *f = *state;
  uint64_t took;
  assert_int_equal(wait_for_send(f, 50, &took), HO_WAIT_DONE);
  assert_true(took >= 40 * MS);
  assert_true(took < (uint64_t)LONG_SLEEP_US * 1000u / 2);
  assert_int_equal(arms(f), 1);
  assert_int_equal(events(f), 1);
  struct fake_dev_stats s;
  assert_int_equal(fake_device_stats(WORLD_CLIENT_NIC, &s), 0);
  assert_int_equal(s.cq_events, 1);
}

/* The completion lands between the empty poll and the arm: no event will
 * come, and only the poll after the arm finds it (without that poll the
 * wait would sleep LONG_SLEEP_US). */
static void completion_between_poll_and_arm(void **state)
{
  struct fixture *f = *state;
  assert_int_equal(ho_conn_post_msg_recv(f->a), hipObjSuccess);
  atomic_store(&hook_sends, 1);
  uint64_t t0 = ho_now_ns();
  assert_int_equal(ho_conn_wait(f->a, t0 + 10000 * MS, NULL, LONG_SLEEP_US,
                                take_recv, NULL),
                   HO_WAIT_DONE);
  assert_true(ho_now_ns() - t0 < 1000 * MS);
  assert_int_equal(atomic_load(&hook_sends), 0); /* the hook ran */
  assert_int_equal(arms(f), 1);
  assert_int_equal(events(f), 0);
}

/* Many round trips through the channel: events are acknowledged in
 * batches, each wait wakes by its event, and the CQ is destroyed at the
 * end (teardown) with none left unacknowledged. */
static void events_acknowledged(void **state)
{
  struct fixture *f = *state;
  for (int i = 0; i < 40; i++) {
    uint64_t took;
    assert_int_equal(wait_for_send(f, 1, &took), HO_WAIT_DONE);
    assert_true(took < 1000 * MS);
  }
  assert_true(events(f) >= 20);
  assert_true(f->a->unacked < 16);
}

/* The deadline ends a blocked wait at its time, not at the sleep cap. */
static void deadline_ends_a_block(void **state)
{
  struct fixture *f = *state;
  assert_int_equal(ho_conn_post_msg_recv(f->a), hipObjSuccess);
  uint64_t t0 = ho_now_ns();
  assert_int_equal(ho_conn_wait(f->a, t0 + 100 * MS, NULL, LONG_SLEEP_US,
                                take_recv, NULL),
                   HO_WAIT_TIMEOUT);
  uint64_t took = ho_now_ns() - t0;
  assert_true(took >= 100 * MS);
  assert_true(took < 1000 * MS);
  assert_true(arms(f) >= 1);
}

/* A cancel is seen within the sleep cap, as by the polling wait. */
static void cancel_ends_a_block(void **state)
{
  struct fixture *f = *state;
  assert_int_equal(ho_conn_post_msg_recv(f->a), hipObjSuccess);
  atomic_bool cancel = false;
  struct later l = {f, 50, &cancel};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, send_later, &l), 0);
  uint64_t t0 = ho_now_ns();
  assert_int_equal(ho_conn_wait(f->a, t0 + 10000 * MS, &cancel, 2000,
                                take_recv, NULL),
                   HO_WAIT_CANCELLED);
  uint64_t took = ho_now_ns() - t0;
  pthread_join(t, NULL);
  assert_true(took >= 40 * MS);
  assert_true(took < 1000 * MS);
  assert_true(atomic_load(&f->dw->wait_idle_wakes) >= 1);
}

/* HIPOBJ_SPIN_US=poll: connections get no channel and never arm. */
static void poll_policy_never_arms(void **state)
{
  struct fixture *f = *state;
  ho_device_set_spin(f->dw, HO_SPIN_US_POLL);
  struct ho_conn_attr attr = {
      .max_send_wr = 8, .max_recv_wr = 8, .qp_access = 0};
  struct ho_conn *c = NULL;
  assert_int_equal(ho_conn_create(f->dw, &attr, &c), hipObjSuccess);
  assert_null(c->ch);
  uint64_t t0 = ho_now_ns();
  assert_int_equal(ho_conn_wait(c, t0 + 20 * MS, NULL, 1000, take_recv, NULL),
                   HO_WAIT_TIMEOUT);
  assert_int_equal(arms(f), 0);
  ho_conn_destroy(c);
}

/* A channel that cannot be made leaves the connection polling. */
static void no_channel_falls_back(void **state)
{
  struct fixture *f = *state;
  assert_int_equal(fake_verb_fail("create_comp_channel", 0, 1, EMFILE), 0);
  struct ho_conn_attr attr = {
      .max_send_wr = 8, .max_recv_wr = 8, .qp_access = 0};
  struct ho_conn *c = NULL;
  assert_int_equal(ho_conn_create(f->dw, &attr, &c), hipObjSuccess);
  assert_null(c->ch);
  uint64_t t0 = ho_now_ns();
  assert_int_equal(ho_conn_wait(c, t0 + 20 * MS, NULL, 1000, take_recv, NULL),
                   HO_WAIT_TIMEOUT);
  assert_int_equal(arms(f), 0);
  ho_conn_destroy(c);
}

/* Channels are fds: beyond the device's budget a connection polls. */
static void channel_budget_kept(void **state)
{
  struct fixture *f = *state;
  assert_true(f->dw->max_channels >= 16);
  assert_int_equal(atomic_load(&f->dw->channels), 1); /* f->a's */
  f->dw->max_channels = 1;
  struct ho_conn_attr attr = {
      .max_send_wr = 8, .max_recv_wr = 8, .qp_access = 0};
  struct ho_conn *c = NULL;
  assert_int_equal(ho_conn_create(f->dw, &attr, &c), hipObjSuccess);
  assert_null(c->ch);
  ho_conn_destroy(c);
  assert_int_equal(atomic_load(&f->dw->channels), 1);
  f->dw->max_channels = 2;
  assert_int_equal(ho_conn_create(f->dw, &attr, &c), hipObjSuccess);
  assert_non_null(c->ch);
  assert_int_equal(atomic_load(&f->dw->channels), 2);
  ho_conn_destroy(c);
  assert_int_equal(atomic_load(&f->dw->channels), 1);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(spin_defaults, setup, teardown),
      cmocka_unit_test_setup_teardown(completion_during_spin, setup, teardown),
      cmocka_unit_test_setup_teardown(completion_after_arm, setup, teardown),
      cmocka_unit_test_setup_teardown(completion_between_poll_and_arm, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(events_acknowledged, setup, teardown),
      cmocka_unit_test_setup_teardown(deadline_ends_a_block, setup, teardown),
      cmocka_unit_test_setup_teardown(cancel_ends_a_block, setup, teardown),
      cmocka_unit_test_setup_teardown(poll_policy_never_arms, setup, teardown),
      cmocka_unit_test_setup_teardown(no_channel_falls_back, setup, teardown),
      cmocka_unit_test_setup_teardown(channel_budget_kept, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
