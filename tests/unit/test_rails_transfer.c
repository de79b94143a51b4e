/* SPDX-License-Identifier: MIT */
/* Transfers over two rails on the simulated fabric: two client NICs named
 * by the hint, the simulated server on a third. Each transfer is placed on
 * the rail with the fewest in flight, ties in turn; a buffer is registered
 * on a rail the first time a transfer uses it there; the bytes each rail's
 * NIC received or served (the fabric's counters, not ours) and the
 * payload are checked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakes/fake_verbs.h"
#include "fakes/sim_peer.h"
#include "fakes/world.h"
#include "hipobj.h"
#include "instance.h"

#define OBJ_SIZE (1u << 20)
#define RAIL1 "fake_cli1"
#define RAIL1_BUS "0000:42:00.0"
#define HINT WORLD_CLIENT_NIC "," RAIL1

struct fixture {
  struct world w;
  struct sim_peer peer;
  uint8_t *buf;
};

static int setup(void **state)
{
  struct fixture *f = calloc(1, sizeof *f);
  if (!f || world_create(&f->w, NULL) != 0 ||
      world_add_nic(&f->w, RAIL1, RAIL1_BUS) != 0)
    return -1;
  f->w.opts.max_transfers = 4;
  if (world_init(&f->w, HINT) != hipObjSuccess)
    return -1;
  if (sim_peer_create(&f->peer, &f->w.plat, NULL, OBJ_SIZE) != 0)
    return -1;
  for (size_t i = 0; i < OBJ_SIZE; i++)
    f->peer.object[i] = (uint8_t)(i * 13 + 5);
  f->buf = aligned_alloc(4096, OBJ_SIZE);
  if (!f->buf ||
      hipObjBufRegisterHost(f->buf, OBJ_SIZE).opError != hipObjSuccess)
    return -1;
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  struct fixture *f = *state;
  hipObjBufDeregister(f->buf);
  hipObjShutdown();
  sim_peer_destroy(&f->peer);
  world_destroy(&f->w);
  free(f->buf);
  free(f);
  return 0;
}

static hipObjOpError_t get(struct fixture *f, uint64_t off, uint64_t n)
{
  struct sim_request r;
  sim_request_init(&r, &f->peer, HIPOBJ_RDMA_OP_GET, off, n);
  return hipObjGet(NULL, f->buf, n, (off_t)off, &sim_ops, &r).opError;
}

static hipObjOpError_t put(struct fixture *f, uint64_t off, uint64_t n)
{
  struct sim_request r;
  sim_request_init(&r, &f->peer, HIPOBJ_RDMA_OP_PUT, off, n);
  return hipObjPut(NULL, f->buf, n, (off_t)off, &sim_ops, &r).opError;
}

static struct fake_dev_stats stats(const char *dev)
{
  struct fake_dev_stats s;
  assert_int_equal(fake_device_stats(dev, &s), 0);
  return s;
}

/* The buffer's MR on rail i, NULL while none was made. */
static struct ibv_mr *rail_mr(struct fixture *f, unsigned i)
{
  struct ho_instance *inst = ho_instance_get();
  struct ho_buf *b = ho_buffers_find(inst->buffers, f->buf);
  assert_non_null(b);
  struct ibv_mr *mr = atomic_load(&b->rail_mr[i]);
  ho_buf_put(b);
  ho_instance_put(inst);
  return mr;
}

static hipObjInfo_t info(void)
{
  hipObjInfo_t i;
  memset(&i, 0, sizeof i);
  i.size = sizeof i;
  assert_int_equal(hipObjGetInfo(&i).opError, hipObjSuccess);
  return i;
}

/* Both rails open; one after the other, transfers alternate between them,
 * each rail registering the buffer on its first transfer only. */
static void alternate_and_register_once(void **state)
{
  struct fixture *f = *state;
  hipObjInfo_t i = info();
  assert_int_equal(i.railCount, 2);
  assert_int_equal(i.railsInUse, 2);
  assert_string_equal(i.rails[1].name, RAIL1);
  struct fake_dev_stats a0 = stats(WORLD_CLIENT_NIC), b0 = stats(RAIL1);
  const uint64_t part = OBJ_SIZE / 8;
  assert_null(rail_mr(f, 1));
  assert_int_equal(get(f, 0, part), hipObjSuccess); /* rail 0 */
  assert_null(rail_mr(f, 1));
  assert_int_equal(get(f, part, part), hipObjSuccess); /* rail 1 */
  struct ibv_mr *mr1 = rail_mr(f, 1);
  assert_non_null(mr1);
  for (unsigned k = 2; k < 8; k++)
    assert_int_equal(get(f, k * part, part), hipObjSuccess);
  assert_memory_equal(f->buf, f->peer.object, OBJ_SIZE);
  struct fake_dev_stats a1 = stats(WORLD_CLIENT_NIC), b1 = stats(RAIL1);
  /* The server WRITEs each part into the NIC its rail's QP is on. */
  uint64_t on0 = a1.bytes_received - a0.bytes_received;
  uint64_t on1 = b1.bytes_received - b0.bytes_received;
  assert_true(on0 >= 4 * part && on0 < 4 * part + 4096); /* + messages */
  assert_true(on1 >= 4 * part && on1 < 4 * part + 4096);
  assert_ptr_equal(rail_mr(f, 1), mr1); /* registered once there */
  hipObjInfo_t i1 = info();
  for (int r = 0; r < 2; r++) {
    assert_int_equal(i1.railStats[r].transfers, 4);
    assert_int_equal(i1.railStats[r].bytes, 4 * part);
    assert_int_equal(i1.railStats[r].failures, 0);
    assert_int_equal(i1.railStats[r].inFlight, 0);
    assert_int_equal(i1.railStats[r].state, hipObjRailUp);
  }
  assert_int_equal(i1.railStats[2].state, hipObjRailNotOpen);
  /* PUTs: the server READs from each rail's NIC in turn. */
  memset(f->peer.object, 0, OBJ_SIZE);
  for (unsigned k = 0; k < 8; k++)
    assert_int_equal(put(f, k * part, part), hipObjSuccess);
  assert_memory_equal(f->buf, f->peer.object, OBJ_SIZE);
  struct fake_dev_stats a2 = stats(WORLD_CLIENT_NIC), b2 = stats(RAIL1);
  assert_int_equal(a2.bytes_served - a1.bytes_served, 4 * part);
  assert_int_equal(b2.bytes_served - b1.bytes_served, 4 * part);
  assert_ptr_equal(rail_mr(f, 1), mr1);
}

struct worker {
  struct fixture *f;
  unsigned index;
  hipObjOpError_t e;
};

static void *run_worker(void *arg)
{
  struct worker *w = arg;
  const uint64_t part = OBJ_SIZE / 4;
  w->e = hipObjSuccess;
  for (unsigned k = 0; k < 16 && w->e == hipObjSuccess; k++)
    w->e = get(w->f, w->index * part, part);
  return NULL;
}

/* Four threads at once: the transfers spread over both rails, neither
 * taking less than a quarter of the bytes. */
static void concurrent_spread(void **state)
{
  struct fixture *f = *state;
  struct fake_dev_stats a0 = stats(WORLD_CLIENT_NIC), b0 = stats(RAIL1);
  pthread_t t[4];
  struct worker w[4];
  for (unsigned k = 0; k < 4; k++) {
    w[k] = (struct worker){f, k, hipObjSuccess};
    assert_int_equal(pthread_create(&t[k], NULL, run_worker, &w[k]), 0);
  }
  for (unsigned k = 0; k < 4; k++) {
    pthread_join(t[k], NULL);
    assert_int_equal(w[k].e, hipObjSuccess);
  }
  assert_memory_equal(f->buf, f->peer.object, OBJ_SIZE);
  struct fake_dev_stats a1 = stats(WORLD_CLIENT_NIC), b1 = stats(RAIL1);
  uint64_t on0 = a1.bytes_received - a0.bytes_received;
  uint64_t on1 = b1.bytes_received - b0.bytes_received;
  uint64_t total = on0 + on1;
  assert_true(total >= 16ull * OBJ_SIZE);
  assert_true(on0 >= total / 4 && on1 >= total / 4);
  hipObjInfo_t i = info();
  assert_int_equal(i.transfersSucceeded, 64);
}

/* HIPOBJ_MAX_RAILS 1: the second NIC is neither chosen nor opened, and
 * carries nothing. */
static void one_rail_when_capped(void **state)
{
  struct fixture *f = *state;
  assert_int_equal(hipObjBufDeregister(f->buf).opError, hipObjSuccess);
  assert_int_equal(hipObjShutdown().opError, hipObjSuccess);
  f->w.opts.max_rails = 1;
  assert_int_equal(world_init(&f->w, HINT), hipObjSuccess);
  assert_int_equal(hipObjBufRegisterHost(f->buf, OBJ_SIZE).opError,
                   hipObjSuccess);
  hipObjInfo_t i = info();
  assert_int_equal(i.railCount, 1);
  assert_int_equal(i.railsInUse, 1);
  struct fake_dev_stats b0 = stats(RAIL1);
  for (unsigned k = 0; k < 4; k++)
    assert_int_equal(get(f, 0, OBJ_SIZE), hipObjSuccess);
  struct fake_dev_stats b1 = stats(RAIL1);
  assert_int_equal(b1.bytes_received, b0.bytes_received);
  assert_memory_equal(f->buf, f->peer.object, OBJ_SIZE);
}

/* Transfers the application drives are placed too: two tokens held at
 * once (over the same range: a token names a registered buffer's start)
 * are on the two rails, each counted in flight until completed, and each
 * rail's NIC receives its token's bytes. */
static void tokens_on_both_rails(void **state)
{
  struct fixture *f = *state;
  const uint64_t part = OBJ_SIZE / 2;
  char *tok[2] = {NULL, NULL};
  for (unsigned k = 0; k < 2; k++)
    assert_int_equal(hipObjGetRdmaToken(f->buf, part,
                                        HIPOBJ_RDMA_OP_GET, &tok[k]).opError,
                     hipObjSuccess);
  hipObjInfo_t i = info();
  assert_int_equal(i.railStats[0].inFlight, 1);
  assert_int_equal(i.railStats[1].inFlight, 1);
  struct fake_dev_stats a0 = stats(WORLD_CLIENT_NIC), b0 = stats(RAIL1);
  for (unsigned k = 0; k < 2; k++) {
    struct sim_request r;
    memset(f->buf, 0, part);
    sim_request_init(&r, &f->peer, HIPOBJ_RDMA_OP_GET, 0, part);
    assert_int_equal(sim_ops.sendRequest(&r, tok[k], HO_TOKEN_HEX), 0);
    char reply[HIPOBJ_REPLY_BUF_LEN];
    size_t len = sizeof reply;
    assert_int_equal(sim_ops.recvReply(&r, reply, &len), 0);
    assert_int_equal(hipObjCompleteRdmaTransfer(tok[k], reply, len).opError,
                     hipObjSuccess);
    assert_int_equal(hipObjPutRdmaToken(tok[k]).opError, hipObjSuccess);
    assert_memory_equal(f->buf, f->peer.object, part);
  }
  assert_true(stats(WORLD_CLIENT_NIC).bytes_received - a0.bytes_received >=
              part);
  assert_true(stats(RAIL1).bytes_received - b0.bytes_received >= part);
  i = info();
  for (int r = 0; r < 2; r++) {
    assert_int_equal(i.railStats[r].inFlight, 0);
    assert_int_equal(i.railStats[r].transfers, 1);
    assert_int_equal(i.railStats[r].bytes, part);
  }
  /* A token put back unused is a failure of its rail, nothing in flight. */
  char *t = NULL;
  assert_int_equal(hipObjGetRdmaToken(f->buf, part, HIPOBJ_RDMA_OP_PUT,
                                      &t).opError, hipObjSuccess);
  assert_int_equal(hipObjPutRdmaToken(t).opError, hipObjSuccess);
  i = info();
  assert_int_equal(i.railStats[0].inFlight + i.railStats[1].inFlight, 0);
  assert_int_equal(i.railStats[0].failures + i.railStats[1].failures, 1);
}

struct warned {
  int count;
  char text[1024];
};

static void on_warning(void *ctx, hipObjLogLevel_t level, const char *message)
{
  struct warned *w = ctx;
  if (level != hipObjLogWarning)
    return;
  w->count++;
  size_t n = strlen(w->text);
  snprintf(w->text + n, sizeof w->text - n, "%s\n", message);
}

/* A black-holed rail (its requests dropped, the port still ACTIVE): the
 * transfer placed there fails with retries exceeded and is sent again on
 * the other rail at once; no transfer fails; the rail is marked down once
 * (logged) and nothing is placed on it; after HIPOBJ_FAILBACK_MS a probe
 * finds it healthy again and it is back. */
static void black_holed_rail_fails_over(void **state)
{
  struct fixture *f = *state;
  assert_int_equal(hipObjBufDeregister(f->buf).opError, hipObjSuccess);
  assert_int_equal(hipObjShutdown().opError, hipObjSuccess);
  f->w.opts.failback_ms = 200;
  assert_int_equal(world_init(&f->w, HINT), hipObjSuccess);
  assert_int_equal(hipObjBufRegisterHost(f->buf, OBJ_SIZE).opError,
                   hipObjSuccess);
  struct warned w = {0, ""};
  assert_int_equal(hipObjSetLogCallback(on_warning, &w).opError,
                   hipObjSuccess);
  const uint64_t part = OBJ_SIZE / 8;
  /* Both rails connected first. */
  for (unsigned k = 0; k < 2; k++)
    assert_int_equal(get(f, k * part, part), hipObjSuccess);
  assert_int_equal(fake_device_drop_next(RAIL1, 1000000), 0);
  struct fake_dev_stats a0 = stats(WORLD_CLIENT_NIC);
  for (unsigned k = 0; k < 8; k++)
    assert_int_equal(get(f, k * part, part), hipObjSuccess);
  assert_memory_equal(f->buf, f->peer.object, OBJ_SIZE);
  hipObjInfo_t i = info();
  assert_int_equal(i.transfersSucceeded, i.transfers); /* none failed */
  assert_int_equal(i.railStats[1].state, hipObjRailDown);
  assert_int_equal(i.railStats[1].marksDown, 1);
  /* Its kept connection broke (not the rail's fault: nothing marked, the
   * retry on rail 0), then a new connection's requests were lost (marked
   * down, the retry on rail 0); then nothing was placed there. */
  assert_true(i.railStats[1].failures >= 1 && i.railStats[1].failures <= 2);
  assert_int_equal(i.retriesFabric + i.retriesKeptBroken,
                   i.railStats[1].failures);
  assert_int_equal(i.railStats[1].transfers, 1 + i.railStats[1].failures);
  assert_true(stats(WORLD_CLIENT_NIC).bytes_received - a0.bytes_received >=
              8 * part);
  assert_non_null(strstr(w.text, "rail " RAIL1 " marked down"));
  /* The rail heals; after the failback delay one transfer probes it. */
  assert_int_equal(fake_device_drop_next(RAIL1, 0), 0);
  struct timespec ts = {0, 250 * 1000000L};
  nanosleep(&ts, NULL);
  struct fake_dev_stats b0 = stats(RAIL1);
  for (unsigned k = 0; k < 4; k++)
    assert_int_equal(get(f, k * part, part), hipObjSuccess);
  i = info();
  assert_int_equal(i.railStats[1].state, hipObjRailUp);
  assert_true(stats(RAIL1).bytes_received > b0.bytes_received);
  assert_non_null(strstr(w.text, "rail " RAIL1 " is back up"));
  assert_int_equal(hipObjSetLogCallback(NULL, NULL).opError, hipObjSuccess);
}

static uint64_t now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* An error completion on a new connection of rail 1: the rail is marked
 * down and the transfer sent again on rail 0 at once, not at its
 * backoff's first slot (a fifteenth of a 15 s deadline: 1 s). */
static void error_completion_retried_on_other_rail_at_once(void **state)
{
  struct fixture *f = *state;
  const uint64_t part = OBJ_SIZE / 8;
  assert_int_equal(hipObjBufDeregister(f->buf).opError, hipObjSuccess);
  assert_int_equal(hipObjShutdown().opError, hipObjSuccess);
  f->w.opts.transfer_timeout_ms = 15000;
  assert_int_equal(world_init(&f->w, HINT), hipObjSuccess);
  assert_int_equal(hipObjBufRegisterHost(f->buf, OBJ_SIZE).opError,
                   hipObjSuccess);
  assert_int_equal(get(f, 0, part), hipObjSuccess); /* rail 0 */
  assert_int_equal(fake_device_force_error(RAIL1, 1, IBV_WC_RETRY_EXC_ERR),
                   0);
  uint64_t t0 = now_ms();
  assert_int_equal(get(f, part, part), hipObjSuccess); /* rail 1, then 0 */
  uint64_t took = now_ms() - t0;
  assert_true(took < 600);
  assert_memory_equal(f->buf, f->peer.object, 2 * part);
  hipObjInfo_t i = info();
  assert_int_equal(i.transfersSucceeded, 2);
  assert_int_equal(i.retriesFabric, 1);
  assert_int_equal(i.railStats[1].state, hipObjRailDown);
  assert_int_equal(i.railStats[1].marksDown, 1);
  assert_int_equal(i.railStats[1].failures, 1);
  assert_int_equal(i.railStats[0].transfers, 2);
  assert_int_equal(i.railStats[0].bytes, 2 * part);
  /* Nothing more is placed on it before the failback delay (5 s). */
  for (unsigned k = 0; k < 4; k++)
    assert_int_equal(get(f, k * part, part), hipObjSuccess);
  i = info();
  assert_int_equal(i.railStats[1].transfers, 1);
  assert_int_equal(i.railStats[0].transfers, 6);
}

/* A connect that fails on rail 1 (modify_qp into RTR: the path to the
 * server's QP did not resolve, as rxe answers with the rail's link down)
 * is the rail's transport failing before ready, nothing moved: the
 * transfer is sent again on rail 0 and succeeds, rail 1 is marked down
 * (the Soft-RoCE lane, t24: a GET and a PUT failed with hipObjRdmaError,
 * not retried, when rail 1's link went down). */
static void failed_connect_retried_on_other_rail(void **state)
{
  struct fixture *f = *state;
  const uint64_t part = OBJ_SIZE / 8;
  assert_int_equal(get(f, 0, part), hipObjSuccess); /* rail 0 */
  assert_int_equal(fake_device_fail_connect(RAIL1, 1, ETIMEDOUT), 0);
  assert_int_equal(put(f, part, part), hipObjSuccess); /* rail 1, then 0 */
  assert_int_equal(fake_device_fail_connect(RAIL1, 0, 0), 0);
  assert_int_equal(get(f, 2 * part, part), hipObjSuccess);
  assert_memory_equal(f->buf, f->peer.object, part);
  assert_memory_equal(f->peer.object + part, f->buf + part, part);
  hipObjInfo_t i = info();
  assert_int_equal(i.transfersSucceeded, 3);
  assert_int_equal(i.retriesFabric, 1);
  assert_int_equal(i.railStats[1].state, hipObjRailDown);
  assert_int_equal(i.railStats[1].marksDown, 1);
  assert_int_equal(i.railStats[1].transfers, 1);
  assert_int_equal(i.railStats[1].failures, 1);
  assert_int_equal(i.railStats[0].transfers, 3);
  assert_int_equal(i.railStats[0].failures, 0);
}

/* An answer is no rail's fault: a 501 marks nothing. */
static void decline_marks_nothing(void **state)
{
  struct fixture *f = *state;
  for (unsigned k = 0; k < 4; k++) {
    struct sim_request r;
    sim_request_init(&r, &f->peer, HIPOBJ_RDMA_OP_GET, 0, OBJ_SIZE);
    r.mode = SIM_DECLINE;
    assert_int_equal(hipObjGet(NULL, f->buf, OBJ_SIZE, 0, &sim_ops, &r).opError,
                     hipObjS3Error);
  }
  hipObjInfo_t i = info();
  for (int r = 0; r < 2; r++) {
    assert_int_equal(i.railStats[r].state, hipObjRailUp);
    assert_int_equal(i.railStats[r].marksDown, 0);
    assert_int_equal(i.railStats[r].failures, 2);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(alternate_and_register_once, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(concurrent_spread, setup, teardown),
      cmocka_unit_test_setup_teardown(one_rail_when_capped, setup, teardown),
      cmocka_unit_test_setup_teardown(tokens_on_both_rails, setup, teardown),
      cmocka_unit_test_setup_teardown(black_holed_rail_fails_over, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(decline_marks_nothing, setup, teardown),
      cmocka_unit_test_setup_teardown(
          error_completion_retried_on_other_rail_at_once, setup, teardown),
      cmocka_unit_test_setup_teardown(failed_connect_retried_on_other_rail,
                                      setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
