/* SPDX-License-Identifier: MIT */
/* hipobj-vmprobe: checks on the real rxe device that need the library's
 * internals (linked from hipobj_internal), run in the Soft-RoCE VM.
 *
 *   hipobj-vmprobe select             NIC, port, GID chosen on rxe0
 *   hipobj-vmprobe dmabuf             dma-buf is EOPNOTSUPP; GPU memory
 *                                     (fake runtime) falls back to plain MR
 *   hipobj-vmprobe original-ordering  server RDMA into a client QP in INIT
 *                                     fails (bounded retries), buffer intact */
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
#include "hipobj.h"
#include "instance.h"
#include "platform/platform.h"
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
  struct ho_conn_attr client_attr = {8, 8, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE};
  struct ho_conn_attr server_attr = {8, 8, 0};
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

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: %s select|dmabuf|original-ordering\n", argv[0]);
    return 2;
  }
  if (!strcmp(argv[1], "select"))
    probe_select();
  else if (!strcmp(argv[1], "dmabuf"))
    probe_dmabuf();
  else if (!strcmp(argv[1], "original-ordering"))
    probe_original_ordering();
  else
    return 2;
  printf("%s: %s\n", argv[1], failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
