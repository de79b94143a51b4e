/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE /* ppoll */
#include "rdma/transport.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "rdma/select.h"
#include "rdma/vendor.h"

#define GID_SCAN_MAX 1024

unsigned ho_mtu_bytes(enum ibv_mtu m)
{
  switch (m) {
  case IBV_MTU_256: return 256;
  case IBV_MTU_512: return 512;
  case IBV_MTU_1024: return 1024;
  case IBV_MTU_2048: return 2048;
  case IBV_MTU_4096: return 4096;
  }
  return 0;
}

static struct ibv_context *open_by_name(const struct ho_verbs_ops *v,
                                        const char *name)
{
  int n = 0;
  struct ibv_device **list = v->get_device_list(&n);
  if (!list)
    return NULL;
  struct ibv_context *ctx = NULL;
  for (int i = 0; i < n && !ctx; i++)
    if (strcmp(v->get_device_name(list[i]), name) == 0)
      ctx = v->open_device(list[i]);
  v->free_device_list(list);
  return ctx;
}

static bool first_active_port(struct ho_device *d, uint8_t nports,
                              struct ibv_port_attr *pa)
{
  for (uint8_t p = 1; p <= nports; p++) {
    memset(pa, 0, sizeof *pa);
    if (d->v->query_port(d->ctx, p, pa) == 0 && pa->state == IBV_PORT_ACTIVE) {
      d->port = p;
      return true;
    }
  }
  return false;
}

static void choose_gid(struct ho_device *d, const struct ho_topology *topo,
                       int table_len)
{
  static _Thread_local struct ho_gid_entry e[GID_SCAN_MAX];
  size_t n = 0;
  if (table_len > GID_SCAN_MAX)
    table_len = GID_SCAN_MAX;
  for (int i = 0; i < table_len; i++) {
    enum ho_gid_type t = topo ? topo->ops->gid_type(topo, d->name, d->port, i)
                              : HO_GID_UNKNOWN;
    union ibv_gid g;
    if (t == HO_GID_UNKNOWN || d->v->query_gid(d->ctx, d->port, i, &g) != 0)
      continue;
    e[n].index = i;
    e[n].type = t;
    memcpy(e[n].raw, g.raw, 16);
    n++;
  }
  d->gid_index = ho_select_gid(e, n);
  if (d->v->query_gid(d->ctx, d->port, d->gid_index, &d->gid) != 0)
    memset(&d->gid, 0, sizeof d->gid);
}

/* The capability bits are a claim; a window allocated and freed is proof
 * (some providers report the bits and have no alloc_mw). */
static void probe_windows(struct ho_device *d)
{
  if (!d->mw_type2)
    return;
  struct ibv_mw *mw = d->v->alloc_mw(d->pd, IBV_MW_TYPE_2);
  d->mw_type2 = mw != NULL;
  if (mw && d->v->dealloc_mw(mw) != 0)
    ho_warn("cannot free a probe memory window");
}

hipObjOpError_t ho_device_open(const struct ho_verbs_ops *v,
                               const struct ho_topology *topo,
                               const char *name, struct ho_device **out)
{
  hipObjOpError_t err = hipObjNicNotFound;
  if (!v || !name || strlen(name) >= HO_NIC_NAME_MAX)
    return hipObjNicNotFound;
  struct ho_device *d = calloc(1, sizeof *d);
  if (!d)
    return hipObjInternalError;
  d->v = v;
  snprintf(d->name, sizeof d->name, "%s", name);
  d->ctx = open_by_name(v, name);
  if (!d->ctx)
    goto free_dev;
  struct ibv_device_attr da;
  struct ibv_port_attr pa;
  err = hipObjRdmaError;
  if (v->query_device(d->ctx, &da) != 0)
    goto close_ctx;
  err = hipObjNicNotFound;
  if (!first_active_port(d, da.phys_port_cnt, &pa))
    goto close_ctx;
  err = hipObjRdmaError;
  d->vendor_id = da.vendor_id;
  d->vendor_part_id = da.vendor_part_id;
  d->max_qp_rd_atom = da.max_qp_rd_atom;
  d->max_qp_init_rd_atom = da.max_qp_init_rd_atom;
  d->mw_type2 = (da.device_cap_flags & (IBV_DEVICE_MEM_WINDOW_TYPE_2A |
                                        IBV_DEVICE_MEM_WINDOW_TYPE_2B)) != 0;
  d->active_mtu = pa.active_mtu;
  d->lid = pa.lid;
  d->roce = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
  choose_gid(d, topo, pa.gid_tbl_len);
  d->pd = v->alloc_pd(d->ctx);
  if (!d->pd)
    goto close_ctx;
  probe_windows(d);
  ho_device_set_spin(d, HO_SPIN_US_AUTO);
  *out = d;
  return hipObjSuccess;

close_ctx:
  v->close_device(d->ctx);
free_dev:
  free(d);
  return err;
}

void ho_device_close(struct ho_device *d)
{
  if (!d)
    return;
  if (d->pd)
    d->v->dealloc_pd(d->pd);
  if (d->ctx)
    d->v->close_device(d->ctx);
  free(d);
}

/* ---- the wait policy --------------------------------------------------- */

#define RXE_VENDOR_ID 0xffffffu /* rdma_rxe's device attribute */

unsigned ho_spin_us_default(bool soft, long cpus)
{
  return soft || cpus <= 2 ? 0 : 10;
}

bool ho_device_is_soft(const struct ho_device *d)
{
  return d->vendor_id == RXE_VENDOR_ID || strncmp(d->name, "rxe", 3) == 0 ||
         strncmp(d->name, "siw", 3) == 0;
}

/* The CPUs this process may run on (its affinity), else those online. */
long ho_usable_cpus(void)
{
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    return CPU_COUNT(&set);
  return sysconf(_SC_NPROCESSORS_ONLN);
}

/* A quarter of the process's file descriptors (RLIMIT_NOFILE, soft). */
static unsigned channel_budget(void)
{
  struct rlimit r;
  if (getrlimit(RLIMIT_NOFILE, &r) != 0)
    return 256;
  if (r.rlim_cur == RLIM_INFINITY || r.rlim_cur / 4 > 65536)
    return 65536;
  return (unsigned)(r.rlim_cur / 4);
}

void ho_device_set_spin(struct ho_device *d, unsigned spin_us)
{
  d->max_channels = channel_budget();
  d->block = spin_us != HO_SPIN_US_POLL;
  if (spin_us == HO_SPIN_US_AUTO)
    spin_us = ho_spin_us_default(ho_device_is_soft(d), ho_usable_cpus());
  else if (spin_us > HO_SPIN_US_MAX)
    spin_us = 0; /* poll: the window is not used */
  d->spin_ns = (uint64_t)spin_us * 1000u;
}

static uint8_t rd_atomic_for(const struct ho_device *d)
{
  int n = ho_vendor_tuning(d->vendor_id)->rd_atomic_cap;
  if (d->max_qp_rd_atom < n)
    n = d->max_qp_rd_atom;
  if (d->max_qp_init_rd_atom < n)
    n = d->max_qp_init_rd_atom;
  return (uint8_t)(n < 1 ? 1 : n);
}

/* Every state change goes through here, so the device counts them. */
static int modify_state(struct ho_conn *c, struct ibv_qp_attr *a, int mask)
{
  atomic_fetch_add_explicit(&c->dev->qp_transitions, 1, memory_order_relaxed);
  return c->dev->v->modify_qp(c->qp, a, mask);
}

hipObjOpError_t ho_conn_set_access(struct ho_conn *c, int access)
{
  struct ibv_qp_attr a = {.qp_access_flags = (unsigned)access};
  return c->dev->v->modify_qp(c->qp, &a, IBV_QP_ACCESS_FLAGS) == 0
             ? hipObjSuccess
             : hipObjRdmaError;
}

static int qp_to_init(struct ho_conn *c, int access)
{
  struct ibv_qp_attr a = {
      .qp_state = IBV_QPS_INIT,
      .pkey_index = 0,
      .port_num = c->dev->port,
      .qp_access_flags = access,
  };
  return modify_state(c, &a,
                      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                          IBV_QP_ACCESS_FLAGS);
}

/* A completion channel for the connection's CQ, if its waits may block. Its
 * fd is non-blocking: the wait blocks in ppoll(), with a timeout. Without
 * one (no channel, no fd left) the waits poll and back off, as before. */
static void open_channel(struct ho_conn *c)
{
  const struct ho_verbs_ops *v = c->dev->v;
  struct ho_device *d = c->dev;
  if (!d->block)
    return;
  if (atomic_fetch_add(&d->channels, 1) >= d->max_channels) {
    atomic_fetch_sub(&d->channels, 1);
    ho_debug("%u completion channels already: this connection's waits poll",
             d->max_channels);
    return;
  }
  c->ch = v->create_comp_channel(d->ctx);
  int fl = c->ch ? fcntl(c->ch->fd, F_GETFL) : -1;
  if (c->ch && (fl < 0 || fcntl(c->ch->fd, F_SETFL, fl | O_NONBLOCK) != 0)) {
    v->destroy_comp_channel(c->ch);
    c->ch = NULL;
  }
  if (!c->ch) {
    atomic_fetch_sub(&d->channels, 1);
    ho_debug("no completion channel (%s): waits poll", strerror(errno));
  }
}

static void close_channel(struct ho_conn *c)
{
  if (!c->ch)
    return;
  if (c->dev->v->destroy_comp_channel(c->ch) != 0)
    ho_warn("cannot destroy a completion channel: leaked");
  else
    atomic_fetch_sub(&c->dev->channels, 1);
  c->ch = NULL;
}

/* Acknowledge the events read (destroy_cq waits for every one). */
static void ack_events(struct ho_conn *c)
{
  if (c->unacked) {
    c->dev->v->ack_cq_events(c->cq, c->unacked);
    c->unacked = 0;
  }
}

hipObjOpError_t ho_conn_create(struct ho_device *d,
                               const struct ho_conn_attr *a,
                               struct ho_conn **out)
{
  const struct ho_verbs_ops *v = d->v;
  struct ho_conn *c = calloc(1, sizeof *c);
  if (!c)
    return hipObjInternalError;
  c->dev = d;
  c->rd_atomic = rd_atomic_for(d);
  c->rd_out = a->reads_out && a->reads_out < c->rd_atomic ? a->reads_out
                                                          : c->rd_atomic;
  c->msg = aligned_alloc(64, 2 * HO_MSG_SIZE);
  if (!c->msg)
    goto free_conn;
  memset(c->msg, 0, 2 * HO_MSG_SIZE);
  c->msg_mr = v->reg_mr(d->pd, c->msg, 2 * HO_MSG_SIZE, IBV_ACCESS_LOCAL_WRITE);
  if (!c->msg_mr)
    goto free_msg;
  int cqe = (int)(a->max_send_wr + a->max_recv_wr);
  open_channel(c);
  c->cq = v->create_cq(d->ctx, cqe, NULL, c->ch, 0);
  if (!c->cq && c->ch) {
    close_channel(c); /* the waits of this one poll */
    c->cq = v->create_cq(d->ctx, cqe, NULL, NULL, 0);
  }
  if (!c->cq)
    goto dereg;
  struct ibv_qp_init_attr qa = {
      .send_cq = c->cq,
      .recv_cq = c->cq,
      .cap = {.max_send_wr = a->max_send_wr,
              .max_recv_wr = a->max_recv_wr,
              .max_send_sge = 1,
              .max_recv_sge = 1},
      .qp_type = IBV_QPT_RC,
      .sq_sig_all = 0,
  };
  c->qp = v->create_qp(d->pd, &qa);
  if (!c->qp)
    goto destroy_cq;
  if (qp_to_init(c, a->qp_access) != 0)
    goto destroy_qp;
  c->state = HO_CONN_INIT;
  *out = c;
  return hipObjSuccess;

destroy_qp:
  v->destroy_qp(c->qp);
destroy_cq:
  v->destroy_cq(c->cq);
dereg:
  close_channel(c);
  v->dereg_mr(c->msg_mr);
free_msg:
  free(c->msg);
free_conn:
  free(c);
  return hipObjRdmaError;
}

/* Teardown in reverse order. If the QP or the MR cannot be destroyed, the
 * NIC may still write into the message slots: leak them rather than free
 * memory a device can reach. */
void ho_conn_destroy(struct ho_conn *c)
{
  if (!c)
    return;
  const struct ho_verbs_ops *v = c->dev->v;
  if (c->qp && v->destroy_qp(c->qp) != 0) {
    ho_warn("cannot destroy QP 0x%x: its resources are leaked", c->qp->qp_num);
    return;
  }
  if (c->cq)
    ack_events(c);
  if (c->cq && v->destroy_cq(c->cq) != 0)
    ho_warn("cannot destroy a CQ: leaked");
  else
    close_channel(c);
  if (c->msg_mr && v->dereg_mr(c->msg_mr) != 0) {
    ho_warn("cannot deregister a message MR: its memory is leaked");
    free(c);
    return;
  }
  free(c->msg);
  free(c);
}

hipObjOpError_t ho_conn_connect(struct ho_conn *c, const struct ho_token *peer,
                                uint32_t sq_psn, uint32_t rq_psn)
{
  const struct ho_qp_tuning *t = ho_vendor_tuning(c->dev->vendor_id);
  if (peer->transport != HO_TRANSPORT_RC || c->state != HO_CONN_INIT)
    return hipObjRdmaError;
  struct ibv_qp_attr a = {
      .qp_state = IBV_QPS_RTR,
      .path_mtu = c->dev->active_mtu,
      .dest_qp_num = peer->qpn & 0xffffff,
      .rq_psn = rq_psn & 0xffffff,
      .max_dest_rd_atomic = c->rd_atomic,
      .min_rnr_timer = t->min_rnr_timer,
      .ah_attr = {.is_global = 1,
                  .dlid = peer->lid,
                  .sl = 0,
                  .port_num = c->dev->port,
                  .grh = {.sgid_index = (uint8_t)c->dev->gid_index,
                          .hop_limit = 64}},
  };
  memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
  int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
             IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  int rc = modify_state(c, &a, mask);
  if (rc == 0) {
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTS;
    a.timeout = t->timeout;
    a.retry_cnt = t->retry_cnt;
    a.rnr_retry = t->rnr_retry;
    a.sq_psn = sq_psn & 0xffffff;
    a.max_rd_atomic = c->rd_out;
    rc = modify_state(c, &a,
                      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                          IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                          IBV_QP_MAX_QP_RD_ATOMIC);
  }
  c->state = rc == 0 ? HO_CONN_RTS : HO_CONN_BROKEN;
  c->peer_qpn = peer->qpn & 0xffffff;
  if (rc != 0)
    ho_warn("cannot connect QP 0x%x to peer QP 0x%x: %s", c->qp->qp_num,
            peer->qpn, strerror(rc > 0 ? rc : errno));
  return rc == 0 ? hipObjSuccess : hipObjRdmaError;
}

void ho_conn_retire(struct ho_conn *c)
{
  if (!c || c->state == HO_CONN_RETIRED)
    return;
  struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
  if (modify_state(c, &a, IBV_QP_STATE) != 0)
    ho_debug("QP 0x%x: cannot move to ERR: %s", c->qp->qp_num, strerror(errno));
  struct ibv_wc wc[8];
  while (c->dev->v->poll_cq(c->cq, 8, wc) > 0)
    ;
  c->state = HO_CONN_RETIRED;
}

void ho_retired_add(struct ho_retired *r, struct ho_conn *c, uint64_t now_ns)
{
  ho_conn_retire(c);
  c->retired_ns = now_ns;
  c->next_retired = NULL;
  if (r->tail)
    r->tail->next_retired = c;
  else
    r->head = c;
  r->tail = c;
  r->count++;
}

struct ho_conn *ho_retired_take_expired(struct ho_retired *r, uint64_t now_ns,
                                        uint64_t grace_ns)
{
  struct ho_conn *first = r->head, *last = NULL;
  for (struct ho_conn *c = r->head; c; c = c->next_retired) {
    if (grace_ns && now_ns - c->retired_ns < grace_ns)
      break;
    last = c;
    r->count--;
  }
  if (!last)
    return NULL;
  r->head = last->next_retired;
  if (!r->head)
    r->tail = NULL;
  last->next_retired = NULL;
  return first;
}

void ho_conn_destroy_chain(struct ho_conn *c)
{
  while (c) {
    struct ho_conn *next = c->next_retired;
    ho_conn_destroy(c);
    c = next;
  }
}

hipObjOpError_t ho_conn_post_msg_recv(struct ho_conn *c)
{
  struct ibv_sge sge = {(uintptr_t)c->msg, HO_MSG_SIZE, c->msg_mr->lkey};
  struct ibv_recv_wr wr = {.wr_id = HO_WRID_MSG_RECV, .sg_list = &sge, .num_sge = 1};
  struct ibv_recv_wr *bad = NULL;
  memset(c->msg, 0, HO_MSG_SIZE);
  return c->dev->v->post_recv(c->qp, &wr, &bad) == 0 ? hipObjSuccess
                                                      : hipObjRdmaError;
}

hipObjOpError_t ho_conn_send_msg(struct ho_conn *c, const struct ho_msg *m)
{
  uint8_t *slot = c->msg + HO_MSG_SIZE;
  ho_msg_encode(m, slot);
  struct ibv_sge sge = {(uintptr_t)slot, HO_MSG_SIZE, c->msg_mr->lkey};
  struct ibv_send_wr wr = {.wr_id = HO_WRID_MSG_SEND,
                           .sg_list = &sge,
                           .num_sge = 1,
                           .opcode = IBV_WR_SEND,
                           .send_flags = IBV_SEND_SIGNALED};
  struct ibv_send_wr *bad = NULL;
  return c->dev->v->post_send(c->qp, &wr, &bad) == 0 ? hipObjSuccess
                                                      : hipObjRdmaError;
}

int ho_conn_poll(struct ho_conn *c, struct ibv_wc *wc, int n)
{
  return c->dev->v->poll_cq(c->cq, n, wc);
}

/* libibverbs has ibv_wc_status_str(), but the library does not link it. */
static const char *wc_status_name(enum ibv_wc_status s)
{
  switch (s) {
  case IBV_WC_SUCCESS: return "success";
  case IBV_WC_LOC_LEN_ERR: return "local length error";
  case IBV_WC_LOC_QP_OP_ERR: return "local QP operation error";
  case IBV_WC_LOC_PROT_ERR: return "local protection error";
  case IBV_WC_WR_FLUSH_ERR: return "work request flushed";
  case IBV_WC_REM_INV_REQ_ERR: return "remote invalid request";
  case IBV_WC_REM_ACCESS_ERR: return "remote access error";
  case IBV_WC_REM_OP_ERR: return "remote operation error";
  case IBV_WC_RETRY_EXC_ERR: return "transport retry counter exceeded";
  case IBV_WC_RNR_RETRY_EXC_ERR: return "RNR retry counter exceeded";
  case IBV_WC_MW_BIND_ERR: return "memory window bind error";
  default: return "error";
  }
}

static const char *wr_name(uint64_t wr_id)
{
  switch (wr_id) {
  case HO_WRID_MSG_SEND: return "send";
  case HO_WRID_MSG_RECV: return "receive";
  case HO_WRID_MW_BIND: return "window bind";
  case HO_WRID_MW_INV: return "window invalidation";
  case HO_WRID_PROBE: return "liveness probe";
  default: return "work request";
  }
}

void ho_conn_report_wc(struct ho_conn *c, const struct ibv_wc *wc)
{
  ho_warn("QP 0x%x: %s completion failed: %s (status %d, vendor error 0x%x)",
          c->qp->qp_num, wr_name(wc->wr_id), wc_status_name(wc->status),
          (int)wc->status, wc->vendor_err);
  c->state = HO_CONN_BROKEN;
}

#define ACK_BATCH 16 /* events acknowledged together (a lock in verbs) */

int ho_conn_channel_fd(const struct ho_conn *c)
{
  return c->ch ? c->ch->fd : -1;
}

bool ho_conn_arm(struct ho_conn *c)
{
  if (c->armed)
    return true;
  if (!c->ch || c->dev->v->req_notify_cq(c->cq, 0) != 0)
    return false;
  c->armed = true;
  atomic_fetch_add_explicit(&c->dev->wait_arms, 1, memory_order_relaxed);
  return true;
}

bool ho_conn_take_events(struct ho_conn *c)
{
  struct ibv_cq *cq;
  void *ctx;
  bool got = false;
  while (c->ch && c->dev->v->get_cq_event(c->ch, &cq, &ctx) == 0) {
    got = true;
    c->armed = false; /* an event disarms the CQ */
    if (++c->unacked >= ACK_BATCH)
      ack_events(c);
  }
  return got;
}

/* Blocks on c's channel until an event, the deadline or max_us, whichever
 * comes first, and reads the events there are. */
static void block_on_channel(struct ho_conn *c, uint64_t now,
                             uint64_t deadline_ns, unsigned max_us)
{
  struct ho_device *d = c->dev;
  uint64_t ns = deadline_ns - now; /* now < deadline_ns */
  if (ns > (uint64_t)max_us * 1000u)
    ns = (uint64_t)max_us * 1000u;
  struct pollfd p = {.fd = c->ch->fd, .events = POLLIN};
  struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
  bool got = ppoll(&p, 1, &ts, NULL) > 0 && ho_conn_take_events(c);
  atomic_fetch_add_explicit(got ? &d->wait_events : &d->wait_idle_wakes, 1,
                            memory_order_relaxed);
}

hipObjOpError_t ho_conn_probe(struct ho_conn *c)
{
  struct ibv_send_wr wr = {.wr_id = HO_WRID_PROBE,
                           .opcode = IBV_WR_RDMA_WRITE,
                           .send_flags = IBV_SEND_SIGNALED};
  struct ibv_send_wr *bad = NULL;
  if (c->dev->v->post_send(c->qp, &wr, &bad) != 0)
    return hipObjRdmaError;
  c->probe_pending = true;
  atomic_fetch_add_explicit(&c->dev->probes, 1, memory_order_relaxed);
  return hipObjSuccess;
}

/* A probe's completion, whatever the wait is for: false (reported) when
 * it failed: the peer's side of the connection is gone. */
static bool take_probe(struct ho_conn *c, const struct ibv_wc *wc)
{
  c->probe_pending = false;
  if (wc->status == IBV_WC_SUCCESS)
    return true;
  atomic_fetch_add_explicit(&c->dev->probes_failed, 1, memory_order_relaxed);
  ho_conn_report_wc(c, wc);
  return false;
}

enum ho_wait_end ho_conn_wait(struct ho_conn *c, uint64_t deadline_ns,
                              const atomic_bool *cancel, unsigned max_sleep_us,
                              ho_take_fn take, void *arg)
{
  unsigned round = 0;
  uint64_t spin_end = 0; /* 0: not spinning (the first empty poll starts) */
  for (;;) {
    struct ibv_wc wc;
    int n = ho_conn_poll(c, &wc, 1);
    if (n < 0) {
      c->state = HO_CONN_BROKEN;
      return HO_WAIT_ERROR;
    }
    if (n == 1 && wc.wr_id == HO_WRID_PROBE) {
      if (!take_probe(c, &wc))
        return HO_WAIT_ERROR;
      continue;
    }
    if (n == 1) {
      enum ho_take t = take(c, &wc, arg);
      if (t == HO_TAKE_DONE)
        return HO_WAIT_DONE;
      if (t == HO_TAKE_ERROR)
        return HO_WAIT_ERROR;
      spin_end = 0; /* work moves: spin again before blocking */
      continue;
    }
    if (cancel && atomic_load(cancel))
      return HO_WAIT_CANCELLED;
    uint64_t now = ho_now_ns();
    if (now >= deadline_ns)
      return HO_WAIT_TIMEOUT;
    if (!c->ch) {
      ho_backoff(&round, max_sleep_us);
      continue;
    }
    if (spin_end == 0)
      spin_end = now + c->dev->spin_ns;
    if (now < spin_end)
      continue;
    if (!c->armed) {
      if (!ho_conn_arm(c))
        ho_backoff(&round, max_sleep_us);
      continue; /* poll again: what came before the arm raises no event */
    }
    block_on_channel(c, now, deadline_ns, max_sleep_us);
  }
}

bool ho_conn_usable(struct ho_conn *c)
{
  struct ibv_qp_attr a;
  struct ibv_qp_init_attr ia;
  if (c->state != HO_CONN_RTS)
    return false;
  memset(&a, 0, sizeof a);
  if (c->dev->v->query_qp(c->qp, &a, IBV_QP_STATE, &ia) != 0)
    return true; /* cannot tell: the transfer will find out */
  if (a.qp_state == IBV_QPS_RTS)
    return true;
  c->state = HO_CONN_BROKEN;
  return false;
}

/* ho_conn_wait_msg's take: our send's completion, then the message. */
struct msg_wait {
  bool *send_pending;
  bool got;
  bool malformed;
  struct ho_msg *m;
};

static enum ho_take take_msg(struct ho_conn *c, const struct ibv_wc *wc,
                             void *arg)
{
  struct msg_wait *w = arg;
  if (wc->status != IBV_WC_SUCCESS) {
    ho_conn_report_wc(c, wc);
    return HO_TAKE_ERROR;
  }
  if (wc->wr_id == HO_WRID_MSG_SEND)
    *w->send_pending = false;
  else if (wc->wr_id == HO_WRID_MW_BIND)
    ; /* unsignalled: only errors are reported */
  else if (wc->wr_id != HO_WRID_MSG_RECV ||
           !ho_msg_decode(c->msg, wc->byte_len, w->m)) {
    ho_warn("QP 0x%x: malformed protocol message (%u bytes)", c->qp->qp_num,
            wc->byte_len);
    c->state = HO_CONN_BROKEN;
    w->malformed = true;
    return HO_TAKE_ERROR;
  } else {
    w->got = true;
  }
  return w->got && !*w->send_pending ? HO_TAKE_DONE : HO_TAKE_MORE;
}

enum ho_wait_end ho_conn_wait_msg_ex(struct ho_conn *c, bool *send_pending,
                                     uint64_t deadline_ns,
                                     const atomic_bool *cancel,
                                     struct ho_msg *m)
{
  struct msg_wait w = {send_pending, false, false, m};
  return ho_conn_wait(c, deadline_ns, cancel, 1000, take_msg, &w);
}

/* The expected receive PSN: it moves with every new request packet the
 * peer gets through to us. *ok false when the provider cannot say. */
static uint32_t rq_psn(struct ho_conn *c, bool *ok)
{
  struct ibv_qp_attr a;
  struct ibv_qp_init_attr ia;
  memset(&a, 0, sizeof a);
  *ok = c->dev->v->query_qp(c->qp, &a, IBV_QP_RQ_PSN | IBV_QP_STATE, &ia) == 0;
  return a.rq_psn;
}

static void report_timeout(struct ho_conn *c, bool got)
{
  ho_warn("QP 0x%x: no %s from the peer before the transfer timeout",
          c->qp->qp_num, got ? "send completion" : "protocol message");
  c->state = HO_CONN_BROKEN;
}

#define STALL_SLICES 8 /* looks at the PSN this often per stall bound */

/* Whether the receive PSN has not moved for stall_ns (reported). */
static bool stalled(struct ho_conn *c, uint64_t stall_ns, uint64_t now,
                    uint32_t *psn, uint64_t *moved_at)
{
  bool ok = false;
  uint32_t p = rq_psn(c, &ok);
  if (!ok || p != *psn) {
    *psn = p;
    *moved_at = now;
    return false;
  }
  if (now - *moved_at < stall_ns)
    return false;
  ho_warn("QP 0x%x: nothing from the server for %llu ms: it gave the "
          "transfer up", c->qp->qp_num,
          (unsigned long long)(stall_ns / 1000000u));
  c->state = HO_CONN_BROKEN;
  return true;
}

/* The next wake of ho_conn_wait_final: the deadline, or sooner to look
 * at the PSN (stall bound, progress), or to probe. */
static uint64_t next_wake(const struct ho_final_bounds *b, uint64_t probe_at,
                          uint64_t look_at)
{
  uint64_t until = b->deadline_ns, now = ho_now_ns();
  if (b->stall_ns && now + b->stall_ns / STALL_SLICES < until)
    until = now + b->stall_ns / STALL_SLICES;
  if (probe_at && probe_at < until)
    until = probe_at;
  if (look_at && look_at < until)
    until = look_at;
  return until;
}

/* Probe when it is time, our send has completed and no probe is owed;
 * returns the next probe time (0: none). */
static uint64_t maybe_probe(struct ho_conn *c, bool send_pending,
                            uint64_t probe_ns, uint64_t probe_at, uint64_t now)
{
  if (!probe_ns || now < probe_at)
    return probe_at;
  if (!send_pending && !c->probe_pending && ho_conn_probe(c) != hipObjSuccess)
    ho_warn("QP 0x%x: cannot post a liveness probe", c->qp->qp_num);
  return now + probe_ns;
}

/* The deadline follows progress: the receive PSN is looked at (the mark)
 * 1/b->slices of extend_ns before the deadline (slices 0 or 1: when the
 * deadline is set); at the deadline, a transfer whose PSN moved since the
 * mark still moves, and the deadline moves to now + extend_ns, at most to
 * the limit. A transfer that stopped before the mark gets no more time. */
struct progress {
  uint64_t look_at; /* when to take the mark (0: taken, or no progress) */
  uint32_t mark;
};

static void progress_arm(struct progress *p, const struct ho_final_bounds *b,
                         uint32_t psn)
{
  uint64_t before = b->slices > 1 ? b->extend_ns / b->slices : 0;
  p->mark = psn;
  p->look_at = before && b->deadline_ns > before ? b->deadline_ns - before : 0;
}

static void progress_look(struct ho_conn *c, struct progress *p, uint64_t now)
{
  bool ok = false;
  if (!p->look_at || now < p->look_at)
    return;
  uint32_t psn = rq_psn(c, &ok);
  if (ok)
    p->mark = psn;
  p->look_at = 0;
}

static bool move_deadline(struct ho_conn *c, struct ho_final_bounds *b,
                          struct progress *p, uint64_t now)
{
  bool ok = false;
  if (!b->extend_ns || now >= b->limit_ns)
    return false;
  uint32_t psn = rq_psn(c, &ok);
  ho_debug("QP 0x%x: at the deadline the receive PSN is 0x%x, 0x%x at the "
           "mark: %s", c->qp->qp_num, psn, p->mark,
           ok && psn != p->mark ? "still moving, the deadline moves"
                                : "not moving");
  if (!ok || psn == p->mark)
    return false;
  b->deadline_ns = b->limit_ns - now > b->extend_ns ? now + b->extend_ns
                                                    : b->limit_ns;
  b->moves++;
  progress_arm(p, b, psn);
  return true;
}

enum ho_wait_end ho_conn_wait_final(struct ho_conn *c, bool *send_pending,
                                    struct ho_final_bounds *b,
                                    struct ho_msg *m)
{
  struct msg_wait w = {send_pending, false, false, m};
  bool ok = false;
  uint32_t psn = b->stall_ns || b->extend_ns ? rq_psn(c, &ok) : 0;
  struct progress pr;
  progress_arm(&pr, b, psn);
  uint64_t moved_at = ho_now_ns();
  uint64_t probe_at = b->probe_ns ? moved_at + b->probe_ns : 0;
  for (;;) {
    enum ho_wait_end r = ho_conn_wait(c, next_wake(b, probe_at, pr.look_at),
                                      NULL, 1000, take_msg, &w);
    if (r == HO_WAIT_ERROR && w.malformed)
      return HO_WAIT_MALFORMED;
    if (r != HO_WAIT_TIMEOUT)
      return r;
    uint64_t now = ho_now_ns();
    if (now >= b->deadline_ns && !move_deadline(c, b, &pr, now)) {
      report_timeout(c, w.got);
      return HO_WAIT_TIMEOUT;
    }
    progress_look(c, &pr, now);
    probe_at = maybe_probe(c, *send_pending, b->probe_ns, probe_at, now);
    if (b->stall_ns && stalled(c, b->stall_ns, now, &psn, &moved_at))
      return HO_WAIT_STALLED;
  }
}

hipObjOpError_t ho_conn_wait_msg(struct ho_conn *c, bool *send_pending,
                                 uint64_t deadline_ns, struct ho_msg *m)
{
  struct msg_wait w = {send_pending, false, false, m};
  enum ho_wait_end r = ho_conn_wait(c, deadline_ns, NULL, 1000, take_msg, &w);
  if (r == HO_WAIT_TIMEOUT)
    report_timeout(c, w.got);
  return r == HO_WAIT_DONE ? hipObjSuccess : hipObjRdmaError;
}

static hipObjOpError_t post_bind(struct ho_conn *c, struct ibv_mw *mw,
                                 uint32_t rkey, struct ibv_mr *mr,
                                 uint64_t addr, uint64_t len, int access,
                                 unsigned flags)
{
  struct ibv_send_wr wr = {.wr_id = HO_WRID_MW_BIND, .opcode = IBV_WR_BIND_MW,
                           .send_flags = flags};
  struct ibv_send_wr *bad = NULL;
  wr.bind_mw.mw = mw;
  wr.bind_mw.rkey = rkey;
  wr.bind_mw.bind_info.mr = mr;
  wr.bind_mw.bind_info.addr = addr;
  wr.bind_mw.bind_info.length = len;
  wr.bind_mw.bind_info.mw_access_flags = (unsigned)access;
  return c->dev->v->post_send(c->qp, &wr, &bad) == 0 ? hipObjSuccess
                                                      : hipObjRdmaError;
}

hipObjOpError_t ho_conn_bind_window(struct ho_conn *c, struct ibv_mw *mw,
                                    uint32_t rkey, struct ibv_mr *mr,
                                    uint64_t addr, uint64_t len, int access)
{
  return post_bind(c, mw, rkey, mr, addr, len, access, 0);
}

/* The completion of the signalled work request whose ID arg points to;
 * any error completion ends the wait. */
static enum ho_take take_own(struct ho_conn *c, const struct ibv_wc *wc,
                             void *arg)
{
  if (wc->status != IBV_WC_SUCCESS) {
    ho_conn_report_wc(c, wc);
    return HO_TAKE_ERROR;
  }
  return wc->wr_id == *(const uint64_t *)arg ? HO_TAKE_DONE : HO_TAKE_MORE;
}

/* Post a signalled work request and wait for its completion; a QP that
 * cannot complete it is broken. */
static hipObjOpError_t post_and_wait(struct ho_conn *c, int posted,
                                     uint64_t wr_id, uint64_t deadline_ns,
                                     const char *what)
{
  if (posted != 0)
    return hipObjRdmaError;
  if (ho_conn_wait(c, deadline_ns, NULL, 1000, take_own, &wr_id) ==
      HO_WAIT_DONE)
    return hipObjSuccess;
  ho_warn("QP 0x%x: cannot %s a memory window", c->qp->qp_num, what);
  c->state = HO_CONN_BROKEN;
  return hipObjRdmaError;
}

hipObjOpError_t ho_conn_bind_window_now(struct ho_conn *c, struct ibv_mw *mw,
                                        uint32_t rkey, struct ibv_mr *mr,
                                        uint64_t addr, uint64_t len,
                                        int access, uint64_t deadline_ns)
{
  hipObjOpError_t e = post_bind(c, mw, rkey, mr, addr, len, access,
                                IBV_SEND_SIGNALED);
  return post_and_wait(c, e == hipObjSuccess ? 0 : -1, HO_WRID_MW_BIND,
                       deadline_ns, "bind");
}

hipObjOpError_t ho_conn_invalidate(struct ho_conn *c, uint32_t rkey,
                                   uint64_t deadline_ns)
{
  struct ibv_send_wr wr = {.wr_id = HO_WRID_MW_INV,
                           .opcode = IBV_WR_LOCAL_INV,
                           .send_flags = IBV_SEND_SIGNALED,
                           .invalidate_rkey = rkey};
  struct ibv_send_wr *bad = NULL;
  return post_and_wait(c, c->dev->v->post_send(c->qp, &wr, &bad),
                       HO_WRID_MW_INV, deadline_ns, "invalidate");
}

void ho_conn_token(const struct ho_conn *c, struct ho_token *t)
{
  memset(t, 0, sizeof *t);
  t->transport = HO_TRANSPORT_RC;
  t->qpn = c->qp->qp_num;
  memcpy(t->gid, c->dev->gid.raw, 16);
  t->port = c->dev->port;
  t->lid = c->dev->lid;
}
