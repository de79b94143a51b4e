/* SPDX-License-Identifier: MIT */
#include "engine.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/thread_safety.h"
#include "rdma/select.h"
#include "rdma/transport.h"

#define WRID_CHUNK 0x4348000000000000ull /* "CH" + chunk index */

/* One server QP and the registered chunk buffers it moves data through. */
struct slot {
  struct ho_engine *e;
  struct ho_conn *conn;
  uint8_t *chunks;
  struct ibv_mr *chunks_mr;
  /* The transfer in progress, owned by the slot's thread. */
  struct ho_token client;
  int op;
  uint64_t size, cookie;
  struct ho_engine_io io;
  pthread_t thread;
  bool busy;
};

struct ho_engine {
  struct ho_engine_config cfg;
  const struct ho_platform *plat;
  struct ho_device *dev;
  struct slot *slots;
  ho_mutex mu;
  pthread_cond_t idle;
  unsigned running HO_GUARDED_BY(mu);
  struct ho_engine_stats stats HO_GUARDED_BY(mu);
};

static const struct ho_conn_attr server_conn_attr = {
    .max_send_wr = 64, .max_recv_wr = 4, .qp_access = 0};

static void set_defaults(struct ho_engine_config *c)
{
  if (!c->qps)
    c->qps = 16;
  if (!c->chunk_size)
    c->chunk_size = 1u << 20;
  if (!c->depth)
    c->depth = 4;
  if (c->depth > 32)
    c->depth = 32;
  if (!c->ready_timeout_ms)
    c->ready_timeout_ms = 10000;
  if (!c->rdma_timeout_ms)
    c->rdma_timeout_ms = 10000;
}

static hipObjOpError_t choose_device(const struct ho_platform *p,
                                     const char *nic, char out[HO_NIC_NAME_MAX])
{
  static _Thread_local struct ho_nic_info nics[HO_MAX_NICS];
  size_t n = 0;
  if (p->topo->ops->list_nics(p->topo, nics, HO_MAX_NICS, &n) != hipObjSuccess)
    n = 0;
  if (nic)
    return ho_select_nic(nics, n, NULL, nic, out);
  for (size_t i = 0; i < n; i++)
    if (nics[i].active_port > 0) {
      memcpy(out, nics[i].name, HO_NIC_NAME_MAX);
      return hipObjSuccess;
    }
  return hipObjNicNotFound;
}

static hipObjOpError_t slot_init(struct ho_engine *e, struct slot *s)
{
  size_t bytes = e->cfg.chunk_size * e->cfg.depth;
  s->e = e;
  hipObjOpError_t err = ho_conn_create(e->dev, &server_conn_attr, &s->conn);
  if (err != hipObjSuccess)
    return err;
  s->chunks = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
  if (!s->chunks)
    return hipObjInternalError;
  s->chunks_mr = e->dev->v->reg_mr(e->dev->pd, s->chunks, bytes,
                                   IBV_ACCESS_LOCAL_WRITE);
  return s->chunks_mr ? hipObjSuccess : hipObjRdmaError;
}

static void slot_fini(struct ho_engine *e, struct slot *s)
{
  if (s->chunks_mr)
    e->dev->v->dereg_mr(s->chunks_mr);
  free(s->chunks);
  ho_conn_destroy(s->conn);
}

hipObjOpError_t ho_engine_create(const struct ho_platform *plat,
                                 const struct ho_engine_config *cfg,
                                 struct ho_engine **out)
{
  char name[HO_NIC_NAME_MAX];
  if (!plat->verbs)
    return hipObjNicNotFound;
  struct ho_engine *e = calloc(1, sizeof *e);
  if (!e)
    return hipObjInternalError;
  e->cfg = *cfg;
  set_defaults(&e->cfg);
  e->plat = plat;
  ho_mutex_init(&e->mu);
  pthread_cond_init(&e->idle, NULL);
  hipObjOpError_t err = choose_device(plat, cfg->nic, name);
  if (err == hipObjSuccess)
    err = ho_device_open(plat->verbs, plat->topo, name, &e->dev);
  if (err == hipObjSuccess) {
    e->slots = calloc(e->cfg.qps, sizeof *e->slots);
    err = e->slots ? hipObjSuccess : hipObjInternalError;
  }
  for (unsigned i = 0; err == hipObjSuccess && i < e->cfg.qps; i++)
    err = slot_init(e, &e->slots[i]);
  if (err != hipObjSuccess) {
    ho_engine_destroy(e);
    return err;
  }
  *out = e;
  return hipObjSuccess;
}

void ho_engine_destroy(struct ho_engine *e)
{
  if (!e)
    return;
  ho_mutex_lock(&e->mu);
  while (e->running > 0)
    ho_cond_wait(&e->idle, &e->mu);
  ho_mutex_unlock(&e->mu);
  for (unsigned i = 0; e->slots && i < e->cfg.qps; i++)
    slot_fini(e, &e->slots[i]);
  free(e->slots);
  ho_device_close(e->dev);
  pthread_cond_destroy(&e->idle);
  ho_mutex_destroy(&e->mu);
  free(e);
}

void ho_engine_get_stats(struct ho_engine *e, struct ho_engine_stats *out)
{
  ho_mutex_lock(&e->mu);
  *out = e->stats;
  ho_mutex_unlock(&e->mu);
}

const char *ho_engine_device_name(const struct ho_engine *e)
{
  return e->dev->name;
}

static uint64_t new_cookie(void)
{
  uint64_t c = 0;
  while (c == 0)
    if (getrandom(&c, sizeof c, 0) != sizeof c)
      c = ho_now_ns() ^ (uint64_t)(uintptr_t)&c;
  return c;
}

static struct slot *claim_slot(struct ho_engine *e)
{
  struct slot *s = NULL;
  ho_mutex_lock(&e->mu);
  for (unsigned i = 0; i < e->cfg.qps && !s; i++)
    if (!e->slots[i].busy && e->slots[i].conn)
      s = &e->slots[i];
  if (s) {
    s->busy = true;
    e->running++;
    e->stats.started++;
  }
  ho_mutex_unlock(&e->mu);
  return s;
}

/* ---- the transfer, on the slot's thread --------------------------------- */

static hipObjOpError_t wait_completion(struct slot *s, struct ibv_wc *wc)
{
  uint64_t deadline = ho_now_ns() + (uint64_t)s->e->cfg.rdma_timeout_ms * 1000000u;
  unsigned round = 0;
  for (;;) {
    int n = ho_conn_poll(s->conn, wc, 1);
    if (n < 0)
      return hipObjRdmaError;
    if (n == 1) {
      if (wc->status == IBV_WC_SUCCESS)
        return hipObjSuccess;
      ho_warn("engine: QP 0x%x: completion error status %d (vendor 0x%x)",
              s->conn->qp->qp_num, (int)wc->status, wc->vendor_err);
      return hipObjRdmaError;
    }
    if (ho_now_ns() >= deadline)
      return hipObjRdmaError;
    ho_backoff(&round, 200);
  }
}

static hipObjOpError_t post_chunk(struct slot *s, unsigned idx, uint64_t off,
                                  size_t n)
{
  uint8_t *buf = s->chunks + (size_t)idx * s->e->cfg.chunk_size;
  struct ibv_sge sge = {(uintptr_t)buf, (uint32_t)n, s->chunks_mr->lkey};
  struct ibv_send_wr wr = {
      .wr_id = WRID_CHUNK | idx,
      .sg_list = &sge,
      .num_sge = 1,
      .opcode = s->op == HIPOBJ_RDMA_OP_GET ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
      .send_flags = IBV_SEND_SIGNALED,
      .wr = {.rdma = {.remote_addr = s->client.addr + off, .rkey = s->client.rkey}},
  };
  struct ibv_send_wr *bad = NULL;
  if (s->op == HIPOBJ_RDMA_OP_GET && s->io.read(s->io.ctx, off, buf, n) != 0)
    return hipObjInternalError;
  return s->e->dev->v->post_send(s->conn->qp, &wr, &bad) == 0 ? hipObjSuccess
                                                               : hipObjRdmaError;
}

struct chunk_state {
  uint64_t off[32];
  size_t len[32];
};

/* Move the payload with up to `depth` work requests in flight. Chunks
 * complete in order on an RC QP, so they are recycled round-robin. */
static int move_payload(struct slot *s, uint64_t *moved)
{
  const size_t chunk = s->e->cfg.chunk_size;
  const unsigned depth = s->e->cfg.depth;
  struct chunk_state cs;
  uint64_t next = 0;
  unsigned inflight = 0, head = 0, max_inflight = 0;
  *moved = 0;
  while (*moved < s->size) {
    while (inflight < depth && next < s->size) {
      unsigned idx = (head + inflight) % depth;
      size_t n = s->size - next < chunk ? (size_t)(s->size - next) : chunk;
      hipObjOpError_t err = post_chunk(s, idx, next, n);
      if (err != hipObjSuccess)
        return err == hipObjInternalError ? HO_FINAL_STORE_ERROR : HO_FINAL_RDMA_ERROR;
      cs.off[idx] = next;
      cs.len[idx] = n;
      next += n;
      if (++inflight > max_inflight)
        max_inflight = inflight;
    }
    struct ibv_wc wc;
    if (wait_completion(s, &wc) != hipObjSuccess)
      return HO_FINAL_RDMA_ERROR;
    unsigned idx = (unsigned)(wc.wr_id & 0xffff);
    if ((wc.wr_id & ~0xffffull) != WRID_CHUNK || idx != head)
      return HO_FINAL_RDMA_ERROR;
    if (s->op == HIPOBJ_RDMA_OP_PUT &&
        s->io.write(s->io.ctx, cs.off[idx],
                    s->chunks + (size_t)idx * chunk, cs.len[idx]) != 0)
      return HO_FINAL_STORE_ERROR;
    *moved += cs.len[idx];
    head = (head + 1) % depth;
    inflight--;
  }
  ho_mutex_lock(&s->e->mu);
  if (s->op == HIPOBJ_RDMA_OP_PUT && max_inflight > s->e->stats.max_reads_in_flight)
    s->e->stats.max_reads_in_flight = max_inflight;
  ho_mutex_unlock(&s->e->mu);
  return HO_FINAL_OK;
}

static bool await_ready(struct slot *s, struct ho_msg *ready)
{
  bool no_send = false;
  uint64_t deadline = ho_now_ns() + (uint64_t)s->e->cfg.ready_timeout_ms * 1000000u;
  return ho_conn_wait_msg(s->conn, &no_send, deadline, ready) == hipObjSuccess &&
         ready->type == HO_MSG_READY;
}

static void send_final(struct slot *s, int status, uint64_t bytes)
{
  struct ho_msg fin = {.type = HO_MSG_FINAL,
                       .version = HO_PROTO_VERSION,
                       .status = (uint16_t)status,
                       .cookie = s->cookie ^ (s->e->cfg.fault_bad_cookie ? 1 : 0),
                       .bytes = bytes};
  struct ibv_wc wc;
  bool skip = false;
  ho_mutex_lock(&s->e->mu);
  if (s->e->cfg.fault_skip_final > 0) {
    s->e->cfg.fault_skip_final--;
    skip = true;
  }
  ho_mutex_unlock(&s->e->mu);
  if (skip)
    return;
  if (ho_conn_send_msg(s->conn, &fin) == hipObjSuccess)
    wait_completion(s, &wc); /* so the QP is not reset under the send */
}

static void account(struct ho_engine *e, int op, int status, bool timed_out,
                    uint64_t bytes)
{
  ho_mutex_lock(&e->mu);
  if (status == HO_FINAL_OK) {
    e->stats.completed++;
    if (op == HIPOBJ_RDMA_OP_GET)
      e->stats.bytes_written += bytes;
    else
      e->stats.bytes_read += bytes;
  } else {
    e->stats.failed++;
  }
  if (timed_out)
    e->stats.timed_out++;
  if (status == HO_FINAL_BAD_COOKIE)
    e->stats.bad_cookie++;
  ho_mutex_unlock(&e->mu);
}

/* *finished: io.finish was called (a PUT's commit). */
static int run_transfer(struct slot *s, bool *timed_out, uint64_t *moved,
                        bool *finished)
{
  struct ho_msg ready;
  *moved = 0;
  if (!await_ready(s, &ready)) {
    *timed_out = true; /* the client never came back: reclaim */
    return HO_FINAL_RDMA_ERROR;
  }
  if (ready.cookie != s->cookie) {
    send_final(s, HO_FINAL_BAD_COOKIE, 0);
    return HO_FINAL_BAD_COOKIE;
  }
  if (ready.bytes != s->size) {
    send_final(s, HO_FINAL_BAD_REQUEST, 0);
    return HO_FINAL_BAD_REQUEST;
  }
  int status = move_payload(s, moved);
  if (status == HO_FINAL_OK && s->op == HIPOBJ_RDMA_OP_PUT) {
    *finished = true;
    if (s->io.finish(s->io.ctx, HO_FINAL_OK, *moved) != 0)
      status = HO_FINAL_STORE_ERROR;
  }
  send_final(s, status, status == HO_FINAL_OK ? *moved : 0);
  return status;
}

static void *slot_thread(void *arg)
{
  struct slot *s = arg;
  struct ho_engine *e = s->e;
  bool timed_out = false;
  uint64_t moved = 0;
  bool finished = false;
  int status = run_transfer(s, &timed_out, &moved, &finished);
  if (!finished)
    s->io.finish(s->io.ctx, status, moved);
  account(e, s->op, status, timed_out, moved);
  /* A failed QP is replaced, not reset (see src/rdma/pool.c). */
  if (status != HO_FINAL_OK || ho_conn_reset(s->conn) != hipObjSuccess) {
    ho_conn_destroy(s->conn);
    s->conn = NULL;
    if (ho_conn_create(e->dev, &server_conn_attr, &s->conn) != hipObjSuccess)
      s->conn = NULL;
  }
  ho_mutex_lock(&e->mu);
  s->busy = false;
  e->running--;
  pthread_cond_broadcast(&e->idle);
  ho_mutex_unlock(&e->mu);
  return NULL;
}

static void release_unstarted(struct slot *s)
{
  struct ho_engine *e = s->e;
  ho_conn_reset(s->conn);
  ho_mutex_lock(&e->mu);
  s->busy = false;
  e->running--;
  e->stats.started--;
  pthread_cond_broadcast(&e->idle);
  ho_mutex_unlock(&e->mu);
}

/* Connect the slot's QP to the client, post the receive for ready, and
 * write the reply naming our QP, with the cookie in the address field. */
static bool prepare(struct slot *s, char reply[HO_ENGINE_REPLY_MAX])
{
  struct ho_token mine;
  if (ho_conn_connect(s->conn, &s->client,
                      ho_psn_from_cookie(s->cookie, HO_PSN_SERVER_TO_CLIENT),
                      ho_psn_from_cookie(s->cookie, HO_PSN_CLIENT_TO_SERVER)) !=
          hipObjSuccess ||
      ho_conn_post_msg_recv(s->conn) != hipObjSuccess)
    return false;
  ho_conn_token(s->conn, &mine);
  mine.addr = s->cookie;
  memcpy(reply, "200:", 4);
  ho_token_encode(&mine, reply + 4);
  return true;
}

enum ho_engine_start_result ho_engine_start(struct ho_engine *e,
                                            const char *token, size_t token_len,
                                            int op, uint64_t size,
                                            const struct ho_engine_io *io,
                                            char reply[HO_ENGINE_REPLY_MAX])
{
  struct ho_token client;
  if (!ho_token_decode(token, token_len, &client))
    return HO_ENGINE_BAD_TOKEN;
  if (client.transport != HO_TRANSPORT_RC || client.len != size || size == 0 ||
      (op != HIPOBJ_RDMA_OP_GET && op != HIPOBJ_RDMA_OP_PUT))
    return HO_ENGINE_DECLINE;
  struct slot *s = claim_slot(e);
  if (!s)
    return HO_ENGINE_BUSY;
  s->client = client;
  s->op = op;
  s->size = size;
  s->io = *io;
  s->cookie = new_cookie();
  if (!prepare(s, reply)) {
    release_unstarted(s);
    return HO_ENGINE_DECLINE;
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int rc = pthread_create(&s->thread, &attr, slot_thread, s);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    release_unstarted(s);
    return HO_ENGINE_BUSY;
  }
  return HO_ENGINE_STARTED;
}
