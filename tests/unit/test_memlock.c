/* SPDX-License-Identifier: MIT */
/* RLIMIT_MEMLOCK: init and registration check what they will pin against
 * the limit and fail with a warning that names it. The limit and what is
 * pinned come from <root>/proc/self/{limits,status}: files in the fake
 * tree, and the real ones after setrlimit() lowered the limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fakes/fake_gpu.h"
#include "fakes/fake_sysfs.h"
#include "fakes/world.h"
#include "hipobj.h"
#include "instance.h"
#include "memlock.h"

#define KIB 1024ull

struct fixture {
  struct world w;
  uint8_t *buf;
  size_t buf_size;
  char log[4096];
  int warnings;
};

static void on_log(void *ctx, hipObjLogLevel_t level, const char *message)
{
  struct fixture *f = ctx;
  if (level != hipObjLogWarning)
    return;
  f->warnings++;
  snprintf(f->log, sizeof f->log, "%s", message);
}

static int setup(void **state)
{
  struct fixture *f = calloc(1, sizeof *f);
  fake_gpu_reset();
  if (!f || world_create(&f->w, NULL) != 0)
    return -1;
  f->w.opts.max_transfers = 2; /* 4 connections, 8 QPs */
  f->buf_size = 1u << 20;
  f->buf = aligned_alloc(4096, f->buf_size);
  if (!f->buf || hipObjSetLogCallback(on_log, f).opError != hipObjSuccess)
    return -1;
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  struct fixture *f = *state;
  hipObjShutdown();
  hipObjSetLogCallback(NULL, NULL);
  world_destroy(&f->w);
  free(f->buf);
  free(f);
  return 0;
}

/* proc/self/limits and status in the fake tree. */
static void set_proc(struct fixture *f, const char *limit,
                     unsigned long long vmpin_kb, const char *capeff)
{
  char text[1024];
  int n = snprintf(text, sizeof text,
                   "Limit                     Soft Limit           Hard "
                   "Limit           Units     \n"
                   "Max open files            1024                 4096 "
                   "                files     \n"
                   "Max locked memory         %-20s %-20s bytes     \n"
                   "Max address space         unlimited            "
                   "unlimited            bytes     \n",
                   limit, limit);
  assert_int_equal(ho_fake_sysfs_write(&f->w.fs, "proc/self/limits", text,
                                       (size_t)n),
                   0);
  n = snprintf(text, sizeof text,
               "Name:\ttest\nVmLck:\t       0 kB\nVmPin:\t%8llu kB\n"
               "Threads:\t1\nCapInh:\t0000000000000000\nCapEff:\t%s\n",
               vmpin_kb, capeff);
  assert_int_equal(ho_fake_sysfs_write(&f->w.fs, "proc/self/status", text,
                                       (size_t)n),
                   0);
}

#define NO_CAPS "0000000000000000"
#define IPC_LOCK "0000000000004000" /* CAP_IPC_LOCK is bit 14 */

static hipObjOpError_t reg(struct fixture *f, size_t size)
{
  return hipObjBufRegisterHost(f->buf, size).opError;
}

/* The reader: the fields the checks need, strictly. */
static void reads_the_files(void **state)
{
  struct fixture *f = *state;
  struct ho_pin_limits l;
  const struct ho_topology *t = &f->w.topo;
  assert_int_equal(t->ops->pin_limits(t, &l), hipObjNotSupported); /* none */
  set_proc(f, "65536", 12, NO_CAPS);
  assert_int_equal(t->ops->pin_limits(t, &l), hipObjSuccess);
  assert_int_equal(l.limit, 65536);
  assert_int_equal(l.pinned, 12 * KIB);
  assert_int_equal(l.ipc_lock, 0);
  set_proc(f, "unlimited", 0, "000001ffffffffff");
  assert_int_equal(t->ops->pin_limits(t, &l), hipObjSuccess);
  assert_true(l.limit == ~0ull);
  assert_int_equal(l.ipc_lock, 1);
  set_proc(f, "-5", 0, NO_CAPS); /* not a number: unknown */
  assert_int_equal(t->ops->pin_limits(t, &l), hipObjNotSupported);
  assert_int_equal(ho_memlock_span(4096, 1), 4096);
  assert_int_equal(ho_memlock_span(4095, 2), 8192);
  assert_int_equal(ho_memlock_span(8192, 8192), 8192);
  assert_int_equal(ho_memlock_span(8192, 0), 0);
}

/* Init needs a page per QP of its connections (4 connections and their
 * spares here): below that it fails, naming the limit. */
static void init_checks_the_connections(void **state)
{
  struct fixture *f = *state;
  set_proc(f, "16384", 0, NO_CAPS); /* 4 pages < 8 QPs */
  assert_int_equal(world_init(&f->w, WORLD_CLIENT_NIC), hipObjSizeTooLarge);
  assert_int_equal(f->warnings, 1);
  assert_non_null(strstr(f->log, "RLIMIT_MEMLOCK allows (16 KiB"));
  assert_non_null(strstr(f->log, "hipObjInit (4 connections on each of 1 "
                                 "rail: 8 QPs"));
  assert_non_null(strstr(f->log, "ulimit -l"));
  /* What is pinned already counts. */
  set_proc(f, "65536", 40, NO_CAPS);
  assert_int_equal(world_init(&f->w, WORLD_CLIENT_NIC), hipObjSizeTooLarge);
  assert_non_null(strstr(f->log, "pins 40 KiB already"));
  /* Enough; unlimited; CAP_IPC_LOCK; no files: all fine. */
  set_proc(f, "65536", 0, NO_CAPS);
  assert_int_equal(world_init(&f->w, WORLD_CLIENT_NIC), hipObjSuccess);
  assert_int_equal(hipObjShutdown().opError, hipObjSuccess);
  set_proc(f, "unlimited", 0, NO_CAPS);
  assert_int_equal(world_init(&f->w, WORLD_CLIENT_NIC), hipObjSuccess);
  assert_int_equal(hipObjShutdown().opError, hipObjSuccess);
  set_proc(f, "4096", 0, IPC_LOCK);
  assert_int_equal(world_init(&f->w, WORLD_CLIENT_NIC), hipObjSuccess);
  assert_int_equal(hipObjShutdown().opError, hipObjSuccess);
  assert_int_equal(ho_fake_sysfs_remove(&f->w.fs, "proc"), 0);
  assert_int_equal(world_init(&f->w, WORLD_CLIENT_NIC), hipObjSuccess);
  assert_int_equal(f->warnings, 2);
}

/* A host buffer pins its pages: beyond the limit the registration fails
 * before any MR is made, and says why; within it, it works. */
static void registration_checks_the_buffer(void **state)
{
  struct fixture *f = *state;
  set_proc(f, "1048576", 0, NO_CAPS);
  assert_int_equal(world_init(&f->w, WORLD_CLIENT_NIC), hipObjSuccess);
  set_proc(f, "1048576", 640, NO_CAPS); /* 640 KiB pinned: 384 KiB left */
  assert_int_equal(reg(f, 512 * KIB), hipObjSizeTooLarge);
  assert_int_equal(f->warnings, 1);
  assert_non_null(strstr(f->log, "(524288 bytes, host memory) needs 512 KiB"));
  assert_non_null(strstr(f->log, "RLIMIT_MEMLOCK allows (1 MiB"));
  assert_int_equal(hipObjBufDeregister(f->buf).opError,
                   hipObjBufNotRegistered); /* nothing was registered */
  assert_int_equal(reg(f, 384 * KIB), hipObjSuccess);
  assert_int_equal(hipObjBufDeregister(f->buf).opError, hipObjSuccess);
  /* An unaligned start pins one more page. */
  assert_int_equal(hipObjBufRegisterHost(f->buf + 1, 384 * KIB).opError,
                   hipObjSizeTooLarge);
  set_proc(f, "1048576", 640, IPC_LOCK);
  assert_int_equal(reg(f, 512 * KIB), hipObjSuccess);
  assert_int_equal(hipObjBufDeregister(f->buf).opError, hipObjSuccess);
}

/* CAP_IPC_LOCK in or out of the effective set (it stays permitted). */
static int set_ipc_lock(int on)
{
  struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct d[2];
  if (syscall(SYS_capget, &h, d) != 0)
    return -1;
  if (on)
    d[0].effective |= d[0].permitted & (1u << CAP_IPC_LOCK);
  else
    d[0].effective &= ~(1u << CAP_IPC_LOCK);
  return (int)syscall(SYS_capset, &h, d);
}

/* The real /proc after setrlimit(): the reader sees the lowered limit, and
 * init through a tree whose proc/self is the real one fails naming it
 * (with CAP_IPC_LOCK, which lifts the limit, dropped from the effective
 * set for the while, where the test runs with it). */
static void real_limit_after_setrlimit(void **state)
{
  struct fixture *f = *state;
  struct rlimit old;
  assert_int_equal(getrlimit(RLIMIT_MEMLOCK, &old), 0);
  if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < 8192) {
    print_message("RLIMIT_MEMLOCK is already %llu bytes\n",
                  (unsigned long long)old.rlim_cur);
    skip();
  }
  struct rlimit low = old;
  low.rlim_cur = 8192; /* lowering the soft limit needs no privilege */
  assert_int_equal(setrlimit(RLIMIT_MEMLOCK, &low), 0);
  struct ho_topology real;
  struct ho_pin_limits l;
  assert_int_equal(ho_topology_sysfs_init(&real, NULL), hipObjSuccess);
  assert_int_equal(ho_fake_sysfs_symlink(&f->w.fs, "proc/self", "/proc/self"),
                   0);
  hipObjOpError_t e = real.ops->pin_limits(&real, &l);
  hipObjOpError_t init = world_init(&f->w, WORLD_CLIENT_NIC);
  int had_ipc_lock = e == hipObjSuccess && l.ipc_lock;
  struct ho_pin_limits without = l;
  hipObjOpError_t init_without = init;
  if (had_ipc_lock && set_ipc_lock(0) != 0) {
    assert_int_equal(setrlimit(RLIMIT_MEMLOCK, &old), 0);
    print_message("cannot drop CAP_IPC_LOCK from the effective set\n");
    skip();
  }
  if (had_ipc_lock) {
    hipObjShutdown();
    e = real.ops->pin_limits(&real, &without);
    init_without = world_init(&f->w, WORLD_CLIENT_NIC);
    set_ipc_lock(1);
  }
  assert_int_equal(setrlimit(RLIMIT_MEMLOCK, &old), 0);
  assert_int_equal(e, hipObjSuccess);
  assert_int_equal(l.limit, 8192);
  if (had_ipc_lock)
    assert_int_equal(init, hipObjSuccess); /* the kernel would not refuse */
  assert_int_equal(without.ipc_lock, 0);
  assert_int_equal(init_without, hipObjSizeTooLarge);
  assert_non_null(strstr(f->log, "RLIMIT_MEMLOCK allows (8 KiB"));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(reads_the_files, setup, teardown),
      cmocka_unit_test_setup_teardown(init_checks_the_connections, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(registration_checks_the_buffer, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(real_limit_after_setrlimit, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
