/* SPDX-License-Identifier: MIT */
#include "fakes/sim_peer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The engine's view of one request: a window into the object, and for a
 * PUT a scratch copy committed only when every byte arrived. */
struct sim_io {
  struct sim_peer *peer;
  uint64_t off, size;
  uint8_t *scratch;
};

static int io_read(void *ctx, uint64_t off, void *buf, size_t n)
{
  struct sim_io *io = ctx;
  if (off > io->size || n > io->size - off)
    return -1;
  if (io->peer->chunk_delay_ms)
    usleep(io->peer->chunk_delay_ms * 1000u);
  memcpy(buf, io->peer->object + io->off + off, n);
  return 0;
}

static int io_write(void *ctx, uint64_t off, const void *buf, size_t n)
{
  struct sim_io *io = ctx;
  if (off > io->size || n > io->size - off)
    return -1;
  if (io->peer->chunk_delay_ms)
    usleep(io->peer->chunk_delay_ms * 1000u);
  memcpy(io->scratch + off, buf, n);
  return 0;
}

static int io_finish(void *ctx, int status, uint64_t bytes)
{
  struct sim_io *io = ctx;
  int rc = 0;
  if (io->scratch && status == HO_FINAL_OK && bytes == io->size) {
    if (io->peer->commit_delay_ms)
      usleep(io->peer->commit_delay_ms * 1000u);
    memcpy(io->peer->object + io->off, io->scratch, io->size);
    atomic_fetch_add(&io->peer->puts_committed, 1);
  }
  free(io->scratch);
  free(io);
  return rc;
}

int sim_peer_create(struct sim_peer *p, const struct ho_platform *plat,
                    const struct ho_engine_config *cfg, size_t object_size)
{
  struct ho_engine_config c = {0};
  if (cfg)
    c = *cfg;
  if (!c.nic)
    c.nic = "fake_srv0";
  if (!c.chunk_size)
    c.chunk_size = 64 * 1024;
  if (!c.ready_timeout_ms)
    c.ready_timeout_ms = 1000;
  memset(p, 0, sizeof *p);
  p->object = calloc(1, object_size ? object_size : 1);
  p->object_size = object_size;
  if (!p->object)
    return -1;
  return ho_engine_create(plat, &c, &p->engine) == hipObjSuccess ? 0 : -1;
}

void sim_peer_destroy(struct sim_peer *p)
{
  ho_engine_destroy(p->engine);
  free(p->object);
  memset(p, 0, sizeof *p);
}

void sim_request_init(struct sim_request *r, struct sim_peer *p, int op,
                      uint64_t object_off, uint64_t size)
{
  memset(r, 0, sizeof *r);
  r->peer = p;
  r->op = op;
  r->object_off = object_off;
  r->size = size;
  r->start_result = -1;
}

static int start(struct sim_request *r, const char *token, size_t len)
{
  struct sim_io *io = calloc(1, sizeof *io);
  if (!io)
    return -1;
  io->peer = r->peer;
  io->off = r->object_off;
  io->size = r->size;
  if (r->op == HIPOBJ_RDMA_OP_PUT && !(io->scratch = malloc(r->size ? r->size : 1))) {
    free(io);
    return -1;
  }
  struct ho_engine_io eio = {io_read, io_write, io_finish, io};
  r->start_result = ho_engine_start(r->peer->engine, token, len, r->op,
                                    r->size, &eio, r->reply);
  if (!ho_engine_started(r->start_result)) {
    free(io->scratch);
    free(io);
  }
  return 0;
}

static int sim_send(void *ctx, const char *token, size_t len)
{
  struct sim_request *r = ctx;
  if (len != HO_TOKEN_HEX || strlen(token) != HO_TOKEN_HEX)
    return -1;
  memcpy(r->token, token, HO_TOKEN_HEX + 1);
  if (r->on_send)
    r->on_send(r);
  if (r->mode == SIM_SEND_FAILS)
    return -1;
  if (r->mode != SIM_NORMAL)
    return 0;
  return start(r, token, len);
}

static int put_reply(const char *s, char *reply, size_t *len)
{
  size_t n = strlen(s);
  if (n > *len)
    return -1;
  memcpy(reply, s, n);
  *len = n;
  return 0;
}

static int sim_recv(void *ctx, char *reply, size_t *len)
{
  struct sim_request *r = ctx;
  switch (r->mode) {
  case SIM_DECLINE: return put_reply("501", reply, len);
  case SIM_PLAIN_OK: return put_reply("200", reply, len);
  case SIM_MALFORMED_REPLY: return put_reply("okay", reply, len);
  case SIM_NO_REPLY_HEADER: return -1;
  case SIM_LONG_REPLY: *len = 4096; return 0;
  default: break;
  }
  switch (r->start_result) {
  case HO_ENGINE_STARTED:
  case HO_ENGINE_RAN_FAILED: /* data first: the outcome */
    if (r->on_reply)
      r->on_reply(r);
    return put_reply(r->reply, reply, len);
  case HO_ENGINE_DECLINE: return put_reply("501", reply, len);
  default: return -1; /* 400 / 503: no reply header */
  }
}

const hipObjOps_t sim_ops = {sim_send, sim_recv};
