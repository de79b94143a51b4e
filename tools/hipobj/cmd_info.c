/* SPDX-License-Identifier: MIT */
/* hipobj info: what hipObject finds on this host and what it would do.
 *
 * Facts the public API does not give come from where any user would look:
 * GPU runtimes through dlopen, RDMA devices from sysfs. What hipObject
 * chooses is not guessed: info initialises it and reads the GID and port
 * of a token it mints (docs/protocol.md, section 2), and tries a GPU-direct
 * registration with HIPOBJ_REQUIRE_GPU_DIRECT set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysfs.h"
#include "tool.h"

static const char usage[] =
    "usage: hipobj info [--gpu N] [--nic NAMES] [--endpoint URL]\n";

/* ---- GPUs ---------------------------------------------------------------- */

static void print_runtime(const char *which, const char *lib)
{
  char why[300], name[256], bus[64];
  struct tool_gpu *g = tool_gpu_open(which, why, sizeof why);
  if (!g) {
    printf("  %-5s %s: %s\n", which, lib,
           tool_lib_present(lib) ? "loads, but no device" : "not found");
    return;
  }
  int n = tool_gpu_count(g);
  printf("  %-5s %s: %d device%s\n", tool_gpu_runtime(g), lib, n,
         n == 1 ? "" : "s");
  for (int i = 0; i < n; i++)
    if (tool_gpu_describe(g, i, name, sizeof name, bus, sizeof bus))
      printf("    GPU %d: %s, PCI %s\n", i, name, bus);
  tool_gpu_close(g);
}

static void print_gpus(void)
{
  const char *rt = getenv("HIPOBJ_GPU_RUNTIME");
  printf("GPU runtimes (HIPOBJ_GPU_RUNTIME=%s):\n", rt && rt[0] ? rt : "auto");
  print_runtime("cuda", "libcuda.so.1");
  print_runtime("hip", "libamdhip64.so");
}

/* ---- RDMA devices ------------------------------------------------------- */

static void print_port(const struct tool_port *p)
{
  char gid[64];
  printf("    port %d: %s, %s\n", p->num, p->state,
         p->link_layer[0] ? p->link_layer : "?");
  for (int i = 0; i < p->n_gids; i++) {
    const struct tool_gid *g = &p->gids[i];
    tool_gid_text(g->raw, gid, sizeof gid);
    printf("      GID %-3d %-40s %-12s %s\n", g->index, gid, g->type, g->ndev);
  }
}

static int print_nics(struct tool_nic *nics)
{
  char dir[512];
  bool verbs = tool_lib_present("libibverbs.so.1");
  printf("RDMA:\n  libibverbs.so.1: %s", verbs ? "found" : "not found");
  if (verbs)
    printf(" (ibv_reg_dmabuf_mr: %s)",
           tool_lib_has("libibverbs.so.1", "ibv_reg_dmabuf_mr") ? "yes"
                                                                : "no");
  printf("\n");
  int n = tool_sysfs_nics(nics, TOOL_MAX_NICS);
  if (n == 0)
    printf("  no RDMA device under %s: get and put will use plain HTTP\n",
           tool_sysfs_class_dir(dir, sizeof dir));
  for (int i = 0; i < n; i++) {
    printf("  %s  PCI %s  NUMA %d\n", nics[i].name,
           nics[i].bus[0] ? nics[i].bus : "- (virtual)", nics[i].numa);
    for (int p = 0; p < nics[i].n_ports; p++)
      print_port(&nics[i].ports[p]);
  }
  return n;
}

/* ---- what hipObject chooses --------------------------------------------- */

static unsigned hexval(char c)
{
  return (unsigned)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
}

/* The GID (bytes 5..20) and port (byte 41) of a token. */
static void token_gid(const char *tok, uint8_t gid[16], int *port)
{
  for (int i = 0; i < 16; i++)
    gid[i] = (uint8_t)(hexval(tok[(5 + i) * 2]) << 4 |
                       hexval(tok[(5 + i) * 2 + 1]));
  *port = (int)(hexval(tok[82]) << 4 | hexval(tok[83]));
}

static void name_gid(const struct tool_nic *nics, int n, const uint8_t gid[16],
                     int port)
{
  char text[64];
  tool_gid_text(gid, text, sizeof text);
  for (int i = 0; i < n; i++)
    for (int p = 0; p < nics[i].n_ports; p++) {
      const struct tool_port *tp = &nics[i].ports[p];
      for (int g = 0; tp->num == port && g < tp->n_gids; g++)
        if (!memcmp(tp->gids[g].raw, gid, 16)) {
          printf("  chosen: %s port %d, GID %d %s (%s%s%s)\n", nics[i].name,
                 port, tp->gids[g].index, text, tp->gids[g].type,
                 tp->gids[g].ndev[0] ? ", " : "", tp->gids[g].ndev);
          return;
        }
    }
  printf("  chosen: port %d, GID %s\n", port, text);
}

/* Mints a token for a small host buffer and reads the GID it carries. */
static void probe_choice(const struct tool_nic *nics, int n)
{
  static char buf[4096];
  char *tok = NULL;
  uint8_t gid[16];
  int port = 0;
  hipObjError_t e = hipObjBufRegisterHost(buf, sizeof buf);
  if (e.opError == hipObjSuccess)
    e = hipObjGetRdmaToken(buf, sizeof buf, HIPOBJ_RDMA_OP_GET, &tok);
  if (e.opError != hipObjSuccess || !tok) {
    printf("  could not mint a token: %s\n", hipObjGetErrorString(e.opError));
  } else {
    token_gid(tok, gid, &port);
    name_gid(nics, n, gid, port);
    hipObjPutRdmaToken(tok);
  }
  hipObjBufDeregister(buf);
}

static void print_rules(const struct tool_opts *o, bool auto_nic)
{
  if (auto_nic)
    printf("  why: no GPU, so hipObjInit needs a NIC name; hipobj passes the "
           "first active device (choose with --nic)\n");
  else if (o->nic)
    printf("  why: the closest NIC to the GPU by PCI bus id among --nic %s "
           "(without a GPU, the first name)\n", o->nic);
  else
    printf("  why: the active NIC closest to the GPU by PCI bus id (the "
           "longest common prefix)\n");
  printf("  GID preference: RoCE v2 IPv4-mapped > v2 global > v2 link-local "
         "> v1 global > v1 link-local\n");
}

static void print_choice(const struct tool_opts *o, const struct tool_nic *nics,
                         int n)
{
  char nic[64] = "";
  hipObjConfig_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.gpuDevice = o->gpu;
  cfg.nicHint = o->nic;
  printf("Selection (hipObjInit, gpuDevice %d%s%s):\n", o->gpu,
         o->nic ? ", nicHint " : "", o->nic ? o->nic : "");
  hipObjError_t e = hipObjInit(&cfg);
  bool auto_nic = false;
  if (e.opError == hipObjNicNotFound && !o->nic &&
      tool_first_active_nic(nic, sizeof nic)) {
    cfg.nicHint = nic;
    e = hipObjInit(&cfg);
    auto_nic = e.opError == hipObjSuccess;
  }
  if (e.opError != hipObjSuccess) {
    printf("  hipObjInit failed: %s%s\n", hipObjGetErrorString(e.opError),
           n == 0 ? " (no RDMA device): get and put use plain HTTP" : "");
    return;
  }
  probe_choice(nics, n);
  print_rules(o, auto_nic);
  hipObjShutdown();
}

/* ---- GPU-direct --------------------------------------------------------- */

static void probe_gpu_direct(const struct tool_opts *o)
{
  char why[300];
  int gpu = o->gpu >= 0 ? o->gpu : 0;
  struct tool_gpu *g = tool_gpu_open("auto", why, sizeof why);
  printf("GPU-direct RDMA (dma-buf):\n");
  printf("  CUDA cuMemGetHandleForAddressRange: %s\n",
         tool_lib_has("libcuda.so.1", "cuMemGetHandleForAddressRange") ? "yes"
                                                                       : "no");
  printf("  HSA hsa_amd_portable_export_dmabuf: %s\n",
         tool_lib_has("libhsa-runtime64.so.1",
                      "hsa_amd_portable_export_dmabuf") ? "yes" : "no");
  if (!g || !tool_gpu_select(g, gpu)) {
    printf("  registration test: skipped (%s)\n", g ? "no such GPU" : why);
    tool_gpu_close(g);
    return;
  }
  const char *old = getenv("HIPOBJ_REQUIRE_GPU_DIRECT");
  setenv("HIPOBJ_REQUIRE_GPU_DIRECT", "1", 1);
  hipObjConfig_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.gpuDevice = gpu;
  cfg.nicHint = o->nic;
  hipObjError_t e = hipObjInit(&cfg);
  void *p = e.opError == hipObjSuccess ? tool_gpu_alloc(g, 2u << 20) : NULL;
  if (p)
    e = hipObjBufRegister(p, 2u << 20);
  printf("  registering 2 MiB of GPU %d with HIPOBJ_REQUIRE_GPU_DIRECT=1: %s\n",
         gpu, e.opError == hipObjSuccess ? "works (GPU-direct)"
                                         : hipObjGetErrorString(e.opError));
  if (p && e.opError == hipObjSuccess)
    hipObjBufDeregister(p);
  tool_gpu_free(g, p);
  hipObjShutdown();
  if (old)
    setenv("HIPOBJ_REQUIRE_GPU_DIRECT", old, 1);
  else
    unsetenv("HIPOBJ_REQUIRE_GPU_DIRECT");
  tool_gpu_close(g);
}

/* ---- options ------------------------------------------------------------ */

static void print_var(const char *name, const char *dflt)
{
  const char *v = getenv(name);
  if (v && v[0])
    printf("  %s=%s\n", name, v);
  else
    printf("  %s unset (%s)\n", name, dflt);
}

static void print_secret(const char *name)
{
  const char *v = getenv(name);
  printf("  %s %s\n", name, v && v[0] ? "set (not shown)" : "unset");
}

static void print_options(const struct tool_opts *o)
{
  printf("Options in effect:\n");
  print_var("HIPOBJ_GPU_RUNTIME", "auto");
  print_var("HIPOBJ_MAX_TRANSFERS", "16 connections");
  print_var("HIPOBJ_TRANSFER_TIMEOUT_MS", "5000");
  print_var("HIPOBJ_STAGE_TIMEOUT_MS", "30000");
  print_var("HIPOBJ_DMABUF", "on");
  print_var("HIPOBJ_REQUIRE_GPU_DIRECT", "off");
  print_var("HIPOBJ_RDMA_DEBUG", "off");
  print_var("AWS_ENDPOINT_URL", "https://s3.REGION.amazonaws.com");
  print_var("AWS_REGION", "us-east-1");
  print_secret("AWS_ACCESS_KEY_ID");
  print_secret("AWS_SECRET_ACCESS_KEY");
  print_secret("AWS_SESSION_TOKEN");
  if (o->endpoint)
    printf("  --endpoint %s\n", o->endpoint);
}

int cmd_info(int argc, char **argv)
{
  struct tool_opts o;
  if (!tool_parse(argc, argv, &o) || o.nargs != 0) {
    fputs(usage, stderr);
    return EXIT_USAGE;
  }
  struct tool_nic *nics = calloc(TOOL_MAX_NICS, sizeof *nics);
  if (!nics)
    return EXIT_FAILED;
  printf("hipObject %s (hipobj %s)\n\n", hipObjGetVersionString(),
         HIPOBJ_TOOL_VERSION);
  print_gpus();
  printf("\n");
  int n = print_nics(nics);
  printf("\n");
  print_choice(&o, nics, n);
  printf("\n");
  probe_gpu_direct(&o);
  printf("\n");
  print_options(&o);
  free(nics);
  return EXIT_OK;
}
