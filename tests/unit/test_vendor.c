/* SPDX-License-Identifier: MIT */
/* Vendor QP attributes: the bnxt and ionic rows are found by PCI vendor ID,
 * every row keeps retries bounded, and a connection on such a NIC uses its
 * row. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fakes/fake_verbs.h"
#include "fakes/world.h"
#include "rdma/transport.h"
#include "rdma/vendor.h"

static void rows(void **state)
{
  (void)state;
  assert_string_equal(ho_vendor_tuning(0x14E4)->name, "bnxt");
  assert_string_equal(ho_vendor_tuning(0x1DD8)->name, "ionic");
  assert_string_equal(ho_vendor_tuning(0x15B3)->name, "generic");
  assert_string_equal(ho_vendor_tuning(0)->name, "generic");
  const uint32_t ids[] = {0x14E4, 0x1DD8, 0x15B3, 0xffffff};
  for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
    const struct ho_qp_tuning *t = ho_vendor_tuning(ids[i]);
    assert_true(t->retry_cnt < 7); /* rxe: 7 is forever */
    assert_true(t->rnr_retry < 7); /* IBTA: 7 is forever */
    assert_true(t->timeout >= 8 && t->timeout <= 20);
    assert_true(t->rd_atomic_cap > 1); /* more than one READ in flight */
  }
}

static void applied_on_connect(void **state)
{
  (void)state;
  static const uint32_t vendors[] = {0x14E4, 0x1DD8};
  struct world w;
  assert_int_equal(world_create(&w, NULL), 0);
  for (size_t i = 0; i < 2; i++) {
    struct fake_device_cfg cfg;
    fake_device_cfg_default(&cfg);
    cfg.vendor_id = vendors[i];
    cfg.max_qp_rd_atom = cfg.max_qp_init_rd_atom = 8;
    cfg.active_mtu = IBV_MTU_2048;
    char name[16];
    snprintf(name, sizeof name, "vend%zu", i);
    assert_int_equal(fake_device_add(name, &cfg), 0);
    assert_int_equal(ho_fake_sysfs_add_nic(&w.fs, name, "0000:01:00.0", 0), 0);
    ho_fake_sysfs_set_port_state(&w.fs, name, 1, "4: ACTIVE");
    ho_fake_sysfs_set_gid_type(&w.fs, name, 1, 3, "RoCE v2");
    struct ho_device *d = NULL;
    assert_int_equal(ho_device_open(&fake_verbs_ops, &w.topo, name, &d), hipObjSuccess);
    assert_int_equal(d->vendor_id, vendors[i]);
    struct ho_conn_attr a = {
        .max_send_wr = 8, .max_recv_wr = 8,
        .qp_access = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE};
    struct ho_conn *c = NULL, *peer = NULL;
    assert_int_equal(ho_conn_create(d, &a, &c), hipObjSuccess);
    assert_int_equal(ho_conn_create(d, &a, &peer), hipObjSuccess);
    struct ho_token t;
    ho_conn_token(peer, &t);
    assert_int_equal(ho_conn_connect(c, &t, 0, 0), hipObjSuccess);
    const struct ho_qp_tuning *row = ho_vendor_tuning(vendors[i]);
    struct ibv_qp_attr q;
    int mask;
    assert_int_equal(fake_qp_transition(c->qp, IBV_QPS_RTR, &q, &mask), 0);
    assert_int_equal(q.path_mtu, IBV_MTU_2048);
    assert_int_equal(q.min_rnr_timer, row->min_rnr_timer);
    assert_int_equal(q.max_dest_rd_atomic, 8); /* capped by the device */
    assert_int_equal(fake_qp_transition(c->qp, IBV_QPS_RTS, &q, &mask), 0);
    assert_int_equal(q.timeout, row->timeout);
    assert_int_equal(q.retry_cnt, row->retry_cnt);
    assert_int_equal(q.rnr_retry, row->rnr_retry);
    assert_int_equal(q.max_rd_atomic, 8);
    /* Retiring moves it to ERR for good: it is never reset for another
     * peer. */
    ho_conn_retire(c);
    assert_int_equal(fake_qp_attrs(c->qp, &q, &mask), 0);
    assert_int_equal(q.qp_state, IBV_QPS_ERR);
    assert_int_equal(c->state, HO_CONN_RETIRED);
    ho_conn_destroy(c);
    ho_conn_destroy(peer);
    ho_device_close(d);
  }
  world_destroy(&w);
}

/* The retry budget of docs/protocol.md section 7, and the grace period of
 * retired QPs that must outlive it. */
static void retry_budget(void **state)
{
  (void)state;
  const struct ho_qp_tuning *t = ho_vendor_tuning(0);
  assert_int_equal(ho_qp_retry_budget_ns(t), 469762048ull); /* 7 x 67.1 ms */
  assert_int_equal(ho_retire_grace_ns(t, 2000000000ull), 2000000000ull);
  assert_int_equal(ho_retire_grace_ns(t, 1000), 2 * 469762048ull);
  for (uint32_t v = 0; v < 0x10000; v += 0x1234)
    assert_true(ho_vendor_tuning(v)->retry_cnt < 7);
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(rows), cmocka_unit_test(retry_budget),
                                     cmocka_unit_test(applied_on_connect)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
