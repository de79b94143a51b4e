/* SPDX-License-Identifier: MIT */
/* hipobj info: what hipObject finds on this host and what it would do.
 *
 * GPU runtimes are shown through the command's own loader (gpu.c, with the
 * library's list of sonames). What hipObject chooses is not guessed or
 * recomputed: info initialises it and prints hipObjGetInfo() (the NIC,
 * port, GID and why), and tries a GPU-direct registration with
 * HIPOBJ_REQUIRE_GPU_DIRECT set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/platform/sonames.h"
#include "info_print.h"
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

/* The HIP runtime the library would open: the first of its list. */
static const char *hip_soname(void)
{
  static const char *const names[] = HO_HIP_SONAMES;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (tool_lib_present(names[i]))
      return names[i];
  return names[0];
}

static void print_gpus(void)
{
  const char *rt = getenv("HIPOBJ_GPU_RUNTIME");
  printf("GPU runtimes (HIPOBJ_GPU_RUNTIME=%s):\n", rt && rt[0] ? rt : "auto");
  print_runtime("cuda", HO_CUDA_SONAME);
  print_runtime("hip", hip_soname());
}

/* ---- RDMA ------------------------------------------------------------- */

static void print_rdma(void)
{
  bool verbs = tool_lib_present(HO_VERBS_SONAME);
  printf("RDMA:\n  %s: %s", HO_VERBS_SONAME, verbs ? "found" : "not found");
  if (verbs)
    printf(" (ibv_reg_dmabuf_mr: %s)",
           tool_lib_has(HO_VERBS_SONAME, "ibv_reg_dmabuf_mr") ? "yes" : "no");
  printf("\n");
}

/* ---- what hipObject chooses --------------------------------------------- */

/* hipObjInit as get and put would call it (the first active NIC when there
 * is neither a GPU nor a hint), then the library's own account of what it
 * chose and why. */
static void print_choice(const struct tool_opts *o)
{
  hipObjConfig_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.gpuDevice = o->gpu;
  cfg.nicHint = o->nic;
  cfg.flags = HIPOBJ_INIT_FIRST_ACTIVE_NIC;
  printf("Selection (hipObjInit, gpuDevice %d%s%s):\n", o->gpu,
         o->nic ? ", nicHint " : "", o->nic ? o->nic : "");
  hipObjError_t e = hipObjInit(&cfg);
  if (e.opError != hipObjSuccess) {
    printf("  hipObjInit failed: %s%s\n", hipObjGetErrorString(e.opError),
           e.opError == hipObjNicNotFound
               ? " (no usable RDMA device): get and put use plain HTTP"
               : "");
    return;
  }
  hipObjInfo_t info;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  if (hipObjGetInfo(&info).opError == hipObjSuccess)
    tool_info_print(stdout, &info);
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
         tool_lib_has(HO_CUDA_SONAME, "cuMemGetHandleForAddressRange") ? "yes"
                                                                       : "no");
  printf("  HSA hsa_amd_portable_export_dmabuf: %s\n",
         tool_lib_has(HO_HSA_SONAME,
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
  /* the library's own list (hipObjGetEnvVar), not a copy of it */
  const char *name, *dflt;
  for (uint32_t i = 0; hipObjGetEnvVar(i, &name, &dflt).opError ==
                       hipObjSuccess;
       i++)
    print_var(name, dflt);
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
  hipObjInfo_t info; /* before hipObjInit: the version only */
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  hipObjGetInfo(&info);
  printf("hipObject %u.%u.%u (hipobj %s)\n\n", (unsigned)info.versionMajor,
         (unsigned)info.versionMinor, (unsigned)info.versionPatch,
         HIPOBJ_TOOL_VERSION);
  print_gpus();
  printf("\n");
  print_rdma();
  printf("\n");
  print_choice(&o);
  printf("\n");
  probe_gpu_direct(&o);
  printf("\n");
  print_options(&o);
  return EXIT_OK;
}
