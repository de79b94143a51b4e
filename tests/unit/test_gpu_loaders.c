/* SPDX-License-Identifier: MIT */
/* The CUDA and HIP loaders on whatever this machine has. Without the vendor
 * library a loader must answer hipObjNotSupported and print nothing; with
 * it but no usable device, the same or a table that reports no device; with
 * a device, a working table (the real checks of that case are in
 * tests/gpu/). What needs a GPU is skipped with a reason. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "platform/gpu.h"

/* Runs load with stderr sent to a file; returns what it printed. */
struct captured {
  hipObjOpError_t err;
  const struct ho_gpu_ops *ops;
  char text[1024];
};

static void load_capturing(hipObjOpError_t (*load)(const struct ho_gpu_ops **),
                           struct captured *c)
{
  FILE *tmp = tmpfile();
  assert_non_null(tmp);
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  assert_true(saved >= 0);
  assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
  c->ops = NULL;
  c->err = load(&c->ops);
  fflush(stderr);
  assert_true(dup2(saved, STDERR_FILENO) >= 0);
  close(saved);
  rewind(tmp);
  size_t n = fread(c->text, 1, sizeof c->text - 1, tmp);
  c->text[n] = '\0';
  fclose(tmp);
}

static bool library_present(const char *const *sonames)
{
  for (; *sonames; sonames++) {
    void *h = dlopen(*sonames, RTLD_NOW | RTLD_LOCAL);
    if (h) {
      dlclose(h);
      return true;
    }
  }
  return false;
}

/* The outcome of a loader, given whether its library is installed. Returns
 * whether a device was found. */
static bool check_loader(hipObjOpError_t (*load)(const struct ho_gpu_ops **),
                         const char *const *sonames, const char *name)
{
  struct captured c;
  bool present = library_present(sonames);
  load_capturing(load, &c);
  if (!present) {
    assert_int_equal(c.err, hipObjNotSupported);
    assert_null(c.ops);
    if (c.text[0])
      fail_msg("%s loader printed \"%s\" with no library installed", name,
               c.text);
    return false;
  }
  if (c.err != hipObjSuccess) {
    /* Installed, but no driver or device: quiet, or one warning line. */
    assert_int_equal(c.err, hipObjNotSupported);
    print_message("%s library present but not usable here (%s)\n", name,
                  c.text[0] ? c.text : "no device");
    return false;
  }
  assert_non_null(c.ops);
  assert_string_equal(c.ops->name, name);
  int count = -1;
  assert_int_equal(c.ops->device_count(&count, NULL), hipObjSuccess);
  assert_true(count >= 0);
  /* A second call returns the same table and prints nothing. */
  struct captured again;
  load_capturing(load, &again);
  assert_int_equal(again.err, hipObjSuccess);
  assert_ptr_equal(again.ops, c.ops);
  assert_string_equal(again.text, "");
  return count > 0;
}

static const char *const cuda_sonames[] = {"libcuda.so.1", NULL};
static const char *const hip_sonames[] = {"libamdhip64.so.7", "libamdhip64.so.6",
                                          "libamdhip64.so.5", NULL};

static void cuda_loader(void **state)
{
  if (!check_loader(ho_gpu_cuda_load, cuda_sonames, "cuda"))
    return;
  /* A device is here: the basics of a real table. */
  const struct ho_gpu_ops *g = NULL;
  assert_int_equal(ho_gpu_cuda_load(&g), hipObjSuccess);
  int dev = -1;
  char bus[32];
  assert_int_equal(g->current_device(&dev, NULL), hipObjSuccess);
  assert_int_equal(g->pci_bus_id(dev, bus, sizeof bus, NULL), hipObjSuccess);
  assert_int_equal(strlen(bus), 12);
}

static void hip_loader(void **state)
{
  /* Without the KFD driver the loader must not even open libamdhip64. */
  static const char *const none[] = {NULL};
  bool kfd = access("/dev/kfd", F_OK) == 0;
  if (!check_loader(ho_gpu_hip_load, kfd ? hip_sonames : none, "hip"))
    return;
  const struct ho_gpu_ops *g = NULL;
  assert_int_equal(ho_gpu_hip_load(&g), hipObjSuccess);
  int dev = -1;
  char bus[32];
  assert_int_equal(g->current_device(&dev, NULL), hipObjSuccess);
  assert_int_equal(g->pci_bus_id(dev, bus, sizeof bus, NULL), hipObjSuccess);
  assert_int_equal(strlen(bus), 12);
}

/* Host pointers classify as host on any runtime that loads. */
static void loaded_runtimes_classify_host_memory(void **state)
{
  hipObjOpError_t (*loads[])(const struct ho_gpu_ops **) = {ho_gpu_cuda_load,
                                                            ho_gpu_hip_load};
  int tested = 0;
  for (size_t i = 0; i < 2; i++) {
    const struct ho_gpu_ops *g = NULL;
    if (loads[i](&g) != hipObjSuccess)
      continue;
    int count = 0;
    if (g->device_count(&count, NULL) != hipObjSuccess || count == 0)
      continue;
    char *heap = malloc(100);
    enum ho_mem_kind kind = HO_MEM_DEVICE;
    int dev = 0;
    assert_int_equal(g->classify(heap, &kind, &dev, NULL), hipObjSuccess);
    assert_int_equal(kind, HO_MEM_HOST);
    assert_int_equal(dev, -1);
    free(heap);
    tested++;
  }
  if (!tested)
    skip(); /* needs a GPU: tests/gpu/h200.sh covers it on one */
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cuda_loader),
      cmocka_unit_test(hip_loader),
      cmocka_unit_test(loaded_runtimes_classify_host_memory),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  return failed;
}
