/* SPDX-License-Identifier: MIT */
/* The simulated RC fabric (tests/fakes/fake_verbs.c) against what a NIC and
 * Soft-RoCE do: bytes moved, completions, drops and retries, RNR, errors,
 * the QP state machine, fault injection, limits, threads. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "common/clock.h"
#include "fakes/fake_verbs.h"

static const struct ho_verbs_ops *const V = &fake_verbs_ops;

#define BUF (64 * 1024)
#define ALL_ACCESS                                                          \
  (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define INIT_MASK                                                           \
  (IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define RTR_MASK                                                            \
  (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |           \
   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RTS_MASK                                                            \
  (IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |    \
   IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)
#define NS_PER_MS 1000000ull
#define T14_NS (4096ull << 14) /* timeout 14: 67.1 ms */

/* ---- helpers ----------------------------------------------------------- */

struct side {
  const char *dev;
  struct ibv_context *ctx;
  struct ibv_pd *pd;
  struct ibv_cq *cq;
  struct ibv_qp *qp;
  struct ibv_mr *mr;
  uint8_t *buf;
  int gid_index;
  union ibv_gid gid;
  uint8_t max_rd_atomic, max_dest_rd_atomic, min_rnr_timer;
};

struct qp_opts {
  int cqe;
  uint32_t max_send_wr, max_recv_wr, max_sge, max_inline;
  int qp_access;
};

static const struct qp_opts default_opts = {256, 64, 64, 4, 64, ALL_ACCESS};

static struct ibv_context *open_by_name(const char *name)
{
  int n = 0;
  struct ibv_context *c = NULL;
  struct ibv_device **l = V->get_device_list(&n);
  assert_non_null(l);
  for (int i = 0; i < n; i++)
    if (strcmp(V->get_device_name(l[i]), name) == 0)
      c = V->open_device(l[i]);
  V->free_device_list(l);
  assert_non_null(c);
  return c;
}

static int to_init(struct side *s, int access)
{
  struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0,
                          .port_num = 1, .qp_access_flags = access};
  return V->modify_qp(s->qp, &a, INIT_MASK);
}

static void side_open_opts(struct side *s, const char *dev,
                           const struct qp_opts *o)
{
  memset(s, 0, sizeof *s);
  s->dev = dev;
  s->max_rd_atomic = s->max_dest_rd_atomic = 16;
  s->min_rnr_timer = 1; /* 10 us */
  s->ctx = open_by_name(dev);
  s->pd = V->alloc_pd(s->ctx);
  assert_non_null(s->pd);
  s->cq = V->create_cq(s->ctx, o->cqe, NULL, NULL, 0);
  assert_non_null(s->cq);
  s->buf = calloc(1, BUF);
  assert_non_null(s->buf);
  s->mr = V->reg_mr(s->pd, s->buf, BUF, ALL_ACCESS);
  assert_non_null(s->mr);
  struct ibv_qp_init_attr ia = {
      .send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
      .cap = {o->max_send_wr, o->max_recv_wr, o->max_sge, o->max_sge,
              o->max_inline}};
  s->qp = V->create_qp(s->pd, &ia);
  assert_non_null(s->qp);
  s->gid_index = fake_gid_find(dev, 1, FAKE_GID_ROCE_V2, true);
  assert_true(s->gid_index >= 0);
  assert_int_equal(V->query_gid(s->ctx, 1, s->gid_index, &s->gid), 0);
  assert_int_equal(to_init(s, o->qp_access), 0);
}

static void side_open(struct side *s, const char *dev)
{
  side_open_opts(s, dev, &default_opts);
}

/* No assertions: teardown checks that nothing is left alive. */
static void side_close(struct side *s)
{
  if (!s->ctx)
    return;
  V->destroy_qp(s->qp);
  V->destroy_cq(s->cq);
  V->dereg_mr(s->mr);
  V->dealloc_pd(s->pd);
  V->close_device(s->ctx);
  free(s->buf);
  memset(s, 0, sizeof *s);
}

static void rtr_attr(const struct side *s, const struct side *peer,
                     struct ibv_qp_attr *a)
{
  struct ibv_port_attr pa;
  assert_int_equal(V->query_port(s->ctx, 1, &pa), 0);
  *a = (struct ibv_qp_attr){
      .qp_state = IBV_QPS_RTR,
      .path_mtu = pa.active_mtu,
      .dest_qp_num = peer->qp->qp_num,
      .max_dest_rd_atomic = s->max_dest_rd_atomic,
      .min_rnr_timer = s->min_rnr_timer,
      .ah_attr = {.is_global = 1,
                  .port_num = 1,
                  .grh = {.dgid = peer->gid,
                          .sgid_index = (uint8_t)s->gid_index,
                          .hop_limit = 64}}};
}

static int to_rtr(struct side *s, const struct side *peer)
{
  struct ibv_qp_attr a;
  rtr_attr(s, peer, &a);
  return V->modify_qp(s->qp, &a, RTR_MASK);
}

static void rts_attr(const struct side *s, uint8_t timeout, uint8_t retry,
                     uint8_t rnr, struct ibv_qp_attr *a)
{
  *a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS,
                            .timeout = timeout,
                            .retry_cnt = retry,
                            .rnr_retry = rnr,
                            .max_rd_atomic = s->max_rd_atomic};
}

static int to_rts(struct side *s, uint8_t timeout, uint8_t retry, uint8_t rnr)
{
  struct ibv_qp_attr a;
  rts_attr(s, timeout, retry, rnr, &a);
  return V->modify_qp(s->qp, &a, RTS_MASK);
}

static void connect_to(struct side *s, const struct side *peer,
                       uint8_t timeout, uint8_t retry, uint8_t rnr)
{
  assert_int_equal(to_rtr(s, peer), 0);
  assert_int_equal(to_rts(s, timeout, retry, rnr), 0);
}

static void connect_pair(struct side *a, struct side *b)
{
  connect_to(a, b, 10, 3, 3);
  connect_to(b, a, 10, 3, 3);
}

static void reset_qp(struct side *s)
{
  struct ibv_qp_attr a = {.qp_state = IBV_QPS_RESET};
  assert_int_equal(V->modify_qp(s->qp, &a, IBV_QP_STATE), 0);
  assert_int_equal(to_init(s, ALL_ACCESS), 0);
}

static void reconnect(struct side *s, const struct side *peer,
                      uint8_t timeout, uint8_t retry, uint8_t rnr)
{
  reset_qp(s);
  connect_to(s, peer, timeout, retry, rnr);
}

static int post_op(struct side *s, enum ibv_wr_opcode op, uint64_t wr_id,
                   size_t loff, const struct side *peer, size_t roff,
                   uint32_t len, unsigned flags)
{
  struct ibv_sge sge = {(uintptr_t)(s->buf + loff), len, s->mr->lkey};
  struct ibv_send_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
                           .opcode = op, .send_flags = flags,
                           .imm_data = 0xc0ffee};
  struct ibv_send_wr *bad = NULL;
  if (peer) {
    wr.wr.rdma.remote_addr = (uintptr_t)(peer->buf + roff);
    wr.wr.rdma.rkey = peer->mr->rkey;
  }
  return V->post_send(s->qp, &wr, &bad);
}

static int post_write(struct side *s, uint64_t wr_id, const struct side *peer,
                      size_t off, uint32_t len)
{
  return post_op(s, IBV_WR_RDMA_WRITE, wr_id, off, peer, off, len,
                 IBV_SEND_SIGNALED);
}

static int post_recv(struct side *s, uint64_t wr_id, size_t off, uint32_t len)
{
  struct ibv_sge sge = {(uintptr_t)(s->buf + off), len, s->mr->lkey};
  struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1};
  struct ibv_recv_wr *bad = NULL;
  return V->post_recv(s->qp, &wr, &bad);
}

static void sleep_us(long us)
{
  struct timespec ts = {0, us * 1000};
  nanosleep(&ts, NULL);
}

/* Polls (real time) until one completion or max_ms; returns 1 or 0. */
static int poll_wait(struct ibv_cq *cq, struct ibv_wc *wc, int max_ms)
{
  uint64_t end = ho_now_ns() + (uint64_t)max_ms * NS_PER_MS;
  do {
    int n = V->poll_cq(cq, 1, wc);
    assert_true(n >= 0);
    if (n == 1)
      return 1;
    sleep_us(20);
  } while (ho_now_ns() < end);
  return 0;
}

static int poll_now(struct ibv_cq *cq, struct ibv_wc *wc)
{
  return V->poll_cq(cq, 1, wc);
}

static void expect_wc(const struct ibv_wc *wc, uint64_t wr_id,
                      enum ibv_wc_status st, enum ibv_wc_opcode op)
{
  assert_int_equal(wc->wr_id, wr_id);
  assert_int_equal(wc->status, st);
  if (st == IBV_WC_SUCCESS)
    assert_int_equal(wc->opcode, op);
}

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (uint8_t)(seed + i * 7);
}

static bool all_zero(const uint8_t *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (p[i])
      return false;
  return true;
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
  struct ibv_qp_attr a;
  struct ibv_qp_init_attr ia;
  assert_int_equal(V->query_qp(qp, &a, IBV_QP_STATE, &ia), 0);
  assert_int_equal(a.qp_state, qp->state);
  return a.qp_state;
}

static void advance_ns(uint64_t ns)
{
  assert_int_equal(fake_fabric_advance_ns(ns), 0);
}

static struct fake_dev_stats dev_stats(const char *dev)
{
  struct fake_dev_stats st;
  assert_int_equal(fake_device_stats(dev, &st), 0);
  return st;
}

/* ---- fixture ----------------------------------------------------------- */

struct env {
  struct side cli, srv, srv1;
};

static int setup(void **state)
{
  static struct env e;
  memset(&e, 0, sizeof e);
  fake_fabric_reset();
  if (fake_device_add("fake_cli0", NULL) ||
      fake_device_add("fake_srv0", NULL) ||
      fake_device_add("fake_srv1", NULL))
    return -1;
  side_open(&e.cli, "fake_cli0");
  side_open(&e.srv, "fake_srv0");
  *state = &e;
  return 0;
}

static int teardown(void **state)
{
  struct env *e = *state;
  int live;
  side_close(&e->srv1);
  side_close(&e->srv);
  side_close(&e->cli);
  live = fake_fabric_live_objects();
  fake_fabric_reset();
  return live == 0 ? 0 : -1;
}

/* ---- devices, ports, GIDs ---------------------------------------------- */

static void test_devices(void **state)
{
  struct env *e = *state;
  struct fake_device_cfg cfg;
  struct ibv_device_attr da;
  struct ibv_port_attr pa;
  union ibv_gid g, mine = {.raw = {0x20, 0x01, 0x0d, 0xb8, [15] = 9}};
  int n = 0;
  struct ibv_device **l = V->get_device_list(&n);
  assert_int_equal(n, 3);
  assert_string_equal(V->get_device_name(l[0]), "fake_cli0");
  assert_string_equal(V->get_device_name(l[1]), "fake_srv0");
  assert_null(l[3]);
  V->free_device_list(l);

  fake_device_cfg_default(&cfg);
  cfg.vendor_id = 0x14e4;
  cfg.vendor_part_id = 0x1750;
  cfg.max_qp_rd_atom = 8;
  cfg.max_qp_init_rd_atom = 4;
  cfg.phys_port_cnt = 2;
  cfg.active_mtu = IBV_MTU_4096;
  cfg.ipv4 = 0xc0a80105; /* 192.168.1.5 */
  assert_int_equal(fake_device_add("fake_bnxt0", &cfg), 0);
  assert_int_equal(fake_device_add("fake_bnxt0", &cfg), EEXIST);
  struct ibv_context *c = open_by_name("fake_bnxt0");
  assert_int_equal(V->query_device(c, &da), 0);
  assert_int_equal(da.vendor_id, 0x14e4);
  assert_int_equal(da.vendor_part_id, 0x1750);
  assert_int_equal(da.max_qp_rd_atom, 8);
  assert_int_equal(da.max_qp_init_rd_atom, 4);
  assert_int_equal(da.phys_port_cnt, 2);
  assert_int_equal(V->query_port(c, 2, &pa), 0);
  assert_int_equal(pa.state, IBV_PORT_ACTIVE);
  assert_int_equal(pa.active_mtu, IBV_MTU_4096);
  assert_int_equal(pa.link_layer, IBV_LINK_LAYER_ETHERNET);
  assert_int_equal(pa.gid_tbl_len, FAKE_GID_TABLE_LEN);
  assert_int_equal(V->query_port(c, 3, &pa), EINVAL);

  /* The mlx5-like GID table: [3] is ::ffff:192.168.1.5, RoCE v2. */
  assert_int_equal(V->query_gid(c, 1, 3, &g), 0);
  static const uint8_t v4[16] = {[10] = 0xff, [11] = 0xff, [12] = 192,
                                 [13] = 168, [14] = 1, [15] = 5};
  assert_memory_equal(g.raw, v4, 16);
  assert_int_equal(fake_gid_type("fake_bnxt0", 1, 3), FAKE_GID_ROCE_V2);
  assert_int_equal(fake_gid_type("fake_bnxt0", 1, 2), FAKE_GID_ROCE_V1);
  assert_int_equal(fake_gid_find("fake_bnxt0", 1, FAKE_GID_ROCE_V1, false), 0);
  assert_int_equal(fake_gid_find("fake_bnxt0", 1, FAKE_GID_ROCE_V2, true), 3);
  assert_int_equal(V->query_gid(c, 1, FAKE_GID_TABLE_LEN, &g), -1);
  assert_int_equal(errno, EINVAL);

  /* Settable entries; an empty entry reads as the zero GID. */
  assert_int_equal(
      fake_gid_set("fake_bnxt0", 1, 5, &mine, FAKE_GID_ROCE_V2), 0);
  assert_int_equal(V->query_gid(c, 1, 5, &g), 0);
  assert_memory_equal(g.raw, mine.raw, 16);
  assert_int_equal(fake_gid_set("fake_bnxt0", 1, 5, NULL, FAKE_GID_NONE), 0);
  assert_int_equal(V->query_gid(c, 1, 5, &g), 0);
  assert_true(all_zero(g.raw, 16));
  assert_int_equal(fake_gid_set("nope", 1, 5, &mine, FAKE_GID_ROCE_V2), ENODEV);

  /* Port state and MTU. */
  assert_int_equal(fake_port_set_state("fake_bnxt0", 1, IBV_PORT_DOWN), 0);
  assert_int_equal(fake_port_set_mtu("fake_bnxt0", 1, IBV_MTU_2048), 0);
  assert_int_equal(V->query_port(c, 1, &pa), 0);
  assert_int_equal(pa.state, IBV_PORT_DOWN);
  assert_int_equal(pa.active_mtu, IBV_MTU_2048);
  assert_int_equal(V->close_device(c), 0);

  /* Default devices: 1 port, MTU 1024, vendor 0x15b3; cli0's IPv4 GID. */
  assert_int_equal(V->query_device(e->cli.ctx, &da), 0);
  assert_int_equal(da.vendor_id, 0x15b3);
  assert_int_equal(da.phys_port_cnt, 1);
  assert_int_equal(e->cli.gid.raw[15], 1);
  assert_int_equal(e->srv.gid.raw[15], 2);
  assert_null(V->open_device((struct ibv_device *)&da));
  assert_int_equal(errno, ENODEV);
}

/* ---- data movement ----------------------------------------------------- */

static void test_write_read(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc;
  connect_pair(&e->cli, &e->srv);
  fill(e->cli.buf, 8192, 3);
  fill(e->srv.buf + 16384, 4096, 99);

  /* WRITE of two SGEs, landing contiguously at the responder. */
  uint32_t lk = e->cli.mr->lkey;
  struct ibv_sge sge[2] = {{(uintptr_t)e->cli.buf, 1000, lk},
                           {(uintptr_t)e->cli.buf + 4096, 3000, lk}};
  struct ibv_send_wr wr = {.wr_id = 7, .sg_list = sge, .num_sge = 2,
                           .opcode = IBV_WR_RDMA_WRITE,
                           .send_flags = IBV_SEND_SIGNALED,
                           .wr.rdma = {(uintptr_t)e->srv.buf + 100,
                                       e->srv.mr->rkey}};
  struct ibv_send_wr *bad = NULL;
  assert_int_equal(V->post_send(e->cli.qp, &wr, &bad), 0);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 7, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
  assert_int_equal(wc.byte_len, 4000);
  assert_int_equal(wc.qp_num, e->cli.qp->qp_num);
  assert_memory_equal(e->srv.buf + 100, e->cli.buf, 1000);
  assert_memory_equal(e->srv.buf + 1100, e->cli.buf + 4096, 3000);
  assert_true(all_zero(e->srv.buf, 100));
  assert_true(all_zero(e->srv.buf + 4100, 100));
  /* One-sided: nothing at the responder. */
  assert_int_equal(poll_now(e->srv.cq, &wc), 0);

  /* Unsignaled: moves bytes, no CQE. */
  assert_int_equal(post_op(&e->cli, IBV_WR_RDMA_WRITE, 8, 8000, &e->srv, 8000,
                           100, 0), 0);
  assert_int_equal(poll_now(e->cli.cq, &wc), 0);
  assert_memory_equal(e->srv.buf + 8000, e->cli.buf + 8000, 100);

  /* READ into the client. */
  assert_int_equal(post_op(&e->cli, IBV_WR_RDMA_READ, 9, 16384, &e->srv,
                           16384, 4096, IBV_SEND_SIGNALED), 0);
  assert_int_equal(poll_wait(e->cli.cq, &wc, 100), 1);
  expect_wc(&wc, 9, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
  assert_int_equal(wc.byte_len, 4096);
  assert_memory_equal(e->cli.buf + 16384, e->srv.buf + 16384, 4096);

  struct fake_dev_stats c = dev_stats("fake_cli0"), s = dev_stats("fake_srv0");
  assert_int_equal(c.bytes_written, 4100);
  assert_int_equal(c.bytes_read, 4096);
  assert_int_equal(s.bytes_received, 4100);
  assert_int_equal(s.bytes_served, 4096);
  assert_int_equal(c.requests_dropped, 0);
}

static void test_send_and_imm(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc;
  connect_pair(&e->cli, &e->srv);
  fill(e->cli.buf, 4096, 11);
  assert_int_equal(post_recv(&e->srv, 101, 0, 512), 0);
  assert_int_equal(post_recv(&e->srv, 102, 512, 512), 0);
  assert_int_equal(post_recv(&e->srv, 103, 1024, 16), 0);

  assert_int_equal(post_op(&e->cli, IBV_WR_SEND, 1, 0, NULL, 0, 300,
                           IBV_SEND_SIGNALED), 0);
  assert_int_equal(poll_now(e->srv.cq, &wc), 1);
  expect_wc(&wc, 101, IBV_WC_SUCCESS, IBV_WC_RECV);
  assert_int_equal(wc.byte_len, 300);
  assert_int_equal(wc.src_qp, e->cli.qp->qp_num);
  assert_int_equal(wc.qp_num, e->srv.qp->qp_num);
  assert_false(wc.wc_flags & IBV_WC_WITH_IMM);
  assert_memory_equal(e->srv.buf, e->cli.buf, 300);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 1, IBV_WC_SUCCESS, IBV_WC_SEND);

  assert_int_equal(post_op(&e->cli, IBV_WR_SEND_WITH_IMM, 2, 1000, NULL, 0,
                           200, IBV_SEND_SIGNALED), 0);
  assert_int_equal(poll_now(e->srv.cq, &wc), 1);
  expect_wc(&wc, 102, IBV_WC_SUCCESS, IBV_WC_RECV);
  assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
  assert_int_equal(wc.imm_data, 0xc0ffee);
  assert_memory_equal(e->srv.buf + 512, e->cli.buf + 1000, 200);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);

  /* WRITE_WITH_IMM: data at the remote address, the receive only carries
   * the immediate (its 16-byte buffer is not touched). */
  assert_int_equal(post_op(&e->cli, IBV_WR_RDMA_WRITE_WITH_IMM, 3, 0, &e->srv,
                           8192, 4096, IBV_SEND_SIGNALED), 0);
  assert_int_equal(poll_now(e->srv.cq, &wc), 1);
  expect_wc(&wc, 103, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM);
  assert_int_equal(wc.wc_flags, IBV_WC_WITH_IMM | IBV_WC_GRH);
  assert_int_equal(wc.imm_data, 0xc0ffee);
  assert_int_equal(wc.byte_len, 4096);
  assert_memory_equal(e->srv.buf + 8192, e->cli.buf, 4096);
  assert_true(all_zero(e->srv.buf + 1024, 16));
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
  assert_int_equal(dev_stats("fake_cli0").bytes_sent, 500);
}

/* A SEND after WRITEs arrives after them; completions in posting order. */
static void test_ordering(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc[16];
  fake_fabric_set_manual_clock(true);
  connect_pair(&e->cli, &e->srv);
  assert_int_equal(fake_device_set_delay_ms("fake_cli0", 2), 0);
  fill(e->cli.buf, BUF, 5);
  assert_int_equal(post_recv(&e->srv, 50, 60000, 64), 0);
  for (int i = 0; i < 8; i++)
    assert_int_equal(post_op(&e->cli, IBV_WR_RDMA_WRITE, (uint64_t)i,
                             (size_t)i * 4096, &e->srv, (size_t)i * 4096, 4096,
                             (i & 1) ? IBV_SEND_SIGNALED : 0), 0);
  assert_int_equal(post_op(&e->cli, IBV_WR_SEND, 8, 50000, NULL, 0, 64,
                           IBV_SEND_SIGNALED), 0);
  /* In flight: nothing has arrived yet. */
  assert_true(all_zero(e->srv.buf, 8 * 4096));
  assert_int_equal(poll_now(e->srv.cq, wc), 0);
  advance_ns(1 * NS_PER_MS);
  assert_int_equal(poll_now(e->srv.cq, wc), 0);
  advance_ns(1 * NS_PER_MS);
  assert_int_equal(poll_now(e->srv.cq, wc), 1);
  expect_wc(wc, 50, IBV_WC_SUCCESS, IBV_WC_RECV);
  assert_memory_equal(e->srv.buf, e->cli.buf, 8 * 4096);
  assert_int_equal(V->poll_cq(e->cli.cq, 16, wc), 5);
  for (int i = 0; i < 4; i++)
    assert_int_equal(wc[i].wr_id, (uint64_t)(2 * i + 1));
  assert_int_equal(wc[4].wr_id, 8);
}

/* ---- drops and retries (the KEY QUESTION) ------------------------------ */

static void test_target_in_init_fails_after_retries(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc;
  const uint64_t period = 4096ull << 10; /* timeout 10: 4.2 ms */
  connect_to(&e->cli, &e->srv, 10, 2, 7); /* srv stays in INIT */
  fill(e->cli.buf, 4096, 1);
  uint64_t t0 = ho_now_ns();
  assert_int_equal(post_write(&e->cli, 1, &e->srv, 0, 4096), 0);
  assert_int_equal(post_write(&e->cli, 2, &e->srv, 0, 4096), 0);
  assert_int_equal(poll_wait(e->cli.cq, &wc, 900), 1);
  uint64_t took = ho_now_ns() - t0;
  expect_wc(&wc, 1, IBV_WC_RETRY_EXC_ERR, IBV_WC_RDMA_WRITE);
  assert_true(took >= 3 * period);
  assert_true(took < 3 * period + 200 * NS_PER_MS);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 2, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE);
  assert_int_equal(qp_state(e->cli.qp), IBV_QPS_ERR);
  assert_int_equal(qp_state(e->srv.qp), IBV_QPS_INIT);
  assert_true(all_zero(e->srv.buf, BUF));
  assert_int_equal(poll_now(e->srv.cq, &wc), 0);
  struct fake_dev_stats s = dev_stats("fake_cli0");
  assert_int_equal(s.retries, 2);
  assert_int_equal(s.requests_dropped, 3);
  assert_int_equal(s.bytes_written, 0);
}

static void test_late_rtr_succeeds(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc;
  struct fake_qp_stats qs;
  fake_fabric_set_manual_clock(true);
  connect_to(&e->cli, &e->srv, 14, 3, 7);
  fill(e->cli.buf, 4096, 2);
  assert_int_equal(post_write(&e->cli, 1, &e->srv, 0, 4096), 0);
  advance_ns(T14_NS); /* first retry, still dropped */
  assert_int_equal(poll_now(e->cli.cq, &wc), 0);
  assert_true(all_zero(e->srv.buf, 4096));
  connect_to(&e->srv, &e->cli, 14, 3, 7); /* the target becomes RTR, RTS */
  advance_ns(T14_NS - 1);
  assert_int_equal(poll_now(e->cli.cq, &wc), 0);
  advance_ns(1);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
  assert_memory_equal(e->srv.buf, e->cli.buf, 4096);
  assert_int_equal(fake_qp_stats(e->cli.qp, &qs), 0);
  assert_int_equal(qs.retries, 2);
  assert_int_equal(qs.drops, 2);

  /* The same on the real clock with a time scale: RTR only, while the
   * requester polls. */
  fake_fabric_set_manual_clock(false);
  assert_int_equal(fake_fabric_set_time_scale(0.01), 0); /* 0.67 ms */
  reset_qp(&e->srv);
  reconnect(&e->cli, &e->srv, 14, 7, 7);
  assert_int_equal(post_write(&e->cli, 2, &e->srv, 4096, 4096), 0);
  assert_int_equal(poll_wait(e->cli.cq, &wc, 3), 0);
  assert_int_equal(to_rtr(&e->srv, &e->cli), 0);
  assert_int_equal(poll_wait(e->cli.cq, &wc, 200), 1);
  expect_wc(&wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
  assert_memory_equal(e->srv.buf + 4096, e->cli.buf + 4096, 4096);
}

static void test_retry_cnt_7(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc;
  fake_fabric_set_manual_clock(true);
  connect_to(&e->cli, &e->srv, 14, 7, 7); /* srv in INIT */
  assert_int_equal(post_write(&e->cli, 1, &e->srv, 0, 64), 0);
  /* rxe: forever. 200 periods, 13 s of fabric time. */
  for (int i = 0; i < 200; i++) {
    advance_ns(T14_NS);
    assert_int_equal(poll_now(e->cli.cq, &wc), 0);
  }
  assert_int_equal(dev_stats("fake_cli0").retries, 200);
  assert_int_equal(qp_state(e->cli.qp), IBV_QPS_RTS);

  /* IBTA: 7 means 7 retries, then failure at the 8th timeout. */
  fake_fabric_set_retry_semantics(FAKE_RETRY_IBTA);
  for (int i = 0; i < 7; i++) {
    advance_ns(T14_NS);
    assert_int_equal(poll_now(e->cli.cq, &wc), 0);
  }
  advance_ns(T14_NS);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 1, IBV_WC_RETRY_EXC_ERR, IBV_WC_RDMA_WRITE);
  assert_int_equal(dev_stats("fake_cli0").retries, 207);

  /* Real clock, scaled: still pending after many periods. */
  fake_fabric_set_manual_clock(false);
  fake_fabric_set_retry_semantics(FAKE_RETRY_RXE);
  assert_int_equal(fake_fabric_set_time_scale(0.001), 0); /* 67 us */
  reconnect(&e->cli, &e->srv, 14, 7, 7);
  assert_int_equal(post_write(&e->cli, 2, &e->srv, 0, 64), 0);
  /* Retries fire lazily, at entry points: poll until 20 more happened (a
   * few ms when the machine is idle), or give up after 5 s. Nothing may
   * complete meanwhile. */
  for (int i = 0; i < 500 && dev_stats("fake_cli0").retries <= 207 + 20; i++)
    assert_int_equal(poll_wait(e->cli.cq, &wc, 10), 0);
  assert_true(dev_stats("fake_cli0").retries > 207 + 20);
}

static void test_timeout_0_waits_forever(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc;
  fake_fabric_set_manual_clock(true);
  connect_to(&e->cli, &e->srv, 0, 0, 0);
  assert_int_equal(post_write(&e->cli, 1, &e->srv, 0, 64), 0);
  advance_ns(3600ull * 1000 * NS_PER_MS);
  assert_int_equal(poll_now(e->cli.cq, &wc), 0);
  assert_int_equal(dev_stats("fake_cli0").retries, 0);
}

/* ---- RNR --------------------------------------------------------------- */

static void test_rnr(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc;
  connect_to(&e->srv, &e->cli, 10, 3, 3);
  connect_to(&e->cli, &e->srv, 10, 3, 2);
  fill(e->cli.buf, BUF, 4);

  /* No receive: RNR, retried twice, then RNR_RETRY_EXC_ERR. */
  assert_int_equal(post_op(&e->cli, IBV_WR_SEND, 1, 0, NULL, 0, 64, 0), 0);
  assert_int_equal(poll_wait(e->cli.cq, &wc, 200), 1);
  expect_wc(&wc, 1, IBV_WC_RNR_RETRY_EXC_ERR, IBV_WC_SEND);
  assert_int_equal(dev_stats("fake_cli0").rnr_events, 3);
  assert_int_equal(qp_state(e->cli.qp), IBV_QPS_ERR);
  assert_int_equal(qp_state(e->srv.qp), IBV_QPS_RTS);

  /* rnr_retry 7: waits. A WRITE_WITH_IMM has placed all but its last
   * MTU packet (path MTU 1024) meanwhile, as rxe does. */
  reconnect(&e->cli, &e->srv, 10, 3, 7);
  assert_int_equal(post_op(&e->cli, IBV_WR_RDMA_WRITE_WITH_IMM, 2, 0, &e->srv,
                           0, 4096, IBV_SEND_SIGNALED), 0);
  assert_int_equal(poll_wait(e->cli.cq, &wc, 5), 0);
  assert_memory_equal(e->srv.buf, e->cli.buf, 3072);
  assert_true(all_zero(e->srv.buf + 3072, 1024));
  assert_int_equal(post_recv(&e->srv, 200, 32768, 64), 0);
  assert_int_equal(poll_wait(e->cli.cq, &wc, 200), 1);
  expect_wc(&wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
  assert_memory_equal(e->srv.buf, e->cli.buf, 4096);
  assert_int_equal(poll_now(e->srv.cq, &wc), 1);
  expect_wc(&wc, 200, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM);

  /* A SEND whose receive comes late. */
  assert_int_equal(post_op(&e->cli, IBV_WR_SEND, 3, 100, NULL, 0, 64,
                           IBV_SEND_SIGNALED), 0);
  assert_int_equal(poll_wait(e->cli.cq, &wc, 2), 0);
  assert_int_equal(post_recv(&e->srv, 201, 40000, 64), 0);
  assert_int_equal(poll_wait(e->cli.cq, &wc, 200), 1);
  expect_wc(&wc, 3, IBV_WC_SUCCESS, IBV_WC_SEND);
  assert_memory_equal(e->srv.buf + 40000, e->cli.buf + 100, 64);
  struct fake_qp_stats qs;
  assert_int_equal(fake_qp_stats(e->cli.qp, &qs), 0);
  assert_true(qs.rnr_events >= 2);
}

/* ---- errors ------------------------------------------------------------ */

static void fresh_pair(struct env *e)
{
  reconnect(&e->cli, &e->srv, 10, 1, 1);
  reconnect(&e->srv, &e->cli, 10, 1, 1);
}

/* Posts one signaled op from cli and expects status at cli. */
static void op_status_now(struct env *e, enum ibv_wr_opcode op, uint32_t lkey,
                          uint32_t rkey, uint64_t raddr, uint32_t len,
                          enum ibv_wc_status want)
{
  struct ibv_wc wc;
  struct ibv_sge sge = {(uintptr_t)e->cli.buf, len, lkey};
  struct ibv_send_wr wr = {.wr_id = 77, .sg_list = &sge, .num_sge = 1,
                           .opcode = op, .send_flags = IBV_SEND_SIGNALED,
                           .wr.rdma = {raddr, rkey}};
  struct ibv_send_wr *bad = NULL;
  assert_int_equal(V->post_send(e->cli.qp, &wr, &bad), 0);
  assert_int_equal(poll_wait(e->cli.cq, &wc, 200), 1);
  expect_wc(&wc, 77, want, IBV_WC_RDMA_WRITE);
  assert_int_equal(qp_state(e->cli.qp), IBV_QPS_ERR);
}

/* The same on freshly reconnected QPs. */
static void expect_op_status(struct env *e, enum ibv_wr_opcode op,
                             uint32_t lkey, uint32_t rkey, uint64_t raddr,
                             uint32_t len, enum ibv_wc_status want)
{
  fresh_pair(e);
  op_status_now(e, op, lkey, rkey, raddr, len, want);
}

static void test_access_errors(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc;
  uint64_t sbuf = (uintptr_t)e->srv.buf;
  uint32_t lk = e->cli.mr->lkey, rk = e->srv.mr->rkey;
  struct ibv_mr *ro = V->reg_mr(e->srv.pd, e->srv.buf, 4096,
                                IBV_ACCESS_LOCAL_WRITE);
  struct ibv_mr *nolw = V->reg_mr(e->cli.pd, e->cli.buf, 4096, 0);
  assert_non_null(ro);
  assert_non_null(nolw);
  fill(e->cli.buf, 4096, 8);

  /* Bad rkey: REM_ACCESS_ERR, the responder goes to ERR and flushes. */
  fresh_pair(e);
  assert_int_equal(post_recv(&e->srv, 300, 0, 64), 0);
  op_status_now(e, IBV_WR_RDMA_WRITE, lk, rk + 0x100000, sbuf, 64,
                IBV_WC_REM_ACCESS_ERR);
  assert_int_equal(qp_state(e->srv.qp), IBV_QPS_ERR);
  assert_int_equal(poll_now(e->srv.cq, &wc), 1);
  expect_wc(&wc, 300, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV);
  /* The lkey is not an rkey. */
  expect_op_status(e, IBV_WR_RDMA_WRITE, lk, e->srv.mr->lkey, sbuf, 64,
                   IBV_WC_REM_ACCESS_ERR);
  /* Past the end of the region, and wrapping around. */
  expect_op_status(e, IBV_WR_RDMA_WRITE, lk, rk, sbuf + BUF - 32, 64,
                   IBV_WC_REM_ACCESS_ERR);
  expect_op_status(e, IBV_WR_RDMA_WRITE, lk, rk, UINT64_MAX - 8, 64,
                   IBV_WC_REM_ACCESS_ERR);
  /* An MR without REMOTE_WRITE / REMOTE_READ. */
  expect_op_status(e, IBV_WR_RDMA_WRITE, lk, ro->rkey, sbuf, 64,
                   IBV_WC_REM_ACCESS_ERR);
  expect_op_status(e, IBV_WR_RDMA_READ, lk, ro->rkey, sbuf, 64,
                   IBV_WC_REM_ACCESS_ERR);
  assert_true(all_zero(e->srv.buf, BUF));

  /* Bad local key, or a READ sink without LOCAL_WRITE: local protection;
   * the responder is not affected. */
  expect_op_status(e, IBV_WR_RDMA_WRITE, lk + 0x100000, rk, sbuf, 64,
                   IBV_WC_LOC_PROT_ERR);
  assert_int_equal(qp_state(e->srv.qp), IBV_QPS_RTS);
  expect_op_status(e, IBV_WR_RDMA_READ, nolw->lkey, rk, sbuf, 64,
                   IBV_WC_LOC_PROT_ERR);

  /* The responder QP does not allow remote writes. */
  reset_qp(&e->srv);
  assert_int_equal(to_init(&e->srv, IBV_ACCESS_LOCAL_WRITE |
                                        IBV_ACCESS_REMOTE_READ), 0);
  reconnect(&e->cli, &e->srv, 10, 1, 1);
  connect_to(&e->srv, &e->cli, 10, 1, 1);
  op_status_now(e, IBV_WR_RDMA_WRITE, lk, rk, sbuf, 64, IBV_WC_REM_ACCESS_ERR);

  /* Receive buffer too small. */
  fresh_pair(e);
  assert_int_equal(post_recv(&e->srv, 301, 0, 32), 0);
  assert_int_equal(post_op(&e->cli, IBV_WR_SEND, 79, 0, NULL, 0, 64,
                           IBV_SEND_SIGNALED), 0);
  assert_int_equal(poll_wait(e->cli.cq, &wc, 200), 1);
  expect_wc(&wc, 79, IBV_WC_REM_INV_REQ_ERR, IBV_WC_SEND);
  assert_int_equal(poll_now(e->srv.cq, &wc), 1);
  expect_wc(&wc, 301, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV);
  assert_int_equal(qp_state(e->srv.qp), IBV_QPS_ERR);
  assert_true(all_zero(e->srv.buf, BUF));

  /* The kernel's registration rule. */
  assert_null(V->reg_mr(e->srv.pd, e->srv.buf, 64, IBV_ACCESS_REMOTE_WRITE));
  assert_int_equal(errno, EINVAL);
  assert_null(V->reg_mr(e->srv.pd, e->srv.buf, 0, IBV_ACCESS_LOCAL_WRITE));
  assert_int_equal(errno, EINVAL);
  assert_int_equal(fake_mr_access(ro), IBV_ACCESS_LOCAL_WRITE);
  assert_int_equal(V->dereg_mr(ro), 0);
  assert_int_equal(V->dereg_mr(nolw), 0);
  assert_int_equal(V->dereg_mr(nolw), EINVAL);
}

static void test_flush_on_err(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc[8];
  struct ibv_qp_attr err = {.qp_state = IBV_QPS_ERR};
  struct ibv_send_wr *bad = NULL;
  struct ibv_sge sge = {(uintptr_t)e->cli.buf, 8, e->cli.mr->lkey};
  struct ibv_send_wr wr = {.wr_id = 5, .sg_list = &sge, .num_sge = 1,
                           .opcode = IBV_WR_SEND};

  /* Sends below RTS are refused; receives in RESET too. */
  assert_int_equal(V->post_send(e->cli.qp, &wr, &bad), EINVAL);
  assert_ptr_equal(bad, &wr);

  fake_fabric_set_manual_clock(true);
  connect_pair(&e->cli, &e->srv);
  for (int i = 0; i < 3; i++)
    assert_int_equal(post_recv(&e->srv, 10 + (uint64_t)i, 0, 64), 0);
  assert_int_equal(V->modify_qp(e->srv.qp, &err, IBV_QP_STATE), 0);
  assert_int_equal(V->poll_cq(e->srv.cq, 8, wc), 3);
  for (int i = 0; i < 3; i++)
    expect_wc(&wc[i], 10 + (uint64_t)i, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV);
  assert_int_equal(post_recv(&e->srv, 13, 0, 64), 0);
  assert_int_equal(poll_now(e->srv.cq, wc), 1);
  expect_wc(wc, 13, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV);

  /* Outstanding sends (delayed) are flushed in order, signaled or not. */
  assert_int_equal(fake_device_set_delay_ms("fake_cli0", 5), 0);
  assert_int_equal(post_op(&e->cli, IBV_WR_RDMA_WRITE, 20, 0, &e->srv, 0, 64,
                           0), 0);
  assert_int_equal(post_write(&e->cli, 21, &e->srv, 0, 64), 0);
  assert_int_equal(V->modify_qp(e->cli.qp, &err, IBV_QP_STATE), 0);
  assert_int_equal(V->poll_cq(e->cli.cq, 8, wc), 2);
  expect_wc(&wc[0], 20, IBV_WC_WR_FLUSH_ERR, 0);
  expect_wc(&wc[1], 21, IBV_WC_WR_FLUSH_ERR, 0);
  /* And new ones. */
  assert_int_equal(post_op(&e->cli, IBV_WR_RDMA_WRITE, 22, 0, &e->srv, 0, 64,
                           0), 0);
  assert_int_equal(poll_now(e->cli.cq, wc), 1);
  expect_wc(wc, 22, IBV_WC_WR_FLUSH_ERR, 0);
  advance_ns(10 * NS_PER_MS);
  assert_true(all_zero(e->srv.buf, 64));

  /* A responder in ERR, though still aimed at the requester, drops. */
  assert_int_equal(fake_device_set_delay_ms("fake_cli0", 0), 0);
  reconnect(&e->cli, &e->srv, 10, 1, 1);
  assert_int_equal(post_write(&e->cli, 23, &e->srv, 0, 64), 0);
  advance_ns(4096ull << 10);
  assert_int_equal(poll_now(e->cli.cq, wc), 0);
  advance_ns(4096ull << 10);
  assert_int_equal(poll_now(e->cli.cq, wc), 1);
  expect_wc(wc, 23, IBV_WC_RETRY_EXC_ERR, 0);
  assert_true(all_zero(e->srv.buf, 64));

  struct ibv_qp_attr rst = {.qp_state = IBV_QPS_RESET};
  assert_int_equal(V->modify_qp(e->srv.qp, &rst, IBV_QP_STATE), 0);
  assert_int_equal(post_recv(&e->srv, 14, 0, 64), EINVAL);
}

/* ---- RESET, reconnect -------------------------------------------------- */

static void test_reset_then_other_peer(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc;
  struct ibv_qp_attr a;
  struct fake_qp_stats qs;
  connect_pair(&e->cli, &e->srv);
  fill(e->cli.buf, 8192, 6);
  assert_int_equal(post_write(&e->cli, 1, &e->srv, 0, 4096), 0);
  assert_memory_equal(e->srv.buf, e->cli.buf, 4096);
  /* Left in the CQ and queues: RESET drops them without completions. */
  assert_int_equal(post_recv(&e->cli, 2, 0, 64), 0);
  assert_int_equal(fake_cq_depth(e->cli.cq), 1);

  side_open(&e->srv1, "fake_srv1");
  reset_qp(&e->cli);
  assert_int_equal(fake_cq_depth(e->cli.cq), 0);
  assert_int_equal(fake_qp_stats(e->cli.qp, &qs), 0);
  assert_int_equal(qs.rq_posted, 0);
  assert_int_equal(fake_qp_attrs(e->cli.qp, &a, NULL), 0);
  assert_int_equal(a.dest_qp_num, 0);

  connect_pair(&e->cli, &e->srv1);
  assert_int_equal(fake_qp_attrs(e->cli.qp, &a, NULL), 0);
  assert_int_equal(a.dest_qp_num, e->srv1.qp->qp_num);
  assert_memory_equal(a.ah_attr.grh.dgid.raw, e->srv1.gid.raw, 16);
  assert_int_equal(post_write(&e->cli, 3, &e->srv1, 4096, 4096), 0);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
  assert_memory_equal(e->srv1.buf + 4096, e->cli.buf + 4096, 4096);
  assert_true(all_zero(e->srv.buf + 4096, 4096));

  /* The old peer still aims at cli's QP, which is no longer its peer. */
  reconnect(&e->srv, &e->cli, 10, 1, 1);
  assert_int_equal(post_write(&e->srv, 4, &e->cli, 0, 64), 0);
  assert_int_equal(poll_wait(e->srv.cq, &wc, 300), 1);
  expect_wc(&wc, 4, IBV_WC_RETRY_EXC_ERR, IBV_WC_RDMA_WRITE);
}

/* Routing is by GID and GID type: a RoCE v1 packet does not reach a peer
 * that only has the GID as RoCE v2, and the responder must be aimed at the
 * requester's sgid. */
static void test_gid_routing(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc;
  const uint64_t period = 4096ull << 10;
  fake_fabric_set_manual_clock(true);
  connect_to(&e->srv, &e->cli, 10, 0, 0);
  e->cli.gid_index = fake_gid_find("fake_cli0", 1, FAKE_GID_ROCE_V1, true);
  assert_int_equal(e->cli.gid_index, 2);
  assert_int_equal(fake_gid_set("fake_srv0", 1, 2, NULL, FAKE_GID_NONE), 0);
  connect_to(&e->cli, &e->srv, 10, 0, 0);
  assert_int_equal(post_write(&e->cli, 1, &e->srv, 0, 64), 0);
  advance_ns(period);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 1, IBV_WC_RETRY_EXC_ERR, 0);

  /* Same type both ways, but the responder aims at cli's link-local GID. */
  e->cli.gid_index = 3;
  reconnect(&e->cli, &e->srv, 10, 0, 0);
  reset_qp(&e->srv);
  assert_int_equal(V->query_gid(e->cli.ctx, 1, 1, &e->cli.gid), 0);
  connect_to(&e->srv, &e->cli, 10, 0, 0);
  assert_int_equal(post_write(&e->cli, 2, &e->srv, 0, 64), 0);
  advance_ns(period);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 2, IBV_WC_RETRY_EXC_ERR, 0);
  assert_true(all_zero(e->srv.buf, 64));

  /* Both right: delivered. */
  assert_int_equal(V->query_gid(e->cli.ctx, 1, 3, &e->cli.gid), 0);
  reconnect(&e->srv, &e->cli, 10, 0, 0);
  reconnect(&e->cli, &e->srv, 10, 0, 0);
  fill(e->cli.buf, 64, 1);
  assert_int_equal(post_write(&e->cli, 3, &e->srv, 0, 64), 0);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
  assert_memory_equal(e->srv.buf, e->cli.buf, 64);
}

/* ---- the state machine ------------------------------------------------- */

static struct ibv_qp *new_qp(struct side *s)
{
  struct ibv_qp_init_attr ia = {.send_cq = s->cq, .recv_cq = s->cq,
                                .qp_type = IBV_QPT_RC,
                                .cap = {4, 4, 1, 1, 0}};
  struct ibv_qp *qp = V->create_qp(s->pd, &ia);
  assert_non_null(qp);
  assert_int_equal(qp->state, IBV_QPS_RESET);
  assert_int_equal(qp->qp_type, IBV_QPT_RC);
  assert_ptr_equal(qp->pd, s->pd);
  assert_ptr_equal(qp->send_cq, s->cq);
  assert_ptr_equal(qp->context, s->ctx);
  assert_true(qp->qp_num <= 0xffffff);
  return qp;
}

static void test_state_machine_init_rtr(void **state)
{
  struct env *e = *state;
  struct side t = e->cli;
  struct ibv_qp_attr a;
  t.qp = new_qp(&e->cli);
  assert_int_not_equal(t.qp->qp_num, e->cli.qp->qp_num);

  rtr_attr(&t, &e->srv, &a);
  assert_int_equal(V->modify_qp(t.qp, &a, RTR_MASK), EINVAL); /* RESET->RTR */
  a = (struct ibv_qp_attr){.qp_state = IBV_QPS_INIT, .port_num = 1,
                           .qp_access_flags = ALL_ACCESS};
  assert_int_equal(V->modify_qp(t.qp, &a, INIT_MASK & ~IBV_QP_PORT), EINVAL);
  assert_int_equal(V->modify_qp(t.qp, &a, INIT_MASK | IBV_QP_TIMEOUT), EINVAL);
  a.port_num = 2;
  assert_int_equal(V->modify_qp(t.qp, &a, INIT_MASK), EINVAL);
  a.port_num = 1;
  a.pkey_index = 1;
  assert_int_equal(V->modify_qp(t.qp, &a, INIT_MASK), EINVAL);
  a.pkey_index = 0;
  a.cur_qp_state = IBV_QPS_INIT;
  assert_int_equal(V->modify_qp(t.qp, &a, INIT_MASK | IBV_QP_CUR_STATE),
                   EINVAL);
  assert_int_equal(V->modify_qp(t.qp, &a, INIT_MASK), 0);
  assert_int_equal(t.qp->state, IBV_QPS_INIT);
  /* INIT -> INIT with optional attributes only. */
  a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
  assert_int_equal(V->modify_qp(t.qp, &a, IBV_QP_ACCESS_FLAGS), 0);

  rts_attr(&t, 14, 7, 7, &a);
  assert_int_equal(V->modify_qp(t.qp, &a, RTS_MASK), EINVAL); /* INIT->RTS */
  rtr_attr(&t, &e->srv, &a);
  assert_int_equal(V->modify_qp(t.qp, &a, RTR_MASK & ~IBV_QP_MIN_RNR_TIMER),
                   EINVAL);
  a.ah_attr.is_global = 0; /* RoCE needs a GRH */
  assert_int_equal(V->modify_qp(t.qp, &a, RTR_MASK), EINVAL);
  rtr_attr(&t, &e->srv, &a);
  a.ah_attr.grh.sgid_index = 9; /* empty entry */
  assert_int_equal(V->modify_qp(t.qp, &a, RTR_MASK), EINVAL);
  rtr_attr(&t, &e->srv, &a);
  a.path_mtu = IBV_MTU_4096; /* above the active MTU (1024) */
  assert_int_equal(V->modify_qp(t.qp, &a, RTR_MASK), EINVAL);
  rtr_attr(&t, &e->srv, &a);
  a.max_dest_rd_atomic = 17;
  assert_int_equal(V->modify_qp(t.qp, &a, RTR_MASK), EINVAL);
  rtr_attr(&t, &e->srv, &a);
  a.dest_qp_num = 1u << 24;
  assert_int_equal(V->modify_qp(t.qp, &a, RTR_MASK), EINVAL);
  assert_int_equal(t.qp->state, IBV_QPS_INIT);
  fake_fabric_set_strict_mtu(false);
  rtr_attr(&t, &e->srv, &a);
  a.path_mtu = IBV_MTU_4096;
  assert_int_equal(V->modify_qp(t.qp, &a, RTR_MASK), 0);
  assert_int_equal(t.qp->state, IBV_QPS_RTR);
  assert_int_equal(V->destroy_qp(t.qp), 0);
  assert_int_equal(V->destroy_qp(t.qp), EINVAL);
}

static void test_state_machine_rts_err_reset(void **state)
{
  struct env *e = *state;
  struct ibv_qp_attr a, got;
  struct ibv_qp_init_attr ia;
  int mask = 0;
  assert_int_equal(to_rtr(&e->cli, &e->srv), 0);
  rts_attr(&e->cli, 14, 8, 7, &a);
  assert_int_equal(V->modify_qp(e->cli.qp, &a, RTS_MASK), EINVAL);
  rts_attr(&e->cli, 14, 6, 7, &a);
  a.max_rd_atomic = 17;
  assert_int_equal(V->modify_qp(e->cli.qp, &a, RTS_MASK), EINVAL);
  rts_attr(&e->cli, 14, 6, 7, &a);
  assert_int_equal(V->modify_qp(e->cli.qp, &a, RTS_MASK & ~IBV_QP_RNR_RETRY),
                   EINVAL);
  assert_int_equal(V->modify_qp(e->cli.qp, &a, RTS_MASK), 0);

  /* Exactly what was set, for assertions on the library's flags. */
  assert_int_equal(fake_qp_transition(e->cli.qp, IBV_QPS_RTS, &got, &mask), 0);
  assert_int_equal(mask, RTS_MASK);
  assert_int_equal(got.timeout, 14);
  assert_int_equal(got.retry_cnt, 6);
  assert_int_equal(got.rnr_retry, 7);
  assert_int_equal(fake_qp_transition(e->cli.qp, IBV_QPS_RTR, &got, &mask), 0);
  assert_int_equal(mask, RTR_MASK);
  assert_int_equal(got.ah_attr.grh.hop_limit, 64);
  assert_int_equal(got.ah_attr.grh.sgid_index, e->cli.gid_index);
  assert_int_equal(fake_qp_transition(e->cli.qp, IBV_QPS_ERR, &got, &mask),
                   ENOENT);
  assert_int_equal(fake_qp_attrs(e->cli.qp, &got, &mask), 0);
  assert_int_equal(mask, INIT_MASK | RTR_MASK | RTS_MASK);
  assert_int_equal(got.qp_access_flags, ALL_ACCESS);
  assert_int_equal(got.path_mtu, IBV_MTU_1024);
  assert_int_equal(got.dest_qp_num, e->srv.qp->qp_num);
  assert_int_equal(got.max_rd_atomic, 16);
  assert_int_equal(got.min_rnr_timer, 1);
  assert_int_equal(V->query_qp(e->cli.qp, &got, IBV_QP_TIMEOUT, &ia), 0);
  assert_int_equal(got.timeout, 14);
  assert_int_equal(got.qp_state, IBV_QPS_RTS);
  assert_int_equal(ia.cap.max_send_wr, 64);
  assert_ptr_equal(ia.send_cq, e->cli.cq);

  /* RTS -> RTS with an optional attribute; backwards is illegal. */
  a = (struct ibv_qp_attr){.min_rnr_timer = 12};
  assert_int_equal(V->modify_qp(e->cli.qp, &a, IBV_QP_MIN_RNR_TIMER), 0);
  assert_int_equal(V->modify_qp(e->cli.qp, &a, IBV_QP_TIMEOUT), EINVAL);
  rtr_attr(&e->cli, &e->srv, &a);
  assert_int_equal(V->modify_qp(e->cli.qp, &a, RTR_MASK), EINVAL);
  a = (struct ibv_qp_attr){.qp_state = IBV_QPS_INIT, .port_num = 1};
  assert_int_equal(V->modify_qp(e->cli.qp, &a, INIT_MASK), EINVAL);

  /* -> ERR takes only the state; ERR -> RTS is illegal; -> RESET. */
  a = (struct ibv_qp_attr){.qp_state = IBV_QPS_ERR};
  assert_int_equal(V->modify_qp(e->cli.qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT),
                   EINVAL);
  assert_int_equal(V->modify_qp(e->cli.qp, &a, IBV_QP_STATE), 0);
  assert_int_equal(qp_state(e->cli.qp), IBV_QPS_ERR);
  rts_attr(&e->cli, 14, 6, 7, &a);
  assert_int_equal(V->modify_qp(e->cli.qp, &a, RTS_MASK), EINVAL);
  a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RESET};
  assert_int_equal(V->modify_qp(e->cli.qp, &a, IBV_QP_STATE), 0);
  assert_int_equal(qp_state(e->cli.qp), IBV_QPS_RESET);
  assert_int_equal(fake_qp_attrs(e->cli.qp, &got, &mask), 0);
  assert_int_equal(mask, 0);
  assert_int_equal(got.timeout, 0);
  assert_int_equal(to_init(&e->cli, ALL_ACCESS), 0);
}

static void test_destroy_rules(void **state)
{
  struct env *e = *state;
  struct ibv_qp_init_attr ia = {.send_cq = e->cli.cq, .recv_cq = e->cli.cq,
                                .qp_type = IBV_QPT_UD, .cap = {1, 1, 1, 1, 0}};
  assert_null(V->create_qp(e->cli.pd, &ia));
  assert_int_equal(errno, EOPNOTSUPP);
  ia.qp_type = IBV_QPT_RC;
  ia.cap.max_send_sge = 17;
  assert_null(V->create_qp(e->cli.pd, &ia));
  assert_int_equal(errno, EINVAL);
  ia.cap.max_send_sge = 1;
  ia.send_cq = e->srv.cq; /* another context's CQ */
  assert_null(V->create_qp(e->cli.pd, &ia));
  assert_int_equal(errno, EINVAL);
  assert_null(V->create_cq(e->cli.ctx, 0, NULL, NULL, 0));
  assert_int_equal(errno, EINVAL);

  assert_int_equal(V->dealloc_pd(e->cli.pd), EBUSY);  /* MR and QP */
  assert_int_equal(V->destroy_cq(e->cli.cq), EBUSY);  /* QP */
  assert_int_equal(V->close_device(e->cli.ctx), -1);  /* PD, CQ, QP */
  assert_int_equal(errno, EBUSY);
  assert_int_equal(fake_fabric_live_objects(), 10);
}

/* ---- fault injection --------------------------------------------------- */

static void test_verb_faults(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc;
  union ibv_gid g;
  struct ibv_mr *mr[4];
  unsigned long calls = fake_verb_calls("reg_mr");
  assert_int_equal(fake_verb_fail("reg_mr", 1, 2, ENOMEM), 0);
  for (int i = 0; i < 4; i++) {
    mr[i] = V->reg_mr(e->cli.pd, e->cli.buf, 64, IBV_ACCESS_LOCAL_WRITE);
    if (i == 1 || i == 2) {
      assert_null(mr[i]);
      assert_int_equal(errno, ENOMEM);
    } else {
      assert_non_null(mr[i]);
    }
  }
  assert_int_equal(fake_verb_calls("reg_mr"), calls + 4);
  assert_int_equal(V->dereg_mr(mr[0]), 0);
  assert_int_equal(V->dereg_mr(mr[3]), 0);

  assert_int_equal(fake_verb_fail("modify_qp", 0, 1, EIO), 0);
  assert_int_equal(to_rtr(&e->cli, &e->srv), EIO);
  assert_int_equal(e->cli.qp->state, IBV_QPS_INIT);
  connect_pair(&e->cli, &e->srv);

  struct ibv_sge sge = {(uintptr_t)e->cli.buf, 8, e->cli.mr->lkey};
  struct ibv_send_wr wr2 = {.wr_id = 2, .sg_list = &sge, .num_sge = 1,
                            .opcode = IBV_WR_RDMA_WRITE,
                            .wr.rdma = {(uintptr_t)e->srv.buf,
                                        e->srv.mr->rkey}};
  struct ibv_send_wr wr1 = wr2, *bad = NULL;
  wr1.wr_id = 1;
  wr1.next = &wr2;
  wr2.num_sge = 9; /* more than max_send_sge: the second fails */
  assert_int_equal(V->post_send(e->cli.qp, &wr1, &bad), EINVAL);
  assert_ptr_equal(bad, &wr2);
  assert_int_equal(fake_verb_fail("post_send", 0, 1, ENOMEM), 0);
  bad = NULL;
  assert_int_equal(V->post_send(e->cli.qp, &wr1, &bad), ENOMEM);
  assert_ptr_equal(bad, &wr1);
  assert_int_equal(fake_verb_fail("poll_cq", 0, 1, EIO), 0);
  assert_int_equal(V->poll_cq(e->cli.cq, 1, &wc), -EIO);
  assert_int_equal(fake_verb_fail("query_gid", 0, 1, EIO), 0);
  assert_int_equal(V->query_gid(e->cli.ctx, 1, 0, &g), -1);
  assert_int_equal(errno, EIO);
  assert_int_equal(fake_verb_fail("get_device_list", 0, 1, ENOSYS), 0);
  assert_null(V->get_device_list(NULL));
  assert_int_equal(errno, ENOSYS);
  assert_int_equal(fake_verb_fail("no_such_verb", 0, 1, EIO), EINVAL);
  assert_int_equal(fake_verb_fail("free_device_list", 0, 1, EIO), EINVAL);
}

static void test_fabric_faults(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc;
  const uint64_t period = 4096ull << 10;
  fake_fabric_set_manual_clock(true);
  connect_pair(&e->cli, &e->srv);
  fill(e->cli.buf, 4096, 9);

  /* Dropped packets are recovered by retries (retry_cnt 3). */
  assert_int_equal(fake_device_drop_next("fake_cli0", 2), 0);
  assert_int_equal(post_write(&e->cli, 1, &e->srv, 0, 256), 0);
  assert_int_equal(poll_now(e->cli.cq, &wc), 0);
  advance_ns(period);
  assert_int_equal(poll_now(e->cli.cq, &wc), 0);
  advance_ns(period);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
  assert_memory_equal(e->srv.buf, e->cli.buf, 256);
  struct fake_dev_stats s = dev_stats("fake_cli0");
  assert_int_equal(s.requests_dropped, 2);
  assert_int_equal(s.retries, 2);
  assert_int_equal(s.requests, 3);

  /* Delivery delay. */
  assert_int_equal(fake_device_set_delay_ms(NULL, 5), 0);
  assert_int_equal(post_write(&e->cli, 2, &e->srv, 256, 256), 0);
  advance_ns(5 * NS_PER_MS - 1);
  assert_int_equal(poll_now(e->cli.cq, &wc), 0);
  assert_true(all_zero(e->srv.buf + 256, 256));
  advance_ns(1);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  assert_memory_equal(e->srv.buf + 256, e->cli.buf + 256, 256);
  assert_int_equal(fake_device_set_delay_ms(NULL, 0), 0);

  /* Port down: dropped until it comes back. */
  assert_int_equal(fake_port_set_state("fake_srv0", 1, IBV_PORT_DOWN), 0);
  assert_int_equal(post_write(&e->cli, 3, &e->srv, 512, 256), 0);
  advance_ns(period);
  assert_int_equal(poll_now(e->cli.cq, &wc), 0);
  assert_int_equal(fake_port_set_state("fake_srv0", 1, IBV_PORT_ACTIVE), 0);
  advance_ns(period);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);

  /* Forced error completions, per device then per QP. */
  assert_int_equal(fake_device_force_error("fake_cli0", 1, IBV_WC_REM_OP_ERR),
                   0);
  assert_int_equal(post_write(&e->cli, 4, &e->srv, 0, 64), 0);
  assert_int_equal(post_write(&e->cli, 5, &e->srv, 0, 64), 0);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 4, IBV_WC_REM_OP_ERR, 0);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 5, IBV_WC_WR_FLUSH_ERR, 0);
  assert_int_equal(qp_state(e->cli.qp), IBV_QPS_ERR);
  reconnect(&e->cli, &e->srv, 10, 3, 3);
  assert_int_equal(fake_qp_force_error(e->srv.qp, 1, IBV_WC_LOC_QP_OP_ERR), 0);
  assert_int_equal(post_recv(&e->srv, 6, 0, 64), 0);
  assert_int_equal(post_op(&e->cli, IBV_WR_SEND, 7, 0, NULL, 0, 64, 0), 0);
  assert_int_equal(poll_now(e->srv.cq, &wc), 1);
  expect_wc(&wc, 6, IBV_WC_LOC_QP_OP_ERR, 0);
  assert_int_equal(qp_state(e->srv.qp), IBV_QPS_ERR);
  assert_int_equal(fake_device_drop_next("nope", 1), ENODEV);
}

/* ---- limits ------------------------------------------------------------ */

static void test_queue_limits(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc[8];
  struct qp_opts o = default_opts;
  fake_fabric_set_manual_clock(true);
  side_close(&e->cli);
  o.max_send_wr = 4;
  o.max_recv_wr = 2;
  o.max_inline = 32;
  side_open_opts(&e->cli, "fake_cli0", &o);
  connect_pair(&e->cli, &e->srv);
  assert_int_equal(fake_device_set_delay_ms("fake_cli0", 1), 0);
  for (int i = 0; i < 4; i++)
    assert_int_equal(post_write(&e->cli, (uint64_t)i, &e->srv, 0, 64), 0);
  assert_int_equal(post_write(&e->cli, 4, &e->srv, 0, 64), ENOMEM);
  assert_int_equal(post_recv(&e->cli, 0, 0, 64), 0);
  assert_int_equal(post_recv(&e->cli, 1, 0, 64), 0);
  assert_int_equal(post_recv(&e->cli, 2, 0, 64), ENOMEM);
  advance_ns(NS_PER_MS);
  assert_int_equal(V->poll_cq(e->cli.cq, 8, wc), 4);

  /* Inline: the bytes are taken at post time. */
  fill(e->cli.buf, 64, 1);
  assert_int_equal(post_op(&e->cli, IBV_WR_RDMA_WRITE, 9, 0, &e->srv, 1024, 32,
                           IBV_SEND_INLINE | IBV_SEND_SIGNALED), 0);
  uint8_t orig[32];
  memcpy(orig, e->cli.buf, 32);
  memset(e->cli.buf, 0xee, 32);
  assert_int_equal(post_op(&e->cli, IBV_WR_RDMA_WRITE, 10, 0, &e->srv, 0, 33,
                           IBV_SEND_INLINE), EINVAL);
  advance_ns(NS_PER_MS);
  assert_int_equal(poll_now(e->cli.cq, wc), 1);
  assert_memory_equal(e->srv.buf + 1024, orig, 32);
}

static void test_reads_in_flight(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc[16];
  struct fake_qp_stats qs;
  fake_fabric_set_manual_clock(true);
  e->cli.max_rd_atomic = 4;
  connect_pair(&e->cli, &e->srv);
  fill(e->srv.buf, BUF, 77);
  assert_int_equal(fake_device_set_delay_ms("fake_cli0", 1), 0);
  for (int i = 0; i < 10; i++)
    assert_int_equal(post_op(&e->cli, IBV_WR_RDMA_READ, (uint64_t)i,
                             (size_t)i * 1024, &e->srv, (size_t)i * 1024, 1024,
                             IBV_SEND_SIGNALED), 0);
  assert_int_equal(fake_qp_stats(e->cli.qp, &qs), 0);
  assert_int_equal(qs.reads_in_flight, 4);
  assert_int_equal(qs.sq_outstanding, 10);
  int got = 0;
  for (int round = 0; round < 3; round++) {
    advance_ns(NS_PER_MS);
    got += V->poll_cq(e->cli.cq, 16, wc + got);
  }
  assert_int_equal(got, 10);
  for (int i = 0; i < 10; i++)
    expect_wc(&wc[i], (uint64_t)i, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
  assert_memory_equal(e->cli.buf, e->srv.buf, 10 * 1024);
  assert_int_equal(fake_qp_stats(e->cli.qp, &qs), 0);
  assert_int_equal(qs.max_reads_in_flight, 4);
  assert_int_equal(qs.reads_in_flight, 0);

  /* A fenced WRITE waits for the READs before it. */
  for (int i = 0; i < 2; i++)
    assert_int_equal(post_op(&e->cli, IBV_WR_RDMA_READ, 30 + (uint64_t)i,
                             20000, &e->srv, 20000, 64, 0), 0);
  fill(e->cli.buf + 30000, 64, 9);
  assert_int_equal(post_op(&e->cli, IBV_WR_RDMA_WRITE, 32, 30000, &e->srv,
                           40000, 64, IBV_SEND_FENCE | IBV_SEND_SIGNALED), 0);
  advance_ns(NS_PER_MS);
  assert_memory_not_equal(e->srv.buf + 40000, e->cli.buf + 30000, 64);
  assert_int_equal(poll_now(e->cli.cq, wc), 0);
  advance_ns(NS_PER_MS);
  assert_int_equal(poll_now(e->cli.cq, wc), 1);
  expect_wc(wc, 32, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
  assert_memory_equal(e->srv.buf + 40000, e->cli.buf + 30000, 64);

  /* More READs in flight than the responder accepts. */
  e->srv.max_dest_rd_atomic = 2;
  reconnect(&e->srv, &e->cli, 10, 3, 3);
  for (int i = 0; i < 3; i++)
    assert_int_equal(post_op(&e->cli, IBV_WR_RDMA_READ, 20 + (uint64_t)i, 0,
                             &e->srv, 0, 64, IBV_SEND_SIGNALED), 0);
  advance_ns(NS_PER_MS);
  assert_int_equal(V->poll_cq(e->cli.cq, 16, wc), 3);
  expect_wc(&wc[0], 20, IBV_WC_REM_INV_REQ_ERR, 0);
  expect_wc(&wc[1], 21, IBV_WC_WR_FLUSH_ERR, 0);
}

static void test_cq_overflow_and_sq_release(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc[4];
  struct qp_opts o = default_opts;
  o.cqe = 2;
  o.max_send_wr = 4;
  side_open_opts(&e->srv1, "fake_srv1", &o);
  connect_pair(&e->srv1, &e->cli);

  /* mlx5-like accounting: unsignaled slots come back only when a later
   * signaled completion is polled. */
  fake_fabric_set_sq_release_on_poll(true);
  for (int i = 0; i < 3; i++)
    assert_int_equal(post_op(&e->srv1, IBV_WR_RDMA_WRITE, (uint64_t)i, 0,
                             &e->cli, 0, 8, 0), 0);
  assert_int_equal(post_write(&e->srv1, 3, &e->cli, 0, 8), 0);
  assert_int_equal(post_write(&e->srv1, 4, &e->cli, 0, 8), ENOMEM);
  assert_int_equal(V->poll_cq(e->srv1.cq, 4, wc), 1);
  assert_int_equal(post_write(&e->srv1, 5, &e->cli, 0, 8), 0);
  fake_fabric_set_sq_release_on_poll(false);

  /* Three CQEs into a CQ of two: the CQ says so, loudly. */
  assert_int_equal(post_write(&e->srv1, 6, &e->cli, 0, 8), 0);
  assert_false(fake_cq_overflowed(e->srv1.cq));
  assert_int_equal(post_write(&e->srv1, 7, &e->cli, 0, 8), 0);
  assert_true(fake_cq_overflowed(e->srv1.cq));
  assert_int_equal(V->poll_cq(e->srv1.cq, 4, wc), -EOVERFLOW);
  assert_int_equal(dev_stats("fake_srv1").cq_overflows, 1);
}

/* ---- dma-buf ----------------------------------------------------------- */

/* ---- memory windows ---------------------------------------------------- */

/* Posts a signaled bind of mw over [off, +len) of mr on s's QP and returns
 * its completion status; *rkey gets the window's new rkey. */
static enum ibv_wc_status bind_window(struct side *s, struct ibv_mw *mw,
                                      struct ibv_mr *mr, size_t off,
                                      uint64_t len, int access, uint32_t *rkey)
{
  struct ibv_wc wc;
  struct ibv_send_wr wr = {.wr_id = 5, .opcode = IBV_WR_BIND_MW,
                           .send_flags = IBV_SEND_SIGNALED};
  struct ibv_send_wr *bad = NULL;
  wr.bind_mw.mw = mw;
  wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
  wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
      mr, (uintptr_t)(s->buf + off), len, (unsigned)access};
  assert_int_equal(V->post_send(s->qp, &wr, &bad), 0);
  assert_int_equal(poll_wait(s->cq, &wc, 200), 1);
  if (wc.status == IBV_WC_SUCCESS) {
    assert_int_equal(wc.opcode, IBV_WC_BIND_MW);
    *rkey = wr.bind_mw.rkey;
    mw->rkey = *rkey; /* the consumer's part of a type-2 bind */
  }
  return wc.status;
}

static enum ibv_wc_status local_inv(struct side *s, uint32_t rkey)
{
  struct ibv_wc wc;
  struct ibv_send_wr wr = {.wr_id = 6, .opcode = IBV_WR_LOCAL_INV,
                           .send_flags = IBV_SEND_SIGNALED,
                           .invalidate_rkey = rkey};
  struct ibv_send_wr *bad = NULL;
  assert_int_equal(V->post_send(s->qp, &wr, &bad), 0);
  assert_int_equal(poll_wait(s->cq, &wc, 200), 1);
  return wc.status;
}

/* cli writes len bytes at srv.buf + off under rkey; the status at cli. */
static enum ibv_wc_status write_under(struct env *e, uint32_t rkey, size_t off,
                                      uint32_t len, enum ibv_wr_opcode op)
{
  struct ibv_wc wc;
  struct ibv_sge sge = {(uintptr_t)e->cli.buf, len, e->cli.mr->lkey};
  struct ibv_send_wr wr = {.wr_id = 9, .sg_list = &sge, .num_sge = 1,
                           .opcode = op, .send_flags = IBV_SEND_SIGNALED,
                           .wr.rdma = {(uintptr_t)(e->srv.buf + off), rkey}};
  struct ibv_send_wr *bad = NULL;
  assert_int_equal(V->post_send(e->cli.qp, &wr, &bad), 0);
  assert_int_equal(poll_wait(e->cli.cq, &wc, 500), 1);
  return wc.status;
}

/* A type-2 window grants its range, its access, through its QP, until it
 * is invalidated (locally or by a SEND_WITH_INV); an MR without remote
 * access grants nothing. */
static void test_memory_windows(void **state)
{
  struct env *e = *state;
  struct ibv_device_attr da;
  assert_int_equal(V->query_device(e->srv.ctx, &da), 0);
  assert_true(da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B);
  assert_null(V->alloc_mw(e->srv.pd, IBV_MW_TYPE_1));
  assert_int_equal(errno, EOPNOTSUPP);
  struct ibv_mr *local = V->reg_mr(e->srv.pd, e->srv.buf, BUF,
                                   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
  struct ibv_mr *nobind = V->reg_mr(e->srv.pd, e->srv.buf, BUF,
                                    IBV_ACCESS_LOCAL_WRITE);
  struct ibv_mw *mw = ibv_alloc_mw(e->srv.pd, IBV_MW_TYPE_2); /* inline */
  assert_non_null(mw);
  assert_int_equal(V->dealloc_pd(e->srv.pd), EBUSY);
  connect_pair(&e->cli, &e->srv);
  uint32_t rkey = 0;
  fill(e->cli.buf, 4096, 3);
  memset(e->srv.buf, 0, BUF);
  /* Bind over [4096, 8192) for remote write: in range lands ... */
  assert_int_equal(bind_window(&e->srv, mw, local, 4096, 4096,
                               IBV_ACCESS_REMOTE_WRITE, &rkey), IBV_WC_SUCCESS);
  assert_int_equal(fake_mw_bound_count("fake_srv0"), 1);
  assert_int_equal(write_under(e, rkey, 4096, 4096, IBV_WR_RDMA_WRITE),
                   IBV_WC_SUCCESS);
  assert_memory_equal(e->srv.buf + 4096, e->cli.buf, 4096);
  /* ... a second bind of a bound window fails ... */
  assert_int_equal(bind_window(&e->srv, mw, local, 0, 4096,
                               IBV_ACCESS_REMOTE_WRITE, &rkey), IBV_WC_MW_BIND_ERR);
  fresh_pair(e);
  /* ... one byte before the range is refused, nothing lands ... */
  assert_int_equal(write_under(e, rkey, 4095, 2, IBV_WR_RDMA_WRITE),
                   IBV_WC_REM_ACCESS_ERR);
  assert_int_equal(e->srv.buf[4095], 0);
  assert_true(dev_stats("fake_srv0").remote_access_errors >= 1);
  fresh_pair(e);
  /* ... a READ needs remote read ... */
  assert_int_equal(write_under(e, rkey, 4096, 16, IBV_WR_RDMA_READ),
                   IBV_WC_REM_ACCESS_ERR);
  fresh_pair(e);
  /* ... the MR's own rkey grants nothing ... */
  assert_int_equal(write_under(e, local->rkey, 4096, 16, IBV_WR_RDMA_WRITE),
                   IBV_WC_REM_ACCESS_ERR);
  fresh_pair(e);
  /* ... and after a local invalidation the window is closed. */
  assert_int_equal(local_inv(&e->srv, rkey), IBV_WC_SUCCESS);
  assert_int_equal(fake_mw_bound_count("fake_srv0"), 0);
  assert_int_equal(local_inv(&e->srv, rkey), IBV_WC_LOC_PROT_ERR);
  fresh_pair(e);
  assert_int_equal(write_under(e, rkey, 4096, 16, IBV_WR_RDMA_WRITE),
                   IBV_WC_REM_ACCESS_ERR);
  /* An MR without IBV_ACCESS_MW_BIND cannot carry a window. */
  fresh_pair(e);
  assert_int_equal(bind_window(&e->srv, mw, nobind, 0, 4096,
                               IBV_ACCESS_REMOTE_WRITE, &rkey), IBV_WC_MW_BIND_ERR);
  /* SEND_WITH_INV closes the receiver's window when it lands. */
  fresh_pair(e);
  assert_int_equal(bind_window(&e->srv, mw, local, 0, 4096,
                               IBV_ACCESS_REMOTE_READ, &rkey), IBV_WC_SUCCESS);
  assert_int_equal(post_recv(&e->srv, 21, 8192, 64), 0);
  struct ibv_sge sge = {(uintptr_t)e->cli.buf, 8, e->cli.mr->lkey};
  struct ibv_send_wr wr = {.wr_id = 22, .sg_list = &sge, .num_sge = 1,
                           .opcode = IBV_WR_SEND_WITH_INV,
                           .send_flags = IBV_SEND_SIGNALED,
                           .invalidate_rkey = rkey};
  struct ibv_send_wr *bad = NULL;
  struct ibv_wc wc;
  assert_int_equal(V->post_send(e->cli.qp, &wr, &bad), 0);
  assert_int_equal(poll_wait(e->cli.cq, &wc, 200), 1);
  expect_wc(&wc, 22, IBV_WC_SUCCESS, IBV_WC_SEND);
  assert_int_equal(poll_wait(e->srv.cq, &wc, 200), 1);
  expect_wc(&wc, 21, IBV_WC_SUCCESS, IBV_WC_RECV);
  assert_true(wc.wc_flags & IBV_WC_WITH_INV);
  assert_int_equal(wc.invalidated_rkey, rkey);
  assert_int_equal(fake_mw_bound_count("fake_srv0"), 0);
  /* A second one names no bound window: the receive fails. */
  assert_int_equal(post_recv(&e->srv, 23, 8192, 64), 0);
  assert_int_equal(V->post_send(e->cli.qp, &wr, &bad), 0);
  assert_int_equal(poll_wait(e->cli.cq, &wc, 200), 1);
  expect_wc(&wc, 22, IBV_WC_REM_OP_ERR, IBV_WC_SEND);
  assert_int_equal(V->dealloc_mw(mw), 0);
  assert_int_equal(V->dereg_mr(local), 0);
  assert_int_equal(V->dereg_mr(nobind), 0);
}

/* A device without windows says so, and refuses them. */
static void test_no_memory_windows(void **state)
{
  (void)state;
  struct fake_device_cfg cfg;
  fake_device_cfg_default(&cfg);
  cfg.mem_windows = false;
  assert_int_equal(fake_device_add("fake_old0", &cfg), 0);
  struct side s;
  side_open(&s, "fake_old0");
  struct ibv_device_attr da;
  assert_int_equal(V->query_device(s.ctx, &da), 0);
  assert_false(da.device_cap_flags & (IBV_DEVICE_MEM_WINDOW_TYPE_2A |
                                      IBV_DEVICE_MEM_WINDOW_TYPE_2B));
  assert_null(V->alloc_mw(s.pd, IBV_MW_TYPE_2));
  assert_int_equal(errno, EOPNOTSUPP);
  side_close(&s);
}

static void test_dmabuf(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc;
  uint8_t *gpu = calloc(1, 8192);
  assert_non_null(gpu);
  assert_null(V->reg_dmabuf_mr(e->srv.pd, 0, 8192, (uintptr_t)gpu, 5,
                               ALL_ACCESS));
  assert_int_equal(errno, EOPNOTSUPP);
  fake_fabric_set_dmabuf(true);
  assert_null(V->reg_dmabuf_mr(e->srv.pd, 0, 8192, (uintptr_t)gpu, -1,
                               ALL_ACCESS));
  assert_int_equal(errno, EBADF);
  struct ibv_mr *mr = V->reg_dmabuf_mr(e->srv.pd, 0, 8192, (uintptr_t)gpu, 5,
                                       ALL_ACCESS);
  assert_non_null(mr);
  assert_ptr_equal(mr->addr, gpu);
  assert_int_equal(mr->length, 8192);
  assert_ptr_equal(mr->pd, e->srv.pd);
  assert_ptr_equal(mr->context, e->srv.ctx);

  connect_pair(&e->cli, &e->srv);
  fill(e->cli.buf, 8192, 42);
  struct ibv_sge sge = {(uintptr_t)e->cli.buf, 8192, e->cli.mr->lkey};
  struct ibv_send_wr wr = {.wr_id = 1, .sg_list = &sge, .num_sge = 1,
                           .opcode = IBV_WR_RDMA_WRITE,
                           .send_flags = IBV_SEND_SIGNALED,
                           .wr.rdma = {(uintptr_t)gpu, mr->rkey}};
  struct ibv_send_wr *bad = NULL;
  assert_int_equal(V->post_send(e->cli.qp, &wr, &bad), 0);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
  assert_memory_equal(gpu, e->cli.buf, 8192);
  assert_int_equal(V->dereg_mr(mr), 0);
  free(gpu);
}

/* The inline ibv_post_send / ibv_poll_cq of <infiniband/verbs.h> go through
 * the context's ops, which the fake fills in. */
static void test_header_inline_ops(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc;
  connect_pair(&e->cli, &e->srv);
  fill(e->cli.buf, 128, 3);
  struct ibv_sge sge = {(uintptr_t)e->srv.buf, 128, e->srv.mr->lkey};
  struct ibv_recv_wr rwr = {.wr_id = 1, .sg_list = &sge, .num_sge = 1};
  struct ibv_recv_wr *rbad = NULL;
  assert_int_equal(ibv_post_recv(e->srv.qp, &rwr, &rbad), 0);
  struct ibv_sge ssge = {(uintptr_t)e->cli.buf, 128, e->cli.mr->lkey};
  struct ibv_send_wr wr = {.wr_id = 2, .sg_list = &ssge, .num_sge = 1,
                           .opcode = IBV_WR_SEND,
                           .send_flags = IBV_SEND_SIGNALED};
  struct ibv_send_wr *bad = NULL;
  assert_int_equal(ibv_post_send(e->cli.qp, &wr, &bad), 0);
  assert_int_equal(ibv_poll_cq(e->srv.cq, 1, &wc), 1);
  expect_wc(&wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
  assert_int_equal(ibv_poll_cq(e->cli.cq, 1, &wc), 1);
  assert_memory_equal(e->srv.buf, e->cli.buf, 128);
}

/* ---- PSN mode ----------------------------------------------------------- */

#define P10_NS (4096ull << 10) /* timeout 10: 4.2 ms */

/* Connects s to peer with the given PSNs: rq_psn at RTR, sq_psn at RTS
 * (timeout 10, retry_cnt 2, rnr_retry 3). */
static void connect_psn(struct side *s, const struct side *peer,
                        uint32_t rq_psn, uint32_t sq_psn)
{
  struct ibv_qp_attr a;
  rtr_attr(s, peer, &a);
  a.rq_psn = rq_psn;
  assert_int_equal(V->modify_qp(s->qp, &a, RTR_MASK), 0);
  rts_attr(s, 10, 2, 3, &a);
  a.sq_psn = sq_psn;
  assert_int_equal(V->modify_qp(s->qp, &a, RTS_MASK), 0);
}

static struct fake_qp_psn qp_psn(const struct side *s)
{
  struct fake_qp_psn p;
  assert_int_equal(fake_qp_psn(s->qp, &p), 0);
  return p;
}

static struct fake_qp_stats qstats(const struct side *s)
{
  struct fake_qp_stats q;
  assert_int_equal(fake_qp_stats(s->qp, &q), 0);
  return q;
}

/* Timers fire lazily: one retry period at a time. */
static void advance_periods(int n)
{
  for (int i = 0; i < n; i++)
    advance_ns(P10_NS);
}

static void psn_env(struct env *e, uint64_t ack_delay_ns)
{
  fake_fabric_set_manual_clock(true);
  fake_fabric_set_psn(true);
  fake_fabric_set_ack_delay_ns(ack_delay_ns);
  connect_psn(&e->cli, &e->srv, 0x700, 0x100);
  connect_psn(&e->srv, &e->cli, 0x100, 0x700);
}

/* In order: executed, acknowledged by the PSN of the last packet; PSNs
 * advance by path-MTU packets (1024 here). */
static void test_psn_in_order(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc;
  psn_env(e, 0);
  fill(e->cli.buf, 8192, 3);
  assert_int_equal(post_write(&e->cli, 1, &e->srv, 0, 3000), 0);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
  assert_memory_equal(e->srv.buf, e->cli.buf, 3000);
  assert_int_equal(qp_psn(&e->cli).sq_next, 0x103);
  assert_int_equal(qp_psn(&e->srv).expected, 0x103);
  assert_int_equal(qp_psn(&e->srv).ack, 0x103);
  /* A READ takes its response packets' PSNs, a 0-byte message one. */
  assert_int_equal(post_op(&e->cli, IBV_WR_RDMA_READ, 2, 4096, &e->srv, 0,
                           2048, IBV_SEND_SIGNALED), 0);
  assert_int_equal(post_op(&e->cli, IBV_WR_RDMA_WRITE, 3, 0, &e->srv, 0, 0,
                           IBV_SEND_SIGNALED), 0);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
  assert_memory_equal(e->cli.buf + 4096, e->srv.buf, 2048);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
  assert_int_equal(qp_psn(&e->srv).expected, 0x106);
  /* query_qp shows the live PSNs, as rxe does. */
  struct ibv_qp_attr a;
  struct ibv_qp_init_attr ia;
  assert_int_equal(V->query_qp(e->cli.qp, &a, IBV_QP_SQ_PSN, &ia), 0);
  assert_int_equal(a.sq_psn, 0x106);
  struct fake_qp_stats q = qstats(&e->srv);
  assert_int_equal(q.dup_requests + q.seq_naks + q.acks_lost, 0);
  assert_int_equal(qstats(&e->cli).stale_responses, 0);
}

/* The ACK leaves after its delay (and the responder's delivery delay): the
 * data is in place before the requester's completion. */
static void test_psn_ack_delay(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc;
  psn_env(e, 2 * NS_PER_MS);
  assert_int_equal(fake_device_set_delay_ms("fake_srv0", 1), 0);
  fill(e->cli.buf, 256, 4);
  assert_int_equal(post_write(&e->cli, 1, &e->srv, 0, 256), 0);
  assert_memory_equal(e->srv.buf, e->cli.buf, 256);
  advance_ns(3 * NS_PER_MS - 1);
  assert_int_equal(poll_now(e->cli.cq, &wc), 0);
  advance_ns(1);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
  /* Reset after the ACK left: nothing is lost. */
  assert_int_equal(post_recv(&e->srv, 9, 0, 64), 0);
  assert_int_equal(post_op(&e->cli, IBV_WR_SEND, 2, 0, NULL, 0, 64,
                           IBV_SEND_SIGNALED), 0);
  advance_ns(2 * NS_PER_MS);
  reset_qp(&e->srv);
  advance_ns(NS_PER_MS);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
  assert_int_equal(qstats(&e->srv).acks_lost, 0);
}

/* The responder is reset after its receive completed but before the ACK
 * left: the ACK is lost, the requester retransmits into a QP that no
 * longer answers and fails after retry_cnt retries. */
static void test_psn_ack_lost_on_reset(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc;
  psn_env(e, NS_PER_MS);
  assert_int_equal(post_recv(&e->srv, 9, 0, 64), 0);
  assert_int_equal(post_op(&e->cli, IBV_WR_SEND, 1, 0, NULL, 0, 64,
                           IBV_SEND_SIGNALED), 0);
  assert_int_equal(poll_now(e->srv.cq, &wc), 1);
  expect_wc(&wc, 9, IBV_WC_SUCCESS, IBV_WC_RECV);
  reset_qp(&e->srv); /* as the library does when final arrives */
  assert_int_equal(qstats(&e->srv).acks_lost, 1);
  assert_int_equal(dev_stats("fake_srv0").acks_lost, 1);
  for (int i = 0; i < 2; i++) {
    advance_ns(P10_NS);
    assert_int_equal(poll_now(e->cli.cq, &wc), 0);
  }
  advance_ns(P10_NS);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 1, IBV_WC_RETRY_EXC_ERR, IBV_WC_SEND);
  struct fake_dev_stats s = dev_stats("fake_cli0");
  assert_int_equal(s.requests, 3);
  assert_int_equal(s.retries, 2);
  assert_int_equal(s.requests_dropped, 3);
  /* The same with the QP moved to ERR, and destroyed. */
  reconnect(&e->cli, &e->srv, 10, 2, 3);
  assert_int_equal(to_rtr(&e->srv, &e->cli), 0);
  assert_int_equal(post_write(&e->cli, 2, &e->srv, 0, 64), 0);
  struct ibv_qp_attr err = {.qp_state = IBV_QPS_ERR};
  assert_int_equal(V->modify_qp(e->srv.qp, &err, IBV_QP_STATE), 0);
  assert_int_equal(qstats(&e->srv).acks_lost, 2);
  reconnect(&e->srv, &e->cli, 10, 2, 3);
  assert_int_equal(post_write(&e->srv, 3, &e->cli, 0, 64), 0);
  V->destroy_qp(e->cli.qp);
  e->cli.qp = NULL;
  assert_int_equal(dev_stats("fake_cli0").acks_lost, 1);
  advance_periods(4);
  assert_int_equal(poll_now(e->srv.cq, &wc), 1);
  expect_wc(&wc, 3, IBV_WC_RETRY_EXC_ERR, IBV_WC_RDMA_WRITE);
}

/* Behind the expected PSN: not executed again, ACKed with the PSN before
 * the responder's ACK PSN, which the requester does not expect. Ahead: one
 * sequence NAK, then silence. */
static void test_psn_duplicate_and_ahead(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc;
  fake_fabric_set_manual_clock(true);
  fake_fabric_set_psn(true);
  connect_psn(&e->srv, &e->cli, 100, 0);
  connect_psn(&e->cli, &e->srv, 0, 90);
  fill(e->cli.buf, 64, 5);
  assert_int_equal(post_recv(&e->srv, 9, 0, 64), 0);
  assert_int_equal(post_op(&e->cli, IBV_WR_SEND, 1, 0, NULL, 0, 64,
                           IBV_SEND_SIGNALED), 0);
  assert_int_equal(poll_now(e->srv.cq, &wc), 0);
  assert_true(all_zero(e->srv.buf, 64));
  assert_int_equal(qstats(&e->srv).dup_requests, 1);
  assert_int_equal(qstats(&e->cli).stale_responses, 1); /* ACK of 99 */
  advance_periods(3);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 1, IBV_WC_RETRY_EXC_ERR, IBV_WC_SEND);
  assert_int_equal(qstats(&e->srv).dup_requests, 3);
  assert_int_equal(qp_psn(&e->srv).expected, 100);

  /* A duplicate READ is replayed: the data comes back. */
  assert_int_equal(qstats(&e->cli).stale_responses, 3);
  reset_qp(&e->cli);
  connect_psn(&e->cli, &e->srv, 0, 97);
  fill(e->srv.buf + 4096, 128, 6);
  assert_int_equal(post_op(&e->cli, IBV_WR_RDMA_READ, 2, 4096, &e->srv, 4096,
                           128, IBV_SEND_SIGNALED), 0);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
  assert_memory_equal(e->cli.buf + 4096, e->srv.buf + 4096, 128);
  assert_int_equal(qp_psn(&e->srv).expected, 100);

  /* Ahead: one NAK with the expected PSN, which the requester's window
   * does not hold; retransmissions get no second NAK. */
  reset_qp(&e->cli);
  connect_psn(&e->cli, &e->srv, 0, 110);
  assert_int_equal(post_write(&e->cli, 3, &e->srv, 0, 64), 0);
  assert_int_equal(qstats(&e->srv).seq_naks, 1);
  assert_int_equal(qstats(&e->cli).stale_responses, 4); /* NAK of 100 */
  advance_periods(3);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 3, IBV_WC_RETRY_EXC_ERR, IBV_WC_RDMA_WRITE);
  assert_int_equal(qstats(&e->srv).seq_naks, 1);
  assert_true(all_zero(e->srv.buf, 64));
}

/* A gap (a request lost on the way) is NAKed; the requester resends from
 * the NAK's PSN and everything completes in order. */
static void test_psn_nak_resends(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc[4];
  psn_env(e, 0);
  fill(e->cli.buf, 4096, 8);
  assert_int_equal(fake_device_drop_next("fake_cli0", 1), 0);
  for (int i = 0; i < 3; i++)
    assert_int_equal(post_write(&e->cli, 1 + (uint64_t)i, &e->srv,
                                (size_t)i * 1024, 1024), 0);
  assert_int_equal(V->poll_cq(e->cli.cq, 4, wc), 3);
  for (int i = 0; i < 3; i++)
    expect_wc(&wc[i], 1 + (uint64_t)i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
  assert_memory_equal(e->srv.buf, e->cli.buf, 3072);
  assert_int_equal(qstats(&e->srv).seq_naks, 1);
  assert_int_equal(qstats(&e->cli).retries, 1);
  assert_int_equal(qp_psn(&e->srv).expected, 0x103);
}

/* A request of the previous connection, delayed on the wire, reaches the
 * QP that has its number after both sides were reset and reconnected. It
 * is judged by the new PSNs: behind, dropped and re-ACKed; at the expected
 * PSN, executed as if it were the new connection's. */
static void test_psn_late_packet_of_old_connection(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc;
  psn_env(e, 0);
  assert_int_equal(fake_device_set_delay_ms("fake_cli0", 5), 0);
  fill(e->cli.buf, 128, 9);
  assert_int_equal(post_write(&e->cli, 1, &e->srv, 0, 64), 0); /* PSN 0x100 */
  reset_qp(&e->cli);
  reset_qp(&e->srv);
  assert_int_equal(fake_device_set_delay_ms("fake_cli0", 0), 0);
  connect_psn(&e->srv, &e->cli, 0x200, 0x900);
  connect_psn(&e->cli, &e->srv, 0x900, 0x200);
  advance_ns(5 * NS_PER_MS);
  assert_true(all_zero(e->srv.buf, 64));
  assert_int_equal(qstats(&e->srv).dup_requests, 1);
  assert_int_equal(qstats(&e->cli).stale_responses, 1);
  assert_int_equal(post_write(&e->cli, 2, &e->srv, 64, 64), 0);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);

  /* The same PSNs on the new connection: the stale WRITE lands. */
  assert_int_equal(fake_device_set_delay_ms("fake_cli0", 5), 0);
  assert_int_equal(post_write(&e->cli, 3, &e->srv, 0, 64), 0); /* 0x201 */
  reset_qp(&e->cli);
  reset_qp(&e->srv);
  connect_psn(&e->srv, &e->cli, 0x201, 0x900);
  assert_int_equal(fake_device_set_delay_ms("fake_cli0", 0), 0);
  advance_ns(5 * NS_PER_MS);
  assert_memory_equal(e->srv.buf, e->cli.buf, 64);
  assert_int_equal(qp_psn(&e->srv).expected, 0x202);
}

/* One round: a WRITE whose ACK is still on the way (5 ms) when both sides
 * are reset; the requester reconnects with PSNs just below the old ones
 * while the responder stays in INIT, and sends a WRITE that is dropped.
 * The old ACK arrives first. Returns the new WRITE's completions by then. */
static int late_ack_round(struct env *e, uint64_t id, struct ibv_wc *wc)
{
  connect_psn(&e->cli, &e->srv, 0x700, 0x100);
  connect_psn(&e->srv, &e->cli, 0x100, 0x700);
  assert_int_equal(fake_device_set_delay_ms("fake_srv0", 5), 0);
  assert_int_equal(post_write(&e->cli, id, &e->srv, 0, 64), 0);
  reset_qp(&e->srv);
  reset_qp(&e->cli);
  connect_psn(&e->cli, &e->srv, 0x700, 0xf0);
  fill(e->cli.buf + 64, 64, (uint8_t)id);
  assert_int_equal(post_write(&e->cli, id + 1, &e->srv, 64, 64), 0);
  advance_ns(5 * NS_PER_MS);
  return poll_now(e->cli.cq, wc);
}

/* An ACK of the previous connection reaches the requester's reused QP: by
 * IBTA's rule it is outside the PSNs outstanding and dropped; with rxe's
 * completer it completes a WRITE that never arrived. */
static void test_psn_late_ack_of_old_connection(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc;
  fake_fabric_set_manual_clock(true);
  fake_fabric_set_psn(true);
  assert_int_equal(late_ack_round(e, 1, &wc), 0);
  assert_int_equal(qstats(&e->cli).stale_responses, 1);
  advance_periods(3);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 2, IBV_WC_RETRY_EXC_ERR, IBV_WC_RDMA_WRITE);
  reset_qp(&e->cli);

  fake_fabric_set_rxe_acks(true);
  assert_int_equal(late_ack_round(e, 3, &wc), 1);
  expect_wc(&wc, 4, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
  assert_true(all_zero(e->srv.buf + 64, 64));
  assert_int_equal(qstats(&e->cli).stale_responses, 1);
}

/* rxe: RESET keeps the responder's ACK PSN and RTR does not set it, so a
 * duplicate on the new connection is ACKed with the old one's PSN; and
 * rxe's completer takes an ACK past its oldest WR as acknowledging it: a
 * SEND completes successfully that the responder never took. */
static void test_rxe_reset_keeps_ack_psn(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc;
  psn_env(e, 0);
  fake_fabric_set_rxe_reset(true);
  fake_fabric_set_rxe_acks(true);
  assert_int_equal(post_write(&e->cli, 1, &e->srv, 0, 64), 0);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  assert_int_equal(qp_psn(&e->srv).ack, 0x101);
  reset_qp(&e->srv);
  reset_qp(&e->cli);
  assert_int_equal(qp_psn(&e->srv).ack, 0x101);
  assert_int_equal(qp_psn(&e->srv).expected, 0x101); /* resp.psn too */
  connect_psn(&e->srv, &e->cli, 0x500, 0);
  connect_psn(&e->cli, &e->srv, 0, 0xfffff0); /* behind 0x500 */
  assert_int_equal(qp_psn(&e->srv).ack, 0x101);
  assert_int_equal(qp_psn(&e->srv).expected, 0x500);
  assert_int_equal(post_recv(&e->srv, 9, 0, 64), 0);
  assert_int_equal(post_op(&e->cli, IBV_WR_SEND, 2, 0, NULL, 0, 64,
                           IBV_SEND_SIGNALED), 0);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 2, IBV_WC_SUCCESS, IBV_WC_SEND); /* ACK of 0x100 */
  assert_int_equal(poll_now(e->srv.cq, &wc), 0);  /* never received */
  assert_int_equal(qstats(&e->srv).rq_posted, 1);
  assert_int_equal(qstats(&e->srv).dup_requests, 1);
  /* A duplicate READ from before the RESET finds no resource: dropped. */
  assert_int_equal(post_op(&e->cli, IBV_WR_RDMA_READ, 3, 0, &e->srv, 0, 64,
                           IBV_SEND_SIGNALED), 0);
  advance_periods(3);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 3, IBV_WC_RETRY_EXC_ERR, IBV_WC_RDMA_READ);
  assert_int_equal(qstats(&e->srv).dup_requests, 4);

  /* Without the rxe settings: RTR sets the ACK PSN and the requester's
   * window refuses the ACK. */
  fake_fabric_set_rxe_reset(false);
  fake_fabric_set_rxe_acks(false);
  reset_qp(&e->srv);
  reset_qp(&e->cli);
  assert_int_equal(qp_psn(&e->srv).expected, 0);
  connect_psn(&e->srv, &e->cli, 0x500, 0);
  connect_psn(&e->cli, &e->srv, 0, 0xfffff0);
  assert_int_equal(qp_psn(&e->srv).ack, 0x500);
  assert_int_equal(post_op(&e->cli, IBV_WR_SEND, 4, 0, NULL, 0, 64,
                           IBV_SEND_SIGNALED), 0);
  assert_int_equal(poll_now(e->cli.cq, &wc), 0);
  assert_int_equal(qstats(&e->cli).stale_responses, 1);
  advance_periods(3);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 4, IBV_WC_RETRY_EXC_ERR, IBV_WC_SEND);
}

/* RNR and remote errors travel as NAKs. */
static void test_psn_rnr_and_errors(void **state)
{
  struct env *e = *state;
  struct ibv_wc wc;
  psn_env(e, 0);
  assert_int_equal(post_op(&e->cli, IBV_WR_SEND, 1, 0, NULL, 0, 64,
                           IBV_SEND_SIGNALED), 0);
  assert_int_equal(qstats(&e->cli).rnr_events, 1);
  assert_int_equal(post_recv(&e->srv, 9, 0, 64), 0);
  advance_ns(10 * 1000); /* min_rnr_timer 1: 10 us */
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
  assert_int_equal(post_op(&e->cli, IBV_WR_RDMA_WRITE, 2, 0, &e->srv, BUF,
                           64, IBV_SEND_SIGNALED), 0);
  assert_int_equal(poll_now(e->cli.cq, &wc), 1);
  expect_wc(&wc, 2, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE);
  assert_int_equal(qp_state(e->srv.qp), IBV_QPS_ERR);
  assert_int_equal(qp_state(e->cli.qp), IBV_QPS_ERR);
}

/* ---- threads ----------------------------------------------------------- */

#define THREADS 4
#define ITERS 200

struct worker {
  int id;
  int failures;
};

static int worker_round(struct side *c, struct side *s, int id, int it)
{
  struct ibv_wc wc;
  size_t off = (size_t)(it % 16) * 256;
  fill(c->buf + off, 256, (uint8_t)(id * 31 + it));
  if (post_recv(s, (uint64_t)it, 32768, 64) ||
      post_op(c, IBV_WR_RDMA_WRITE, 0, off, s, off, 256, 0) ||
      post_op(c, IBV_WR_SEND_WITH_IMM, (uint64_t)it, off, NULL, 0, 16,
              IBV_SEND_SIGNALED))
    return 1;
  uint64_t end = ho_now_ns() + 2000 * NS_PER_MS;
  int n;
  while ((n = V->poll_cq(s->cq, 1, &wc)) == 0 && ho_now_ns() < end)
    ;
  if (n != 1 || wc.status != IBV_WC_SUCCESS || wc.wr_id != (uint64_t)it ||
      memcmp(s->buf + off, c->buf + off, 256) != 0)
    return 1;
  while ((n = V->poll_cq(c->cq, 1, &wc)) == 0 && ho_now_ns() < end)
    ;
  return n != 1 || wc.status != IBV_WC_SUCCESS;
}

static void *worker_main(void *arg)
{
  struct worker *w = arg;
  struct side c, s;
  side_open(&c, "fake_cli0");
  side_open(&s, "fake_srv0");
  connect_to(&c, &s, 10, 3, 7);
  connect_to(&s, &c, 10, 3, 7);
  for (int it = 0; it < ITERS && !w->failures; it++)
    w->failures += worker_round(&c, &s, w->id, it);
  side_close(&s);
  side_close(&c);
  return NULL;
}

static void test_threads(void **state)
{
  pthread_t t[THREADS];
  struct worker w[THREADS];
  for (int i = 0; i < THREADS; i++) {
    w[i] = (struct worker){.id = i};
    assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
  }
  for (int i = 0; i < 50; i++)
    fake_fabric_progress();
  for (int i = 0; i < THREADS; i++) {
    assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(w[i].failures, 0);
  }
  assert_int_equal(dev_stats("fake_cli0").bytes_written,
                   (uint64_t)THREADS * ITERS * 256);
  assert_int_equal(fake_fabric_live_objects(), 10);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
      T(test_devices),
      T(test_write_read),
      T(test_send_and_imm),
      T(test_ordering),
      T(test_target_in_init_fails_after_retries),
      T(test_late_rtr_succeeds),
      T(test_retry_cnt_7),
      T(test_timeout_0_waits_forever),
      T(test_rnr),
      T(test_access_errors),
      T(test_flush_on_err),
      T(test_reset_then_other_peer),
      T(test_gid_routing),
      T(test_state_machine_init_rtr),
      T(test_state_machine_rts_err_reset),
      T(test_destroy_rules),
      T(test_verb_faults),
      T(test_fabric_faults),
      T(test_queue_limits),
      T(test_reads_in_flight),
      T(test_cq_overflow_and_sq_release),
      T(test_dmabuf),
      T(test_memory_windows),
      T(test_no_memory_windows),
      T(test_header_inline_ops),
      T(test_psn_in_order),
      T(test_psn_ack_delay),
      T(test_psn_ack_lost_on_reset),
      T(test_psn_duplicate_and_ahead),
      T(test_psn_nak_resends),
      T(test_psn_late_packet_of_old_connection),
      T(test_psn_late_ack_of_old_connection),
      T(test_rxe_reset_keeps_ack_psn),
      T(test_psn_rnr_and_errors),
      T(test_threads),
#undef T
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
