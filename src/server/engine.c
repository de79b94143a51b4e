/* SPDX-License-Identifier: MIT */
/* The server side of the protocol. Two kinds of objects:
 *   workers      a transfer in progress: a thread and registered chunk
 *                buffers (cfg.qps of them: the concurrency);
 *   connections  a QP connected to one client QP, kept between transfers
 *                and found by the client QP its next token names (the spare
 *                announced in ready), up to cfg.max_connections.
 * One more thread, the dispatcher, waits for every answer-first
 * transfer's ready through one epoll set and wakes the transfer's worker
 * when it came (a worker's thread runs only while bytes move), and
 * retires idle connections.
 * A connection's QP is connected once and retired (ERR, then destroyed
 * after a grace period), never reset for another client. */
#include "engine.h"
#include "pace.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/thread_safety.h"
#include "options.h"
#include "rdma/select.h"
#include "rdma/transport.h"
#include "rdma/vendor.h"

#define WRID_CHUNK 0x4348000000000000ull /* "CH" + chunk index */
#define MS 1000000ull
/* How long a proposal waits at least for its connection's previous
 * transfer to end (its final acknowledged): that ends within the QP's retry
 * budget (~0.5 s), and the wait is at least twice the budget. */
#define FINISH_WAIT_MS 2000u
#define REAP_PERIOD_MS 200u

enum sconn_state { SC_IDLE, SC_BUSY };

/* One connection to a client QP. */
struct sconn {
  struct ho_conn *conn;
  uint8_t gid[16];   /* the client's GID */
  uint32_t key_qpn;  /* the client QP its next token names, when keyed */
  bool keyed;
  bool stale;        /* a token named its key as a new QP: retire at the end */
  uint64_t id;       /* the connection ID; its top byte is the tag */
  uint64_t last_used_ns;
  enum sconn_state state;
};

/* A transfer in progress. */
struct worker {
  struct ho_engine *e;
  uint8_t *chunks;
  struct ibv_mr *chunks_mr;
  bool busy;
  /* The transfer, owned by the worker's thread once it starts. */
  struct sconn *sc;
  bool reuse;
  struct ho_token client;
  int op;
  uint64_t size, cookie;
  struct ho_engine_io io;
  struct ho_engine_xfer_opts xo;
  struct ho_msg ready;
  bool data_first; /* no ready, no final: the answer follows the payload */
  bool finished; /* io.finish was called */
  /* While waiting for ready (awaiting, since: under the engine's mu): a
   * full engine may cancel it after ready_grace_ms. */
  bool awaiting;
  uint64_t awaiting_since_ns;
  atomic_bool cancel;
  /* At the dispatcher (under mu): the reply was written and the
   * dispatcher waits for ready until ready_deadline_ns, then sets
   * ready_end and go. watched: its channel is in the dispatcher's epoll
   * set (the dispatcher's alone). */
  bool at_dispatcher;
  bool watched;
  uint64_t ready_deadline_ns;
  enum ho_wait_end ready_end;
  /* The worker's thread, started with the engine: it waits for `go`. */
  pthread_t thread;
  bool thread_started;
  pthread_cond_t go_cv;
  bool go; /* guarded by the engine's mu */
  /* This transfer's time so far (its thread's), added to the engine's
   * stats when it ends; t.total holds the admission until the run. */
  struct ho_engine_times t;
};

enum retire_cause { R_FAILURE, R_IDLE, R_EVICTED, R_STALE, R_ONE_SHOT, R_NONE };

struct victim {
  struct sconn *sc;
  enum retire_cause why;
};

struct ho_engine {
  struct ho_engine_config cfg;
  const struct ho_platform *plat;
  struct ho_device *dev;
  uint64_t grace_ns, finish_wait_ns; /* from the QP retry budget */
  size_t wr_piece;          /* bytes per WRITE or READ work request */
  size_t wr_piece_clean;    /* the same while pacing is not cutting the
                               window: the whole chunk on a paced device
                               unless wr_size says otherwise */
  struct ho_pace pace;      /* bytes in flight per transfer */
  struct ho_conn_attr conn_attr; /* its QPs' */
  struct worker *workers;
  ho_mutex mu;
  pthread_cond_t changed; /* a worker or a connection was released */
  pthread_t dispatcher;
  bool dispatcher_started;
  int epfd;                 /* the dispatcher's: watched channels, kick_fd */
  int kick_fd;              /* an eventfd: something for the dispatcher */
  atomic_bool pacer_awake;  /* the dispatcher looks at pacing's counter
                               while transfers move: a start past one MTU
                               kicks it when this was false */
  struct worker **scratch;  /* the dispatcher's: workers it waits for */
  bool stopping HO_GUARDED_BY(mu);
  bool refusing HO_GUARDED_BY(mu); /* ho_engine_refuse_new() */
  unsigned running HO_GUARDED_BY(mu);
  unsigned queued HO_GUARDED_BY(mu); /* starts waiting for a worker */
  unsigned moving_max HO_GUARDED_BY(mu); /* workers[0, it) are claimed */
  struct sconn **conns HO_PT_GUARDED_BY(mu); /* [0, nconns) */
  unsigned nconns HO_GUARDED_BY(mu);
  struct ho_retired retired HO_GUARDED_BY(mu);
  struct ho_engine_stats stats HO_GUARDED_BY(mu);
};

static void *worker_main(void *arg);

/* READs in flight on a software device: rxe retries a READ at once when a
 * response of a later READ arrives first, so under reordering several
 * READs in flight spend the retry count without the in-order progress
 * that resets it. */
#define SOFT_READS_OUT 2

/* Its QPs: room for every chunk in flight written in pieces, and the
 * final. Remote write at the QP's level lets a client's zero-length
 * liveness probe through (docs/protocol.md, section 7); it opens no
 * memory: every region the engine registers is local-only, so any write
 * with a length fails its key check. */
static struct ho_conn_attr conn_attr_for(const struct ho_engine *e)
{
  size_t pieces = (e->cfg.chunk_size + e->wr_piece - 1) / e->wr_piece;
  if (pieces > HO_ENGINE_PIECES)
    pieces = HO_ENGINE_PIECES;
  uint32_t wr = (uint32_t)(e->cfg.depth * pieces + 8);
  return (struct ho_conn_attr){.max_send_wr = wr < 64 ? 64 : wr,
                               .max_recv_wr = 4,
                               .qp_access = IBV_ACCESS_REMOTE_WRITE,
                               .reads_out = e->cfg.reads_out
                                                ? e->cfg.reads_out
                                                : ho_device_is_soft(e->dev)
                                                      ? SOFT_READS_OUT
                                                      : 0};
}

/* 16 KiB (4 packets at rxe's 4096-byte MTU) on a software device: rxe's
 * requester resets its retry count only on progress it is told of (an
 * acknowledgement, which a responder sends at a WRITE's last packet or
 * every 64; a READ response in order), while each go-back-N pass of a
 * reordered burst makes a packet or two of it: a 64-packet WRITE runs out
 * of its 6 retries before any acknowledgement, and a long READ's
 * restarts meet the same (docs/performance.md, "Faults: root causes").
 * With pacing on (pace.h), only while the window is cut: a clean fabric
 * moves whole chunks. */
#define SOFT_WR_PIECE (16u << 10)

static size_t wr_piece_for(const struct ho_engine *e)
{
  size_t p = e->cfg.wr_size;
  if (!p)
    p = ho_device_is_soft(e->dev) ? SOFT_WR_PIECE : e->cfg.chunk_size;
  return p < e->cfg.chunk_size ? p : e->cfg.chunk_size;
}


static void set_defaults(struct ho_engine_config *c)
{
  if (!c->qps)
    c->qps = 16;
  if (!c->max_connections)
    c->max_connections = 1024;
  if (!c->idle_timeout_ms)
    c->idle_timeout_ms = 60000;
  if (!c->grace_ms)
    c->grace_ms = 2000;
  if (!c->chunk_size)
    c->chunk_size = 1u << 20;
  if (!c->depth)
    c->depth = 4;
  if (c->depth > 32)
    c->depth = 32;
  if (!c->ready_timeout_ms)
    c->ready_timeout_ms = 10000;
  if (!c->ready_grace_ms)
    c->ready_grace_ms = 1000;
  if (!c->queue)
    c->queue = 4 * c->qps;
  if (!c->queue_wait_ms)
    c->queue_wait_ms = 10000;
  if (!c->rdma_timeout_ms)
    c->rdma_timeout_ms = 10000;
}

static struct timespec deadline_ts_ns(uint64_t ns)
{
  uint64_t t = ho_now_ns() + ns;
  return (struct timespec){(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
}

/* ---- the connection table (under mu) ------------------------------------ */

static struct sconn *find_keyed(struct ho_engine *e, const uint8_t gid[16],
                                uint32_t qpn) HO_REQUIRES(e->mu)
{
  for (unsigned i = 0; i < e->nconns; i++) {
    struct sconn *sc = e->conns[i];
    if (sc->keyed && sc->key_qpn == qpn && memcmp(sc->gid, gid, 16) == 0)
      return sc;
  }
  return NULL;
}

static void unlink_conn(struct ho_engine *e, struct sconn *sc) HO_REQUIRES(e->mu)
{
  for (unsigned i = 0; i < e->nconns; i++)
    if (e->conns[i] == sc) {
      e->conns[i] = e->conns[--e->nconns];
      return;
    }
}

static struct sconn *lru_idle(struct ho_engine *e) HO_REQUIRES(e->mu)
{
  struct sconn *best = NULL;
  for (unsigned i = 0; i < e->nconns; i++) {
    struct sconn *sc = e->conns[i];
    if (sc->state == SC_IDLE && (!best || sc->last_used_ns < best->last_used_ns))
      best = sc;
  }
  return best;
}

/* A key names one live client QP: any other connection under it is stale.
 * Idle ones go to *v; busy ones are retired when their transfer ends. */
static unsigned unkey(struct ho_engine *e, const uint8_t gid[16], uint32_t qpn,
                      struct victim *v) HO_REQUIRES(e->mu)
{
  struct sconn *old = find_keyed(e, gid, qpn);
  if (!old)
    return 0;
  old->keyed = false;
  old->stale = true;
  if (old->state != SC_IDLE)
    return 0;
  unlink_conn(e, old);
  *v = (struct victim){old, R_STALE};
  return 1;
}

static void count_retired(struct ho_engine *e, enum retire_cause why)
    HO_REQUIRES(e->mu)
{
  uint64_t *c[] = {&e->stats.retired_failure, &e->stats.retired_idle,
                   &e->stats.retired_evicted, &e->stats.retired_stale,
                   &e->stats.retired_one_shot};
  if (why < R_NONE)
    (*c[why])++;
}

/* Outside the lock: move the QP to ERR (a verbs call), then park it for
 * its grace period. */
static void retire(struct ho_engine *e, struct victim v)
{
  if (!v.sc)
    return;
  struct ho_conn *c = v.sc->conn;
  free(v.sc);
  if (c)
    ho_conn_retire(c);
  ho_mutex_lock(&e->mu);
  if (c)
    ho_retired_add(&e->retired, c, ho_now_ns());
  count_retired(e, v.why);
  ho_mutex_unlock(&e->mu);
}

/* ---- engine lifetime ---------------------------------------------------- */

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

static void worker_init(struct ho_engine *e, struct worker *w)
{
  w->e = e;
  pthread_cond_init(&w->go_cv, NULL);
}

/* The worker's staging chunks, made at its first transfer, on its own
 * thread: made at start, --rdma-qps workers of depth x chunk size each
 * (256 MiB for 64) were pinned before the first request, which took a
 * restarted gateway on a loaded host more than 10 s. */
static bool worker_chunks(struct worker *w)
{
  if (w->chunks_mr)
    return true;
  struct ho_engine *e = w->e;
  size_t bytes = e->cfg.chunk_size * e->cfg.depth;
  if (!w->chunks)
    w->chunks = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
  if (w->chunks)
    w->chunks_mr = e->dev->v->reg_mr(e->dev->pd, w->chunks, bytes,
                                     IBV_ACCESS_LOCAL_WRITE);
  if (!w->chunks_mr)
    ho_warn("engine: cannot make a worker's %zu bytes of chunk buffers", bytes);
  return w->chunks_mr != NULL;
}

static void worker_fini(struct ho_engine *e, struct worker *w)
{
  pthread_cond_destroy(&w->go_cv);
  if (w->chunks_mr && e->dev->v->dereg_mr(w->chunks_mr) != 0) {
    ho_warn("engine: cannot deregister chunk buffers: leaked");
    return;
  }
  free(w->chunks);
}

/* Retire connections idle too long and destroy QPs past their grace. */
static void reap_once(struct ho_engine *e)
{
  struct victim v[16];
  unsigned n = 0;
  uint64_t now = ho_now_ns(), limit = (uint64_t)e->cfg.idle_timeout_ms * MS;
  ho_mutex_lock(&e->mu);
  for (unsigned i = 0; i < e->nconns && n < 16;) {
    struct sconn *sc = e->conns[i];
    if (sc->state == SC_IDLE && now > sc->last_used_ns &&
        now - sc->last_used_ns > limit) {
      unlink_conn(e, sc);
      v[n++] = (struct victim){sc, R_IDLE};
    } else {
      i++;
    }
  }
  struct ho_conn *expired = ho_retired_take_expired(&e->retired, now,
                                                    e->grace_ns);
  ho_mutex_unlock(&e->mu);
  ho_conn_destroy_chain(expired);
  for (unsigned i = 0; i < n; i++)
    retire(e, v[i]);
}

/* ---- the dispatcher: every wait for ready, and the reaper ---------------- */

#define POLL_TICK_NS (1 * MS) /* a connection without a channel is polled */

/* Something for the dispatcher: a transfer to wait for, a cancel, the
 * stop. An eventfd write never blocks (EAGAIN only at a count no read
 * left, and then a wake is pending anyway), so it may be made under mu,
 * as a condition is signalled. */
static void kick(struct ho_engine *e)
{
  uint64_t one = 1;
  if (e->kick_fd >= 0 && write(e->kick_fd, &one, sizeof one) < 0 &&
      errno != EAGAIN)
    ho_warn("engine: cannot wake the dispatcher: %s", strerror(errno));
}

/* The workers whose transfers wait for ready; *stop: the engine stops and
 * nothing runs or waits any more; *moving: a transfer runs past its wait
 * for ready. */
static unsigned collect_awaiting(struct ho_engine *e, struct worker **out,
                                 bool *stop, bool *moving)
{
  unsigned n = 0;
  ho_mutex_lock(&e->mu);
  for (unsigned i = 0; i < e->cfg.qps; i++)
    if (e->workers[i].busy && e->workers[i].at_dispatcher)
      out[n++] = &e->workers[i];
  *stop = e->stopping && e->running == 0 && e->queued == 0;
  *moving = e->running > n;
  ho_mutex_unlock(&e->mu);
  return n;
}

/* Pacing's look, off the transfers' path: when a start past one MTU
 * kicked (the transfer may have ended already) and while transfers move,
 * the dispatcher reads the device's retry counter if a look is due (every
 * HO_PACE_LOOK_NS), and while they move it wakes for the next; a transfer
 * reads the window as it is (pace.h). Returns when to look again at the
 * latest. */
static uint64_t pace_once(struct ho_engine *e, bool kicked, bool moving,
                          uint64_t wake)
{
  if (!e->pace.on || !(kicked || moving))
    return wake; /* idle: the next start past an MTU kicks */
  if (moving)
    atomic_store(&e->pacer_awake, true); /* awake: starts need not kick */
  ho_pace_window(&e->pace, ho_now_ns());
  uint64_t t = ho_pace_next_look(&e->pace);
  return moving && t < wake ? t : wake;
}

/* A start past one MTU on a paced device: the dispatcher looks while it
 * moves (one packet goes in one work request at any window). */
static void wake_pacer(struct ho_engine *e, uint64_t size)
{
  if (e->pace.on && size > e->pace.mtu &&
      !atomic_exchange(&e->pacer_awake, true))
    kick(e);
}

static void watch(struct ho_engine *e, struct worker *w)
{
  int fd = ho_conn_channel_fd(w->sc->conn);
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = w};
  w->watched = fd >= 0 && epoll_ctl(e->epfd, EPOLL_CTL_ADD, fd, &ev) == 0;
}

/* Poll w's connection for ready (and arm it, then poll again, so that a
 * ready that came before the arm is not missed). True when the wait is
 * over, w->ready_end saying how: ready (or another message, or an error
 * completion), the ready timeout, or a cancel. */
static bool look(struct worker *w, uint64_t now)
{
  struct ho_conn *c = w->sc->conn;
  bool no_send = false;
  if (!w->watched)
    watch(w->e, w);
  for (int pass = 0; pass < 2; pass++) {
    enum ho_wait_end r = ho_conn_wait_msg_ex(c, &no_send, 0, NULL, &w->ready);
    if (r != HO_WAIT_TIMEOUT) { /* deadline 0: TIMEOUT is "nothing yet" */
      w->ready_end = r;
      return true;
    }
    if (atomic_load(&w->cancel)) {
      w->ready_end = HO_WAIT_CANCELLED;
      return true;
    }
    if (now >= w->ready_deadline_ns) {
      ho_warn("engine: QP 0x%x: no ready message before the ready timeout",
              c->qp->qp_num);
      w->ready_end = HO_WAIT_TIMEOUT;
      return true;
    }
    if (c->armed || !w->watched || !ho_conn_arm(c))
      return false; /* an event will come, or the next tick polls */
  }
  return false;
}

/* The wait is over: the worker's thread takes the transfer on. */
static void hand_over(struct ho_engine *e, struct worker *w)
{
  if (w->watched &&
      epoll_ctl(e->epfd, EPOLL_CTL_DEL, ho_conn_channel_fd(w->sc->conn),
                NULL) != 0)
    ho_warn("engine: cannot stop watching a channel: %s", strerror(errno));
  w->watched = false; /* its waits are the worker's from now on */
  ho_mutex_lock(&e->mu);
  w->at_dispatcher = w->awaiting = false;
  e->stats.readies_dispatched += w->ready_end == HO_WAIT_DONE;
  w->go = true;
  pthread_cond_signal(&w->go_cv);
  ho_mutex_unlock(&e->mu);
}

/* Block until a watched channel has an event, a kick, or `wake`; read the
 * events, so that the CQs can be armed again. */
static void wait_events(struct ho_engine *e, uint64_t wake)
{
  struct epoll_event ev[32];
  uint64_t now = ho_now_ns();
  int ms = wake > now ? (int)((wake - now + MS - 1) / MS) : 0;
  int n = epoll_wait(e->epfd, ev, 32, ms);
  for (int i = 0; i < n; i++) {
    struct worker *w = ev[i].data.ptr;
    uint64_t count;
    if (!w) {
      if (read(e->kick_fd, &count, sizeof count) < 0 && errno != EAGAIN)
        ho_warn("engine: cannot read the dispatcher's kick: %s",
                strerror(errno));
    } else if (ho_conn_take_events(w->sc->conn)) {
      atomic_fetch_add_explicit(&e->dev->wait_events, 1, memory_order_relaxed);
    }
  }
}

/* One look at every transfer waiting for ready; returns when to look
 * again at the latest. */
static uint64_t dispatch_once(struct ho_engine *e, unsigned n, uint64_t wake)
{
  uint64_t now = ho_now_ns();
  for (unsigned i = 0; i < n; i++) {
    struct worker *w = e->scratch[i];
    if (look(w, now)) {
      hand_over(e, w);
      continue;
    }
    uint64_t t = w->watched && w->sc->conn->armed ? w->ready_deadline_ns
                                                  : now + POLL_TICK_NS;
    if (t < wake)
      wake = t;
  }
  return wake;
}

static void *dispatcher_main(void *arg)
{
  struct ho_engine *e = arg;
  uint64_t reap_at = ho_now_ns() + (uint64_t)REAP_PERIOD_MS * MS;
  for (;;) {
    bool stop = false, moving = false;
    /* taken before the count: a start after it kicks (wake_pacer) */
    bool kicked = atomic_exchange(&e->pacer_awake, false);
    unsigned n = collect_awaiting(e, e->scratch, &stop, &moving);
    if (stop)
      break;
    uint64_t wake = pace_once(e, kicked, moving, dispatch_once(e, n, reap_at));
    if (ho_now_ns() >= reap_at) {
      reap_once(e);
      reap_at = ho_now_ns() + (uint64_t)REAP_PERIOD_MS * MS;
      continue;
    }
    wait_events(e, wake);
  }
  return NULL;
}

static hipObjOpError_t dispatcher_open(struct ho_engine *e)
{
  e->epfd = epoll_create1(EPOLL_CLOEXEC);
  e->kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  e->scratch = calloc(e->cfg.qps, sizeof *e->scratch);
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
  if (e->epfd < 0 || e->kick_fd < 0 || !e->scratch ||
      epoll_ctl(e->epfd, EPOLL_CTL_ADD, e->kick_fd, &ev) != 0)
    return hipObjInternalError;
  if (pthread_create(&e->dispatcher, NULL, dispatcher_main, e) != 0)
    return hipObjInternalError;
  e->dispatcher_started = true;
  return hipObjSuccess;
}

static void dispatcher_close(struct ho_engine *e)
{
  if (e->kick_fd >= 0)
    close(e->kick_fd);
  if (e->epfd >= 0)
    close(e->epfd);
  free(e->scratch);
}

static void init_conds(struct ho_engine *e)
{
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&e->changed, &ca);
  pthread_condattr_destroy(&ca);
}

/* The server's wait policy: HIPOBJ_SPIN_US from its environment, read as
 * the client library reads it (the only variable the engine reads). */
static const char *spin_variable(const char *name, void *ctx)
{
  (void)ctx;
  return strcmp(name, "HIPOBJ_SPIN_US") == 0 ? getenv(name) : NULL;
}

static void set_wait_policy(struct ho_device *d)
{
  struct ho_options o;
  ho_options_defaults(&o);
  ho_options_parse(&o, spin_variable, NULL);
  ho_device_set_spin(d, o.spin_us);
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
  e->epfd = e->kick_fd = -1;
  ho_mutex_init(&e->mu);
  init_conds(e);
  hipObjOpError_t err = choose_device(plat, cfg->nic, name);
  if (err == hipObjSuccess)
    err = ho_device_open(plat->verbs, plat->topo, name, &e->dev);
  if (err == hipObjSuccess) {
    set_wait_policy(e->dev);
    const struct ho_qp_tuning *t = ho_vendor_tuning(e->dev->vendor_id);
    e->grace_ns = ho_retire_grace_ns(t, (uint64_t)e->cfg.grace_ms * MS);
    e->wr_piece = wr_piece_for(e);
    e->conn_attr = conn_attr_for(e);
    unsigned mtu = ho_mtu_bytes(e->dev->active_mtu); /* 0: unknown */
    ho_pace_init(&e->pace, plat->topo, e->dev->name, e->dev->port,
                 e->cfg.pacing > 0 ||
                     (e->cfg.pacing == 0 && ho_device_is_soft(e->dev)),
                 mtu ? mtu : 4096, e->cfg.chunk_size * e->cfg.depth);
    e->wr_piece_clean =
        e->pace.on && !e->cfg.wr_size ? e->cfg.chunk_size : e->wr_piece;
    e->finish_wait_ns = 2 * ho_qp_retry_budget_ns(t);
    if (e->finish_wait_ns < (uint64_t)FINISH_WAIT_MS * MS)
      e->finish_wait_ns = (uint64_t)FINISH_WAIT_MS * MS;
    e->workers = calloc(e->cfg.qps, sizeof *e->workers);
    e->conns = calloc(e->cfg.max_connections, sizeof *e->conns);
    err = e->workers && e->conns ? hipObjSuccess : hipObjInternalError;
  }
  for (unsigned i = 0; err == hipObjSuccess && i < e->cfg.qps; i++)
    worker_init(e, &e->workers[i]);
  if (err == hipObjSuccess)
    ho_engine_share_cpus(e, 1);
  if (err == hipObjSuccess)
    err = dispatcher_open(e);
  for (unsigned i = 0; err == hipObjSuccess && i < e->cfg.qps; i++) {
    struct worker *w = &e->workers[i];
    w->thread_started = pthread_create(&w->thread, NULL, worker_main, w) == 0;
    err = w->thread_started ? hipObjSuccess : hipObjInternalError;
  }
  if (err != hipObjSuccess) {
    ho_engine_destroy(e);
    return err;
  }
  *out = e;
  return hipObjSuccess;
}

unsigned ho_engine_moving_cap(unsigned qps, unsigned moving, bool soft,
                              long cpus, unsigned share)
{
  if (moving)
    return moving < qps ? moving : qps;
  if (!soft)
    return qps;
  unsigned long cap = HO_ENGINE_SOFT_PER_CPU *
                      (unsigned long)(cpus > 0 ? cpus : 1) / (share ? share : 1);
  if (cap < 1)
    cap = 1;
  return cap < qps ? (unsigned)cap : qps;
}

bool ho_engine_is_soft(const struct ho_engine *e)
{
  return ho_device_is_soft(e->dev);
}

void ho_engine_share_cpus(struct ho_engine *e, unsigned share)
{
  unsigned cap = ho_engine_moving_cap(e->cfg.qps, e->cfg.moving,
                                      ho_device_is_soft(e->dev),
                                      ho_usable_cpus(), share);
  ho_mutex_lock(&e->mu);
  e->moving_max = cap;
  ho_mutex_unlock(&e->mu);
}

void ho_engine_refuse_new(struct ho_engine *e)
{
  ho_mutex_lock(&e->mu);
  e->refusing = true;
  ho_mutex_unlock(&e->mu);
}

static void stop_threads(struct ho_engine *e)
{
  ho_mutex_lock(&e->mu);
  e->stopping = true;
  pthread_cond_broadcast(&e->changed); /* the queue gives up */
  while (e->running > 0 || e->queued > 0)
    ho_cond_wait(&e->changed, &e->mu);
  for (unsigned i = 0; e->workers && i < e->cfg.qps; i++)
    pthread_cond_signal(&e->workers[i].go_cv);
  kick(e); /* nothing runs: the dispatcher ends */
  ho_mutex_unlock(&e->mu);
  if (e->dispatcher_started)
    pthread_join(e->dispatcher, NULL);
  for (unsigned i = 0; e->workers && i < e->cfg.qps; i++)
    if (e->workers[i].thread_started)
      pthread_join(e->workers[i].thread, NULL);
}

/* At shutdown every connection ends at once: no grace, the process is
 * going away or the device closes. */
static void drop_all_conns(struct ho_engine *e)
{
  ho_mutex_lock(&e->mu);
  unsigned n = e->nconns;
  e->nconns = 0;
  struct ho_conn *all = ho_retired_take_expired(&e->retired, 0, 0);
  ho_mutex_unlock(&e->mu);
  for (unsigned i = 0; i < n; i++) { /* no verbs call under the lock */
    ho_conn_retire(e->conns[i]->conn);
    ho_conn_destroy(e->conns[i]->conn);
    free(e->conns[i]);
  }
  ho_conn_destroy_chain(all);
}

void ho_engine_destroy(struct ho_engine *e)
{
  if (!e)
    return;
  stop_threads(e);
  if (e->conns)
    drop_all_conns(e);
  for (unsigned i = 0; e->workers && i < e->cfg.qps; i++)
    worker_fini(e, &e->workers[i]);
  free(e->workers);
  free(e->conns);
  dispatcher_close(e);
  ho_device_close(e->dev);
  pthread_cond_destroy(&e->changed);
  ho_mutex_destroy(&e->mu);
  free(e);
}

void ho_engine_get_stats(struct ho_engine *e, struct ho_engine_stats *out)
{
  ho_mutex_lock(&e->mu);
  *out = e->stats;
  out->conn_live = e->nconns;
  out->conn_idle = 0;
  for (unsigned i = 0; i < e->nconns; i++)
    out->conn_idle += e->conns[i]->state == SC_IDLE;
  out->queued_now = e->queued;
  out->awaiting_ready = 0;
  for (unsigned i = 0; i < e->cfg.qps; i++)
    out->awaiting_ready += e->workers[i].busy && e->workers[i].at_dispatcher;
  out->moving_max = e->moving_max;
  ho_mutex_unlock(&e->mu);
  out->qp_transitions =
      atomic_load_explicit(&e->dev->qp_transitions, memory_order_relaxed);
  out->paced = e->pace.on;
  out->pace_shrinks = atomic_load(&e->pace.shrinks);
  out->pace_window = atomic_load(&e->pace.window);
}

const char *ho_engine_device_name(const struct ho_engine *e)
{
  return e->dev->name;
}

void ho_engine_gid(const struct ho_engine *e, uint8_t out[16])
{
  memcpy(out, e->dev->gid.raw, 16);
}

hipObjOpError_t ho_engine_reg(struct ho_engine *e, void *addr, size_t len,
                              void **mr, uint32_t *lkey)
{
  struct ibv_mr *m = e->dev->v->reg_mr(e->dev->pd, addr, len,
                                       IBV_ACCESS_LOCAL_WRITE);
  if (!m)
    return hipObjRdmaError;
  *mr = m;
  *lkey = m->lkey;
  return hipObjSuccess;
}

int ho_engine_dereg(struct ho_engine *e, void *mr)
{
  return e->dev->v->dereg_mr(mr);
}

bool ho_engine_holds(struct ho_engine *e, const char *token, size_t token_len)
{
  struct ho_token t;
  if (!ho_token_decode(token, token_len, &t) || ho_token_tag(&t) == 0)
    return false;
  ho_mutex_lock(&e->mu);
  struct sconn *sc = find_keyed(e, t.gid, ho_token_qpn(&t));
  bool ours = sc && ho_token_tag(&t) == ho_conn_tag(sc->id);
  ho_mutex_unlock(&e->mu);
  return ours;
}

unsigned ho_engine_running(struct ho_engine *e)
{
  ho_mutex_lock(&e->mu);
  unsigned n = e->running;
  ho_mutex_unlock(&e->mu);
  return n;
}

static uint64_t random64(void)
{
  uint64_t c = 0;
  if (getrandom(&c, sizeof c, 0) != sizeof c)
    c = ho_now_ns() ^ (uint64_t)(uintptr_t)&c;
  return c;
}

static uint64_t new_cookie(void)
{
  uint64_t c = 0;
  while (c == 0)
    c = random64();
  return c;
}

/* Connection IDs have a non-zero top byte: the tag a token carries. */
static uint64_t new_conn_id(void)
{
  uint64_t id = 0;
  while (ho_conn_tag(id) == 0)
    id = random64();
  return id;
}

/* ---- the transfer, on the worker's thread ------------------------------- */

/* wait_completion's take: any completion; a failed one is reported. */
static enum ho_take take_one(struct ho_conn *c, const struct ibv_wc *wc,
                             void *arg)
{
  *(struct ibv_wc *)arg = *wc;
  if (wc->status == IBV_WC_SUCCESS)
    return HO_TAKE_DONE;
  ho_warn("engine: QP 0x%x: completion error status %d (vendor 0x%x)",
          c->qp->qp_num, (int)wc->status, wc->vendor_err);
  return HO_TAKE_ERROR;
}

static hipObjOpError_t wait_completion(struct worker *w, struct ibv_wc *wc)
{
  uint64_t t0 = ho_now_ns();
  uint64_t deadline = t0 + (uint64_t)w->e->cfg.rdma_timeout_ms * MS;
  enum ho_wait_end r = ho_conn_wait(w->sc->conn, deadline, NULL, 200, take_one, wc);
  w->t.wait += ho_now_ns() - t0;
  return r == HO_WAIT_DONE ? hipObjSuccess : hipObjRdmaError;
}

/* The io callbacks, timed into the transfer's parts. */
static int io_read_timed(struct worker *w, uint64_t off, void *buf, size_t n)
{
  uint64_t t0 = ho_now_ns();
  int r = w->io.read(w->io.ctx, off, buf, n);
  w->t.io += ho_now_ns() - t0;
  return r;
}

static int io_write_timed(struct worker *w, uint64_t off, const void *buf,
                          size_t n)
{
  uint64_t t0 = ho_now_ns();
  int r = w->io.write(w->io.ctx, off, buf, n);
  w->t.io += ho_now_ns() - t0;
  return r;
}

static int io_finish_timed(struct worker *w, int status, uint64_t bytes)
{
  uint64_t t0 = ho_now_ns();
  int r = w->io.finish(w->io.ctx, status, bytes);
  w->t.finish += ho_now_ns() - t0;
  return r;
}

static int post_send_timed(struct worker *w, struct ibv_send_wr *wr)
{
  struct ibv_send_wr *bad = NULL;
  uint64_t t0 = ho_now_ns();
  int r = w->e->dev->v->post_send(w->sc->conn->qp, wr, &bad);
  w->t.post += ho_now_ns() - t0;
  return r;
}

/* A chunk's work requests: WRITEs (a GET) or READs (a PUT) of at most the
 * engine's piece size (at most HO_ENGINE_PIECES), chained, all carrying
 * the chunk's wr_id; only the last is signalled (an error completes any,
 * and RC completes them in order). Returns how many. */
static unsigned chunk_wrs(const struct worker *w, unsigned idx, uint64_t off,
                          uint8_t *buf, size_t n, uint32_t lkey,
                          size_t piece, struct ibv_sge *sge,
                          struct ibv_send_wr *wr)
{
  const bool get = w->op == HIPOBJ_RDMA_OP_GET;
  if (piece < (n + HO_ENGINE_PIECES - 1) / HO_ENGINE_PIECES)
    piece = (n + HO_ENGINE_PIECES - 1) / HO_ENGINE_PIECES;
  unsigned k = 0;
  for (size_t at = 0; at < n || k == 0; at += piece, k++) {
    size_t len = n - at < piece ? n - at : piece;
    sge[k] = (struct ibv_sge){(uintptr_t)(buf + at), (uint32_t)len, lkey};
    wr[k] = (struct ibv_send_wr){
        .wr_id = WRID_CHUNK | idx,
        .sg_list = &sge[k],
        .num_sge = 1,
        .opcode = get ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
        .wr = {.rdma = {.remote_addr = w->client.addr + off + at,
                        .rkey = w->client.rkey}},
    };
    if (k > 0)
      wr[k - 1].next = &wr[k];
  }
  wr[k - 1].send_flags = IBV_SEND_SIGNALED;
  return k;
}

static hipObjOpError_t post_chunk(struct worker *w, unsigned idx, uint64_t off,
                                  size_t n, size_t piece)
{
  bool direct = w->xo.base != NULL;
  uint8_t *buf = direct ? w->xo.base + off
                        : w->chunks + (size_t)idx * w->e->cfg.chunk_size;
  struct ibv_sge sge[HO_ENGINE_PIECES];
  struct ibv_send_wr wr[HO_ENGINE_PIECES];
  if (w->op == HIPOBJ_RDMA_OP_GET && !direct &&
      io_read_timed(w, off, buf, n) != 0)
    return hipObjInternalError;
  chunk_wrs(w, idx, off, buf, n, direct ? w->xo.lkey : w->chunks_mr->lkey,
            piece, sge, wr);
  return post_send_timed(w, wr) == 0 ? hipObjSuccess : hipObjRdmaError;
}

struct chunk_state {
  uint64_t off[32];
  size_t len[32];
};

static bool cancelled(const struct worker *w)
{
  return w->xo.cancel && atomic_load(w->xo.cancel);
}

static void note_reads_in_flight(struct worker *w, unsigned n)
{
  ho_mutex_lock(&w->e->mu);
  if (w->op == HIPOBJ_RDMA_OP_PUT && n > w->e->stats.max_reads_in_flight)
    w->e->stats.max_reads_in_flight = n;
  ho_mutex_unlock(&w->e->mu);
}

/* Key the connection by the spare the client announced, as soon as ready
 * arrives: the client's next token may come before this transfer ends. */
static void key_by_announced_spare(struct worker *w)
{
  struct ho_engine *e = w->e;
  struct victim v = {0};
  if (w->ready.version < HO_PROTO_V2 || w->ready.next_qpn == 0 || e->cfg.fault_v1)
    return;
  ho_mutex_lock(&e->mu);
  if (!w->sc->stale) {
    if (!(w->sc->keyed && w->sc->key_qpn == w->ready.next_qpn))
      unkey(e, w->sc->gid, w->ready.next_qpn, &v);
    w->sc->key_qpn = w->ready.next_qpn;
    w->sc->keyed = true;
  }
  ho_mutex_unlock(&e->mu);
  retire(e, v);
}

/* Post final, unless a test knob skips it (*posted false). */
static hipObjOpError_t post_final(struct worker *w, int status, uint64_t bytes,
                                  bool *posted)
{
  struct ho_engine *e = w->e;
  struct ho_msg fin = {.type = HO_MSG_FINAL,
                       .version = w->ready.version,
                       .status = (uint16_t)status,
                       .cookie = w->cookie ^ (e->cfg.fault_bad_cookie ? 1 : 0),
                       .bytes = bytes,
                       .op = w->ready.op};
  bool skip = false;
  ho_mutex_lock(&e->mu);
  if (e->cfg.fault_skip_final > 0) {
    e->cfg.fault_skip_final--;
    skip = true;
  }
  ho_mutex_unlock(&e->mu);
  *posted = !skip;
  if (skip)
    return hipObjSuccess;
  uint64_t t0 = ho_now_ns();
  hipObjOpError_t err = ho_conn_send_msg(w->sc->conn, &fin);
  w->t.post += ho_now_ns() - t0;
  return err;
}

/* Send final and wait for its acknowledgement (its send completion). A
 * final that is not acknowledged fails the transfer: the client may not
 * have it, and the connection cannot be trusted with another. */
static bool send_final(struct worker *w, int status, uint64_t bytes)
{
  struct ibv_wc wc;
  bool posted = false;
  return post_final(w, status, bytes, &posted) == hipObjSuccess && posted &&
         wait_completion(w, &wc) == hipObjSuccess;
}

/* The payload moved: count its bytes before final is sent, so that the
 * counters say so by the time the client learns the outcome. */
static void note_moved(struct worker *w, uint64_t bytes)
{
  ho_mutex_lock(&w->e->mu);
  if (w->op == HIPOBJ_RDMA_OP_GET)
    w->e->stats.bytes_written += bytes;
  else
    w->e->stats.bytes_read += bytes;
  ho_mutex_unlock(&w->e->mu);
}

enum final_state { FINAL_NOT_SENT, FINAL_ACKED, FINAL_LOST };

/* A GET's final goes right behind its last WRITE: RC delivers it after the
 * WRITEs, and if one of them fails the QP errors and final is flushed, never
 * delivered. That saves the wait for the WRITEs' acknowledgement. */
static int post_final_early(struct worker *w, enum final_state *fs)
{
  bool posted = false;
  io_finish_timed(w, HO_FINAL_OK, w->size); /* every chunk was read */
  w->finished = true;
  note_moved(w, w->size);
  if (post_final(w, HO_FINAL_OK, w->size, &posted) != hipObjSuccess)
    return HO_FINAL_RDMA_ERROR;
  *fs = posted ? FINAL_ACKED : FINAL_LOST; /* ACKED once its completion comes */
  return HO_FINAL_OK;
}

/* The next post: a chunk while the pacing window holds one, else a
 * piece of half the window (at least an MTU, pace.h: below a chunk), at
 * most what is left. */
static size_t next_post(const struct worker *w, size_t window, uint64_t left)
{
  size_t n = w->e->cfg.chunk_size;
  if (window < n)
    n = window / 2 < w->e->pace.min / 2 ? w->e->pace.min / 2 : window / 2;
  return left < n ? (size_t)left : n;
}

/* Move the payload with up to `depth` work requests in flight, and no
 * more bytes in flight than the pacing window (the first post always
 * goes). Chunks complete in order on an RC QP, so they are recycled
 * round-robin. */
static int move_payload(struct worker *w, uint64_t *moved, enum final_state *fs)
{
  const size_t chunk = w->e->cfg.chunk_size;
  const unsigned depth = w->e->cfg.depth;
  const bool get = w->op == HIPOBJ_RDMA_OP_GET;
  struct chunk_state cs;
  uint64_t next = 0, out_bytes = 0;
  unsigned inflight = 0, head = 0, max_inflight = 0;
  *moved = 0;
  while (*moved < w->size) {
    size_t window = ho_pace_current(&w->e->pace);
    size_t piece = ho_pace_troubled(&w->e->pace, window) ? w->e->wr_piece
                                                           : w->e->wr_piece_clean;
    while (inflight < depth && next < w->size) {
      size_t n = next_post(w, window, w->size - next);
      if (inflight > 0 && out_bytes + n > window)
        break;
      if (cancelled(w))
        return HO_FINAL_STORE_ERROR; /* the chunks in flight die with the QP */
      unsigned idx = (head + inflight) % depth;
      hipObjOpError_t err = post_chunk(w, idx, next, n, piece);
      if (err != hipObjSuccess)
        return err == hipObjInternalError ? HO_FINAL_STORE_ERROR : HO_FINAL_RDMA_ERROR;
      cs.off[idx] = next;
      cs.len[idx] = n;
      next += n;
      out_bytes += n;
      ho_pace_posted(&w->e->pace, n);
      if (++inflight > max_inflight)
        max_inflight = inflight;
      if (get && !w->data_first && next == w->size &&
          post_final_early(w, fs) != HO_FINAL_OK)
        return HO_FINAL_RDMA_ERROR;
    }
    struct ibv_wc wc;
    if (wait_completion(w, &wc) != hipObjSuccess)
      return HO_FINAL_RDMA_ERROR;
    unsigned idx = (unsigned)(wc.wr_id & 0xffff);
    if ((wc.wr_id & ~0xffffull) != WRID_CHUNK || idx != head)
      return HO_FINAL_RDMA_ERROR;
    if (!get && !w->xo.base &&
        io_write_timed(w, cs.off[idx], w->chunks + (size_t)idx * chunk,
                       cs.len[idx]) != 0)
      return HO_FINAL_STORE_ERROR;
    *moved += cs.len[idx];
    out_bytes -= cs.len[idx];
    head = (head + 1) % depth;
    inflight--;
  }
  note_reads_in_flight(w, max_inflight);
  return HO_FINAL_OK;
}

static void account(struct worker *w, int status, bool timed_out,
                    bool final_ok, uint64_t bytes)
{
  struct ho_engine *e = w->e;
  ho_mutex_lock(&e->mu);
  (void)bytes; /* counted by note_moved(), before final */
  if (status == HO_FINAL_OK && final_ok) {
    e->stats.completed++;
  } else {
    e->stats.failed++;
  }
  if (status == HO_FINAL_OK && !final_ok)
    e->stats.final_failed++;
  if (timed_out)
    e->stats.timed_out++;
  if (status == HO_FINAL_BAD_COOKIE)
    e->stats.bad_cookie++;
  if (status == HO_FINAL_RDMA_ERROR && !timed_out)
    e->stats.rdma_failed++;
  ho_mutex_unlock(&e->mu);
}

/* Ready's status is 0 (docs/protocol.md, section 4); anything else is a
 * malformed ready, answered with final status 4. */
static bool ready_matches(const struct worker *w)
{
  return w->ready.status == 0 && w->ready.bytes == w->size &&
         (w->ready.version < HO_PROTO_V2 || w->ready.op == ho_wire_op(w->op));
}

/* Data first (docs/protocol.md, section 5): no ready, no final. Every
 * chunk's completion is waited for (a GET's WRITEs acknowledged), and a
 * PUT commits, before the caller answers with the outcome. */
static int run_data_first(struct worker *w, uint64_t *moved, bool *finished)
{
  enum final_state fs = FINAL_NOT_SENT;
  int status = HO_FINAL_OK;
  if (cancelled(w))
    status = HO_FINAL_STORE_ERROR;
  else if (!worker_chunks(w))
    status = HO_FINAL_RDMA_ERROR;
  if (status == HO_FINAL_OK)
    status = move_payload(w, moved, &fs);
  if (status == HO_FINAL_OK) {
    *finished = true;
    if (io_finish_timed(w, HO_FINAL_OK, *moved) != 0 &&
        w->op == HIPOBJ_RDMA_OP_PUT)
      status = HO_FINAL_STORE_ERROR;
  }
  if (status == HO_FINAL_OK)
    note_moved(w, *moved);
  return status;
}

/* *finished: io.finish was called (a PUT's commit). *final_ok: the final
 * message was acknowledged. */
static int run_transfer(struct worker *w, bool *timed_out, uint64_t *moved,
                        bool *finished, bool *final_ok)
{
  if (w->data_first)
    return run_data_first(w, moved, finished);
  enum final_state fs = FINAL_NOT_SENT;
  struct ibv_wc wc;
  *moved = 0;
  /* The dispatcher waited for ready (until the ready timeout, or until a
   * full engine cancelled the wait: the worker is wanted, this client is
   * late). */
  if (w->ready_end != HO_WAIT_DONE || w->ready.type != HO_MSG_READY) {
    *timed_out = true; /* the client never came back: reclaim */
    *final_ok = false;
    return HO_FINAL_RDMA_ERROR;
  }
  key_by_announced_spare(w);
  int status = HO_FINAL_OK;
  if (w->ready.cookie != w->cookie)
    status = HO_FINAL_BAD_COOKIE;
  else if (!ready_matches(w))
    status = HO_FINAL_BAD_REQUEST;
  else if (cancelled(w))
    status = HO_FINAL_STORE_ERROR;
  else if (!worker_chunks(w))
    status = HO_FINAL_RDMA_ERROR;
  if (status == HO_FINAL_OK)
    status = move_payload(w, moved, &fs);
  /* The payload moved: finish before final is acknowledged (a PUT commits
   * here, before its final is sent), so the caller's side is done when the
   * client learns the outcome. */
  *finished = w->finished;
  if (status == HO_FINAL_OK && !*finished) {
    *finished = true;
    if (io_finish_timed(w, HO_FINAL_OK, *moved) != 0 &&
        w->op == HIPOBJ_RDMA_OP_PUT)
      status = HO_FINAL_STORE_ERROR;
  }
  if (fs == FINAL_NOT_SENT && status == HO_FINAL_OK)
    note_moved(w, *moved);
  if (fs == FINAL_NOT_SENT)
    *final_ok = send_final(w, status, status == HO_FINAL_OK ? *moved : 0);
  else if (status != HO_FINAL_OK) /* a WRITE failed: final was flushed */
    *final_ok = false;
  else /* the early final's completion follows the WRITEs' */
    *final_ok = fs == FINAL_ACKED && wait_completion(w, &wc) == hipObjSuccess;
  return status;
}

static void release_worker(struct ho_engine *e, struct worker *w)
    HO_REQUIRES(e->mu)
{
  w->busy = w->awaiting = w->at_dispatcher = false;
  atomic_store(&w->cancel, false);
  w->sc = NULL;
  e->running--;
  pthread_cond_broadcast(&e->changed);
}

/* After the transfer: keep the connection for the client's next token, or
 * retire it. */
static void end_transfer(struct worker *w, bool ok)
{
  struct ho_engine *e = w->e;
  struct sconn *sc = w->sc;
  struct victim v = {0};
  ho_mutex_lock(&e->mu);
  if (ok && sc->keyed && !sc->stale) {
    sc->state = SC_IDLE;
    sc->last_used_ns = ho_now_ns();
    pthread_cond_broadcast(&e->changed);
  } else {
    unlink_conn(e, sc);
    v = (struct victim){sc, !ok ? R_FAILURE : sc->stale ? R_STALE : R_ONE_SHOT};
  }
  ho_mutex_unlock(&e->mu);
  retire(e, v);
}

/* A data-first transfer's answer: done:<bytes>, or why it failed. */
static enum ho_engine_start_result data_first_reply(int status, uint64_t moved,
                                                   char reply[HO_ENGINE_REPLY_MAX])
{
  if (status == HO_FINAL_OK) {
    snprintf(reply, HO_ENGINE_REPLY_MAX, HO_REPLY_DONE "%llu",
             (unsigned long long)moved);
    return HO_ENGINE_STARTED;
  }
  snprintf(reply, HO_ENGINE_REPLY_MAX, "%s",
           status == HO_FINAL_RDMA_ERROR ? HO_REPLY_RDMA_FAILED : "500");
  return HO_ENGINE_RAN_FAILED;
}

static void add_times(struct ho_engine_times *sum,
                      const struct ho_engine_times *t)
{
  sum->transfers++;
  sum->admit += t->admit;
  sum->post += t->post;
  sum->wait += t->wait;
  sum->io += t->io;
  sum->finish += t->finish;
  sum->total += t->total;
}

/* reply: data first, the answer (and *res its start result); NULL
 * otherwise. */
static void run_one(struct worker *w, char *reply,
                    enum ho_engine_start_result *res)
{
  bool timed_out = false, finished = false, final_ok = true;
  uint64_t moved = 0, t0 = ho_now_ns();
  int status = run_transfer(w, &timed_out, &moved, &finished, &final_ok);
  if (reply)
    *res = data_first_reply(status, moved, reply);
  if (!finished)
    io_finish_timed(w, status, moved);
  account(w, status, timed_out, final_ok, moved);
  end_transfer(w, status == HO_FINAL_OK && final_ok);
  /* counted before the caller can learn the outcome (xo.done) */
  w->t.total += ho_now_ns() - t0; /* it held the admission */
  ho_mutex_lock(&w->e->mu);
  add_times(&w->e->stats.times, &w->t);
  ho_mutex_unlock(&w->e->mu);
  if (w->xo.done) {
    struct ho_engine_outcome o = {status, moved, timed_out, final_ok,
                                  cancelled(w)};
    w->xo.done(w->io.ctx, &o);
  }
  /* Released last: once it is, the engine may be destroyed. */
  ho_mutex_lock(&w->e->mu);
  release_worker(w->e, w);
  ho_mutex_unlock(&w->e->mu);
}

/* A worker's thread: one transfer each time ho_engine_start() says go, no
 * thread made per transfer. */
static void *worker_main(void *arg)
{
  struct worker *w = arg;
  struct ho_engine *e = w->e;
  ho_mutex_lock(&e->mu);
  for (;;) {
    while (!w->go && !e->stopping)
      ho_cond_wait(&w->go_cv, &e->mu);
    if (!w->go)
      break;
    w->go = false;
    ho_mutex_unlock(&e->mu);
    run_one(w, NULL, NULL);
    ho_mutex_lock(&e->mu);
  }
  ho_mutex_unlock(&e->mu);
  return NULL;
}

/* ---- starting a transfer, on the caller's thread ------------------------ */

struct plan {
  struct worker *w;
  struct sconn *sc;
  bool reuse;
  struct victim v[2];
  unsigned nv;
};

/* A free worker among the first moving_max: only these are ever claimed,
 * so at most moving_max are busy (the cap is set at open, before any
 * start). */
static struct worker *claim_worker(struct ho_engine *e) HO_REQUIRES(e->mu)
{
  for (unsigned i = 0; i < e->moving_max; i++)
    if (!e->workers[i].busy)
      return &e->workers[i];
  return NULL;
}

/* Every worker is busy: cancel the transfer that has waited longest for
 * its ready message, if longer than ready_grace_ms (tokens that never send
 * ready must not hold the engine), and wait for a worker to free up. */
static struct worker *reclaim_worker(struct ho_engine *e) HO_REQUIRES(e->mu)
{
  uint64_t now = ho_now_ns(), grace = (uint64_t)e->cfg.ready_grace_ms * MS;
  struct worker *late = NULL;
  for (unsigned i = 0; i < e->cfg.qps; i++) {
    struct worker *w = &e->workers[i];
    if (w->busy && w->awaiting && !atomic_load(&w->cancel) &&
        now - w->awaiting_since_ns >= grace &&
        (!late || w->awaiting_since_ns < late->awaiting_since_ns))
      late = w;
  }
  if (!late)
    return NULL;
  atomic_store(&late->cancel, true);
  e->stats.ready_reclaimed++;
  kick(e);
  struct timespec until = deadline_ts_ns(e->finish_wait_ns);
  struct worker *w;
  while (!(w = claim_worker(e)))
    if (ho_cond_timedwait(&e->changed, &e->mu, &until) == ETIMEDOUT)
      return NULL;
  return w;
}

/* Every worker is busy and none can be reclaimed: wait for one, as one
 * of at most cfg.queue waiting starts, for at most cfg.queue_wait_ms (a
 * burst of requests beyond the workers waits instead of getting 503;
 * docs/architecture.md). NULL: the queue is full, the wait ran out, or
 * the engine stops. */
static struct worker *queue_for_worker(struct ho_engine *e) HO_REQUIRES(e->mu)
{
  if (e->queued >= e->cfg.queue) {
    e->stats.queue_full++;
    return NULL;
  }
  e->queued++;
  e->stats.queued++;
  if (e->queued > e->stats.max_queued)
    e->stats.max_queued = e->queued;
  struct timespec until = deadline_ts_ns((uint64_t)e->cfg.queue_wait_ms * MS);
  struct worker *w = NULL;
  while (!e->stopping && !e->refusing && !(w = claim_worker(e)))
    if (ho_cond_timedwait(&e->changed, &e->mu, &until) == ETIMEDOUT) {
      w = claim_worker(e);
      break;
    }
  if (!w)
    e->stats.queue_timeouts += !e->stopping && !e->refusing;
  e->queued--;
  if (e->stopping)
    pthread_cond_broadcast(&e->changed); /* stop_threads() waits for it */
  return w;
}

/* A client proposes a connection only once its last transfer there has
 * returned, so a transfer on it still waiting for ready is not the
 * client's: a replayed token. Cancel it now rather than let the client's
 * next transfer wait for it (it ends within a millisecond, and retires the
 * connection: the client gets a new one in this same round trip). */
static void cancel_awaiting_on(struct ho_engine *e, const struct sconn *sc)
    HO_REQUIRES(e->mu)
{
  for (unsigned i = 0; i < e->cfg.qps; i++) {
    struct worker *w = &e->workers[i];
    if (w->busy && w->awaiting && w->sc == sc &&
        !atomic_exchange(&w->cancel, true)) {
      e->stats.ready_reclaimed++;
      kick(e);
    }
  }
}

/* The connection the token proposes, once its previous transfer ended; NULL
 * if the proposal does not name one of ours. */
static struct sconn *proposed_conn(struct ho_engine *e, const struct ho_token *t)
    HO_REQUIRES(e->mu)
{
  uint8_t tag = ho_token_tag(t);
  struct timespec until = deadline_ts_ns(e->finish_wait_ns);
  for (;;) {
    struct sconn *sc = find_keyed(e, t->gid, ho_token_qpn(t));
    if (!sc || tag == 0 || tag != ho_conn_tag(sc->id) || e->cfg.fault_v1)
      return NULL;
    if (sc->state == SC_IDLE)
      return sc;
    cancel_awaiting_on(e, sc);
    if (ho_cond_timedwait(&e->changed, &e->mu, &until) == ETIMEDOUT)
      return NULL;
  }
}

/* A table entry for a new connection, making room if needed. */
static struct sconn *reserve_conn(struct ho_engine *e, struct plan *p)
    HO_REQUIRES(e->mu)
{
  if (e->nconns >= e->cfg.max_connections) {
    struct sconn *old = lru_idle(e);
    if (!old)
      return NULL;
    unlink_conn(e, old);
    p->v[p->nv++] = (struct victim){old, R_EVICTED};
  }
  struct sconn *sc = calloc(1, sizeof *sc);
  if (sc) {
    sc->state = SC_BUSY;
    e->conns[e->nconns++] = sc;
  }
  return sc;
}

static enum ho_engine_start_result plan_transfer(struct ho_engine *e,
                                                 const struct ho_token *t,
                                                 struct plan *p)
    HO_REQUIRES(e->mu)
{
  if (e->stopping || e->refusing)
    return HO_ENGINE_BUSY;
  if (!(p->w = claim_worker(e)) && !(p->w = reclaim_worker(e)) &&
      !(p->w = queue_for_worker(e)))
    return HO_ENGINE_BUSY;
  p->w->busy = true; /* held while waiting for a finishing connection */
  p->w->awaiting = true;
  p->w->awaiting_since_ns = ho_now_ns();
  p->sc = proposed_conn(e, t);
  p->reuse = p->sc != NULL;
  if (!p->reuse) {
    p->nv += unkey(e, t->gid, ho_token_qpn(t), &p->v[p->nv]);
    p->sc = reserve_conn(e, p);
  }
  if (!p->sc) {
    p->w->busy = p->w->awaiting = false;
    return HO_ENGINE_BUSY;
  }
  p->sc->state = SC_BUSY;
  p->w->sc = p->sc; /* under the lock: cancel_awaiting_on() reads it */
  e->running++;
  e->stats.started++;
  if (p->reuse)
    e->stats.conn_reused++;
  return HO_ENGINE_STARTED;
}

/* A new connection: a fresh QP, connected to the token's QP. */
static bool connect_new(struct worker *w)
{
  struct ho_engine *e = w->e;
  struct sconn *sc = w->sc;
  memcpy(sc->gid, w->client.gid, 16);
  sc->id = new_conn_id();
  if (ho_conn_create(e->dev, &e->conn_attr, &sc->conn) != hipObjSuccess)
    return false;
  if (ho_conn_connect(sc->conn, &w->client,
                      ho_psn_from_cookie(w->cookie, HO_PSN_SERVER_TO_CLIENT),
                      ho_psn_from_cookie(w->cookie, HO_PSN_CLIENT_TO_SERVER)) !=
      hipObjSuccess)
    return false;
  ho_mutex_lock(&e->mu);
  e->stats.conn_made++;
  ho_mutex_unlock(&e->mu);
  return true;
}

/* The transfer never started: undo the plan. */
static void abandon(struct worker *w)
{
  struct ho_engine *e = w->e;
  struct victim v = {w->sc, R_FAILURE};
  ho_mutex_lock(&e->mu);
  unlink_conn(e, w->sc);
  e->stats.started--;
  ho_mutex_unlock(&e->mu);
  retire(e, v);
  ho_mutex_lock(&e->mu);
  release_worker(e, w);
  ho_mutex_unlock(&e->mu);
}

/* The reply: our QP, the cookie in the address field, the offer in the
 * reserved fields. */
static void write_reply(const struct worker *w, char reply[HO_ENGINE_REPLY_MAX])
{
  struct ho_token mine;
  struct ho_conn_offer offer = {.version = HO_PROTO_V2,
                                .reuse = w->reuse,
                                .probes = ho_token_data_first(&w->client),
                                .conn_id = w->sc->id};
  if (w->e->cfg.fault_v1)
    offer = (struct ho_conn_offer){.version = HO_PROTO_V1};
  ho_conn_token(w->sc->conn, &mine);
  mine.addr = w->cookie;
  ho_offer_encode(&offer, &mine);
  memcpy(reply, "200:", 4);
  ho_token_encode(&mine, reply + 4);
}

/* The admission ends: its time is the transfer's first part. */
static void admitted(struct worker *w, uint64_t t0)
{
  w->t.admit = ho_now_ns() - t0;
  w->t.total = w->t.admit;
}

/* Data first: on the caller's thread, to its end; the caller answers. */
static enum ho_engine_start_result start_data_first(struct worker *w,
                                                    uint64_t t0,
                                                    char reply[HO_ENGINE_REPLY_MAX])
{
  enum ho_engine_start_result res = HO_ENGINE_RAN_FAILED;
  admitted(w, t0);
  ho_mutex_lock(&w->e->mu);
  w->awaiting = false;
  w->e->stats.data_first++;
  ho_mutex_unlock(&w->e->mu);
  run_one(w, reply, &res);
  return res;
}

/* Answer first: the dispatcher waits for ready, and the worker's thread
 * runs once it came. */
static void await_ready(struct worker *w, uint64_t t0)
{
  struct ho_engine *e = w->e;
  admitted(w, t0); /* before the worker can run */
  ho_mutex_lock(&e->mu);
  w->ready_deadline_ns = ho_now_ns() + (uint64_t)e->cfg.ready_timeout_ms * MS;
  w->at_dispatcher = true;
  kick(e);
  ho_mutex_unlock(&e->mu);
}

enum ho_engine_start_result ho_engine_start(struct ho_engine *e,
                                            const char *token, size_t token_len,
                                            int op, uint64_t size,
                                            const struct ho_engine_io *io,
                                            char reply[HO_ENGINE_REPLY_MAX])
{
  return ho_engine_start_ex(e, token, token_len, op, size, io, NULL, reply);
}

enum ho_engine_start_result ho_engine_start_ex(
    struct ho_engine *e, const char *token, size_t token_len, int op,
    uint64_t size, const struct ho_engine_io *io,
    const struct ho_engine_xfer_opts *opts, char reply[HO_ENGINE_REPLY_MAX])
{
  uint64_t t0 = ho_now_ns();
  struct ho_token client;
  struct plan p = {0};
  if (!ho_token_decode(token, token_len, &client))
    return HO_ENGINE_BAD_TOKEN;
  if (client.transport != HO_TRANSPORT_RC || client.len != size || size == 0 ||
      (op != HIPOBJ_RDMA_OP_GET && op != HIPOBJ_RDMA_OP_PUT))
    return HO_ENGINE_DECLINE;
  ho_mutex_lock(&e->mu);
  enum ho_engine_start_result r = plan_transfer(e, &client, &p);
  ho_mutex_unlock(&e->mu);
  for (unsigned i = 0; i < p.nv; i++)
    retire(e, p.v[i]);
  if (r != HO_ENGINE_STARTED)
    return r;
  wake_pacer(e, size);
  struct worker *w = p.w;
  w->reuse = p.reuse;
  w->client = client;
  w->op = op;
  w->size = size;
  w->io = *io;
  w->xo = opts ? *opts : (struct ho_engine_xfer_opts){0};
  w->cookie = new_cookie();
  memset(&w->ready, 0, sizeof w->ready);
  w->finished = false;
  w->t = (struct ho_engine_times){0};
  w->data_first = e->cfg.data_first && w->reuse && ho_token_data_first(&client);
  if (w->data_first)
    return start_data_first(w, t0, reply);
  if ((!w->reuse && !connect_new(w)) ||
      ho_conn_post_msg_recv(w->sc->conn) != hipObjSuccess) {
    abandon(w);
    return HO_ENGINE_DECLINE;
  }
  write_reply(w, reply);
  await_ready(w, t0);
  return HO_ENGINE_STARTED;
}
