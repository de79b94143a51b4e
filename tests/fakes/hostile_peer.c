/* SPDX-License-Identifier: MIT */
#include "fakes/hostile_peer.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "rdma/protocol.h"


static uint64_t cookie_seq = 0x1234567890abcdefull;

/* Post one RDMA op of len bytes at raddr/rkey from mem and wait for it. */
static enum ibv_wc_status rdma(struct hostile *h, enum ibv_wr_opcode op,
                               uint64_t raddr, uint32_t rkey, uint64_t len)
{
  struct ibv_sge sge = {(uintptr_t)h->mem, (uint32_t)len, h->mr->lkey};
  struct ibv_send_wr wr = {.wr_id = 0x4100, .sg_list = &sge, .num_sge = 1,
                           .opcode = op, .send_flags = IBV_SEND_SIGNALED,
                           .wr.rdma = {raddr, rkey}};
  struct ibv_send_wr *bad = NULL;
  if (h->dev->v->post_send(h->conn->qp, &wr, &bad) != 0)
    return IBV_WC_GENERAL_ERR;
  uint64_t end = ho_now_ns() + 2000000000ull;
  for (;;) {
    struct ibv_wc wc;
    int n = ho_conn_poll(h->conn, &wc, 1);
    if (n == 1 && wc.wr_id == 0x4100)
      return wc.status;
    if (n < 0 || ho_now_ns() > end)
      return IBV_WC_GENERAL_ERR;
    usleep(100);
  }
}

static void send_final(struct hostile *h, const struct ho_msg *ready, int op,
                       uint64_t bytes)
{
  struct ho_msg fin = {.type = HO_MSG_FINAL, .version = ready->version,
                       .status = HO_FINAL_OK, .cookie = h->cookie,
                       .bytes = bytes, .op = (uint8_t)op};
  ho_conn_send_msg(h->conn, &fin);
}

/* The client's call has returned, or the library gave this attempt up and
 * is starting another (its retry ends the attempt first: waiting on here
 * for the call to return would hold that retry forever). */
static void wait_client_returned(const struct hostile *h)
{
  while (!atomic_load(&h->client_returned) && !atomic_load(&h->attempt_over))
    usleep(200);
}

static void *serve(void *arg)
{
  struct hostile *h = arg;
  struct ho_msg ready;
  bool no_send = false;
  const struct ho_token *c = &h->client;
  if (ho_conn_wait_msg(h->conn, &no_send, ho_now_ns() + 2000000000ull,
                       &ready) != hipObjSuccess)
    return NULL;
  uint8_t op = h->put ? HO_WIRE_PUT : HO_WIRE_GET;
  uint64_t len = c->len;
  /* the library retries a refused attempt: the first refusal is the one
   * the tests look at (a later attempt may meet a retired QP instead) */
  const enum ibv_wc_status first = h->attack_status;
  switch (h->attack) {
  case A_NONE:
    if (h->put) {
      h->attack_status = rdma(h, IBV_WR_RDMA_READ, c->addr, c->rkey, len);
      break;
    }
    h->attack_status = rdma(h, IBV_WR_RDMA_WRITE, c->addr, c->rkey, len);
    break;
  case A_PUT_LONGER:
    h->attack_status = rdma(h, IBV_WR_RDMA_READ, c->addr, c->rkey, len + 4096);
    break;
  case A_PUT_SHIFT:
    h->attack_status = rdma(h, IBV_WR_RDMA_READ, c->addr - 4096, c->rkey, len);
    break;
  case A_PUT_WRITE:
    h->attack_status = rdma(h, IBV_WR_RDMA_WRITE, c->addr, c->rkey, len);
    break;
  case A_PUT_AFTER_FINAL:
    h->attack_status = rdma(h, IBV_WR_RDMA_READ, c->addr, c->rkey, len);
    break;
  case A_AFTER_FINAL:
  case A_NO_FINAL:
    h->attack_status = rdma(h, IBV_WR_RDMA_WRITE, c->addr, c->rkey, len);
    break;
  case A_SHIFT:
    h->attack_status = rdma(h, IBV_WR_RDMA_WRITE, c->addr - 4096, c->rkey, len);
    break;
  case A_LONGER:
    len += 4096;
    h->attack_status = rdma(h, IBV_WR_RDMA_WRITE, c->addr, c->rkey, len);
    break;
  case A_AS_PUT:
    op = HO_WIRE_PUT;
    h->attack_status = rdma(h, IBV_WR_RDMA_READ, c->addr, c->rkey, len);
    break;
  case A_REPLAY:
    h->attack_status = rdma(h, IBV_WR_RDMA_WRITE, h->old.addr, h->old.rkey,
                            h->old.len);
    break;
  }
  if (first != IBV_WC_SUCCESS)
    h->attack_status = first;
  if (!h->op_in_final_honest)
    op = h->put ? HO_WIRE_PUT : HO_WIRE_GET; /* the lie a hostile server
                                                 tells */
  if (h->attack != A_NO_FINAL)
    send_final(h, &ready, op, len);
  if (h->attack == A_AFTER_FINAL || h->attack == A_NO_FINAL) {
    wait_client_returned(h);
    memset(h->mem, 0x5a, HOSTILE_MEM);
    h->late_status = rdma(h, IBV_WR_RDMA_WRITE, c->addr, c->rkey, c->len);
  }
  if (h->attack == A_PUT_AFTER_FINAL) {
    wait_client_returned(h);
    h->late_status = rdma(h, IBV_WR_RDMA_READ, c->addr, c->rkey, c->len);
  }
  return NULL;
}

static void end_attempt(struct hostile *h);

static int hostile_send(void *ctx, const char *token, size_t len)
{
  struct hostile *h = ctx;
  end_attempt(h); /* the library retries a failed attempt: a new request */
  if (!ho_token_decode(token, len, &h->client))
    return -1;
  struct ho_conn_attr attr = {
      .max_send_wr = 16, .max_recv_wr = 16, .qp_access = 0};
  if (ho_conn_create(h->dev, &attr, &h->conn) != hipObjSuccess)
    return -1;
  h->cookie = cookie_seq++;
  struct ho_token peer = h->client;
  peer.qpn &= 0xffffff;
  if (ho_conn_connect(h->conn, &peer,
                      ho_psn_from_cookie(h->cookie, HO_PSN_SERVER_TO_CLIENT),
                      ho_psn_from_cookie(h->cookie, HO_PSN_CLIENT_TO_SERVER)) !=
          hipObjSuccess ||
      ho_conn_post_msg_recv(h->conn) != hipObjSuccess)
    return -1;
  struct ho_token srv;
  ho_conn_token(h->conn, &srv);
  srv.addr = h->cookie;
  struct ho_conn_offer o = {.version = HO_PROTO_V2,
                            .conn_id = 0x8100000000000000ull | h->cookie >> 8};
  ho_offer_encode(&o, &srv);
  memcpy(h->reply, "200:", 4);
  ho_token_encode(&srv, h->reply + 4);
  h->running = pthread_create(&h->th, NULL, serve, h) == 0;
  return h->running ? 0 : -1;
}

static int hostile_recv(void *ctx, char *reply, size_t *len)
{
  struct hostile *h = ctx;
  size_t n = strlen(h->reply);
  if (n > *len)
    return -1;
  memcpy(reply, h->reply, n);
  *len = n;
  return 0;
}

const hipObjOps_t hostile_ops = {hostile_send, hostile_recv};

/* Ends one attempt: the thread, the server's QP. */
static void end_attempt(struct hostile *h)
{
  atomic_store(&h->attempt_over, true);
  if (h->running)
    pthread_join(h->th, NULL);
  h->running = false;
  atomic_store(&h->attempt_over, false);
  if (h->conn) {
    ho_conn_retire(h->conn);
    ho_conn_destroy(h->conn);
    h->conn = NULL;
  }
}

/* Ends one request (all its attempts). */
static void hostile_end(struct hostile *h)
{
  end_attempt(h);
  h->old = h->client;
  h->have_old = true;
}


int hostile_open(struct hostile *h, const struct ho_verbs_ops *v,
                 const struct ho_topology *topo, const char *nic)
{
  memset(h, 0, sizeof *h);
  if (ho_device_open(v, topo, nic, &h->dev) != hipObjSuccess)
    return -1;
  h->mem = calloc(1, HOSTILE_MEM);
  h->mr = h->mem ? v->reg_mr(h->dev->pd, h->mem, HOSTILE_MEM, IBV_ACCESS_LOCAL_WRITE)
                 : NULL;
  return h->mr ? 0 : -1;
}

void hostile_close(struct hostile *h)
{
  if (h->mr)
    h->dev->v->dereg_mr(h->mr);
  ho_device_close(h->dev);
  free(h->mem);
  memset(h, 0, sizeof *h);
}

hipObjOpError_t hostile_get(struct hostile *h, void *buf, size_t size,
                            off_t off, enum attack a, bool honest_op)
{
  h->put = false;
  h->attack = a;
  h->op_in_final_honest = honest_op;
  h->attack_status = h->late_status = IBV_WC_SUCCESS;
  atomic_store(&h->client_returned, false);
  for (unsigned i = 0; i < HOSTILE_MEM; i++)
    h->mem[i] = (uint8_t)(i * 7 + 1);
  hipObjOpError_t e = hipObjGet(NULL, buf, size, off, &hostile_ops, h).opError;
  atomic_store(&h->client_returned, true);
  hostile_end(h);
  return e;
}

hipObjOpError_t hostile_put(struct hostile *h, const void *buf, size_t size,
                            off_t off, enum attack a)
{
  h->put = true;
  h->attack = a;
  h->op_in_final_honest = true;
  h->attack_status = h->late_status = IBV_WC_SUCCESS;
  atomic_store(&h->client_returned, false);
  memset(h->mem, 0x5a, HOSTILE_MEM);
  hipObjOpError_t e = hipObjPut(NULL, buf, size, off, &hostile_ops, h).opError;
  atomic_store(&h->client_returned, true);
  hostile_end(h);
  return e;
}
