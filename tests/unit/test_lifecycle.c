/* SPDX-License-Identifier: MIT */
/* Init, shutdown, registration limits and concurrency on the simulated
 * fabric: many threads, pool exhaustion, reentrant callbacks, shutdown while
 * transfers run, every public function before init. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "fakes/fake_verbs.h"
#include "fakes/sim_peer.h"
#include "fakes/world.h"
#include "hipobj.h"
#include "instance.h"

#define OBJ_SIZE (256u << 10)

static void sleep_ms(unsigned ms)
{
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
}

static void before_init(void **state)
{
  (void)state;
  char buf[64];
  char *tok = NULL;
  hipObjOps_t ops = sim_ops;
  assert_int_equal(hipObjShutdown().opError, hipObjNotInitialized);
  assert_int_equal(hipObjBufRegister(buf, 64).opError, hipObjNotInitialized);
  assert_int_equal(hipObjBufRegisterHost(buf, 64).opError, hipObjNotInitialized);
  assert_int_equal(hipObjBufDeregister(buf).opError, hipObjNotInitialized);
  assert_int_equal(hipObjBufSync(buf, 64, 0, HIPOBJ_SYNC_TO_HOST).opError,
                   hipObjNotInitialized);
  assert_int_equal(hipObjGet(NULL, buf, 64, 0, &ops, NULL).opError, hipObjNotInitialized);
  assert_int_equal(hipObjPut(NULL, buf, 64, 0, &ops, NULL).opError, hipObjNotInitialized);
  assert_int_equal(hipObjGetRdmaToken(buf, 64, HIPOBJ_RDMA_OP_GET, &tok).opError,
                   hipObjNotInitialized);
  assert_null(tok);
  assert_int_equal(hipObjInit(NULL).opError, hipObjInvalidValue);
  hipObjConfig_t cfg = {0};
  cfg.flags = 0x80000000u; /* not a flag */
  assert_int_equal(hipObjInit(&cfg).opError, hipObjInvalidValue);
  cfg.flags = 0;
  cfg.gpuDevice = -2;
  assert_int_equal(hipObjInit(&cfg).opError, hipObjInvalidValue);
}

static void init_choices_and_failures(void **state)
{
  (void)state;
  struct world w;
  assert_int_equal(world_create(&w, NULL), 0);
  /* No GPU and no hint: nothing says which NIC. */
  assert_int_equal(world_init(&w, NULL), hipObjNicNotFound);
  assert_int_equal(world_init(&w, "nosuch0"), hipObjNicNotFound);
  assert_int_equal(world_init(&w, WORLD_CLIENT_NIC), hipObjSuccess);
  assert_int_equal(world_init(&w, WORLD_CLIENT_NIC), hipObjAlreadyInitialized);
  struct ho_instance *inst = ho_instance_get();
  assert_string_equal(inst->config.nic, WORLD_CLIENT_NIC);
  assert_int_equal(inst->config.gpu, -1);
  /* The IPv4-mapped RoCE v2 GID (index 3 in the fake's table). */
  assert_int_equal(inst->dev->gid_index, 3);
  assert_int_equal(inst->dev->gid.raw[10], 0xff);
  ho_instance_put(inst);
  assert_int_equal(ho_shutdown(), hipObjSuccess);
  assert_int_equal(ho_shutdown(), hipObjNotInitialized);
  /* No libibverbs at all. */
  struct ho_platform none = w.plat;
  none.verbs = NULL;
  hipObjConfig_t cfg = {0};
  cfg.gpuDevice = -1;
  cfg.nicHint = WORLD_CLIENT_NIC;
  int native = 0;
  assert_int_equal(ho_init_with(&none, &w.opts, &cfg, &native), hipObjNicNotFound);
  world_destroy(&w);
}

/* Fail each verbs call of init in turn: a clean error, nothing published,
 * nothing leaked; then init works. */
static void init_fails_cleanly_at_every_step(void **state)
{
  (void)state;
  static const char *verbs[] = {"get_device_list", "open_device", "query_device",
                                "query_port", "alloc_pd", "reg_mr", "create_cq",
                                "create_qp", "modify_qp"};
  struct world w;
  assert_int_equal(world_create(&w, NULL), 0);
  int baseline = fake_fabric_live_objects();
  for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
    for (unsigned skip = 0; skip < 3; skip++) {
      fake_verb_fail(verbs[i], skip, 1, ENOMEM);
      hipObjOpError_t e = world_init(&w, WORLD_CLIENT_NIC);
      fake_verb_fail(verbs[i], 0, 0, 0);
      if (e == hipObjSuccess) {
        assert_int_equal(ho_shutdown(), hipObjSuccess);
      } else {
        assert_true(e == hipObjRdmaError || e == hipObjNicNotFound);
        assert_null(ho_instance_get());
      }
      assert_int_equal(fake_fabric_live_objects(), baseline);
    }
  }
  assert_int_equal(world_init(&w, WORLD_CLIENT_NIC), hipObjSuccess);
  assert_int_equal(ho_shutdown(), hipObjSuccess);
  assert_int_equal(fake_fabric_live_objects(), baseline);
  world_destroy(&w);
}

static void registration_limits(void **state)
{
  (void)state;
  struct world w;
  assert_int_equal(world_create(&w, NULL), 0);
  assert_int_equal(world_init(&w, WORLD_CLIENT_NIC), hipObjSuccess);
  uint8_t *mem = malloc(HIPOBJ_MAX_BUFFERS + 1);
  assert_int_equal(hipObjBufRegisterHost(NULL, 1).opError, hipObjInvalidValue);
  assert_int_equal(hipObjBufRegisterHost(mem, 0).opError, hipObjInvalidValue);
  assert_int_equal(hipObjBufRegisterHost(mem, (size_t)HIPOBJ_MAX_BUFFER_SIZE + 1).opError,
                   hipObjSizeTooLarge);
  assert_int_equal(hipObjBufRegister(mem, SIZE_MAX).opError, hipObjSizeTooLarge);
  for (unsigned i = 0; i < HIPOBJ_MAX_BUFFERS; i++)
    assert_int_equal(hipObjBufRegisterHost(mem + i, 1).opError, hipObjSuccess);
  assert_int_equal(hipObjBufRegisterHost(mem + 5, 1).opError, hipObjBufAlreadyRegistered);
  assert_int_equal(hipObjBufRegister(mem + HIPOBJ_MAX_BUFFERS, 1).opError,
                   hipObjSizeTooLarge);
  assert_int_equal(hipObjBufDeregister(mem + HIPOBJ_MAX_BUFFERS).opError,
                   hipObjBufNotRegistered);
  assert_int_equal(hipObjBufDeregister(NULL).opError, hipObjInvalidValue);
  for (unsigned i = 0; i < HIPOBJ_MAX_BUFFERS; i++)
    assert_int_equal(hipObjBufDeregister(mem + i).opError, hipObjSuccess);
  /* Buffers left registered are released by shutdown. */
  assert_int_equal(hipObjBufRegisterHost(mem, 64).opError, hipObjSuccess);
  assert_int_equal(hipObjBufSync(mem, 64, 0, HIPOBJ_SYNC_TO_DEVICE).opError, hipObjSuccess);
  assert_int_equal(hipObjBufSync(mem, 64, 1, HIPOBJ_SYNC_TO_DEVICE).opError,
                   hipObjInvalidValue);
  assert_int_equal(hipObjBufSync(mem, 8, 0, 2).opError, hipObjInvalidValue);
  assert_int_equal(hipObjBufSync(mem, 8, -1, 0).opError, hipObjInvalidValue);
  assert_int_equal(hipObjShutdown().opError, hipObjSuccess);
  free(mem);
  world_destroy(&w);
}

struct shared {
  struct world w;
  struct sim_peer peer;
  uint8_t *buf;
  size_t slice;
  atomic_int ok, failed, not_init;
  atomic_bool stop;
};

static int make_shared(struct shared *s, unsigned max_transfers, size_t slices)
{
  memset(s, 0, sizeof *s);
  if (world_create(&s->w, NULL) != 0)
    return -1;
  s->w.opts.max_transfers = max_transfers;
  if (world_init(&s->w, WORLD_CLIENT_NIC) != hipObjSuccess)
    return -1;
  if (sim_peer_create(&s->peer, &s->w.plat, NULL, OBJ_SIZE) != 0)
    return -1;
  for (size_t i = 0; i < OBJ_SIZE; i++)
    s->peer.object[i] = (uint8_t)(i * 31 + 7);
  s->slice = 16384;
  s->buf = calloc(slices, s->slice);
  return hipObjBufRegisterHost(s->buf, slices * s->slice).opError == hipObjSuccess ? 0 : -1;
}

static void free_shared(struct shared *s)
{
  hipObjShutdown();
  sim_peer_destroy(&s->peer);
  world_destroy(&s->w);
  free(s->buf);
}

struct worker {
  struct shared *s;
  unsigned id, rounds;
  pthread_t t;
};

static void *worker_main(void *arg)
{
  struct worker *wk = arg;
  struct shared *s = wk->s;
  for (unsigned i = 0; i < wk->rounds && !atomic_load(&s->stop); i++) {
    uint64_t obj_off = ((uint64_t)wk->id * 977 + i * 131) % (OBJ_SIZE - s->slice);
    struct sim_request r;
    sim_request_init(&r, &s->peer, HIPOBJ_RDMA_OP_GET, obj_off, s->slice);
    hipObjOpError_t e = hipObjGet(NULL, s->buf, s->slice, (off_t)(wk->id * s->slice),
                                  &sim_ops, &r).opError;
    if (e == hipObjSuccess &&
        memcmp(s->buf + wk->id * s->slice, s->peer.object + obj_off, s->slice) == 0)
      atomic_fetch_add(&s->ok, 1);
    else if (e == hipObjNotInitialized)
      atomic_fetch_add(&s->not_init, 1);
    else
      atomic_fetch_add(&s->failed, 1);
  }
  return NULL;
}

static void many_threads_share_a_small_pool(void **state)
{
  (void)state;
  enum { THREADS = 8, ROUNDS = 25 };
  struct shared s;
  assert_int_equal(make_shared(&s, 3, THREADS), 0);
  struct worker wk[THREADS];
  for (unsigned i = 0; i < THREADS; i++) {
    wk[i] = (struct worker){&s, i, ROUNDS, 0};
    pthread_create(&wk[i].t, NULL, worker_main, &wk[i]);
  }
  for (unsigned i = 0; i < THREADS; i++)
    pthread_join(wk[i].t, NULL);
  assert_int_equal(atomic_load(&s.ok), THREADS * ROUNDS);
  assert_int_equal(atomic_load(&s.failed), 0);
  struct ho_instance *inst = ho_instance_get();
  /* One peer, three leases: the three connections are made once and
   * ridden by every later transfer. */
  struct ho_pool_stats ps;
  ho_pool_get_stats(inst->pool, &ps);
  assert_int_equal(ps.live, 3);
  assert_int_equal(ps.idle, 3);
  assert_int_equal(ps.connections_made, 3);
  assert_int_equal(ps.connections_reused, THREADS * ROUNDS - 3);
  assert_int_equal(ps.retired_failure + ps.retired_replaced, 0);
  ho_instance_put(inst);
  free_shared(&s);
}

/* A callback that starts another transfer while the only connection is its
 * own caller's: hipObjBusy, not a deadlock. */
static void nested_from_callback(struct sim_request *r)
{
  struct shared *s = r->user;
  struct sim_request inner;
  sim_request_init(&inner, &s->peer, HIPOBJ_RDMA_OP_GET, 0, 64);
  hipObjOpError_t e =
      hipObjGet(NULL, s->buf, 64, (off_t)s->slice, &sim_ops, &inner).opError;
  r->user = (void *)(intptr_t)e;
}

static void callback_reentry_is_busy(void **state)
{
  (void)state;
  struct shared s;
  assert_int_equal(make_shared(&s, 1, 2), 0);
  struct sim_request r;
  sim_request_init(&r, &s.peer, HIPOBJ_RDMA_OP_GET, 0, 64);
  r.on_send = nested_from_callback;
  r.user = &s;
  assert_int_equal(hipObjGet(NULL, s.buf, 64, 0, &sim_ops, &r).opError, hipObjSuccess);
  assert_int_equal((intptr_t)r.user, hipObjBusy);
  /* A buffer a transfer is using cannot be deregistered from its callback. */
  free_shared(&s);
}

static atomic_bool gate_open;

static void hold_at_gate(struct sim_request *r)
{
  (void)r;
  while (!atomic_load(&gate_open))
    sleep_ms(1);
}

struct blocked {
  struct shared *s;
  hipObjOpError_t result;
  bool hold;
  pthread_t t;
};

static void *blocked_main(void *arg)
{
  struct blocked *b = arg;
  struct sim_request r;
  sim_request_init(&r, &b->s->peer, HIPOBJ_RDMA_OP_GET, 0, 64);
  if (b->hold)
    r.on_send = hold_at_gate;
  b->result = hipObjGet(NULL, b->s->buf, 64, b->hold ? 0 : (off_t)b->s->slice,
                        &sim_ops, &r).opError;
  return NULL;
}

/* Shutdown wakes a transfer waiting for a connection with
 * hipObjNotInitialized; the transfer in progress finishes on the old
 * instance; init works again afterwards. */
static void shutdown_wakes_waiters(void **state)
{
  (void)state;
  struct shared s;
  assert_int_equal(make_shared(&s, 1, 2), 0);
  atomic_store(&gate_open, false);
  struct blocked holder = {&s, -1, true, 0}, waiter = {&s, -1, false, 0};
  pthread_create(&holder.t, NULL, blocked_main, &holder);
  sleep_ms(50);
  pthread_create(&waiter.t, NULL, blocked_main, &waiter);
  sleep_ms(50);
  assert_int_equal(hipObjShutdown().opError, hipObjSuccess);
  pthread_join(waiter.t, NULL);
  assert_int_equal(waiter.result, hipObjNotInitialized);
  atomic_store(&gate_open, true);
  pthread_join(holder.t, NULL);
  assert_int_equal(holder.result, hipObjSuccess);
  assert_memory_equal(s.buf, s.peer.object, 64);
  /* Init again: a new instance, with the old one gone. */
  assert_int_equal(world_init(&s.w, WORLD_CLIENT_NIC), hipObjSuccess);
  assert_int_equal(hipObjBufRegisterHost(s.buf, 2 * s.slice).opError, hipObjSuccess);
  struct sim_request r;
  sim_request_init(&r, &s.peer, HIPOBJ_RDMA_OP_GET, 99, 512);
  assert_int_equal(hipObjGet(NULL, s.buf, 512, 0, &sim_ops, &r).opError, hipObjSuccess);
  assert_memory_equal(s.buf, s.peer.object + 99, 512);
  free_shared(&s);
}

static void shutdown_while_transfers_run(void **state)
{
  (void)state;
  enum { THREADS = 6 };
  struct shared s;
  assert_int_equal(make_shared(&s, 2, THREADS), 0);
  struct worker wk[THREADS];
  for (unsigned i = 0; i < THREADS; i++) {
    wk[i] = (struct worker){&s, i, 100000, 0};
    pthread_create(&wk[i].t, NULL, worker_main, &wk[i]);
  }
  sleep_ms(100);
  assert_int_equal(hipObjShutdown().opError, hipObjSuccess);
  sleep_ms(20);
  atomic_store(&s.stop, true);
  for (unsigned i = 0; i < THREADS; i++)
    pthread_join(wk[i].t, NULL);
  assert_true(atomic_load(&s.ok) > 0);
  assert_true(atomic_load(&s.not_init) > 0);
  assert_int_equal(atomic_load(&s.failed), 0);
  assert_int_equal(world_init(&s.w, WORLD_CLIENT_NIC), hipObjSuccess);
  free_shared(&s);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(before_init),
      cmocka_unit_test(init_choices_and_failures),
      cmocka_unit_test(init_fails_cleanly_at_every_step),
      cmocka_unit_test(registration_limits),
      cmocka_unit_test(many_threads_share_a_small_pool),
      cmocka_unit_test(callback_reentry_is_busy),
      cmocka_unit_test(shutdown_wakes_waiters),
      cmocka_unit_test(shutdown_while_transfers_run),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
