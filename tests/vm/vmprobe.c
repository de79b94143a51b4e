/* SPDX-License-Identifier: MIT */
/* hipobj-vmprobe: checks on the real rxe device that need the library's
 * internals (linked from hipobj_internal), run in the Soft-RoCE VM.
 *
 *   hipobj-vmprobe select             NIC, port, GID chosen on rxe0
 *   hipobj-vmprobe dmabuf             dma-buf is EOPNOTSUPP; GPU memory
 *                                     (fake runtime) falls back to plain MR
 *   hipobj-vmprobe original-ordering  server RDMA into a client QP in INIT
 *                                     fails (bounded retries), buffer intact
 *   hipobj-vmprobe hostile-put        PUT attacks with windows and without
 *                                     the QP's access in the fallback)
 *   hipobj-vmprobe hostile            the hostile-server suite on rxe: the
 *                                     library against tests/fakes/hostile_peer
 *   hipobj-vmprobe windows            type-2 memory windows on rxe: bound over
 *                                     a range they grant it and nothing else,
 *                                     closed by LOCAL_INV and SEND_WITH_INV;
 *                                     the cost of a bind and an invalidation */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/clock.h"
#include "fakes/fake_gpu.h"
#include "fakes/hostile_peer.h"
#include "hipobj.h"
#include "instance.h"
#include "platform/platform.h"
#include "rdma/protocol.h"
#include "rdma/transport.h"

static int failures;

static void check(int ok, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  printf("%s: ", ok ? "ok" : "FAIL");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
  failures += !ok;
}

static const char *dev_name(void)
{
  return getenv("RXE_DEV") ? getenv("RXE_DEV") : "rxe0";
}

static const struct ho_platform *real_platform(void)
{
  const struct ho_platform *p = NULL;
  if (ho_platform_system("none", &p) != hipObjSuccess || !p->verbs) {
    printf("no libibverbs: skip\n");
    exit(77);
  }
  return p;
}

static void probe_select(void)
{
  const struct ho_platform *p = real_platform();
  struct ho_nic_info nics[HO_MAX_NICS];
  size_t n = 0;
  p->topo->ops->list_nics(p->topo, nics, HO_MAX_NICS, &n);
  int found = 0;
  for (size_t i = 0; i < n; i++)
    if (!strcmp(nics[i].name, dev_name()))
      found = nics[i].active_port;
  check(found == 1, "sysfs lists %s with active port %d", dev_name(), found);
  struct ho_options o;
  ho_options_defaults(&o);
  hipObjConfig_t cfg = {0};
  cfg.gpuDevice = -1;
  int native = 0;
  check(ho_init_with(p, &o, &cfg, &native) == hipObjNicNotFound,
        "no GPU and no hint: hipObjNicNotFound");
  cfg.nicHint = dev_name();
  check(ho_init_with(p, &o, &cfg, &native) == hipObjSuccess, "init with hint %s", cfg.nicHint);
  struct ho_instance *inst = ho_instance_get();
  int want = getenv("RXE_GID_INDEX") ? atoi(getenv("RXE_GID_INDEX")) : -1;
  const uint8_t *g = inst->dev->gid.raw;
  check(!strcmp(inst->config.nic, dev_name()), "chose %s", inst->config.nic);
  check(inst->dev->gid_index == want, "GID index %d (the VM reports %d)",
        inst->dev->gid_index, want);
  check(g[10] == 0xff && g[11] == 0xff, "GID ::ffff:%u.%u.%u.%u is IPv4-mapped", g[12], g[13],
        g[14], g[15]);
  check(p->topo->ops->gid_type(p->topo, dev_name(), inst->dev->port, inst->dev->gid_index) ==
            HO_GID_ROCE_V2, "and RoCE v2");
  printf("info: port %u, active MTU %u, vendor 0x%x, max_qp_rd_atom %d\n", inst->dev->port,
         ho_mtu_bytes(inst->dev->active_mtu), inst->dev->vendor_id, inst->dev->max_qp_rd_atom);
  ho_instance_put(inst);
  ho_shutdown();
}

static void probe_dmabuf(void)
{
  const struct ho_platform *sys = real_platform();
  /* Straight to the device: rxe has no dma-buf MRs. */
  struct ho_device *d = NULL;
  check(ho_device_open(sys->verbs, sys->topo, dev_name(), &d) == hipObjSuccess, "open %s",
        dev_name());
  if (!sys->verbs->reg_dmabuf_mr) {
    check(1, "libibverbs has no ibv_reg_dmabuf_mr: dma-buf unsupported");
  } else {
    int fd = memfd_create("not-a-dmabuf", 0);
    if (ftruncate(fd, 4096) != 0)
      perror("ftruncate");
    errno = 0;
    struct ibv_mr *mr = sys->verbs->reg_dmabuf_mr(d->pd, 0, 4096, 0x10000, fd,
                                                  IBV_ACCESS_LOCAL_WRITE);
    check(mr == NULL, "ibv_reg_dmabuf_mr fails: %s (errno %d)", strerror(errno), errno);
    close(fd);
  }
  ho_device_close(d);
  /* The library's fallback, with the fake GPU runtime's device memory on
   * the real NIC: dma-buf refused, plain MR accepted, GPU-direct. */
  fake_gpu_reset();
  fake_gpu_set_device_count(1);
  fake_gpu_set_dmabuf_supported(true);
  struct ho_platform p = *sys;
  p.gpu = &fake_gpu_ops;
  struct ho_options o;
  ho_options_defaults(&o);
  o.rdma_debug = true;
  hipObjConfig_t cfg = {0};
  cfg.gpuDevice = -1;
  cfg.nicHint = dev_name();
  int native = 0;
  check(ho_init_with(&p, &o, &cfg, &native) == hipObjSuccess, "init with the fake GPU");
  void *dev = fake_gpu_malloc(1 << 20);
  check(hipObjBufRegister(dev, 1 << 20).opError == hipObjSuccess, "register device memory");
  struct ho_instance *inst = ho_instance_get();
  struct ho_buf *b = ho_buffers_find(inst->buffers, dev);
  check(b && b->kind == HO_BUF_DIRECT && !b->dmabuf,
        "registered GPU-direct by a plain MR after the dma-buf attempt failed");
  struct fake_gpu_counters c;
  fake_gpu_get_counters(&c);
  check(c.dmabuf_exports == 1, "one dma-buf export was tried");
  ho_buf_put(b);
  ho_instance_put(inst);
  hipObjBufDeregister(dev);
  ho_shutdown();
  fake_gpu_free(dev);
}

/* The architecture's first ordering on a real RC stack. */
static void probe_original_ordering(void)
{
  const struct ho_platform *sys = real_platform();
  struct ho_device *d = NULL;
  ho_device_open(sys->verbs, sys->topo, dev_name(), &d);
  struct ho_conn_attr client_attr = {
      .max_send_wr = 8, .max_recv_wr = 8,
      .qp_access = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE};
  struct ho_conn_attr server_attr = {
      .max_send_wr = 8, .max_recv_wr = 8, .qp_access = 0};
  struct ho_conn *client = NULL, *server = NULL;
  check(ho_conn_create(d, &client_attr, &client) == hipObjSuccess &&
            ho_conn_create(d, &server_attr, &server) == hipObjSuccess,
        "two RC QPs on %s", dev_name());
  uint8_t *buf = calloc(1, 4096), *src = malloc(4096);
  memset(src, 0x42, 4096);
  struct ibv_mr *mr = sys->verbs->reg_mr(d->pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE |
                                         IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  struct ibv_mr *smr = sys->verbs->reg_mr(d->pd, src, 4096, IBV_ACCESS_LOCAL_WRITE);
  struct ho_token t;
  ho_conn_token(client, &t);
  check(ho_conn_connect(server, &t, 0, 0) == hipObjSuccess,
        "server QP connected, client QP still in INIT (retry_cnt 6, timeout 14)");
  struct ibv_sge sge = {(uintptr_t)src, 4096, smr->lkey};
  struct ibv_send_wr wr = {.wr_id = 1, .sg_list = &sge, .num_sge = 1,
                           .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
                           .wr.rdma = {(uintptr_t)buf, mr->rkey}};
  struct ibv_send_wr *bad = NULL;
  uint64_t t0 = ho_now_ns();
  sys->verbs->post_send(server->qp, &wr, &bad);
  struct ibv_wc wc;
  int n = 0;
  while (n == 0 && ho_now_ns() - t0 < 10000000000ull)
    n = sys->verbs->poll_cq(server->cq, 1, &wc);
  double ms = (ho_now_ns() - t0) / 1e6;
  check(n == 1 && wc.status == IBV_WC_RETRY_EXC_ERR,
        "server's RDMA WRITE failed: status %d after %.0f ms (expected %d)",
        n ? (int)wc.status : -1,
        ms, IBV_WC_RETRY_EXC_ERR);
  int touched = 0;
  for (int i = 0; i < 4096; i++)
    touched += buf[i] != 0;
  check(touched == 0, "client buffer untouched (%d bytes changed)", touched);
  sys->verbs->dereg_mr(mr);
  sys->verbs->dereg_mr(smr);
  ho_conn_destroy(client);
  ho_conn_destroy(server);
  ho_device_close(d);
}

/* ---- memory windows ------------------------------------------------------ */

struct mw_pair {
  const struct ho_verbs_ops *v;
  struct ho_device *d;
  struct ho_conn *client, *server; /* client: owns the window */
};

/* Two fresh QPs connected to each other (QPs are never reused). */
static int mw_pair_connect(struct mw_pair *p)
{
  struct ho_conn_attr ca = {
      .max_send_wr = 16, .max_recv_wr = 16,
      .qp_access = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE};
  struct ho_conn_attr sa = {
      .max_send_wr = 16, .max_recv_wr = 16, .qp_access = 0};
  struct ho_token tc, ts;
  if (ho_conn_create(p->d, &ca, &p->client) != hipObjSuccess ||
      ho_conn_create(p->d, &sa, &p->server) != hipObjSuccess)
    return -1;
  ho_conn_token(p->client, &tc);
  ho_conn_token(p->server, &ts);
  return ho_conn_connect(p->client, &ts, 100, 200) == hipObjSuccess &&
                 ho_conn_connect(p->server, &tc, 200, 100) == hipObjSuccess
             ? 0
             : -1;
}

static void mw_pair_close(struct mw_pair *p)
{
  ho_conn_retire(p->client);
  ho_conn_retire(p->server);
  ho_conn_destroy(p->client);
  ho_conn_destroy(p->server);
  p->client = p->server = NULL;
}

static int wait_wc(struct ho_conn *c, uint64_t wr_id, struct ibv_wc *wc)
{
  uint64_t t0 = ho_now_ns();
  while (ho_now_ns() - t0 < 5000000000ull) {
    int n = ho_conn_poll(c, wc, 1);
    if (n < 0)
      return -1;
    if (n == 1 && wc->wr_id == wr_id)
      return 0;
  }
  return -1;
}

/* The server side does op (len bytes at addr under rkey) into the client. */
static int server_op(struct mw_pair *p, struct ibv_mr *smr, enum ibv_wr_opcode op,
                     uint64_t addr, uint32_t rkey, uint32_t len)
{
  struct ibv_sge sge = {(uintptr_t)smr->addr, len, smr->lkey};
  struct ibv_send_wr wr = {.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = op,
                           .send_flags = IBV_SEND_SIGNALED, .wr.rdma = {addr, rkey}};
  struct ibv_send_wr *bad = NULL;
  struct ibv_wc wc;
  if (p->v->post_send(p->server->qp, &wr, &bad) != 0 || wait_wc(p->server, 7, &wc) != 0)
    return -1;
  return (int)wc.status;
}

/* Binds the window on the client QP; its completion (signalled here). */
static int bind_now(struct mw_pair *p, struct ibv_mw *mw, uint32_t rkey,
                    struct ibv_mr *mr, uint64_t addr, uint64_t len, int access)
{
  struct ibv_send_wr wr = {.wr_id = 8, .opcode = IBV_WR_BIND_MW,
                           .send_flags = IBV_SEND_SIGNALED};
  struct ibv_send_wr *bad = NULL;
  struct ibv_wc wc;
  wr.bind_mw.mw = mw;
  wr.bind_mw.rkey = rkey;
  wr.bind_mw.bind_info = (struct ibv_mw_bind_info){mr, addr, len, (unsigned)access};
  if (p->v->post_send(p->client->qp, &wr, &bad) != 0)
    return -1;
  mw->rkey = rkey; /* the consumer tracks a type-2 window's key */
  if (wait_wc(p->client, 8, &wc) != 0)
    return -1;
  return (int)wc.status;
}

static int count_changed(const uint8_t *b, size_t from, size_t to, uint8_t was)
{
  int n = 0;
  for (size_t i = from; i < to; i++)
    n += b[i] != was;
  return n;
}

/* Per transfer, a window costs a bind (posted unsignalled before ready)
 * and an invalidation: measured here as signalled pairs on one QP. */
static void mw_cost(struct mw_pair *p, struct ibv_mw *mw, struct ibv_mr *mr,
                    uint8_t *buf, uint32_t *rkey)
{
  enum { N = 2000 };
  uint64_t t0 = ho_now_ns();
  int ok = 1;
  for (int i = 0; i < N && ok; i++) {
    *rkey = ibv_inc_rkey(*rkey);
    ok = bind_now(p, mw, *rkey, mr, (uintptr_t)buf, 4096, IBV_ACCESS_REMOTE_WRITE) == 0 &&
         ho_conn_invalidate(p->client, *rkey, ho_now_ns() + 5000000000ull) == hipObjSuccess;
  }
  double us = (ho_now_ns() - t0) / 1e3 / N;
  check(ok, "%d binds and local invalidations", N);
  printf("info: window cost on %s: %.2f us per bind + local invalidation (signalled, "
         "%d pairs)\n", dev_name(), us, N);
}

/* The end of a windows probe: the window, both MRs, the device, the
 * buffers. */
static void mw_probe_free(struct mw_pair *p, struct ibv_mw *mw, struct ibv_mr *mr,
                          struct ibv_mr *smr, void *buf, void *src)
{
  p->v->dealloc_mw(mw);
  p->v->dereg_mr(mr);
  p->v->dereg_mr(smr);
  ho_device_close(p->d);
  free(buf);
  free(src);
}

static void probe_windows(void)
{
  const struct ho_platform *sys = real_platform();
  struct mw_pair p = {sys->verbs, NULL, NULL, NULL};
  check(ho_device_open(sys->verbs, sys->topo, dev_name(), &p.d) == hipObjSuccess, "open %s",
        dev_name());
  struct ibv_device_attr da;
  sys->verbs->query_device(p.d->ctx, &da);
  printf("info: device_cap_flags 0x%llx: MEM_WINDOW %d TYPE_2A %d TYPE_2B %d, max_mw %d\n",
         (unsigned long long)da.device_cap_flags,
         !!(da.device_cap_flags & IBV_DEVICE_MEM_WINDOW),
         !!(da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2A),
         !!(da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B), da.max_mw);
  check(p.d->mw_type2, "%s binds type-2 memory windows (caps and a probe window)",
        dev_name());
  if (!p.d->mw_type2) {
    ho_device_close(p.d);
    return;
  }
  enum { SZ = 64 * 1024 };
  uint8_t *buf = aligned_alloc(4096, SZ), *src = aligned_alloc(4096, SZ);
  memset(buf, 0xee, SZ);
  memset(src, 0x42, SZ);
  struct ibv_mr *mr = sys->verbs->reg_mr(p.d->pd, buf, SZ,
                                         IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
  struct ibv_mr *smr = sys->verbs->reg_mr(p.d->pd, src, SZ, IBV_ACCESS_LOCAL_WRITE);
  struct ibv_mw *mw = sys->verbs->alloc_mw(p.d->pd, IBV_MW_TYPE_2);
  check(mr && smr && mw, "an MR without remote access, and a type-2 window");
  uint32_t rkey = mw->rkey;
  const uint64_t a = (uintptr_t)buf + 8192;
  /* In range, the window's direction: lands. */
  check(mw_pair_connect(&p) == 0, "two connected QPs");
  rkey = ibv_inc_rkey(rkey);
  check(bind_now(&p, mw, rkey, mr, a, 8192, IBV_ACCESS_REMOTE_WRITE) == IBV_WC_SUCCESS,
        "bind over [8192, 16384) for remote write");
  check(server_op(&p, smr, IBV_WR_RDMA_WRITE, a, rkey, 8192) == IBV_WC_SUCCESS &&
            count_changed(buf, 8192, 16384, 0xee) == 8192,
        "a WRITE in range lands");
  /* The MR's own rkey grants nothing. */
  check(server_op(&p, smr, IBV_WR_RDMA_WRITE, (uintptr_t)buf, mr->rkey, 16) ==
            IBV_WC_REM_ACCESS_ERR,
        "the MR's rkey: remote access error");
  mw_pair_close(&p);
  /* Outside the range, or the other direction: refused, nothing moves.
   * The window stays bound to the dead QP: a new one per case. */
  struct {
    const char *what;
    enum ibv_wr_opcode op;
    uint64_t addr;
    uint32_t len;
  } bad[] = {{"4096 bytes before", IBV_WR_RDMA_WRITE, a - 4096, 4096},
             {"one byte more", IBV_WR_RDMA_WRITE, a, 8193},
             {"a READ (GET window served as a PUT)", IBV_WR_RDMA_READ, a, 8192}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    sys->verbs->dealloc_mw(mw);
    mw = sys->verbs->alloc_mw(p.d->pd, IBV_MW_TYPE_2);
    rkey = ibv_inc_rkey(mw->rkey);
    memset(buf, 0xee, SZ);
    check(mw_pair_connect(&p) == 0 &&
              bind_now(&p, mw, rkey, mr, a, 8192, IBV_ACCESS_REMOTE_WRITE) == IBV_WC_SUCCESS,
          "fresh QPs, window bound");
    int st = server_op(&p, smr, bad[i].op, bad[i].addr, rkey, bad[i].len);
    int changed = count_changed(buf, 0, SZ, 0xee);
    if (bad[i].op == IBV_WR_RDMA_READ)
      check(st == IBV_WC_REM_ACCESS_ERR && changed == 0,
            "%s: status %d (remote access error), %d bytes changed", bad[i].what, st,
            changed);
    else /* a fact of the NIC, recorded: rxe checks the MR's range, not the window's */
      printf("info: %s: status %d, %d bytes changed: %s\n", bad[i].what, st, changed,
             st == IBV_WC_REM_ACCESS_ERR && changed == 0
                 ? "refused"
                 : "NOT refused: this NIC does not check a window's range");
    mw_pair_close(&p);
  }
  /* Closed by a local invalidation, then by a send with invalidate. */
  sys->verbs->dealloc_mw(mw);
  mw = sys->verbs->alloc_mw(p.d->pd, IBV_MW_TYPE_2);
  rkey = ibv_inc_rkey(mw->rkey);
  check(mw_pair_connect(&p) == 0 &&
            bind_now(&p, mw, rkey, mr, a, 8192, IBV_ACCESS_REMOTE_WRITE) == IBV_WC_SUCCESS &&
            ho_conn_invalidate(p.client, rkey, ho_now_ns() + 5000000000ull) == hipObjSuccess,
        "LOCAL_INV closes the window");
  memset(buf, 0xee, SZ);
  check(server_op(&p, smr, IBV_WR_RDMA_WRITE, a, rkey, 16) == IBV_WC_REM_ACCESS_ERR &&
            count_changed(buf, 0, SZ, 0xee) == 0,
        "a WRITE after LOCAL_INV is refused");
  mw_pair_close(&p);
  check(mw_pair_connect(&p) == 0, "fresh QPs");
  rkey = ibv_inc_rkey(rkey);
  check(bind_now(&p, mw, rkey, mr, a, 8192, IBV_ACCESS_REMOTE_WRITE) == IBV_WC_SUCCESS,
        "the window binds again with the next key");
  /* A send with invalidate closes it too; what the receiver's completion
   * says is recorded (the library does not depend on it). Never invalidate
   * it locally afterwards: on this kernel a LOCAL_INV of an invalidated
   * window is a NULL dereference in rxe_invalidate_mw. */
  struct ibv_wc wc;
  struct ibv_sge rsge = {(uintptr_t)src, 64, smr->lkey};
  struct ibv_recv_wr rwr = {.wr_id = 9, .sg_list = &rsge, .num_sge = 1};
  struct ibv_recv_wr *rbad = NULL;
  struct ibv_sge ssge = {(uintptr_t)src + 64, 32, smr->lkey};
  struct ibv_send_wr swr = {.wr_id = 10, .sg_list = &ssge, .num_sge = 1,
                            .opcode = IBV_WR_SEND_WITH_INV, .send_flags = IBV_SEND_SIGNALED,
                            .invalidate_rkey = rkey};
  struct ibv_send_wr *sbad = NULL;
  check(sys->verbs->post_recv(p.client->qp, &rwr, &rbad) == 0 &&
            sys->verbs->post_send(p.server->qp, &swr, &sbad) == 0 &&
            wait_wc(p.server, 10, &wc) == 0 && wc.status == IBV_WC_SUCCESS,
        "a SEND_WITH_INV of the window completes");
  check(wait_wc(p.client, 9, &wc) == 0 && wc.status == IBV_WC_SUCCESS, "and is received");
  printf("info: receive completion of SEND_WITH_INV: wc_flags 0x%x (IBV_WC_WITH_INV is 0x%x), "
         "invalidated_rkey 0x%x, window 0x%x\n", wc.wc_flags, IBV_WC_WITH_INV,
         wc.invalidated_rkey, rkey);
  check(server_op(&p, smr, IBV_WR_RDMA_WRITE, a, rkey, 16) == IBV_WC_REM_ACCESS_ERR,
        "a WRITE after the final is refused");
  mw_pair_close(&p);
  check(mw_pair_connect(&p) == 0, "fresh QPs for the cost");
  mw_cost(&p, mw, mr, buf, &rkey);
  mw_pair_close(&p);
  mw_probe_free(&p, mw, mr, smr, buf, src);
}

/* What an RDMA READ or WRITE of 4 KiB costs through a memory window
 * against the MR's own rkey, on one pair of QPs, the four alternating
 * (bench/rxe-phases.sh: a small PUT reads through a window). Medians in
 * microseconds, from the post to the server's completion, polled. */
static int cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static void probe_window_latency(void)
{
  enum { N = 400, SZ = 4096 };
  const struct ho_platform *sys = real_platform();
  struct mw_pair p = {sys->verbs, NULL, NULL, NULL};
  check(ho_device_open(sys->verbs, sys->topo, dev_name(), &p.d) == hipObjSuccess, "open %s",
        dev_name());
  uint8_t *buf = aligned_alloc(4096, SZ), *src = aligned_alloc(4096, SZ);
  memset(buf, 0xee, SZ);
  memset(src, 0x42, SZ);
  struct ibv_mr *mr = sys->verbs->reg_mr(
      p.d->pd, buf, SZ,
      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND | IBV_ACCESS_REMOTE_READ |
          IBV_ACCESS_REMOTE_WRITE);
  struct ibv_mr *smr = sys->verbs->reg_mr(p.d->pd, src, SZ, IBV_ACCESS_LOCAL_WRITE);
  struct ibv_mw *mw = sys->verbs->alloc_mw(p.d->pd, IBV_MW_TYPE_2);
  uint32_t rkey = mw ? ibv_inc_rkey(mw->rkey) : 0;
  check(mr && smr && mw && mw_pair_connect(&p) == 0 &&
            bind_now(&p, mw, rkey, mr, (uintptr_t)buf, SZ,
                     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE) == IBV_WC_SUCCESS,
        "two QPs, an MR with remote access and a window over it");
  static uint64_t t[4][N];
  const char *name[4] = {"read_mr", "read_mw", "write_mr", "write_mw"};
  int ok = 1;
  for (int i = 0; i < N && ok; i++)
    for (int k = 0; k < 4 && ok; k++) {
      uint64_t t0 = ho_now_ns();
      ok = server_op(&p, smr, k < 2 ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
                     (uintptr_t)buf, k % 2 ? rkey : mr->rkey, SZ) == IBV_WC_SUCCESS;
      t[k][i] = ho_now_ns() - t0;
    }
  check(ok, "%d rounds of READ and WRITE by MR and by window", N);
  printf("WINLAT dev=%s size=%d n=%d", dev_name(), SZ, N);
  for (int k = 0; k < 4; k++) {
    qsort(t[k], N, sizeof t[k][0], cmp_u64);
    printf(" %s_us=%.1f", name[k], t[k][N / 2] / 1e3);
  }
  printf("\n");
  mw_pair_close(&p);
  mw_probe_free(&p, mw, mr, smr, buf, src);
}

/* ---- the hostile-server suite (tests/unit/test_scoped.c) on rxe --------- */

enum { H_BUF = 64 * 1024, H_OFF = 16384, H_XFER = 8192 };

static int outside_changed(const uint8_t *b)
{
  return count_changed(b, 0, H_OFF, 0xee) + count_changed(b, H_OFF + H_XFER, H_BUF, 0xee);
}

static void probe_hostile(void)
{
  const struct ho_platform *sys = real_platform();
  struct ho_options o;
  ho_options_defaults(&o);
  o.transfer_timeout_ms = 2000;
  o.require_scoped_tokens = true;
  hipObjConfig_t cfg = {0};
  cfg.gpuDevice = -1;
  cfg.nicHint = dev_name();
  int native = 0;
  check(ho_init_with(sys, &o, &cfg, &native) == hipObjSuccess, "init on %s with windows required",
        dev_name());
  uint8_t *buf = aligned_alloc(4096, H_BUF);
  memset(buf, 0xee, H_BUF);
  struct hostile h;
  check(hipObjBufRegisterHost(buf, H_BUF).opError == hipObjSuccess &&
            hostile_open(&h, sys->verbs, sys->topo, dev_name()) == 0,
        "a buffer, and a hostile server on %s", dev_name());
  hipObjOpError_t e = hostile_get(&h, buf, H_XFER, H_OFF, A_NONE, true);
  check(e == hipObjSuccess && buf[H_OFF] == 1 && outside_changed(buf) == 0,
        "an honest transfer through it works");
  struct {
    const char *what;
    enum attack a;
    bool honest;
    bool must_refuse; /* rxe refuses it (direction, lifetime, key) */
  } cases[] = {
      {"the address shifted by -4096", A_SHIFT, false, false},
      {"4096 bytes more than the length", A_LONGER, true, false},
      {"a GET token served as a PUT", A_AS_PUT, true, true},
      {"the previous transfer's token replayed", A_REPLAY, true, true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    memset(buf, 0xee, H_BUF);
    e = hostile_get(&h, buf, H_XFER, H_OFF, cases[i].a, cases[i].honest);
    int out = outside_changed(buf);
    if (cases[i].must_refuse)
      check(h.attack_status == IBV_WC_REM_ACCESS_ERR && e != hipObjSuccess &&
                out == 0 && count_changed(buf, H_OFF, H_OFF + H_XFER, 0xee) == 0,
            "%s: refused by the NIC (status %d), transfer failed (%d), nothing moved",
            cases[i].what, h.attack_status, e);
    else
      printf("info: %s: NIC status %d, transfer %d, %d bytes outside the range changed%s\n",
             cases[i].what, h.attack_status, e, out,
             out ? " (rxe checks the MR's range, not the window's)" : "");
  }
  memset(buf, 0xee, H_BUF);
  e = hostile_get(&h, buf, H_XFER, H_OFF, A_AFTER_FINAL, true);
  check(e == hipObjSuccess && h.late_status == IBV_WC_REM_ACCESS_ERR && buf[H_OFF] == 1 &&
            outside_changed(buf) == 0,
        "a write after the transfer returned is refused (status %d), nothing moved",
        h.late_status);
  memset(buf, 0xee, H_BUF);
  e = hostile_get(&h, buf, H_XFER, H_OFF, A_NO_FINAL, true);
  check(e == hipObjRdmaError && h.late_status != IBV_WC_SUCCESS && buf[H_OFF] == 1 &&
            outside_changed(buf) == 0,
        "no final: the transfer fails (%d), a later write fails (status %d)", e, h.late_status);
  hipObjBufDeregister(buf);
  hostile_close(&h);
  ho_shutdown();
  free(buf);
}

/* R-1 on rxe: the same hostile server against PUTs, with windows and
 * without them (HIPOBJ_SCOPED_TOKENS=0's fallback), where the QP grants
 * only the running transfer's direction and nothing after it. */
/* The NIC refused: a window or MR's access (remote access error), or the
 * QP's access flags, which rxe answers as an invalid request (status 9). */
static bool nic_refused(enum ibv_wc_status st)
{
  return st == IBV_WC_REM_ACCESS_ERR || st == IBV_WC_REM_INV_REQ_ERR;
}

static void hostile_put_round(bool scoped)
{
  const struct ho_platform *sys = real_platform();
  struct ho_options o;
  ho_options_defaults(&o);
  o.transfer_timeout_ms = 2000;
  o.scoped_tokens = scoped;
  o.require_scoped_tokens = scoped;
  hipObjConfig_t cfg = {0};
  cfg.gpuDevice = -1;
  cfg.nicHint = dev_name();
  int native = 0;
  const char *mode = scoped ? "windows" : "no windows";
  check(ho_init_with(sys, &o, &cfg, &native) == hipObjSuccess, "init on %s, %s",
        dev_name(), mode);
  uint8_t *buf = aligned_alloc(4096, H_BUF);
  struct hostile h;
  check(hipObjBufRegisterHost(buf, H_BUF).opError == hipObjSuccess &&
            hostile_open(&h, sys->verbs, sys->topo, dev_name()) == 0,
        "a buffer, and a hostile server on %s", dev_name());
  memset(buf, 0xee, H_BUF);
  for (unsigned i = 0; i < H_XFER; i++)
    buf[H_OFF + i] = (uint8_t)(i * 3 + 5);
  hipObjOpError_t e = hostile_put(&h, buf, H_XFER, H_OFF, A_NONE);
  check(e == hipObjSuccess && memcmp(h.mem, buf + H_OFF, H_XFER) == 0,
        "%s: an honest PUT through it works", mode);
  e = hostile_put(&h, buf, H_XFER, H_OFF, A_PUT_WRITE);
  check(nic_refused(h.attack_status) && buf[H_OFF] == 5 &&
            outside_changed(buf) == 0,
        "%s: a write into a PUT's buffer is refused (status %d)", mode,
        h.attack_status);
  e = hostile_put(&h, buf, H_XFER, H_OFF, A_PUT_AFTER_FINAL);
  check(e == hipObjSuccess && nic_refused(h.late_status),
        "%s: a read after the PUT returned is refused (status %d)", mode,
        h.late_status);
  memset(buf, 0xee, H_BUF);
  e = hostile_get(&h, buf, H_XFER, H_OFF, A_AS_PUT, true);
  check(nic_refused(h.attack_status) && e != hipObjSuccess,
        "%s: a read during a GET is refused (status %d)", mode, h.attack_status);
  memset(buf, 0xee, H_BUF);
  e = hostile_get(&h, buf, H_XFER, H_OFF, A_AFTER_FINAL, true);
  check(e == hipObjSuccess && nic_refused(h.late_status) && buf[H_OFF] == 1,
        "%s: a write after the GET returned is refused (status %d)", mode,
        h.late_status);
  for (unsigned i = 0; i < H_XFER; i++)
    buf[H_OFF + i] = (uint8_t)(i * 3 + 5);
  e = hostile_put(&h, buf, H_XFER, H_OFF, A_PUT_SHIFT);
  printf("info: %s: a PUT read shifted by -4096: NIC status %d, transfer %d "
         "(the registered buffer in the transfer's direction stays exposed "
         "without windows; rxe checks the MR's range, not the window's)\n",
         mode, h.attack_status, e);
  hipObjBufDeregister(buf);
  hostile_close(&h);
  ho_shutdown();
  free(buf);
}

static void probe_hostile_put(void)
{
  hostile_put_round(true);
  hostile_put_round(false);
}

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: %s select|dmabuf|original-ordering|windows|window-latency|"
            "hostile|hostile-put\n",
            argv[0]);
    return 2;
  }
  if (!strcmp(argv[1], "select"))
    probe_select();
  else if (!strcmp(argv[1], "dmabuf"))
    probe_dmabuf();
  else if (!strcmp(argv[1], "original-ordering"))
    probe_original_ordering();
  else if (!strcmp(argv[1], "windows"))
    probe_windows();
  else if (!strcmp(argv[1], "window-latency"))
    probe_window_latency();
  else if (!strcmp(argv[1], "hostile"))
    probe_hostile();
  else if (!strcmp(argv[1], "hostile-put"))
    probe_hostile_put();
  else
    return 2;
  printf("%s: %s\n", argv[1], failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
