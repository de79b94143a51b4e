/* SPDX-License-Identifier: MIT */
/* ho_platform_system() on this machine, with whatever GPU runtime and
 * libibverbs it has: each HIPOBJ_GPU_RUNTIME choice, "auto" picking the
 * runtime that reports a device, one platform per choice however many
 * threads ask at once. Needs no GPU (then "auto" must be "none"); on a GPU
 * machine it shows which runtime the library would use. Prints one line per
 * check and "N passed, N failed". */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "platform/platform.h"

static int passed, failed;

static void check(bool ok, const char *what)
{
  printf("%s %s\n", ok ? "PASS" : "FAIL", what);
  ok ? passed++ : failed++;
}

/* The runtime "auto" should find: the first of hip, cuda with a device. */
static const struct ho_gpu_ops *expected_auto(void)
{
  hipObjOpError_t (*loads[])(const struct ho_gpu_ops **) = {ho_gpu_hip_load,
                                                            ho_gpu_cuda_load};
  for (size_t i = 0; i < 2; i++) {
    const struct ho_gpu_ops *g = NULL;
    int n = 0;
    if (loads[i](&g) == hipObjSuccess &&
        g->device_count(&n, NULL) == hipObjSuccess && n > 0)
      return g;
  }
  return &ho_gpu_none_ops;
}

static void check_named(const char *name,
                        hipObjOpError_t (*load)(const struct ho_gpu_ops **))
{
  const struct ho_platform *p = NULL;
  const struct ho_gpu_ops *g = NULL;
  char what[128];
  hipObjOpError_t want = load(&g);
  hipObjOpError_t e = ho_platform_system(name, &p);
  snprintf(what, sizeof what, "\"%s\": error %d (loader: %d)%s%s", name,
           (int)e, (int)want, e == hipObjSuccess ? ", runtime " : "",
           e == hipObjSuccess ? p->gpu->name : "");
  check(e == want && (e != hipObjSuccess || p->gpu == g), what);
}

static void *ask_auto(void *arg)
{
  const struct ho_platform **out = arg;
  if (ho_platform_system("auto", out) != hipObjSuccess)
    *out = NULL;
  return NULL;
}

int main(void)
{
  const struct ho_platform *none = NULL, *again = NULL, *p = NULL;
  check(ho_platform_system("none", &none) == hipObjSuccess &&
            none->gpu == &ho_gpu_none_ops && none->topo != NULL,
        "\"none\": the host-only runtime and the sysfs topology");
  check(ho_platform_system("NONE", &again) == hipObjSuccess && again == none,
        "the same platform on every call, names in any case");
  check(ho_platform_system("bogus", &p) == hipObjInvalidValue && p == NULL,
        "an unknown runtime name is an invalid value");
  printf("     libibverbs: %s\n", none->verbs ? "loaded" : "not installed");

  const struct ho_gpu_ops *want = expected_auto();
  const struct ho_platform *a = NULL, *dflt = NULL;
  char what[128];
  snprintf(what, sizeof what, "\"auto\" uses %s", want->name);
  check(ho_platform_system("auto", &a) == hipObjSuccess && a->gpu == want,
        what);
  check(ho_platform_system(NULL, &dflt) == hipObjSuccess && dflt == a,
        "no name means \"auto\"");
  check_named("cuda", ho_gpu_cuda_load);
  check_named("hip", ho_gpu_hip_load);

  pthread_t t[8];
  const struct ho_platform *seen[8];
  for (int i = 0; i < 8; i++)
    pthread_create(&t[i], NULL, ask_auto, &seen[i]);
  bool same = true;
  for (int i = 0; i < 8; i++) {
    pthread_join(t[i], NULL);
    same = same && seen[i] == a;
  }
  check(same, "8 threads at once get the one \"auto\" platform");
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
