/* SPDX-License-Identifier: MIT */
/* GET and PUT end to end on the simulated RC fabric: the library as client,
 * the reference engine as server, bytes and paths verified. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>

#include <cmocka.h>

#include "fakes/fake_verbs.h"
#include "fakes/sim_peer.h"
#include "fakes/world.h"
#include "hipobj.h"
#include "instance.h"
#include "common/clock.h"
#include "rdma/transport.h"

#define BUF_SIZE (3u << 20)
#define OBJ_SIZE (2u << 20)

struct fixture {
  struct world w;
  struct sim_peer peer;
  uint8_t *buf;
};

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (uint8_t)((i * 2654435761u + seed) >> 13);
}

static int setup(void **state)
{
  struct fixture *f = calloc(1, sizeof *f);
  if (!f || world_create(&f->w, NULL) != 0)
    return -1;
  if (world_init(&f->w, NULL) != hipObjSuccess &&
      world_init(&f->w, WORLD_CLIENT_NIC) != hipObjSuccess)
    return -1;
  if (sim_peer_create(&f->peer, &f->w.plat, NULL, OBJ_SIZE) != 0)
    return -1;
  fill(f->peer.object, OBJ_SIZE, 7);
  f->buf = aligned_alloc(4096, BUF_SIZE);
  memset(f->buf, 0xee, BUF_SIZE);
  if (hipObjBufRegisterHost(f->buf, BUF_SIZE).opError != hipObjSuccess)
    return -1;
  *state = f;
  return 0;
}

/* As setup, with a pool wait of 200 ms. */
static int setup_short_wait(void **state)
{
  struct fixture *f = calloc(1, sizeof *f);
  if (!f || world_create(&f->w, NULL) != 0)
    return -1;
  f->w.opts.wait_timeout_ms = 200;
  if (world_init(&f->w, NULL) != hipObjSuccess &&
      world_init(&f->w, WORLD_CLIENT_NIC) != hipObjSuccess)
    return -1;
  if (sim_peer_create(&f->peer, &f->w.plat, NULL, OBJ_SIZE) != 0)
    return -1;
  fill(f->peer.object, OBJ_SIZE, 7);
  f->buf = aligned_alloc(4096, BUF_SIZE);
  if (hipObjBufRegisterHost(f->buf, BUF_SIZE).opError != hipObjSuccess)
    return -1;
  *state = f;
  return 0;
}

/* The fixture of setup, with the world's options set by tune first. */
static int setup_tuned(void **state, void (*tune)(struct world *w, unsigned a,
                                                  unsigned b),
                       unsigned ta, unsigned tb)
{
  struct fixture *f = calloc(1, sizeof *f);
  if (!f || world_create(&f->w, NULL) != 0)
    return -1;
  tune(&f->w, ta, tb);
  if (world_init(&f->w, NULL) != hipObjSuccess &&
      world_init(&f->w, WORLD_CLIENT_NIC) != hipObjSuccess)
    return -1;
  if (sim_peer_create(&f->peer, &f->w.plat, NULL, OBJ_SIZE) != 0)
    return -1;
  fill(f->peer.object, OBJ_SIZE, 7);
  f->buf = aligned_alloc(4096, BUF_SIZE);
  if (hipObjBufRegisterHost(f->buf, BUF_SIZE).opError != hipObjSuccess)
    return -1;
  *state = f;
  return 0;
}

/* A stall bound of 200 ms and a deadline of timeout_ms, probes every
 * probe_ms (0: none). */
static void tune_stall(struct world *w, unsigned timeout_ms, unsigned probe_ms)
{
  w->opts.transfer_timeout_ms = timeout_ms;
  w->opts.stall_timeout_ms = 200;
  w->opts.probe_interval_ms = probe_ms; /* 0: the stall bound alone */
}

/* As setup, with a stall bound of 200 ms and a deadline of 3 s (or
 * 600 ms: setup_stall_short), probes every probe_ms (0: none). */
static int setup_stall_with(void **state, unsigned timeout_ms,
                            unsigned probe_ms)
{
  return setup_tuned(state, tune_stall, timeout_ms, probe_ms);
}

static int setup_stall(void **state) { return setup_stall_with(state, 3000, 0); }
static int setup_stall_short(void **state) { return setup_stall_with(state, 600, 0); }
static int setup_probe(void **state) { return setup_stall_with(state, 3000, 200); }

/* A slow fabric: the world's PSN mode (query_qp reports the live receive
 * PSN, which each WRITE and each READ request moves), answer first on
 * every transfer (the client waits for final), a deadline of 300 ms plus
 * 100 ms a MB, and the deadline's limit HIPOBJ_TRANSFER_MAX_MS = max_ms. */
static void tune_progress(struct world *w, unsigned max_ms, unsigned unused)
{
  (void)unused;
  w->opts.transfer_timeout_ms = 300;
  w->opts.transfer_max_ms = max_ms;
  w->opts.data_first = false;
}

static int setup_progress_with(void **state, unsigned max_ms)
{
  return setup_tuned(state, tune_progress, max_ms, 0);
}

static int setup_progress(void **state) { return setup_progress_with(state, 20000); }
static int setup_progress_capped(void **state) { return setup_progress_with(state, 900); }

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

static hipObjOpError_t get(struct fixture *f, uint64_t obj_off, size_t size,
                           off_t buf_off, enum sim_mode mode)
{
  struct sim_request r;
  sim_request_init(&r, &f->peer, HIPOBJ_RDMA_OP_GET, obj_off, size);
  r.mode = mode;
  return hipObjGet(NULL, f->buf, size, buf_off, &sim_ops, &r).opError;
}

static hipObjOpError_t put(struct fixture *f, uint64_t obj_off, size_t size,
                           off_t buf_off, enum sim_mode mode)
{
  struct sim_request r;
  sim_request_init(&r, &f->peer, HIPOBJ_RDMA_OP_PUT, obj_off, size);
  r.mode = mode;
  return hipObjPut(NULL, f->buf, size, buf_off, &sim_ops, &r).opError;
}

static void get_sizes_and_offsets(void **state)
{
  struct fixture *f = *state;
  static const size_t sizes[] = {1, 2, 1023, 1024, 1025, 4096, 65535,
                                 65536, 65537, 1u << 20, OBJ_SIZE};
  static const off_t offs[] = {0, 1, 4095, 1 << 20};
  struct fake_dev_stats before, after;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    for (size_t j = 0; j < sizeof offs / sizeof offs[0]; j++) {
      size_t n = sizes[i];
      uint64_t obj_off = (OBJ_SIZE - n) / 3;
      memset(f->buf, 0xee, BUF_SIZE);
      fake_device_stats(WORLD_SERVER_NIC, &before);
      assert_int_equal(get(f, obj_off, n, offs[j], SIM_NORMAL), hipObjSuccess);
      fake_device_stats(WORLD_SERVER_NIC, &after);
      /* The bytes arrived, by RDMA WRITE from the server's NIC ... */
      assert_memory_equal(f->buf + offs[j], f->peer.object + obj_off, n);
      assert_true(after.bytes_written - before.bytes_written == n);
      /* ... and nothing around them was touched. */
      if (offs[j] > 0)
        assert_int_equal(f->buf[offs[j] - 1], 0xee);
      if ((size_t)offs[j] + n < BUF_SIZE)
        assert_int_equal(f->buf[offs[j] + n], 0xee);
    }
  }
}

static void put_sizes_and_offsets(void **state)
{
  struct fixture *f = *state;
  static const size_t sizes[] = {1, 1025, 65536, 65537, (1u << 20) + 3};
  struct fake_dev_stats before, after;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t n = sizes[i];
    off_t off = (off_t)(i * 4099);
    fill(f->buf + off, n, (uint32_t)i + 100);
    memset(f->peer.object, 0, OBJ_SIZE);
    fake_device_stats(WORLD_SERVER_NIC, &before);
    assert_int_equal(put(f, 17, n, off, SIM_NORMAL), hipObjSuccess);
    fake_device_stats(WORLD_SERVER_NIC, &after);
    assert_memory_equal(f->peer.object + 17, f->buf + off, n);
    assert_int_equal(f->peer.object[16], 0);
    assert_int_equal(f->peer.object[17 + n], 0);
    assert_true(after.bytes_read - before.bytes_read == n); /* RDMA READ */
  }
  assert_true(atomic_load(&f->peer.puts_committed) == 5);
}

static void puts_keep_several_reads_in_flight(void **state)
{
  struct fixture *f = *state;
  fill(f->buf, OBJ_SIZE, 3);
  assert_int_equal(put(f, 0, OBJ_SIZE, 0, SIM_NORMAL), hipObjSuccess);
  struct ho_engine_stats st;
  ho_engine_get_stats(f->peer.engine, &st);
  assert_true(st.max_reads_in_flight > 1);
  assert_memory_equal(f->peer.object, f->buf, OBJ_SIZE);
}

static void bad_arguments(void **state)
{
  struct fixture *f = *state;
  struct sim_request r;
  sim_request_init(&r, &f->peer, HIPOBJ_RDMA_OP_GET, 0, 16);
  assert_int_equal(get(f, 0, 0, 0, SIM_NORMAL), hipObjInvalidValue);
  assert_int_equal(hipObjGet(NULL, f->buf, 16, BUF_SIZE - 15, &sim_ops, &r).opError,
                   hipObjInvalidValue);
  assert_int_equal(hipObjGet(NULL, f->buf, SIZE_MAX, 16, &sim_ops, &r).opError,
                   hipObjInvalidValue);
  assert_int_equal(hipObjGet(NULL, f->buf, 16, (off_t)INT64_MAX, &sim_ops, &r).opError,
                   hipObjInvalidValue);
  assert_int_equal(hipObjGet(NULL, f->buf, 16, -1, &sim_ops, &r).opError,
                   hipObjInvalidValue);
  assert_int_equal(hipObjGet(NULL, f->buf, 16, 0, NULL, &r).opError, hipObjInvalidValue);
  hipObjOps_t half = {sim_ops.sendRequest, NULL};
  assert_int_equal(hipObjGet(NULL, f->buf, 16, 0, &half, &r).opError, hipObjInvalidValue);
  assert_int_equal(hipObjGet(NULL, NULL, 16, 0, &sim_ops, &r).opError, hipObjInvalidValue);
  assert_int_equal(hipObjGet(NULL, f->buf + 1, 16, 0, &sim_ops, &r).opError,
                   hipObjBufNotRegistered);
  assert_int_equal(hipObjPut(NULL, f->buf + 1, 16, 0, &sim_ops, &r).opError,
                   hipObjBufNotRegistered);
  /* The exact end of the buffer is fine. */
  assert_int_equal(get(f, 0, 16, BUF_SIZE - 16, SIM_NORMAL), hipObjSuccess);
}

static void s3_side_failures(void **state)
{
  struct fixture *f = *state;
  static const enum sim_mode modes[] = {SIM_DECLINE, SIM_NO_REPLY_HEADER,
                                        SIM_PLAIN_OK, SIM_MALFORMED_REPLY,
                                        SIM_SEND_FAILS, SIM_LONG_REPLY};
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
    memset(f->buf, 0xee, 4096);
    assert_int_equal(get(f, 0, 4096, 0, modes[i]), hipObjS3Error);
    assert_int_equal(f->buf[0], 0xee); /* nothing moved */
    assert_int_equal(put(f, 0, 4096, 0, modes[i]), hipObjS3Error);
  }
  /* The connections are clean afterwards. */
  assert_int_equal(get(f, 0, 4096, 0, SIM_NORMAL), hipObjSuccess);
  assert_memory_equal(f->buf, f->peer.object, 4096);
}

/* Rewrites one field of the server token in the engine's reply. */
enum token_field { TF_TRANSPORT, TF_QPN_TOP, TF_PORT, TF_LID, TF_OFFER };
static enum token_field tampered_field;

static void tamper_reply(struct sim_request *r)
{
  struct ho_reply rep;
  assert_true(ho_reply_parse(r->reply, strlen(r->reply), &rep));
  switch (tampered_field) {
  case TF_TRANSPORT: rep.peer.transport = HO_TRANSPORT_DC; break;
  case TF_QPN_TOP: rep.peer.qpn |= 0x01000000u; break;
  case TF_PORT: rep.peer.port = 0; break;
  case TF_LID: rep.peer.lid = 5; break; /* an InfiniBand LID on RoCE */
  case TF_OFFER: rep.peer.rkey |= 0x00020000u; break; /* an unknown flag */
  }
  ho_token_encode(&rep.peer, r->reply + 4);
}

/* A server token that breaks the token's rules is a malformed reply:
 * hipObjS3Error, nothing moves, and the next transfer works. */
static void malformed_server_token(void **state)
{
  struct fixture *f = *state;
  static const enum token_field fields[] = {TF_TRANSPORT, TF_QPN_TOP, TF_PORT,
                                            TF_LID, TF_OFFER};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    for (int k = 0; k < 2; k++) {
      const int op = k == 0 ? HIPOBJ_RDMA_OP_GET : HIPOBJ_RDMA_OP_PUT;
      struct sim_request r;
      sim_request_init(&r, &f->peer, op, 0, 4096);
      r.on_reply = tamper_reply;
      tampered_field = fields[i];
      memset(f->buf, 0xee, 4096);
      memset(f->peer.object, 0x11, 4096);
      hipObjOpError_t e =
          op == HIPOBJ_RDMA_OP_GET
              ? hipObjGet(NULL, f->buf, 4096, 0, &sim_ops, &r).opError
              : hipObjPut(NULL, f->buf, 4096, 0, &sim_ops, &r).opError;
      assert_int_equal(e, hipObjS3Error);
      for (int j = 0; j < 4096; j++) {
        assert_int_equal(f->buf[j], 0xee);
        assert_int_equal(f->peer.object[j], 0x11);
      }
    }
  }
  fill(f->peer.object, 4096, 9);
  assert_int_equal(get(f, 0, 4096, 0, SIM_NORMAL), hipObjSuccess);
  assert_memory_equal(f->buf, f->peer.object, 4096);
}

static void decline_for_a_too_short_token(void **state)
{
  struct fixture *f = *state;
  struct sim_request r;
  /* The server would move more than the client's buffer range. */
  sim_request_init(&r, &f->peer, HIPOBJ_RDMA_OP_GET, 0, 8192);
  assert_int_equal(hipObjGet(NULL, f->buf, 4096, 0, &sim_ops, &r).opError,
                   hipObjS3Error);
  assert_int_equal(r.start_result, HO_ENGINE_DECLINE);
}

static void server_never_sends_final(void **state)
{
  struct fixture *f = *state;
  struct sim_peer mute;
  struct ho_engine_config cfg = {.fault_skip_final = 100};
  assert_int_equal(sim_peer_create(&mute, &f->w.plat, &cfg, 4096), 0);
  struct sim_request r;
  sim_request_init(&r, &mute, HIPOBJ_RDMA_OP_GET, 0, 4096);
  /* The data arrives but without final the client cannot know: every
   * attempt stalls, and the call fails by its deadline. */
  assert_int_equal(hipObjGet(NULL, f->buf, 4096, 0, &sim_ops, &r).opError,
                   hipObjRdmaError);
  sim_peer_destroy(&mute);
  assert_int_equal(get(f, 0, 4096, 0, SIM_NORMAL), hipObjSuccess);
}

/* A server that gives a transfer up sends nothing more: the client knows
 * at the stall bound (200 ms here), long before the deadline (3 s), and
 * the retry, on a new connection, succeeds. */
static void stalled_server_is_retried_fast(void **state)
{
  struct fixture *f = *state;
  struct sim_peer mute;
  struct ho_engine_config cfg = {.fault_skip_final = 1};
  assert_int_equal(sim_peer_create(&mute, &f->w.plat, &cfg, 4096), 0);
  fill(mute.object, 4096, 3);
  struct sim_request r;
  sim_request_init(&r, &mute, HIPOBJ_RDMA_OP_GET, 0, 4096);
  hipObjInfo_t i0 = world_info();
  uint64_t t0 = ho_now_ns();
  assert_int_equal(hipObjGet(NULL, f->buf, 4096, 0, &sim_ops, &r).opError,
                   hipObjSuccess);
  uint64_t ms = (ho_now_ns() - t0) / 1000000u;
  assert_memory_equal(f->buf, mute.object, 4096);
  hipObjInfo_t i1 = world_info();
  assert_int_equal(i1.retriesStalled - i0.retriesStalled, 1);
  assert_int_equal(i1.stallTimeoutMs, 200);
  assert_true(ms >= 200 && ms < 2000);
  sim_peer_destroy(&mute);
}

/* A server that gave a PUT up (here: it retired the connection without
 * its final) is found by the liveness probe, within the probe interval
 * (200 ms) and the client's retry budget, long before the deadline (3 s):
 * a PUT has no stall bound. The retry, on a new connection, succeeds.
 * Before probes this PUT failed at its deadline. */
static void given_up_put_is_found_by_probe(void **state)
{
  struct fixture *f = *state;
  struct sim_peer mute;
  struct ho_engine_config cfg = {.fault_skip_final = 1};
  assert_int_equal(sim_peer_create(&mute, &f->w.plat, &cfg, 4096), 0);
  fill(f->buf, 4096, 5);
  struct sim_request r;
  sim_request_init(&r, &mute, HIPOBJ_RDMA_OP_PUT, 0, 4096);
  hipObjInfo_t i0 = world_info();
  uint64_t t0 = ho_now_ns();
  assert_int_equal(hipObjPut(NULL, f->buf, 4096, 0, &sim_ops, &r).opError,
                   hipObjSuccess);
  uint64_t ms = (ho_now_ns() - t0) / 1000000u;
  assert_memory_equal(mute.object, f->buf, 4096);
  hipObjInfo_t i1 = world_info();
  assert_int_equal(i1.probeIntervalMs, 200);
  assert_int_equal(i1.probesFailed - i0.probesFailed, 1);
  assert_int_equal(i1.retriesFabric - i0.retriesFabric, 1);
  assert_int_equal(i1.retriesStalled - i0.retriesStalled, 0);
  assert_true(ms >= 200 && ms < 2000);
  sim_peer_destroy(&mute);
}

/* A live server that is slow (its store takes 900 ms to commit) answers
 * every probe: nothing is retried, nothing fails. */
static void slow_server_answers_probes(void **state)
{
  struct fixture *f = *state;
  f->peer.commit_delay_ms = 900;
  fill(f->buf, 4096, 6);
  hipObjInfo_t i0 = world_info();
  assert_int_equal(put(f, 0, 4096, 0, SIM_NORMAL), hipObjSuccess);
  assert_memory_equal(f->peer.object, f->buf, 4096);
  hipObjInfo_t i1 = world_info();
  assert_true(i1.probesSent - i0.probesSent >= 2);
  assert_int_equal(i1.probesFailed - i0.probesFailed, 0);
  assert_int_equal(i1.retriesFabric + i1.retriesStalled -
                       i0.retriesFabric - i0.retriesStalled, 0);
}

/* The server's QPs grant remote write at the QP level so that a probe
 * gets through; that opens nothing only while no memory of the server is
 * registered for remote access, GETs and PUTs having run (chunk buffers
 * made at a slot's first transfer included). */
static void server_memory_is_local_only(void **state)
{
  struct fixture *f = *state;
  fill(f->buf, 65536, 14);
  assert_int_equal(put(f, 0, 65536, 0, SIM_NORMAL), hipObjSuccess);
  assert_int_equal(get(f, 0, 65536, 0, SIM_NORMAL), hipObjSuccess);
  assert_int_equal(fake_mr_remote_count(WORLD_SERVER_NIC), 0);
  assert_true(fake_mr_remote_count(WORLD_CLIENT_NIC) >= 0);
}

/* Probes go only to a server whose offer says its QP answers them: a
 * version-1 server's does not, and one given the token of a client with
 * HIPOBJ_DATA_FIRST=0 (a version-2 client) does not offer them. */
static void probes_only_where_offered(void **state)
{
  struct fixture *f = *state;
  struct sim_peer v1;
  struct ho_engine_config cfg = {.fault_v1 = true};
  assert_int_equal(sim_peer_create(&v1, &f->w.plat, &cfg, 4096), 0);
  v1.commit_delay_ms = 500;
  fill(f->buf, 4096, 8);
  struct sim_request r;
  sim_request_init(&r, &v1, HIPOBJ_RDMA_OP_PUT, 0, 4096);
  hipObjInfo_t i0 = world_info();
  assert_int_equal(hipObjPut(NULL, f->buf, 4096, 0, &sim_ops, &r).opError,
                   hipObjSuccess);
  assert_memory_equal(v1.object, f->buf, 4096);
  assert_int_equal(world_info().probesSent - i0.probesSent, 0);
  sim_peer_destroy(&v1);
  hipObjShutdown();
  f->w.opts.data_first = false;
  assert_int_equal(world_init(&f->w, WORLD_CLIENT_NIC), hipObjSuccess);
  assert_int_equal(hipObjBufRegisterHost(f->buf, BUF_SIZE).opError,
                   hipObjSuccess);
  f->peer.commit_delay_ms = 500;
  assert_int_equal(put(f, 0, 4096, 0, SIM_NORMAL), hipObjSuccess);
  assert_int_equal(world_info().probesSent, 0);
}

/* Work requests the server posted: RDMA WRITEs (op 0) or READs (op 1). */
static uint64_t server_wrs(int op)
{
  struct fake_dev_stats st;
  assert_int_equal(fake_device_stats(WORLD_SERVER_NIC, &st), 0);
  return st.wrs_by_op[op];
}

/* A server that moves its chunks in pieces (wr_size; on Soft-RoCE 16 KiB
 * by default) moves the same bytes, in that many WRITE or READ work
 * requests. */
static void chunks_move_in_pieces(void **state)
{
  struct fixture *f = *state;
  struct sim_peer p;
  struct ho_engine_config cfg = {.chunk_size = 1u << 20, .wr_size = 16384};
  const size_t size = 1500000; /* 2 chunks of 1 MiB: 64 and 28 pieces */
  assert_int_equal(sim_peer_create(&p, &f->w.plat, &cfg, size), 0);
  fill(p.object, size, 11);
  memset(f->buf, 0xee, BUF_SIZE);
  struct sim_request r;
  sim_request_init(&r, &p, HIPOBJ_RDMA_OP_GET, 0, size);
  uint64_t q0 = server_wrs(0);
  assert_int_equal(hipObjGet(NULL, f->buf, size, 4096, &sim_ops, &r).opError,
                   hipObjSuccess);
  uint64_t writes = server_wrs(0) - q0;
  assert_memory_equal(f->buf + 4096, p.object, size);
  for (size_t i = 0; i < 4096; i++)
    assert_int_equal(f->buf[i], 0xee);
  assert_int_equal(f->buf[4096 + size], 0xee);
  assert_int_equal(writes, 92); /* 64 + 28 pieces of 16 KiB */
  fill(f->buf, size, 12);
  sim_request_init(&r, &p, HIPOBJ_RDMA_OP_PUT, 0, size);
  q0 = server_wrs(1);
  assert_int_equal(hipObjPut(NULL, f->buf, size, 0, &sim_ops, &r).opError,
                   hipObjSuccess);
  assert_memory_equal(p.object, f->buf, size);
  assert_int_equal(server_wrs(1) - q0, 92); /* as many READs */
  sim_peer_destroy(&p);
}

/* A server that caps its READs in flight (reads_out; on Soft-RoCE 2 by
 * default) never has more on the wire, and moves the same bytes. */
static void reads_in_flight_are_capped(void **state)
{
  struct fixture *f = *state;
  struct sim_peer p;
  struct ho_engine_config cfg = {.chunk_size = 1u << 20, .wr_size = 16384,
                                 .reads_out = 2};
  const size_t size = 1500000;
  assert_int_equal(sim_peer_create(&p, &f->w.plat, &cfg, size), 0);
  struct fake_dev_stats st;
  fill(f->buf, size, 13);
  struct sim_request r;
  sim_request_init(&r, &p, HIPOBJ_RDMA_OP_PUT, 0, size);
  assert_int_equal(hipObjPut(NULL, f->buf, size, 0, &sim_ops, &r).opError,
                   hipObjSuccess);
  assert_memory_equal(p.object, f->buf, size);
  assert_int_equal(fake_device_stats(WORLD_SERVER_NIC, &st), 0);
  assert_int_equal(st.max_reads_out, 2);
  sim_peer_destroy(&p);
}

/* rxe's retry counter for the server NIC, as the kernel shows it. */
static void set_retries(struct fixture *f, unsigned long long n)
{
  char v[32];
  int len = snprintf(v, sizeof v, "%llu\n", n);
  assert_int_equal(ho_fake_sysfs_write_nic(&f->w.fs, WORLD_SERVER_NIC,
                                           "ports/1/hw_counters/completer_retry_err",
                                           v, (size_t)len),
                   0);
}

struct bumper {
  struct fixture *f;
  atomic_bool stop;
  pthread_t t;
};

/* A fabric that keeps making the server's QPs retry: the counter moves
 * every millisecond. */
static void *bump_retries(void *arg)
{
  struct bumper *b = arg;
  for (unsigned long long n = 100; !atomic_load(&b->stop); n++) {
    set_retries(b->f, n);
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  return NULL;
}

static void sleep_ms(long ms)
{
  struct timespec ts = {0, ms * 1000000};
  nanosleep(&ts, NULL);
}

/* Pacing's look (a read of the device's retry counter, sysfs on
 * Soft-RoCE: about 0.35 ms on the project's VM) is never on a transfer's
 * path: a data-first transfer runs on the thread that starts it, and
 * every look happens on another (the engine's dispatcher), yet the looks
 * still come while transfers move and still cut the window. */
static pthread_t path_thread;
static atomic_uint looks_on_path, looks_elsewhere;

static hipObjOpError_t counting_hw_counter(const struct ho_topology *t,
                                           const char *nic, int port,
                                           const char *name,
                                           unsigned long long *out)
{
  atomic_fetch_add(pthread_equal(pthread_self(), path_thread)
                       ? &looks_on_path
                       : &looks_elsewhere,
                   1);
  return ho_topology_sysfs_ops.hw_counter(t, nic, port, name, out);
}

static void pacing_looks_off_the_path(void **state)
{
  struct fixture *f = *state;
  static struct ho_topology_ops ops;
  ops = ho_topology_sysfs_ops;
  ops.hw_counter = counting_hw_counter;
  struct ho_topology topo = *f->w.plat.topo;
  topo.ops = &ops;
  struct ho_platform plat = f->w.plat;
  plat.topo = &topo;
  path_thread = pthread_self();
  atomic_store(&looks_on_path, 0);
  atomic_store(&looks_elsewhere, 0);
  struct sim_peer p;
  struct ho_engine_config cfg = {.chunk_size = 65536, .depth = 4, .pacing = 1,
                                 .data_first = true};
  const size_t size = 300000;
  set_retries(f, 5);
  assert_int_equal(sim_peer_create(&p, &plat, &cfg, size), 0);
  atomic_store(&looks_on_path, 0); /* the open reads the counter once */
  fill(p.object, size, 24);
  struct bumper b = {.f = f};
  atomic_init(&b.stop, false);
  assert_int_equal(pthread_create(&b.t, NULL, bump_retries, &b), 0);
  struct ho_engine_stats es;
  unsigned n = 0;
  do {
    struct sim_request r;
    sim_request_init(&r, &p, HIPOBJ_RDMA_OP_GET, 0, size);
    assert_int_equal(hipObjGet(NULL, f->buf, size, 0, &sim_ops, &r).opError,
                     hipObjSuccess);
    assert_memory_equal(f->buf, p.object, size);
    ho_engine_get_stats(p.engine, &es);
  } while ((es.pace_window > 2048 || es.data_first < 3) && ++n < 500);
  atomic_store(&b.stop, true);
  pthread_join(b.t, NULL);
  assert_true(es.data_first >= 3); /* on this thread */
  assert_int_equal(atomic_load(&looks_on_path), 0);
  assert_int_equal(es.pace_window, 2048);
  assert_true(atomic_load(&looks_elsewhere) >= 7);
  sim_peer_destroy(&p);
}

/* Pacing (src/server/pace.h): while the device's retry counter moves, the
 * window halves at every look down to two MTUs, where a transfer keeps
 * one MTU per work request (the fake NIC's MTU is 1024) and moves the
 * same bytes; once it stops moving the window grows back to the whole
 * pipeline (4 chunks of 64 KiB). */
static void retries_pace_the_server(void **state)
{
  struct fixture *f = *state;
  struct sim_peer p;
  struct ho_engine_config cfg = {.chunk_size = 65536, .depth = 4, .pacing = 1};
  const size_t size = 300000;
  set_retries(f, 5);
  assert_int_equal(sim_peer_create(&p, &f->w.plat, &cfg, size), 0);
  fill(p.object, size, 21);
  struct bumper b = {.f = f};
  atomic_init(&b.stop, false);
  assert_int_equal(pthread_create(&b.t, NULL, bump_retries, &b), 0);
  sleep_ms(5);
  struct sim_request r;
  struct ho_engine_stats es;
  /* the window halves at each look (every 10 ms) while transfers move */
  unsigned warm = 0;
  do {
    sim_request_init(&r, &p, HIPOBJ_RDMA_OP_GET, 0, size);
    assert_int_equal(hipObjGet(NULL, f->buf, size, 0, &sim_ops, &r).opError,
                     hipObjSuccess);
    assert_memory_equal(f->buf, p.object, size);
    ho_engine_get_stats(p.engine, &es);
  } while (es.pace_window > 2048 && ++warm < 500);
  assert_int_equal(es.pace_window, 2048);
  assert_true(es.pace_shrinks >= 7); /* 256 KiB to 2 KiB: seven halvings */
  uint64_t w0 = server_wrs(0), r0 = server_wrs(1);
  sim_request_init(&r, &p, HIPOBJ_RDMA_OP_GET, 0, size);
  assert_int_equal(hipObjGet(NULL, f->buf, size, 0, &sim_ops, &r).opError,
                   hipObjSuccess);
  assert_memory_equal(f->buf, p.object, size);
  fill(f->buf, size, 22);
  sim_request_init(&r, &p, HIPOBJ_RDMA_OP_PUT, 0, size);
  assert_int_equal(hipObjPut(NULL, f->buf, size, 0, &sim_ops, &r).opError,
                   hipObjSuccess);
  assert_memory_equal(p.object, f->buf, size);
  atomic_store(&b.stop, true);
  pthread_join(b.t, NULL);
  assert_int_equal(server_wrs(0) - w0, (size + 1023) / 1024);
  assert_int_equal(server_wrs(1) - r0, (size + 1023) / 1024);
  struct fake_dev_stats st;
  assert_int_equal(fake_device_stats(WORLD_SERVER_NIC, &st), 0);
  assert_int_equal(st.max_reads_out, 2);
  ho_engine_get_stats(p.engine, &es);
  assert_true(es.paced);
  assert_true(es.pace_shrinks >= 1);
  assert_int_equal(es.pace_window, 2048);
  /* quiet: the dispatcher's looks, every 10 ms while transfers move and
   * each after a window of traffic, double the window back to 256 KiB
   * (seven doublings; a look runs beside the transfer that woke it, so
   * one may land after the last GET) */
  for (int i = 0; i < 30 && es.pace_window < 4 * 65536; i++) {
    sleep_ms(11);
    sim_request_init(&r, &p, HIPOBJ_RDMA_OP_GET, 0, size);
    assert_int_equal(hipObjGet(NULL, f->buf, size, 0, &sim_ops, &r).opError,
                     hipObjSuccess);
    ho_engine_get_stats(p.engine, &es);
  }
  assert_int_equal(es.pace_window, 4 * 65536);
  r0 = server_wrs(1);
  fill(f->buf, size, 23);
  sim_request_init(&r, &p, HIPOBJ_RDMA_OP_PUT, 0, size);
  assert_int_equal(hipObjPut(NULL, f->buf, size, 0, &sim_ops, &r).opError,
                   hipObjSuccess);
  assert_memory_equal(p.object, f->buf, size);
  assert_int_equal(server_wrs(1) - r0, 5); /* whole chunks */
  sim_peer_destroy(&p);
}

/* Retries stop at the deadline: a server that never sends final costs at
 * most the deadline (600 ms), whatever HIPOBJ_RETRIES allows. */
static void retries_stop_at_the_deadline(void **state)
{
  struct fixture *f = *state;
  struct sim_peer mute;
  struct ho_engine_config cfg = {.fault_skip_final = 100};
  assert_int_equal(sim_peer_create(&mute, &f->w.plat, &cfg, 4096), 0);
  struct sim_request r;
  sim_request_init(&r, &mute, HIPOBJ_RDMA_OP_GET, 0, 4096);
  hipObjInfo_t i0 = world_info();
  uint64_t t0 = ho_now_ns();
  assert_int_equal(hipObjGet(NULL, f->buf, 4096, 0, &sim_ops, &r).opError,
                   hipObjRdmaError);
  uint64_t ms = (ho_now_ns() - t0) / 1000000u;
  hipObjInfo_t i1 = world_info();
  uint64_t n = i1.retriesStalled - i0.retriesStalled;
  assert_true(n >= 1 && n <= 2); /* 200 ms each: two fit in 600 ms */
  assert_true(ms >= 600 && ms < 1500);
  sim_peer_destroy(&mute);
}

/* The application-driven path is not retried by the library; the helper
 * says when the application should. */
static void application_driven_retry(void **state)
{
  struct fixture *f = *state;
  for (int attempt = 0; attempt < 2; attempt++) {
    char *token = NULL;
    assert_int_equal(hipObjGetRdmaToken(f->buf, 4096, HIPOBJ_RDMA_OP_GET,
                                        &token).opError, hipObjSuccess);
    if (attempt == 0)
      fake_device_force_error(WORLD_CLIENT_NIC, 1, IBV_WC_REM_ACCESS_ERR);
    struct sim_request r;
    sim_request_init(&r, &f->peer, HIPOBJ_RDMA_OP_GET, 0, 4096);
    assert_int_equal(sim_ops.sendRequest(&r, token, 88), 0);
    char reply[HIPOBJ_REPLY_BUF_LEN];
    size_t len = sizeof reply;
    assert_int_equal(sim_ops.recvReply(&r, reply, &len), 0);
    hipObjOpError_t e = hipObjCompleteRdmaTransfer(token, reply, len).opError;
    int retryable = -1;
    assert_int_equal(hipObjRdmaTransferRetryable(token, &retryable).opError,
                     hipObjSuccess);
    assert_int_equal(e, attempt == 0 ? hipObjRdmaError : hipObjSuccess);
    assert_int_equal(retryable, attempt == 0);
    assert_int_equal(hipObjPutRdmaToken(token).opError, hipObjSuccess);
    assert_int_equal(hipObjRdmaTransferRetryable(token, &retryable).opError,
                     hipObjInvalidValue); /* put: gone */
  }
  assert_memory_equal(f->buf, f->peer.object, 4096);
}

static void final_with_wrong_cookie(void **state)
{
  struct fixture *f = *state;
  struct sim_peer liar;
  struct ho_engine_config cfg = {.fault_bad_cookie = true};
  assert_int_equal(sim_peer_create(&liar, &f->w.plat, &cfg, 4096), 0);
  struct sim_request r;
  sim_request_init(&r, &liar, HIPOBJ_RDMA_OP_GET, 0, 4096);
  assert_int_equal(hipObjGet(NULL, f->buf, 4096, 0, &sim_ops, &r).opError,
                   hipObjRdmaError);
  sim_peer_destroy(&liar);
}

static void dropped_packets_are_retried(void **state)
{
  struct fixture *f = *state;
  fake_device_drop_next(NULL, 3);
  assert_int_equal(get(f, 5, 70000, 0, SIM_NORMAL), hipObjSuccess);
  assert_memory_equal(f->buf, f->peer.object + 5, 70000);
  struct fake_dev_stats s;
  fake_device_stats(WORLD_SERVER_NIC, &s);
  fake_device_stats(WORLD_CLIENT_NIC, &s);
}

static uint64_t fabric_retries(void)
{
  hipObjInfo_t info;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  assert_int_equal(hipObjGetInfo(&info).opError, hipObjSuccess);
  assert_int_equal(info.retries, 3);
  return info.retriesFabric + info.retriesKeptBroken;
}

/* An error completion is a fabric failure: the library sends the request
 * again on a new connection, and the call succeeds. */
static void error_completion_is_retried(void **state)
{
  struct fixture *f = *state;
  uint64_t r0 = fabric_retries();
  memset(f->buf, 0, 4096);
  fake_device_force_error(WORLD_CLIENT_NIC, 1, IBV_WC_REM_ACCESS_ERR);
  assert_int_equal(get(f, 0, 4096, 0, SIM_NORMAL), hipObjSuccess);
  assert_memory_equal(f->buf, f->peer.object, 4096);
  assert_int_equal(fabric_retries() - r0, 1);
}

/* At most HIPOBJ_RETRIES (3) retries: four failures in a row fail the
 * call, and the next one succeeds on a new connection. */
static void retries_are_bounded(void **state)
{
  struct fixture *f = *state;
  uint64_t r0 = fabric_retries();
  /* the first completion of each attempt fails it */
  fake_device_force_error(WORLD_CLIENT_NIC, 4, IBV_WC_REM_ACCESS_ERR);
  assert_int_equal(get(f, 0, 4096, 0, SIM_NORMAL), hipObjRdmaError);
  assert_int_equal(fabric_retries() - r0, 3);
  assert_int_equal(get(f, 0, 4096, 0, SIM_NORMAL), hipObjSuccess);
  assert_memory_equal(f->buf, f->peer.object, 4096);
}

static void failing_verbs_calls(void **state)
{
  struct fixture *f = *state;
  static const char *verbs[] = {"modify_qp", "post_send", "post_recv", "poll_cq"};
  for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
    fake_verb_fail(verbs[i], 0, 1, EIO);
    hipObjOpError_t e = get(f, 0, 4096, 0, SIM_NORMAL);
    fake_verb_fail(verbs[i], 0, 0, 0);
    assert_true(e == hipObjRdmaError || e == hipObjS3Error || e == hipObjSuccess);
    assert_int_equal(get(f, 0, 4096, 0, SIM_NORMAL), hipObjSuccess);
  }
  void *other = malloc(8192);
  fake_verb_fail("reg_mr", 0, 1, ENOMEM);
  assert_int_equal(hipObjBufRegisterHost(other, 8192).opError, hipObjRdmaError);
  assert_int_equal(hipObjBufDeregister(other).opError, hipObjBufNotRegistered);
  free(other);
}

/* The QP and MR attributes the protocol depends on. */
static void exact_attributes(void **state)
{
  struct fixture *f = *state;
  assert_int_equal(get(f, 0, 4096, 0, SIM_NORMAL), hipObjSuccess);
  struct ho_instance *inst = ho_instance_get();
  /* The transfer's connection is idle in the pool: the next lease for the
   * same peer (no hint: peer 0) is that link, connected, with a spare. */
  struct ho_lease l;
  assert_int_equal(ho_pool_acquire(inst->pool, false, true, 0, &l), hipObjSuccess);
  assert_non_null(l.link->qp);
  assert_non_null(l.link->spare);
  struct ibv_qp_attr a;
  int mask = 0;
  assert_int_equal(fake_qp_transition(l.link->spare->qp, IBV_QPS_INIT, &a, &mask), 0);
  assert_int_equal(a.qp_access_flags, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
  bool seen = fake_qp_transition(l.link->qp->qp, IBV_QPS_RTR, &a, &mask) == 0;
  assert_true(seen);
  assert_int_equal(a.path_mtu, IBV_MTU_1024); /* the port's active MTU */
  assert_int_equal(a.max_dest_rd_atomic, 16);
  assert_int_equal(a.ah_attr.is_global, 1);
  assert_int_equal(fake_qp_transition(l.link->qp->qp, IBV_QPS_RTS, &a, &mask), 0);
  assert_int_equal(a.retry_cnt, 6); /* never 7: rxe retries forever */
  assert_int_equal(a.rnr_retry, 6);
  assert_int_equal(a.timeout, 14);
  assert_int_equal(a.max_rd_atomic, 16);
  ho_pool_release(&l);
  assert_true(seen);
  struct ho_buf *b = ho_buffers_find(inst->buffers, f->buf);
  assert_non_null(b);
  /* Scoped tokens: the MR grants no remote access, only windows. */
  assert_true(inst->config.scoped);
  assert_int_equal(fake_mr_access(b->mr), IBV_ACCESS_LOCAL_WRITE |
                                              IBV_ACCESS_MW_BIND);
  assert_int_equal(b->kind, HO_BUF_HOST);
  ho_buf_put(b);
  ho_instance_put(inst);
}

/* The architecture's first ordering: the server RDMA-WRITEs before the
 * client's QP is connected. A QP in INIT drops the request; the server
 * fails after its retries and the client's buffer stays untouched. */
static void original_ordering_fails(void **state)
{
  struct fixture *f = *state;
  struct ho_instance *inst = ho_instance_get();
  struct ho_lease cl;
  assert_int_equal(ho_pool_acquire(inst->pool, false, true, 0, &cl), hipObjSuccess);
  struct ho_device *sdev = NULL;
  assert_int_equal(ho_device_open(&fake_verbs_ops, &f->w.topo, WORLD_SERVER_NIC, &sdev),
                   hipObjSuccess);
  struct ho_conn_attr attr = {
      .max_send_wr = 8, .max_recv_wr = 8, .qp_access = 0};
  struct ho_conn *sc = NULL;
  assert_int_equal(ho_conn_create(sdev, &attr, &sc), hipObjSuccess);
  struct ho_token client;
  ho_conn_token(cl.link->spare, &client);
  assert_int_equal(ho_conn_connect(sc, &client, 0, 0), hipObjSuccess);

  struct ho_buf *b = ho_buffers_find(inst->buffers, f->buf);
  uint8_t *src = malloc(4096);
  memset(src, 0x42, 4096);
  struct ibv_mr *mr = fake_verbs_ops.reg_mr(sdev->pd, src, 4096, 0);
  struct ibv_sge sge = {(uintptr_t)src, 4096, mr->lkey};
  struct ibv_send_wr wr = {.wr_id = 1, .sg_list = &sge, .num_sge = 1,
                           .opcode = IBV_WR_RDMA_WRITE,
                           .send_flags = IBV_SEND_SIGNALED,
                           .wr.rdma = {(uintptr_t)f->buf, b->mr->rkey}};
  struct ibv_send_wr *bad;
  memset(f->buf, 0xee, 4096);
  assert_int_equal(fake_verbs_ops.post_send(sc->qp, &wr, &bad), 0);
  struct ibv_wc wc;
  int n = 0;
  for (int spin = 0; spin < 2000000 && n == 0; spin++)
    n = fake_verbs_ops.poll_cq(sc->cq, 1, &wc);
  assert_int_equal(n, 1);
  assert_int_equal(wc.status, IBV_WC_RETRY_EXC_ERR);
  assert_int_equal(f->buf[0], 0xee);
  assert_int_equal(f->buf[4095], 0xee);

  fake_verbs_ops.dereg_mr(mr);
  free(src);
  ho_buf_put(b);
  ho_conn_destroy(sc);
  ho_device_close(sdev);
  ho_pool_release(&cl);
  ho_instance_put(inst);
}

/* The client disappears after the reply: the server reclaims its QP at
 * its ready timeout and serves the next request. */
static void client_disappears_after_reply(void **state)
{
  struct fixture *f = *state;
  struct sim_peer quick;
  struct ho_engine_config cfg = {.qps = 1, .ready_timeout_ms = 50};
  assert_int_equal(sim_peer_create(&quick, &f->w.plat, &cfg, 4096), 0);
  char *token = NULL;
  assert_int_equal(hipObjGetRdmaToken(f->buf, 4096, HIPOBJ_RDMA_OP_GET, &token).opError,
                   hipObjSuccess);
  struct sim_request r;
  sim_request_init(&r, &quick, HIPOBJ_RDMA_OP_GET, 0, 4096);
  assert_int_equal(sim_ops.sendRequest(&r, token, HO_TOKEN_HEX), 0);
  assert_int_equal(r.start_result, HO_ENGINE_STARTED);
  /* The client walks away without sending ready. */
  assert_int_equal(hipObjPutRdmaToken(token).opError, hipObjSuccess);
  struct ho_engine_stats st = {0};
  for (int i = 0; i < 400 && st.timed_out == 0; i++) {
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
    ho_engine_get_stats(quick.engine, &st);
  }
  assert_int_equal(st.timed_out, 1);
  /* Its only QP serves again. */
  struct sim_request r2;
  sim_request_init(&r2, &quick, HIPOBJ_RDMA_OP_GET, 0, 4096);
  assert_int_equal(hipObjGet(NULL, f->buf, 4096, 0, &sim_ops, &r2).opError, hipObjSuccess);
  sim_peer_destroy(&quick);
}

/* A client that sends ready with a wrong cookie gets a final saying so, and
 * nothing moves. */
static void client_sends_wrong_cookie(void **state)
{
  struct fixture *f = *state;
  char *token = NULL;
  /* On a connection made earlier: on a new one the cookie also sets the
   * PSNs, and a wrong one never gets ready through (the server times out). */
  assert_int_equal(get(f, 0, 4096, 0, SIM_NORMAL), hipObjSuccess);
  assert_int_equal(hipObjGetRdmaToken(f->buf, 4096, HIPOBJ_RDMA_OP_GET, &token).opError,
                   hipObjSuccess);
  struct sim_request r;
  sim_request_init(&r, &f->peer, HIPOBJ_RDMA_OP_GET, 0, 4096);
  assert_int_equal(sim_ops.sendRequest(&r, token, HO_TOKEN_HEX), 0);
  /* Tamper with the cookie the reply carries before completing. */
  char reply[HO_ENGINE_REPLY_MAX];
  memcpy(reply, r.reply, sizeof reply);
  reply[4 + 50] = reply[4 + 50] == '0' ? '1' : '0';
  memset(f->buf, 0xee, 4096);
  assert_int_equal(hipObjCompleteRdmaTransfer(token, reply, strlen(reply)).opError,
                   hipObjRdmaError);
  assert_int_equal(f->buf[0], 0xee);
  assert_int_equal(hipObjPutRdmaToken(token).opError, hipObjSuccess);
  struct ho_engine_stats st;
  for (int i = 0; i < 200; i++) {
    ho_engine_get_stats(f->peer.engine, &st);
    if (st.bad_cookie)
      break;
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
  }
  assert_int_equal(st.bad_cookie, 1);
}

static void application_driven_transfer(void **state)
{
  struct fixture *f = *state;
  char *token = NULL;
  assert_int_equal(hipObjGetRdmaToken(f->buf, 8192, HIPOBJ_RDMA_OP_GET, &token).opError,
                   hipObjSuccess);
  assert_int_equal(strlen(token), 88);
  struct sim_request r;
  sim_request_init(&r, &f->peer, HIPOBJ_RDMA_OP_GET, 100, 8192);
  assert_int_equal(sim_ops.sendRequest(&r, token, 88), 0);
  char reply[HIPOBJ_REPLY_BUF_LEN];
  size_t len = sizeof reply;
  assert_int_equal(sim_ops.recvReply(&r, reply, &len), 0);
  assert_int_equal(hipObjCompleteRdmaTransfer(token, reply, len).opError, hipObjSuccess);
  assert_memory_equal(f->buf, f->peer.object + 100, 8192);
  int retryable = -1;
  assert_int_equal(hipObjRdmaTransferRetryable(token, &retryable).opError,
                   hipObjSuccess);
  assert_int_equal(retryable, 0); /* a success */
  /* A token completes once. */
  assert_int_equal(hipObjCompleteRdmaTransfer(token, reply, len).opError,
                   hipObjInvalidValue);
  assert_int_equal(hipObjPutRdmaToken(token).opError, hipObjSuccess);
  /* Freed tokens and foreign pointers are refused, not trusted. */
  char fake[89] = {0};
  assert_int_equal(hipObjPutRdmaToken(fake).opError, hipObjInvalidValue);
  assert_int_equal(hipObjPutRdmaToken(NULL).opError, hipObjInvalidValue);
  assert_int_equal(hipObjCompleteRdmaTransfer(fake, "ok", 2).opError, hipObjInvalidValue);
  assert_int_equal(hipObjGetRdmaToken(f->buf, 8192, 7, &token).opError, hipObjInvalidValue);
  assert_int_equal(hipObjGetRdmaToken(f->buf, 0, HIPOBJ_RDMA_OP_GET, &token).opError,
                   hipObjInvalidValue);
  assert_int_equal(hipObjGetRdmaToken(f->buf, BUF_SIZE + 1, HIPOBJ_RDMA_OP_GET, &token).opError,
                   hipObjInvalidValue);
  assert_int_equal(hipObjGetRdmaToken(f->buf, 1, HIPOBJ_RDMA_OP_GET, NULL).opError,
                   hipObjInvalidValue);
  /* Tokens never wait for a connection: Busy when all are taken. */
  char *held[4];
  for (int i = 0; i < 4; i++)
    assert_int_equal(hipObjGetRdmaToken(f->buf, 16, HIPOBJ_RDMA_OP_PUT, &held[i]).opError,
                     hipObjSuccess);
  assert_int_equal(hipObjGetRdmaToken(f->buf, 16, HIPOBJ_RDMA_OP_PUT, &token).opError,
                   hipObjBusy);
  /* A buffer a token uses cannot be deregistered. */
  assert_int_equal(hipObjBufDeregister(f->buf).opError, hipObjBusy);
  assert_int_equal(hipObjRdmaTransferRetryable(held[0], &retryable).opError,
                   hipObjInvalidValue); /* not completed yet */
  assert_int_equal(hipObjCompleteRdmaTransfer(held[0], "501", 3).opError, hipObjS3Error);
  assert_int_equal(hipObjRdmaTransferRetryable(held[0], &retryable).opError,
                   hipObjSuccess);
  assert_int_equal(retryable, 0); /* a decline is the application's */
  for (int i = 0; i < 4; i++)
    assert_int_equal(hipObjPutRdmaToken(held[i]).opError, hipObjSuccess);
  assert_int_equal(get(f, 0, 4096, 0, SIM_NORMAL), hipObjSuccess);
}

/* A token pointer is a handle that is never reused: after a put, a stale
 * complete or put names no transfer, even when other tokens were made
 * since (with malloc, the next token got the freed address and a stale put
 * released it). */
static void stale_tokens_name_nothing(void **state)
{
  struct fixture *f = *state;
  enum { N = 200 };
  static char *seen[N];
  char *stale = NULL, *live = NULL;
  assert_int_equal(hipObjGetRdmaToken(f->buf, 4096, HIPOBJ_RDMA_OP_GET, &stale).opError,
                   hipObjSuccess);
  assert_int_equal(hipObjPutRdmaToken(stale).opError, hipObjSuccess);
  for (int i = 0; i < N; i++) {
    assert_int_equal(hipObjGetRdmaToken(f->buf, 4096, HIPOBJ_RDMA_OP_GET, &seen[i]).opError,
                     hipObjSuccess);
    assert_ptr_not_equal(seen[i], stale);
    for (int j = 0; j < i; j++)
      assert_ptr_not_equal(seen[i], seen[j]);
    if (i < N - 1)
      assert_int_equal(hipObjPutRdmaToken(seen[i]).opError, hipObjSuccess);
  }
  live = seen[N - 1];
  /* The stale and the put ones act on nothing; the live one is intact. */
  assert_int_equal(hipObjPutRdmaToken(stale).opError, hipObjInvalidValue);
  assert_int_equal(hipObjPutRdmaToken(seen[0]).opError, hipObjInvalidValue);
  assert_int_equal(hipObjCompleteRdmaTransfer(seen[1], "200", 3).opError,
                   hipObjInvalidValue);
  struct sim_request r;
  sim_request_init(&r, &f->peer, HIPOBJ_RDMA_OP_GET, 0, 4096);
  assert_int_equal(sim_ops.sendRequest(&r, live, HO_TOKEN_HEX), 0);
  memset(f->buf, 0, 4096);
  assert_int_equal(hipObjCompleteRdmaTransfer(live, r.reply, strlen(r.reply)).opError,
                   hipObjSuccess);
  assert_memory_equal(f->buf, f->peer.object, 4096);
  assert_int_equal(hipObjPutRdmaToken(live).opError, hipObjSuccess);
  assert_int_equal(hipObjPutRdmaToken(live).opError, hipObjInvalidValue);
}

/* A transfer waits for a free connection at most HIPOBJ_WAIT_TIMEOUT_MS,
 * then gets hipObjBusy (it waited for ever). */
static void pool_wait_is_bounded(void **state)
{
  struct fixture *f = *state;
  char *held[4];
  for (int i = 0; i < 4; i++)
    assert_int_equal(hipObjGetRdmaToken(f->buf, 16, HIPOBJ_RDMA_OP_GET, &held[i]).opError,
                     hipObjSuccess);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  assert_int_equal(get(f, 0, 4096, 0, SIM_NORMAL), hipObjBusy);
  clock_gettime(CLOCK_MONOTONIC, &b);
  int64_t ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
  assert_true(ms >= 190 && ms < 5000);
  assert_int_equal(hipObjPutRdmaToken(held[0]).opError, hipObjSuccess);
  assert_int_equal(get(f, 0, 4096, 0, SIM_NORMAL), hipObjSuccess);
  for (int i = 1; i < 4; i++)
    assert_int_equal(hipObjPutRdmaToken(held[i]).opError, hipObjSuccess);
}

/* A buffer of exactly 4 GiB registers; one byte more does not; the last
 * bytes of it transfer. The memory is reserved, not touched. */
static void four_gib_limit(void **state)
{
  struct fixture *f = *state;
  const size_t four = (size_t)HIPOBJ_MAX_BUFFER_SIZE;
  uint8_t *big = mmap(NULL, four + 4096, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (big == MAP_FAILED)
    skip();
  assert_int_equal(hipObjBufRegisterHost(big, four + 1).opError, hipObjSizeTooLarge);
  assert_int_equal(hipObjBufRegisterHost(big, four).opError, hipObjSuccess);
  struct sim_request r;
  sim_request_init(&r, &f->peer, HIPOBJ_RDMA_OP_GET, 64, 100);
  assert_int_equal(hipObjGet(NULL, big, 100, (off_t)(four - 100), &sim_ops, &r).opError,
                   hipObjSuccess);
  assert_memory_equal(big + four - 100, f->peer.object + 64, 100);
  sim_request_init(&r, &f->peer, HIPOBJ_RDMA_OP_GET, 64, 101);
  assert_int_equal(hipObjGet(NULL, big, 101, (off_t)(four - 100), &sim_ops, &r).opError,
                   hipObjInvalidValue);
  assert_int_equal(hipObjBufDeregister(big).opError, hipObjSuccess);
  munmap(big, four + 4096);
}

/* A transfer that moves slowly but steadily (32 chunks of 64 KiB, the
 * store taking 40 ms each: at least 1.28 s) outlives its deadline (300 ms
 * plus 100 ms a MB: 510 ms): the deadline follows the PSN and moves, and
 * the GET and the PUT succeed, nothing retried. Before, both failed at
 * 510 ms with "no protocol message before the transfer timeout". */
static void moving_transfer_outlives_its_deadline(void **state)
{
  struct fixture *f = *state;
  f->peer.chunk_delay_ms = 40;
  hipObjInfo_t i0 = world_info();
  uint64_t t0 = ho_now_ns();
  assert_int_equal(get(f, 0, OBJ_SIZE, 0, SIM_NORMAL), hipObjSuccess);
  uint64_t get_ms = (ho_now_ns() - t0) / 1000000u;
  assert_memory_equal(f->buf, f->peer.object, OBJ_SIZE);
  fill(f->buf, OBJ_SIZE, 9);
  t0 = ho_now_ns();
  assert_int_equal(put(f, 0, OBJ_SIZE, 0, SIM_NORMAL), hipObjSuccess);
  uint64_t put_ms = (ho_now_ns() - t0) / 1000000u;
  assert_memory_equal(f->peer.object, f->buf, OBJ_SIZE);
  hipObjInfo_t i1 = world_info();
  assert_true(get_ms >= 1280 && put_ms >= 1280);
  assert_true(i1.deadlinesMoved - i0.deadlinesMoved >= 4);
  assert_int_equal(i1.retriesFabric + i1.retriesStalled + i1.retriesServerRdma -
                       i0.retriesFabric - i0.retriesStalled - i0.retriesServerRdma,
                   0);
  assert_int_equal(i1.transferTimeoutMs, 300);
  assert_int_equal(i1.transferMaxMs, 20000);
}

/* The deadline never moves past HIPOBJ_TRANSFER_MAX_MS (900 ms here) from
 * the transfer's start, however the transfer moves (a server that keeps
 * writing cannot hold the call): the GET fails at the limit, not at the
 * end of the transfer (1.28 s or more), and is not retried. */
static void deadline_moves_only_to_its_limit(void **state)
{
  struct fixture *f = *state;
  f->peer.chunk_delay_ms = 40;
  hipObjInfo_t i0 = world_info();
  uint64_t t0 = ho_now_ns();
  assert_int_equal(get(f, 0, OBJ_SIZE, 0, SIM_NORMAL), hipObjRdmaError);
  uint64_t ms = (ho_now_ns() - t0) / 1000000u;
  hipObjInfo_t i1 = world_info();
  assert_true(ms >= 900 && ms < 1250);
  assert_int_equal(i1.deadlinesMoved - i0.deadlinesMoved, 1);
  assert_int_equal(i1.retriesFabric + i1.retriesStalled -
                       i0.retriesFabric - i0.retriesStalled, 0);
  f->peer.chunk_delay_ms = 0; /* a transfer after it succeeds */
  assert_int_equal(get(f, 0, 4096, 0, SIM_NORMAL), hipObjSuccess);
  assert_memory_equal(f->buf, f->peer.object, 4096);
}

/* A transfer that stops moving gets no more time: the data came at once,
 * then no final (the server's final skipped): the PSN stood through the
 * deadline's last eighth, so the deadline does not move and the call
 * fails at its deadline (300 ms), long before the limit (20 s), not
 * retried (a timeout is not). */
static void stopped_transfer_gets_no_more_time(void **state)
{
  struct fixture *f = *state;
  struct sim_peer mute;
  struct ho_engine_config cfg = {.fault_skip_final = 100};
  assert_int_equal(sim_peer_create(&mute, &f->w.plat, &cfg, 4096), 0);
  struct sim_request r;
  sim_request_init(&r, &mute, HIPOBJ_RDMA_OP_GET, 0, 4096);
  hipObjInfo_t i0 = world_info();
  uint64_t t0 = ho_now_ns();
  assert_int_equal(hipObjGet(NULL, f->buf, 4096, 0, &sim_ops, &r).opError,
                   hipObjRdmaError);
  uint64_t ms = (ho_now_ns() - t0) / 1000000u;
  hipObjInfo_t i1 = world_info();
  assert_int_equal(i1.deadlinesMoved - i0.deadlinesMoved, 0);
  assert_true(ms >= 300 && ms < 1000);
  sim_peer_destroy(&mute);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(get_sizes_and_offsets, setup, teardown),
      cmocka_unit_test_setup_teardown(put_sizes_and_offsets, setup, teardown),
      cmocka_unit_test_setup_teardown(puts_keep_several_reads_in_flight, setup, teardown),
      cmocka_unit_test_setup_teardown(bad_arguments, setup, teardown),
      cmocka_unit_test_setup_teardown(s3_side_failures, setup, teardown),
      cmocka_unit_test_setup_teardown(malformed_server_token, setup, teardown),
      cmocka_unit_test_setup_teardown(decline_for_a_too_short_token, setup, teardown),
      cmocka_unit_test_setup_teardown(server_never_sends_final, setup, teardown),
      cmocka_unit_test_setup_teardown(final_with_wrong_cookie, setup, teardown),
      cmocka_unit_test_setup_teardown(dropped_packets_are_retried, setup, teardown),
      cmocka_unit_test_setup_teardown(error_completion_is_retried, setup, teardown),
      cmocka_unit_test_setup_teardown(retries_are_bounded, setup, teardown),
      cmocka_unit_test_setup_teardown(chunks_move_in_pieces, setup, teardown),
      cmocka_unit_test_setup_teardown(reads_in_flight_are_capped, setup, teardown),
      cmocka_unit_test_setup_teardown(retries_pace_the_server, setup, teardown),
      cmocka_unit_test_setup_teardown(pacing_looks_off_the_path, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(given_up_put_is_found_by_probe,
                                      setup_probe, teardown),
      cmocka_unit_test_setup_teardown(slow_server_answers_probes, setup_probe,
                                      teardown),
      cmocka_unit_test_setup_teardown(probes_only_where_offered, setup_probe,
                                      teardown),
      cmocka_unit_test_setup_teardown(server_memory_is_local_only, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(stalled_server_is_retried_fast, setup_stall,
                                      teardown),
      cmocka_unit_test_setup_teardown(retries_stop_at_the_deadline,
                                      setup_stall_short, teardown),
      cmocka_unit_test_setup_teardown(failing_verbs_calls, setup, teardown),
      cmocka_unit_test_setup_teardown(exact_attributes, setup, teardown),
      cmocka_unit_test_setup_teardown(original_ordering_fails, setup, teardown),
      cmocka_unit_test_setup_teardown(client_disappears_after_reply, setup, teardown),
      cmocka_unit_test_setup_teardown(client_sends_wrong_cookie, setup, teardown),
      cmocka_unit_test_setup_teardown(application_driven_transfer, setup, teardown),
      cmocka_unit_test_setup_teardown(application_driven_retry, setup, teardown),
      cmocka_unit_test_setup_teardown(four_gib_limit, setup, teardown),
      cmocka_unit_test_setup_teardown(stale_tokens_name_nothing, setup, teardown),
      cmocka_unit_test_setup_teardown(pool_wait_is_bounded, setup_short_wait, teardown),
      cmocka_unit_test_setup_teardown(moving_transfer_outlives_its_deadline,
                                      setup_progress, teardown),
      cmocka_unit_test_setup_teardown(deadline_moves_only_to_its_limit,
                                      setup_progress_capped, teardown),
      cmocka_unit_test_setup_teardown(stopped_transfer_gets_no_more_time,
                                      setup_progress, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
