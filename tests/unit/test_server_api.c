/* SPDX-License-Identifier: MIT */
/* The public server library (include/hipobj_server.h) on the simulated RC
 * fabric: the real client library sends its tokens to hipObjServerStart()
 * from its hipObjOps_t callbacks, as an S3 server's request path would,
 * and reads back the reply the server library gave.
 *
 * Checked: argument errors of every function; the three refusals and the
 * answers they give (400 without a reply, 501 "501", 503 "503"); GET and
 * PUT through callbacks and through registered memory (the caller's and
 * allocated), byte for byte, with the server NIC's counters showing RDMA
 * moved them; a failed commit never reported as success, nor a transfer
 * whose final the client never got (faultSkipFinal); completion by
 * poll, by wait and by callback, with and without a handle; cancellation
 * before ready and between chunks; the ready timeout; close waiting for
 * a running transfer and its callback; the limits
 * (transfers, idle connections); the statistics and their size-first
 * copy; several NICs, with a client's next transfer routed to the NIC
 * that keeps its connection, and a new one to the NIC on the client's
 * subnet. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "fakes/fake_verbs.h"
#include "fakes/world.h"
#include "hipobj.h"
#include "hipobj_server.h"
#include "rdma/token.h"
#include "server_internal.h"

#define BUF_SIZE (1u << 20)
#define CHUNK (64u << 10)

struct fixture {
  struct world w;
  hipObjServer_t *srv;
  uint8_t *buf;     /* the client's registered buffer */
  uint8_t *object;  /* the server's object */
  uint8_t *sink;    /* where PUTs land */
};

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (uint8_t)((i * 2654435761u + seed) >> 13);
}

static void sleep_ms(unsigned ms)
{
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static hipObjServerConfig_t config(void)
{
  static const char *const srv_nic[] = {WORLD_SERVER_NIC};
  hipObjServerConfig_t c;
  memset(&c, 0, sizeof c);
  c.size = sizeof c;
  c.nics = srv_nic;
  c.nicCount = 1;
  c.chunkSize = CHUNK;
  c.readyTimeoutMs = 1000;
  return c;
}

/* The client's HIPOBJ_RETRIES for the next setup (then back to 3). */
static unsigned client_retries = 3;

static int setup_with(void **state, const hipObjServerConfig_t *c)
{
  struct fixture *f = calloc(1, sizeof *f);
  if (!f || world_create(&f->w, NULL) != 0)
    return -1;
  f->w.opts.retries = client_retries;
  client_retries = 3;
  /* the stall bound failed_rdma_is_counted_and_retried's retry waits for:
     well inside the client's transfer timeout */
  f->w.opts.stall_timeout_ms = 1000;
  if (world_init(&f->w, WORLD_CLIENT_NIC) != hipObjSuccess)
    return -1;
  if (ho_server_open_on(&f->w.plat, c, &f->srv) != hipObjServerSuccess)
    return -1;
  f->buf = aligned_alloc(4096, BUF_SIZE);
  f->object = malloc(BUF_SIZE);
  f->sink = calloc(1, BUF_SIZE);
  if (!f->buf || !f->object || !f->sink)
    return -1;
  fill(f->object, BUF_SIZE, 3);
  memset(f->buf, 0xee, BUF_SIZE);
  if (hipObjBufRegisterHost(f->buf, BUF_SIZE).opError != hipObjSuccess)
    return -1;
  *state = f;
  return 0;
}

static int setup(void **state)
{
  hipObjServerConfig_t c = config();
  return setup_with(state, &c);
}

static int teardown(void **state)
{
  struct fixture *f = *state;
  hipObjBufDeregister(f->buf);
  hipObjShutdown();
  hipObjServerClose(f->srv);
  world_destroy(&f->w);
  free(f->buf);
  free(f->object);
  free(f->sink);
  free(f);
  return 0;
}

/* ---- the S3 server's side of one request --------------------------------- */

struct req {
  struct fixture *f;
  hipObjServerRequest_t r;
  hipObjServerStatus_t started;
  hipObjServerReply_t reply;
  hipObjServerTransfer_t *xfer;
  bool want_handle;
  /* callbacks */
  unsigned cancel_at_chunk; /* cancel from the read callback (0: never) */
  bool fail_write;          /* the read callback arms an error on the
                               server's next completion: its WRITE */
  unsigned reads, writes, commits;
  unsigned io_sleep_ms, commit_sleep_ms; /* time_sums_add_up's */
  int commit_result;
  atomic_int done_calls;
  hipObjServerStatus_t done_status;
  uint64_t done_bytes;
};

static int src_read(void *arg, uint64_t off, void *buf, size_t n)
{
  struct req *q = arg;
  q->reads++;
  if (q->cancel_at_chunk && q->reads == q->cancel_at_chunk)
    hipObjServerTransferCancel(q->xfer);
  if (q->fail_write) {
    q->fail_write = false;
    fake_device_force_error(WORLD_SERVER_NIC, 1, IBV_WC_RETRY_EXC_ERR);
  }
  memcpy(buf, q->f->object + off, n);
  return 0;
}

static int sink_write(void *arg, uint64_t off, const void *buf, size_t n)
{
  struct req *q = arg;
  q->writes++;
  sleep_ms(q->io_sleep_ms);
  memcpy(q->f->sink + off, buf, n);
  return 0;
}

static int sink_commit(void *arg, uint64_t bytes)
{
  struct req *q = arg;
  q->commits++;
  sleep_ms(q->commit_sleep_ms);
  return q->commit_result;
}

static void on_done(hipObjServerTransfer_t *x, hipObjServerStatus_t st,
                    uint64_t bytes, void *arg)
{
  struct req *q = arg;
  q->done_status = st;
  q->done_bytes = bytes;
  atomic_fetch_add(&q->done_calls, 1);
}

static void req_init(struct req *q, struct fixture *f, uint32_t op,
                     uint64_t length)
{
  memset(q, 0, sizeof *q);
  q->f = f;
  q->r.size = sizeof q->r;
  q->r.op = op;
  q->r.length = length;
  if (op == hipObjServerOpGet) {
    q->r.read = src_read;
  } else {
    q->r.write = sink_write;
    q->r.commit = sink_commit;
  }
  q->r.ioArg = q;
  q->r.done = on_done;
  q->r.doneArg = q;
  q->want_handle = true;
}

static hipObjServerStatus_t start_token(struct req *q, const char *token)
{
  q->r.token = token;
  q->r.tokenLength = strlen(token);
  q->started = hipObjServerStart(q->f->srv, &q->r, &q->reply,
                                 q->want_handle ? &q->xfer : NULL);
  return q->started;
}

static void req_end(struct req *q);

static int ops_send(void *ctx, const char *token, size_t len)
{
  struct req *q = ctx;
  (void)len;
  if (q->xfer) /* the library retries: the failed attempt's handle ends */
    req_end(q);
  start_token(q, token);
  return 0;
}

static int ops_recv(void *ctx, char *reply, size_t *len)
{
  struct req *q = ctx;
  size_t n = strlen(q->reply.rdmaReply);
  if (n == 0 || n > *len)
    return -1; /* 400: no reply header */
  memcpy(reply, q->reply.rdmaReply, n);
  *len = n;
  return 0;
}

static const hipObjOps_t ops = {ops_send, ops_recv};

static void wait_done(struct req *q)
{
  if (q->xfer) {
    hipObjServerTransferWait(q->xfer, UINT32_MAX, NULL);
    return;
  }
  for (unsigned i = 0; i < 5000 && atomic_load(&q->done_calls) == 0; i++)
    sleep_ms(1);
}

static void req_end(struct req *q)
{
  wait_done(q);
  hipObjServerTransferRelease(q->xfer);
  q->xfer = NULL;
}

static hipObjServerStats_t stats(struct fixture *f)
{
  hipObjServerStats_t s;
  memset(&s, 0, sizeof s);
  s.size = sizeof s;
  assert_int_equal(hipObjServerGetStats(f->srv, &s), hipObjServerSuccess);
  return s;
}

/* A token the client library made for [0, n) of its buffer, which the
 * test completes (or not) itself. */
static char *app_token(struct fixture *f, int op, size_t n)
{
  char *tok = NULL;
  assert_int_equal(hipObjGetRdmaToken(f->buf, n, op, &tok).opError,
                   hipObjSuccess);
  return tok;
}

/* ---- arguments -------------------------------------------------------------- */

static void open_arguments(void **state)
{
  struct fixture *f = *state;
  hipObjServer_t *s = NULL;
  hipObjServerConfig_t c = config();
  assert_int_equal(ho_server_open_on(&f->w.plat, &c, NULL),
                   hipObjServerInvalidValue);
  assert_int_equal(hipObjServerOpen(&c, NULL), hipObjServerInvalidValue);
  c.size = 8;
  assert_int_equal(ho_server_open_on(&f->w.plat, &c, &s),
                   hipObjServerInvalidValue);
  /* a newer caller's struct: zero tail accepted, anything else refused */
  struct {
    hipObjServerConfig_t c;
    uint64_t newer;
  } big;
  memset(&big, 0, sizeof big);
  big.c = config();
  big.c.size = sizeof big;
  big.newer = 1;
  assert_int_equal(ho_server_open_on(&f->w.plat, &big.c, &s),
                   hipObjServerNotSupported);
  static const char *const dup[] = {WORLD_SERVER_NIC, WORLD_SERVER_NIC};
  for (int i = 0; i < 8; i++) {
    c = config();
    switch (i) {
    case 6: c.movingMax = 4097; break;
    case 7: c.reserved2 = 1; break;
    case 0: c.depth = 33; break;
    case 1: c.chunkSize = 100; break;
    case 2: c.nics = NULL; break;
    case 3: c.nics = dup; c.nicCount = 2; break;
    case 4: c.flags = 0x80; break;
    default: c.reserved = 1; break;
    }
    assert_int_equal(ho_server_open_on(&f->w.plat, &c, &s),
                     hipObjServerInvalidValue);
  }
  static const char *const nosuch[] = {"mlx5_99"};
  c = config();
  c.nics = nosuch;
  assert_int_equal(ho_server_open_on(&f->w.plat, &c, &s), hipObjServerNoDevice);
  struct ho_platform noverbs = f->w.plat;
  noverbs.verbs = NULL;
  c = config();
  assert_int_equal(ho_server_open_on(&noverbs, &c, &s), hipObjServerNoDevice);
  assert_null(s); /* never written on failure */
  hipObjServerClose(NULL);
  assert_int_equal(hipObjServerNicCount(NULL), 0);
  assert_null(hipObjServerNicName(f->srv, 1));
  assert_string_equal(hipObjServerNicName(f->srv, 0), WORLD_SERVER_NIC);
}

static void start_arguments(void **state)
{
  struct fixture *f = *state;
  struct req q;
  char tok[] = "00";
  hipObjServerReply_t rep;
  hipObjServerTransfer_t *x = NULL;
  req_init(&q, f, hipObjServerOpGet, 100);
  q.r.token = tok;
  q.r.tokenLength = 2;
  assert_int_equal(hipObjServerStart(NULL, &q.r, &rep, &x),
                   hipObjServerInvalidValue);
  assert_int_equal(hipObjServerStart(f->srv, NULL, &rep, &x),
                   hipObjServerInvalidValue);
  assert_int_equal(hipObjServerStart(f->srv, &q.r, NULL, &x),
                   hipObjServerInvalidValue);
  hipObjServerMem_t *mem = NULL;
  assert_int_equal(hipObjServerAlloc(f->srv, 4096, &mem), hipObjServerSuccess);
  for (int i = 0; i < 9; i++) {
    req_init(&q, f, hipObjServerOpGet, 100);
    q.r.token = tok;
    q.r.tokenLength = 2;
    switch (i) {
    case 0: q.r.size = 16; break;
    case 1: q.r.length = 0; break;
    case 2: q.r.op = 7; break;
    case 3: q.r.mem = mem; break;             /* both mem and read */
    case 4: q.r.read = NULL; break;           /* neither */
    case 5: q.r.read = NULL; q.r.write = sink_write; break; /* GET, write */
    case 6: q.r.read = NULL; q.r.mem = mem; q.r.memOffset = 4000; break;
    case 7: q.r.commit = sink_commit; break;  /* commit on a GET */
    default: q.r.token = NULL; break;
    }
    assert_int_equal(hipObjServerStart(f->srv, &q.r, &rep, &x),
                     hipObjServerInvalidValue);
  }
  assert_null(x);
  assert_int_equal(hipObjServerDeregister(mem), hipObjServerSuccess);
  hipObjServerStats_t s = stats(f);
  assert_int_equal(s.started + s.badTokens + s.declined + s.busy, 0);
}

static void other_arguments(void **state)
{
  struct fixture *f = *state;
  hipObjServerMem_t *mem = NULL;
  uint8_t b[16];
  assert_int_equal(hipObjServerRegister(NULL, b, 16, &mem),
                   hipObjServerInvalidValue);
  assert_int_equal(hipObjServerRegister(f->srv, NULL, 16, &mem),
                   hipObjServerInvalidValue);
  assert_int_equal(hipObjServerRegister(f->srv, b, 0, &mem),
                   hipObjServerInvalidValue);
  assert_int_equal(hipObjServerAlloc(f->srv, 0, &mem), hipObjServerInvalidValue);
  assert_int_equal(hipObjServerAlloc(f->srv, 16, NULL), hipObjServerInvalidValue);
  assert_null(mem);
  assert_int_equal(hipObjServerDeregister(NULL), hipObjServerInvalidValue);
  assert_null(hipObjServerMemAddress(NULL));
  assert_int_equal(hipObjServerMemLength(NULL), 0);
  assert_int_equal(hipObjServerTransferPoll(NULL, NULL), hipObjServerInvalidValue);
  assert_int_equal(hipObjServerTransferWait(NULL, 0, NULL),
                   hipObjServerInvalidValue);
  assert_int_equal(hipObjServerTransferCancel(NULL), hipObjServerInvalidValue);
  hipObjServerTransferRelease(NULL);
  hipObjServerStats_t s;
  s.size = 4;
  assert_int_equal(hipObjServerGetStats(f->srv, &s), hipObjServerInvalidValue);
  assert_int_equal(hipObjServerGetStats(NULL, &s), hipObjServerInvalidValue);
  uint32_t major = 9;
  assert_int_equal(hipObjServerGetVersion(&major, NULL, NULL),
                   hipObjServerSuccess);
  assert_int_equal(major, HIPOBJ_SERVER_VERSION_MAJOR);
  for (int i = 0; i <= hipObjServerNotSupported; i++)
    assert_string_not_equal(hipObjServerStatusString((hipObjServerStatus_t)i),
                            "?");
  assert_string_equal(hipObjServerStatusString((hipObjServerStatus_t)99), "?");
}

/* ---- the refusals ------------------------------------------------------------ */

static void refusals(void **state)
{
  struct fixture *f = *state;
  struct req q;
  /* malformed: 400 and no reply header */
  req_init(&q, f, hipObjServerOpGet, 100);
  assert_int_equal(start_token(&q, "zz"), hipObjServerBadToken);
  assert_int_equal(q.reply.httpStatus, 400);
  assert_string_equal(q.reply.rdmaReply, "");
  assert_null(q.xfer);
  /* well-formed but not this request's length: 501 "501" */
  char *tok = app_token(f, HIPOBJ_RDMA_OP_GET, 4096);
  uint64_t len = 0;
  assert_int_equal(hipObjServerParseToken(tok, strlen(tok), &len),
                   hipObjServerSuccess);
  assert_int_equal(len, 4096);
  assert_int_equal(hipObjServerParseToken(tok, strlen(tok) - 1, &len),
                   hipObjServerBadToken);
  assert_int_equal(hipObjServerParseToken("zz", 2, &len), hipObjServerBadToken);
  assert_int_equal(hipObjServerParseToken(NULL, 0, &len),
                   hipObjServerInvalidValue);
  char dc[HO_TOKEN_HEX + 1];
  memcpy(dc, tok, sizeof dc);
  dc[0] = '0';
  dc[1] = '0'; /* transport 0: DC */
  assert_int_equal(hipObjServerParseToken(dc, HO_TOKEN_HEX, &len),
                   hipObjServerDeclined);
  assert_int_equal(len, 4096); /* untouched on failure */
  /* NVIDIA cuObject's descriptor, bare or with ":addr:size": declined, so
   * that its client falls back (a 400 would stop it) */
  const char *cuobj = "00007f7c2a000000000000100000000002c9d8a70000000000"
                      "00fe800000000000000a1b2c3d4e5f6";
  char cuobj_sfx[128];
  snprintf(cuobj_sfx, sizeof cuobj_sfx, "%s:00007f7c2a000000:1000", cuobj);
  assert_int_equal(strlen(cuobj), 81);
  assert_int_equal(hipObjServerParseToken(cuobj, 81, &len),
                   hipObjServerDeclined);
  assert_int_equal(hipObjServerParseToken(cuobj_sfx, strlen(cuobj_sfx), &len),
                   hipObjServerDeclined);
  assert_int_equal(hipObjServerParseToken(cuobj, 80, &len),
                   hipObjServerBadToken);
  assert_int_equal(hipObjServerParseToken(cuobj_sfx, strlen(cuobj_sfx) - 5,
                                          &len),
                   hipObjServerBadToken); /* ":addr" without its size */
  assert_int_equal(len, 4096);
  req_init(&q, f, hipObjServerOpGet, 4096);
  assert_int_equal(start_token(&q, cuobj_sfx), hipObjServerDeclined);
  assert_int_equal(q.reply.httpStatus, 501);
  assert_string_equal(q.reply.rdmaReply, "501");
  req_init(&q, f, hipObjServerOpGet, 4095);
  assert_int_equal(start_token(&q, tok), hipObjServerDeclined);
  assert_int_equal(q.reply.httpStatus, 501);
  assert_string_equal(q.reply.rdmaReply, "501");
  /* the client, given 501, reports the decline */
  assert_int_equal(hipObjCompleteRdmaTransfer(tok, "501", 3).opError,
                   hipObjS3Error);
  hipObjPutRdmaToken(tok);
  hipObjServerStats_t s = stats(f);
  assert_int_equal(s.badTokens, 1);
  assert_int_equal(s.declined, 2);
  assert_int_equal(s.started, 0);
  assert_int_equal(atomic_load(&q.done_calls), 0); /* never started */
}

static void busy_at_max_transfers(void **state)
{
  struct fixture *f = *state;
  struct req a, b;
  char *ta = app_token(f, HIPOBJ_RDMA_OP_GET, 4096);
  char *tb = app_token(f, HIPOBJ_RDMA_OP_GET, 4096);
  req_init(&a, f, hipObjServerOpGet, 4096);
  req_init(&b, f, hipObjServerOpGet, 4096);
  assert_int_equal(start_token(&a, ta), hipObjServerSuccess);
  assert_int_equal(hipObjServerTransferPoll(a.xfer, NULL), hipObjServerPending);
  assert_int_equal(start_token(&b, tb), hipObjServerBusy);
  assert_int_equal(b.reply.httpStatus, 503);
  assert_string_equal(b.reply.rdmaReply, "503");
  assert_int_equal(stats(f).running, 1);
  /* the first still completes */
  assert_int_equal(hipObjCompleteRdmaTransfer(ta, a.reply.rdmaReply,
                                              strlen(a.reply.rdmaReply))
                       .opError,
                   hipObjSuccess);
  assert_memory_equal(f->buf, f->object, 4096);
  uint64_t bytes = 0;
  assert_int_equal(hipObjServerTransferWait(a.xfer, UINT32_MAX, &bytes),
                   hipObjServerSuccess);
  assert_int_equal(bytes, 4096);
  req_end(&a);
  hipObjPutRdmaToken(ta);
  hipObjPutRdmaToken(tb);
  hipObjServerStats_t s = stats(f);
  assert_int_equal(s.busy, 1);
  assert_int_equal(s.completed, 1);
  assert_int_equal(s.queued, 1); /* it waited 50 ms, then Busy */
  assert_int_equal(s.queueRefused, 1);
}

/* A start that finds every transfer slot busy waits in the queue and is
 * served when the slot frees, instead of getting 503 (issue 23). */
struct starter {
  struct req *q;
  const char *token;
  hipObjServerStatus_t st;
};

static void *start_in_thread(void *arg)
{
  struct starter *s = arg;
  s->st = start_token(s->q, s->token);
  return NULL;
}

static void queued_start_is_served(void **state)
{
  struct fixture *f = *state;
  struct req a, b;
  char *ta = app_token(f, HIPOBJ_RDMA_OP_GET, 4096);
  char *tb = app_token(f, HIPOBJ_RDMA_OP_GET, 4096);
  req_init(&a, f, hipObjServerOpGet, 4096);
  req_init(&b, f, hipObjServerOpGet, 4096);
  assert_int_equal(start_token(&a, ta), hipObjServerSuccess);
  struct starter s = {&b, tb, hipObjServerNoDevice};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, start_in_thread, &s), 0);
  hipObjServerStats_t st;
  for (int i = 0; i < 2000 && (st = stats(f)).queuedNow == 0; i++)
    sleep_ms(1);
  assert_int_equal(st.queuedNow, 1); /* b waits for a's slot */
  sleep_ms(100);
  assert_int_equal(stats(f).queuedNow, 1);
  assert_int_equal(hipObjCompleteRdmaTransfer(ta, a.reply.rdmaReply,
                                              strlen(a.reply.rdmaReply))
                       .opError,
                   hipObjSuccess);
  req_end(&a);
  pthread_join(t, NULL);
  assert_int_equal(s.st, hipObjServerSuccess);
  memset(f->buf, 0, 4096);
  assert_int_equal(hipObjCompleteRdmaTransfer(tb, b.reply.rdmaReply,
                                              strlen(b.reply.rdmaReply))
                       .opError,
                   hipObjSuccess);
  assert_memory_equal(f->buf, f->object, 4096);
  req_end(&b);
  hipObjPutRdmaToken(ta);
  hipObjPutRdmaToken(tb);
  st = stats(f);
  assert_int_equal(st.busy, 0);
  assert_int_equal(st.queued, 1);
  assert_int_equal(st.queueRefused, 0);
  assert_int_equal(st.maxQueuedSeen, 1);
  assert_int_equal(st.queuedNow, 0);
  assert_int_equal(st.completed, 2);
  assert_int_equal(st.movingMax, 1);
}

/* The admission rule (engine.h): an explicit movingMax, at most
 * maxTransfers; else maxTransfers, and on a software device 4 per usable
 * CPU shared by the software NICs, at least one. */
static void moving_cap_rule(void **state)
{
  (void)state;
  assert_int_equal(ho_engine_moving_cap(16, 0, false, 2, 1), 16);
  assert_int_equal(ho_engine_moving_cap(64, 0, false, 2, 2), 64);
  assert_int_equal(ho_engine_moving_cap(64, 0, true, 2, 1), 8);
  assert_int_equal(ho_engine_moving_cap(64, 0, true, 2, 2), 4);
  assert_int_equal(ho_engine_moving_cap(64, 0, true, 1, 8), 1);
  assert_int_equal(ho_engine_moving_cap(64, 0, true, 0, 0), 4);
  assert_int_equal(ho_engine_moving_cap(4, 0, true, 32, 1), 4);
  assert_int_equal(ho_engine_moving_cap(16, 3, true, 2, 1), 3);
  assert_int_equal(ho_engine_moving_cap(16, 40, false, 2, 1), 16);
}

/* ---- transfers ---------------------------------------------------------------- */

static void get_by_callbacks(void **state)
{
  struct fixture *f = *state;
  static const size_t sizes[] = {1, 4095, CHUNK, CHUNK + 1, 5 * CHUNK + 7};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t n = sizes[i];
    struct fake_dev_stats before, after;
    struct req q;
    req_init(&q, f, hipObjServerOpGet, n);
    memset(f->buf, 0xee, BUF_SIZE);
    fake_device_stats(WORLD_SERVER_NIC, &before);
    assert_int_equal(hipObjGet(NULL, f->buf, n, 0, &ops, &q).opError,
                     hipObjSuccess);
    fake_device_stats(WORLD_SERVER_NIC, &after);
    assert_int_equal(q.started, hipObjServerSuccess);
    assert_int_equal(q.reply.httpStatus, 0);
    assert_int_equal(q.reply.bytesTransferred, n);
    assert_memory_equal(f->buf, f->object, n);
    assert_int_equal(f->buf[n], 0xee);
    assert_int_equal(after.bytes_written - before.bytes_written, n);
    req_end(&q);
    assert_int_equal(atomic_load(&q.done_calls), 1);
    assert_int_equal(q.done_status, hipObjServerSuccess);
    assert_int_equal(q.done_bytes, n);
    assert_int_equal(q.reads, (n + CHUNK - 1) / CHUNK);
  }
  hipObjServerStats_t s = stats(f);
  assert_int_equal(s.completed, 5);
  assert_int_equal(s.bytesWritten, 1 + 4095 + CHUNK + CHUNK + 1 + 5 * CHUNK + 7);
}

static void put_by_callbacks(void **state)
{
  struct fixture *f = *state;
  size_t n = 3 * CHUNK + 5;
  struct fake_dev_stats before, after;
  struct req q;
  fill(f->buf, n, 11);
  req_init(&q, f, hipObjServerOpPut, n);
  fake_device_stats(WORLD_SERVER_NIC, &before);
  assert_int_equal(hipObjPut(NULL, f->buf, n, 0, &ops, &q).opError,
                   hipObjSuccess);
  fake_device_stats(WORLD_SERVER_NIC, &after);
  assert_memory_equal(f->sink, f->buf, n);
  assert_int_equal(after.bytes_read - before.bytes_read, n);
  req_end(&q);
  assert_int_equal(q.commits, 1);
  assert_int_equal(q.writes, 4);
  assert_int_equal(q.done_status, hipObjServerSuccess);
  assert_int_equal(stats(f).bytesRead, n);
}

/* The time sums: each part holds what was spent in it (the callbacks
 * sleep), the parts fit in the total, and the total is within the wall
 * time of the call. */
static void time_sums_add_up(void **state)
{
  struct fixture *f = *state;
  const uint64_t ms = 1000000;
  size_t n = 3 * CHUNK + 5;
  struct req q;
  fill(f->buf, n, 12);
  req_init(&q, f, hipObjServerOpPut, n);
  q.io_sleep_ms = 5;
  q.commit_sleep_ms = 20;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  assert_int_equal(hipObjPut(NULL, f->buf, n, 0, &ops, &q).opError,
                   hipObjSuccess);
  req_end(&q);
  clock_gettime(CLOCK_MONOTONIC, &b);
  uint64_t wall = (uint64_t)(b.tv_sec - a.tv_sec) * 1000 * ms +
                  (uint64_t)(b.tv_nsec - a.tv_nsec);
  assert_memory_equal(f->sink, f->buf, n);
  hipObjServerStats_t s = stats(f);
  assert_int_equal(s.timeTransfers, 1);
  assert_int_equal(s.startCalls, 1);
  assert_true(s.timeIoNs >= 4 * 5 * ms); /* four chunks written */
  assert_true(s.timeCommitNs >= 20 * ms);
  assert_true(s.timePostNs > 0 && s.timeWaitNs > 0 && s.timeAdmitNs > 0);
  assert_true(s.timeTotalNs >= s.timeAdmitNs + s.timePostNs + s.timeWaitNs +
                                   s.timeIoNs + s.timeCommitNs);
  assert_true(s.timeTotalNs <= wall);
  assert_true(s.startNs > 0 && s.startNs <= wall);
}

static void failed_commit_is_never_success(void **state)
{
  struct fixture *f = *state;
  struct req q;
  req_init(&q, f, hipObjServerOpPut, 1000);
  q.commit_result = 1;
  assert_int_not_equal(hipObjPut(NULL, f->buf, 1000, 0, &ops, &q).opError,
                       hipObjSuccess);
  req_end(&q);
  assert_int_equal(q.commits, 1);
  assert_int_equal(q.done_status, hipObjServerIoError);
  hipObjServerStats_t s = stats(f);
  assert_int_equal(s.failed, 1);
  assert_int_equal(s.completed, 0);
}

static void registered_memory(void **state)
{
  struct fixture *f = *state;
  hipObjServerMem_t *pool = NULL, *mine = NULL;
  /* GET from an allocated pool, at an offset */
  assert_int_equal(hipObjServerAlloc(f->srv, 4 * CHUNK, &pool),
                   hipObjServerSuccess);
  uint8_t *p = hipObjServerMemAddress(pool);
  assert_non_null(p);
  assert_int_equal(hipObjServerMemLength(pool), 4 * CHUNK);
  fill(p, 4 * CHUNK, 21);
  struct req q;
  size_t n = 2 * CHUNK + 3;
  req_init(&q, f, hipObjServerOpGet, n);
  q.r.read = NULL;
  q.r.mem = pool;
  q.r.memOffset = 100;
  assert_int_equal(hipObjGet(NULL, f->buf, n, 0, &ops, &q).opError,
                   hipObjSuccess);
  assert_memory_equal(f->buf, p + 100, n);
  req_end(&q);
  assert_int_equal(q.done_status, hipObjServerSuccess);
  /* PUT into the caller's memory */
  uint8_t *dst = aligned_alloc(4096, 4 * CHUNK);
  assert_non_null(dst);
  memset(dst, 0, 4 * CHUNK);
  assert_int_equal(hipObjServerRegister(f->srv, dst, 4 * CHUNK, &mine),
                   hipObjServerSuccess);
  fill(f->buf, n, 22);
  req_init(&q, f, hipObjServerOpPut, n);
  q.r.write = NULL;
  q.r.mem = mine;
  q.r.memOffset = 7;
  assert_int_equal(hipObjPut(NULL, f->buf, n, 0, &ops, &q).opError,
                   hipObjSuccess);
  assert_memory_equal(dst + 7, f->buf, n);
  assert_int_equal(dst[6], 0);
  req_end(&q);
  assert_int_equal(q.commits, 1);
  assert_int_equal(q.writes, 0); /* straight into the memory */
  /* in use: not deregistered */
  char *tok = app_token(f, HIPOBJ_RDMA_OP_GET, 4096);
  req_init(&q, f, hipObjServerOpGet, 4096);
  q.r.read = NULL;
  q.r.mem = mine;
  assert_int_equal(start_token(&q, tok), hipObjServerSuccess);
  assert_int_equal(hipObjServerDeregister(mine), hipObjServerBusy);
  assert_int_equal(hipObjCompleteRdmaTransfer(tok, q.reply.rdmaReply,
                                              strlen(q.reply.rdmaReply))
                       .opError,
                   hipObjSuccess);
  req_end(&q);
  hipObjPutRdmaToken(tok);
  assert_memory_equal(f->buf, dst, 4096);
  assert_int_equal(hipObjServerDeregister(mine), hipObjServerSuccess);
  assert_int_equal(hipObjServerDeregister(pool), hipObjServerSuccess);
  free(dst);
}

/* The server's WRITE fails (the fabric's retries exhausted): counted in
 * rdmaFailed. If its final was flushed, the client, whose GET sees nothing
 * more, retries at its stall bound and the retry succeeds; if the final
 * was delivered before the error (the fake reports it after placement, as
 * a NIC may), the client has every byte and succeeds at once. */
static void failed_rdma_is_counted_and_retried(void **state)
{
  struct fixture *f = *state;
  struct req q;
  hipObjServerStats_t s0 = stats(f);
  req_init(&q, f, hipObjServerOpGet, 5000);
  q.fail_write = true;
  assert_int_equal(hipObjGet(NULL, f->buf, 5000, 0, &ops, &q).opError,
                   hipObjSuccess);
  req_end(&q);
  assert_memory_equal(f->buf, f->object, 5000);
  hipObjServerStats_t s1 = stats(f);
  hipObjInfo_t i;
  memset(&i, 0, sizeof i);
  i.size = sizeof i;
  hipObjGetInfo(&i);
  uint64_t retries = i.retriesStalled + i.retriesFabric;
  assert_true(retries <= 1);
  assert_int_equal(s1.rdmaFailed - s0.rdmaFailed, 1);
  assert_int_equal(s1.started - s0.started, 1 + retries);
  assert_int_equal(s1.completed - s0.completed, retries);
}

static void unacknowledged_final_is_rdma_error(void **state)
{
  struct fixture *f = *state; /* faultSkipFinal 1 */
  struct req q;
  req_init(&q, f, hipObjServerOpGet, 5000);
  assert_int_not_equal(hipObjGet(NULL, f->buf, 5000, 0, &ops, &q).opError,
                       hipObjSuccess);
  req_end(&q);
  assert_int_equal(q.done_status, hipObjServerRdmaError);
  hipObjServerStats_t s = stats(f);
  assert_int_equal(s.finalFailed, 1);
  assert_int_equal(s.failed, 1);
  assert_int_equal(s.completed, 0);
  /* only the next one: the one after succeeds */
  req_init(&q, f, hipObjServerOpGet, 5000);
  assert_int_equal(hipObjGet(NULL, f->buf, 5000, 0, &ops, &q).opError,
                   hipObjSuccess);
  req_end(&q);
  assert_int_equal(q.done_status, hipObjServerSuccess);
}

/* ---- completion ------------------------------------------------------------------ */

static void completion_by_poll(void **state)
{
  struct fixture *f = *state;
  char *tok = app_token(f, HIPOBJ_RDMA_OP_GET, 8192);
  struct req q;
  req_init(&q, f, hipObjServerOpGet, 8192);
  q.r.done = NULL;
  assert_int_equal(start_token(&q, tok), hipObjServerSuccess);
  uint64_t bytes = 77;
  assert_int_equal(hipObjServerTransferPoll(q.xfer, &bytes), hipObjServerPending);
  assert_int_equal(bytes, 77); /* not written while pending */
  assert_int_equal(hipObjServerTransferWait(q.xfer, 20, &bytes),
                   hipObjServerPending);
  assert_int_equal(hipObjCompleteRdmaTransfer(tok, q.reply.rdmaReply,
                                              strlen(q.reply.rdmaReply))
                       .opError,
                   hipObjSuccess);
  hipObjServerStatus_t st;
  for (unsigned i = 0; i < 5000; i++) {
    st = hipObjServerTransferPoll(q.xfer, &bytes);
    if (st != hipObjServerPending)
      break;
    sleep_ms(1);
  }
  assert_int_equal(st, hipObjServerSuccess);
  assert_int_equal(bytes, 8192);
  hipObjServerTransferRelease(q.xfer);
  hipObjPutRdmaToken(tok);
}

static void completion_by_callback_without_handle(void **state)
{
  struct fixture *f = *state;
  struct req q;
  req_init(&q, f, hipObjServerOpGet, 3000);
  q.want_handle = false;
  assert_int_equal(hipObjGet(NULL, f->buf, 3000, 0, &ops, &q).opError,
                   hipObjSuccess);
  wait_done(&q);
  assert_int_equal(atomic_load(&q.done_calls), 1);
  assert_int_equal(q.done_status, hipObjServerSuccess);
  assert_int_equal(q.done_bytes, 3000);
  assert_memory_equal(f->buf, f->object, 3000);
}

/* ---- cancellation and timeouts ------------------------------------------------------ */

static void cancel_before_ready(void **state)
{
  struct fixture *f = *state;
  char *tok = app_token(f, HIPOBJ_RDMA_OP_PUT, 8192);
  struct req q;
  req_init(&q, f, hipObjServerOpPut, 8192);
  assert_int_equal(start_token(&q, tok), hipObjServerSuccess);
  assert_int_equal(hipObjServerTransferCancel(q.xfer), hipObjServerSuccess);
  /* the client's ready finds the transfer cancelled: it fails */
  assert_int_not_equal(hipObjCompleteRdmaTransfer(tok, q.reply.rdmaReply,
                                                  strlen(q.reply.rdmaReply))
                           .opError,
                       hipObjSuccess);
  hipObjPutRdmaToken(tok);
  assert_int_equal(hipObjServerTransferWait(q.xfer, UINT32_MAX, NULL),
                   hipObjServerCancelled);
  req_end(&q);
  assert_int_equal(q.done_status, hipObjServerCancelled);
  assert_int_equal(q.writes + q.commits, 0); /* nothing taken or committed */
  assert_int_equal(stats(f).cancelled, 1);
}

static void cancel_between_chunks(void **state)
{
  struct fixture *f = *state;
  size_t n = 8 * CHUNK;
  struct req q;
  req_init(&q, f, hipObjServerOpGet, n);
  q.cancel_at_chunk = 2;
  assert_int_not_equal(hipObjGet(NULL, f->buf, n, 0, &ops, &q).opError,
                       hipObjSuccess);
  uint64_t bytes = 0;
  assert_int_equal(hipObjServerTransferWait(q.xfer, UINT32_MAX, &bytes),
                   hipObjServerCancelled);
  assert_true(bytes < n);
  assert_true(q.reads < 8);
  req_end(&q);
}

struct log_seen {
  atomic_int warnings;
  char last[256];
};

static void log_cb(void *ctx, hipObjServerLogLevel_t level, const char *msg)
{
  struct log_seen *l = ctx;
  if (level == hipObjServerLogWarning) {
    strncpy(l->last, msg, sizeof l->last - 1);
    atomic_fetch_add(&l->warnings, 1);
  }
  /* from a callback: refused, never a deadlock */
  assert_int_equal(hipObjServerSetLogCallback(NULL, NULL), hipObjServerBusy);
}

static void ready_timeout(void **state)
{
  struct fixture *f = *state; /* readyTimeoutMs 50 */
  struct log_seen seen;
  memset(&seen, 0, sizeof seen);
  assert_int_equal(hipObjServerSetLogCallback(log_cb, &seen),
                   hipObjServerSuccess);
  char *tok = app_token(f, HIPOBJ_RDMA_OP_GET, 4096);
  struct req q;
  req_init(&q, f, hipObjServerOpGet, 4096);
  assert_int_equal(start_token(&q, tok), hipObjServerSuccess);
  /* the client never sends ready */
  assert_int_equal(hipObjServerTransferWait(q.xfer, 5000, NULL),
                   hipObjServerTimedOut);
  req_end(&q);
  assert_int_equal(q.reads, 0);
  assert_int_equal(q.done_status, hipObjServerTimedOut);
  hipObjServerStats_t s = stats(f);
  assert_int_equal(s.timedOut, 1);
  assert_int_equal(s.failed, 1);
  /* its slot is freed just after the end is reported */
  for (unsigned i = 0; i < 1000 && s.running > 0; i++) {
    sleep_ms(1);
    s = stats(f);
  }
  assert_int_equal(s.running, 0);
  hipObjPutRdmaToken(tok);
  /* the timeout was reported through the callback, not stderr */
  assert_int_equal(hipObjServerSetLogCallback(NULL, NULL), hipObjServerSuccess);
  assert_true(atomic_load(&seen.warnings) >= 1);
  assert_non_null(strstr(seen.last, "no ready message"));
}

static void close_waits_for_transfers(void **state)
{
  struct fixture *f = *state; /* readyTimeoutMs 50 */
  char *tok = app_token(f, HIPOBJ_RDMA_OP_PUT, 4096);
  struct req q;
  req_init(&q, f, hipObjServerOpPut, 4096);
  assert_int_equal(start_token(&q, tok), hipObjServerSuccess);
  assert_int_equal(hipObjServerTransferCancel(q.xfer), hipObjServerSuccess);
  hipObjServerClose(f->srv); /* waits: the transfer ends at its timeout */
  f->srv = NULL;
  assert_int_equal(atomic_load(&q.done_calls), 1);
  assert_int_equal(q.done_status, hipObjServerCancelled);
  assert_int_equal(q.commits, 0);
  /* the handle outlives the server until released */
  assert_int_equal(hipObjServerTransferPoll(q.xfer, NULL),
                   hipObjServerCancelled);
  hipObjServerTransferRelease(q.xfer);
  hipObjPutRdmaToken(tok);
}

/* ---- limits, statistics, NICs --------------------------------------------------------- */

static void idle_connections_close(void **state)
{
  struct fixture *f = *state;
  struct req q;
  req_init(&q, f, hipObjServerOpGet, 100);
  assert_int_equal(hipObjGet(NULL, f->buf, 100, 0, &ops, &q).opError,
                   hipObjSuccess);
  req_end(&q);
  /* kept for the client's next token ... */
  req_init(&q, f, hipObjServerOpGet, 100);
  assert_int_equal(hipObjGet(NULL, f->buf, 100, 0, &ops, &q).opError,
                   hipObjSuccess);
  req_end(&q);
  hipObjServerStats_t s = stats(f);
  assert_int_equal(s.connMade, 1);
  assert_int_equal(s.connReused, 1);
  assert_int_equal(s.connLive, 1);
  /* ... until idle for idleTimeoutMs (100 here) */
  for (unsigned i = 0; i < 100 && s.retiredIdle == 0; i++) {
    sleep_ms(20);
    s = stats(f);
  }
  assert_int_equal(s.retiredIdle, 1);
  assert_int_equal(s.connLive, 0);
}

static void stats_size_first(void **state)
{
  struct fixture *f = *state;
  struct {
    hipObjServerStats_t s;
    uint64_t tail;
  } big;
  memset(&big, 0xab, sizeof big);
  big.s.size = sizeof big;
  assert_int_equal(hipObjServerGetStats(f->srv, &big.s), hipObjServerSuccess);
  assert_int_equal(big.s.size, sizeof big.s);
  assert_int_equal(big.s.nics, 1);
  assert_int_equal(big.s.started, 0);
  assert_int_equal(big.s.movingMax, 16); /* a hardware NIC: maxTransfers */
  assert_int_equal(big.tail, 0xababababababababull); /* untouched */
  hipObjServerStats_t small;
  memset(&small, 0xab, sizeof small);
  small.size = 8;
  assert_int_equal(hipObjServerGetStats(f->srv, &small), hipObjServerSuccess);
  assert_int_equal(small.size, 8);
  assert_int_equal(small.nics, 1);
  assert_int_equal(small.started, 0xababababababababull);
}

static void several_nics(void **state)
{
  struct fixture *f = *state;
  assert_int_equal(world_add_nic(&f->w, "fake_srv1", "0000:c2:00.0"), 0);
  hipObjServer_t *all = NULL;
  hipObjServerConfig_t c = config();
  c.nics = NULL;
  c.nicCount = 0;
  c.flags = HIPOBJ_SERVER_ALL_ACTIVE_NICS;
  assert_int_equal(ho_server_open_on(&f->w.plat, &c, &all), hipObjServerSuccess);
  assert_int_equal(hipObjServerNicCount(all), 3);
  hipObjServerClose(all);
  /* two NICs; the client's next transfer rides the connection it kept,
   * on the NIC that keeps it, whichever NIC's turn it is */
  static const char *const two[] = {"fake_srv1", WORLD_SERVER_NIC};
  c = config();
  c.nics = two;
  c.nicCount = 2;
  hipObjServer_t *mine = f->srv;
  assert_int_equal(ho_server_open_on(&f->w.plat, &c, &f->srv),
                   hipObjServerSuccess);
  assert_string_equal(hipObjServerNicName(f->srv, 0), "fake_srv1");
  assert_string_equal(hipObjServerNicName(f->srv, 1), WORLD_SERVER_NIC);
  for (int i = 0; i < 4; i++) {
    struct req q;
    req_init(&q, f, hipObjServerOpGet, 5000);
    memset(f->buf, 0, 5000);
    assert_int_equal(hipObjGet(NULL, f->buf, 5000, 0, &ops, &q).opError,
                     hipObjSuccess);
    assert_memory_equal(f->buf, f->object, 5000);
    req_end(&q);
  }
  hipObjServerStats_t s = stats(f);
  assert_int_equal(s.nics, 2);
  assert_int_equal(s.completed, 4);
  assert_int_equal(s.connMade, 1);
  assert_int_equal(s.connReused, 3);
  /* registered memory on both NICs: a client that starts afresh gets
   * the other NIC in turn, which moves the bytes with its own key */
  hipObjServerMem_t *pool = NULL;
  assert_int_equal(hipObjServerAlloc(f->srv, 8192, &pool), hipObjServerSuccess);
  fill(hipObjServerMemAddress(pool), 8192, 31);
  hipObjBufDeregister(f->buf);
  hipObjShutdown();
  assert_int_equal(world_init(&f->w, WORLD_CLIENT_NIC), hipObjSuccess);
  assert_int_equal(hipObjBufRegisterHost(f->buf, BUF_SIZE).opError,
                   hipObjSuccess);
  struct fake_dev_stats before, after;
  fake_device_stats(WORLD_SERVER_NIC, &before);
  struct req q;
  req_init(&q, f, hipObjServerOpGet, 8000);
  q.r.read = NULL;
  q.r.mem = pool;
  q.r.memOffset = 192;
  assert_int_equal(hipObjGet(NULL, f->buf, 8000, 0, &ops, &q).opError,
                   hipObjSuccess);
  req_end(&q);
  fake_device_stats(WORLD_SERVER_NIC, &after);
  assert_memory_equal(f->buf, (uint8_t *)hipObjServerMemAddress(pool) + 192,
                      8000);
  assert_int_equal(after.bytes_written - before.bytes_written, 8000);
  assert_int_equal(stats(f).connMade, 2);
  hipObjServerClose(f->srv); /* deregisters the pool */
  f->srv = mine;
}

/* Two rails on two subnets (issue #22, 4): the server's NICs are
 * fake_srv0 (10.0.0.2) and fake_srv1 (10.0.1.2), the client's fake_cli0
 * (10.0.0.1) and fake_cli1 (10.0.1.1). Each new connection, whichever
 * NIC's turn it is, goes to the server NIC on the client's subnet: the
 * bytes of every GET are on that NIC's counters and none on the other's. */
static void rails_by_subnet(void **state)
{
  struct fixture *f = *state;
  struct fake_device_cfg dc;
  fake_device_cfg_default(&dc);
  dc.ipv4 = 0x0a000102u; /* 10.0.1.2 */
  assert_int_equal(world_add_nic_cfg(&f->w, "fake_srv1", "0000:c2:00.0", &dc),
                   0);
  dc.ipv4 = 0x0a000101u; /* 10.0.1.1 */
  assert_int_equal(world_add_nic_cfg(&f->w, "fake_cli1", "0000:42:00.0", &dc),
                   0);
  static const char *const two[] = {WORLD_SERVER_NIC, "fake_srv1"};
  hipObjServerConfig_t c = config();
  c.nics = two;
  c.nicCount = 2;
  hipObjServer_t *mine = f->srv;
  assert_int_equal(ho_server_open_on(&f->w.plat, &c, &f->srv),
                   hipObjServerSuccess);
  /* each client NIC twice over, a new connection each: the round robin
   * alone would send one of the first two to the other subnet */
  static const char *const client[] = {"fake_cli1", "fake_cli1",
                                       WORLD_CLIENT_NIC, "fake_cli1",
                                       WORLD_CLIENT_NIC, WORLD_CLIENT_NIC};
  uint64_t want[2] = {0, 0}; /* each NIC's GET bytes */
  for (unsigned i = 0; i < 6; i++) {
    bool rail1 = strcmp(client[i], "fake_cli1") == 0;
    hipObjBufDeregister(f->buf);
    hipObjShutdown();
    assert_int_equal(world_init(&f->w, client[i]), hipObjSuccess);
    assert_int_equal(hipObjBufRegisterHost(f->buf, BUF_SIZE).opError,
                     hipObjSuccess);
    struct fake_dev_stats b0, b1, a0, a1;
    fake_device_stats(WORLD_SERVER_NIC, &b0);
    fake_device_stats("fake_srv1", &b1);
    uint64_t len = 70000 + 1111 * i; /* two chunks and some */
    for (int k = 0; k < 2; k++) { /* a new connection, then the kept one */
      struct req q;
      req_init(&q, f, hipObjServerOpGet, len);
      memset(f->buf, 0, len);
      assert_int_equal(hipObjGet(NULL, f->buf, len, 0, &ops, &q).opError,
                       hipObjSuccess);
      assert_memory_equal(f->buf, f->object, len);
      req_end(&q);
    }
    fake_device_stats(WORLD_SERVER_NIC, &a0);
    fake_device_stats("fake_srv1", &a1);
    assert_int_equal(a1.bytes_written - b1.bytes_written, rail1 ? 2 * len : 0);
    assert_int_equal(a0.bytes_written - b0.bytes_written, rail1 ? 0 : 2 * len);
    want[rail1] += 2 * len;
  }
  /* a transfer's done comes just before its worker is released */
  hipObjServerStats_t s = stats(f);
  for (int i = 0; i < 2000 && s.running > 0; i++) {
    sleep_ms(1);
    s = stats(f);
  }
  assert_int_equal(s.running, 0);
  assert_int_equal(s.completed, 12);
  assert_int_equal(s.connMade, 6);
  assert_int_equal(s.connReused, 6);
  /* each rail's counters: its own GETs, three new connections each */
  for (uint32_t k = 0; k < 2; k++) {
    hipObjServerStats_t n;
    memset(&n, 0xab, sizeof n);
    n.size = sizeof n;
    assert_int_equal(hipObjServerGetNicStats(f->srv, k, &n),
                     hipObjServerSuccess);
    assert_int_equal(n.size, sizeof n);
    assert_int_equal(n.nics, 1);
    assert_int_equal(n.completed, 6);
    assert_int_equal(n.failed, 0);
    assert_int_equal(n.bytesWritten, want[k]);
    assert_int_equal(n.bytesRead, 0);
    assert_int_equal(n.connMade, 3);
    assert_int_equal(n.connReused, 3);
    assert_int_equal(n.busy, 0);
    assert_int_equal(n.running, 0);
  }
  assert_int_equal(s.bytesWritten, want[0] + want[1]);
  hipObjServerStats_t n;
  n.size = sizeof n;
  assert_int_equal(hipObjServerGetNicStats(f->srv, 2, &n),
                   hipObjServerInvalidValue);
  assert_int_equal(hipObjServerGetNicStats(NULL, 0, &n),
                   hipObjServerInvalidValue);
  assert_int_equal(hipObjServerGetNicStats(f->srv, 0, NULL),
                   hipObjServerInvalidValue);
  n.size = 4;
  assert_int_equal(hipObjServerGetNicStats(f->srv, 0, &n),
                   hipObjServerInvalidValue);
  hipObjServerClose(f->srv);
  f->srv = mine;
}

/* The NIC list's limits: a name once, HIPOBJ_SERVER_MAX_NICS at most. */
static void nic_list_limits(void **state)
{
  struct fixture *f = *state;
  static const char *names[HIPOBJ_SERVER_MAX_NICS + 1];
  for (unsigned i = 0; i <= HIPOBJ_SERVER_MAX_NICS; i++)
    names[i] = WORLD_SERVER_NIC;
  hipObjServerConfig_t c = config();
  c.nics = names;
  c.nicCount = HIPOBJ_SERVER_MAX_NICS + 1;
  hipObjServer_t *s = NULL;
  assert_int_equal(ho_server_open_on(&f->w.plat, &c, &s),
                   hipObjServerInvalidValue);
  c.nicCount = 2; /* the same name twice */
  assert_int_equal(ho_server_open_on(&f->w.plat, &c, &s),
                   hipObjServerInvalidValue);
  names[1] = "";
  assert_int_equal(ho_server_open_on(&f->w.plat, &c, &s),
                   hipObjServerInvalidValue);
  assert_null(s);
}


/* ---- the library against its callers' races (issue #20, SAPI-1..4) ----------- */

static hipObjServer_t *two_nic_server(struct fixture *f)
{
  static const char *const two[] = {"fake_srv1", WORLD_SERVER_NIC};
  assert_int_equal(world_add_nic(&f->w, "fake_srv1", "0000:c2:00.0"), 0);
  hipObjServerConfig_t c = config();
  c.nics = two;
  c.nicCount = 2;
  hipObjServer_t *s = NULL;
  assert_int_equal(ho_server_open_on(&f->w.plat, &c, &s), hipObjServerSuccess);
  return s;
}

/* SAPI-1: a Deregister that failed on one NIC leaves the others' MRs
 * deregistered; Close must not deregister them again. */
static void partly_failed_deregister(void **state)
{
  struct fixture *f = *state;
  hipObjServer_t *s = two_nic_server(f);
  hipObjServerMem_t *m = NULL;
  assert_int_equal(hipObjServerAlloc(s, 8192, &m), hipObjServerSuccess);
  unsigned long before = fake_verb_calls("dereg_mr");
  assert_int_equal(fake_verb_fail("dereg_mr", 1, 1, EIO), 0);
  assert_int_equal(hipObjServerDeregister(m), hipObjServerRdmaError);
  assert_int_equal(fake_verb_calls("dereg_mr") - before, 2);
  /* gone from use: a transfer cannot name it any more */
  struct req q;
  req_init(&q, f, hipObjServerOpGet, 4096);
  q.r.read = NULL;
  q.r.mem = m;
  hipObjServer_t *mine = f->srv;
  f->srv = s;
  assert_int_equal(start_token(&q, "00"), hipObjServerInvalidValue);
  f->srv = mine;
  /* again: only the MR left is deregistered, once */
  assert_int_equal(hipObjServerDeregister(m), hipObjServerSuccess);
  assert_int_equal(fake_verb_calls("dereg_mr") - before, 3);
  /* one left half-deregistered for Close: it frees the rest, once (ASan
   * and the fake's lists see a second deregistration) */
  assert_int_equal(hipObjServerAlloc(s, 8192, &m), hipObjServerSuccess);
  assert_int_equal(fake_verb_fail("dereg_mr", 0, 1, EIO), 0);
  assert_int_equal(hipObjServerDeregister(m), hipObjServerRdmaError);
  hipObjServerClose(s);
}

/* SAPI-2: memory registered on another server has no keys here. */
static void foreign_memory_refused(void **state)
{
  struct fixture *f = *state;
  hipObjServer_t *other = two_nic_server(f);
  hipObjServerMem_t *m = NULL;
  assert_int_equal(hipObjServerAlloc(f->srv, 8192, &m), hipObjServerSuccess);
  hipObjServerMem_t *m2 = NULL;
  assert_int_equal(hipObjServerAlloc(other, 8192, &m2), hipObjServerSuccess);
  char *tok = app_token(f, HIPOBJ_RDMA_OP_GET, 4096);
  struct req q;
  req_init(&q, f, hipObjServerOpGet, 4096);
  q.r.read = NULL;
  q.r.mem = m2; /* the other server's, with two lkeys */
  assert_int_equal(start_token(&q, tok), hipObjServerInvalidValue);
  hipObjServer_t *mine = f->srv;
  f->srv = other;
  q.r.mem = m; /* one lkey, for a server of two NICs */
  assert_int_equal(start_token(&q, tok), hipObjServerInvalidValue);
  f->srv = mine;
  hipObjPutRdmaToken(tok);
  assert_int_equal(hipObjServerDeregister(m), hipObjServerSuccess);
  hipObjServerClose(other);
}

struct race {
  struct fixture *f;
  hipObjServer_t *srv;
  hipObjServerMem_t *mem;
  const char *token;
  hipObjServerStatus_t started;
  hipObjServerTransfer_t *xfer;
  unsigned calls;
};

/* At the hook's point, another thread's hipObjServerStart() runs. */
static void start_at_hook(void *arg, enum ho_server_point p, void *obj)
{
  struct race *r = arg;
  (void)p;
  (void)obj;
  if (r->calls++)
    return;
  struct req q;
  req_init(&q, r->f, hipObjServerOpGet, 4096);
  q.r.read = r->mem ? NULL : src_read;
  q.r.mem = r->mem;
  q.r.token = r->token;
  q.r.tokenLength = strlen(r->token);
  q.r.done = NULL;
  r->started = hipObjServerStart(r->srv, &q.r, &q.reply, &r->xfer);
}

/* SAPI-3: a Start between Deregister's check and its freeing finds the
 * memory going, never a use of freed memory. */
static void deregister_races_start(void **state)
{
  struct fixture *f = *state;
  hipObjServerMem_t *m = NULL;
  assert_int_equal(hipObjServerAlloc(f->srv, 8192, &m), hipObjServerSuccess);
  char *tok = app_token(f, HIPOBJ_RDMA_OP_GET, 4096);
  struct race r = {.f = f, .srv = f->srv, .mem = m, .token = tok};
  ho_server_set_hook(f->srv, start_at_hook, &r);
  hipObjServerStatus_t st = hipObjServerDeregister(m);
  ho_server_set_hook(f->srv, NULL, NULL);
  assert_int_equal(r.calls, 1);
  assert_int_equal(st, hipObjServerSuccess);
  assert_int_equal(r.started, hipObjServerInvalidValue);
  assert_null(r.xfer);
  hipObjPutRdmaToken(tok);
}

/* SAPI-4: a Start once Close has begun (a done callback's, say) is
 * refused: Close never frees what a new transfer would use. */
static void close_races_start(void **state)
{
  struct fixture *f = *state;
  char *tok = app_token(f, HIPOBJ_RDMA_OP_GET, 4096);
  struct race r = {.f = f, .srv = f->srv, .token = tok};
  ho_server_set_hook(f->srv, start_at_hook, &r);
  hipObjServerClose(f->srv);
  f->srv = NULL;
  assert_int_equal(r.calls, 1);
  assert_int_equal(r.started, hipObjServerBusy);
  assert_null(r.xfer);
  hipObjPutRdmaToken(tok);
}

/* S-2: a replayed token rides the client's kept connection (the token
 * proposes it) and waits there for a ready message that never comes; the
 * client's next proposal of that connection cancels it at once instead of
 * waiting for it (about 2 s before). */
static char replayed[HO_TOKEN_HEX + 1];

static int ops_send_keep(void *ctx, const char *token, size_t len)
{
  snprintf(replayed, sizeof replayed, "%.*s", (int)len, token);
  return ops_send(ctx, token, len);
}

static const hipObjOps_t ops_keep = {ops_send_keep, ops_recv};

static void replay_on_kept_connection(void **state)
{
  struct fixture *f = *state; /* readyTimeoutMs 5000 */
  struct req q;
  for (int i = 0; i < 2; i++) { /* the second proposes the kept one */
    req_init(&q, f, hipObjServerOpGet, 5000);
    assert_int_equal(hipObjGet(NULL, f->buf, 5000, 0, &ops_keep, &q).opError,
                     hipObjSuccess);
    req_end(&q);
  }
  assert_int_equal(stats(f).connReused, 1);
  struct req rp; /* the replay: no ready will come */
  req_init(&rp, f, hipObjServerOpGet, 5000);
  assert_int_equal(start_token(&rp, replayed), hipObjServerSuccess);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  req_init(&q, f, hipObjServerOpGet, 5000);
  memset(f->buf, 0, 5000);
  assert_int_equal(hipObjGet(NULL, f->buf, 5000, 0, &ops_keep, &q).opError,
                   hipObjSuccess);
  clock_gettime(CLOCK_MONOTONIC, &b);
  req_end(&q);
  double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 +
              (double)(b.tv_nsec - a.tv_nsec) / 1e6;
  assert_memory_equal(f->buf, f->object, 5000);
  req_end(&rp);
  assert_int_not_equal(rp.done_status, hipObjServerSuccess);
  if (ms >= 700)
    fail_msg("the client's next transfer waited %.0f ms behind a replay",
             ms);
}

static int setup_one_transfer(void **state)
{
  hipObjServerConfig_t c = config();
  c.maxTransfers = 1;
  c.queueWaitMs = 50; /* a start behind the held one waits 50 ms, then Busy */
  return setup_with(state, &c);
}

static int setup_one_transfer_queued(void **state)
{
  hipObjServerConfig_t c = config();
  c.maxTransfers = 1;
  c.queueWaitMs = 5000;
  return setup_with(state, &c);
}

/* Four transfer slots, one allowed to move at once: a second start
 * queues behind the first as if there were one slot. */
static int setup_one_moving(void **state)
{
  hipObjServerConfig_t c = config();
  c.maxTransfers = 4;
  c.movingMax = 1;
  c.queueWaitMs = 5000;
  return setup_with(state, &c);
}

static int setup_skip_final(void **state)
{
  hipObjServerConfig_t c = config();
  c.faultSkipFinal = 1;
  client_retries = 0; /* the server's side of one lost final, not retried */
  return setup_with(state, &c);
}

static int setup_quick(void **state)
{
  hipObjServerConfig_t c = config();
  c.readyTimeoutMs = 50;
  return setup_with(state, &c);
}

static int setup_slow_ready(void **state)
{
  hipObjServerConfig_t c = config();
  c.readyTimeoutMs = 5000;
  return setup_with(state, &c);
}

static int setup_idle(void **state)
{
  hipObjServerConfig_t c = config();
  c.idleTimeoutMs = 100;
  return setup_with(state, &c);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(open_arguments, setup, teardown),
      cmocka_unit_test_setup_teardown(start_arguments, setup, teardown),
      cmocka_unit_test_setup_teardown(other_arguments, setup, teardown),
      cmocka_unit_test_setup_teardown(refusals, setup, teardown),
      cmocka_unit_test_setup_teardown(busy_at_max_transfers,
                                      setup_one_transfer, teardown),
      cmocka_unit_test_setup_teardown(queued_start_is_served,
                                      setup_one_transfer_queued, teardown),
      cmocka_unit_test_setup_teardown(queued_start_is_served,
                                      setup_one_moving, teardown),
      cmocka_unit_test(moving_cap_rule),
      cmocka_unit_test_setup_teardown(get_by_callbacks, setup, teardown),
      cmocka_unit_test_setup_teardown(put_by_callbacks, setup, teardown),
      cmocka_unit_test_setup_teardown(time_sums_add_up, setup, teardown),
      cmocka_unit_test_setup_teardown(failed_commit_is_never_success, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(registered_memory, setup, teardown),
      cmocka_unit_test_setup_teardown(failed_rdma_is_counted_and_retried, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(unacknowledged_final_is_rdma_error,
                                      setup_skip_final, teardown),
      cmocka_unit_test_setup_teardown(completion_by_poll, setup, teardown),
      cmocka_unit_test_setup_teardown(completion_by_callback_without_handle,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(cancel_before_ready, setup, teardown),
      cmocka_unit_test_setup_teardown(cancel_between_chunks, setup, teardown),
      cmocka_unit_test_setup_teardown(ready_timeout, setup_quick, teardown),
      cmocka_unit_test_setup_teardown(close_waits_for_transfers, setup_quick,
                                      teardown),
      cmocka_unit_test_setup_teardown(idle_connections_close, setup_idle,
                                      teardown),
      cmocka_unit_test_setup_teardown(stats_size_first, setup, teardown),
      cmocka_unit_test_setup_teardown(several_nics, setup, teardown),
      cmocka_unit_test_setup_teardown(rails_by_subnet, setup, teardown),
      cmocka_unit_test_setup_teardown(nic_list_limits, setup, teardown),
      cmocka_unit_test_setup_teardown(partly_failed_deregister, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(foreign_memory_refused, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(deregister_races_start, setup_quick,
                                      teardown),
      cmocka_unit_test_setup_teardown(close_races_start, setup_quick,
                                      teardown),
      cmocka_unit_test_setup_teardown(replay_on_kept_connection,
                                      setup_slow_ready, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
