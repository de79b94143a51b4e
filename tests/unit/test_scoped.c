/* SPDX-License-Identifier: MIT */
/* Scoped tokens (docs/protocol.md, section 2) and the hostile-server suite:
 * a server that shifts the address, moves more than the length, serves a
 * GET token as a PUT, writes after final, replays an old token on a later
 * connection, or never sends final. With memory windows the NIC refuses,
 * the transfer fails and no byte outside the range changes; without them
 * the protocol's checks fail what they can see. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/clock.h"
#include "fakes/fake_verbs.h"
#include "fakes/hostile_peer.h"
#include "fakes/sim_peer.h"
#include "fakes/world.h"
#include "hipobj.h"
#include "instance.h"
#include "rdma/protocol.h"
#include "rdma/transport.h"

#define BUF_SIZE (64u << 10)
#define XFER 8192u
#define OFF 16384u /* the transfer's place in the buffer: room either side */

/* ---- fixture ------------------------------------------------------------- */

struct fixture {
  struct world w;
  struct sim_peer peer;
  struct hostile h;
  uint8_t *buf;
};

static struct fixture *make(bool windows_on_client, bool scoped_option,
                            bool require)
{
  struct fixture *f = calloc(1, sizeof *f);
  if (!f || world_create(&f->w, NULL) != 0)
    return NULL;
  if (!windows_on_client) {
    struct fake_device_cfg cfg;
    fake_device_cfg_default(&cfg);
    cfg.mem_windows = false;
    if (world_add_nic_cfg(&f->w, "fake_old0", "0000:42:00.0", &cfg) != 0)
      return NULL;
  }
  f->w.opts.transfer_timeout_ms = 300;
  f->w.opts.scoped_tokens = scoped_option;
  f->w.opts.require_scoped_tokens = require;
  return f;
}

static int start(struct fixture *f, const char *nic)
{
  if (world_init(&f->w, nic) != hipObjSuccess)
    return -1;
  if (sim_peer_create(&f->peer, &f->w.plat, NULL, BUF_SIZE) != 0)
    return -1;
  if (hostile_open(&f->h, &fake_verbs_ops, &f->w.topo, WORLD_SERVER_NIC) != 0)
    return -1;
  f->buf = aligned_alloc(4096, BUF_SIZE);
  if (!f->buf ||
      hipObjBufRegisterHost(f->buf, BUF_SIZE).opError != hipObjSuccess)
    return -1;
  return 0;
}

static int setup_windows(void **state)
{
  struct fixture *f = make(true, true, false);
  *state = f;
  return f ? start(f, WORLD_CLIENT_NIC) : -1;
}

static int setup_mr(void **state)
{
  struct fixture *f = make(true, false, false);
  *state = f;
  return f ? start(f, WORLD_CLIENT_NIC) : -1;
}

static int teardown(void **state)
{
  struct fixture *f = *state;
  hipObjBufDeregister(f->buf);
  hipObjShutdown();
  hostile_close(&f->h);
  sim_peer_destroy(&f->peer);
  int live = fake_fabric_live_objects();
  world_destroy(&f->w);
  free(f->buf);
  free(f);
  return live == 0 ? 0 : -1;
}

static uint32_t token_scope(void)
{
  hipObjInfo_t i;
  memset(&i, 0, sizeof i);
  i.size = sizeof i;
  hipObjGetInfo(&i);
  return i.tokenScope;
}

static struct fake_dev_stats stats(const char *dev)
{
  struct fake_dev_stats s;
  fake_device_stats(dev, &s);
  return s;
}

/* One GET of XFER bytes at OFF through the hostile server. */
static hipObjOpError_t hget(struct fixture *f, enum attack a, bool honest_op)
{
  return hostile_get(&f->h, f->buf, XFER, OFF, a, honest_op);
}

/* No byte outside [OFF, OFF + XFER) changed; inside, only the server's. */
static void outside_untouched(const struct fixture *f)
{
  for (unsigned i = 0; i < BUF_SIZE; i++)
    if (i < OFF || i >= OFF + XFER)
      assert_int_equal(f->buf[i], 0xee);
}

/* ---- scoped tokens with the reference engine ------------------------------ */

static void windows_scope_every_transfer(void **state)
{
  struct fixture *f = *state;
  assert_int_equal(token_scope(), hipObjTokenScopeWindow);
  struct ho_instance *inst = ho_instance_get();
  struct ho_buf *b = ho_buffers_find(inst->buffers, f->buf);
  assert_int_equal(fake_mr_access(b->mr),
                   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
  ho_buf_put(b);
  ho_instance_put(inst);
  for (unsigned i = 0; i < 5; i++) {
    struct fake_dev_stats s0 = stats(WORLD_CLIENT_NIC);
    struct sim_request r;
    memset(f->buf, 0xee, BUF_SIZE);
    for (unsigned j = 0; j < XFER; j++)
      f->peer.object[j] = (uint8_t)(j + i);
    sim_request_init(&r, &f->peer, HIPOBJ_RDMA_OP_GET, 0, XFER);
    assert_int_equal(hipObjGet(NULL, f->buf, XFER, OFF, &sim_ops, &r).opError,
                     hipObjSuccess);
    assert_memory_equal(f->buf + OFF, f->peer.object, XFER);
    outside_untouched(f);
    sim_request_init(&r, &f->peer, HIPOBJ_RDMA_OP_PUT, XFER, XFER);
    assert_int_equal(hipObjPut(NULL, f->buf, XFER, OFF, &sim_ops, &r).opError,
                     hipObjSuccess);
    assert_memory_equal(f->peer.object + XFER, f->buf + OFF, XFER);
    struct fake_dev_stats s1 = stats(WORLD_CLIENT_NIC);
    /* A window bound per transfer, and closed by the client (a local
     * invalidation) before the call returns: none stays open. */
    assert_int_equal(s1.mw_binds - s0.mw_binds, 2);
    assert_int_equal(s1.mw_invalidations - s0.mw_invalidations, 2);
    assert_int_equal(fake_mw_bound_count(WORLD_CLIENT_NIC), 0);
  }
  hipObjInfo_t info;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  hipObjGetInfo(&info);
  assert_int_equal(info.windowsBound, 10);
  assert_int_equal(info.connectionsReused, 9); /* connections still last */
}

/* A version-1 server: the same window, one connection per transfer. */
static void version1_server_window_closed_by_client(void **state)
{
  struct fixture *f = *state;
  struct sim_peer v1;
  struct ho_engine_config cfg = {.fault_v1 = true};
  assert_int_equal(sim_peer_create(&v1, &f->w.plat, &cfg, XFER), 0);
  struct sim_request r;
  sim_request_init(&r, &v1, HIPOBJ_RDMA_OP_GET, 0, XFER);
  struct fake_dev_stats s0 = stats(WORLD_CLIENT_NIC);
  assert_int_equal(hipObjGet(NULL, f->buf, XFER, OFF, &sim_ops, &r).opError,
                   hipObjSuccess);
  struct fake_dev_stats s1 = stats(WORLD_CLIENT_NIC);
  assert_int_equal(s1.mw_invalidations - s0.mw_invalidations, 1);
  assert_int_equal(fake_mw_bound_count(WORLD_CLIENT_NIC), 0);
  sim_peer_destroy(&v1);
}

/* Every attempt ends without a final (the server retires the connection):
 * the transfer fails; its windows are freed. */
static void no_final_frees_the_window(void **state)
{
  struct fixture *f = *state;
  struct sim_peer mute;
  struct ho_engine_config cfg = {.fault_skip_final = 100};
  assert_int_equal(sim_peer_create(&mute, &f->w.plat, &cfg, XFER), 0);
  struct sim_request r;
  sim_request_init(&r, &mute, HIPOBJ_RDMA_OP_GET, 0, XFER);
  assert_int_equal(hipObjGet(NULL, f->buf, XFER, OFF, &sim_ops, &r).opError,
                   hipObjRdmaError);
  assert_int_equal(fake_mw_bound_count(WORLD_CLIENT_NIC), 0);
  sim_peer_destroy(&mute);
}

/* ---- the hostile server, with windows: the NIC refuses ------------------- */

static void refused(struct fixture *f, enum attack a)
{
  memset(f->buf, 0xee, BUF_SIZE);
  uint64_t denied = stats(WORLD_CLIENT_NIC).remote_access_errors;
  assert_int_not_equal(hget(f, a, false), hipObjSuccess);
  assert_int_equal(f->h.attack_status, IBV_WC_REM_ACCESS_ERR);
  assert_true(stats(WORLD_CLIENT_NIC).remote_access_errors > denied);
  outside_untouched(f);
  for (unsigned i = OFF; i < OFF + XFER; i++)
    assert_int_equal(f->buf[i], 0xee); /* nothing at all landed */
  assert_int_equal(fake_mw_bound_count(WORLD_CLIENT_NIC), 0);
}

static void hostile_shift_refused(void **state) { refused(*state, A_SHIFT); }
static void hostile_longer_refused(void **state) { refused(*state, A_LONGER); }
static void hostile_get_as_put_refused(void **state) { refused(*state, A_AS_PUT); }

static void hostile_write_after_final_refused(void **state)
{
  struct fixture *f = *state;
  memset(f->buf, 0xee, BUF_SIZE);
  assert_int_equal(hget(f, A_AFTER_FINAL, true), hipObjSuccess);
  /* The payload is the server's first write; the late one (0x5a), after
   * hipObjGet returned, was refused and moved nothing. */
  for (unsigned i = 0; i < XFER; i++)
    assert_int_equal(f->buf[OFF + i], (uint8_t)(i * 7 + 1));
  assert_int_equal(f->h.late_status, IBV_WC_REM_ACCESS_ERR);
  outside_untouched(f);
}

/* A request refused after the transfer returned moves the client's kept
 * QP to error with no completion to tell it (the root cause of t21's
 * flushed window binds): the next transfer finds it before its token
 * proposes the connection, and asks for a new one in the same call. */
static void broken_kept_connection_replaced(void **state)
{
  struct fixture *f = *state;
  hipObjInfo_t i0, i1;
  memset(&i0, 0, sizeof i0);
  i0.size = sizeof i0;
  i1 = i0;
  memset(f->buf, 0xee, BUF_SIZE);
  assert_int_equal(hget(f, A_AFTER_FINAL, true), hipObjSuccess);
  assert_int_equal(f->h.late_status, IBV_WC_REM_ACCESS_ERR);
  hipObjGetInfo(&i0);
  assert_int_equal(hget(f, A_NONE, true), hipObjSuccess);
  hipObjGetInfo(&i1);
  assert_int_equal(i1.keptBroken - i0.keptBroken, 1);
  assert_int_equal(i1.retriesFabric + i1.retriesKeptBroken,
                   i0.retriesFabric + i0.retriesKeptBroken); /* no retry */
  outside_untouched(f);
}

static void hostile_replay_refused(void **state)
{
  struct fixture *f = *state;
  memset(f->buf, 0xee, BUF_SIZE);
  assert_int_equal(hget(f, A_NONE, true), hipObjSuccess);
  assert_int_equal(f->h.attack_status, IBV_WC_SUCCESS);
  /* The next transfer's server writes under the first token. */
  refused(f, A_REPLAY);
}

static void hostile_no_final(void **state)
{
  struct fixture *f = *state;
  memset(f->buf, 0xee, BUF_SIZE);
  assert_int_equal(hget(f, A_NO_FINAL, true), hipObjRdmaError);
  assert_int_equal(f->h.attack_status, IBV_WC_SUCCESS); /* in range */
  uint8_t copy[XFER];
  memcpy(copy, f->buf + OFF, XFER);
  assert_int_not_equal(f->h.late_status, IBV_WC_SUCCESS);
  assert_memory_equal(f->buf + OFF, copy, XFER);
  outside_untouched(f);
  assert_int_equal(fake_mw_bound_count(WORLD_CLIENT_NIC), 0);
}

/* ---- the hostile server against PUTs (R-1) ----------------------------- */

static hipObjOpError_t hput(struct fixture *f, enum attack a)
{
  return hostile_put(&f->h, f->buf, XFER, OFF, a);
}

/* The client's buffer: the payload in [OFF, OFF + XFER), 0xee around. */
static void fill_put_source(struct fixture *f)
{
  memset(f->buf, 0xee, BUF_SIZE);
  for (unsigned i = 0; i < XFER; i++)
    f->buf[OFF + i] = (uint8_t)(i * 3 + 5);
}

static void put_source_untouched(const struct fixture *f)
{
  outside_untouched(f);
  for (unsigned i = 0; i < XFER; i++)
    assert_int_equal(f->buf[OFF + i], (uint8_t)(i * 3 + 5));
}

/* With windows every attack on a PUT is refused by the NIC. */
static void hostile_put_refused(void **state)
{
  struct fixture *f = *state;
  const enum attack as[] = {A_PUT_LONGER, A_PUT_SHIFT, A_PUT_WRITE};
  for (unsigned k = 0; k < 3; k++) {
    fill_put_source(f);
    uint64_t denied = stats(WORLD_CLIENT_NIC).remote_access_errors;
    hput(f, as[k]);
    assert_int_equal(f->h.attack_status, IBV_WC_REM_ACCESS_ERR);
    assert_true(stats(WORLD_CLIENT_NIC).remote_access_errors > denied);
    put_source_untouched(f);
    assert_int_equal(fake_mw_bound_count(WORLD_CLIENT_NIC), 0);
  }
  fill_put_source(f);
  assert_int_equal(hput(f, A_PUT_AFTER_FINAL), hipObjSuccess);
  assert_int_equal(f->h.attack_status, IBV_WC_SUCCESS);
  assert_memory_equal(f->h.mem, f->buf + OFF, XFER);
  assert_int_equal(f->h.late_status, IBV_WC_REM_ACCESS_ERR);
}

/* Without windows (the fallback) the QP grants only the transfer's
 * direction while it runs, and nothing between transfers: a write into a
 * PUT's buffer, a read during a GET, and anything after the transfer
 * returned are refused by the NIC. What stays exposed is the registered
 * buffer in the transfer's direction (docs/memory-windows.md). */
static void fallback_grants_one_direction(void **state)
{
  struct fixture *f = *state;
  assert_int_equal(token_scope(), hipObjTokenScopeBuffer);
  fill_put_source(f);
  assert_int_equal(hput(f, A_NONE), hipObjSuccess);
  assert_memory_equal(f->h.mem, f->buf + OFF, XFER);
  fill_put_source(f);
  hput(f, A_PUT_WRITE);
  assert_int_equal(f->h.attack_status, IBV_WC_REM_ACCESS_ERR);
  put_source_untouched(f);
  fill_put_source(f);
  assert_int_equal(hput(f, A_PUT_AFTER_FINAL), hipObjSuccess);
  assert_int_equal(f->h.late_status, IBV_WC_REM_ACCESS_ERR);
  memset(f->buf, 0xee, BUF_SIZE);
  hget(f, A_AS_PUT, false);
  assert_int_equal(f->h.attack_status, IBV_WC_REM_ACCESS_ERR);
  memset(f->buf, 0xee, BUF_SIZE);
  assert_int_equal(hget(f, A_AFTER_FINAL, true), hipObjSuccess);
  assert_int_equal(f->h.late_status, IBV_WC_REM_ACCESS_ERR);
  for (unsigned i = 0; i < XFER; i++)
    assert_int_equal(f->buf[OFF + i], (uint8_t)(i * 7 + 1));
  /* the documented exposure: the buffer around the range, in the
   * transfer's direction, while it runs */
  fill_put_source(f);
  assert_int_equal(hput(f, A_PUT_SHIFT), hipObjSuccess);
  assert_int_equal(f->h.attack_status, IBV_WC_SUCCESS);
  assert_int_equal(f->h.mem[0], 0xee); /* read from before the range */
}

/* ---- the hostile server, without windows: the protocol's checks ---------- */

static void mr_protocol_checks(void **state)
{
  struct fixture *f = *state;
  assert_int_equal(token_scope(), hipObjTokenScopeBuffer);
  /* A final that says what the server did fails the transfer: */
  assert_int_equal(hget(f, A_AS_PUT, true), hipObjRdmaError); /* op */
  assert_int_equal(hget(f, A_LONGER, true), hipObjRdmaError); /* count */
  assert_int_equal(hget(f, A_NO_FINAL, true), hipObjRdmaError);
  /* Without windows the NIC lets a lying server through: the reason for
   * scoped tokens (documented in docs/protocol.md, section 2). */
  memset(f->buf, 0xee, BUF_SIZE);
  assert_int_equal(hget(f, A_SHIFT, false), hipObjSuccess);
  assert_int_not_equal(f->buf[OFF - 4096], 0xee);
}

/* ---- the fallback ----------------------------------------------------------- */

static int setup_no_windows(void **state)
{
  struct fixture *f = make(false, true, false);
  *state = f;
  return f ? start(f, "fake_old0") : -1;
}

static void fallback_without_windows(void **state)
{
  struct fixture *f = *state;
  assert_int_equal(token_scope(), hipObjTokenScopeBuffer);
  struct sim_request r;
  sim_request_init(&r, &f->peer, HIPOBJ_RDMA_OP_GET, 0, XFER);
  assert_int_equal(hipObjGet(NULL, f->buf, XFER, OFF, &sim_ops, &r).opError,
                   hipObjSuccess);
  assert_memory_equal(f->buf + OFF, f->peer.object, XFER);
  assert_int_equal(stats("fake_old0").mw_binds, 0);
}

static void require_scoped_refuses_fallback(void **state)
{
  (void)state;
  struct fixture *f = make(false, true, true);
  assert_non_null(f);
  assert_int_equal(world_init(&f->w, "fake_old0"), hipObjNotSupported);
  assert_int_equal(token_scope(), hipObjTokenScopeNone);
  /* The same NIC with windows is fine under the requirement. */
  assert_int_equal(world_init(&f->w, WORLD_CLIENT_NIC), hipObjSuccess);
  assert_int_equal(token_scope(), hipObjTokenScopeWindow);
  hipObjShutdown();
  world_destroy(&f->w);
  free(f);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(windows_scope_every_transfer, setup_windows, teardown),
      cmocka_unit_test_setup_teardown(version1_server_window_closed_by_client,
                                      setup_windows, teardown),
      cmocka_unit_test_setup_teardown(no_final_frees_the_window, setup_windows, teardown),
      cmocka_unit_test_setup_teardown(hostile_shift_refused, setup_windows, teardown),
      cmocka_unit_test_setup_teardown(hostile_longer_refused, setup_windows, teardown),
      cmocka_unit_test_setup_teardown(hostile_get_as_put_refused, setup_windows, teardown),
      cmocka_unit_test_setup_teardown(hostile_write_after_final_refused, setup_windows,
                                      teardown),
      cmocka_unit_test_setup_teardown(hostile_replay_refused, setup_windows, teardown),
      cmocka_unit_test_setup_teardown(broken_kept_connection_replaced, setup_windows,
                                      teardown),
      cmocka_unit_test_setup_teardown(hostile_no_final, setup_windows, teardown),
      cmocka_unit_test_setup_teardown(mr_protocol_checks, setup_mr, teardown),
      cmocka_unit_test_setup_teardown(fallback_without_windows, setup_no_windows, teardown),
      cmocka_unit_test_setup_teardown(hostile_put_refused, setup_windows, teardown),
      cmocka_unit_test_setup_teardown(fallback_grants_one_direction, setup_no_windows,
                                      teardown),
      cmocka_unit_test_setup_teardown(fallback_grants_one_direction, setup_mr, teardown),
      cmocka_unit_test(require_scoped_refuses_fallback),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
