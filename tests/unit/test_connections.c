/* SPDX-License-Identifier: MIT */
/* Persistent connections (docs/protocol.md, section 5) on the simulated
 * fabric: reuse in steady state with no QP state transition, and every way
 * the two sides can disagree (another server, a restart, a stale key, a
 * failure, eviction, idle expiry, a version-1 peer on either side), each
 * resolved in the same round trip with every byte right. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fakes/fake_verbs.h"
#include "fakes/sim_peer.h"
#include "fakes/world.h"
#include "hipobj.h"
#include "instance.h"
#include "rdma/transport.h"

#define BUF_SIZE (1u << 20)
#define OBJ_SIZE (1u << 20)

struct fixture {
  struct world w;
  struct sim_peer a, b; /* two servers on one device */
  uint8_t *buf;
};

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (uint8_t)((i * 2654435761u + seed) >> 13);
}

static bool answer_first_next; /* the next make(): HIPOBJ_DATA_FIRST=0 */

static int make(void **state, const struct ho_engine_config *cfg_b,
                unsigned client_idle_ms)
{
  struct fixture *f = calloc(1, sizeof *f);
  if (!f || world_create(&f->w, NULL) != 0)
    return -1;
  if (client_idle_ms)
    f->w.opts.idle_timeout_ms = client_idle_ms;
  f->w.opts.data_first = !answer_first_next;
  answer_first_next = false;
  if (world_init(&f->w, WORLD_CLIENT_NIC) != hipObjSuccess)
    return -1;
  if (sim_peer_create(&f->a, &f->w.plat, NULL, OBJ_SIZE) != 0 ||
      sim_peer_create(&f->b, &f->w.plat, cfg_b, OBJ_SIZE) != 0)
    return -1;
  fill(f->a.object, OBJ_SIZE, 1);
  fill(f->b.object, OBJ_SIZE, 2);
  f->buf = aligned_alloc(4096, BUF_SIZE);
  if (hipObjBufRegisterHost(f->buf, BUF_SIZE).opError != hipObjSuccess)
    return -1;
  *state = f;
  return 0;
}

static int setup(void **state) { return make(state, NULL, 0); }

static int teardown(void **state)
{
  struct fixture *f = *state;
  hipObjBufDeregister(f->buf);
  hipObjShutdown();
  sim_peer_destroy(&f->a);
  sim_peer_destroy(&f->b);
  world_destroy(&f->w);
  free(f->buf);
  free(f);
  return 0;
}

/* A GET or PUT of n bytes at object offset off; the bytes are checked. */
static hipObjOpError_t xfer(struct fixture *f, struct sim_peer *p, int op,
                            uint64_t off, size_t n)
{
  struct sim_request r;
  sim_request_init(&r, p, op, off, n);
  if (op == HIPOBJ_RDMA_OP_PUT)
    fill(f->buf, n, (uint32_t)(off + n));
  else
    memset(f->buf, 0xee, n);
  hipObjOpError_t e = op == HIPOBJ_RDMA_OP_GET
                          ? hipObjGet(NULL, f->buf, n, 0, &sim_ops, &r).opError
                          : hipObjPut(NULL, f->buf, n, 0, &sim_ops, &r).opError;
  if (e == hipObjSuccess)
    assert_memory_equal(f->buf, p->object + off, n);
  return e;
}

static struct ho_pool_stats pool(void)
{
  struct ho_pool_stats s;
  struct ho_instance *inst = ho_instance_get();
  ho_pool_get_stats(inst->pool, &s);
  ho_instance_put(inst);
  return s;
}

/* The server's counters once every transfer it started has ended: a
 * transfer ends there when the final's acknowledgement arrives, which may
 * be after the client has returned. */
static struct ho_engine_stats engine(struct sim_peer *p)
{
  struct ho_engine_stats s;
  for (int i = 0; i < 2500; i++) { /* 5 s: a loaded host is slow */
    ho_engine_get_stats(p->engine, &s);
    if (s.completed + s.failed == s.started && s.conn_idle == s.conn_live)
      break;
    usleep(2000);
  }
  return s;
}

static void steady_state_makes_no_transitions(void **state)
{
  struct fixture *f = *state;
  assert_int_equal(xfer(f, &f->a, HIPOBJ_RDMA_OP_GET, 0, 4096), hipObjSuccess);
  uint64_t ct = pool().qp_transitions, st = engine(&f->a).qp_transitions;
  for (int i = 0; i < 100; i++)
    assert_int_equal(xfer(f, &f->a, i % 2 ? HIPOBJ_RDMA_OP_PUT : HIPOBJ_RDMA_OP_GET,
                          (uint64_t)i * 512, 1 + (size_t)i * 977),
                     hipObjSuccess);
  struct ho_pool_stats ps = pool();
  struct ho_engine_stats es = engine(&f->a);
  assert_int_equal(ps.qp_transitions, ct);
  assert_int_equal(es.qp_transitions, st);
  assert_int_equal(ps.connections_made, 1);
  assert_int_equal(ps.connections_reused, 100);
  assert_int_equal(es.conn_made, 1);
  assert_int_equal(es.conn_reused, 100);
  assert_int_equal(es.completed, 101);
  assert_int_equal(es.conn_live, 1);
  hipObjInfo_t info = {.size = sizeof info};
  assert_int_equal(hipObjGetInfo(&info).opError, hipObjSuccess);
  assert_int_equal(info.size, sizeof info);
  assert_int_equal(info.connectionsMade, 1);
  assert_int_equal(info.connectionsReused, 100);
  assert_int_equal(info.qpTransitions, ps.qp_transitions);
  assert_int_equal(info.connectionsLive, 1);
  assert_int_equal(info.connectionsIdle, 1);
}

/* With a hint per server, each keeps its own connection. */
static void two_servers_with_hints(void **state)
{
  struct fixture *f = *state;
  for (int i = 0; i < 20; i++) {
    struct sim_peer *p = i % 2 ? &f->b : &f->a;
    hipObjSetPeerHint(i % 2 ? "http://b" : "http://a");
    assert_int_equal(xfer(f, p, HIPOBJ_RDMA_OP_GET, (uint64_t)i, 8192), hipObjSuccess);
  }
  hipObjSetPeerHint(NULL);
  assert_int_equal(pool().connections_made, 2);
  assert_int_equal(pool().connections_reused, 18);
  assert_int_equal(engine(&f->a).conn_reused, 9);
  assert_int_equal(engine(&f->b).conn_reused, 9);
}

/* Without hints, a proposal reaches the other server (QP numbers of the
 * two servers differ, the tag and key do not match): it answers with a new
 * connection in the same round trip, and the client retires the old one. */
static void proposal_to_another_server(void **state)
{
  struct fixture *f = *state;
  for (int i = 0; i < 10; i++)
    assert_int_equal(xfer(f, i % 2 ? &f->b : &f->a, HIPOBJ_RDMA_OP_GET,
                          (uint64_t)i * 3, 4096),
                     hipObjSuccess);
  struct ho_pool_stats ps = pool();
  assert_int_equal(ps.connections_made, 10);
  assert_int_equal(ps.connections_reused, 0);
  assert_int_equal(ps.retired_replaced, 9);
  assert_int_equal(engine(&f->a).failed + engine(&f->b).failed, 0);
}

static void server_restart(void **state)
{
  struct fixture *f = *state;
  assert_int_equal(xfer(f, &f->a, HIPOBJ_RDMA_OP_GET, 0, 4096), hipObjSuccess);
  sim_peer_destroy(&f->a);
  assert_int_equal(sim_peer_create(&f->a, &f->w.plat, NULL, OBJ_SIZE), 0);
  fill(f->a.object, OBJ_SIZE, 3);
  assert_int_equal(xfer(f, &f->a, HIPOBJ_RDMA_OP_GET, 0, 4096), hipObjSuccess);
  assert_int_equal(xfer(f, &f->a, HIPOBJ_RDMA_OP_PUT, 64, 100), hipObjSuccess);
  assert_int_equal(pool().retired_replaced, 1);
  assert_int_equal(engine(&f->a).conn_made, 1);
  assert_int_equal(engine(&f->a).conn_reused, 1);
}

static void break_client_qp_next(struct sim_request *r)
{
  r->on_send = NULL; /* the first attempt only */
  fake_device_force_error(WORLD_CLIENT_NIC, 1, IBV_WC_WR_FLUSH_ERR);
}

/* Data first to a server that no longer knows the connection (here: it
 * restarted): its offer is a new connection, so the window bound on the
 * kept QP must move; when that QP broke after the bind (its invalidation
 * fails: here the next client completion is forced to an error, as when
 * the QP went to error under the fabric), the attempt is retried as a
 * broken kept connection, not failed. (A user benchmark under loss with
 * jitter failed a 256 KiB PUT so, with "cannot invalidate a memory
 * window".) */
static void window_move_from_a_broken_qp_is_retried(void **state)
{
  struct fixture *f = *state;
  assert_int_equal(xfer(f, &f->a, HIPOBJ_RDMA_OP_GET, 0, 4096), hipObjSuccess);
  sim_peer_destroy(&f->a);
  assert_int_equal(sim_peer_create(&f->a, &f->w.plat, NULL, OBJ_SIZE), 0);
  fill(f->a.object, OBJ_SIZE, 4);
  hipObjInfo_t i0 = world_info();
  struct sim_request r;
  sim_request_init(&r, &f->a, HIPOBJ_RDMA_OP_PUT, 128, 8192);
  r.on_send = break_client_qp_next;
  fill(f->buf, 8192, 77);
  assert_int_equal(hipObjPut(NULL, f->buf, 8192, 0, &sim_ops, &r).opError,
                   hipObjSuccess);
  assert_memory_equal(f->a.object + 128, f->buf, 8192);
  hipObjInfo_t i1 = world_info();
  assert_int_equal(i1.retriesKeptBroken - i0.retriesKeptBroken, 1);
  assert_int_equal(fake_mw_bound_count(WORLD_CLIENT_NIC), 0);
}

/* A token that names a key QP as new (tag 0): the process that announced
 * it is gone and its QP number was given to a new QP. The server retires
 * the stale connection and connects anew; the real owner's next proposal
 * gets a new connection too. */
static void stale_key_is_retired(void **state)
{
  struct fixture *f = *state;
  assert_int_equal(xfer(f, &f->a, HIPOBJ_RDMA_OP_GET, 0, 4096), hipObjSuccess);
  struct ho_instance *inst = ho_instance_get();
  struct ho_lease l;
  assert_int_equal(ho_pool_acquire(inst->pool, false, true, 0, &l), hipObjSuccess);
  struct ho_token t;
  ho_conn_token(l.link->spare, &t);
  t.qpn = ho_token_qpn(&t); /* tag 0: "a new QP" */
  t.rkey = 1;
  t.addr = 0x1000;
  t.len = 64;
  ho_pool_release(&l);
  ho_instance_put(inst);
  engine(&f->a); /* the first transfer's connection is idle */
  char tok[HO_TOKEN_HEX + 1], reply[HO_ENGINE_REPLY_MAX];
  ho_token_encode(&t, tok);
  struct sim_request r;
  sim_request_init(&r, &f->a, HIPOBJ_RDMA_OP_GET, 0, 64);
  assert_int_equal(sim_ops.sendRequest(&r, tok, HO_TOKEN_HEX), 0);
  assert_int_equal(r.start_result, HO_ENGINE_STARTED);
  memcpy(reply, r.reply, sizeof reply);
  struct ho_reply rep;
  struct ho_conn_offer offer;
  assert_true(ho_reply_parse(reply, strlen(reply), &rep));
  assert_true(ho_offer_decode(&rep.peer, &offer));
  assert_false(offer.reuse);
  assert_int_equal(engine(&f->a).retired_stale, 1);
  assert_int_equal(xfer(f, &f->a, HIPOBJ_RDMA_OP_GET, 128, 4096), hipObjSuccess);
  assert_int_equal(pool().retired_replaced, 1);
}

/* Data first: a kept connection that cannot bind the window before the
 * request (here the bind's completion fails) is replaced in the same
 * call, and the server retires the stale key; nothing is retried. */
static void data_first_bind_finds_broken_connection(void **state)
{
  struct fixture *f = *state;
  assert_int_equal(xfer(f, &f->a, HIPOBJ_RDMA_OP_GET, 0, 4096), hipObjSuccess);
  /* Until the final's acknowledgement, the first connection is busy on
   * the server: a QP broken before it arrives ends that transfer as a
   * failure (retry counter exceeded), not as stale. */
  engine(&f->a);
  fake_device_force_error(WORLD_CLIENT_NIC, 1, IBV_WC_REM_ACCESS_ERR);
  assert_int_equal(xfer(f, &f->a, HIPOBJ_RDMA_OP_GET, 0, 4096), hipObjSuccess);
  assert_int_equal(pool().kept_broken, 1);
  assert_int_equal(pool().retired_failure, 0);
  assert_int_equal(pool().connections_made, 2);
  assert_int_equal(engine(&f->a).retired_stale, 1);
  assert_int_equal(engine(&f->a).conn_made, 2);
}

static int setup_data_first_server(void **state)
{
  struct ho_engine_config c = {.data_first = true};
  return make(state, &c, 0);
}

/* Version 3: on the connection it keeps, a server that speaks data first
 * moves the payload before it answers "done:<bytes>": no ready, no
 * final, no QP transition; the first transfer (a new connection) answers
 * first. Every byte checked, both directions. */
static void data_first_on_kept_connections(void **state)
{
  struct fixture *f = *state;
  assert_int_equal(xfer(f, &f->b, HIPOBJ_RDMA_OP_GET, 0, 4096), hipObjSuccess);
  uint64_t ct = pool().qp_transitions, st = engine(&f->b).qp_transitions;
  for (int i = 0; i < 20; i++)
    assert_int_equal(xfer(f, &f->b, i % 2 ? HIPOBJ_RDMA_OP_PUT : HIPOBJ_RDMA_OP_GET,
                          (uint64_t)i * 4096, 1 + (size_t)i * 3001),
                     hipObjSuccess);
  struct ho_engine_stats e = engine(&f->b);
  assert_int_equal(e.data_first, 20);
  assert_int_equal(e.completed, 21);
  assert_int_equal(e.conn_made, 1);
  assert_int_equal(pool().data_first, 20);
  assert_int_equal(pool().connections_reused, 20); /* hipobj bench's reuse */
  assert_int_equal(world_info().transfersDataFirst, 20);
  assert_int_equal(pool().qp_transitions, ct);
  assert_int_equal(e.qp_transitions, st);
}

/* Version 3: the server's RDMA fails before it answers (an error
 * completion on its side): it answers "rdma-failed" at once, and the
 * client tries again on a new connection, within the same call. */
static void data_first_rdma_failure_is_retried(void **state)
{
  struct fixture *f = *state;
  assert_int_equal(xfer(f, &f->b, HIPOBJ_RDMA_OP_PUT, 0, 4096), hipObjSuccess);
  engine(&f->b); /* its final acknowledged: the next completion is a WRITE's */
  uint64_t before = world_info().retriesServerRdma;
  fake_device_force_error(WORLD_SERVER_NIC, 1, IBV_WC_RETRY_EXC_ERR);
  assert_int_equal(xfer(f, &f->b, HIPOBJ_RDMA_OP_GET, 0, 8192), hipObjSuccess);
  assert_int_equal(world_info().retriesServerRdma, before + 1);
  struct ho_engine_stats e = engine(&f->b);
  assert_int_equal(e.rdma_failed, 1);
  assert_int_equal(e.retired_failure, 1);
  assert_int_equal(pool().retired_failure, 1);
  assert_int_equal(e.conn_made, 2); /* the retry's connection */
  /* and the next transfer rides it, data first */
  assert_int_equal(xfer(f, &f->b, HIPOBJ_RDMA_OP_PUT, 64, 1000), hipObjSuccess);
  assert_int_equal(engine(&f->b).data_first, 2);
}

static int setup_answer_first(void **state)
{
  answer_first_next = true; /* HIPOBJ_DATA_FIRST=0 */
  return make(state, NULL, 0);
}

/* Any failure retires the connection on both sides; the retry (inside
 * the same call) makes a new one, which the next transfer rides. */
static void failure_retires_both_sides(void **state)
{
  struct fixture *f = *state;
  assert_int_equal(xfer(f, &f->a, HIPOBJ_RDMA_OP_GET, 0, 4096), hipObjSuccess);
  fake_device_force_error(WORLD_CLIENT_NIC, 1, IBV_WC_REM_ACCESS_ERR);
  assert_int_equal(xfer(f, &f->a, HIPOBJ_RDMA_OP_GET, 0, 4096), hipObjSuccess);
  assert_int_equal(xfer(f, &f->a, HIPOBJ_RDMA_OP_GET, 0, 4096), hipObjSuccess);
  assert_int_equal(pool().retired_failure, 1);
  assert_int_equal(pool().connections_made, 2);
  for (int i = 0; i < 300 && engine(&f->a).retired_failure == 0; i++)
    usleep(10000); /* the server's side ends at its RDMA timeout */
  assert_int_equal(engine(&f->a).retired_failure, 1);
  assert_int_equal(engine(&f->a).conn_made, 2);
}

static int setup_small_server(void **state)
{
  struct ho_engine_config c = {.max_connections = 1};
  return make(state, &c, 0);
}

/* A server with room for one connection evicts the idle one. */
static void capacity_evicts_least_recently_used(void **state)
{
  struct fixture *f = *state;
  for (int i = 0; i < 6; i++) {
    hipObjSetPeerHint(i % 2 ? "x" : "y"); /* two links, both to server b */
    assert_int_equal(xfer(f, &f->b, HIPOBJ_RDMA_OP_GET, 0, 4096), hipObjSuccess);
    engine(&f->b); /* idle again: while it finishes, a new one gets 503 */
  }
  hipObjSetPeerHint(NULL);
  assert_int_equal(engine(&f->b).retired_evicted, 5);
  assert_int_equal(engine(&f->b).conn_live, 1);
  assert_int_equal(pool().retired_replaced, 4);
}

static int setup_idle(void **state)
{
  struct ho_engine_config c = {.idle_timeout_ms = 50};
  return make(state, &c, 100);
}

static void idle_connections_expire(void **state)
{
  struct fixture *f = *state;
  assert_int_equal(xfer(f, &f->b, HIPOBJ_RDMA_OP_GET, 0, 4096), hipObjSuccess);
  usleep(500 * 1000); /* the server's reaper runs every 200 ms */
  assert_int_equal(engine(&f->b).retired_idle, 1);
  assert_int_equal(engine(&f->b).conn_live, 0);
  assert_int_equal(xfer(f, &f->b, HIPOBJ_RDMA_OP_GET, 0, 4096), hipObjSuccess);
  assert_int_equal(pool().retired_idle, 1); /* the client's own limit */
  assert_int_equal(pool().connections_made, 2);
}

static int setup_v1_server(void **state)
{
  struct ho_engine_config c = {.fault_v1 = true};
  return make(state, &c, 0);
}

/* A version-1 server: every transfer on a new connection, retired after. */
static void version1_server(void **state)
{
  struct fixture *f = *state;
  for (int i = 0; i < 5; i++)
    assert_int_equal(xfer(f, &f->b, i % 2 ? HIPOBJ_RDMA_OP_PUT : HIPOBJ_RDMA_OP_GET,
                          0, 3000),
                     hipObjSuccess);
  assert_int_equal(pool().connections_made, 5);
  assert_int_equal(pool().retired_one_shot, 5);
  assert_int_equal(pool().connections_reused, 0);
}

/* A raw client on device d: a new QP asks p for a GET of 4096 bytes into
 * mem (registered as mr), connects to the server's offer and sends a ready
 * of its own making (tmpl, with the transfer's cookie; with self_spare,
 * naming the QP itself as the spare, so the server keeps the connection).
 * Returns the final it gets; *out is the client's QP. */
static struct ho_msg raw_get(struct sim_peer *p, struct ho_device *d,
                             struct ibv_mr *mr, uint8_t *mem,
                             const struct ho_msg *tmpl, bool self_spare,
                             struct ho_conn **out)
{
  struct ho_conn_attr attr = {
      .max_send_wr = 8, .max_recv_wr = 8,
      .qp_access = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE};
  struct ho_conn *c = NULL;
  assert_int_equal(ho_conn_create(d, &attr, &c), hipObjSuccess);
  struct ho_token t;
  ho_conn_token(c, &t);
  t.rkey = mr->rkey;
  t.addr = (uintptr_t)mem;
  t.len = 4096;
  char tok[HO_TOKEN_HEX + 1];
  ho_token_encode(&t, tok);
  struct sim_request r;
  sim_request_init(&r, p, HIPOBJ_RDMA_OP_GET, 0, 4096);
  assert_int_equal(sim_ops.sendRequest(&r, tok, HO_TOKEN_HEX), 0);
  struct ho_reply rep;
  assert_true(ho_reply_parse(r.reply, strlen(r.reply), &rep));
  uint64_t cookie = rep.peer.addr;
  assert_int_equal(ho_conn_post_msg_recv(c), hipObjSuccess);
  assert_int_equal(ho_conn_connect(c, &rep.peer,
                                   ho_psn_from_cookie(cookie, HO_PSN_CLIENT_TO_SERVER),
                                   ho_psn_from_cookie(cookie, HO_PSN_SERVER_TO_CLIENT)),
                   hipObjSuccess);
  struct ho_msg ready = *tmpl;
  ready.cookie = cookie;
  if (self_spare)
    ready.next_qpn = c->qp->qp_num;
  assert_int_equal(ho_conn_send_msg(c, &ready), hipObjSuccess);
  bool pending = true;
  struct ho_msg fin;
  assert_int_equal(ho_conn_wait_msg(c, &pending, UINT64_MAX, &fin), hipObjSuccess);
  *out = c;
  return fin;
}

static struct ibv_mr *raw_reg(struct ho_device *d, uint8_t *mem)
{
  return fake_verbs_ops.reg_mr(d->pd, mem, 4096,
                               IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
                                   IBV_ACCESS_LOCAL_WRITE);
}

/* raw_get on a device of its own, the client's QP retired after it. */
static struct ho_msg raw_ready(struct fixture *f, const struct ho_msg *tmpl,
                               uint8_t *mem)
{
  struct ho_device *d = NULL;
  assert_int_equal(ho_device_open(&fake_verbs_ops, &f->w.topo, WORLD_CLIENT_NIC, &d),
                   hipObjSuccess);
  struct ibv_mr *mr = raw_reg(d, mem);
  struct ho_conn *c = NULL;
  struct ho_msg fin = raw_get(&f->a, d, mr, mem, tmpl, false, &c);
  ho_conn_retire(c);
  ho_conn_destroy(c);
  fake_verbs_ops.dereg_mr(mr);
  ho_device_close(d);
  return fin;
}

/* A ready whose status is not 0 is malformed: final status 4, nothing
 * moves. */
static void ready_with_status_is_refused(void **state)
{
  struct fixture *f = *state;
  uint8_t *mem = malloc(4096);
  memset(mem, 0xee, 4096);
  struct ho_msg ready = {.type = HO_MSG_READY, .version = HO_PROTO_V2,
                         .status = 1, .bytes = 4096, .op = HO_WIRE_GET};
  struct ho_msg fin = raw_ready(f, &ready, mem);
  assert_int_equal(fin.status, HO_FINAL_BAD_REQUEST);
  assert_int_equal(fin.bytes, 0);
  for (int i = 0; i < 4096; i++)
    assert_int_equal(mem[i], 0xee);
  ready.status = 0; /* the same ready, well formed, moves the bytes */
  fin = raw_ready(f, &ready, mem);
  assert_int_equal(fin.status, HO_FINAL_OK);
  assert_memory_equal(mem, f->a.object, 4096);
  free(mem);
}

/* The engine refuses a ready for another operation (a GET token served as
 * a PUT): final status 4, nothing moves. */
static void ready_mismatch_is_refused(void **state)
{
  struct fixture *f = *state;
  uint8_t *mem = malloc(4096);
  memset(mem, 0xee, 4096);
  struct ho_msg ready = {.type = HO_MSG_READY, .version = HO_PROTO_V2,
                         .bytes = 4096, .op = HO_WIRE_PUT};
  struct ho_msg fin = raw_ready(f, &ready, mem);
  assert_int_equal(fin.status, HO_FINAL_BAD_REQUEST);
  for (int i = 0; i < 4096; i++)
    assert_int_equal(mem[i], 0xee);
  free(mem);
}

/* A version-1 client (ready version 1, no spare): the server serves it and
 * retires the connection after the transfer. */
static void version1_client(void **state)
{
  struct fixture *f = *state;
  struct ho_device *d = NULL;
  assert_int_equal(ho_device_open(&fake_verbs_ops, &f->w.topo, WORLD_CLIENT_NIC, &d),
                   hipObjSuccess);
  uint8_t *mem = calloc(1, 4096);
  struct ibv_mr *mr = raw_reg(d, mem);
  struct ho_msg ready = {.type = HO_MSG_READY, .version = HO_PROTO_V1,
                         .bytes = 4096};
  struct ho_conn *c = NULL;
  struct ho_msg fin = raw_get(&f->a, d, mr, mem, &ready, false, &c);
  assert_int_equal(fin.version, HO_PROTO_V1);
  assert_int_equal(fin.status, HO_FINAL_OK);
  assert_memory_equal(mem, f->a.object, 4096);
  /* The client's QP lives until the server has retired its side: gone
   * earlier, the server's last completion would fail and count as a
   * failure, not as a one-shot retirement. */
  for (int i = 0; i < 50 && engine(&f->a).retired_one_shot == 0; i++)
    usleep(10000);
  assert_int_equal(engine(&f->a).retired_one_shot, 1);
  ho_conn_retire(c);
  ho_conn_destroy(c);
  fake_verbs_ops.dereg_mr(mr);
  free(mem);
  ho_device_close(d);
}

/* A reply that claims reuse of a connection the client did not propose
 * fails the transfer; nothing moves. */
static void offer_not_proposed_fails(void **state)
{
  struct fixture *f = *state;
  char *tok = NULL;
  assert_int_equal(hipObjGetRdmaToken(f->buf, 4096, HIPOBJ_RDMA_OP_GET, &tok).opError,
                   hipObjSuccess);
  struct sim_request r;
  sim_request_init(&r, &f->a, HIPOBJ_RDMA_OP_GET, 0, 4096);
  assert_int_equal(sim_ops.sendRequest(&r, tok, HO_TOKEN_HEX), 0);
  struct ho_reply rep;
  assert_true(ho_reply_parse(r.reply, strlen(r.reply), &rep));
  struct ho_conn_offer o = {
      .version = HO_PROTO_V2, .reuse = true, .conn_id = 0x8100000000000001ull};
  ho_offer_encode(&o, &rep.peer);
  char forged[HO_ENGINE_REPLY_MAX] = "200:";
  ho_token_encode(&rep.peer, forged + 4);
  memset(f->buf, 0xee, 4096);
  assert_int_equal(hipObjCompleteRdmaTransfer(tok, forged, strlen(forged)).opError,
                   hipObjRdmaError);
  for (int i = 0; i < 4096; i++)
    assert_int_equal(f->buf[i], 0xee);
  assert_int_equal(hipObjPutRdmaToken(tok).opError, hipObjSuccess);
  assert_int_equal(xfer(f, &f->a, HIPOBJ_RDMA_OP_GET, 0, 4096), hipObjSuccess);
}

static int setup_four_workers(void **state)
{
  /* a start finding every worker busy waits 20 ms in the queue */
  struct ho_engine_config c = {.qps = 4, .ready_grace_ms = 50,
                               .queue_wait_ms = 20};
  return make(state, &c, 0);
}

/* Tokens that never send ready (issue 11: 16 of them held every worker
 * for the 10 s ready timeout, and every other request got 503): with every
 * worker busy, one that has waited longer than ready_grace_ms for its
 * ready is cancelled for the new request. */
static void silent_tokens_are_reclaimed(void **state)
{
  struct fixture *f = *state;
  struct ho_token t;
  struct ho_instance *inst = ho_instance_get();
  struct ho_lease l;
  assert_int_equal(ho_pool_acquire(inst->pool, false, true, 0, &l), hipObjSuccess);
  ho_conn_token(l.link->spare, &t);
  ho_pool_release(&l);
  ho_instance_put(inst);
  t.gid[15] ^= 0x5a; /* a host that never sends ready */
  t.rkey = 1;
  t.addr = 0x1000;
  t.len = 64;
  for (int i = 0; i < 4; i++) {
    t.qpn = 0x7000 + (uint32_t)i;
    char tok[HO_TOKEN_HEX + 1];
    ho_token_encode(&t, tok);
    struct sim_request r;
    sim_request_init(&r, &f->b, HIPOBJ_RDMA_OP_GET, 0, 64);
    assert_int_equal(sim_ops.sendRequest(&r, tok, HO_TOKEN_HEX), 0);
    assert_int_equal(r.start_result, HO_ENGINE_STARTED);
  }
  /* All four wait for ready at the dispatcher, none for long: 503. */
  struct ho_engine_stats s;
  ho_engine_get_stats(f->b.engine, &s);
  assert_int_equal(s.awaiting_ready, 4);
  assert_int_equal(xfer(f, &f->b, HIPOBJ_RDMA_OP_GET, 0, 4096), hipObjS3Error);
  usleep(100 * 1000);
  assert_int_equal(xfer(f, &f->b, HIPOBJ_RDMA_OP_GET, 0, 4096), hipObjSuccess);
  assert_int_equal(xfer(f, &f->b, HIPOBJ_RDMA_OP_PUT, 0, 4096), hipObjSuccess);
  ho_engine_get_stats(f->b.engine, &s);
  assert_true(s.ready_reclaimed >= 1 && s.ready_reclaimed <= 2);
  assert_true(s.timed_out >= 1);
}

/* The threads of this process. */
static unsigned threads(void)
{
  DIR *d = opendir("/proc/self/task");
  assert_non_null(d);
  unsigned n = 0;
  for (struct dirent *e; (e = readdir(d));)
    n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

#define KEPT 1000

/* Issue 23: 1,000 idle kept connections cost the engine no thread. Its
 * threads are its workers and the dispatcher, made with it; every ready
 * was waited for by the dispatcher, and every byte arrived. */
static void kept_connections_cost_no_threads(void **state)
{
  struct fixture *f = *state;
  struct ho_engine_config cfg = {.qps = 4, .max_connections = 1024};
  struct sim_peer p;
  unsigned before = threads();
  assert_int_equal(sim_peer_create(&p, &f->w.plat, &cfg, OBJ_SIZE), 0);
  fill(p.object, OBJ_SIZE, 3);
  unsigned with_engine = threads();
  assert_int_equal(with_engine - before, cfg.qps + 1);
  struct ho_device *d = NULL;
  assert_int_equal(ho_device_open(&fake_verbs_ops, &f->w.topo, WORLD_CLIENT_NIC, &d),
                   hipObjSuccess);
  uint8_t *mem = calloc(1, 4096);
  struct ibv_mr *mr = raw_reg(d, mem);
  struct ho_conn **cs = calloc(KEPT, sizeof *cs);
  const struct ho_msg ready = {.type = HO_MSG_READY, .version = HO_PROTO_V2,
                               .bytes = 4096, .op = HO_WIRE_GET};
  for (unsigned i = 0; i < KEPT; i++) {
    memset(mem, 0xee, 4096);
    assert_int_equal(raw_get(&p, d, mr, mem, &ready, true, &cs[i]).status,
                     HO_FINAL_OK);
    assert_memory_equal(mem, p.object, 4096);
  }
  struct ho_engine_stats s = engine(&p);
  assert_int_equal(s.conn_made, KEPT);
  assert_int_equal(s.conn_live, KEPT);
  assert_int_equal(s.conn_idle, KEPT);
  assert_int_equal(s.completed, KEPT);
  assert_int_equal(s.readies_dispatched, KEPT);
  assert_int_equal(s.awaiting_ready, 0);
  assert_int_equal(threads(), with_engine);
  sim_peer_destroy(&p);
  for (unsigned i = 0; i < KEPT; i++) {
    ho_conn_retire(cs[i]);
    ho_conn_destroy(cs[i]);
  }
  free(cs);
  fake_verbs_ops.dereg_mr(mr);
  free(mem);
  ho_device_close(d);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(steady_state_makes_no_transitions, setup, teardown),
      cmocka_unit_test_setup_teardown(two_servers_with_hints, setup, teardown),
      cmocka_unit_test_setup_teardown(proposal_to_another_server, setup, teardown),
      cmocka_unit_test_setup_teardown(server_restart, setup, teardown),
      cmocka_unit_test_setup_teardown(window_move_from_a_broken_qp_is_retried,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(stale_key_is_retired, setup, teardown),
      cmocka_unit_test_setup_teardown(failure_retires_both_sides,
                                      setup_answer_first, teardown),
      cmocka_unit_test_setup_teardown(data_first_bind_finds_broken_connection,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(data_first_on_kept_connections,
                                      setup_data_first_server, teardown),
      cmocka_unit_test_setup_teardown(data_first_rdma_failure_is_retried,
                                      setup_data_first_server, teardown),
      cmocka_unit_test_setup_teardown(capacity_evicts_least_recently_used,
                                      setup_small_server, teardown),
      cmocka_unit_test_setup_teardown(idle_connections_expire, setup_idle, teardown),
      cmocka_unit_test_setup_teardown(version1_server, setup_v1_server, teardown),
      cmocka_unit_test_setup_teardown(version1_client, setup, teardown),
      cmocka_unit_test_setup_teardown(offer_not_proposed_fails, setup, teardown),
      cmocka_unit_test_setup_teardown(silent_tokens_are_reclaimed,
                                      setup_four_workers, teardown),
      cmocka_unit_test_setup_teardown(ready_with_status_is_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(ready_mismatch_is_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(kept_connections_cost_no_threads, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
